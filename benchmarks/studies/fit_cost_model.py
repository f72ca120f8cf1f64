"""Fit the cost model's constants (``lowering/cost_weights.py``) to measured plan times, and say
whether the fit generalises.

    python benchmarks/studies/fit_cost_model.py benchmarks/results/plan_choice_before.json \
        --out benchmarks/results/cost_fit.md

Input: the JSON of ``benchmarks/plan_choice.py`` (every verified candidate of every conversion,
timed on a GPU, with the cost model's per-warp counts).  For a weight vector w, the planner
would emit the candidate with the smallest w . features (ties: the planner's order).  A weight
vector is judged by the geometric mean, over conversions, of the chosen candidate's time over
the fastest candidate's (1.0 = always the fastest), and by how often the choice is within 3%.  Only conversions with
at least two candidates say anything about w.

The search is a grid over physically plausible constants (a shuffle 0.5 to 1.5 shared accesses,
an ALU op 0.25 or 0.5, a wavefront 0.25 to 1, barriers 0.5 to 16, a surcharge per ldmatrix or
stmatrix).  Because a grid this size can fit noise, it is also run as repeated two-fold cross
validation: fit on a random half of the conversions, score on the other half, and compare with
the current constants on that same half.  A fit that does not beat the current constants on
held-out conversions is not adopted.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import itertools
import json
import sys

import numpy as np

FEATURES = ("shuffles", "alu", "shared_accesses", "wavefronts", "warp_barriers", "cta_barriers",
            "ldmatrix", "stmatrix")
WITHIN = 1.03


def features(candidate: dict) -> list[float]:
    instructions = candidate.get("instructions", {})
    ldmatrix = sum(v for k, v in instructions.items() if k.startswith("ldmatrix"))
    stmatrix = sum(v for k, v in instructions.items() if k.startswith("stmatrix"))
    return [candidate["shuffles"], candidate["alu"], candidate["shared_accesses"], candidate["wavefronts"],
            candidate["warp_barriers"], candidate["cta_barriers"], ldmatrix, stmatrix]


def current_weights(target: str = "sm_90") -> np.ndarray:
    """The planner's constants for ``target`` (the plan-choice runs are sm_90's)."""
    sys.path.insert(0, os.path.join(on_path.REPO, "lowering"))
    import cost_weights as w  # the module has no imports: load it without the package
    c = w.weights_for(target)
    return np.array([c.shuffle, c.alu_op, c.shared_access, c.shared_wavefront, c.warp_barrier, c.cta_barrier,
                     0.0, 0.0])


def load_cases(path: str):
    rows = json.load(open(path))["cases"]
    cases = []
    for row in rows:
        candidates = row["candidates"]
        if len(candidates) < 2 or not all(c.get("ms") for c in candidates):
            continue
        cases.append((np.array([features(c) for c in candidates], float),
                      np.array([c["ms"] for c in candidates]), row["case"]))
    return cases


def choice_score(w: np.ndarray, cases) -> tuple[int, float]:
    """(conversions chosen within 3% of the fastest, geometric mean chosen / fastest)."""
    good, log_sum = 0, 0.0
    for X, times, _ in cases:
        predicted = X @ w
        k = int(np.lexsort((np.arange(len(predicted)), predicted))[0])
        good += times[k] <= WITHIN * times.min()
        log_sum += np.log(times[k] / times.min())
    return good, float(np.exp(log_sum / max(len(cases), 1)))


def grid() -> list[np.ndarray]:
    return [np.array(g, float) for g in itertools.product(
        [0.5, 1.0, 1.5], [0.25, 0.5], [1.0], [0.25, 0.5, 1.0], [0.5, 2.0], [2.0, 8.0, 16.0],
        [0.0, 1.0, 2.0, 4.0], [0.0, -0.5])]


def best_on(cases, candidates) -> np.ndarray:
    """The weights with the smallest geometric mean chosen / fastest (the expected slowdown of
    the choice; it counts how much slower a miss is, where "within 3%" only counts misses)."""
    return min(candidates, key=lambda w: (choice_score(w, cases)[1], -choice_score(w, cases)[0]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("plan_choice_json")
    parser.add_argument("--out", default="")
    parser.add_argument("--folds", type=int, default=6, help="repetitions of two-fold cross validation")
    args = parser.parse_args(argv)
    cases = load_cases(args.plan_choice_json)
    now = current_weights()
    weights = grid()
    fitted = best_on(cases, weights)
    lines = ["# Fitting the cost model's constants to measured plan times", "",
             f"Produced by `python benchmarks/studies/fit_cost_model.py {' '.join(argv or sys.argv[1:])}`.", "",
             f"Conversions with at least two measured candidates: {len(cases)}; features: {', '.join(FEATURES)}.", "",
             "| weights | chosen within 3% of fastest | geomean chosen / fastest |", "|---|---:|---:|"]
    for name, w in (("current", now), ("best on all conversions (in-sample)", fitted)):
        good, mean = choice_score(w, cases)
        lines.append(f"| {name}: {np.round(w, 2).tolist()} | {good}/{len(cases)} | {mean:.3f} |")
    lines += ["", "Held out (fit on a random half, scored on the other half):", "",
              "| fold | fitted on train: within 3% (test) | current: within 3% (test) | fitted geomean (test) | current geomean (test) |",
              "|---:|---:|---:|---:|---:|"]
    rng = np.random.default_rng(1)
    wins = 0
    for fold in range(args.folds):
        order = rng.permutation(len(cases))
        train = [cases[i] for i in order[:len(cases) // 2]]
        test = [cases[i] for i in order[len(cases) // 2:]]
        w = best_on(train, weights)
        fitted_test, current_test = choice_score(w, test), choice_score(now, test)
        # Better only if the expected slowdown is smaller and no more choices miss by over 3%.
        wins += fitted_test[1] < current_test[1] and fitted_test[0] >= current_test[0]
        lines.append(f"| {fold} | {fitted_test[0]}/{len(test)} | {current_test[0]}/{len(test)} | "
                     f"{fitted_test[1]:.3f} | {current_test[1]:.3f} |")
    verdict = ("fits beat the current constants on held-out conversions in most folds: "
               "adopt the fit on all conversions" if wins > args.folds // 2 else
               "fits do not beat the current constants on held-out conversions in most folds: "
               "these features do not explain the measured differences, keep the constants")
    lines += ["", f"Verdict (a fold is better when, on its held-out half, the geometric mean chosen / fastest "
              f"is smaller and no fewer choices are within 3%): {verdict} "
              f"({wins} of {args.folds} folds better).", ""]
    text = "\n".join(lines) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
