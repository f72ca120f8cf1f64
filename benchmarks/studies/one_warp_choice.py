"""Our picks in CTAs of one warp, on every committed GPU timing: do they run faster than stock, and
what does the rule for them (``fitted_model.one_warp_choice``) change (CPU only, no compile)?

    .venv-compat/bin/python benchmarks/studies/one_warp_choice.py --out benchmarks/results/one_warp_choice.md

Reads the runs of ``plan_choice.py`` committed under ``benchmarks/results`` (``plan_train*`` the
rules were fitted on, ``plan_fresh*`` held out; H100 and H200, triton 3.6): for each measured
conversion, our pick's time over stock's (the worse of the two contexts, a chain and a latency
loop, as ``plan_choice.py`` scores it) and the family of the pick.  Then:

* per family of one-warp picks: how many, their time over stock (geometric mean), how many the
  rule before (``STOCK_SHUFFLES`` alone) kept, and how many the rule now keeps;
* per run: the geometric mean over every conversion of the chosen lowering's time over stock,
  under the rule before and now (a conversion left to stock counts 1.0).

The rule before is ``choose_by_stock_shuffles`` without its first step; the rule now is that
function as shipped.  Run under triton 3.6 (the release the rows were measured with: their layouts
are read under its conventions).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import sys
from collections import defaultdict

from timed_rows import RESULTS, geomean, publish, require_package  # noqa: E402

CONTEXTS = ("chain", "latency")
MIX_KEYS = ("shfl", "ld_shared", "st_shared", "ldmatrix", "stmatrix", "bar")


def measured_runs() -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(RESULTS, "plan_*.json.gz"))
                  if "prevgate" not in p and ("train" in p or "fresh" in p))


def _worse_ratio(mode: dict, stock: dict):
    times = [mode.get(c, {}).get("us") for c in CONTEXTS]
    if not all(times) or not all(stock.get(c, {}).get("us") for c in CONTEXTS):
        return None
    return max(t / stock[c]["us"] for t, c in zip(times, CONTEXTS))


def _rows(path: str):
    """(row, our pick's ratio to stock) of one run, the conversions whose pick was timed."""
    run = json.load(gzip.open(path, "rt"))
    fresh = "fresh" in os.path.basename(path)
    for row in run["rows"]:
        modes, stock = row["modes"], row["modes"]["stock"]
        timed_pick = fresh and "pick" in modes     # --fresh without --no-pick: the ungated pick was timed
        mode = modes.get("pick" if timed_pick else "ours" if fresh else "cand0", {})
        ratio = _worse_ratio(mode, stock)
        if ratio is None:
            continue
        if fresh and not timed_pick and all(mode.get("chain_mix", {}).get(k) == stock.get("chain_mix", {}).get(k)
                                            for k in MIX_KEYS):
            continue    # the pass left it to stock when timed: the pick's own time is unknown
        yield run["environment"]["triton"], row, ratio


def cases() -> list[dict]:
    """One per distinct measured conversion with a plan: its run, ratio, family, and whether the
    rule before and the rule now keep our pick."""
    from linear_layouts.dialect.conventions import TritonConventions
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing import fitted_model
    from linear_layouts.lowering.plan import Method
    from linear_layouts.lowering.planner import plan_conversion

    model = fitted_model.load_model()
    found, seen = [], set()
    for path in measured_runs():
        for triton, row, ratio in _rows(path):
            key = (row["src"], row["dst"], tuple(row["shape"]), row["bits"], row["num_warps"])
            if key in seen:
                continue
            seen.add(key)
            shape = tuple(row["shape"])
            conventions = TritonConventions(tuple(int(x) for x in triton.split(".")[:2]))   # the run's release
            plan = plan_conversion(to_linear_layout(row["src"], shape, conventions=conventions),
                                   to_linear_layout(row["dst"], shape, conventions=conventions), row["bits"], "sm_90")
            if not plan or plan.method in (Method.NOOP, Method.RENAME):
                continue
            family = fitted_model.gated_family_of(plan, str(plan.scope))
            now = fitted_model.choose_by_stock_shuffles(plan, 0, model).plan is not None
            one_warp = fitted_model.one_warp(plan)
            before = now if not one_warp else _stock_shuffles_alone(plan, model)
            found.append({"run": os.path.basename(path), "set": "fresh" if "fresh" in path else "train",
                          "ratio": ratio, "family": family, "one_warp": one_warp, "before": before, "now": now})
    return found


def _stock_shuffles_alone(plan, model) -> bool:
    """The rule before: ``choose_by_stock_shuffles`` without its one-warp step."""
    from linear_layouts.lowering.choosing import fitted_model
    real = fitted_model.one_warp_choice
    fitted_model.one_warp_choice = lambda *args: None
    try:
        return fitted_model.choose_by_stock_shuffles(plan, 0, model).plan is not None
    finally:
        fitted_model.one_warp_choice = real


def report(found: list[dict], command: str) -> str:
    import triton

    lines = ["# Our picks in CTAs of one warp, on the committed GPU timings", "",
             f"Produced by `{command}` (CPU, triton {triton.__version__}; what it does: the docstring of "
             "`benchmarks/studies/one_warp_choice.py`).", "",
             "## One-warp picks by family", "",
             "| family | conversions (train + fresh) | our pick / stock (geomean) | worst | kept before | kept now |",
             "|---|---:|---:|---:|---:|---:|"]
    families = defaultdict(list)
    for case in found:
        if case["one_warp"]:
            families[case["family"]].append(case)
    for family, group in sorted(families.items()):
        ratios = [c["ratio"] for c in group]
        lines.append(f"| {family} | {len(group)} | {geomean(ratios):.3f} | {max(ratios):.3f} | "
                     f"{sum(c['before'] for c in group)} | {sum(c['now'] for c in group)} |")
    lines += chosen_table(found, "one-warp", lambda c: c["one_warp"], ("rule before", "before"), ("rule now", "now"))
    return "\n".join(lines) + "\n"


def chosen_table(found: list[dict], counted: str, count, before: tuple[str, str], after: tuple[str, str]) -> list[str]:
    """The section "Every measured conversion": per group of rows (``row_groups``), how many rows,
    how many ``count`` marks (column ``counted``), and the chosen lowering over stock where each of
    two rules decides (``(column, row key)``: ``chosen_over_stock``)."""
    lines = ["", "## Every measured conversion, chosen / stock (geomean; stock's own 1.000)", "",
             f"| run | conversions | {counted} | {before[0]} | {after[0]} |", "|---|---:|---:|---:|---:|"]
    for name, group in row_groups(found):
        lines.append(f"| {name} | {len(group)} | {sum(bool(count(c)) for c in group)} | "
                     f"{chosen_over_stock(group, before[1]):.3f} | {chosen_over_stock(group, after[1]):.3f} |")
    return lines


def row_groups(found: list[dict]) -> list[tuple[str, list[dict]]]:
    """The rows by run, then all training rows and all fresh (held-out) rows."""
    groups = [(run, [c for c in found if c["run"] == run]) for run in sorted({c["run"] for c in found})]
    return groups + [("all training rows", [c for c in found if c["set"] == "train"]),
                     ("all fresh rows (held out)", [c for c in found if c["set"] == "fresh"])]


def chosen_over_stock(group: list[dict], rule: str) -> float:
    """The geometric mean of the chosen lowering's time over stock's where ``rule`` (a row's key:
    our pick kept or not) decides; a conversion left to stock counts 1.0."""
    return geomean([c["ratio"] if c[rule] else 1.0 for c in group])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="", help="write the report here too")
    args = parser.parse_args(argv)
    require_package()
    command = "python benchmarks/studies/one_warp_choice.py" + (f" --out {args.out}" if args.out else "")
    publish(report(cases(), command), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
