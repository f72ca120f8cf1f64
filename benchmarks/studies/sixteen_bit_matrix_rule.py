"""The 16-bit rule (``fitted_model.sixteen_bits_where_matrices_are_in_play``) scored on the
held-out draws it was written on, and on the draw timed with and without it (CPU only; the
timings are the draws', nothing is run on a GPU).

On sm_90 with triton 3.6 every conversion of a held-out draw was timed in one run as stock
Triton lowers it and as the plugin's default does (``benchmarks/plan_choice.py --fresh``, the
rows in ``benchmarks/results/plan_fresh_*.json.gz``).  For every row, both directions of its
round trip are decided again by the default (``lowering_choice.choose_conversion``) with the
rule and without it.  A row whose islands the rule all sends to stock counts at 1.0x (it then
runs stock's code); a row where it takes one direction only keeps its measured time and is
counted as "partly".

* ``WRITTEN_ON``: the five draws looked at while the rule was written (the last, 11003/11117,
  was timed on an H200 the same day);
* ``TIMED_BOTH_WAYS``: a draw made afterwards (12007/12113, H200), timed twice in one GPU run,
  with the wheel before the rule and with the rule: the rows it changes, as each run measured them.

    python benchmarks/studies/sixteen_bit_matrix_rule.py --out benchmarks/results/sixteen_bit_matrix_rule.md

(With ``LINEAR_LAYOUTS_STOCK_GATE=off`` in the environment the default keeps every pick: run it
without.)
"""

from __future__ import annotations

import sys

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.lowering_choice import Conversion, Policy, choose_conversion
from linear_layouts.lowering.choosing.plan_memory import ModulePlans
from linear_layouts.lowering.target import target_named
from timed_rows import geomean, rows_of, rules_taken_out, worst_ratio, write_report

WRITTEN_ON = ("plan_fresh_8101_8209", "plan_fresh_9001_9109", "plan_fresh_9301_9409", "plan_fresh_9703_9811",
              "plan_fresh_11003_11117")
TIMED_BOTH_WAYS = ("plan_fresh_12007_12113_before", "plan_fresh_12007_12113")
RELEASE = TritonConventions((3, 6))
SM90 = target_named("sm_90")


def islands_of(row, rule_on: bool) -> tuple[bool, bool]:
    """Whether the default makes an island of each direction of ``row``'s round trip (A -> B,
    B -> A) under triton 3.6 on sm_90, with the 16-bit rule or without it."""
    a = to_linear_layout(row["src"], row["shape"], conventions=RELEASE)
    b = to_linear_layout(row["dst"], row["shape"], conventions=RELEASE)
    # the rule written after this study (docs/lowering-choice.md, 'One direction at a time') is
    # out either way: the study scores the 16-bit rule against the choice it was added to
    taken_out = ("shared_memory_in_tritons_rounds",) + (() if rule_on else ("sixteen_bits_where_matrices_are_in_play",))
    with rules_taken_out(fitted_model, *taken_out):
        return tuple(choose_conversion(Conversion(s, d, row["bits"], SM90), Policy(triton="3.6.0"),
                                       ModulePlans(None)).ours for s, d in ((a, b), (b, a)))


def what_the_rule_does(row) -> str:
    """``"none"`` (no island changes), ``"whole"`` (every island of the row goes to stock) or
    ``"partly"``."""
    before, after = islands_of(row, rule_on=False), islands_of(row, rule_on=True)
    if before == after:
        return "none"
    return "partly" if any(after) else "whole"


def score(rows) -> dict:
    """The draw as measured and with the rule applied; the ratios of the rows it takes whole."""
    measured, ruled, taken, partly = [], [], [], 0
    for row in rows:
        ratio = worst_ratio(row, "ours")
        if not ratio:
            continue
        effect = what_the_rule_does(row)
        measured.append(ratio)
        ruled.append(1.0 if effect == "whole" else ratio)
        taken += [ratio] if effect == "whole" else []
        partly += effect == "partly"
    return {"n": len(measured), "geomean": geomean(measured), "above": sum(x > 1.05 for x in measured),
            "ruled": geomean(ruled), "ruled_above": sum(x > 1.05 for x in ruled), "taken": taken, "partly": partly}


def _counts(ratios) -> str:
    return (f"{len(ratios)}, {geomean(ratios):.3f}, {sum(x > 1.05 for x in ratios)} above 1.05, "
            f"{sum(x < 0.95 for x in ratios)} below 0.95")


def written_on_lines() -> list[str]:
    lines = ["| draw | conversions | measured: geomean / above 1.05 | with the rule: geomean / above 1.05 | "
             "taken whole: n, geomean, above, below | partly |", "|---|---:|---|---|---|---:|"]
    taken, above, ruled_above = [], 0, 0
    for stem in WRITTEN_ON:
        s = score(rows_of(stem))
        taken += s["taken"]
        above += s["above"]
        ruled_above += s["ruled_above"]
        lines.append(f"| {stem} | {s['n']} | {s['geomean']:.3f} / {s['above']} | {s['ruled']:.3f} / {s['ruled_above']} | "
                     f"{_counts(s['taken'])} | {s['partly']} |")
    return lines + ["", f"* over the {len(WRITTEN_ON)} draws: above 1.05 {above} measured, {ruled_above} with the rule; "
                        f"taken whole: {_counts(taken)}"]


def timed_both_ways_lines() -> list[str]:
    before_stem, after_stem = TIMED_BOTH_WAYS
    before = {row["case"]: row for row in rows_of(before_stem)}
    after = {row["case"]: row for row in rows_of(after_stem)}
    lines = ["| conversion | before the rule | with the rule | what the rule does |", "|---|---:|---:|---|"]
    was, now = [], []
    for case, row in before.items():
        effect = what_the_rule_does(row)
        if effect == "none" or case not in after:
            continue
        was.append(worst_ratio(row, "ours"))
        now.append(worst_ratio(after[case], "ours"))
        lines.append(f"| {case} | {was[-1]:.3f} | {now[-1]:.3f} | {effect} |")
    whole = {stem: score(rows_of(stem)) for stem in TIMED_BOTH_WAYS}
    lines += ["", f"* the rows it changes: before {_counts(was)}; with the rule {_counts(now)}",
              *(f"* the whole draw, `{stem}`: geomean {s['geomean']:.3f}, above 1.05: {s['above']}"
                for stem, s in whole.items())]
    return lines


def report() -> list[str]:
    return (["# The 16-bit rule on held-out draws", "",
             "Where ldmatrix/stmatrix is in play for 16-bit elements (our pick or stock's tile search uses it) "
             "and the pick keeps Triton's rounds, the conversion goes to stock "
             "(`lowering/choosing/fitted_model.py`, `sixteen_bits_where_matrices_are_in_play`; sm_90, triton 3.6). "
             "Produced by `python benchmarks/studies/sixteen_bit_matrix_rule.py --out "
             "benchmarks/results/sixteen_bit_matrix_rule.md` (CPU; the docstring says how a row is scored).", "",
             "## The draws it was written on", ""] + written_on_lines()
            + ["", f"## A draw timed before and with it ({TIMED_BOTH_WAYS[0].replace('plan_fresh_', '').replace('_before', '')}, "
                   "H200, one GPU run)", ""] + timed_both_ways_lines())


def main(argv=None) -> int:
    return write_report(__doc__, report, argv)


if __name__ == "__main__":
    sys.exit(main())
