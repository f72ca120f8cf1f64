"""Distributed layouts (tensors in registers) as linear layouts: in dims ``register``, ``lane``,
``warp``, ``block``; out dims ``dim0, dim1, ...``.  One function per attribute kind, each
following Triton's ``toLinearLayout`` of that kind (``LinearLayoutConversions.cpp``)."""

from __future__ import annotations

from typing import Optional, Sequence

from .attributes import (AmdMfmaEncoding, AmdWmmaEncoding, BlockedEncoding, CGALayout, DotOperandEncoding,
                         LayoutAttribute, LinearEncoding, NvidiaMmaEncoding, SliceEncoding)
from .conventions import TritonConventions
from .encodings_common import (BLOCK, LANE, REGISTER, WARP, _identity, _layout, _zeros,
                               broadcasted_dot_operand_layout, cga_linear_layout, combine_cta_cga_with_shape,
                               dim_names, dot_operand_order, ensure_layout_not_larger_than,
                               ensure_layout_not_smaller_than, identity_standard_nd, matrix_order)
from .linear_layout import LayoutError, LinearLayout, is_power_of_two


def _blocked(attr: BlockedEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
    direct = _blocked_in_one_cta(attr, shape, conventions.blocked_keeps_duplicate_registers)
    if direct is not None:
        return direct
    cta = (identity_standard_nd(REGISTER, attr.size_per_thread, attr.order)
           * identity_standard_nd(LANE, attr.threads_per_warp, attr.order)
           * identity_standard_nd(WARP, attr.warps_per_cta, attr.order))
    # A blocked tile larger than the tensor keeps no duplicate registers in Triton 3.9 (unlike
    # MMA layouts, whose register numbering is fixed by the instruction); Triton 3.6, 3.7 and
    # 3.8 still keep them as zero bases (checked against each release's own translation and
    # LLVM struct).
    return combine_cta_cga_with_shape(cta, cga_linear_layout(attr.cga, attr.rank), shape,
                                      broadcast_registers=conventions.blocked_keeps_duplicate_registers)


def _blocked_in_one_cta(attr: BlockedEncoding, shape: Sequence[int], broadcast_registers: bool) -> Optional[LinearLayout]:
    """``_blocked`` of a one-CTA blocked layout (no CGA), its bases written down at once instead
    of through the products and fits below (a blocked layout is translated for every tensor
    type a kernel converts; this takes a fifth of the time); None for any other (the general
    path answers).  The same layout: registers step through ``sizePerThread`` along ``order``,
    lanes and warps continue where the previous level stopped, registers repeat the tile until
    it covers the tensor, and a basis that reaches past the tensor is zero (a copy) or, for
    registers where ``broadcast_registers`` is false, dropped; out dims ``dim0..``.  Checked
    against the general path by ``test_blocked_direct``."""
    rank = len(shape)
    order = list(attr.order)
    levels = (attr.size_per_thread, attr.threads_per_warp, attr.warps_per_cta)
    if attr.cga is not None or not rank or sorted(order) != list(range(rank)) or \
            any(len(level) != rank or not all(is_power_of_two(n) for n in level) for level in levels) or \
            not all(is_power_of_two(n) for n in shape):
        return None
    size = [1] * rank                            # what the levels so far cover, per dim
    bases: list[list[tuple]] = [[], [], []]      # register, lane, warp

    def unit(d: int, value: int) -> tuple:
        return tuple(value if k == d else 0 for k in range(rank))

    for level, counts in enumerate(levels):
        for d in order:
            bases[level] += [unit(d, size[d] << i) for i in range(counts[d].bit_length() - 1)]
            size[d] *= counts[d]
    for d in order:                              # registers repeat the tile over the tensor
        if size[d] < shape[d]:
            bases[0] += [unit(d, size[d] << i) for i in range((shape[d] // size[d]).bit_length() - 1)]
            size[d] = shape[d]
    clipped = []
    for level, level_bases in enumerate(bases):  # a tile larger than the tensor: copies
        kept = []
        for b in level_bases:
            if any(c >= shape[d] for d, c in enumerate(b)):
                if level == 0 and not broadcast_registers:
                    continue
                b = (0,) * rank
            kept.append(b)
        clipped.append(tuple(kept))
    names = dim_names(rank)
    return LinearLayout._raw(((REGISTER, clipped[0]), (LANE, clipped[1]), (WARP, clipped[2]), (BLOCK, ())),
                             tuple((names[d], shape[d]) for d in range(rank)))


def _slice(attr: SliceEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
    # Lay out the parent with a size-1 dim inserted, drop that dim, renumber the rest; the
    # registers that only stepped along the dropped dim now hold nothing new and are removed
    # (lanes and warps keep their zero bases: they express broadcasting).
    parent_shape = list(shape[:attr.dim]) + [1] + list(shape[attr.dim:])
    parent = distributed_linear_layout(attr.parent, parent_shape, conventions)  # any distributed layout
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


def _nvidia_mma(attr: NvidiaMmaEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
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


def _amd_mfma(attr: AmdMfmaEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
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


def _amd_wmma(attr: AmdWmmaEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
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


def _dot_operand(attr: DotOperandEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
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


def _linear(attr: LinearEncoding, shape: Sequence[int], conventions: TritonConventions) -> LinearLayout:
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



DISTRIBUTED_CONVERSIONS = [
    (BlockedEncoding, _blocked),
    (SliceEncoding, _slice),
    (NvidiaMmaEncoding, _nvidia_mma),
    (DotOperandEncoding, _dot_operand),
    (AmdMfmaEncoding, _amd_mfma),
    (AmdWmmaEncoding, _amd_wmma),
    (LinearEncoding, _linear),           # also GenericLinearEncoding (a subclass)
]


def distributed_linear_layout(attr: LayoutAttribute, shape: Sequence[int],
                              conventions: TritonConventions) -> LinearLayout:
    """The linear layout of a distributed attribute for a shape already checked against it
    (``to_linear_layout`` checks; a slice converts its parent through here).  A failure names
    the attribute and the shape."""
    for cls, convert in DISTRIBUTED_CONVERSIONS:
        if isinstance(attr, cls):
            try:
                return convert(attr, shape, conventions)
            except LayoutError as e:
                if str(attr) in str(e):
                    raise
                raise LayoutError(f"{attr} with shape {list(shape)}: {e}") from None
    raise LayoutError(f"{attr} is not a distributed layout")
