"""What both renderers of the report show, derived from the data model (``tools.report.model``):
the tables' rows and the summary's sentences, as plain text."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Optional

from linear_layouts.passes.gluon.layout_expression import gluon_layout_expression
from linear_layouts.tools.report import launch_timing
from linear_layouts.tools.report.launch_timing import ADVISED, NOISE_FLOOR, run_noise
from linear_layouts.tools.report.loop_weights import ASSUMED_TRIPS
from linear_layouts.tools.report.model import (MODE_TEXT, KernelEntry, ReportOptions,
                                               _counter_text, count_text)


def weights_line(kernels: list[KernelEntry]) -> str:
    """How the loop weights were counted, and where a trip count was assumed."""
    assumed = sum(1 for k in kernels for c in k.conversions if c.weight.assumed)
    text = ("Weighted cost: the cost per warp of one execution times how often the conversion runs per "
            "program instance (the trip counts of the scf.for loops around it, read where the bounds are "
            f"constants; a loop with other bounds counts as {ASSUMED_TRIPS} iterations, marked ?)")
    if assumed:
        text += f"; {count_text(assumed, 'conversion')} with an assumed trip count"
    return text + "."


KERNEL_HEADER = ["kernel", "target", "compiles", "conversions", "no-ops", "scopes", "lowering", "cost/warp",
                 "weighted", "scratch", "stock final code", "ours final code", "ours or Triton"]


def kernel_table_rows(kernels: list[KernelEntry]) -> list[list[str]]:
    """The index table: one row per kernel (``KERNEL_HEADER``)."""
    rows = []
    for k in kernels:
        if k.problem:
            rows.append([k.name, k.target, str(k.compiles), "-", "-", "-", "-", "-", "-", "-", "-", "-", k.problem])
            continue
        rows.append([k.name, k.target, str(k.compiles), str(len(k.conversions)), str(k.noops), k.scopes_text(),
                     k.lowering_text(), f"{k.cost:.1f}" if k.conversions else "-",
                     (f"{k.weighted_cost:.1f}" + ("?" if any(c.weight.assumed for c in k.conversions) else ""))
                     if k.conversions else "-",
                     f"{k.scratch_bytes} B" if k.scratch_bytes else "-",
                     k.final_code_text("stock"), k.final_code_text("ours"), k.ownership_text()])
    return rows


def run_lines(kernels: list[KernelEntry], options: "ReportOptions") -> list[str]:
    """What the program ran with, and which runs the report holds."""
    modes = Counter()
    for k in kernels:
        modes.update(k.modes)
    if kernels and set(modes) == {"ttgir"}:   # python -m linear_layouts report kernel.ttgir
        return [f"Read from a TTGIR file: {', '.join(k.specialization for k in kernels)} (no program ran)."]
    ran = ", ".join(f"{MODE_TEXT.get(mode, mode)} ({count_text(n, 'compile')})" for mode, n in modes.most_common())
    lines = [f"The program ran with: {ran or 'nothing compiled'}."]
    if options.append:
        runs = {run for k in kernels for run in k.runs}
        lines.append(f"Appended: the records of {count_text(len(runs), 'run')} in this directory (--append).")
    else:
        lines.append("This run only (earlier runs' records in this directory were removed; --append keeps them).")
    return lines


def summary_lines(kernels: list[KernelEntry]) -> list[str]:
    """Where the data movement is, in a few sentences."""
    conversions = [c for k in kernels for c in k.conversions]
    ours = Counter(c.row.lowering for c in conversions if c.owned and c.row.lowering != "-")
    planned_left = Counter(c.row.lowering for c in conversions if not c.owned and c.row.lowering != "-")
    scopes = Counter(c.row.scope for c in conversions)
    left = sum(1 for c in conversions if not c.owned)
    owned = len(conversions) - left
    lowered = (f"Lowered by us: {owned}" + (f" ({_counter_text(ours)})" if ours else "") + f"; left to Triton: {left}"
               + (f" (our verified plans for them, not used: {_counter_text(planned_left)})" if planned_left else "")
               + ".")
    lines = [f"{count_text(len(kernels), 'kernel')} ({count_text(sum(k.compiles for k in kernels), 'compile')}), "
             f"{sum(1 for k in kernels if k.conversions)} with layout conversions; "
             f"{count_text(len(conversions), 'conversion')}, {sum(1 for c in conversions if c.row.is_noop)} of them no-ops.",
             f"How far the data moves (scope): {_counter_text(scopes)}.",
             lowered]
    compared = [k for k in kernels if k.verdict()]
    if compared:
        fewer = [k for k in compared if k.verdict().endswith("fewer")]
        more = [k for k in compared if k.verdict().endswith("more")]
        same = len(compared) - len(fewer) - len(more)
        line = (f"Final code, ours vs stock (data-movement instructions of the whole kernel): fewer in "
                f"{count_text(len(fewer), 'kernel')}, the same in {same}, more in {len(more)}")
        if more:
            line += " (" + ", ".join(f"{k.name} on {k.target}: {k.verdict()}" for k in more) + ")"
        lines.append(line + ".")
    verdicts = verdict_counts(kernels)
    if any(verdicts[v] for v in ("ours better", "same", "ours worse")):
        lines.append(f"Per conversion, final code priced by the cost model: ours better in {verdicts['ours better']}, "
                     f"the same in {verdicts['same']}, worse in {verdicts['ours worse']}; "
                     f"left to Triton {verdicts['left to Triton']}.")
    with_scratch = [k for k in kernels if k.scratch_bytes]
    if with_scratch:
        largest = max(with_scratch, key=lambda k: k.scratch_bytes)
        lines.append(f"Scratch (shared memory) for conversions: in {count_text(len(with_scratch), 'kernel')}, "
                     f"the most {largest.scratch_bytes} B ({largest.name} on {largest.target}).")
    return lines


ADVICE_HEADER = ["kernel", "location", "kind", "finding", "write instead", "modelled gain"]
ADVICE_NOTE = ("Each layout priced by the cost model of ll-assign-layouts (loop-weighted; modelled, not measured): "
               "global accesses against the coalesced layout their pointers allow, conversions in loops that a "
               "choice outside or upstream removes, registers holding copies.")


def advice_rows(kernels: list[KernelEntry]) -> list[list[str]]:
    """One row per finding of every kernel (``KernelEntry.advice``), best modelled gain first."""
    found = sorted(((f, k) for k in kernels for f in k.advice), key=lambda pair: -pair[0].gain)
    return [[k.name, f.location, f.kind, f.finding, f.suggestion, f"{f.gain:.2f}x" if f.gain > 1 else "-"]
            for f, k in found]


AUTO_LAYOUTS_HEADER = ["kernel", "group", "ops", "op", "location", "layout", "why"]
AUTO_LAYOUTS_NOTE = ("Gluon kernels whose automatic layouts (gl.AutoLayout(), gl.CoalescedLayout()) "
                     "linear_layouts.enable() resolved by the cost model (ll-resolve-auto-layouts): per group of "
                     "values tied together, the layout the named op got (a Gluon expression where one exists) and "
                     "why; per kernel, the modelled cost (loop-weighted) with ours against Triton's own resolution, "
                     "or Triton's error where it rejects the kernel.")
# A kernel compiled without the report (the resolution priced neither its own module nor Triton's:
# each costs a print or a subprocess) and then served from Triton's cache.
NOT_PRICED = ("not priced (compiled without the report, then served from Triton's cache; "
              "TRITON_ALWAYS_COMPILE=1 compiles it again)")


def auto_layout_kernels(kernels: list[KernelEntry]) -> list[KernelEntry]:
    """The kernels whose automatic layouts ``linear_layouts.enable()`` resolved (or tried to)."""
    return [k for k in kernels if k.auto_layouts is not None]


def auto_layout_summary(kernels: list[KernelEntry]) -> str:
    """The section's first sentence: how many kernels, and how Triton's resolution compares."""
    found = [k.auto_layouts for k in auto_layout_kernels(kernels)]
    resolved = [r for r in found if r.resolved]
    text = (f"Automatic layouts resolved by ours in {count_text(len(resolved), 'kernel')} "
            f"({count_text(sum(len(r.groups) for r in resolved), 'group')})")
    if len(resolved) < len(found):
        text += f"; not resolved by ours in {len(found) - len(resolved)} (compiled with Triton's own resolution)"
    text += f"; Triton's own resolution rejects {sum(1 for r in resolved if r.triton_error)}"
    verdicts = Counter(_versus_verdict(r) for r in resolved if r.cost_triton is not None)
    if verdicts:
        text += (f"; where it resolves, ours is modelled cheaper in {verdicts['ours cheaper']}, the same in "
                 f"{verdicts['the same']}, costlier in {verdicts['ours costlier']}")
    unpriced = sum(1 for r in resolved if r.cost_triton is None and not r.triton_error)
    if unpriced:
        text += f"; not priced in {unpriced}"
    return text + "."


def auto_layout_line(kernel: KernelEntry) -> str:
    """One kernel's resolution in a sentence: groups, conversions added, ours vs Triton's."""
    r = kernel.auto_layouts
    head = f"{kernel.name} on {kernel.target}: "
    if not r.resolved:
        return head + f"not resolved by ours ({r.reason}); compiled with Triton's own resolution"
    recomputed = f" (index arithmetic recomputed for {r.recomputed} more)" if r.recomputed else ""
    text = (head + f"{count_text(len(r.groups), 'group')} of automatic values; conversions added: "
            f"{r.conversions}{recomputed}; modelled cost (loop-weighted) ")
    if r.cost_ours is None:
        return text + NOT_PRICED
    text += f"ours {r.cost_ours:.1f}, "
    if r.cost_triton is not None:
        verdict = _versus_verdict(r)
        if verdict != "the same":
            ratio = max(r.cost_ours, r.cost_triton) / max(min(r.cost_ours, r.cost_triton), 1e-9)
            verdict = f"{verdict}, {ratio:.2f}x"
        return text + f"with Triton's resolution {r.cost_triton:.1f} ({verdict})"
    if r.triton_error:
        return text + f"Triton's resolution rejects it: {r.triton_error}"
    return text + "Triton's resolution " + NOT_PRICED


def _versus_verdict(r) -> str:
    """``ours cheaper`` / ``the same`` / ``ours costlier``: the modelled costs to one decimal."""
    ours, triton = round(r.cost_ours, 1), round(r.cost_triton, 1)
    return "the same" if ours == triton else "ours cheaper" if ours < triton else "ours costlier"


def auto_layout_rows(kernels: list[KernelEntry]) -> list[list[str]]:
    """One row per group of every resolved kernel (``AUTO_LAYOUTS_HEADER``), then one per load
    or store of the group that got a layout of its own (ops ``-``)."""
    rows = []
    for k in auto_layout_kernels(kernels):
        if not k.auto_layouts.resolved:
            continue
        for number, g in enumerate(k.auto_layouts.groups, start=1):
            rows.append([k.name, str(number), str(g.ops), g.op, g.location, g.gluon or g.layout, g.why])
            rows += [[k.name, str(number), "-", op, location, gluon_layout_expression(layout) or layout, why]
                     for op, location, layout, why in g.others]
    return rows


def conversion_table_rows(kernel: KernelEntry) -> list[list[str]]:
    header = []
    for c in kernel.conversions:
        conflicts = "-" if c.row.plan is None or c.row.plan.shared is None else str(c.row.bank_conflicts)
        header.append([f"#{c.number}", c.row.location, c.row.types, c.row.scope, c.row.lowering,
                       c.row.instructions, conflicts, f"{c.row.scratch_bytes} B" if c.row.scratch_bytes else "-",
                       f"{c.cost:.1f}", c.weight.text(), f"{c.weighted_cost:.1f}", c.outcome])
    return header


CONVERSION_HEADER = ["#", "location", "types", "scope", "lowering", "instructions per warp", "conflicts",
                     "scratch", "cost/warp", "runs", "weighted", "ours or Triton"]



STOCK_VS_OURS_HEADER = ["#", "location", "stock final code", "ours final code", "modelled stock", "modelled ours",
                        "verdict"]


def stock_vs_ours_rows(kernel: KernelEntry) -> list[list[str]]:
    """Per conversion: stock Triton's final code and ours (data-movement instructions per warp,
    ``tools.report.final_code``), each priced by the cost model, and the verdict; [] when not compared."""
    rows = []
    for c in kernel.conversions:
        if c.code is None:
            continue
        ours = c.code.ours.text() + (f" (measured with {c.code.shared_with - 1} identical)"
                                     if c.code.shared_with > 1 else "")
        rows.append([f"#{c.number}", c.row.location, c.code.stock.text(), ours, f"{c.code.stock_cost:.1f}",
                     f"{c.code.ours_cost:.1f}", c.verdict()])
    return rows


def verdict_counts(kernels: list[KernelEntry]) -> Counter:
    """How many conversions ours does better, the same, worse, or leaves to Triton."""
    counts: Counter = Counter()
    for k in kernels:
        for c in k.conversions:
            verdict = c.verdict()
            if verdict:
                counts["left to Triton" if verdict.startswith("left") else verdict] += 1
    return counts


STOCK_VS_OURS_NOTE = ("Stock: the instructions Triton's lowering of the conversion left in the final code (found by "
                      "the conversion's own line marker in the debug line info); ours: stock's plus the difference "
                      "between the kernel compiled with our lowering and with this conversion left to Triton (so "
                      "a barrier two islands share counts for each). Modelled: that code priced by the cost model "
                      "(issue and wavefronts of each shared access, shuffles, selects and byte permutes, barriers). Verdict: by the modelled "
                      "cost.")


# ----------------------------------------------------------------------------- index: chart and source listing

def kernel_chart_rows(kernels: list[KernelEntry]) -> list[tuple[str, float, float]]:
    """Per compared kernel: (``name on target``, stock's final code, ours), the data-movement
    instructions of the whole kernel priced by the cost model (``tools.report.final_code.modelled_cost``).
    A Gluon kernel stock Triton rejects (``KernelEntry.stock_rejects``) has no bar."""
    from linear_layouts.lowering import UnknownTarget, target_named
    from linear_layouts.tools.report.final_code import modelled_cost

    rows = []
    for k in kernels:
        if k.stock_mix is None or k.ours_mix is None or k.stock_rejects:
            continue
        try:
            target = target_named(k.target)
        except UnknownTarget:
            continue
        rows.append((f"{k.name} on {k.target}", modelled_cost(k.stock_mix, target), modelled_cost(k.ours_mix, target)))
    return rows


SOURCE_CONTEXT = 3          # lines shown around each conversion's line
WHOLE_FILE_LINES = 0        # files up to this long are listed whole (0: only the lines around conversions)


def source_listing(kernels: list[KernelEntry], whole_file_lines: int = WHOLE_FILE_LINES
                   ) -> list[tuple[str, list[tuple[int, str, list, float]]]]:
    """Per source file with conversions: its lines (all of a short file, else the conversions'
    lines with ``SOURCE_CONTEXT`` lines around them; a gap is a line number of 0) as
    (line number, text, [(kernel, conversion), ...] on that line, share), where ``share`` is the
    line's loop-weighted cost over the costliest line's (0 to 1)."""
    import linecache

    by_file: dict = {}
    for k in kernels:
        for c in k.conversions:
            parts = c.location.rsplit(":", 2)
            if len(parts) != 3 or not parts[1].isdigit():
                continue
            by_file.setdefault(parts[0], {}).setdefault(int(parts[1]), []).append((k, c))
    listing = []
    for path in sorted(by_file):
        lines = linecache.getlines(path)
        if not lines:
            continue
        marked = by_file[path]
        weight = {n: sum(c.weighted_cost for _, c in marked[n]) for n in marked}
        top = max(weight.values(), default=0.0) or 1.0
        if len(lines) <= whole_file_lines:
            shown = list(range(1, len(lines) + 1))
        else:
            shown = sorted({n for m in marked for n in range(max(1, m - SOURCE_CONTEXT),
                                                               min(len(lines), m + SOURCE_CONTEXT) + 1)})
        rows, previous = [], 0
        for n in shown:
            if previous and n != previous + 1:
                rows.append((0, "", [], 0.0))
            rows.append((n, lines[n - 1].rstrip("\n"), marked.get(n, []), weight.get(n, 0.0) / top))
            previous = n
        listing.append((path, rows))
    return listing


# ----------------------------------------------------------------------------- --measure

MEASURE_HEADER = ["kernel", "arguments (first launch)", "stock ms", "ours ms", "stock spread", "stock / ours",
                  "verdict"]


def noise_threshold(measured) -> float:
    """The run's noise (the largest spread of one launch's stock timings), at least
    ``NOISE_FLOOR`` (``launch_timing.noise_threshold``)."""
    return launch_timing.noise_threshold(measured.measurements)


def measured_verdict(ratio: Optional[float], threshold: float) -> str:
    """"faster" / "slower" beyond the noise, "within noise", or "" when not timed."""
    if ratio is None:
        return ""
    if ratio > 1 + threshold:
        return "faster"
    if ratio < 1 / (1 + threshold):
        return "slower"
    return "within noise"


def timed_launches(options: ReportOptions) -> list[tuple[object, float]]:
    """Each launch ``report --measure`` timed, with the run's noise threshold (the same for all);
    [] when nothing was timed.  The rows of the three tables below are built over these."""
    measured = options.measured
    if measured is None:
        return []
    threshold = noise_threshold(measured)
    return [(m, threshold) for m in measured.measurements]


def _ms(value) -> str:
    """A time in milliseconds as the tables print it, "-" where there is none."""
    return f"{value:.4f}" if value else "-"


SAME_BINARY = "same binary"


def pair_verdict(m, a: str, b: str, ratio: Optional[float], threshold: float) -> str:
    """``measured_verdict`` of modes ``a`` vs ``b`` of one launch, or "same binary" where both
    compiled it to the same final code (then any difference in time is the run's noise)."""
    if m.same_binary(a, b):
        return SAME_BINARY
    return measured_verdict(ratio, threshold)


def measure_rows(options: ReportOptions) -> list[list[str]]:
    """One row per timed launch (``report --measure``); [] when nothing was timed.  Where stock
    and ours compiled the launch to the same code, its ratio is "same binary"."""
    rows = []
    for m, threshold in timed_launches(options):
        ratio = m.ratio
        same = m.same_binary("stock", "ours")
        rows.append([m.name, m.signature, _ms(m.stock_ms), _ms(m.ours_ms),
                     f"{100 * m.noise:.1f}%" if m.noise is not None else "-",
                     (SAME_BINARY if same else f"{ratio:.3f}" if ratio is not None else "-")
                     + (f" ({m.problem})" if m.problem else ""),
                     pair_verdict(m, "stock", "ours", ratio, threshold)])
    return rows


ADVICE_MEASURE_HEADER = ["kernel", "arguments (first launch)", "ours ms", "advised ms", "measured gain",
                         "modelled gain", "verdict"]
ADVICE_MEASURE_NOTE = ("Gluon kernels compiled with their layout advice applied (linear_layouts.enable("
                       "apply_advice=True), ll-apply-advice): all of a kernel's findings at once, so the gain is "
                       "the kernel's, not one finding's. Measured gain: ours as written / ours advised (above 1: "
                       "the advice made it faster), timed in the same rounds as stock and ours; modelled gain: the "
                       "cost model's loop-weighted cost of the kernel's TTGIR as written over advised. \"same "
                       "binary\": the advice left the final code as it was (nothing to measure).")


def advice_measure_rows(options: ReportOptions) -> list[list[str]]:
    """One row per timed Gluon launch: ours as written, ours with the advice applied, the
    measured and the modelled gain and the verdict; [] when no Gluon kernel was timed advised.
    Where the advised code is that of another candidate its time is that one's (timed once)."""
    rows = []
    for m, threshold in timed_launches(options):
        if m.candidate(ADVISED) is None:
            continue
        same = m.same_binary("ours", ADVISED)
        ratio = m.advice_ratio
        gain = SAME_BINARY if same else f"{ratio:.3f}" if ratio is not None else "-"
        modelled = "1.00x" if same else f"{m.modelled_gain:.2f}x" if m.modelled_gain is not None else "-"
        verdict = pair_verdict(m, "ours", ADVISED, ratio, threshold)
        rows.append([m.name, m.signature, _ms(m.ours_ms),
                     _ms(m.advised_ms), gain, modelled,
                     verdict + (f" (advised: {m.advised_problem})" if m.advised_problem else "")])
    return rows


CHOICE_HEADER = ["kernel", "arguments (first launch)", "write", "as written ms", "its ms", "measured gain",
                 "modelled gain", "candidates"]
CHOICE_NOTE = ("Per Gluon launch, the kernel as written (ours) against its candidates, timed in the same rounds as "
               "stock and ours: each of its best findings alone (at most 3, by modelled whole-kernel gain; "
               "enable(apply_advice=True, advice_findings=KEY)) and every finding at once (enable(apply_advice=True)). "
               "The fastest wins where the kernel as written over it is beyond the run's noise; otherwise the kernel "
               "as written (ties go to it). Measured gain: as written / the winner; modelled gain: the cost model's, "
               "the kernel as written over the winner. A candidate compiled to the same code as one before it is "
               "timed once (\"same code as\").")


def candidate_text(m, c, threshold: float) -> str:
    """One candidate of a launch in a few words: its key (or "advised") and its measured gain and
    verdict, or why it has none."""
    name = c.mode
    if c.problem:
        return f"{name}: failed ({c.problem})"
    if c.same_code_as:
        return f"{name}: same code as {'written' if c.same_code_as == 'ours' else c.same_code_as}"
    if not c.ms or not m.ours_ms:
        return f"{name}: not timed"
    ratio = m.ours_ms / c.ms
    return f"{name}: {ratio:.3f} ({measured_verdict(ratio, threshold)})"


def choice_rows(options: ReportOptions) -> list[list[str]]:
    """One row per Gluon launch timed with candidates (``CHOICE_HEADER``): what to write (the
    winner's change, or "as written"), its time against the kernel as written, its modelled gain
    and every candidate's result; [] when no launch had candidates."""
    rows = []
    for m, threshold in timed_launches(options):
        if not m.candidates:
            continue
        winner = m.winner(threshold)
        candidates = "; ".join(candidate_text(m, c, threshold) for c in m.candidates)
        if winner is None:
            rows.append([m.name, m.signature, "as written", _ms(m.ours_ms), "-", "-", "-",
                         candidates])
            continue
        modelled = f"{winner.modelled_gain:.2f}x" if winner.modelled_gain is not None else "-"
        rows.append([m.name, m.signature, winner.change, f"{m.ours_ms:.4f}", f"{winner.ms:.4f}",
                     f"{m.ours_ms / winner.ms:.3f}", modelled, candidates])
    return rows


def _choice_line(measured) -> list[str]:
    """The choice among candidates, in a sentence ([] when no launch had candidates)."""
    chosen = [m for m in measured.measurements if m.candidates]
    if not chosen:
        return []
    threshold = noise_threshold(measured)
    winners = [(m, m.winner(threshold)) for m in chosen]
    changed = [(m, w) for m, w in winners if w is not None]
    candidates = [c for m in chosen for c in m.candidates]
    same = sum(1 for c in candidates if c.same_code_as)
    failed = sum(1 for c in candidates if c.problem)
    launches = f"{len(chosen)} Gluon launch{'' if len(chosen) == 1 else 'es'}"
    line = (f"--measure, the choice: of {launches}, {count_text(len(candidates), 'candidate')} (findings alone and "
            f"all at once), {same} the same code as one before it (timed once), {failed} failed to compile; a change "
            f"wins beyond the noise in {len(changed)}, the kernel as written in {len(chosen) - len(changed)}")
    if changed:
        line += " (" + "; ".join(f"{m.name}: {w.mode}, measured {m.ours_ms / w.ms:.3f}" for m, w in changed) + ")"
    return [line + "."]


def measure_lines(options: ReportOptions) -> list[str]:
    """What --measure did, in a sentence or two ([] without --measure)."""
    measured = options.measured
    if not options.measure:
        return []
    if measured is None or measured.note:
        return [f"--measure: nothing timed: {measured.note if measured else 'no launches recorded'}."]
    timed = [m for m in measured.measurements if m.ratio is not None]
    if not measured.measurements:
        return ["--measure: the program launched no kernel (nothing to time)."]
    launches = len(measured.measurements)
    rounds = max(len(m.stock_runs) for m in measured.measurements)
    line = (f"--measure: {launches} launch{'' if launches == 1 else 'es'} of the program timed with its own "
            f"arguments (inputs cloned), stock Triton and ours alternating, {rounds} rounds each "
            f"(triton.testing.do_bench; medians)")
    if timed:
        threshold = noise_threshold(measured)
        verdicts = Counter(pair_verdict(m, "stock", "ours", m.ratio, threshold) for m in timed)
        same = f", the same binary in {verdicts[SAME_BINARY]}" if verdicts[SAME_BINARY] else ""
        line += (f"; the run's noise (one launch's stock timings spread by up to "
                 f"{100 * run_noise(measured.measurements):.1f}%, counted as at least {NOISE_FLOOR:.0%}): ours "
                 f"faster beyond it in {verdicts['faster']} of {len(timed)}, slower beyond it in {verdicts['slower']}, "
                 f"within it in {verdicts['within noise']}{same}; geometric mean stock / ours "
                 f"{statistics.geometric_mean(m.ratio for m in timed):.3f}")
    return [line + "."] + _advice_measure_line(measured) + _choice_line(measured)


def _advice_measure_line(measured) -> list[str]:
    """The advice applied, in a sentence ([] when no Gluon kernel was timed advised)."""
    tried = [m for m in measured.measurements if m.candidate(ADVISED) is not None]
    if not tried:
        return []
    threshold = noise_threshold(measured)
    same = [m for m in tried if m.same_binary("ours", "advised")]
    changed = [m for m in tried if m not in same and m.advice_ratio is not None]
    failed = [m for m in tried if m.advised_problem]
    launches = f"{len(tried)} Gluon launch{'' if len(tried) == 1 else 'es'}"
    line = (f"--measure, the advice applied: {launches} also timed with every finding of its kernel applied at "
            f"once (enable(apply_advice=True)); the same binary as written in {len(same)}")
    if changed:
        verdicts = Counter(measured_verdict(m.advice_ratio, threshold) for m in changed)
        modelled = [m.modelled_gain for m in changed if m.modelled_gain]
        line += (f"; of the {len(changed)} it changed, faster beyond the noise in {verdicts['faster']}, slower in "
                 f"{verdicts['slower']}, within it in {verdicts['within noise']}; measured gain (ours / advised) "
                 f"geomean {statistics.geometric_mean(m.advice_ratio for m in changed):.3f}")
        if modelled:
            line += f", modelled {statistics.geometric_mean(modelled):.2f}x"
    if failed:
        line += f"; not timed advised: {', '.join(f'{m.name} ({m.advised_problem})' for m in failed)}"
    return [line + "."]
