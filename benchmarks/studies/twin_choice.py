"""Twins of stock's code on every committed GPU timing: what does leaving them to stock
(``stock_shared.is_stock_twin`` in ``fitted_model.choose_by_stock_shuffles``) change (CPU only, no
compile)?

    .venv-compat/bin/python benchmarks/studies/twin_choice.py --out benchmarks/results/twin_choice.md

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

from timed_rows import geomean, publish, require_package  # noqa: E402
from one_warp_choice import cases, chosen_table  # noqa: E402  (the rows, the rule as shipped)


def cases_without_twins() -> list[dict]:
    """``one_warp_choice.cases`` with the twin step of the rule turned off."""
    from linear_layouts.lowering.choosing import fitted_model
    real = fitted_model.is_stock_twin
    fitted_model.is_stock_twin = lambda plan: False
    try:
        return cases()
    finally:
        fitted_model.is_stock_twin = real


def report(found: list[dict], command: str) -> str:
    import triton

    twins = [c for c in found if c["without_twins"] != c["now"]]
    lines = ["# Twins of stock's code on the committed GPU timings", "",
             f"Produced by `{command}` (CPU, triton {triton.__version__}; what it does: the docstring of "
             "`benchmarks/studies/twin_choice.py`).", "",
             "## Picks the twin step sends to stock", "",
             "| rows | twins | their pick / stock (geomean) | fastest | slowest |", "|---|---:|---:|---:|---:|"]
    for name, kind in (("training", "train"), ("fresh (held out)", "fresh")):
        group = [c["ratio"] for c in twins if c["set"] == kind]
        if group:
            lines.append(f"| {name} | {len(group)} | {geomean(group):.3f} | {min(group):.3f} | {max(group):.3f} |")
    lines += chosen_table(found, "twins", lambda c: c["without_twins"] != c["now"],
                          ("without the twin step", "without_twins"), ("with it", "now"))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="", help="the report's path (default: print only)")
    args = parser.parse_args(argv)
    require_package()
    found, without = cases(), cases_without_twins()
    assert [c["ratio"] for c in found] == [c["ratio"] for c in without]
    for row, other in zip(found, without):
        row["without_twins"] = other["now"]
    command = "python benchmarks/studies/twin_choice.py" + (f" --out {args.out}" if args.out else "")
    publish(report(found, command), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
