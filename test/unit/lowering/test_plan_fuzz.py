"""Fuzzing the planner: random (source, destination, element width, warps, target) cases from
``linear_layouts.tools.fuzz.random_layouts.random_case``.

The planner returns only plans its own exhaustive verifier passed, so re-running that verifier
here would prove nothing.  What is checked instead: a plan exists for every case (a cross-CTA
case may be ``Unsupported`` only on a target without distributed shared memory), and a sample
of the plans is emitted as islands and executed by the emitted-code simulator, which reads the
island's text and shares no code with the verifier.

``FUZZ_CASES`` (environment) sets the number of cases: 8,000 by default, drawn from a seed of
each Triton release (``support.release_seed``), so that CI's two full runs (3.9 and 3.6) check
16,000 different cases, about 25 s on one core each.
Raise ``FUZZ_CASES`` for a longer run (the archived study ``fuzz_planner.py``, docs/studies.md, did so).
"""

from __future__ import annotations

import os
import random
from collections import Counter

from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.plan import Unsupported
from linear_layouts.tools.fuzz.random_layouts import random_case
from support.release_seed import seed_for_this_release
from support.simulation import simulate

# One plan in SIMULATED_EVERY is emitted and simulated (the simulator costs about 30 ms a plan).
SIMULATED_EVERY = 40

CI_CASES = int(os.environ.get("FUZZ_CASES", "8000"))
SEED = seed_for_this_release(1)


def run_fuzz(n: int, seed: int = 0) -> Counter:
    rng = random.Random(seed)
    stats: Counter = Counter()
    for i in range(n):
        src, dst, bits, target = random_case(rng)
        plan = plan_conversion(src, dst, bits, target)
        if isinstance(plan, Unsupported):
            if plan.scope == "block" and not target.has_distributed_shared_memory:
                stats["unsupported-block"] += 1
                continue
            raise AssertionError(f"seed {seed}, case {i}: {plan.reason}\nsrc={src}\ndst={dst}\nbits={bits} target={target.name}")
        if i % SIMULATED_EVERY == 0 and plan.scope != "block":   # cross-CTA plans are not emitted
            simulate(plan)
            stats["simulated"] += 1
        stats[f"{plan.scope}/{plan.method}"] += 1
    return stats


def test_random_layouts_all_plans_verify():
    stats = run_fuzz(CI_CASES, seed=SEED)
    print(dict(stats))
    # every kind of plan shows up, and the sample really was simulated
    assert all(stats[kind] > 0 for kind in ("register/rename", "lane/shuffle", "warp/shared"))
    assert stats["simulated"] >= CI_CASES // SIMULATED_EVERY // 2
