"""Shared-memory plans: store, barrier, load through a swizzled scratch buffer, in rounds.

Input: the source and destination layouts of one CTA in *local coordinates* (``cta_local``):
element directions of F2^k, where k is the log2 of the number of elements one CTA holds.  The
block dimension never appears: the minimal conversion left blocks alone, so every CTA converts
its own elements through its own scratch buffer.

Steps (Triton's ``transferSwizzlingLocalMem``, reference/triton.md §3.3):

1. ``common_vector``: directions both sides hold in registers -> the vector (up to 128 bits);
2. ``swizzle_for``: bank and segment directions (``lowering.swizzle``), and the rounds;
3. per side, the widest vector: the longest run of low offset bits that are register
   directions of that side, in order (the load side of an mma -> blocked epilogue reads 128 bits
   even when the mma side stores 64);
4. per round: every thread stores its registers of that round, barrier, every thread loads its
   registers of that round; a barrier before the next round's stores (they overwrite the buffer
   the previous loads read).

Addresses are affine in the thread ids: offset(r, l, w) = T(r) ^ T(l) ^ T(w) with T = the swizzle
inverse composed with the layout; T(r) is a per-instruction constant.
"""

from __future__ import annotations

from ..dialect import f2
from ..dialect.linear_layout import LinearLayout
from .hardware import HardwareLayout, deposit
from .plan import Barrier, SharedAccess, SharedMemoryPlan, ThreadAffine
from .swizzle import Swizzle, common_vector, swizzle_for
from .target import Target


def storage_bits(element_bits: int) -> int:
    """Bits an element occupies in shared memory: i1 is stored as i8 (like Triton)."""
    return 8 if element_bits < 8 else element_bits


def _side_vector(layout: HardwareLayout, swizzle: Swizzle, inverse, max_log2: int) -> tuple[int, tuple[int, ...]]:
    """(log2 width, register bit positions) of the widest vector access of one side.

    Offset bit i (i < width) must be the offset image of register bit positions[i], and every
    other register/lane/warp direction must have zero low offset bits (aligned vectors).
    """
    positions = []
    images = [inverse(c)[0] for c in layout.register]
    for i in range(min(max_log2, swizzle.offset_bits)):
        pos = [p for p, off in enumerate(images) if off == 1 << i]
        if not pos:
            break
        positions.append(pos[0])
    while positions:
        low = (1 << len(positions)) - 1
        others = [off for p, off in enumerate(images) if p not in positions]
        others += [inverse(c)[0] for c in layout.lane + layout.warp]
        if all(o & low == 0 for o in others):
            break
        positions.pop()
    return len(positions), tuple(positions)


def _accesses(layout: HardwareLayout, inverse, log2_vec: int, positions: tuple[int, ...], instruction: str,
              register_name, num_rounds: int) -> list[list[SharedAccess]]:
    """Per round, the vector accesses of one side."""
    lane_map = tuple(inverse(c)[0] for c in layout.lane)
    warp_map = tuple(inverse(c)[0] for c in layout.warp)
    rest = tuple(p for p in range(len(layout.register)) if p not in positions)
    per_round: list[list[SharedAccess]] = [[] for _ in range(num_rounds)]
    for chunk in range(1 << len(rest)):
        base = deposit(chunk, rest)
        x = 0
        for p, c in enumerate(layout.register):
            if base >> p & 1:
                x ^= c
        offset, rnd = inverse(x)
        regs = tuple(register_name(base | deposit(i, positions)) for i in range(1 << log2_vec))
        per_round[rnd].append(SharedAccess(instruction, regs, ThreadAffine(offset, lane_map, warp_map)))
    return per_round


def plan_shared_memory(src: HardwareLayout, dst: HardwareLayout, element_bits: int, target: Target,
                       src_register_name, warp_local: bool) -> SharedMemoryPlan:
    """A verified-to-be shared-memory plan (the caller runs the verifier).

    ``src`` / ``dst``: CTA-local layouts with unique registers; ``src_register_name(u)`` gives
    the full source register that holds unique register u.  ``warp_local``: data never leaves
    its warp (a warp barrier is enough).
    """
    ebits = storage_bits(element_bits)
    k = src.element_bits
    max_log2 = max(0, (128 // ebits).bit_length() - 1)
    vector = common_vector(list(src.register), list(dst.register), ebits)
    width = (1 << len(vector)) * ebits
    store_set = [src.lane[j] for j in target.phase_lane_bits(width, False) if j < len(src.lane)]
    load_set = [dst.lane[j] for j in target.phase_lane_bits(width, True) if j < len(dst.lane)]
    swizzle = swizzle_for(vector, store_set, load_set, list(src.register), list(dst.register), k, ebits,
                          target.num_banks, target.bank_bytes)
    inverse = swizzle.inverse()
    # Rounds must depend on registers only; otherwise give them up (one round, bigger buffer).
    if any(inverse(c)[1] for c in src.lane + src.warp + dst.lane + dst.warp):
        swizzle = Swizzle(swizzle.vector, swizzle.bank, swizzle.segment + swizzle.reps, ())
        inverse = swizzle.inverse()
    num_rounds = 1 << len(swizzle.reps)

    st_log2, st_pos = _side_vector(src, swizzle, inverse, max_log2)
    ld_log2, ld_pos = _side_vector(dst, swizzle, inverse, max_log2)
    amd = target.vendor == "amd"
    stores = _accesses(src, inverse, st_log2, st_pos, "ds_write" if amd else "st.shared", src_register_name,
                       num_rounds)
    loads = _accesses(dst, inverse, ld_log2, ld_pos, "ds_read" if amd else "ld.shared", lambda u: u, num_rounds)
    barrier = Barrier("s_barrier" if amd else ("bar.warp.sync" if warp_local else "bar.sync"))
    ops: list = []
    for rnd in range(num_rounds):
        if rnd:
            ops.append(barrier)
        ops.extend(stores[rnd])
        ops.append(barrier)
        ops.extend(loads[rnd])
    smem = LinearLayout([("vector", [(c,) for c in swizzle.vector]), ("bank", [(c,) for c in swizzle.bank]),
                         ("segment", [(c,) for c in swizzle.segment]), ("reps", [(c,) for c in swizzle.reps])],
                        [("dim0", 1 << k)], require_surjective=False)
    return SharedMemoryPlan(element_bits, 1 << swizzle.offset_bits, smem, num_rounds, tuple(ops),
                            1 << st_log2, 1 << ld_log2)


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
