"""The register-file rule (``lowering/choosing/register_file.py``) scored on the committed GPU
runs (CPU only; the timings are the runs', nothing is run on a GPU).

A conversion whose two layouts hold more 32-bit values a thread than the target has registers
goes to stock.  Two H100 runs (triton 3.6, ``benchmarks/plan_choice.py``) time such conversions:

* ``plan_structured_5301_5409_5517``, before the rule: large-register conversions drawn as the
  compile-time fuzz draws them (``--structured``) and the round-trip case (``--replicated-round-trips``), with the
  plugin's default of then (``ours``: islands) and its rounds modes.  The rule was written after this run.
* ``plan_registers_6301_6407_structured_6101_6203``, after the rule, on seeds drawn for it: more
  structured conversions, and fresh conversions whose larger layout holds 65 to 255 registers
  (``--registers 64 255``), on both sides of the limit; ``ours`` is the default with the rule,
  ``pick`` the planner's pick ungated (the islands the rule gives up).

Each row is decided again here with the rule as shipped (``past_register_file``), so the report
shows what the rule takes and what those conversions ran as islands.  It also checks the rule on
the committed held-out draws of ordinary conversions (``plan_fresh_*``), where it must take
nothing but the round-trip case (a row some draws add) (their layouts hold at most 64 registers a thread), and groups the
conversions it takes by what ``ptxas -v`` says the islands' kernel spills against stock's (the
held-out run's kernels compiled again on a CPU, ``plan_choice.py ... --ptxas-usage --dry-run``).

    .venv-compat/bin/python benchmarks/plan_choice.py --fresh 6301 6407 --registers 64 255 --count 12 \
        --structured 6101 6203 --structured-count 8 --replicated-round-trips --ptxas-usage --dry-run --jobs 2 \
        --stem plan_registers_6301_6407_structured_6101_6203_ptxas --out benchmarks/results   # then gzip it
    python benchmarks/studies/register_file_rule.py --out benchmarks/results/register_file_rule.md
"""

from __future__ import annotations

import glob
import os
import sys

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.choosing.register_file import past_register_file, registers_held
from linear_layouts.lowering.target import target_named
from timed_rows import RESULTS, geomean, rows_of, worst_ratio, write_report

WRITTEN_ON = "plan_structured_5301_5409_5517"
HELD_OUT = "plan_registers_6301_6407_structured_6101_6203"
# The held-out run's kernels compiled again on a CPU with ``--ptxas-usage --dry-run`` (the same
# triton, 3.6, and the ptxas it ships): what ``ptxas -v`` says of each mode's chain kernel.
PTXAS = HELD_OUT + "_ptxas"
TARGET = target_named("sm_90")


def held(row) -> tuple:
    """The 32-bit registers a thread holds on each side, and whether the rule takes the row."""
    shape = tuple(row["shape"])
    src, dst = to_linear_layout(row["src"], shape), to_linear_layout(row["dst"], shape)
    return (registers_held(src, row["bits"]), registers_held(dst, row["bits"]),
            bool(past_register_file(src, dst, row["bits"], TARGET)))


def spread(ratios) -> str:
    if not ratios:
        return "none timed"
    return (f"{len(ratios)} timed, geomean {geomean(ratios):.3f}, {min(ratios):.3f} to {max(ratios):.3f}, "
            f"above 1.05: {sum(x > 1.05 for x in ratios)}, below 0.95: {sum(x < 0.95 for x in ratios)}")


def summary(stem: str, islands: str, rule: str = "") -> dict:
    """For one run: the rows the rule takes and those it leaves, with the ratios of ``islands``
    (the mode that timed islands there) and of ``rule`` (the default with the rule, if timed)."""
    taken, left = [], []
    for row in rows_of(stem):
        if worst_ratio(row, "stock_again") is None:
            continue       # stock did not run (a draw over the GPU's shared memory)
        a, b, past = held(row)
        (taken if past else left).append((row, a, b))
    ratio = lambda rows, mode: [x for x in (worst_ratio(r, mode) for r, _, _ in rows) if x]  # noqa: E731
    return {"taken": taken, "left": left, "islands_taken": ratio(taken, islands),
            "rule_taken": ratio(taken, rule) if rule else [], "left_default": ratio(left, rule or islands),
            "noise": ratio(taken + left, "stock_again")}


def spill_bytes() -> dict:
    """(case, mode) -> spill stores + loads, in bytes a thread, of the chain kernel."""
    out = {}
    for row in rows_of(PTXAS):
        for mode, kinds in row["modes"].items():
            usage = ((kinds or {}).get("chain") or {}).get("ptxas")
            if usage:
                out[(row["case"], mode)] = usage["spill_stores"] + usage["spill_loads"]
    return out


def by_spills(rows, islands: str) -> list:
    """Lines grouping the ``rows`` (taken by the rule) by whether the islands' kernel spills more
    than stock's, as much, or less, with the islands' time over stock's in each group."""
    spills = spill_bytes()
    groups = {"more": [], "as much": [], "less": []}
    for row, _, _ in rows:
        mine, stock = spills.get((row["case"], islands)), spills.get((row["case"], "stock"))
        ratio = worst_ratio(row, islands)
        if mine is None or stock is None or ratio is None:
            continue
        groups["more" if mine > stock else "less" if mine < stock else "as much"].append(ratio)
    return [f"* islands spilling {name} than stock's kernel: {spread(ratios)}" if name != "as much" else
            f"* islands spilling as much as stock's kernel: {spread(ratios)}" for name, ratios in groups.items()]


def draws_taken() -> list:
    """(draw, case) of every committed held-out draw row the rule takes."""
    out = []
    for path in sorted(glob.glob(os.path.join(RESULTS, "plan_fresh_*.json.gz"))):
        stem = os.path.basename(path)[:-len(".json.gz")]
        out += [(stem, row["case"]) for row in rows_of(stem) if held(row)[2]]
    return out


def report() -> list:
    before, after = summary(WRITTEN_ON, "ours"), summary(HELD_OUT, "pick", "ours")
    lines = ["# The register-file rule, scored on the committed runs", "",
             "Produced by `python benchmarks/studies/register_file_rule.py` (CPU; timings from the H100 runs named, "
             "triton 3.6; a ratio is the worse of the two timed contexts).", "",
             "A conversion whose two layouts hold more 32-bit values a thread than sm_90's 255 registers goes to "
             "stock (`lowering/choosing/register_file.py`).", "",
             f"## {WRITTEN_ON} (the run the rule was written after)", "",
             f"* taken by the rule: {len(before['taken'])}; their islands (the default of then) over stock: "
             f"{spread(before['islands_taken'])}",
             f"* left to the choice: {len(before['left'])}",
             f"* stock against itself: {spread(before['noise'])}", "",
             f"## {HELD_OUT} (seeds drawn after the rule)", "",
             f"* taken by the rule: {len(after['taken'])}; the ungated islands over stock: {spread(after['islands_taken'])}; "
             f"the default with the rule over stock: {spread(after['rule_taken'])}",
             f"* left to the choice (the two layouts within 255 registers): {len(after['left'])}; the default over stock: "
             f"{spread(after['left_default'])}",
             f"* stock against itself: {spread(after['noise'])}", "",
             "Bytes a thread spilled (`ptxas -v`, spill stores + loads of the timed chain kernel, the held-out run's "
             f"kernels compiled again on a CPU: `{PTXAS}.json.gz`), for the conversions the rule takes:", "",
             *by_spills(after["taken"], "pick"), "",
             "| run | conversion | registers (source + destination) | islands / stock | default / stock | spilled: islands / stock |",
             "|---|---|---:|---:|---:|---:|"]
    spills = spill_bytes()
    for stem, s, islands, rule in ((WRITTEN_ON, before, "ours", ""), (HELD_OUT, after, "pick", "ours")):
        for row, a, b in s["taken"]:
            x, y = worst_ratio(row, islands), worst_ratio(row, rule) if rule else None
            mine, stock = spills.get((row["case"], islands)), spills.get((row["case"], "stock"))
            spilled = f"{mine} / {stock}" if stem == HELD_OUT and mine is not None and stock is not None else ""
            lines.append(f"| {stem} | {row['case']} | {a} + {b} | {x:.3f} | {'' if y is None else f'{y:.3f}'} | {spilled} |")
    taken = [(stem, case) for stem, case in draws_taken() if not case.startswith("replicated_round_trips/")]
    lines += ["", "## The committed held-out draws of ordinary conversions", "",
              f"Rows the rule takes over every `plan_fresh_*` draw, the replicated round-trip case aside: {len(taken)} "
              f"({', '.join(sorted({case for _, case in taken})) or 'none'})."]
    return lines


def main(argv=None) -> int:
    return write_report(__doc__, report, argv)


if __name__ == "__main__":
    sys.exit(main())
