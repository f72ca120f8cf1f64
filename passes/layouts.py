"""Reading layouts off IR values: a value's type -> its LinearLayout, through ``dialect``.

The translation of encodings (``#ttg.blocked``, ``#ttg.nvidia_mma``, ...) into linear layouts
lives in :mod:`linear_layouts.dialect`; this module only connects it to IR values, caches it
(a module uses few distinct types) and turns its errors into pass failures naming the op.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ..dialect import LayoutError, LinearLayout, linear_attribute, parse_attribute, to_linear_layout
from ..dialect.conventions import TritonConventions
from .bindings import installed_conventions
from .framework import PassFailure
from .snapshot import Operation, Value
from .types import TensorType


class LayoutUnavailable(Exception):
    """The type has no encoding, or the encoding cannot be translated."""


def _layout_for(encoding: str, shape: tuple[int, ...]) -> LinearLayout:
    """The layout as the *installed* Triton lays it out: releases differ (Triton 3.6 keeps the
    duplicate registers of a blocked tile larger than the tensor as zero bases, 3.7+ drops
    them), and an island's LLVM struct must have exactly the registers Triton's own lowering
    gives the tensor (a mismatch leaves an unresolved cast: "LLVM Translation failed for
    operation: builtin.unrealized_conversion_cast")."""
    return _layout_for_release(encoding, shape, installed_conventions())


@lru_cache(maxsize=4096)
def _layout_for_release(encoding: str, shape: tuple[int, ...], conventions: TritonConventions) -> LinearLayout:
    rank = _encoding_rank(encoding)
    if rank is None or len(shape) <= rank:
        return to_linear_layout(encoding, list(shape), conventions=conventions)
    # A multi-buffered shared allocation (software pipelining): !ttg.memdesc<2x32x16xf16, #s>
    # with a rank-2 #s holds 2 buffers of 32x16, one after the other.  Lay out one buffer with
    # the encoding, then let the higher offset bits select the buffer (leading dims).
    leading = len(shape) - rank
    one_buffer = to_linear_layout(encoding, list(shape[leading:]), conventions=conventions)
    for i in reversed(range(rank)):  # dim i of the buffer is dim i + leading of the whole
        one_buffer = one_buffer.rename_out_dim(f"dim{i}", f"dim{i + leading}")
    layout = one_buffer
    for i in reversed(range(leading)):  # innermost buffer dim first: it takes the lower bits
        layout = layout * LinearLayout.identity_1d(shape[i], "offset", f"dim{i}")
    return layout.transpose_outs([f"dim{i}" for i in range(len(shape))])


@lru_cache(maxsize=1024)
def _encoding_rank(encoding: str):
    try:
        return parse_attribute(encoding).rank
    except LayoutError:  # not an attribute we read: to_linear_layout says what is wrong with it
        return None


@lru_cache(maxsize=4096)
def _attribute_for(encoding: str, shape: tuple[int, ...]) -> str:
    return installed_conventions().attribute_text(linear_attribute(_layout_for(encoding, shape)))


def tensor_layout_of(encoding: str, shape) -> LinearLayout:
    """The linear layout of a tensor of ``shape`` in the layout attribute text ``encoding``, as
    the installed Triton lays it out (raises the dialect's ``LayoutError`` when it does not fit)."""
    return _layout_for(encoding.strip(), tuple(shape))


def tensor_layout(tensor_type: TensorType) -> LinearLayout:
    """The linear layout of a tensor or memdesc type (raises :class:`LayoutUnavailable`)."""
    if tensor_type.encoding is None:
        raise LayoutUnavailable(f"type {tensor_type.text} has no layout encoding (is this TTGIR?)")
    try:
        return _layout_for(tensor_type.encoding, tensor_type.shape)
    except LayoutError as error:
        raise LayoutUnavailable(f"cannot translate the layout of {tensor_type.text}: {error}") from None


def value_layout(value: Value, op: Optional[Operation] = None) -> LinearLayout:
    """The linear layout of a tensor or memdesc value; a :class:`PassFailure` on ``op`` otherwise."""
    tensor_type = value.tensor_type
    if tensor_type is None:
        raise PassFailure(op, f"value of type {value.type} is not a tensor or shared-memory descriptor")
    try:
        return tensor_layout(tensor_type)
    except LayoutUnavailable as error:
        raise PassFailure(op, str(error)) from None


def layout_attribute(value: Value, op: Optional[Operation] = None) -> str:
    """``#ttg.linear<...>`` (or ``#ttg.shared_linear<...>``) text for a value's layout."""
    layout = value_layout(value, op)
    tensor_type = value.tensor_type
    if all(not layout.bases[dim] for dim in layout.in_dim_names):
        # One element (a 1x1 scratch buffer, a scalar-like tensor): no basis vector at all.
        # Triton's linear attributes need at least one ("Empty Layout not supported").
        raise PassFailure(op, f"{tensor_type.text} holds a single element: its layout has no basis vectors, and "
                              f"Triton's linear layout attributes cannot express an empty layout")
    try:
        return _attribute_for(tensor_type.encoding, tensor_type.shape)
    except LayoutError as error:
        raise PassFailure(op, f"cannot print the layout of {tensor_type.text} as an attribute: {error}") from None
