"""Fit the choice model (``lowering/choosing/fitted_model.py``) to plan times measured the way a kernel sees them,
and report its accuracy on held-out folds split by source kernel and by layout family (run as
``plan_choice.py fit``).

    python benchmarks/plan_choice.py fit benchmarks/results/plan_train.json.gz \
        benchmarks/results/plan_train_303_404.json.gz \
        --out benchmarks/results/choice_fit.md --write lowering/choosing/choice_model.json

Input: one or more runs of ``plan_choice.py --fresh SEED --train`` (their JSON, gzipped or not):
every verified candidate of the forward conversion, the return trip left to stock, and stock
itself, timed in a dependent chain with the grid full and with one program per SM.  Each candidate's time is the worse of its two contexts,
as a ratio to stock's.

The model has two parts:

1. a linear cost per candidate (``choice.FEATURES``: shuffles, selects, shared accesses,
   wavefronts, barriers, matrix accesses, per warp), fitted by least squares to the candidates'
   time differences within each conversion (in both contexts, in microseconds per round trip of a
   program); it ranks our candidates;
2. a gate per plan family (``choice.gated_family_of``: scope, method, matrix accesses, one warp
   or more, and ``/half-stock-shuffles`` where an unpacked shuffle pick needs at most half the
   shuffles of stock's own lowering, ``lowering/choosing/stock_lowering.py``): the ratio model-pick /
   stock over the family's training conversions; the family keeps our plan only when its mean
   log ratio plus ``Z`` standard errors is below 0, on at least ``MIN_FAMILY`` conversions.
   Everywhere else stock's lowering is taken.

The report also checks the stock-lowering prediction against stock's measured PTX: the shuffle
count of stock's round trip A -> B -> A (``chain_mix``) is predicted as the sum of the two
directions' ``stock_warp_shuffles``.

Held-out folds (never random rows): (a) by source kernel: every corpus kernel file is a group,
the fresh conversions of one draw are split into five groups; (b) by layout family: blocked,
sizePerThread changes, slices, MMA, linear, corpus, leave one out.  Each fold fits both parts on
the other groups and scores the held-out ones: the choice (our pick or stock) within 3% of the
fastest measured option, the worst choice / stock, the geometric mean choice / stock.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
from collections import defaultdict

import numpy as np

from harness.common import geomean, require_package  # noqa: E402

WITHIN = 1.03
Z = 2.0


def load(paths):
    """One entry per conversion of the runs in ``paths`` (one path or several, measured with the
    same Triton release): its candidates (features, worse-context ratio to stock, chain and
    latency microseconds) and the plan family of each."""
    if isinstance(paths, str):
        paths = [paths]
    require_package()
    from harness.conversion_cases import release
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing import fitted_model as choice
    from linear_layouts.lowering.planner import plan_candidates
    from linear_layouts.lowering.choosing.stock_lowering import stock_warp_shuffles
    from linear_layouts.lowering.cost import plan_cost
    from linear_layouts.lowering.verify import verify_plan

    runs = [json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path)) for path in paths]
    data = runs[0]
    version = release(data["environment"]["triton"])
    if any(release(run["environment"]["triton"]) != version for run in runs):
        raise SystemExit("fit_choice: the runs were measured with different Triton releases")
    out = []
    mimic = {"rows": 0, "exact": 0, "with_shuffles": 0, "exact_with_shuffles": 0}
    for row in (row for run in runs for row in run["rows"]):
        shape = tuple(row["shape"])
        src = to_linear_layout(row["src"], shape, conventions=version)
        dst = to_linear_layout(row["dst"], shape, conventions=version)
        measured_mix = row["modes"]["stock"].get("chain_mix")
        if measured_mix is not None:
            # stock's round trip: A -> B and B -> A, both stock's lowering
            predicted = sum(stock_warp_shuffles(a, b, row["bits"]) or 0 for a, b in ((src, dst), (dst, src)))
            shuffles = predicted > 0 or measured_mix["shfl"] > 0
            mimic["rows"] += 1
            mimic["exact"] += predicted == measured_mix["shfl"]
            mimic["with_shuffles"] += shuffles
            mimic["exact_with_shuffles"] += shuffles and predicted == measured_mix["shfl"]
        stock = {c: row["modes"]["stock"].get(c, {}).get("us") for c in ("chain", "latency")}
        if not all(stock.values()):
            continue
        plans, scope = plan_candidates(src, dst, row["bits"], "sm_90")
        plans = [p for p in plans if verify_plan(p).ok]
        cands = []
        for k, plan in enumerate(plans):
            times = {c: row["modes"].get(f"cand{k}", {}).get(c, {}).get("us") for c in ("chain", "latency")}
            if not all(times.values()):
                cands = []
                break
            ratio = max(times[c] / stock[c] for c in times)
            cands.append({"f": choice.plan_features(plan), "family": choice.gated_family_of(plan, str(scope)),
                          "weight": plan_cost(plan).weight, "ratio": ratio, "us": times})
        if not cands:
            continue
        origin = row["family"]
        out.append({"case": row["case"], "origin": origin, "cands": cands, "stock": stock,
                    "layout_family": origin if origin.startswith("fresh:") or origin == "first_pairs" else "corpus"})
    return out, {**data["environment"], "stock_mimic": mimic}


def fit_weights(cases) -> np.ndarray:
    """Least squares on within-conversion differences (each candidate's time minus its
    conversion's mean), both contexts stacked, microseconds per round trip per program."""
    X, y = [], []
    for case in cases:
        if len(case["cands"]) < 2:
            continue
        F = np.array([c["f"] for c in case["cands"]], float)
        for context, iterations in (("chain", 256), ("latency", 256)):
            t = np.array([c["us"][context] for c in case["cands"]]) / iterations
            X.append(F - F.mean(axis=0))
            y.append(t - t.mean())
    X, y = np.vstack(X), np.concatenate(y)
    w, *_ = np.linalg.lstsq(X, y, rcond=None)
    return np.maximum(w, 0.0)   # a cost is never a gain: negative fits are noise or collinearity


def pick(case, w) -> dict:
    if w is None:   # the planner's order: the cost model's rank 0
        return case["cands"][0]
    scores = [float(np.dot(w, c["f"])) for c in case["cands"]]
    k = min(range(len(scores)), key=lambda i: (scores[i], i))   # ties: the planner's order
    return case["cands"][k]


def fit_gates(cases, w, min_family: int) -> dict:
    by = defaultdict(list)
    for case in cases:
        chosen = pick(case, w)
        by[chosen["family"]].append(chosen["ratio"])
    gates = {}
    for family, ratios in sorted(by.items()):
        logs = np.log(ratios)
        mean, spread = float(logs.mean()), float(logs.std(ddof=1)) if len(logs) > 1 else float("inf")
        # the model's error on the family: Z standard errors of its mean log ratio
        keep = len(ratios) >= min_family and mean + Z * spread / math.sqrt(len(ratios)) < 0
        gates[family] = {"decision": "ours" if keep else "stock", "n": len(ratios),
                         "geomean_pick_over_stock": round(math.exp(mean), 4),
                         "spread": round(math.exp(spread), 4) if math.isfinite(spread) else None,
                         "worst": round(max(ratios), 4)}
    return gates


def decide(case, w, gates) -> float:
    """The choice's worse-context time over stock's (1.0: stock taken)."""
    chosen = pick(case, w)
    gate = gates.get(chosen["family"], {"decision": "stock"})
    return chosen["ratio"] if gate["decision"] == "ours" else 1.0


def fastest_of(case) -> float:
    """The fastest of stock (1.0) and every candidate of the conversion, over stock: the best
    choice in hindsight."""
    return min([1.0] + [c["ratio"] for c in case["cands"]])


def score(cases, w, gates) -> dict:
    ratios, close = [], 0
    for case in cases:
        r = decide(case, w, gates)
        close += r <= WITHIN * fastest_of(case)
        ratios.append(r)
    return {"n": len(cases), "close": close, "geomean": geomean(ratios), "worst": max(ratios) if ratios else None,
            "above": sum(1 for r in ratios if r > 1.05)}


def folds(cases, key, groups_of):
    groups = defaultdict(list)
    for case in cases:
        groups[groups_of(case)].append(case)
    for name in sorted(groups):
        test = groups[name]
        train = [c for c in cases if groups_of(c) != name]
        yield name, train, test


def source_group(case) -> str:
    if case["origin"].startswith("fresh:"):   # "fresh303/12:blocked:...": seed 303, conversion 12
        draw, rest = case["case"].split("/", 1)
        return f"{draw.replace('fresh', 'fresh draw ')}, part {int(rest.split(':')[0]) % 5}"
    return case["origin"]


def main(argv=None) -> int:
    from linear_layouts.lowering.choosing import fitted_model as choice
    parser = argparse.ArgumentParser(prog="plan_choice.py fit", description=__doc__.split("\n")[0])
    parser.add_argument("train_json", nargs="+", help="plan_choice.py --fresh ... --train results")
    parser.add_argument("--out", default="")
    parser.add_argument("--write", default="", help="write the model fitted on all conversions here")
    parser.add_argument("--min-family", type=int, default=choice.MIN_FAMILY)
    args_given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(args_given)
    cases, environment = load(args.train_json)
    mimic = environment.pop("stock_mimic")
    fitted = fit_weights(cases)
    # Which ranking to ship: the fitted weights only if they beat the planner's order (the cost
    # model's rank 0) on held-out source-kernel folds.
    held = {"fitted": [], "current": []}
    for _, train, test in folds(cases, "", source_group):
        wt = fit_weights(train)
        for name, weights in (("fitted", wt), ("current", None)):
            held[name] += [pick(c, weights)["ratio"] / min(x["ratio"] for x in c["cands"]) for c in test]
    use_fitted = geomean(held["fitted"]) < geomean(held["current"])
    w = fitted if use_fitted else None
    gates = fit_gates(cases, w, args.min_family)
    lines = ["# The choice model: fitted to plan times in a dependent chain, scored on held-out folds", "",
             f"Produced by `python benchmarks/plan_choice.py fit {' '.join(args_given)}` from "
             f"{environment.get('gpu')}, triton {environment.get('triton')}.", "",
             f"Conversions: {len(cases)}; features: {', '.join(choice.FEATURES)}.", "",
             f"Stock's lowering predicted (`lowering/choosing/stock_lowering.py`): the shuffle count of stock's round trip "
             f"exact in {mimic['exact']} of {mimic['rows']} conversions ({mimic['exact_with_shuffles']} of the "
             f"{mimic['with_shuffles']} where stock or the prediction shuffles).", "",
             f"Weights (us per round trip of a program, fitted on all): "
             f"{', '.join(f'{n}={x:.4f}' for n, x in zip(choice.FEATURES, fitted))}.", "",
             f"Ranking our candidates, held out by source kernel, geomean pick / fastest of ours: fitted "
             f"{geomean(held['fitted']):.3f}, the cost model's rank 0 {geomean(held['current']):.3f}: "
             f"{'the fitted weights rank' if use_fitted else 'the fit does not generalise; rank 0 ranks'}.", "",
             "Gates fitted on all conversions (ratio: the model's pick over stock, worse context):", "",
             "| plan family | n | geomean pick/stock | spread | worst | decision |", "|---|---:|---:|---:|---:|---|"]
    for family, g in gates.items():
        lines.append(f"| {family} | {g['n']} | {g['geomean_pick_over_stock']:.3f} | {g['spread']} | {g['worst']:.3f} | "
                     f"{g['decision']} |")
    fastest = [fastest_of(c) for c in cases]
    old = {"n": len(cases)}
    old_ratios = [c["cands"][0]["ratio"] for c in cases]
    old["close"] = sum(1 for r, best in zip(old_ratios, fastest) if r <= WITHIN * best)
    lines += ["", f"Before (the cost model's rank 0, no gate), in-sample: within 3% of the fastest "
              f"{old['close']}/{old['n']}, geomean / stock {geomean(old_ratios):.3f}, worst {max(old_ratios):.3f}, "
              f"above 1.05: {sum(1 for r in old_ratios if r > 1.05)}.", "",
              f"Stock everywhere (no model at all): within 3% of the fastest "
              f"{sum(1 for best in fastest if 1.0 <= WITHIN * best)}/{len(cases)}: "
              "what the gates below must beat.", "",
              f"The best choice in hindsight (per conversion the fastest of stock and every candidate, worse "
              f"context): geomean / stock {geomean(fastest):.3f}; "
              f"conversions where a candidate is at least 10% faster than stock: "
              f"{sum(1 for best in fastest if best <= 0.9)}/{len(cases)}. "
              "No model choosing among these lowerings can do better than this.", ""]
    for title, grouping in (("by source kernel", source_group), ("by layout family", lambda c: c["layout_family"])):
        lines += [f"Held out {title} (fit on the other groups, score this one):", "",
                  "| held-out group | n | within 3% of fastest | geomean choice/stock | worst | above 1.05 |",
                  "|---|---:|---:|---:|---:|---:|"]
        total_close = total_n = total_above = 0
        all_ratios = []
        for name, train, test in folds(cases, title, grouping):
            wt = fit_weights(train) if use_fitted else None
            gt = fit_gates(train, wt, args.min_family)
            s = score(test, wt, gt)
            total_close += s["close"]
            total_n += s["n"]
            total_above += s["above"]
            all_ratios += [decide(c, wt, gt) for c in test]
            lines.append(f"| {name} | {s['n']} | {s['close']} | {s['geomean']:.3f} | {s['worst']:.3f} | {s['above']} |")
        lines += [f"| **all** | {total_n} | {total_close} ({100 * total_close / total_n:.1f}%) | "
                  f"{geomean(all_ratios):.3f} | {max(all_ratios):.3f} | {total_above} |", ""]
    text = "\n".join(lines) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    print(text)
    if args.write:
        model = {"target": "sm_90", "measured_on": environment.get("gpu"), "triton": environment.get("triton"),
                 "made_by": f"python benchmarks/plan_choice.py fit {' '.join(args_given)}",
                 "features": list(choice.FEATURES),
                 "weights": None if w is None else [round(float(x), 6) for x in w], "gates": gates}
        with open(args.write, "w") as f:
            json.dump(model, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
