"""Long fuzz of the conversion planner (for nights): random layouts and the encoding zoo.

    python benchmarks/fuzz_planner.py --cases 1000000 --jobs 2
    python benchmarks/fuzz_planner.py --minutes 60

Every case: build a plan with ``plan_conversion`` (which verifies it) and verify it again; any
``Unsupported`` other than a cross-CTA conversion, or any verifier failure, is a bug: the case is
printed (layouts, width, target) and the exit status is 1.  Generators are those of the CI tests
(``test/unit/test_plan_fuzz.py``, ``test/unit/test_plan_encodings.py``), with other seeds.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "unit"))

from test_plan_encodings import layout_of, random_encoding_case  # noqa: E402
from test_plan_fuzz import random_case  # noqa: E402

from linear_layouts.lowering.plan import Unsupported  # noqa: E402
from linear_layouts.lowering.planner import plan_conversion  # noqa: E402
from linear_layouts.lowering.verify import verify_plan  # noqa: E402


def one_case(rng: random.Random):
    """(description, plan or Unsupported) for one random case, or None for an invalid encoding."""
    if rng.random() < 0.5:
        src, dst, bits, target = random_case(rng)
        desc = f"src={src}\ndst={dst}\nbits={bits} target={target.name}"
    else:
        a, b, shape, bits, target = random_encoding_case(rng)
        src, dst = layout_of(a, shape), layout_of(b, shape)
        if src is None or dst is None:
            return None
        desc = f"{a} -> {b} shape={shape} bits={bits} target={target.name}"
    return desc, plan_conversion(src, dst, bits, target)


def worker(args) -> tuple[Counter, list[str]]:
    seed, cases, deadline = args
    rng = random.Random(seed)
    stats: Counter = Counter()
    failures: list[str] = []
    done = 0
    while done < cases and time.time() < deadline:
        result = one_case(rng)
        if result is None:
            continue
        done += 1
        desc, plan = result
        if isinstance(plan, Unsupported):
            if plan.scope == "block":
                stats["unsupported/block"] += 1
            else:
                failures.append(f"UNSUPPORTED {plan.reason}\n{desc}")
            continue
        if not verify_plan(plan).ok:
            failures.append(f"VERIFY FAILED\n{desc}")
        stats[f"{plan.scope}/{plan.method}"] += 1
    return stats, failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200_000)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args(argv)
    deadline = time.time() + (args.minutes * 60 if args.minutes else 10 ** 9)
    chunks = max(args.jobs * 8, 1)
    per_chunk = (args.cases + chunks - 1) // chunks
    work = [(args.seed * 1000 + i, per_chunk, deadline) for i in range(chunks)]
    start = time.time()
    total: Counter = Counter()
    failures: list[str] = []
    with multiprocessing.Pool(args.jobs) as pool:
        for stats, fails in pool.imap_unordered(worker, work):
            total.update(stats)
            failures.extend(fails)
    n = sum(total.values()) + len(failures)
    print(f"seed {args.seed}: {n} cases in {time.time() - start:.0f} s, {len(failures)} failures")
    for k, v in sorted(total.items()):
        print(f"  {k:20s} {v}")
    for f in failures[:20]:
        print("-" * 80)
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
