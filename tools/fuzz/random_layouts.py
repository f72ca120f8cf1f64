"""Random layouts and conversion cases for fuzzing the planner (the unit tests' fuzzers and
the archived study ``fuzz_planner.py`` drew from here; nothing in the package's passes uses it).

Two generators:

* ``random_case``: *permutation-like layouts with broadcast*, built directly as ``LinearLayout``s:
  every tensor bit (a unit vector) goes to one hardware bit (register, lane, warp or block), and
  the hardware bits left over are zero bases (broadcast: lanes, warps or registers holding
  copies).  Source and destination share block bases most of the time; about 3 in 10 cases with
  blocks drop them on the destination (a cross-CTA conversion).  A quarter of the cases keep the
  warps (lane scope), a tenth keep lanes and warps and permute registers (register scope).
* ``random_encoding_case``: pairs from the encoding zoo (blocked, slice, NVIDIA mma v2/v3 and dot
  operands, AMD MFMA, blocked layouts over clusters of 2 or 4 CTAs) of one shape and warp count,
  translated by ``dialect.encodings.to_linear_layout`` (``layout_of``: None for an encoding that
  does not fit the shape).

The probabilities are those numbers, chosen so that every plan kind and scope shows up in a few
thousand cases; they are not a model of real kernels.
"""

from __future__ import annotations

import functools
import random

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.dialect.linear_layout import LayoutError, LinearLayout
from linear_layouts.lowering.target import TARGETS


def random_distributed_layout(rng: random.Random, shape_bits: tuple[int, ...], lane_bits: int, warp_bits: int,
                              register_bits: int, block: list[tuple[int, ...]] | None = None,
                              broadcast: float = 0.2) -> LinearLayout:
    """A permutation-like layout with broadcast of a tensor of 2^shape_bits[d] along dim d.

    ``block``: fixed block bases (so that two layouts agree on blocks); the tensor bits they use
    are not given to other hardware bits.
    """
    units = [tuple((1 << i) if d == dim else 0 for d in range(len(shape_bits)))
             for dim, n in enumerate(shape_bits) for i in range(n)]
    zero = tuple(0 for _ in shape_bits)
    block = list(block or [])
    units = [u for u in units if u not in block]
    rng.shuffle(units)
    slots = [("lane", i) for i in range(lane_bits)] + [("warp", i) for i in range(warp_bits)]
    extra_regs = 0
    # registers: enough to hold what lanes and warps cannot, plus a few broadcast ones
    need = len(units) - len(slots)
    regs = max(register_bits, need)
    slots += [("register", i) for i in range(regs)]
    while len(slots) < len(units):
        slots.append(("register", regs + extra_regs))
        extra_regs += 1
    rng.shuffle(slots)
    chosen = slots[:len(units)]
    # Bias: prefer tensor bits in low lane slots to be realistic, but keep it random.
    bases = {"register": {}, "lane": {}, "warp": {}}
    for (dim, i), u in zip(chosen, units):
        bases[dim][i] = u
    n_regs = max([i + 1 for i in bases["register"]] + [0])
    n_regs = max(n_regs, register_bits if rng.random() < broadcast else n_regs)
    out = {"register": [bases["register"].get(i, zero) for i in range(n_regs)],
           "lane": [bases["lane"].get(i, zero) for i in range(lane_bits)],
           "warp": [bases["warp"].get(i, zero) for i in range(warp_bits)],
           "block": block}
    return LinearLayout.from_bases({k: [list(b) for b in v] for k, v in out.items()},
                                   {f"dim{d}": 1 << n for d, n in enumerate(shape_bits)})


def random_case(rng: random.Random):
    target = rng.choice(list(TARGETS.values()))
    lane_bits = target.lane_bits
    warp_bits = rng.choice([0, 0, 1, 2, 3])
    block_bits = rng.choice([0, 0, 0, 1])
    rank = rng.choice([1, 2, 2, 3])
    total = rng.randint(max(lane_bits - 2, 1 + block_bits), lane_bits + warp_bits + block_bits + 4)
    shape = [0] * rank
    for _ in range(total):
        shape[rng.randrange(rank)] += 1
    shape = tuple(shape)
    units = [tuple((1 << i) if d == dim else 0 for d in range(rank)) for dim, n in enumerate(shape) for i in range(n)]
    block = rng.sample(units, block_bits)
    zero = tuple(0 for _ in shape)
    if block and rng.random() < 0.2:
        block = [zero]  # blocks broadcast
    bits = rng.choice([1, 8, 16, 16, 32, 32, 64])
    src = random_distributed_layout(rng, shape, lane_bits, warp_bits, rng.randint(0, 3), block)
    if rng.random() < 0.3 and block and block != [zero]:
        dst_block = [zero]  # a cross-CTA case now and then
    else:
        dst_block = block
    dst = random_distributed_layout(rng, shape, lane_bits, warp_bits, rng.randint(0, 3), dst_block)
    flavour = rng.random()
    if flavour < 0.25:
        # lane-scope flavour: keep warps, permute only inside registers and lanes
        dst = _same_warps(rng, src, dst)
    elif flavour < 0.35:
        # register-scope flavour: the same lanes and warps, registers permuted (maybe copied)
        regs = [list(b) for b in src.bases["register"]]
        rng.shuffle(regs)
        if rng.random() < 0.5:
            regs.insert(rng.randrange(len(regs) + 1), [0] * len(shape))
        dst = LinearLayout.from_bases({"register": regs, "lane": [list(b) for b in src.bases["lane"]],
                                       "warp": [list(b) for b in src.bases["warp"]],
                                       "block": [list(b) for b in src.bases["block"]]}, dict(src.out_dims))
    return src, dst, bits, target


def planned_random_cases(seed: int, count: int):
    """``random_case`` drawn ``count`` times from ``seed``, with the planner's candidates of
    each: (src, dst, bits, target, plans, scope); draws the planner rejects are skipped."""
    from linear_layouts.lowering.planner import INVALID_CONVERSION_ERRORS, plan_candidates
    rng = random.Random(seed)
    for _ in range(count):
        src, dst, bits, target = random_case(rng)
        try:
            plans, scope = plan_candidates(src, dst, bits, target)
        except INVALID_CONVERSION_ERRORS:
            continue
        yield src, dst, bits, target, plans, scope


def _same_warps(rng, src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """A destination that keeps src's warp and block bases and shuffles registers and lanes."""
    movable = [b for b in src.bases["register"] if any(b)] + [b for b in src.bases["lane"]]
    rng.shuffle(movable)
    lanes = movable[:len(src.bases["lane"])]
    regs = movable[len(src.bases["lane"]):]
    zero = tuple(0 for _ in src.out_dim_names)
    # pad lanes with zeros if there are not enough (lane broadcast)
    while len(lanes) < len(src.bases["lane"]):
        lanes.append(zero)
    nonzero_in_lanes = [b for b in lanes if any(b)]
    regs = [b for b in movable if b not in nonzero_in_lanes and any(b)]
    if rng.random() < 0.3:
        regs.insert(rng.randrange(len(regs) + 1), zero)
    return LinearLayout.from_bases({"register": [list(b) for b in regs], "lane": [list(b) for b in lanes],
                                    "warp": [list(b) for b in src.bases["warp"]],
                                    "block": [list(b) for b in src.bases["block"]]}, dict(src.out_dims))


def _split(rng, total: int, parts: int = 2) -> list[int]:
    """A random factorisation of a power of two into ``parts`` powers of two."""
    out = [1] * parts
    while total > 1:
        out[rng.randrange(parts)] *= 2
        total //= 2
    return out


def blocked(rng, rank: int, warps: int, lanes: int, ctas: int = 1) -> str:
    spt = _split(rng, rng.choice([1, 1, 2, 4, 8]), rank)
    tpw = _split(rng, lanes, rank)
    wpc = _split(rng, warps, rank)
    order = list(range(rank))
    rng.shuffle(order)
    f = lambda xs: "[" + ", ".join(map(str, xs)) + "]"  # noqa: E731
    cga = ""
    if ctas > 1:
        per = _split(rng, ctas, rank)
        split = [p if rng.random() < 0.8 else 1 for p in per]  # CTASplitNum 1: the CTAs hold copies
        cta_order = list(range(rank))
        rng.shuffle(cta_order)
        cga = f", CTAsPerCGA = {f(per)}, CTASplitNum = {f(split)}, CTAOrder = {f(cta_order)}"
    return (f"#ttg.blocked<{{sizePerThread = {f(spt)}, threadsPerWarp = {f(tpw)}, warpsPerCTA = {f(wpc)}, "
            f"order = {f(order)}{cga}}}>")


def nvidia_layouts(rng, warps: int, bits: int) -> list[str]:
    out = [blocked(rng, 2, warps, 32) for _ in range(3)]
    w = _split(rng, warps)
    mma2 = (f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [{w[0]}, {w[1]}], "
            "instrShape = [16, 8]}>")
    out.append(mma2)
    if warps >= 4:
        n = rng.choice([8, 16, 32, 64])
        wm = rng.choice([4, warps])
        out.append(f"#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = [{wm}, {warps // wm}], "
                   f"instrShape = [16, {n}, 16]}}>")
    if bits in (8, 16):
        k_width = 32 // bits
        out.append(f"#ttg.dot_op<{{opIdx = {rng.randrange(2)}, parent = {mma2}, kWidth = {k_width}}}>")
    return out


def amd_layouts(rng, warps: int, target: str) -> list[str]:
    t = TARGETS[target]
    out = [blocked(rng, 2, warps, t.warp_size) for _ in range(3)]
    w = _split(rng, warps)
    if t.wmma_version:   # RDNA: WMMA, no MFMA (Triton 3.6's spelling of amd_wmma; our dialect reads both)
        mma = (f"#ttg.amd_wmma<{{version = {t.wmma_version}, isTranspose = {rng.choice(['true', 'false'])}, "
               f"warpsPerCTA = [{w[0]}, {w[1]}]}}>")
        k_width = 16 if t.wmma_version == 1 else 8
    else:
        instr = rng.choice(["[32, 32, 8]", "[16, 16, 16]"])
        transposed = rng.choice(["true", "false"])
        mma = (f"#ttg.amd_mfma<{{version = {t.mfma_version}, warpsPerCTA = [{w[0]}, {w[1]}], instrShape = {instr}, "
               f"isTransposed = {transposed}}}>")
        k_width = rng.choice([4, 8])
    out.append(mma)
    out.append(f"#ttg.dot_op<{{opIdx = {rng.randrange(2)}, parent = {mma}, kWidth = {k_width}}}>")
    return out


@functools.lru_cache(maxsize=4096)
def layout_of(text: str, shape: tuple[int, ...]):
    try:
        return to_linear_layout(text, list(shape))
    except LayoutError:
        return None


def slice_of(rng, parent: str, shape1d: int):
    dim = rng.randrange(2)
    return f"#ttg.slice<{{dim = {dim}, parent = {parent}}}>"


def random_encoding_case(rng: random.Random):
    target = rng.choice(list(TARGETS.values()))
    bits = rng.choice([1, 8, 16, 16, 32, 32, 64])
    warps = rng.choice([1, 2, 4, 4, 8])
    if target.vendor == "nvidia" and rng.random() < 0.15:
        # a cluster of 2 or 4 CTAs (blocked layouts with CGA splits): cross-CTA conversions
        ctas = rng.choice([2, 4])
        pool = [blocked(rng, 2, warps, 32, ctas) for _ in range(4)]
    elif target.vendor == "nvidia":
        pool = nvidia_layouts(rng, warps, bits)
    else:
        pool = amd_layouts(rng, warps, target.name)
    if rng.random() < 0.2:
        # rank 1: slices of the 2-D layouts and 1-D blocked
        shape = (1 << rng.randint(4, 9),)
        pool = [slice_of(rng, p, shape[0]) for p in pool if not p.startswith("#ttg.dot_op")]
        pool.append(blocked(rng, 1, warps, target.warp_size))
        pool = [p for p in pool if "CTAsPerCGA" not in p]
    else:
        shape = (1 << rng.randint(4, 7), 1 << rng.randint(4, 7))
    a, b = rng.choice(pool), rng.choice(pool)
    return a, b, shape, bits, target
