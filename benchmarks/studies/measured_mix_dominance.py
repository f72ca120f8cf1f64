"""Where our island needs no fewer CTA barriers and no fewer shared-memory instructions than
stock's own code, as measured: what a rule that knew stock's code exactly would take (CPU only;
the instruction counts and timings are the committed draws', nothing is compiled or run).

Every row of a held-out draw (``benchmarks/plan_choice.py --fresh``, sm_90, triton 3.6) records
the instruction mix of the timed chain kernel twice: stock's lowering and the plugin's default
(``chain_mix``: shuffles, ``ld.shared``/``st.shared``, ``ldmatrix``/``stmatrix``, ``bar.sync``,
read off the PTX).  Where the two differ, this study sorts the row by how ours compares:

* ``dominated``: no shuffle on either side, at least as many barriers and at least as many
  shared-memory instructions as stock's (some kind more, or the same counts in another mix);
* ``fewer barriers``: ours waits at fewer barriers;
* ``fewer accesses``: the same barriers, fewer shared-memory instructions;
* ``shuffles``: either side shuffles.

and scores, draw by draw, a gate that would send every ``dominated`` row to stock (its ratio then
1.0).  The plugin cannot apply that gate today: it predicts stock's code exactly only where no
``stmatrix``/``ldmatrix`` pair fits (``lowering/choosing/stock_shared.py``), and most dominated
rows are conversions stock moves with a matrix pair (Triton's pick among the pairs that fit, by
bank conflicts, and its rounds: not modelled).  The report is the bound such a model would reach.

    python benchmarks/studies/measured_mix_dominance.py --out benchmarks/results/measured_mix_dominance.md
"""

from __future__ import annotations

import sys

from timed_rows import geomean, rows_of, worst_ratio, write_report

# The held-out draws it reads (every committed one when it was written; a draw added later is
# added here, and the numbers the docs quote move with it).
DRAWS = ("plan_fresh_101", "plan_fresh_202", "plan_fresh_505_606", "plan_fresh_2741_2857", "plan_fresh_3001_3109",
         "plan_fresh_4111_4219", "plan_fresh_5003_5113_hybrid", "plan_fresh_6007_6113_hybrid",
         "plan_fresh_7001_7109_rounds", "plan_fresh_8101_8209", "plan_fresh_9001_9109", "plan_fresh_9301_9409")
KINDS = ("dominated", "fewer barriers", "fewer accesses", "shuffles")


def accesses(mix: dict) -> int:
    return sum(mix.get(k, 0) for k in ("ld_shared", "st_shared", "ldmatrix", "stmatrix"))


def kind_of(ours: dict, stock: dict) -> str:
    """How our chain's mix compares with stock's (they differ); see the module docstring."""
    if ours.get("shfl") or stock.get("shfl"):
        return "shuffles"
    if ours.get("bar", 0) < stock.get("bar", 0):
        return "fewer barriers"
    if accesses(ours) < accesses(stock):
        return "fewer accesses"
    return "dominated"


def classified(rows) -> list:
    """(ratio, kind or None where the mixes agree, stock uses matrices) for every timed row."""
    out = []
    for row in rows:
        mode = "ours_in_place" if "ours_in_place" in row["modes"] else "ours"
        ratio = worst_ratio(row, mode)
        stock, ours = (row["modes"]["stock"].get("chain_mix") or {},
                       (row["modes"].get(mode) or {}).get("chain_mix") or {})
        if ratio is None or not stock or not ours:
            continue
        matrices = bool(stock.get("ldmatrix") or stock.get("stmatrix"))
        out.append((ratio, None if ours == stock else kind_of(ours, stock), matrices))
    return out


def report() -> list:
    lines = ["# Our island against stock's code as measured: the rows a dominance rule could take", "",
             "Produced by `python benchmarks/studies/measured_mix_dominance.py` (CPU; the committed held-out draws, "
             "H100, triton 3.6; a ratio is ours over stock in the worse of the two contexts).", "",
             "| draw | conversions | geomean / above 1.05 | dominated: n, geomean, above 1.05, stock with a matrix pair "
             "| with them at stock: geomean / above 1.05 |",
             "|---|---:|---|---|---|"]
    totals = {kind: [] for kind in KINDS}
    matrices = 0
    for stem in DRAWS:
        rows = classified(rows_of(stem))
        for ratio, kind, with_pair in rows:
            if kind:
                totals[kind].append(ratio)
                matrices += kind == "dominated" and with_pair
        taken = [(r, m) for r, k, m in rows if k == "dominated"]
        gated = [1.0 if k == "dominated" else r for r, k, _ in rows]
        ratios = [r for r, _, _ in rows]
        lines.append(f"| {stem} | {len(rows)} | {geomean(ratios):.3f} / "
                     f"{sum(x > 1.05 for x in ratios)} | {len(taken)}, {geomean([r for r, _ in taken]):.3f}, "
                     f"{sum(r > 1.05 for r, _ in taken)}, {sum(m for _, m in taken)} | {geomean(gated):.3f} / "
                     f"{sum(x > 1.05 for x in gated)} |")
    lines += ["", "Over every draw, the rows whose mix differs from stock's:", ""]
    lines += [f"* {kind}: {len(xs)} rows, geomean {geomean(xs):.3f}, above 1.05: {sum(x > 1.05 for x in xs)}, "
              f"below 0.95: {sum(x < 0.95 for x in xs)}" for kind, xs in totals.items()]
    lines += ["", f"Of the {len(totals['dominated'])} dominated rows, {matrices} are conversions stock moves with "
                  f"`stmatrix`/`ldmatrix` (its code not predicted by the plugin)."]
    return lines


def main(argv=None) -> int:
    return write_report(__doc__, report, argv)


if __name__ == "__main__":
    sys.exit(main())
