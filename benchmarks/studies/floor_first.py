"""How many conversions stock's floor decides before planning, and whether any candidate could
have gained (CPU only, no compile).

    .venv/bin/python benchmarks/studies/floor_first.py --out benchmarks/results/floor_first_3.9.0.md

Where no fitted model answers (triton 3.9; sm_80 and AMD on any release) a plan of ours is kept
only where it needs fewer of some costly kind than stock's floor
(``lowering.choosing.stock_bounds``).  Where no candidate can, ``stock_bounds.why_no_plan_gains``
answers from the conversion's scope and its candidates' methods, and no plan is built.  This
script draws ``--count`` random conversions under each of ``--seeds``
(``tools.fuzz.random_layouts.planned_random_cases``, every target), builds every candidate anyway, and
counts:

* the conversions decided before planning, by the floor's reason;
* the conversions some candidate of which gains on the floor (``Dominance.gains``), and among the
  ones decided first, how many have such a candidate (must be 0: the run fails otherwise);

then the conversions of a corpus folder (``--corpus``, default flash-linear-attention's held-out
kernels) as ``plan_module`` decides them with the gate first, by the case that answered.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from collections import Counter

from timed_rows import publish, require_package  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def random_counts(seeds, count: int, triton: str) -> list[dict]:
    from linear_layouts.lowering.choosing.lowering_choice import Conversion, Policy, gate_reason_without_plan
    from linear_layouts.lowering.choosing.stock_bounds import dominance
    from linear_layouts.tools.fuzz.random_layouts import planned_random_cases

    policy = Policy(triton=triton)
    rows = []
    for seed in seeds:
        drawn = first = gaining = wrong = 0
        reasons: Counter = Counter()
        for src, dst, bits, target, plans, scope in planned_random_cases(seed=seed, count=count):
            drawn += 1
            reason = gate_reason_without_plan(Conversion(src, dst, bits, target), policy)
            gains = any(dominance(plan).gains for plan in plans)
            gaining += gains
            if reason:
                first += 1
                wrong += gains
                reasons[_reason_class(reason)] += 1
        rows.append(dict(seed=seed, drawn=drawn, first=first, gaining=gaining, wrong=wrong, reasons=reasons))
    return rows


def _reason_class(reason: str) -> str:
    for words, name in (("moves data", "floor of nothing"), ("warp shuffle(s) a thread", "shuffle floor"),
                        ("goes through shared memory, and needs at least", "shared-memory floor")):
        if words in reason:
            return name
    return reason[:60]


def corpus_counts(folder: str) -> Counter:
    """How ``plan_module`` (gate first, as the hook runs it) decides each conversion of the
    folder's modules: by the case of ``lowering_choice`` that answered."""
    from linear_layouts.lowering.choosing import lowering_choice
    from linear_layouts.passes import lower_conversions
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.ir.snapshot import parse_module

    answered: Counter = Counter()
    cases = ("_legacy", "_named_rank", "_stock_moves_nothing", "_gate_before_planning", "_planned")
    saved = {name: getattr(lowering_choice, name) for name in cases}

    def counted(name, real):
        def case(conversion, policy, plans):
            choice = real(conversion, policy, plans)
            if choice is not None:
                answered[(name.strip("_").replace("_", " "), "ours" if choice.ours else "stock")] += 1
            return choice
        return case

    for name, real in saved.items():
        setattr(lowering_choice, name, counted(name, real))
    try:
        for path in sorted(glob.glob(os.path.join(folder, "*.ttgir"))):
            try:
                module = parse_module(open(path).read(), path)
            except IRError:
                continue
            lower_conversions.plan_module(module, lower_conversions.LowerConversions(), gate_first=True)
    finally:
        for name, real in saved.items():
            setattr(lowering_choice, name, real)
    return answered


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="17,29,41,53,67,71")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--corpus", default=os.path.join(REPO, "test", "lit", "corpus", "fla"))
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    require_package()
    os.environ.pop("LINEAR_LAYOUTS_STOCK_GATE", None)    # the default: the choice active
    import triton

    command = "python benchmarks/studies/floor_first.py " + " ".join(argv if argv is not None else sys.argv[1:])
    began = time.time()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    rows = random_counts(seeds, args.count, triton.__version__)
    answered = corpus_counts(args.corpus)
    total = {key: sum(r[key] for r in rows) for key in ("drawn", "first", "gaining", "wrong")}
    reasons = sum((r["reasons"] for r in rows), Counter())
    lines = [f"# Decided on stock's floor before planning (triton {triton.__version__})", "",
             f"Produced by `{command}` ({time.time() - began:.0f} s, CPU).  What it counts: the docstring of "
             "`benchmarks/studies/floor_first.py`.", "",
             f"Random conversions (every target, seeds {args.seeds}, {args.count} draws each): **{total['drawn']}** "
             f"planned; decided before planning: **{total['first']}** "
             f"({', '.join(f'{k}: {n}' for k, n in reasons.most_common())}); with a candidate that gains on the "
             f"floor: {total['gaining']}; decided first although a candidate gains (must be 0): **{total['wrong']}**.",
             "", "| seed | drawn | decided first | a candidate gains | decided first, a candidate gains |",
             "|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['seed']} | {r['drawn']} | {r['first']} | {r['gaining']} | {r['wrong']} |" for r in rows]
    lines += ["", f"`{os.path.relpath(args.corpus, REPO)}`, each conversion by the case of `lowering_choice` that "
              "decided it (gate first, as the hook runs it):", "", "| case | ours | stock |", "|---|---:|---:|"]
    for case in sorted({case for case, _ in answered}):
        lines.append(f"| {case} | {answered[(case, 'ours')]} | {answered[(case, 'stock')]} |")
    publish("\n".join(lines), args.out)
    return 1 if total["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
