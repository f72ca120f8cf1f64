"""Every TritonGPU layout attribute as a linear layout (Triton's ``LinearLayoutConversions.cpp``).

``to_linear_layout(attr, shape)`` gives the ``LinearLayout`` Triton's C++ computes for a tensor
(or shared buffer) of ``shape`` in layout ``attr``:

* distributed layouts: in dims ``register, lane, warp, block`` -> out dims ``dim0, dim1, ...``;
* shared layouts: in dims ``offset, block`` -> ``dim0, dim1, ...`` (``offset`` in elements).

Most layouts are described for one *tile* (what one CTA's registers, lanes and warps cover once)
and then fitted to the tensor's shape by three shared steps, reproduced here exactly because the
order in which they add bases decides the register numbering:

* ``ensure_layout_not_smaller_than``: a tensor larger than the tile repeats it; the repetitions
  become new, most significant ``register`` (or ``offset``) bases, added dim by dim **in the
  layout's out-dim order**.  Example: a tile of 8 rows x 16 columns with out dims ordered
  ``[dim1, dim0]`` on a 16 x 32 tensor gets register bases ``(0, 16)`` then ``(8, 0)``.
* ``ensure_layout_not_larger_than``: a tensor smaller than the tile is covered several times;
  bases that step past the tensor's size become zero (the hardware holds copies).
* ``combine_cta_cga_with_shape``: the CTA tile is fitted to the part of the tensor one CTA
  holds, then the CGA (block) bases, in units of that part, are appended.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import Mapping, Optional, Sequence, Union

from .attributes import (AmdMfmaEncoding, AmdRotatingSharedEncoding, AmdWmmaEncoding, BlockedEncoding, CGALayout,
                         DotOperandEncoding, LayoutAttribute, LinearEncoding,
                         NvidiaMmaEncoding, NvmmaSharedEncoding, PaddedSharedEncoding, SharedLinearEncoding,
                         SliceEncoding, SwizzledSharedEncoding, parse_attribute)
from .linear_layout import LayoutError, LinearLayout

REGISTER, LANE, WARP, BLOCK, OFFSET = "register", "lane", "warp", "block", "offset"

# The Triton release whose conversions to reproduce, where they differ (see to_linear_layout).
_TRITON_VERSION: ContextVar = ContextVar("triton_version", default=(3, 9))


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _is_pow2(n) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def dim_names(rank: int) -> list[str]:
    """The standard out dims of a rank-``rank`` tensor, ``dim0`` being the tensor's first dim."""
    return [f"dim{d}" for d in range(rank)]


def _identity(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout.identity_1d(size, in_dim, out_dim)


def _zeros(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout.zeros_1d(size, in_dim, out_dim)


def _layout(bases, outs: Sequence[tuple[str, int]]) -> LinearLayout:
    """A layout with explicit out sizes that need not be surjective."""
    return LinearLayout([(n, [tuple(b) for b in bs]) for n, bs in bases], list(outs), require_surjective=False)


# ---------------------------------------------------------------------------------------------
# Shared building blocks (Triton's LayoutUtils / LinearLayoutConversions helpers)

def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Identity from ``in_dim`` onto the tensor, filling dims in ``order`` (fastest first).

    Example: shape [2, 4], order [1, 0] -> bases (0, 1), (0, 2), (1, 0); out dims ordered
    [dim1, dim0].  A size-1 dim still appears as an out dim, which fixes the out-dim order.
    """
    names = dim_names(len(shape))
    layout = LinearLayout.empty()
    for d in order:
        layout = layout * _identity(shape[d], in_dim, names[d])
    return layout


def ensure_layout_not_smaller_than(layout: LinearLayout, shape: Mapping[str, int]) -> LinearLayout:
    """Grow each out dim to ``shape[dim]`` by adding most-significant bases to the first in dim
    (``register`` or ``offset``), out dims taken in the layout's own order."""
    if not layout.in_dim_names:
        return layout
    first = layout.in_dim_names[0]
    if first not in (REGISTER, OFFSET):
        raise LayoutError(f"ensure_layout_not_smaller_than: the first in dim must be register or offset, got {first}")
    for d in layout.out_dim_names:
        size = layout.out_dim_size(d)
        if size < shape[d]:
            layout = layout * _identity(shape[d] // size, first, d)
    return layout


def ensure_layout_not_larger_than(layout: LinearLayout, shape: Mapping[str, int],
                                  broadcast_registers: bool = True) -> LinearLayout:
    """Shrink each out dim to at most ``shape[dim]``: a basis component that reaches past the
    tensor becomes 0, so that input bit now selects a copy.  With ``broadcast_registers=False``
    such ``register`` bases are dropped instead (fewer registers, no copies in registers)."""
    outs = []
    new_size = {}
    for d in layout.out_dim_names:
        new_size[d] = min(layout.out_dim_size(d), shape[d])
        outs.append((d, new_size[d]))
    names = layout.out_dim_names
    bases = []
    for in_dim, bs in layout.bases.items():
        kept = []
        for b in bs:
            clipped = tuple(c if c < new_size[n] else 0 for c, n in zip(b, names))
            if not broadcast_registers and in_dim == REGISTER and clipped != b and not any(clipped):
                continue
            kept.append(clipped)
        bases.append((in_dim, kept))
    return _layout(bases, outs)


def cga_linear_layout(cga: Optional[CGALayout], rank: int) -> LinearLayout:
    """The CGA layout ``block -> dim0..`` (one CTA: no bases), sizes inferred from the bases."""
    names = dim_names(rank)
    bases = cga.bases if cga is not None else ()
    sizes = [1] * rank
    for b in bases:
        for d, c in enumerate(b):
            sizes[d] = max(sizes[d], 1 << c.bit_length())
    return _layout([(BLOCK, bases)], list(zip(names, sizes)))


def combine_cta_cga_with_shape(cta: LinearLayout, cga: LinearLayout, shape: Sequence[int],
                               broadcast_registers: bool = True) -> LinearLayout:
    """Fit a one-CTA layout and a CGA layout to the tensor's ``shape``.

    The CGA layout (clipped to the tensor) says how many tiles the CTAs split each dim into; the
    CTA layout is fitted to ``shape / that`` and the block bases, in units of a CTA's part, go on
    top.  Example: blocked 1-D with 16 elements per CTA, CGA bases [[1], [0]], shape 32 ->
    block bases [[16], [0]] (block 2 holds a copy of block 0's half).  ``broadcast_registers``
    is passed to ``ensure_layout_not_larger_than`` (blocked layouts drop such registers).
    """
    names = dim_names(len(shape))
    labeled = dict(zip(names, shape))
    cga = ensure_layout_not_larger_than(cga, labeled).transpose_outs(cta.out_dim_names)
    cta_shape = {d: max(1, labeled[d] // cga.out_dim_size(d)) for d in cta.out_dim_names}
    cta = ensure_layout_not_smaller_than(cta, cta_shape)
    cta = ensure_layout_not_larger_than(cta, cta_shape, broadcast_registers)
    result = (cta * cga).transpose_outs(names)
    for d in names:
        if result.out_dim_size(d) != labeled[d]:
            raise LayoutError(f"the layout covers {result.out_dim_size(d)} elements along {d} but the shape has "
                              f"{labeled[d]}")
    return result


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's ``getMatrixOrder``: [rank-1, ..., 0], the two fastest swapped if not row-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def dot_operand_order(op_idx: int, rank: int) -> list[int]:
    """K fastest: operand A -> [.., 1, 0] (K = last dim), B -> [.., 0, 1] (K = dim rank-2)."""
    return matrix_order(rank, row_major=(op_idx == 1) != True)  # noqa: E712 (mirrors getOrderForDotOperand)


def broadcasted_dot_operand_layout(sizes: Sequence[int], order: Sequence[int], k_dim: int, in_dim: str) -> LinearLayout:
    """Lanes or warps of a dot operand: identity along the non-K dims, zero (broadcast) along K,
    since every warp of a row of the result needs the whole K extent of its A rows."""
    names = dim_names(len(sizes))
    layout = LinearLayout.empty()
    for d in order:
        layout = layout * (_zeros(sizes[d], in_dim, names[d]) if d == k_dim else _identity(sizes[d], in_dim, names[d]))
    return layout


# ---------------------------------------------------------------------------------------------
# Distributed layouts

def _blocked(attr: BlockedEncoding, shape: Sequence[int]) -> LinearLayout:
    cta = (identity_standard_nd(REGISTER, attr.size_per_thread, attr.order)
           * identity_standard_nd(LANE, attr.threads_per_warp, attr.order)
           * identity_standard_nd(WARP, attr.warps_per_cta, attr.order))
    # A blocked tile larger than the tensor keeps no duplicate registers in Triton 3.9 (unlike
    # MMA layouts, whose register numbering is fixed by the instruction); Triton 3.6 still kept
    # them as zero bases.  `to_linear_layout(..., triton_version=...)` selects the behaviour
    # (3.7 and 3.8 are assumed to behave like 3.9: not checked).
    drop = _TRITON_VERSION.get() >= (3, 7)
    return combine_cta_cga_with_shape(cta, cga_linear_layout(attr.cga, attr.rank), shape, broadcast_registers=not drop)


def _slice(attr: SliceEncoding, shape: Sequence[int]) -> LinearLayout:
    # Lay out the parent with a size-1 dim inserted, drop that dim, renumber the rest; the
    # registers that only stepped along the dropped dim now hold nothing new and are removed
    # (lanes and warps keep their zero bases: they express broadcasting).
    parent_shape = list(shape[:attr.dim]) + [1] + list(shape[attr.dim:])
    parent = to_linear_layout(attr.parent, parent_shape)
    names = dim_names(len(parent_shape))
    kept = [n for n in names if n != names[attr.dim]]
    sub = parent.sublayout(parent.in_dim_names, kept)
    renamed = _layout([(n, bs) for n, bs in sub.bases.items()],
                      [(f"dim{i}", sub.out_dim_size(n)) for i, n in enumerate(kept)])
    return renamed.remove_zero_bases_along_dim(REGISTER)


def nvidia_mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int],
                    rep_order: Sequence[int]) -> LinearLayout:
    """One warp's share of an mma.sync / wgmma tile (``nvidiaMmaTile``).

    Each thread holds ``k_width`` consecutive elements along the fast dim; 4 lanes step along
    the fast dim and 8 lanes along the slow dim (a 8 x (4 * k_width) "core matrix"); registers
    then repeat the core matrix down the slow dim and across the fast dim.  Example (accumulator
    16 x 8, k_width 2): register (0, 1), (8, 0); lane (0, 2), (0, 4), (1, 0), (2, 0), (4, 0).
    """
    rank = len(tile_shape)
    names = dim_names(rank)
    layout = identity_standard_nd(REGISTER, [1] * rank, rep_order)
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    return (layout
            * _identity(k_width, REGISTER, names[inner])
            * _identity(4, LANE, names[inner])
            * _identity(8, LANE, names[outer])
            * _identity(m // 8, REGISTER, names[outer])
            * _identity(n // (k_width * 4), REGISTER, names[inner]))


def _nvidia_mma(attr: NvidiaMmaEncoding, shape: Sequence[int]) -> LinearLayout:
    rank = attr.rank
    tile_shape = list(attr.instr_shape) if not attr.is_hopper else list(attr.instr_shape[:2])
    order = matrix_order(rank, True)
    tile = nvidia_mma_tile(tile_shape, 2, order, order)
    # Ampere places warps along N (dim1) first, Hopper along M (dim0) first.
    warps = identity_standard_nd(WARP, attr.warps_per_cta, matrix_order(rank, not attr.is_hopper))
    cta = tile * warps.transpose_outs(tile.out_dim_names)
    return combine_cta_cga_with_shape(cta, cga_linear_layout(attr.cga, rank), shape)


def _dot_cga(parent_cga: Optional[CGALayout], rank: int, k_dim: int) -> LinearLayout:
    """The dot operand's CGA layout: the parent's, with the K dim not split (CTAs along K of the
    result share the operand)."""
    return cga_linear_layout(parent_cga, rank).resize_out_dim(f"dim{k_dim}", 1)


def _dot_of_nvidia_mma(attr: DotOperandEncoding, mma: NvidiaMmaEncoding, shape: Sequence[int]) -> LinearLayout:
    rank = mma.rank
    instr_m = mma.instr_shape[rank - 2] if not mma.is_hopper else mma.instr_shape[0]
    k_tile = 4 if instr_m == 8 else 8   # fp64 m8n8k4 has k = 4 per 8 rows
    tile_shape = [1] * rank
    if attr.op_idx == 0:
        tile_shape[rank - 2], tile_shape[rank - 1] = instr_m, attr.k_width * k_tile
    else:
        tile_shape[rank - 2], tile_shape[rank - 1] = attr.k_width * k_tile, 8
    order = dot_operand_order(attr.op_idx, rank)
    tile = nvidia_mma_tile(tile_shape, attr.k_width, order, order)
    k_dim = rank - 1 if attr.op_idx == 0 else rank - 2
    warps = broadcasted_dot_operand_layout(mma.warps_per_cta, matrix_order(rank, not mma.is_hopper), k_dim, WARP)
    cta = tile * warps.transpose_outs(tile.out_dim_names)
    return combine_cta_cga_with_shape(cta, _dot_cga(mma.cga, rank, k_dim), shape)


def _dot_of_blocked(attr: DotOperandEncoding, blocked: BlockedEncoding, shape: Sequence[int]) -> LinearLayout:
    # FMA dot: each thread holds its whole K extent; lanes and warps are broadcast along K.
    rank = blocked.rank
    k_dim = rank - 1 if attr.op_idx == 0 else rank - 2
    thread_size = list(blocked.size_per_thread)
    thread_size[k_dim] = shape[k_dim]
    names = dim_names(rank)
    rep_names = [names[d] for d in blocked.order]
    regs = identity_standard_nd(REGISTER, thread_size, blocked.order).transpose_outs(rep_names)
    lanes = broadcasted_dot_operand_layout(blocked.threads_per_warp, blocked.order, k_dim, LANE).transpose_outs(rep_names)
    warps = broadcasted_dot_operand_layout(blocked.warps_per_cta, blocked.order, k_dim, WARP).transpose_outs(rep_names)
    return combine_cta_cga_with_shape(regs * lanes * warps, _dot_cga(blocked.cga, rank, k_dim), shape)


def _amd_mfma(attr: AmdMfmaEncoding, shape: Sequence[int]) -> LinearLayout:
    # A tile of M x N is held by one wave of 64 lanes.  Non-transposed: each lane holds
    # `height` consecutive rows (M) of one column, lanes sweep N first, then the next rows;
    # further register groups stack more rows.  Transposed swaps the roles of M and N.
    rank = attr.rank
    names = dim_names(rank)
    dim_m, dim_n = names[rank - 2], names[rank - 1]
    m, n = attr.instr_shape[0], attr.instr_shape[1]
    height = 1 if attr.bit_width == 64 else 4
    tiles = m * n // (64 * height)
    if not attr.is_transposed:
        tile = (_identity(height, REGISTER, dim_m) * _identity(n, LANE, dim_n) * _identity(64 // n, LANE, dim_m)
                * _identity(tiles, REGISTER, dim_m))
    else:
        tile = (_identity(height, REGISTER, dim_n) * _identity(m, LANE, dim_m) * _identity(64 // m, LANE, dim_n)
                * _identity(tiles, REGISTER, dim_n))
    tile = tile.transpose_outs([dim_n, dim_m])
    warps, tiles_per_warp = attr.warps_per_cta, attr.tiles
    i_m, i_n = rank - 2, rank - 1
    reps_n = shape[i_n] // (n * warps[i_n] * tiles_per_warp[i_n])
    layout = (tile * _identity(tiles_per_warp[i_n], REGISTER, dim_n) * _identity(warps[i_n], WARP, dim_n))
    if reps_n > 1:
        # Repeat along N before the M tiles of a warp, so a warp's N repetitions come first.
        layout = layout * _identity(reps_n, REGISTER, dim_n)
    layout = layout * _identity(tiles_per_warp[i_m], REGISTER, dim_m) * _identity(warps[i_m], WARP, dim_m)
    if rank == 3:
        layout = (layout * _identity(1, REGISTER, names[0]) * _identity(1, LANE, names[0])
                  * _identity(warps[0], WARP, names[0]))
    return combine_cta_cga_with_shape(layout, cga_linear_layout(attr.cga, rank), shape)


def _dot_of_amd_mfma(attr: DotOperandEncoding, mfma: AmdMfmaEncoding, shape: Sequence[int]) -> LinearLayout:
    rank = mfma.rank
    names = dim_names(rank)
    order = dot_operand_order(attr.op_idx, rank)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    m, n = mfma.instr_shape[0], mfma.instr_shape[1]
    non_k = m if attr.op_idx == 0 else n
    k_width = attr.k_width
    tile = _identity(k_width, REGISTER, dim_k) * _identity(non_k, LANE, dim_non_k) * _identity(64 // non_k, LANE, dim_k)
    k_tile = (64 // non_k) * k_width
    if (attr.op_idx == 0 and (m, n) == (64, 4)) or (attr.op_idx == 1 and (m, n) == (4, 64)):
        tile = tile * _identity(16, REGISTER, dim_k)
        k_tile *= 16
    if shape[order[0]] > k_tile:
        tile = tile * _identity(shape[order[0]] // k_tile, REGISTER, dim_k)
    tile = tile * _identity(mfma.tiles[order[1]], REGISTER, dim_non_k)
    tile = tile.transpose_outs([dim_k, dim_non_k])
    if rank == 3:
        tile = tile * _identity(1, REGISTER, names[0]) * _identity(1, LANE, names[0])
    # Warps are not zeroed along K here: the K-direction warp bases become copies later, when
    # the layout is clipped to the tensor (ensure_layout_not_larger_than).
    warps = identity_standard_nd(WARP, mfma.warps_per_cta, list(range(rank - 1, -1, -1)))
    cta = tile * warps.transpose_outs(tile.out_dim_names)
    return combine_cta_cga_with_shape(cta, cga_linear_layout(mfma.cga, rank), shape).transpose_outs(names)


def wmma_cta_layout(attr: AmdWmmaEncoding) -> LinearLayout:
    """The WMMA layout's warp arrangement, bases in units of one WMMA tile: given directly
    (``ctaLayout = {...}``) or built from ``warpsPerCTA`` / ``tilesPerWarp``
    (``chooseWmmaCTALinearLayout``: per dim in row-major order, tiles then warps)."""
    rank = attr.rank
    names = dim_names(rank)
    if attr.uses_warps_per_cta_spelling:
        tiles = attr.tiles_per_warp or (1,) * rank
        layout = LinearLayout.empty()
        for d in matrix_order(rank, True):
            layout = layout * _identity(tiles[d], REGISTER, names[d]) * _identity(attr.warps_per_cta[d], WARP, names[d])
        return layout.transpose_outs(names)
    sizes = [1] * rank
    for b in attr.register_bases + attr.warp_bases:
        for d, c in enumerate(b):
            sizes[d] = max(sizes[d], 1 << c.bit_length())
    return _layout([(REGISTER, attr.register_bases), (WARP, attr.warp_bases)], list(zip(names, sizes)))


def _amd_wmma(attr: AmdWmmaEncoding, shape: Sequence[int]) -> LinearLayout:
    rank = attr.rank
    names = dim_names(rank)
    thread_order = matrix_order(rank, not attr.is_transposed)
    fast, slow = names[thread_order[0]], names[thread_order[1]]
    # Bases are (fast, slow): 16 lanes sweep the fast dim; registers step the slow dim.
    if attr.version == 1:
        regs, lanes = [(0, 2), (0, 4), (0, 8)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 1)]
    elif attr.instr[0] == 32:
        regs, lanes = [(0, 1), (0, 2), (0, 4), (0, 16)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)]
    else:
        regs, lanes = [(0, 1), (0, 2), (0, 4)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)]
    tile = LinearLayout.from_bases([(REGISTER, regs), (LANE, lanes)], [fast, slow])
    if attr.uses_warps_per_cta_spelling:
        return _amd_wmma_warps_per_cta(attr, tile, shape)
    if rank == 3:
        tile = tile * _identity(1, REGISTER, names[0]) * _identity(1, LANE, names[0])
    tile = tile.transpose_outs(names)
    cta = tile * wmma_cta_layout(attr)
    cta = cta.transpose_outs([names[d] for d in matrix_order(rank, True)])
    return combine_cta_cga_with_shape(cta, cga_linear_layout(attr.cga, rank), shape)


def _amd_wmma_warps_per_cta(attr: AmdWmmaEncoding, tile: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    # The Triton <= 3.6 construction (the warpsPerCTA spelling), like MFMA's: per dim N then M,
    # the warp's extra tiles, the warps, and (for N) the repetitions that cover the *whole*
    # tensor; those beyond one CTA's part later become zero registers (copies).
    rank = attr.rank
    names = dim_names(rank)
    dim_m, dim_n = names[rank - 2], names[rank - 1]
    n = attr.instr[1]
    warps = attr.warps_per_cta
    tiles = attr.tiles_per_warp or (1,) * rank
    i_m, i_n = rank - 2, rank - 1
    layout = tile.transpose_outs([dim_n, dim_m])
    layout = layout * _identity(tiles[i_n], REGISTER, dim_n) * _identity(warps[i_n], WARP, dim_n)
    reps_n = shape[i_n] // (n * warps[i_n] * tiles[i_n])
    if reps_n > 1:
        layout = layout * _identity(reps_n, REGISTER, dim_n)
    layout = layout * _identity(tiles[i_m], REGISTER, dim_m) * _identity(warps[i_m], WARP, dim_m)
    if rank == 3:
        layout = (layout * _identity(1, REGISTER, names[0]) * _identity(1, LANE, names[0])
                  * _identity(warps[0], WARP, names[0]))
    return combine_cta_cga_with_shape(layout, cga_linear_layout(attr.cga, rank), shape)


def _dot_of_amd_wmma_warps_per_cta(attr: DotOperandEncoding, wmma: AmdWmmaEncoding,
                                   shape: Sequence[int]) -> LinearLayout:
    # The Triton <= 3.6 construction (parent in the warpsPerCTA spelling), built like MFMA's dot
    # operand: K repetitions and the warp's extra non-K tiles are registers of the tile, and the
    # CGA layout is the parent's unchanged.
    rank = wmma.rank
    names = dim_names(rank)
    order = dot_operand_order(attr.op_idx, rank)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    k_size, non_k = wmma.instr[2], (wmma.instr[0] if attr.op_idx == 0 else wmma.instr[1])
    k_width = attr.k_width
    depth = 32 // non_k
    tile = _identity(k_width, REGISTER, dim_k) * _identity(non_k, LANE, dim_non_k)
    tile = tile * (_zeros(depth, LANE, dim_k) if wmma.version == 1 else _identity(depth, LANE, dim_k))
    tile = tile * _identity(k_size // (depth * k_width), REGISTER, dim_k)
    # Repetitions along K, in units of one tile's K extent, max(K, depth * kWidth) (version 1
    # lanes hold copies, so with kWidth 16 a tile spans 32 although K is 16).  They cover one
    # CTA's part of K, except when a warp holds several tiles along the non-K dim: then, as
    # for MFMA, the layout is defined over the whole tensor (the extra repetitions become
    # copies once the CGA layout is applied).
    k_tile = max(k_size, depth * k_width)
    tiles = wmma.tiles_per_warp or (1,) * rank
    k_extent = shape[order[0]]
    if tiles[order[1]] == 1:
        cga = ensure_layout_not_larger_than(cga_linear_layout(wmma.cga, rank), dict(zip(names, shape)))
        k_extent = max(1, k_extent // cga.out_dim_size(dim_k))
    if k_extent > k_tile:
        tile = tile * _identity(k_extent // k_tile, REGISTER, dim_k)
    tile = (tile * _identity(tiles[order[1]], REGISTER, dim_non_k)).transpose_outs([dim_k, dim_non_k])
    if rank == 3:
        tile = tile * _identity(1, REGISTER, names[0]) * _identity(1, LANE, names[0])
    warps = broadcasted_dot_operand_layout(wmma.warps_per_cta, matrix_order(rank, True), order[0], WARP)
    cta = tile * warps.transpose_outs(tile.out_dim_names)
    return combine_cta_cga_with_shape(cta, cga_linear_layout(wmma.cga, rank), shape).transpose_outs(names)


def _dot_of_amd_wmma(attr: DotOperandEncoding, wmma: AmdWmmaEncoding, shape: Sequence[int]) -> LinearLayout:
    if wmma.uses_warps_per_cta_spelling:
        return _dot_of_amd_wmma_warps_per_cta(attr, wmma, shape)
    rank = wmma.rank
    names = dim_names(rank)
    order = dot_operand_order(attr.op_idx, rank)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    k_size = wmma.instr[2]
    # The instruction's M x N is given for the non-transposed tile; a transposed layout swaps
    # which of them runs along each operand's non-K dim.  Example: instrShape [32, 16, 64],
    # isTranspose = true: operand B's non-K extent is 32, operand A's is 16.
    non_k = wmma.instr[0] if (attr.op_idx == 0) != wmma.is_transposed else wmma.instr[1]
    k_width = attr.k_width
    tile = _identity(k_width, REGISTER, dim_k) * _identity(16, LANE, dim_non_k)
    tile = tile * (_zeros(2, LANE, dim_k) if wmma.version == 1 else _identity(2, LANE, dim_k))
    tile = tile * _identity(k_size // (2 * k_width), REGISTER, dim_k)
    if non_k // 16 > 1:
        tile = tile * _identity(non_k // 16, REGISTER, dim_non_k)
    if rank == 3:
        tile = tile * _identity(1, REGISTER, names[0]) * _identity(1, LANE, names[0])
    k_dim = order[0]
    cta = wmma_cta_layout(wmma).resize_out_dim(names[k_dim], 1).remove_zero_bases_along_dim(REGISTER)
    layout = (tile.transpose_outs(names) * cta).transpose_outs([names[d] for d in order])
    return combine_cta_cga_with_shape(layout, _dot_cga(wmma.cga, rank, k_dim), shape)


def _dot_operand(attr: DotOperandEncoding, shape: Sequence[int]) -> LinearLayout:
    parent = attr.parent
    if isinstance(parent, NvidiaMmaEncoding):
        return _dot_of_nvidia_mma(attr, parent, shape)
    if isinstance(parent, AmdMfmaEncoding):
        return _dot_of_amd_mfma(attr, parent, shape)
    if isinstance(parent, AmdWmmaEncoding):
        return _dot_of_amd_wmma(attr, parent, shape)
    return _dot_of_blocked(attr, parent, shape)


def linear_attribute_layout(attr: LinearEncoding) -> LinearLayout:
    """The layout written in a ``#ttg.linear`` / ``#ttg.generic_linear`` attribute, sizes inferred."""
    return LinearLayout.from_bases([(n, [list(b) for b in bs]) for n, bs in attr.named_bases()], dim_names(attr.rank))


def _linear(attr: LinearEncoding, shape: Sequence[int]) -> LinearLayout:
    # The attribute may be used for another shape: repeat it (more registers, in the order the
    # registers already walk the dims) or clip it (dropping registers that would hold copies).
    layout = linear_attribute_layout(attr)
    rank = attr.rank
    names = dim_names(rank)
    rep_order = []
    for b in layout.bases[REGISTER]:
        for d, c in enumerate(b):
            if c and d not in rep_order:
                rep_order.append(d)
                break
    rep_order += [d for d in range(rank - 1, -1, -1) if d not in rep_order]
    labeled = dict(zip(names, shape))
    layout = layout.transpose_outs([names[d] for d in rep_order])
    layout = ensure_layout_not_smaller_than(layout, labeled)
    layout = ensure_layout_not_larger_than(layout, labeled, broadcast_registers=False)
    return layout.transpose_outs(names)


# ---------------------------------------------------------------------------------------------
# Shared layouts

def _swizzled_shared(attr: SwizzledSharedEncoding, shape: Sequence[int]) -> LinearLayout:
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


def _nvmma_shared(attr: NvmmaSharedEncoding, shape: Sequence[int]) -> LinearLayout:
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
        # An identity over the box, the fastest dim last in `frame` (slowest first).  A
        # transposed box puts the last dim slowest: rank 3 -> frame [dim2, dim0, dim1].
        # Transposed, Triton sizes the frame's dims with the box rotated left (dim0 last), so
        # dims get one another's extents: shape [16, 16, 8] -> frame [dim2, dim0, dim1] sized
        # [16, 8, 16]; the excess is clipped (copies) or repeated later like any other.
        frame = list(range(rank)) if not attr.transposed else [rank - 1] + list(range(rank - 1))
        sizes = box if not attr.transposed else box[1:] + box[:1]
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


def _padded_shared(attr: PaddedSharedEncoding, shape: Sequence[int]) -> LinearLayout:
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


def _shared_linear(attr: SharedLinearEncoding, shape: Sequence[int]) -> LinearLayout:
    names = dim_names(attr.rank)
    layout = LinearLayout.from_bases([(OFFSET, [list(b) for b in attr.offset]),
                                      (BLOCK, [list(b) for b in attr.block])], names)
    _check_exact_shape(attr, layout, shape)
    return layout


def _check_exact_shape(attr: LayoutAttribute, layout: LinearLayout, shape: Sequence[int]) -> None:
    sizes = [layout.out_dim_size(d) for d in layout.out_dim_names]
    if list(shape) != sizes:
        raise LayoutError(f"{attr} covers exactly the shape {sizes}, not {list(shape)}")


# ---------------------------------------------------------------------------------------------
# Entry points

_CONVERSIONS = [
    (BlockedEncoding, _blocked),
    (SliceEncoding, _slice),
    (NvidiaMmaEncoding, _nvidia_mma),
    (DotOperandEncoding, _dot_operand),
    (AmdMfmaEncoding, _amd_mfma),
    (AmdWmmaEncoding, _amd_wmma),
    (LinearEncoding, _linear),           # also GenericLinearEncoding (a subclass)
    (NvmmaSharedEncoding, _nvmma_shared),
    (SwizzledSharedEncoding, _swizzled_shared),   # also AmdRotatingSharedEncoding
    (PaddedSharedEncoding, _padded_shared),
    (SharedLinearEncoding, _shared_linear),
]


def to_linear_layout(attr_or_text: Union[LayoutAttribute, str], shape: Sequence[int],
                     aliases: Optional[Mapping] = None, triton_version: Optional[tuple] = None) -> LinearLayout:
    """The linear layout of a tensor (or shared buffer) of ``shape`` in the given layout.

    ``attr_or_text`` is a layout attribute or its text (``aliases`` resolves ``#name``
    references, see ``parse_aliases``).  For shared layouts ``shape`` is the allocation shape.
    Raises ``LayoutError`` when the shape does not fit the layout.  ``triton_version`` (default
    3.9) selects release-specific behaviour: before 3.7 a blocked layout larger than the tensor
    keeps its duplicate registers as zero bases.
    """
    if triton_version is not None:
        token = _TRITON_VERSION.set(tuple(triton_version))
        try:
            return to_linear_layout(attr_or_text, shape, aliases)
        finally:
            _TRITON_VERSION.reset(token)
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
        if not _is_pow2(s):
            raise LayoutError(f"{attr}: the shape {shape} has {s}, which is not a power of two")
    for cls, convert in _CONVERSIONS:
        if isinstance(attr, cls):
            try:
                return convert(attr, shape)
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


def is_permutation_layout(layout: LinearLayout) -> bool:
    """Every basis is zero or a single power of two along one dim and, zero bases removed, the map
    is a bijection (Triton's ``isPermutationMatrixLayout``: such a distributed layout is a
    ``#ttg.linear``, any other a ``#ttg.generic_linear``)."""
    for bs in layout.bases.values():
        for b in bs:
            nonzero = [c for c in b if c]
            if len(nonzero) > 1 or (nonzero and not _is_pow2(nonzero[0])):
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
