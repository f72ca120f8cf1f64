"""Fuzzing the planner: random (source, destination, element width, warps, target) cases, every
plan checked by the exhaustive verifier.

The random layouts are *permutation-like with broadcast*, built directly with ``LinearLayout``:
every tensor bit (a unit vector) is given to one hardware bit (register, lane, warp or block),
and the hardware bits left over are zero bases (broadcast: lanes, warps or registers that hold
copies).  Source and destination share the block bases most of the time (cross-CTA conversions
are ``Unsupported`` by design and counted separately).

``FUZZ_CASES`` (environment) sets the number of cases: 16,000 by default, with the 4,000 of
``test_plan_encodings.py`` the 20,000 CI cases (about 50 s on one core).
``benchmarks/fuzz_planner.py`` runs the same generator for longer.
"""

from __future__ import annotations

import os
import random
from collections import Counter

from linear_layouts.dialect.linear_layout import LinearLayout
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.plan import Unsupported
from linear_layouts.lowering.target import TARGETS
from linear_layouts.lowering.verify import verify_plan

CI_CASES = int(os.environ.get("FUZZ_CASES", "16000"))


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


def run_fuzz(n: int, seed: int = 0) -> Counter:
    rng = random.Random(seed)
    stats: Counter = Counter()
    for i in range(n):
        src, dst, bits, target = random_case(rng)
        plan = plan_conversion(src, dst, bits, target)
        if isinstance(plan, Unsupported):
            if plan.scope == "block":
                stats["unsupported-block"] += 1
                continue
            raise AssertionError(f"case {i}: {plan.reason}\nsrc={src}\ndst={dst}\nbits={bits} target={target.name}")
        assert verify_plan(plan).ok
        stats[f"{plan.scope}/{plan.method}"] += 1
    return stats


def test_random_layouts_all_plans_verify():
    stats = run_fuzz(CI_CASES, seed=1)
    assert sum(stats.values()) == CI_CASES
    print(dict(stats))
