"""Fuzzing the planner on the encoding zoo: blocked, slice, nvidia_mma v2/v3, dot_op, amd_mfma,
and blocked layouts spread over clusters of 2 or 4 CTAs (cross-CTA conversions: distributed
shared memory on sm_90, ``Unsupported`` on sm_80).

Random pairs of layouts of one tensor shape and warp count (``linear_layouts.tools.fuzz.random_layouts``), converted
with ``dialect.encodings.to_linear_layout``: a plan must exist for every pair (cross-CTA pairs
may be ``Unsupported`` only without distributed shared memory), and a sample of the plans is
emitted and executed by the emitted-code simulator (``test_plan_fuzz.py`` says why the plan
verifier is not run again).  WMMA layouts are wave32 (RDNA) and our
AMD targets are wave64 CDNA parts, so they are not paired here.

``ENCODING_FUZZ_CASES`` sets the number of cases: 2,000 by default, drawn from a seed of each
Triton release (``support.release_seed``), so that CI's two full runs check 4,000 different pairs.
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
from linear_layouts.tools.fuzz.random_layouts import layout_of, random_encoding_case
from support.release_seed import seed_for_this_release
from support.simulation import simulate

CI_CASES = int(os.environ.get("ENCODING_FUZZ_CASES", "2000"))
SEED = seed_for_this_release(2)
SIMULATED_EVERY = 40


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
            raise AssertionError(f"seed {seed}: {a} -> {b} shape {shape} bits {bits} on {target.name}: {plan.reason}")
        if done % SIMULATED_EVERY == 0 and plan.scope != "block":   # cross-CTA plans are not emitted
            simulate(plan)
            stats["simulated"] += 1
        stats[f"{plan.scope}/{plan.method}"] += 1
        if plan.shared is not None:
            kinds = {f"{op.form.value} {op.kind.value}" for op in plan.shared.ops if hasattr(op, "form")}
            for k in kinds:
                stats[k] += 1
    return stats


def test_encoding_zoo_all_plans_verify():
    stats = run_encoding_fuzz(CI_CASES, seed=SEED)
    print(dict(stats))
    assert stats["lane/shuffle"] + stats["warp/shared"] > 0
