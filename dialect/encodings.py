"""Every TritonGPU layout attribute as a linear layout (Triton's ``LinearLayoutConversions.cpp``).

``to_linear_layout(attr, shape)`` gives the ``LinearLayout`` Triton's C++ computes for a tensor
(or shared buffer) of ``shape`` in layout ``attr``:

* distributed layouts: in dims ``register, lane, warp, block`` -> out dims ``dim0, dim1, ...``;
* shared layouts: in dims ``offset, block`` -> ``dim0, dim1, ...`` (``offset`` in elements).

The conversions live in three modules: ``encodings_common`` (the building blocks every
encoding uses to fit a tile to a shape: read it first), ``encodings_distributed`` and
``encodings_shared``.  This module dispatches to them and prints layouts back as attributes
(``linear_attribute``).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Mapping, Optional, Sequence, Union

from .attribute_parser import parse_attribute
from .attributes import AmdWmmaEncoding, DotOperandEncoding, LayoutAttribute, SliceEncoding
from .encodings_common import (BLOCK, LANE, OFFSET, REGISTER, WARP,
                               broadcasted_dot_operand_layout, combine_cta_cga_with_shape, dim_names,
                               ensure_layout_not_larger_than, ensure_layout_not_smaller_than, identity_standard_nd,
                               matrix_order)
from .conventions import NEWEST, TritonConventions
from .encodings_distributed import DISTRIBUTED_CONVERSIONS
from .encodings_shared import SHARED_CONVERSIONS
from .linear_layout import LayoutError, LinearLayout, is_power_of_two

__all__ = ["to_linear_layout", "linear_attribute", "is_permutation_layout",
           # the building blocks, for callers that assemble layouts themselves
           "dim_names", "identity_standard_nd", "ensure_layout_not_smaller_than", "ensure_layout_not_larger_than",
           "combine_cta_cga_with_shape", "matrix_order", "broadcasted_dot_operand_layout"]

_CONVERSIONS = DISTRIBUTED_CONVERSIONS + SHARED_CONVERSIONS


def to_linear_layout(attr_or_text: Union[LayoutAttribute, str], shape: Sequence[int],
                     aliases: Optional[Mapping] = None, conventions: TritonConventions = NEWEST) -> LinearLayout:
    """The linear layout of a tensor (or shared buffer) of ``shape`` in the given layout.

    ``attr_or_text`` is a layout attribute or its text (``aliases`` resolves ``#name``
    references, see ``parse_aliases``).  For shared layouts ``shape`` is the allocation shape.
    Raises ``LayoutError`` when the shape does not fit the layout.  ``conventions`` names the
    Triton release to reproduce where releases differ (see :mod:`.conventions`; the passes
    pass the installed release's, tools without Triton at hand use the newest).
    """
    if not isinstance(conventions, TritonConventions):
        raise LayoutError(f"to_linear_layout: conventions must be a TritonConventions, got {conventions!r}")
    attr = parse_attribute(attr_or_text, aliases) if isinstance(attr_or_text, str) else attr_or_text
    if isinstance(shape, (list, tuple)):
        attr = _with_wmma_rank(attr, len(shape))
    if not isinstance(attr, LayoutAttribute):
        raise LayoutError(f"to_linear_layout needs a layout attribute or its text, got {attr_or_text!r}")
    shape = list(shape) if isinstance(shape, (list, tuple)) else shape
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise LayoutError(f"{attr}: the shape must be a list of integers, got {shape!r}")
    if len(shape) != attr.rank:
        raise LayoutError(f"{attr} has rank {attr.rank} but the shape {shape} has rank {len(shape)}")
    for s in shape:
        if not is_power_of_two(s):
            raise LayoutError(f"{attr}: the shape {shape} has {s}, which is not a power of two")
    for cls, convert in _CONVERSIONS:
        if isinstance(attr, cls):
            try:
                return convert(attr, shape, conventions)
            except LayoutError as e:
                if str(attr) in str(e):
                    raise
                raise LayoutError(f"{attr} with shape {shape}: {e}") from None
    raise LayoutError(f"no linear layout conversion for {attr}")  # pragma: no cover


def _with_wmma_rank(attr, rank: int):
    """Triton prints a rank-3 WMMA layout with no warp bases as ``ctaLayout = {}``, dropping
    its rank; such a layout takes its rank from the shape it is used with."""
    if isinstance(attr, AmdWmmaEncoding):
        if (not attr.uses_warps_per_cta_spelling and not attr.register_bases and not attr.warp_bases
                and attr.rank_hint is None and attr.cga is None and attr.rank != rank and rank in (2, 3)):
            return replace(attr, rank_hint=rank)
        return attr
    if isinstance(attr, (DotOperandEncoding, SliceEncoding)):
        parent_rank = rank if isinstance(attr, DotOperandEncoding) else rank + 1
        parent = _with_wmma_rank(attr.parent, parent_rank)
        return attr if parent is attr.parent else replace(attr, parent=parent)
    return attr


def _fmt_bases(bases) -> str:
    return "[" + ", ".join("[" + ", ".join(str(c) for c in b) + "]" for b in bases) + "]"


@functools.lru_cache(maxsize=1024)
def is_permutation_layout(layout: LinearLayout) -> bool:
    """Every basis is zero or a single power of two along one dim and, zero bases removed, the map
    is a bijection (Triton's ``isPermutationMatrixLayout``: such a distributed layout is a
    ``#ttg.linear``, any other a ``#ttg.generic_linear``).  Remembered: layouts are immutable,
    and a conversion's two are asked about several times."""
    for bs in layout.bases.values():
        for b in bs:
            nonzero = [c for c in b if c]
            if len(nonzero) > 1 or (nonzero and not is_power_of_two(nonzero[0])):
                return False
    nonzero = [b for bs in layout.bases.values() for b in bs if any(b)]
    stripped = LinearLayout([("all", nonzero)], list(layout.out_dims.items()), require_surjective=False)
    return stripped.is_invertible()


def linear_attribute(layout: LinearLayout, alignment: int = 16) -> str:
    """The TTGIR text of any layout, as Triton prints it.

    Distributed layouts (in dims among register, lane, warp, block) give
    ``#ttg.linear<{register = [...], lane = [...], warp = [...], block = [...]}>`` (or
    ``#ttg.generic_linear<...>`` when a basis moves along several dims); shared layouts (offset,
    block) give ``#ttg.shared_linear<{offset = [...], block = [...]}, alignment = N>``.
    """
    ins = layout.in_dim_names
    bases = layout.bases
    if not layout.out_dim_names or layout.out_dim_names != dim_names(len(layout.out_dim_names)):
        raise LayoutError(f"linear_attribute needs out dims dim0, dim1, ... in order, got {layout.out_dim_names}")
    if set(ins) <= {REGISTER, LANE, WARP, BLOCK} and OFFSET not in ins:
        body = ", ".join(f"{d} = {_fmt_bases(bases.get(d, ()))}" for d in (REGISTER, LANE, WARP, BLOCK))
        kind = "linear" if is_permutation_layout(layout) else "generic_linear"
        return f"#ttg.{kind}<{{{body}}}>"
    if set(ins) <= {OFFSET, BLOCK}:
        parts = [f"offset = {_fmt_bases(bases.get(OFFSET, ()))}"]
        if bases.get(BLOCK):
            parts.append(f"block = {_fmt_bases(bases[BLOCK])}")
        return f"#ttg.shared_linear<{{{', '.join(parts)}}}, alignment = {alignment}>"
    raise LayoutError(f"linear_attribute: in dims {ins} are neither register/lane/warp/block nor offset/block")
