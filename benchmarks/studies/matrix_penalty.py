"""Would ranking ldmatrix/stmatrix candidates lower make our pick faster?  (CPU, committed H100 timings)

    python benchmarks/studies/matrix_penalty.py --out benchmarks/results/matrix_penalty.md

Why ask.  Of the 14 held-out conversions whose default ran more than 1.05x the per-conversion
best (``choice_default_gpu.md``), 7 are plans with matrix accesses (``ldmatrix``/``stmatrix``) where
stock's lowering uses plain ``ld/st.shared`` (``sass_slow_twins.md``).  And on the training runs
(``plan_train*``: every verified candidate of a conversion timed), the fastest plain shared-memory
candidate beats the fastest matrix candidate of the same conversion more often than the reverse.

What it does.  Every training conversion is re-planned with today's planner; candidate ``k``
is matched to the timed ``cand<k>`` (``harness.fit_choice.load``, as the choice model's fit does).
For each penalty ``P`` (cost units, the planner's weights: ``lowering/calibrated_weights.json``)
the pick is the candidate with the least ``plan_cost(plan).weight + P x matrix accesses per
warp``.  Scored on the conversions that have a matrix candidate, by the pick's time (the worse of
the chain and latency contexts) over stock's and over the fastest of our candidates; and, to say
whether a penalty fitted here would hold elsewhere, by leave-one-group-out: ``P`` chosen on all
groups but one (each corpus kernel a group, each fresh draw split in five), scored on that one.

The answer decides whether the planner gets a matrix weight: only if the held-out score beats
``P = 0`` (today's ranking).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path)
import argparse
import os
import sys
from collections import defaultdict

from harness.checkout import geomean, make_package_importable, publish  # noqa: E402

RESULTS = on_path.RESULTS
TRAINING = ("plan_train.json.gz", "plan_train_303_404.json.gz", "plan_train_2111_2213.json.gz")
PENALTIES = (0.0, 0.1, 0.2, 0.3, 0.43, 0.6, 0.8, 1.0, 1.5, 2.0, 4.0, 100.0)


def load_cases(paths):
    """One case per training conversion with a matrix candidate: per candidate its planner
    weight, matrix accesses per warp, and measured ratio to stock; and the conversion's group."""
    make_package_importable()
    from harness import fit_choice
    from linear_layouts.lowering.choosing import fitted_model as choice

    matrix = choice.FEATURES.index("matrix_accesses")
    loaded, environment = fit_choice.load(paths)
    cases = []
    for case in loaded:
        cands = [{"weight": c["weight"], "matrix": c["f"][matrix], "ratio": c["ratio"]} for c in case["cands"]]
        if any(c["matrix"] for c in cands):
            cases.append({"case": case["case"], "group": group_of(case["case"]), "cands": cands})
    return cases, environment


def group_of(name: str) -> str:
    """Each corpus kernel file is a group; each fresh draw is split in five by the case's index."""
    head, _, rest = name.partition(":")
    if head.startswith("fresh") and "/" in head:
        draw, index = head.split("/", 1)
        return f"{draw}#{int(index) % 5}"
    return head.split("#")[0]


def pick(case, penalty: float) -> dict:
    return min(case["cands"], key=lambda c: (c["weight"] + penalty * c["matrix"], case["cands"].index(c)))


def score(cases, penalty: float) -> dict:
    chosen = [pick(c, penalty) for c in cases]
    best = [min(x["ratio"] for x in c["cands"]) for c in cases]
    return {"over_stock": geomean([c["ratio"] for c in chosen]),
            "over_best": geomean([c["ratio"] / b for c, b in zip(chosen, best)]),
            "above": sum(c["ratio"] > 1.05 for c in chosen),
            "matrix_picks": sum(c["matrix"] > 0 for c in chosen)}


def held_out(cases) -> tuple[float, float, dict]:
    """Leave one group out: the penalty with the best training score (pick over the fastest of
    ours) picks for the held-out group.  (held-out pick/best geomean, the same with P = 0, how
    often each penalty was chosen)."""
    groups = defaultdict(list)
    for c in cases:
        groups[c["group"]].append(c)
    fitted, zero, chosen = [], [], defaultdict(int)
    for name, members in groups.items():
        rest = [c for c in cases if c["group"] != name]
        penalty = min(PENALTIES, key=lambda p: (score(rest, p)["over_best"], p))
        chosen[penalty] += 1
        for c in members:
            best = min(x["ratio"] for x in c["cands"])
            fitted.append(pick(c, penalty)["ratio"] / best)
            zero.append(pick(c, 0.0)["ratio"] / best)
    return geomean(fitted), geomean(zero), dict(sorted(chosen.items()))


def report(cases, environment, command: str) -> str:
    lines = ["# A penalty on matrix accesses in the planner's ranking: does it help?", "",
             f"Produced by `{command}` (CPU) from the training timings "
             f"({', '.join(f'`{p}`' for p in TRAINING)}: {environment.get('gpu', 'H100')}, triton "
             f"{environment.get('triton')}); the study's docstring says how.", "",
             f"Conversions with at least one matrix candidate: {len(cases)}.", ""]
    plain_vs_matrix = []
    for c in cases:
        mats = [x["ratio"] for x in c["cands"] if x["matrix"]]
        plains = [x["ratio"] for x in c["cands"] if not x["matrix"]]
        if mats and plains:
            plain_vs_matrix.append(min(mats) / min(plains))
    lines += [f"The fastest matrix candidate over the fastest other candidate of the same conversion "
              f"({len(plain_vs_matrix)} conversions with both): geomean {geomean(plain_vs_matrix):.3f}; "
              f"the other faster by more than 5% in {sum(r > 1.05 for r in plain_vs_matrix)}, the matrix one in "
              f"{sum(r < 1 / 1.05 for r in plain_vs_matrix)}.", "",
              "| penalty P | pick / stock (geomean) | pick / fastest of ours | picks above 1.05x stock | picks with matrix accesses |",
              "|---:|---:|---:|---:|---:|"]
    for p in PENALTIES:
        s = score(cases, p)
        lines.append(f"| {p:g} | {s['over_stock']:.4f} | {s['over_best']:.4f} | {s['above']} | {s['matrix_picks']} |")
    fitted, zero, chosen = held_out(cases)
    lines += ["", f"Leave one group out ({len({c['group'] for c in cases})} groups): the penalty fitted on the other "
                  f"groups scores **{fitted:.4f}** x the fastest of ours on the held-out ones; today's ranking "
                  f"(P = 0) **{zero:.4f}**. Penalties chosen: "
                  + ", ".join(f"P={p:g} {n}x" for p, n in chosen.items()) + ".", "",
              ("A penalty helps on held-out groups." if fitted < zero - 0.002 else
               "No penalty helps: the plain candidate the ranking would take instead is not the fast one, so "
               "the planner keeps its weights (no matrix term).")]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=None, help="write the report here (default: print it)")
    args = parser.parse_args(argv)
    cases, environment = load_cases([os.path.join(RESULTS, name) for name in TRAINING])
    text = report(cases, environment, "python benchmarks/studies/matrix_penalty.py"
                  + (f" --out {os.path.relpath(args.out, on_path.REPO)}" if args.out else ""))
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
