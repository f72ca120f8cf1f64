"""Reading layouts off IR values: a value's type -> its LinearLayout, through ``dialect``.

The translation of encodings (``#ttg.blocked``, ``#ttg.nvidia_mma``, ...) into linear layouts
lives in :mod:`linear_layouts.dialect`; this module only connects it to IR values, caches it
(a module uses few distinct types) and turns its errors into pass failures naming the op.

Shared-memory descriptors follow :mod:`linear_layouts.dialect.memdesc` (read its docstring):

* :func:`memdesc_layout` gives the whole story of a memdesc value: one buffer's layout
  (``.buffer``, Triton's ``toLinearLayout`` of the type: a view such as
  ``!ttg.memdesc<32x64xf16, #s, #smem, mutable, 64x64>`` has its 64x64 buffer's layout), the
  buffer count of a pipelined allocation (``.buffers``: 3 for ``3x64x64``, None without a
  buffer dim), how far apart buffers start (``.buffer_elements``, ``.buffer_start(i)``) and the
  view's shape (``.view_shape``).  Lowerings of ``local_load`` / ``local_store`` want this.
* :func:`value_layout` gives one linear layout per value: for a memdesc,
  ``memdesc_layout(...).whole()``, which exists for no buffer dim or a power-of-two number of
  buffers (a ``3x64x64`` allocation has none: a :class:`PassFailure` says so).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ...dialect import LayoutError, LinearLayout, linear_attribute, to_linear_layout
from ...dialect.conventions import TritonConventions
from ...dialect.memdesc import MemdescLayout, memdesc_layout as _memdesc_layout
from .bindings import installed_conventions
from .diagnostics import PassFailure
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
    return to_linear_layout(encoding, list(shape), conventions=conventions)


@lru_cache(maxsize=4096)
def _memdesc_layout_for(encoding: str, shape: tuple[int, ...], alloc_shape: tuple[int, ...]) -> MemdescLayout:
    return _memdesc_layout(encoding, shape, alloc_shape, conventions=installed_conventions())


@lru_cache(maxsize=4096)
def _attribute_text(layout: LinearLayout) -> str:
    return installed_conventions().attribute_text(linear_attribute(layout))


def tensor_layout_of(encoding: str, shape) -> LinearLayout:
    """The linear layout of a tensor of ``shape`` in the layout attribute text ``encoding``, as
    the installed Triton lays it out (raises the dialect's ``LayoutError`` when it does not fit)."""
    return _layout_for(encoding.strip(), tuple(shape))


def tensor_layout(tensor_type: TensorType) -> LinearLayout:
    """The linear layout of a tensor or memdesc type (raises :class:`LayoutUnavailable`)."""
    if tensor_type.encoding is None:
        raise LayoutUnavailable(f"type {tensor_type.text} has no layout encoding (is this TTGIR?)")
    try:
        if tensor_type.is_shared:
            return _memdesc_of_type(tensor_type).whole()
        return _layout_for(tensor_type.encoding, tensor_type.shape)
    except LayoutUnavailable:
        raise
    except LayoutError as error:
        raise LayoutUnavailable(f"cannot translate the layout of {tensor_type.text}: {error}") from None


def _memdesc_of_type(tensor_type: TensorType) -> MemdescLayout:
    if tensor_type.encoding is None:
        raise LayoutUnavailable(f"type {tensor_type.text} has no layout encoding (is this TTGIR?)")
    try:
        return _memdesc_layout_for(tensor_type.encoding, tensor_type.shape, tensor_type.alloc_shape)
    except LayoutError as error:
        raise LayoutUnavailable(f"cannot translate the layout of {tensor_type.text}: {error}") from None


def memdesc_layout(value: Value, op: Optional[Operation] = None) -> MemdescLayout:
    """One buffer's layout, the buffer count and the view of a shared-memory descriptor value
    (see the module docstring); a :class:`PassFailure` on ``op`` for any other value or a type
    that does not translate."""
    tensor_type = value.tensor_type
    if tensor_type is None or not tensor_type.is_shared:
        raise PassFailure(op, f"value of type {value.type} is not a shared-memory descriptor")
    try:
        return _memdesc_of_type(tensor_type)
    except LayoutUnavailable as error:
        raise PassFailure(op, str(error)) from None


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
    """``#ttg.linear<...>`` text for a tensor's layout; ``#ttg.shared_linear<...>`` for a
    memdesc's, of **one buffer** (its :func:`memdesc_layout` ``.buffer``: the count of a
    pipelined allocation is not part of it)."""
    tensor_type = value.tensor_type
    layout = memdesc_layout(value, op).buffer if tensor_type is not None and tensor_type.is_shared \
        else value_layout(value, op)
    if all(not layout.bases[dim] for dim in layout.in_dim_names):
        # One element (a 1x1 scratch buffer, a scalar-like tensor): no basis vector at all.
        # Triton's linear attributes need at least one ("Empty Layout not supported").
        what = "holds a single element" if not tensor_type.is_shared or len(tensor_type.shape) == len(
            layout.out_dim_names) else "has buffers of a single element"
        raise PassFailure(op, f"{tensor_type.text} {what}: its layout has no basis vectors, and "
                              f"Triton's linear layout attributes cannot express an empty layout")
    try:
        return _attribute_text(layout)
    except LayoutError as error:
        raise PassFailure(op, f"cannot print the layout of {tensor_type.text} as an attribute: {error}") from None
