"""Shared-memory layouts as linear layouts: in dims ``offset`` (elements within one CTA's
buffer) and ``block``; out dims ``dim0, dim1, ...``.  ``shape`` is the allocation shape.  One
function per attribute kind, each following Triton's conversion of that kind."""

from __future__ import annotations

from typing import Sequence

from .attributes import (AmdRotatingSharedEncoding, LayoutAttribute, NvmmaSharedEncoding, PaddedSharedEncoding,
                         SharedLinearEncoding, SwizzledSharedEncoding)
from .conventions import TritonConventions
from .encodings_common import (BLOCK, OFFSET, _identity, _layout, _log2, cga_linear_layout,
                               combine_cta_cga_with_shape, dim_names, ensure_layout_not_smaller_than,
                               identity_standard_nd)
from .linear_layout import LayoutError, LinearLayout


def _swizzled_shared(attr: SwizzledSharedEncoding, shape: Sequence[int],
                     conventions: TritonConventions) -> LinearLayout:
    rank = attr.rank
    names = dim_names(rank)
    split = attr.cga.split_num(rank) if attr.cga is not None else (1,) * rank
    per_cta = [max(1, s // c) for s, c in zip(shape, split)]
    cga = cga_linear_layout(attr.cga, rank)
    if rank == 1:
        return combine_cta_cga_with_shape(_identity(per_cta[0], OFFSET, "dim0"), cga, shape)
    if isinstance(attr, AmdRotatingSharedEncoding):
        # Triton's rotating layout (rank >= 2) is built over the whole shape, not one CTA's part.
        per_cta = list(shape)
    col, row = attr.order[0], attr.order[1]
    n_cols, n_rows = per_cta[col], per_cta[row]
    # Offsets first walk one row's columns, then the rows; row r's columns are XORed with
    # vec * phase(r), phase(r) = (r / perPhase) mod maxPhase.  Example (vec 2, perPhase 2,
    # maxPhase 4, 32 columns): rows 1, 2, 4, 8 get column offsets 0, 2, 4, 0.
    bases = [(0, 1 << i) for i in range(_log2(n_cols))]
    for i in range(_log2(n_rows)):
        r = 1 << i
        if isinstance(attr, AmdRotatingSharedEncoding):
            phase = (r // attr.per_phase) % attr.max_phase
            block_no = (r // attr.max_phase // attr.per_phase) % attr.max_phase
            bases.append((r, (attr.vec * (phase ^ block_no)) % n_cols))
        else:
            bases.append((r, (attr.vec * ((r // attr.per_phase) % attr.max_phase)) % n_cols))
    layout = LinearLayout.from_bases([(OFFSET, bases)], [names[row], names[col]])
    for d in attr.order[2:]:
        layout = layout * _identity(per_cta[d], OFFSET, names[d])
    return combine_cta_cga_with_shape(layout, cga, shape)


def nvmma_core_matrix(attr: NvmmaSharedEncoding, disable_swizzle: bool = False) -> LinearLayout:
    """The 8-row swizzle atom of an NVMMA shared layout (``getCoreMatrixLinearLayout``).

    A row is max(16, swizzle) bytes; rows 1, 2, 4 are XORed by 16-byte chunks:
    128-byte swizzle, 16-bit elements: offset bases (0, 1) .. (0, 32), then (1, 8), (2, 16),
    (4, 32).  With fp4Padded every 16 stored bytes hold 8 real ones, so column c of the
    padded row is element c / 16 * 8 + c mod 8.
    """
    width = attr.element_bit_width
    swizzle = attr.swizzling_byte_width
    vec = 128 // width if swizzle else 1
    per_phase = 128 // swizzle if swizzle else 1
    max_phase = swizzle // 16 if swizzle else 1
    tile_cols = 8 * max(16, swizzle) // width

    def packed(c):
        return c // 16 * 8 + c % 8 if attr.fp4_padded else c

    bases = [(0, packed(1 << i)) for i in range(_log2(tile_cols))]
    for r in (1, 2, 4):
        if disable_swizzle or not swizzle:
            bases.append((r, 0))
        else:
            bases.append((r, packed(vec * ((r // per_phase) % max_phase))))
    return LinearLayout.from_bases([(OFFSET, bases)], ["dim0", "dim1"])


def _nvmma_shared(attr: NvmmaSharedEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
    rank = len(shape)
    names = dim_names(rank)
    split = attr.cga.split_num(rank) if attr.cga is not None else (1,) * rank
    per_cta = [max(1, s // c) for s, c in zip(shape, split)]
    cga = cga_linear_layout(attr.cga, rank)
    width, swizzle = attr.element_bit_width, attr.swizzling_byte_width
    contig = 0 if attr.transposed else rank - 1
    # The TMA box: each dim at most 256; the contiguous dim of a swizzled layout is exactly one
    # swizzle row (fp4Padded counts padded elements, twice the real ones).
    box = [min(s, 256) for s in per_cta]
    if attr.fp4_padded:
        box[contig] *= 2
    if swizzle:
        row = 8 * swizzle // width
        if box[contig] < row:
            raise LayoutError(f"{attr}: the shape {list(shape)} gives {box[contig]} elements along the contiguous "
                              f"dim {contig}, fewer than one {swizzle}-byte swizzle row ({row} elements)")
        box[contig] = row
    if attr.fp4_padded:
        box[contig] //= 2
    if rank == 1:
        layout = _identity(box[0], OFFSET, "dim0")
        layout = ensure_layout_not_smaller_than(layout, {"dim0": per_cta[0]})
        return combine_cta_cga_with_shape(layout, cga, shape)
    if not swizzle:
        transposed = attr.transposed and not conventions.unswizzled_nvmma_ignores_transposed
        # An identity over the box, the fastest dim last in `frame` (slowest first).  A
        # transposed box puts the last dim slowest: rank 3 -> frame [dim2, dim0, dim1].
        # Transposed, Triton sizes the frame's dims with the box rotated left (dim0 last), so
        # dims get one another's extents: shape [16, 16, 8] -> frame [dim2, dim0, dim1] sized
        # [16, 8, 16]; the excess is clipped (copies) or repeated later like any other.
        frame = list(range(rank)) if not transposed else [rank - 1] + list(range(rank - 1))
        sizes = box if not transposed else box[1:] + box[:1]
        extent = {d: sizes[i] for i, d in enumerate(frame)}
        layout = LinearLayout.empty()
        for d in reversed(frame):
            layout = layout * _identity(extent[d], OFFSET, names[d])

    else:
        # The swizzle atom works on a 2-D [rows, cols] view of the box: non-transposed, the
        # last dim is the columns and all others the rows; transposed, the last dim is the rows
        # and all others (dim0 fastest) the columns.  E.g. transposed box [16, 2, 8] ->
        # 8 rows x 32 columns, columns = dim0 + 16 * dim1.
        outer = 1
        for size in box[:-1]:
            outer *= size
        rows, cols = (outer, box[-1]) if not attr.transposed else (box[-1], outer)
        core = nvmma_core_matrix(attr)
        if rows < 8 or cols < core.out_dim_size("dim1"):
            raise LayoutError(f"{attr}: the shape {list(shape)} gives a {rows} x {cols} box, smaller than the "
                              f"8 x {core.out_dim_size('dim1')} swizzle atom")
        core = ensure_layout_not_smaller_than(core, {"dim0": rows, "dim1": cols})
        # Row-major reshape of [rows, cols] onto the box, slowest dim first in `frame`.
        frame = list(range(rank)) if not attr.transposed else list(range(1, rank)) + [0]
        flat = core.transpose_outs(["dim1", "dim0"]).reshape_outs(
            [(names[d], box[d]) for d in reversed(frame)])
        layout = flat
    # Repeat the box over one CTA's part, the last dim first.
    layout = layout.transpose_outs(list(reversed(names)))
    layout = ensure_layout_not_smaller_than(layout, dict(zip(names, per_cta)))
    return combine_cta_cga_with_shape(layout, cga, shape)


def _padded_shared(attr: PaddedSharedEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
    """The linear component only; ``attr.padded_offset`` applies the padding to an offset."""
    rank = attr.rank
    names = dim_names(rank)
    if attr.offset is None:
        layout = identity_standard_nd(OFFSET, attr.shape, attr.order).transpose_outs(names)
        layout = layout * _layout([(BLOCK, [])], [(n, 1) for n in names])
    else:
        layout = LinearLayout.from_bases([(OFFSET, [list(b) for b in attr.offset]),
                                          (BLOCK, [list(b) for b in attr.block])], names)
    _check_exact_shape(attr, layout, shape)
    return layout


def _shared_linear(attr: SharedLinearEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
    names = dim_names(attr.rank)
    layout = LinearLayout.from_bases([(OFFSET, [list(b) for b in attr.offset]),
                                      (BLOCK, [list(b) for b in attr.block])], names)
    _check_exact_shape(attr, layout, shape)
    return layout


def _check_exact_shape(attr: LayoutAttribute, layout: LinearLayout, shape: Sequence[int]) -> None:
    sizes = [layout.out_dim_size(d) for d in layout.out_dim_names]
    if list(shape) != sizes:
        raise LayoutError(f"{attr} covers exactly the shape {sizes}, not {list(shape)}")



SHARED_CONVERSIONS = [
    (NvmmaSharedEncoding, _nvmma_shared),
    (SwizzledSharedEncoding, _swizzled_shared),   # also AmdRotatingSharedEncoding
    (PaddedSharedEncoding, _padded_shared),
    (SharedLinearEncoding, _shared_linear),
]
