"""Fuzzing the planner on the encoding zoo: blocked, slice, nvidia_mma v2/v3, dot_op, amd_mfma,
and blocked layouts spread over clusters of 2 or 4 CTAs (cross-CTA conversions: distributed
shared memory on sm_90, ``Unsupported`` on sm_80).

Random pairs of layouts of one tensor shape and warp count, converted with
``dialect.encodings.to_linear_layout``; every plan must pass the exhaustive verifier (the public
entry point runs it; the test re-runs it to be sure).  WMMA layouts are wave32 (RDNA) and our
AMD targets are wave64 CDNA parts, so they are not paired here.

``ENCODING_FUZZ_CASES`` sets the number of cases.
"""

from __future__ import annotations

import functools
import os
import random
from collections import Counter

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.dialect.linear_layout import LayoutError
from linear_layouts.lowering.plan import Unsupported
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import TARGETS
from linear_layouts.lowering.verify import verify_plan

CI_CASES = int(os.environ.get("ENCODING_FUZZ_CASES", "4000"))


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
    out = [blocked(rng, 2, warps, 64) for _ in range(3)]
    w = _split(rng, warps)
    version = 3 if target == "gfx942" else 2
    instr = rng.choice(["[32, 32, 8]", "[16, 16, 16]"])
    transposed = rng.choice(["true", "false"])
    mfma = (f"#ttg.amd_mfma<{{version = {version}, warpsPerCTA = [{w[0]}, {w[1]}], instrShape = {instr}, "
            f"isTransposed = {transposed}}}>")
    out.append(mfma)
    out.append(f"#ttg.dot_op<{{opIdx = {rng.randrange(2)}, parent = {mfma}, kWidth = {rng.choice([4, 8])}}}>")
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


def run_encoding_fuzz(n: int, seed: int = 0) -> Counter:
    rng = random.Random(seed)
    stats: Counter = Counter()
    done = 0
    while done < n:
        a, b, shape, bits, target = random_encoding_case(rng)
        src, dst = layout_of(a, shape), layout_of(b, shape)
        if src is None or dst is None:
            stats["invalid-encoding"] += 1
            continue
        done += 1
        plan = plan_conversion(src, dst, bits, target)
        if isinstance(plan, Unsupported) and plan.scope == "block" and not target.has_distributed_shared_memory:
            stats["unsupported-block"] += 1
            continue
        if isinstance(plan, Unsupported):
            raise AssertionError(f"{a} -> {b} shape {shape} bits {bits} on {target.name}: {plan.reason}")
        assert verify_plan(plan).ok
        stats[f"{plan.scope}/{plan.method}"] += 1
        if plan.shared is not None:
            kinds = {f"{op.form.value} {op.kind.value}" for op in plan.shared.ops if hasattr(op, "form")}
            for k in kinds:
                stats[k] += 1
    return stats


def test_encoding_zoo_all_plans_verify():
    stats = run_encoding_fuzz(CI_CASES, seed=2)
    print(dict(stats))
    assert stats["lane/shuffle"] + stats["warp/shared"] > 0
