"""Shared-memory plans: store, barrier, load through a swizzled scratch buffer, in rounds.

Input: the source and destination layouts of one CTA in *local coordinates* (``cta_local``):
element directions of F2^k, where k is the log2 of the number of elements one CTA holds.  The
block dimension never appears: the minimal conversion left blocks alone, so every CTA converts
its own elements through its own scratch buffer.

Steps (Triton's ``transferSwizzlingLocalMem``, ``lib/Conversion/TritonGPUToLLVM/ConvertLayoutOpToLLVM.cpp``):

1. ``common_vector``: directions both sides hold in registers -> the vector (up to 128 bits);
2. ``swizzle_for``: bank and segment directions (``lowering.swizzle``), and the rounds;
3. per side, the widest vector: the longest run of low offset bits that are register
   directions of that side, in order (the load side of an mma -> blocked epilogue reads 128 bits
   even when the mma side stores 64);
4. per round: every thread stores its registers of that round, barrier, every thread loads its
   registers of that round; a barrier before the next round's stores (they overwrite the buffer
   the previous loads read).

Rounds keep the buffer small (Triton's choice: a 32x256 i32 tensor over 4 warps goes through an
8 KB buffer in 4 rounds, 7 CTA barriers).  ``fewer_rounds`` trades buffer for barriers: each
round direction moved into the buffer's segment bits doubles the buffer and halves the rounds
(2 rounds through 16 KB, 3 barriers; or 1 round through 32 KB, 1 barrier).  The accesses are the
same instructions with the same lanes, so the same bank conflicts: a moved direction is a
register direction of both sides, it changes no lane's address within an access.

Addresses are affine in the thread ids: offset(r, l, w) = T(r) ^ T(l) ^ T(w) with T = the swizzle
inverse composed with the layout; T(r) is a per-instruction constant.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialect import f2
from ..dialect.linear_layout import LinearLayout
from .element_type import storage_bits_of
from .hardware import HardwareLayout, deposit
from .instructions import AccessForm, AccessKind, BarrierScope, MemorySpace
from .matrix import MatrixTile, matrix_tile
from .plan import Barrier, SharedAccess, SharedMemoryPlan, ThreadAffine
from .swizzle import Swizzle, common_vector, swizzle_for, widened
from .target import Target, Vendor


def widest_vector(register_offsets: list[int], thread_offsets: list[int], max_log2: int,
                  usable: list[bool] | None = None) -> tuple[int, tuple[int, ...]]:
    """(log2 width, register positions) of the widest vector access of one side.

    ``register_offsets[p]``: the scratch offset of register direction p; ``thread_offsets``: the
    offsets of the lane and warp directions.  Offset bit i (i < width <= ``max_log2``) must be
    the offset of register ``positions[i]``, and every other direction must leave the low
    ``width`` offset bits alone (aligned, whole vectors).  ``usable[p]`` False keeps register p
    out of vectors.  Example: register offsets (1, 2, 8), lane offsets (4, 16): positions
    (0, 1), a 4-element vector.
    """
    positions: list[int] = []
    for i in range(max_log2):
        found = [p for p, off in enumerate(register_offsets) if off == 1 << i and (usable is None or usable[p])]
        if not found:
            break
        positions.append(found[0])
    while positions:
        low = (1 << len(positions)) - 1
        others = [off for p, off in enumerate(register_offsets) if p not in positions] + list(thread_offsets)
        if all(o & low == 0 for o in others):
            break
        positions.pop()
    return len(positions), tuple(positions)


def side_vector(layout: HardwareLayout, offset_of, max_log2: int,
                usable: list[bool] | None = None) -> tuple[int, tuple[int, ...]]:
    """``widest_vector`` of one side of a conversion: its register, lane and warp directions
    (elements) taken to scratch offsets by ``offset_of``.  The swizzled planner below and the
    legacy planner (``lowering.legacy``, a padded row-major buffer) differ only in that map."""
    return widest_vector([offset_of(c) for c in layout.register], [offset_of(c) for c in layout.lane + layout.warp],
                         max_log2, usable)


def _swizzled_side_vector(layout: HardwareLayout, swizzle: Swizzle, inverse,
                          max_log2: int) -> tuple[int, tuple[int, ...]]:
    """``side_vector`` through the swizzle; a register direction that also changes the CTA
    (cross-CTA plans) cannot be in a vector."""
    space = swizzle.offset_bits + len(swizzle.reps)
    return side_vector(layout, lambda element: inverse(element)[0], min(max_log2, swizzle.offset_bits),
                       [c >> space == 0 for c in layout.register])


def vector_accesses(layout: HardwareLayout, inverse, log2_vec: int, positions: tuple[int, ...], kind: AccessKind,
                    register_name, num_rounds: int, cluster: "ClusterView | None" = None, pad_row_log2: int = 0,
                    pad_elements: int = 0) -> list[list[SharedAccess]]:
    """Per round, the vector accesses of one side: one per group of ``2^log2_vec`` registers
    (``positions``), lane l of warp w touching the offset of (the group's element ^ its lane's
    and warp's elements).  ``inverse(element)`` is (offset, round); ``cluster``: loads of a
    cross-CTA plan; ``pad_*``: legacy row padding of the addresses (``ThreadAffine``)."""
    lane_map = tuple(inverse(c)[0] for c in layout.lane)
    warp_map = tuple(inverse(c)[0] for c in layout.warp)
    block_map = tuple(inverse(c)[0] for c in layout.block)
    rest = tuple(p for p in range(len(layout.register)) if p not in positions)
    per_round: list[list[SharedAccess]] = [[] for _ in range(num_rounds)]
    in_vector = [deposit(i, positions) for i in range(1 << log2_vec)]   # the same for every chunk
    for chunk in range(1 << len(rest)):
        base = deposit(chunk, rest)
        element = layout.register_element(base)
        offset, rnd = inverse(element)
        regs = tuple(register_name(base | v) for v in in_vector)
        if cluster is None:
            address = ThreadAffine(offset, lane_map, warp_map, (), pad_row_log2, pad_elements)
            per_round[rnd].append(SharedAccess(kind, regs, address))
        else:
            cta = cluster.cta_map(layout, element)
            per_round[rnd].append(SharedAccess(kind, regs, ThreadAffine(offset, lane_map, warp_map, block_map),
                                               space=MemorySpace.DISTRIBUTED_SHARED, cta=cta))
    return per_round


@dataclass(frozen=True)
class ClusterView:
    """Coordinates for a conversion across the CTAs of a cluster (sm_90 distributed shared memory).

    Element coordinates: bits 0 .. k-1 say where the element is *inside* the CTA that holds it
    in the source (the source's register/lane/warp directions), bits k.. say *which* CTA: one bit
    per non-zero source block basis (positions ``block_positions`` of the block id).  Every CTA
    stores its own elements into its own buffer; a destination thread wanting element x reads
    offset(x low bits) in the CTA whose id has x's high bits at ``block_positions`` (and, for
    block bits the source broadcasts over, its own bits: any copy will do).
    """

    k: int
    block_positions: tuple[int, ...]
    broadcast_block_bits: tuple[int, ...]

    def block_id(self, x: int) -> int:
        return deposit(x >> self.k, self.block_positions)

    def cta_map(self, layout: HardwareLayout, x_const: int) -> ThreadAffine:
        own = {i: 1 << i for i in self.broadcast_block_bits}
        return ThreadAffine(self.block_id(x_const), tuple(self.block_id(c) for c in layout.lane),
                            tuple(self.block_id(c) for c in layout.warp),
                            tuple(self.block_id(c) ^ own.get(i, 0) for i, c in enumerate(layout.block)))


def matrix_accesses(layout: HardwareLayout, tile: MatrixTile, inverse, register_name,
                     num_rounds: int) -> list[list[SharedAccess]] | None:
    """Per round, the matrix accesses (ldmatrix/stmatrix) of one side; None if the swizzle does not
    realise the tile (its 16-byte rows must be offset bits 0.. and everything else aligned)."""
    n_vec = len(tile.vector)
    if [inverse(c)[0] for c in tile.vector] != [1 << i for i in range(n_vec)]:
        return None
    low = (1 << n_vec) - 1
    used = set(tile.word_registers) | set(tile.matrix_registers)
    others = [inverse(c)[0] for p, c in enumerate(layout.register) if p not in tile.word_registers]
    others += [inverse(c)[0] for c in layout.warp]
    others += [inverse(c)[0] for c in tile.rows if c not in tile.vector]
    if any(o & low for o in others):
        return None
    # Address lane l = 8 j + i: row i (lane bits 0-2 of l), matrix j (lane bits 3-4 of l).
    lane_map = [inverse(c)[0] for c in tile.rows]
    lane_map += [inverse(layout.register[p])[0] for p in tile.matrix_registers]
    lane_map += [0] * (5 - len(lane_map))
    warp_map = tuple(inverse(c)[0] for c in layout.warp)
    if any(inverse(c)[1] for c in tile.rows) or any(inverse(layout.register[p])[1] for p in used):
        return None
    rest = tuple(p for p in range(len(layout.register)) if p not in used)
    per_round: list[list[SharedAccess]] = [[] for _ in range(num_rounds)]
    words = 1 << len(tile.word_registers)
    in_access = [deposit(j, tile.matrix_registers) | deposit(i, tile.word_registers)
                 for j in range(tile.matrices) for i in range(words)]   # the same for every chunk
    for chunk in range(1 << len(rest)):
        base = deposit(chunk, rest)
        offset, rnd = inverse(layout.register_element(base))
        regs = tuple(register_name(base | v) for v in in_access)
        per_round[rnd].append(SharedAccess(tile.kind, regs, ThreadAffine(offset, tuple(lane_map), warp_map),
                                           form=tile.form))
    return per_round


def plan_shared_memory(src: HardwareLayout, dst: HardwareLayout, element_bits: int, target: Target,
                       src_register_name, warp_local: bool, store_form: AccessForm = AccessForm.VECTOR,
                       load_form: AccessForm = AccessForm.VECTOR,
                       cluster: ClusterView | None = None, round_budget_bytes: int = 0) -> SharedMemoryPlan | None:
    """A shared-memory plan (the caller runs the verifier), or None if the instruction pair does
    not fit these layouts.

    ``src`` / ``dst``: CTA-local layouts with unique registers; ``src_register_name(u)`` gives
    the full source register that holds unique register u.  ``warp_local``: data never leaves
    its warp (a warp barrier is enough).  ``store_form`` / ``load_form``: ``AccessForm.VECTOR``
    (vectorized accesses), ``MATRIX`` (8x8 matrices: stmatrix/ldmatrix) or ``MATRIX_TRANS``.
    ``cluster``: a cross-CTA conversion (``ClusterView``); ``dst`` then has coordinates above
    k (the CTA part) and block directions, and the loads read other CTAs' buffers.
    ``round_budget_bytes``: the largest buffer the plan may take to do fewer rounds than
    Triton's swizzle (``fewer_rounds``); 0 keeps Triton's rounds.
    """
    if cluster is not None and (store_form.is_matrix or load_form.is_matrix):
        return None  # matrix loads cannot read another CTA's buffer; keep cross-CTA plans plain
    ebits = storage_bits_of(element_bits)
    max_log2 = max(0, (128 // ebits).bit_length() - 1)
    tiles = _matrix_tiles(src, dst, store_form, load_form, ebits)
    if tiles is None:
        return None
    store_tile, load_tile = tiles
    if store_tile and load_tile:
        vector = list(store_tile.vector)
    elif store_tile or load_tile:
        vector = list((store_tile or load_tile).vector)
    else:
        vector = common_vector(list(src.register), list(dst.register), ebits)
    swizzle = _choose_swizzle(src, dst, vector, store_tile, load_tile, ebits, target, max_log2)
    merged = 0
    if round_budget_bytes and cluster is None:
        fewer = fewer_rounds(swizzle, ebits, round_budget_bytes)
        merged = len(swizzle.reps) - len(fewer.reps)
        swizzle = fewer
    inverse = swizzle.inverse()
    num_rounds = 1 << len(swizzle.reps)

    if store_tile is not None:
        stores = matrix_accesses(src, store_tile, inverse, src_register_name, num_rounds)
        st_vec = 128 // ebits
    else:
        st_log2, st_pos = _swizzled_side_vector(src, swizzle, inverse, max_log2)
        stores = vector_accesses(src, inverse, st_log2, st_pos, AccessKind.STORE, src_register_name, num_rounds)
        st_vec = 1 << st_log2
    if load_tile is not None:
        loads = matrix_accesses(dst, load_tile, inverse, lambda u: u, num_rounds)
        ld_vec = 128 // ebits
    else:
        ld_log2, ld_pos = _swizzled_side_vector(dst, swizzle, inverse, max_log2)
        loads = vector_accesses(dst, inverse, ld_log2, ld_pos, AccessKind.LOAD, lambda u: u, num_rounds, cluster)
        ld_vec = 1 << ld_log2
    if stores is None or loads is None:
        return None
    ops = _rounds(stores, loads, _barrier_for(target, warp_local, cluster), num_rounds, cluster is not None)
    k = src.element_bits
    smem = LinearLayout([("vector", [(c,) for c in swizzle.vector]), ("bank", [(c,) for c in swizzle.bank]),
                         ("segment", [(c,) for c in swizzle.segment]), ("reps", [(c,) for c in swizzle.reps])],
                        [("dim0", 1 << k)], require_surjective=False)
    return SharedMemoryPlan(element_bits, 1 << swizzle.offset_bits, smem, num_rounds, tuple(ops), st_vec, ld_vec,
                            merged)


def fewer_rounds(swizzle: Swizzle, element_bits: int, budget_bytes: int) -> Swizzle:
    """``swizzle`` with as many of its round directions moved into the buffer (as its top
    segment bits) as a buffer of at most ``budget_bytes`` allows, in order; the swizzle itself if
    none fits.  Example: i32, 11 offset bits (an 8 KB buffer), reps (64, 128): a budget of 16 KB
    moves 64 (12 offset bits, reps (128,): 2 rounds), 32 KB moves both (1 round)."""
    reps = list(swizzle.reps)
    segment = list(swizzle.segment)
    offset_bits = swizzle.offset_bits
    while reps and (1 << (offset_bits + 1)) * element_bits // 8 <= budget_bytes:
        segment.append(reps.pop(0))
        offset_bits += 1
    return Swizzle(swizzle.vector, swizzle.bank, tuple(segment), tuple(reps))


def _matrix_tiles(src: HardwareLayout, dst: HardwareLayout, store_form: AccessForm, load_form: AccessForm,
                  ebits: int):
    """(store tile, load tile) of the sides that use 8x8 matrix instructions (None for a
    vector side), or None when a matrix side does not fit its layout."""
    store_tile = load_tile = None
    if store_form.is_matrix:
        store_tile = matrix_tile(src, AccessKind.STORE, store_form, ebits, dst.register)
        if store_tile is None:
            return None
    if load_form.is_matrix:
        load_tile = matrix_tile(dst, AccessKind.LOAD, load_form, ebits, src.register)
        if load_tile is None:
            return None
    if store_tile and load_tile and store_tile.vector != load_tile.vector:
        # Both sides use matrix instructions: their 16-byte rows must be the same directions.
        # Re-pick each side's word registers to match the other's row.
        again = matrix_tile(dst, AccessKind.LOAD, load_form, ebits, src.register, prefer=store_tile.vector)
        if again is not None and again.vector == store_tile.vector:
            load_tile = again
        else:
            again = matrix_tile(src, AccessKind.STORE, store_form, ebits, dst.register, prefer=load_tile.vector)
            if again is None or again.vector != load_tile.vector:
                return None
            store_tile = again
    return store_tile, load_tile


def _choose_swizzle(src: HardwareLayout, dst: HardwareLayout, vector: list[int], store_tile, load_tile,
                    ebits: int, target: Target, max_log2: int) -> Swizzle:
    """The scratch buffer's swizzle: ``vector`` contiguous, bank conflicts of both sides' phases
    minimized, rounds that depend on registers only."""
    k = src.element_bits
    low = (1 << k) - 1  # the in-CTA part of a direction (all of it unless cross-CTA)

    def access_set(layout: HardwareLayout, tile, is_load: bool) -> list[int]:
        if tile is not None:
            return list(tile.rows)  # one phase = the 8 rows of one matrix
        n = 0
        while n < len(vector) and vector[n] in layout.register:
            n += 1
        width = (1 << n) * ebits
        return [layout.lane[j] & low for j in target.phase_lane_bits(width, is_load) if j < len(layout.lane)]

    keep = set()
    for tile, layout in ((store_tile, src), (load_tile, dst)):
        if tile is not None:
            keep |= {layout.register[p] for p in tile.matrix_registers} | set(tile.rows)
    swizzle = swizzle_for(vector, access_set(src, store_tile, False), access_set(dst, load_tile, True),
                          [c for c in src.register if c not in keep], [c for c in dst.register if c not in keep],
                          k, ebits, target.num_banks, target.bank_bytes)
    inverse = swizzle.inverse()
    # Rounds must depend on registers only; otherwise give them up (one round, bigger buffer).
    if any(inverse(c)[1] for c in src.lane + src.warp + dst.lane + dst.warp + dst.block):
        swizzle = Swizzle(swizzle.vector, swizzle.bank, swizzle.segment + swizzle.reps, ())
        inverse = swizzle.inverse()
    # Try putting one side's register directions first among the bank bits: keep it only if
    # it widens that side's vectors (without a matrix tile, whose rows are fixed).
    if store_tile is None and load_tile is None:
        def widths(sw):
            inv = sw.inverse()
            return _swizzled_side_vector(src, sw, inv, max_log2)[0] + _swizzled_side_vector(dst, sw, inv, max_log2)[0]
        best = widths(swizzle)
        for regs in (list(src.register), list(dst.register)):
            candidate = widened(swizzle, regs)
            if widths(candidate) > best:
                swizzle, best = candidate, widths(candidate)
    return swizzle


def _barrier_for(target: Target, warp_local: bool, cluster) -> Barrier:
    """The barrier between a round's stores and its loads.  AMD plans wait for the whole
    workgroup even when the data stays in a wave (the planner has always planned them so; the
    AMD emitter could print a warp barrier as a lone fence)."""
    if cluster is not None:
        return Barrier(BarrierScope.CLUSTER)
    if warp_local and target.vendor is not Vendor.AMD:
        return Barrier(BarrierScope.WARP)
    return Barrier(BarrierScope.CTA)


def _rounds(stores, loads, barrier: Barrier, num_rounds: int, cross_cta: bool) -> list:
    """The plan's ops: each round's stores, a barrier, its loads; a barrier between rounds (and
    after the last, cross-CTA: no CTA may exit or reuse its buffer while others still read it)."""
    ops: list = []
    for rnd in range(num_rounds):
        if rnd:
            ops.append(barrier)
        ops.extend(stores[rnd])
        ops.append(barrier)
        ops.extend(loads[rnd])
    if cross_cta:
        ops.append(barrier)
    return ops


def instruction_pairs(target: Target, element_bits: int) -> list[tuple[AccessForm, AccessForm]]:
    """(store form, load form) pairs the target supports for this element width."""
    ebits = storage_bits_of(element_bits)
    stores, loads = [AccessForm.VECTOR], [AccessForm.VECTOR]
    if target.has_stmatrix and ebits in (8, 16, 32):
        stores.append(AccessForm.MATRIX)
        if ebits == 16:
            stores.append(AccessForm.MATRIX_TRANS)
    if target.has_ldmatrix and ebits in (8, 16, 32):
        loads.append(AccessForm.MATRIX)
        if ebits == 16:
            loads.append(AccessForm.MATRIX_TRANS)
    return [(s, l) for s in stores for l in loads]


def cluster_coordinates(src: HardwareLayout, dst: HardwareLayout) -> tuple[HardwareLayout, HardwareLayout,
                                                                            ClusterView] | None:
    """Source and destination in the coordinates of ``ClusterView``, or None when the source's
    block directions are not independent of its in-CTA directions (then CTAs would share
    elements in a way this plan does not model)."""
    rows = cta_space(src)
    k = len(rows)
    blocks = [(i, c) for i, c in enumerate(src.block) if c]
    basis = f2.EchelonBasis(rows + [c for _, c in blocks])
    if len(basis) != k + len(blocks) or k + len(blocks) != src.element_bits:
        return None
    # Coordinates: the combination of (rows..., block images...) that makes x.  The rows are an
    # RREF, so the low part equals ``cta_local``'s pivot coordinates for elements inside a CTA.

    def coord(x: int) -> int:
        return basis.express(x)
    view = ClusterView(k, tuple(i for i, _ in blocks), tuple(i for i, c in enumerate(src.block) if not c))
    src_c = HardwareLayout(tuple(coord(c) for c in src.register), tuple(coord(c) for c in src.lane),
                           tuple(coord(c) for c in src.warp), (), k)
    dst_c = HardwareLayout(tuple(coord(c) for c in dst.register), tuple(coord(c) for c in dst.lane),
                           tuple(coord(c) for c in dst.warp), tuple(coord(c) for c in dst.block), k)
    return src_c, dst_c, view


def cta_local(layout: HardwareLayout, rows: list[int]) -> HardwareLayout:
    """Rewrite a layout's register/lane/warp images in the coordinates of the space spanned by
    ``rows`` (an RREF, pivot = lowest bit): coordinate i = the bit of the element at pivot i.
    Blocks are dropped (each CTA converts its own elements)."""
    pivots = [r & -r for r in rows]

    def local(x: int) -> int:
        return sum(1 << i for i, p in enumerate(pivots) if x & p)
    return HardwareLayout(tuple(local(c) for c in layout.register), tuple(local(c) for c in layout.lane),
                          tuple(local(c) for c in layout.warp), (), len(rows))


def cta_space(layout: HardwareLayout) -> list[int]:
    """RREF rows spanning the elements one CTA holds (register, lane and warp directions)."""
    cols = [c for c in layout.register + layout.lane + layout.warp if c]
    return f2.rref(cols, max(1, layout.element_bits))
