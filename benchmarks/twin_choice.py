"""Twins of stock's code on every committed GPU timing: what does leaving them to stock
(``stock_shared.is_stock_twin`` in ``fitted_model.choose_by_stock_shuffles``) change (CPU only, no
compile)?

    .venv-compat/bin/python benchmarks/twin_choice.py --out benchmarks/results/twin_choice.md

Reads the same rows as ``one_warp_choice.py`` (the runs of ``plan_choice.py`` committed under
``benchmarks/results``: ``plan_train*`` the rules were fitted on, ``plan_fresh*`` held out; H100
and H200, triton 3.6), one per distinct measured conversion: our pick's time over stock's (the
worse of a chain and a latency loop).  Each row is a kernel with no other island of ours, so a
twin goes to stock there (``lowering_choice.kept_among_islands`` keeps twins only beside other
islands); a row is decided by its forward conversion, as ``one_warp_choice.py`` decides it.
Reported: how many picks are twins and their time over stock, and per run the geometric mean
over every conversion of the chosen lowering's time over stock with the twin step and without
it (a conversion left to stock counts 1.0).  Run under triton 3.6 (the rows' layouts are read
under its conventions).
"""

from __future__ import annotations

import argparse
import sys

from harness.common import geomean, publish, require_package  # noqa: E402
from one_warp_choice import cases  # noqa: E402  (the rows and the rule as shipped)


def cases_without_twins() -> list[dict]:
    """``one_warp_choice.cases`` with the twin step of the rule turned off."""
    from linear_layouts.lowering.choosing import fitted_model
    real = fitted_model.is_stock_twin
    fitted_model.is_stock_twin = lambda plan: False
    try:
        return cases()
    finally:
        fitted_model.is_stock_twin = real


def report(now: list[dict], without: list[dict], command: str) -> str:
    import triton

    twins = [(a, b) for a, b in zip(without, now) if a["now"] != b["now"]]
    lines = ["# Twins of stock's code on the committed GPU timings", "",
             f"Produced by `{command}` (CPU, triton {triton.__version__}; what it does: the docstring of "
             "`benchmarks/twin_choice.py`).", "",
             "## Picks the twin step sends to stock", "",
             "| rows | twins | their pick / stock (geomean) | fastest | slowest |", "|---|---:|---:|---:|---:|"]
    for name, kind in (("training", "train"), ("fresh (held out)", "fresh")):
        group = [a["ratio"] for a, _ in twins if a["set"] == kind]
        if group:
            lines.append(f"| {name} | {len(group)} | {geomean(group):.3f} | {min(group):.3f} | {max(group):.3f} |")
    lines += ["", "## Every measured conversion, chosen / stock (geomean; stock's own 1.000)", "",
              "| run | conversions | twins | without the twin step | with it |", "|---|---:|---:|---:|---:|"]
    runs = sorted({c["run"] for c in now})
    groups = [(run, lambda c, run=run: c["run"] == run) for run in runs]
    groups += [("all training rows", lambda c: c["set"] == "train"),
               ("all fresh rows (held out)", lambda c: c["set"] == "fresh")]
    for name, member in groups:
        pairs = [(a, b) for a, b in zip(without, now) if member(a)]
        before = geomean([a["ratio"] if a["now"] else 1.0 for a, _ in pairs])
        after = geomean([b["ratio"] if b["now"] else 1.0 for _, b in pairs])
        lines.append(f"| {name} | {len(pairs)} | {sum(a['now'] != b['now'] for a, b in pairs)} | {before:.3f} | {after:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="", help="the report's path (default: print only)")
    args = parser.parse_args(argv)
    require_package()
    now, without = cases(), cases_without_twins()
    assert [c["ratio"] for c in now] == [c["ratio"] for c in without]
    command = "python benchmarks/twin_choice.py" + (f" --out {args.out}" if args.out else "")
    publish(report(now, without, command), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
