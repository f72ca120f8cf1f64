"""Per-conversion dominance against the per-family gate, on the committed H100 measurements (CPU).

    python benchmarks/studies/choice_dominance_eval.py --out benchmarks/results/choice_dominance_eval.md

The measurements (``benchmarks/results/plan_*.json.gz``, H100, triton 3.6) timed each conversion
A -> B in a dependent round trip (B -> A always stock's), with stock's lowering and with ours; a
ratio is the worse of the chain and latency contexts over stock (``choice_signal.worse_ratio``).
For each conversion this script plans our pick (the planner's rank 0, as ``enable()`` does)
and scores the rules below by the chosen lowering's time over the per-conversion best of stock
and ours (1.0: the better of the two was chosen):

* ``stock``: stock everywhere; ``ours``: our pick everywhere (the gate off);
* ``shipped rule``: ``lowering/choosing/choice_model.json`` as committed: since issue 43 the
  per-conversion rule ``stock-shuffles`` (``fitted_model.choose_by_stock_shuffles``); before it,
  the family gate fitted on the training rows (their tables in results/ up to then read
  "family gate");
* ``dominance``: ``lowering.choosing.stock_bounds.dominance``: ours where it needs no more of any costly
  kind than stock's floor.  It has nothing fitted, so every row is held out for it;
* ``strict dominance``: ... and fewer of at least one kind (a tie goes to stock);
* ``shipped rule or strict dominance``: either says ours.

Rows: the training runs (``plan_train*``: candidate 0 timed) and the fresh runs
(``plan_fresh_*``: the pass's own output timed; used where it ran our plan, i.e. its round-trip
mix differs from stock's).  A fresh run made without ``--no-pick`` timed the ungated pick
(``pick``) beside the default (``ours``): there the pick is ours and the default is scored
against the per-conversion best as timed (the GPU validation of the default:
``plan_choice.py --fresh SEEDS --corpus``, docs/lowering-choice.md).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import glob
import gzip
import json
import os
import sys
from collections import Counter

from harness.checkout import geomean, make_package_importable, publish  # noqa: E402

RESULTS = on_path.RESULTS
CONTEXTS = ("chain", "latency")
MIX_KEYS = ("shfl", "ld_shared", "st_shared", "ldmatrix", "stmatrix", "bar")


def measured_runs() -> list[str]:
    """Every committed H100 run of ``plan_choice.py`` (training and fresh), the _prevgate rerun left out."""
    return sorted(p for p in glob.glob(os.path.join(RESULTS, "plan_*.json.gz"))
                  if "prevgate" not in p and ("train" in p or "fresh" in p))


def worse_ratio(mode: dict, stock: dict):
    times = [mode.get(c, {}).get("us") for c in CONTEXTS]
    if not all(times):
        return None
    return max(t / stock[c]["us"] for t, c in zip(times, CONTEXTS))


def load_cases(paths: list[str]) -> list[dict]:
    """One case per usable measured conversion: our pick (rank 0), its measured ratio to stock,
    the family gate's and the dominance rule's decisions."""
    make_package_importable()
    from harness.conversion_cases import release
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing import fitted_model as choice
    from linear_layouts.lowering.planner import plan_conversion
    from linear_layouts.lowering.choosing.stock_bounds import dominance

    model = choice.load_model()
    cases, seen = [], set()
    for path in paths:
        run = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
        version = release(run["environment"]["triton"])
        measured_on = f"{run['environment'].get('gpu', 'an unnamed GPU')}, triton {run['environment']['triton']}"
        fresh = "fresh" in os.path.basename(path)
        for row in run["rows"]:
            modes, stock = row["modes"], row["modes"]["stock"]
            timed_pick = fresh and "pick" in modes    # plan_choice.py --fresh without --no-pick: the ungated pick too
            mode = modes.get("pick" if timed_pick else "ours" if fresh else "cand0", {})
            ratio = worse_ratio(mode, stock) if all(stock.get(c, {}).get("us") for c in CONTEXTS) else None
            if ratio is None:
                continue
            if fresh and not timed_pick and all(mode.get("chain_mix", {}).get(k) == stock.get("chain_mix", {}).get(k)
                                                for k in MIX_KEYS):
                continue   # the pass left it to stock when timed: our plan's time is unknown
            default = worse_ratio(modes["ours"], stock) if timed_pick and "ours" in modes else None
            key = (row["src"], row["dst"], tuple(row["shape"]), row["bits"], row["num_warps"])
            if key in seen:
                continue
            seen.add(key)
            shape = tuple(row["shape"])
            src = to_linear_layout(row["src"], shape, conventions=version)
            dst = to_linear_layout(row["dst"], shape, conventions=version)
            plan = plan_conversion(src, dst, row["bits"], "sm_90")
            if not plan:
                continue
            gate = choice.choose([plan], str(plan.scope), model) if plan.method not in ("noop", "rename") else None
            verdict = dominance(plan)
            cases.append({"case": row["case"], "set": "fresh" if fresh else "train", "ratio": ratio,
                          "measured_on": measured_on, "run": os.path.basename(path),
                          "default_ratio": default,
                          "family": choice.gated_family_of(plan, str(plan.scope)),
                          "gate": gate is None or gate.plan is not None, "dominates": verdict.holds,
                          "strictly": verdict.holds and verdict.fewer(),
                          "more": [m.split(" (")[0] for m in verdict.more], "ours": verdict.ours.text(),
                          "stock_floor": verdict.stock.text() if verdict.stock else "-"})
    return cases


RULES = {
    "stock": lambda c: False,
    "ours": lambda c: True,
    "shipped rule": lambda c: c["gate"],
    "dominance": lambda c: c["dominates"],
    "strict dominance": lambda c: c["strictly"],
    "shipped rule or strict dominance": lambda c: c["gate"] or c["strictly"],
}


def score(cases, take) -> dict:
    """Chosen over the per-conversion best of stock and ours; and chosen over stock."""
    chosen = [c["ratio"] if take(c) else 1.0 for c in cases]
    best = [min(1.0, c["ratio"]) for c in cases]
    over_best = [x / b for x, b in zip(chosen, best)]
    return {"n": len(cases), "taken": sum(map(take, cases)), "geomean_over_best": geomean(over_best),
            "worst_over_best": max(over_best), "above_1.05": sum(r > 1.05 for r in over_best),
            "geomean_over_stock": geomean(chosen), "worst_over_stock": max(chosen)}


def report(cases, command: str) -> str:
    measured_on = sorted({c["measured_on"] for c in cases})
    lines = ["# Per-conversion dominance against the shipped rule", "",
             f"Measured on {'; '.join(measured_on) or 'nothing'}.", "",
             f"Produced by `{command}` (CPU; what it does: the docstring of `benchmarks/studies/choice_dominance_eval.py`).", ""]
    for name, subset in (("training rows (the gate was fitted on them)", [c for c in cases if c["set"] == "train"]),
                         ("fresh rows (held out for both)", [c for c in cases if c["set"] == "fresh"]),
                         ("all", cases)):
        if not subset:
            continue
        lines += [f"## {name}: {len(subset)} conversions", "",
                  "| rule | taken | geomean chosen/best | worst chosen/best | above 1.05 x best | geomean chosen/stock | worst chosen/stock |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for rule, take in RULES.items():
            s = score(subset, take)
            lines.append(f"| {rule} | {s['taken']} | {s['geomean_over_best']:.3f} | {s['worst_over_best']:.3f} | "
                         f"{s['above_1.05']} | {s['geomean_over_stock']:.3f} | {s['worst_over_stock']:.3f} |")
        lines.append("")
    timed_runs = sorted({c["run"] for c in cases if c["default_ratio"] is not None})
    if timed_runs:
        # One line per run: each timed the default of its own day (a run before the per-conversion
        # rule timed the family gate), so pooling them would score no one default.
        lines += ["## The default as timed (runs with the ungated pick timed too), per run", "",
                  "| run | conversions | geomean default / per-conversion best (goal <= 1.03) | worst | above 1.05 (goal 0) "
                  "| default / stock (geomean) |", "|---|---:|---:|---:|---:|---:|"]
        for run in timed_runs:
            timed = [c for c in cases if c["run"] == run and c["default_ratio"] is not None]
            over_best = [c["default_ratio"] / min(1.0, c["ratio"]) for c in timed]
            lines.append(f"| {run} | {len(timed)} | {geomean(over_best):.3f} | {max(over_best):.3f} | "
                         f"{sum(r > 1.05 for r in over_best)} | {geomean([c['default_ratio'] for c in timed]):.3f} |")
        lines.append("")
    taken = [c for c in cases if c["dominates"]]
    lines += ["## Where dominance takes ours", "",
              f"{len(taken)} conversions; ratio ours/stock: geomean {geomean([c['ratio'] for c in taken]) if taken else 1:.3f}, "
              f"worst {max([c['ratio'] for c in taken] or [1]):.3f}.  By family:", "",
              "| family | n | geomean ours/stock | worst |", "|---|---:|---:|---:|"]
    by_family = Counter(c["family"] for c in taken)
    for family, n in by_family.most_common():
        ratios = [c["ratio"] for c in taken if c["family"] == family]
        lines.append(f"| {family} | {n} | {geomean(ratios):.3f} | {max(ratios):.3f} |")
    missed = [c for c in cases if not c["dominates"] and c["ratio"] < 0.95]
    lines += ["", f"Left to stock although ours ran below 0.95x stock: {len(missed)}; what ours needs more of there: "
              + ", ".join(f"{k}: {n}" for k, n in Counter("+".join(c["more"]) or "-" for c in missed).most_common()), ""]
    worst = sorted(taken, key=lambda c: -c["ratio"])[:8]
    lines += ["Slowest conversions dominance takes:", ""]
    lines += [f"* {c['case']} ({c['family']}): {c['ratio']:.3f}; ours {c['ours']}, stock at least {c['stock_floor']}"
              for c in worst]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", help="measurement runs (default: every plan_train*/plan_fresh* "
                                                 "of benchmarks/results, the _prevgate rerun left out)")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    cases = load_cases(args.paths or measured_runs())
    command = "python benchmarks/studies/choice_dominance_eval.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(cases, command.strip())
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
