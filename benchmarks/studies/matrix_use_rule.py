"""Two gates on shared-memory picks whose matrix instructions differ from stock's, scored on the
committed held-out draws (CPU only; the timings are the draws', nothing is run on a GPU).

On sm_90 with triton 3.6 every conversion of a held-out draw was timed twice in one run: stock
Triton's lowering and the plugin's default (``benchmarks/plan_choice.py --fresh``, the rows in
``benchmarks/results/plan_fresh_*.json.gz``).  A gate that sends a conversion to stock makes it
run at stock's time, so each gate can be scored on those rows after the fact: for every row the
default's choice of both directions of the round trip is made again with the gate, and a row
whose every island goes to stock counts at 1.0x (a row where the gate takes only one direction
keeps its measured time, and is counted as "partly").

* ``bytes``: ``fitted_model.bytes_through_matrices``, the shipped rule: an 8-bit pick with
  ``ldmatrix``/``stmatrix`` where stock's tile search finds no matrix pair;
* ``matrices where stock has none``: the byte rule at every element width;
* ``matrix use``: any shared-memory pick that uses matrix instructions where stock's search finds
  no pair, or none where it finds one (``stock_shared.stock_matrix_pairs``).  Not shipped: see
  the report's last paragraph.

    python benchmarks/studies/matrix_use_rule.py --out benchmarks/results/matrix_use_rule.md

(With ``LINEAR_LAYOUTS_STOCK_GATE=off`` in the environment the default keeps every pick, and
the scores say so: run it without.)
"""

from __future__ import annotations

import sys

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.stock_shared import stock_matrix_pairs
from linear_layouts.lowering.instructions import AccessKind
from linear_layouts.lowering.plan import Method, SharedAccess
from linear_layouts.lowering.planner import plan_conversion, with_fewer_rounds
from timed_rows import geomean, rows_of, rules_taken_out, worst_ratio, write_report

DRAWS = ("plan_fresh_2741_2857", "plan_fresh_3001_3109", "plan_fresh_4111_4219", "plan_fresh_5003_5113_hybrid",
         "plan_fresh_6007_6113_hybrid", "plan_fresh_7001_7109_rounds", "plan_fresh_8101_8209")
# Drawn after the gates were written (the last also times the round-trip case ``--replicated-round-trips``, left
# out here: it is no draw): scored apart, the held-out test of the gates.
HELD_OUT = ("plan_fresh_9001_9109",)
RELEASE = TritonConventions((3, 6))


def uses_matrices(plan) -> bool:
    return any(isinstance(op, SharedAccess) and op.form.is_matrix for op in plan.shared.ops)


def matrix_use_differs(plan) -> bool:
    """A shared-memory pick that uses matrix instructions where stock's search finds no matrix
    pair, or none where it finds one."""
    if plan.method is not Method.SHARED or plan.shared is None:
        return False
    pairs = stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target)
    return pairs is not None and uses_matrices(plan) != bool(pairs)


def matrices_where_stock_has_none(plan) -> bool:
    """The byte rule at every element width: a shared-memory pick with matrix instructions where
    stock's search finds no matrix pair."""
    if plan.method is not Method.SHARED or plan.shared is None:
        return False
    return uses_matrices(plan) and stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target) == []


def ldmatrix_after_plain_stores(plan) -> bool:
    """A 16-bit shared-memory pick that loads with ``ldmatrix`` after plain stores (no
    ``stmatrix``) where stock's search finds no matrix pair (written after the gates above, on
    their draws and 9001/9109; tried first on 9301/9409: ``LATER``)."""
    if plan.method is not Method.SHARED or plan.shared is None or plan.element_bits != 16:
        return False
    accesses = [op for op in plan.shared.ops if isinstance(op, SharedAccess)]
    loads = any(op.form.is_matrix and op.kind is AccessKind.LOAD for op in accesses)
    stores = any(op.form.is_matrix and op.kind is AccessKind.STORE for op in accesses)
    return loads and not stores and stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target) == []


GATES = {"bytes": lambda plan: fitted_model.bytes_through_matrices(plan),
         "matrices where stock has none": matrices_where_stock_has_none, "matrix use": matrix_use_differs}
# A later gate, not shipped: the draws it was written on, and the one it was tried on first.
LATER = ("ldmatrix after plain stores (16-bit)", ldmatrix_after_plain_stores, DRAWS + HELD_OUT,
         ("plan_fresh_9301_9409",))


def default_choice(src: str, dst: str, shape, bits: int):
    """(ours?, the plan) as the default decides it under triton 3.6 on sm_90, fewer rounds
    applied, without the shipped byte rule and the later 16-bit rule
    (``sixteen_bits_where_matrices_are_in_play``, scored by ``sixteen_bit_matrix_rule.py``) and
    one-direction rule (``shared_memory_in_tritons_rounds``):
    each gate is scored from the same starting point."""
    plan = plan_conversion(to_linear_layout(src, shape, conventions=RELEASE),
                           to_linear_layout(dst, shape, conventions=RELEASE), bits, "sm_90")
    if not plan:
        return False, None
    plan = with_fewer_rounds(plan)
    with rules_taken_out(fitted_model, "bytes_through_matrices", "sixteen_bits_where_matrices_are_in_play",
                         "shared_memory_in_tritons_rounds"):
        decided = fitted_model.decide(plan, "sm_90", "3.6.0")
    return decided is None or decided.plan is not None, plan


def score(rows, gate) -> dict:
    """The draw's geomean and count above 1.05 as measured and with ``gate`` applied."""
    measured, gated, taken, partly = [], [], [], 0
    for row in rows:
        mode = "ours_in_place" if "ours_in_place" in row["modes"] else "ours"
        ratio = worst_ratio(row, mode)
        if not ratio:
            continue
        measured.append(ratio)
        sides = [default_choice(a, b, row["shape"], row["bits"]) for a, b in ((row["src"], row["dst"]),
                                                                             (row["dst"], row["src"]))]
        hit = [ours and gate(plan) for ours, plan in sides]
        if not any(hit):
            gated.append(ratio)
        elif all(h or not ours for h, (ours, _) in zip(hit, sides)):
            gated.append(1.0)
            taken.append(ratio)
        else:
            partly += 1
            gated.append(ratio)
    return {"n": len(measured), "geomean": geomean(measured), "above": sum(x > 1.05 for x in measured),
            "gated": geomean(gated), "gated_above": sum(x > 1.05 for x in gated), "taken": len(taken),
            "taken_geomean": geomean(taken), "taken_above": sum(x > 1.05 for x in taken), "partly": partly,
            "taken_ratios": taken}


def draw_rows(stem: str) -> list:
    return [row for row in rows_of(stem) if not row["case"].startswith("replicated_round_trips/")]


def report(draws=DRAWS, held_out=HELD_OUT) -> list[str]:
    lines = ["# Gates on shared-memory picks whose matrix instructions differ from stock's", "",
             "Scored on the committed held-out draws (sm_90, triton 3.6; each row's stock and default timed in one "
             "run). Produced by `python benchmarks/studies/matrix_use_rule.py --out "
             "benchmarks/results/matrix_use_rule.md` (CPU; the docstring says how a gate is scored).", "",
             "| draw | gate | conversions | measured: geomean / above 1.05 | gated: geomean / above 1.05 | "
             "taken to stock: n, their geomean, above 1.05 | partly |",
             "|---|---|---:|---|---|---|---:|"]
    totals = {name: [0, 0, []] for name in GATES}
    for stem in draws + held_out:
        rows = draw_rows(stem)
        for name, gate in GATES.items():
            s = score(rows, gate)
            if stem in held_out:
                stem_text = f"{stem} (drawn after the gates)"
                lines.append(f"| {stem_text} | {name} | {s['n']} | {s['geomean']:.3f} / {s['above']} | {s['gated']:.3f} / "
                             f"{s['gated_above']} | {s['taken']}, {s['taken_geomean']:.3f}, {s['taken_above']} | "
                             f"{s['partly']} |")
                continue
            totals[name][0] += s["above"]
            totals[name][1] += s["gated_above"]
            totals[name][2] += s["taken_ratios"]
            lines.append(f"| {stem} | {name} | {s['n']} | {s['geomean']:.3f} / {s['above']} | {s['gated']:.3f} / "
                         f"{s['gated_above']} | {s['taken']}, {s['taken_geomean']:.3f}, {s['taken_above']} | {s['partly']} |")
    lines += [""] + [f"* {name}: above 1.05 over the {len(draws)} draws it was written on: {a} measured, {g} gated; {len(t)} conversions taken to "
                     f"stock, which had run {geomean(t):.3f}x stock in geomean, {sum(x > 1.05 for x in t)} above 1.05"
                     for name, (a, g, t) in totals.items()]
    return lines + later_gate_lines(*LATER)


def later_gate_lines(name: str, gate, written_on, tried_on) -> list[str]:
    """The later gate's scores: over the draws it was written on, and on the draw it was tried on
    before that draw's rows were looked at (whole round trips only count as taken)."""
    lines = ["", f"## A later gate: {name}", "", f"`{gate.__name__}`, not shipped.", ""]
    for label, stems in (("written on", written_on), ("tried first on", tried_on)):
        taken, partly = [], 0
        for stem in stems:
            s = score(draw_rows(stem), gate)
            taken += s["taken_ratios"]
            partly += s["partly"]
        lines.append(f"* {label} {len(stems)} draw(s): {len(taken)} round trips taken whole, geomean "
                     f"{geomean(taken):.3f}, above 1.05: {sum(x > 1.05 for x in taken)}, below 0.95: "
                     f"{sum(x < 0.95 for x in taken)}; {partly} taken in one direction only")
    return lines


def main(argv=None) -> int:
    return write_report(__doc__, report, argv)


if __name__ == "__main__":
    sys.exit(main())
