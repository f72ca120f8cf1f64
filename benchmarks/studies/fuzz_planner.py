"""Long fuzz of the conversion planner (for nights): random layouts and the encoding zoo.

    python benchmarks/studies/fuzz_planner.py --cases 1000000 --jobs 2
    python benchmarks/studies/fuzz_planner.py --minutes 60

Every case: build a plan with ``plan_conversion`` (which verifies it) and verify it again; any
``Unsupported`` other than a cross-CTA conversion, or any verifier failure, is a bug: the case is
printed (layouts, width, target) and the exit status is 1.  Generators are those of the CI tests
(``test/unit/lowering/test_plan_fuzz.py``, ``test/unit/lowering/test_plan_encodings.py``), with other seeds.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import multiprocessing
import os
import random
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))

from support.random_layouts import layout_of, random_case, random_encoding_case  # noqa: E402

from linear_layouts.lowering.plan import Unsupported  # noqa: E402
from linear_layouts.lowering.planner import plan_conversion  # noqa: E402
from linear_layouts.lowering.emit.emit_llvm import ConvertSite, EmitError, emit_island  # noqa: E402
from linear_layouts.lowering.sim.island_sim import check_emitted  # noqa: E402

ELEMENT_TYPES = {1: "i1", 8: "i8", 16: "f16", 32: "f32", 64: "i64"}


def island_problem(plan) -> str:
    """Why the plan's emitted island is wrong ("" if the simulator accepts it).  The planner's
    own verifier already passed the plan; the simulator is an independent check of the code."""
    if plan.scope == "block":
        return ""   # cross-CTA plans are not emitted (the plan verifier checks them)
    site = ConvertSite(result="%r", source="%s", src_type="tensor<src>", dst_type="tensor<dst>",
                       element_type=ELEMENT_TYPES[plan.element_bits])
    try:
        check = check_emitted(emit_island(plan, site).text, plan, site)
    except EmitError as error:
        return f"not emitted: {error}"
    return "" if check else check.errors[0]


def one_case(rng: random.Random):
    """(description, plan or Unsupported, target) for one random case, or None for an invalid encoding."""
    if rng.random() < 0.5:
        src, dst, bits, target = random_case(rng)
        desc = f"src={src}\ndst={dst}\nbits={bits} target={target.name}"
    else:
        a, b, shape, bits, target = random_encoding_case(rng)
        src, dst = layout_of(a, shape), layout_of(b, shape)
        if src is None or dst is None:
            return None
        desc = f"{a} -> {b} shape={shape} bits={bits} target={target.name}"
    return desc, plan_conversion(src, dst, bits, target), target


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
        desc, plan, target = result
        if isinstance(plan, Unsupported):
            if plan.scope == "block" and not target.has_distributed_shared_memory:
                stats["unsupported/block"] += 1
            else:
                failures.append(f"UNSUPPORTED {plan.reason}\n{desc}")
            continue
        problem = island_problem(plan)
        if problem:
            failures.append(f"ISLAND WRONG: {problem}\n{desc}")
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
