"""The report's data model: records -> kernels -> conversions, analysed.

Nothing here renders: ``tools.report.text`` derives the tables and sentences both renderers
show, ``tools.report.markdown`` and ``tools.report.html_pages`` write them, ``tools.report.run`` runs it all.

1. merge the records of every process (``pytest -n`` workers each write their own file) and
   keep one entry per distinct kernel (name, target, TTGIR), counting how often it compiled;
2. for each ``ttg.convert_layout``: where it is in the user's source, its layouts, how far the
   data moves, the plan ours would emit and its cost per warp (``tools.report.conversion_report``), and
   what ``ll-lower-conversions`` does with it: owns it, or leaves it to Triton and why
   (``passes.lower_conversions.plan_module``, measured choices included);
3. compile each kernel's TTGIR stock and with our lowering, and count the data-movement
   instructions of the final PTX / AMDGCN, for the whole kernel and per conversion
   (``tools.report.final_code``; ``--no-compare`` skips this);
4. with ``--measure``, the program's own launches timed stock and ours (``tools.report.launch_timing``).
"""

from __future__ import annotations

import hashlib
import linecache
import os
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Optional

from linear_layouts.tools.report.conversion_why import Why, explain, kernel_signature, no_result_locations, users_of
from linear_layouts.tools.report.final_code import CodeMix, ConversionCode
from linear_layouts.tools.report.launch_timing import MeasureResult
from linear_layouts.tools.report.loop_weights import LoopWeight, conversion_weights
from linear_layouts.tools.report.conversion_report import ConversionRow, counts_text, report_conversions
from linear_layouts.lowering.remark_words import in_words

DEFAULT_DIRECTORY = "ll-report"
DEFAULT_PICTURES = 3

@dataclass
class ConversionEntry:
    """One ``ttg.convert_layout`` of a kernel, explained."""

    number: int                       # 1, 2, ... in the kernel's text order
    row: ConversionRow                # types, scope, lowering, cost per warp (conversion_report)
    location: str                     # full "path:line:col" (or "loc(unknown)")
    source_line: str                  # the user's line of source, "" when not readable
    outcome: str                      # "ours: shuffle" / "left to Triton: reason"
    owned: bool
    remark: str                       # what ll-lower-conversions{remarks=true} would print
    cost: float = 0.0                 # the cost model's weight (MIO issue units per warp); 0 without a plan
    src_attribute: str = ""
    dst_attribute: str = ""
    src_layout: object = None         # LinearLayout (None when the layout could not be read)
    dst_layout: object = None
    bits: int = 0
    pictures: dict = field(default_factory=dict)   # "layouts" / "plan" -> file name under the report dir
    picture_notes: list = field(default_factory=list)
    weight: LoopWeight = field(default_factory=lambda: LoopWeight(1))   # runs per program instance
    why: Optional[Why] = None         # producer, consumers, reason, hint (tools.report.conversion_why)
    code: Optional[ConversionCode] = None   # stock's final code and ours for it (tools.report.final_code)
    rule: str = ""                    # the rule of the lowering choice that left it to Triton ("" if ours)

    def verdict(self) -> str:
        """``ours better`` / ``same`` / ``ours worse`` by the modelled cost of each final code;
        ``left to Triton by RULE (reason)``; "" when the final code was not compared.  Where our
        plan is priced below stock's final code and still left to Triton, the verdict says that
        the rule, not the price, decided (a plan at 9.7 beside stock's 24.8 reads otherwise as a
        contradiction)."""
        if not self.owned:
            reason = self.outcome.removeprefix("left to Triton: ")
            text = f"left to Triton by {self.rule or rule_of(reason)}"
            if self.code is not None and 0 < round(self.cost, 1) < round(self.code.stock_cost, 1):
                text += (f", not by the cost model's price (our plan {self.cost:.1f} against stock's "
                         f"{self.code.stock_cost:.1f})")
            return f"{text} ({reason})"
        if self.code is None:
            return ""
        return self.code.verdict(True)

    @property
    def weighted_cost(self) -> float:
        """The cost model's weight times how often the conversion runs (its loops' trip counts)."""
        return self.cost * self.weight.runs


@dataclass
class KernelEntry:
    """One distinct kernel of the program (name, target and TTGIR), with its conversions."""

    name: str
    target: str                       # "sm_90", "gfx942", or what the record says
    backend: str
    specialization: str
    num_warps: Optional[int]
    compiles: int                     # how many times the program compiled (or loaded) it
    ttgir: str
    slug: str
    conversions: list = field(default_factory=list)
    modes: Counter = field(default_factory=Counter)   # what its compiles ran with: stock/linear/legacy
    runs: set = field(default_factory=set)
    stock_counts: Optional[dict] = None
    ours_counts: Optional[dict] = None
    stock_mix: Optional[CodeMix] = None   # the whole kernel's final code, barriers and widths included
    ours_mix: Optional[CodeMix] = None
    compare_problem: str = ""
    measurements: list = field(default_factory=list)   # tools.report.launch_timing.Measurement of its launches
    problem: str = ""                 # why the kernel could not be analysed
    advice: list = field(default_factory=list)   # passes.advice.layout_advice.Finding: layouts worth changing
    advice_problem: str = ""          # why no advice could be given
    # a Gluon kernel whose automatic layouts linear_layouts.enable() resolved: how
    # (passes.gluon.resolution_record.Resolution; not resolved: why, and Triton's resolution used)
    auto_layouts: object = None

    @property
    def noops(self) -> int:
        return sum(1 for c in self.conversions if c.row.is_noop)

    @property
    def cost(self) -> float:
        return sum(c.cost for c in self.conversions)

    @property
    def weighted_cost(self) -> float:
        return sum(c.weighted_cost for c in self.conversions)

    @property
    def scratch_bytes(self) -> int:
        return max((c.row.scratch_bytes for c in self.conversions), default=0)

    def scopes_text(self) -> str:
        return _counter_text(Counter(c.row.scope for c in self.conversions))

    def lowering_text(self) -> str:
        return _counter_text(Counter(c.row.lowering for c in self.conversions if c.row.lowering != "-"))

    def ownership_text(self) -> str:
        if not self.conversions:
            return "-"
        owned = sum(1 for c in self.conversions if c.owned)
        left = [c for c in self.conversions if not c.owned]
        text = f"ours {owned} of {len(self.conversions)}"
        if left:
            reasons = Counter(c.outcome.removeprefix("left to Triton: ") for c in left)
            text += "; left to Triton: " + "; ".join(f"{reason} (x{n})" if n > 1 else reason
                                                     for reason, n in reasons.items())
        return text

    @property
    def stock_rejects(self) -> bool:
        """A Gluon kernel whose automatic layouts stock Triton's resolution rejects: it has no
        stock final code (compiling its recorded TTGIR stock would be stock's lowering of the
        layouts we chose, not what stock Triton does with the kernel)."""
        return bool(getattr(self.auto_layouts, "triton_error", ""))

    def verdict(self) -> str:
        """Ours vs stock in the final code's data-movement instructions (all kinds summed):
        ``ours 20 fewer``, ``same``, ``ours 2 more``; "" when not compared (or stock rejects it)."""
        if self.stock_counts is None or self.ours_counts is None or self.stock_rejects:
            return ""
        difference = sum(self.ours_counts.values()) - sum(self.stock_counts.values())
        if difference == 0:
            return "same"
        return f"ours {abs(difference)} {'fewer' if difference < 0 else 'more'}"

    def final_code_text(self, which: str) -> str:
        if which == "stock" and self.stock_rejects:
            return "- (stock Triton rejects the kernel)"
        counts = self.stock_counts if which == "stock" else self.ours_counts
        if counts is None:
            return self.compare_problem or "-"
        return counts_text(counts)


# The rules of the lowering choice that leave a conversion to Triton, each named by what its
# remark mentions (lowering/choosing/choice_order.py asks them in order).
RULES = (
    ("stock_bounds.py", "the instruction-count rule (where no GPU timing decides: ours only where it needs no more "
                        "of any costly instruction than stock's lowering needs at least)"),
    ("One-warp CTAs", "the one-warp rule (fitted to GPU timings)"),
    ("moves bytes with ldmatrix", "the bytes-through-matrices rule (fitted to GPU timings)"),
    ("16-bit elements where ldmatrix", "the 16-bit matrix rule (fitted to GPU timings)"),
    ("is a broadcast", "the broadcast-shuffle rule (fitted to GPU timings)"),
    ("One direction at a time", "the shared-memory rule (fitted to GPU timings)"),
    ("stores and loads shared memory as stock does", "the rule for twins of stock's code (fitted to GPU timings)"),
    ("choice_model.json", "the rule fitted to GPU timings"),
    ("register_file.py", "the register-file rule"),
    ("measured_choices.json", "a GPU measurement of this conversion"),
    ("forwards the values without an instruction", "the no-movement rule (stock moves nothing either)"),
    ("this run owns only", "the methods this run owns (option only)"),
    ("candidate_for", "option candidate_for"),
)


def rule_of(reason: str) -> str:
    """The name of the rule of the lowering choice that gave ``reason`` (its remark)."""
    return next((name for marker, name in RULES if marker in reason), "the lowering choice")


def count_text(n: int, noun: str) -> str:
    """``1 conversion``, ``3 conversions``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _counter_text(counter: Counter) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))) or "-"


# ----------------------------------------------------------------------------- records -> kernels

def target_name(record: dict) -> str:
    """The planner's name of a record's target (``lowering.target``'s table: cuda 90 -> ``sm_90``,
    hip gfx942 -> ``gfx942``); a target the table does not know: ``backend:arch`` as recorded."""
    from linear_layouts.lowering import UnknownTarget, target_named

    backend, arch = record.get("backend"), record.get("arch")
    try:
        return target_named(f"{backend}:{arch}").name
    except UnknownTarget:
        return f"{backend}:{arch}"


def _groups(records: list[dict]) -> list[list[dict]]:
    """The records of each distinct (name, target, TTGIR), in first-seen order."""
    seen: dict[tuple, list] = {}
    for record in records:
        text = record.get("ttgir") or ""
        key = (record.get("name"), record.get("backend"), str(record.get("arch")),
               hashlib.sha256(text.encode()).hexdigest())
        seen.setdefault(key, []).append(record)
    return list(seen.values())


def _slug(name: str, target: str, used: set) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{name}-{target}")[:80] or "kernel"
    slug, n = base, 1
    while slug in used:
        n += 1
        slug = f"{base}-{n}"
    used.add(slug)
    return slug


def source_line(location: str) -> str:
    """The line of source a ``path:line:col`` location points at ("" when unreadable)."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return ""
    return linecache.getline(parts[0], int(parts[1])).strip()


# ----------------------------------------------------------------------------- one kernel

def analyse_kernel(record: dict, compiles: int, slug: str) -> KernelEntry:
    """Explain every convert of one recorded kernel (no compiling, no pictures)."""
    from linear_layouts.lowering import UnknownTarget, plan_cost
    from linear_layouts.passes.framework import PassFailure
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.ir.layouts import value_layout
    from linear_layouts.passes.lower_conversions import lower_module

    target = target_name(record)
    kernel = KernelEntry(record.get("name") or "kernel", target, record.get("backend") or "?",
                         record.get("specialization") or "", record.get("num_warps"), compiles,
                         record.get("ttgir") or "", slug)
    if not kernel.ttgir:
        kernel.problem = "Triton kept no TTGIR for this kernel (TRITON_STORE_BINARY_ONLY?)"
        return kernel
    advise_kernel(kernel, target)
    if "ttg.convert_layout" not in kernel.ttgir:
        return kernel
    filename = f"<{kernel.name}>"
    try:
        rows = report_conversions(kernel.ttgir, target, kernel=kernel.name, filename=filename)
        module = parse_module(kernel.ttgir, filename)
    except (IRError, UnknownTarget) as error:
        kernel.problem = f"not analysed: {error}"
        return kernel
    users = users_of(module)
    located = no_result_locations(module, kernel.ttgir)
    names = kernel_signature(kernel.ttgir)
    for number, (row, op) in enumerate(zip(rows, module.ops_named("ttg.convert_layout")), start=1):
        entry = ConversionEntry(number, row, op.location, source_line(op.location), outcome="", owned=False,
                                remark="", cost=plan_cost(row.plan).weight if row.plan is not None else 0.0,
                                src_attribute=op.operands[0].tensor_type.encoding or "",
                                dst_attribute=op.results[0].tensor_type.encoding or "")
        try:
            entry.src_layout = value_layout(op.operands[0], op)
            entry.dst_layout = value_layout(op.results[0], op)
            element = op.results[0].tensor_type
            entry.bits = element.element.logical_bits
        except PassFailure:
            pass
        entry.why = explain(op, users, located, entry.dst_layout, entry.bits, names)
        kernel.conversions.append(entry)
    weights = conversion_weights(kernel.ttgir)
    if len(weights) == len(kernel.conversions):
        for entry, weight in zip(kernel.conversions, weights):
            entry.weight = weight
    # What ll-lower-conversions does with each convert, exactly as inside triton.compile: the
    # planner's pick (or a measured choice), the emitted island and its simulation.  This edits
    # the parsed module (not the recorded text); everything above was read from it first.
    try:
        outcomes = lower_module(module, target=target)
    except (PassFailure, IRError) as error:
        outcomes = []
        kernel.problem = f"ll-lower-conversions failed: {getattr(error, 'message', error)}"
    for entry, outcome in zip(kernel.conversions, outcomes):
        entry.owned = outcome.lowered
        # the reason in the user's words, as a remark says it; the rule named from its detail
        entry.outcome = f"ours: {outcome.method}" if outcome.lowered else \
            f"left to Triton: {in_words(outcome.reason_text)}"
        entry.rule = "" if outcome.lowered else rule_of(outcome.reason)
        entry.remark = outcome.remark()
    return kernel


def advise_kernel(kernel: KernelEntry, target: str) -> None:
    """The layout advice of ``passes.advice.layout_advice`` for the kernel, best modelled gain first."""
    from linear_layouts.lowering import UnknownTarget
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.framework import PassFailure
    from linear_layouts.passes.advice.layout_advice import advise
    try:
        findings = advise(kernel.ttgir, target, filename=f"<{kernel.name}>")
    except (IRError, UnknownTarget, PassFailure) as error:
        kernel.advice_problem = f"no advice: {getattr(error, 'message', error)}"
        return
    kernel.advice = sorted(findings, key=lambda f: -f.gain)


# ----------------------------------------------------------------------------- stock vs ours

def compare_final_code(kernel: KernelEntry, record: dict, workdir: str) -> None:
    """Compile the kernel's TTGIR with stock Triton and with our lowering and count the
    data-movement instructions of each final code, for the whole kernel and per conversion
    (``tools.report.final_code``).  Problems are recorded, never raised."""
    from linear_layouts.lowering import UnknownTarget, target_named
    from linear_layouts.lowering.choosing.measured_choices import conversion_key
    from linear_layouts.passes.drop_in import hook
    from linear_layouts.tools.report.final_code import compare_conversions

    try:
        target = target_named(kernel.target)
    except UnknownTarget:
        kernel.compare_problem = f"no final-code counts for target {kernel.target!r}"
        return
    keys = [conversion_key(c.src_layout, c.dst_layout, c.bits, target.name) if c.src_layout is not None
            and c.dst_layout is not None else None for c in kernel.conversions]
    previous = hook.active_config()
    try:
        stock, ours, codes = compare_conversions(kernel.ttgir, target.gpu_target(record.get("warp_size")), target,
                                                 keys, [c.owned for c in kernel.conversions], workdir, kernel.slug)
    except Exception as error:   # the Triton boundary: triton.compile raises what its passes raise
        # (RuntimeError, its CompilationError, ...); a kernel it cannot recompile from its TTGIR is
        # a note in the report, not the end of it
        lines = str(error).strip().splitlines()
        kernel.compare_problem = f"recompiling failed: {(lines[0] if lines else type(error).__name__)[:160]}"
        return
    finally:
        if previous is not None and hook.active_config() != previous:
            hook.enable(previous.mode, pipeline=previous.pipeline, remarks=previous.remarks)
    kernel.stock_counts = _kind_counts(stock, target.vendor)
    kernel.ours_counts = _kind_counts(ours, target.vendor)
    kernel.stock_mix, kernel.ours_mix = stock, ours
    for entry, code in zip(kernel.conversions, codes):
        entry.code = code


def _kind_counts(mix: CodeMix, vendor: str) -> dict:
    """The whole kernel's counts by ``conversion_report.FINAL_CODE_PATTERNS`` (barriers left out)."""
    from linear_layouts.tools.report.conversion_report import FINAL_CODE_PATTERNS
    return {name: mix.counts.get(name, 0) for name in FINAL_CODE_PATTERNS[vendor]}


# ----------------------------------------------------------------------------- the whole report

@dataclass
class ReportOptions:
    directory: str = DEFAULT_DIRECTORY
    format: str = "html"              # "html" or "md"
    compare: bool = True              # compile stock and ours for the final-code counts
    max_pictures: int = DEFAULT_PICTURES
    progress: bool = True
    append: bool = False              # keep the records of earlier runs in the directory
    run: Optional[str] = None         # this run's id (``start`` sets it)
    measure: bool = False             # --measure: time the program's launches stock and ours
    measured: Optional[MeasureResult] = None   # what --measure found (tools.report.launch_timing)


def attach_measurements(kernels: list, measured: Optional[MeasureResult]) -> None:
    """Give each kernel the measurements of the launches of its name."""
    if measured is None:
        return
    for k in kernels:
        k.measurements = [m for m in measured.measurements if m.name == k.name]


def build_kernels(records: list[dict], options: ReportOptions) -> list[KernelEntry]:
    used: set = set()
    distinct = _groups(records)
    kernels = []
    with tempfile.TemporaryDirectory(prefix="ll-report-") as workdir:
        for number, group in enumerate(distinct, start=1):
            record, compiles = group[0], len(group)
            if options.progress:
                print(f"linear-layouts report: analysing kernel {number}/{len(distinct)}: {record.get('name')}",
                      file=sys.stderr, flush=True)
            kernel = analyse_kernel(record, compiles, _slug(record.get("name") or "kernel",
                                                            target_name(record), used))
            kernel.modes = Counter(r.get("mode") or "stock" for r in group)
            kernel.runs = {r.get("run") for r in group}
            kernel.auto_layouts = auto_layouts_of(group)
            if kernel.auto_layouts is not None and kernel.auto_layouts.resolved:
                _chosen_by_our_resolution(kernel)
                from linear_layouts.passes.advice.layout_advice import without_resolved
                kernel.advice = without_resolved(kernel.advice, kernel.auto_layouts)
            if options.compare and kernel.ttgir and not kernel.problem:
                compare_final_code(kernel, record, workdir)
            kernels.append(kernel)
    return kernels


def _chosen_by_our_resolution(kernel: KernelEntry) -> None:
    """In a Gluon kernel whose automatic layouts ``ll-resolve-auto-layouts`` chose, a load's or
    store's layout was picked by our cost model, not by Triton's coalescing: say so."""
    for entry in kernel.conversions:
        if entry.why is not None and entry.why.kind in ("load", "store"):
            entry.why = replace(entry.why, reason=(
                f"a memory access: ll-resolve-auto-layouts chose the {entry.why.kind}'s layout by cost (Gluon's "
                "automatic layouts) and its value comes in another layout; the conversion is placed where it "
                "is cheapest"))


def auto_layouts_of(group: list[dict]):
    """The resolution of a kernel's automatic layouts its records carry (the hook's record,
    ``passes.drop_in.recorder``), one where Triton's resolution was priced first; None for a kernel
    without automatic layouts (or compiled without ``linear_layouts.enable()``)."""
    recorded = [r["auto_layouts"] for r in group if isinstance(r.get("auto_layouts"), dict)]
    if not recorded:
        return None
    from linear_layouts.passes.gluon.resolution_record import Resolution

    return Resolution.from_record(max(recorded, key=lambda record: bool(record.get("compared"))))


def worth_a_look(kernels: list[KernelEntry], count: int = 5) -> list[KernelEntry]:
    """The kernels with the costliest conversions first (the cost model's weight per warp times
    how often each conversion runs, ``loop_weights``; a kernel with conversions left to Triton
    counts as costly too: we cannot say what they cost)."""
    with_conversions = [k for k in kernels if k.conversions]
    return sorted(with_conversions, key=lambda k: (-k.weighted_cost, -sum(not c.owned for c in k.conversions),
                                                   k.name))[:count]


def costliest_conversions(kernels: list[KernelEntry], count: int = 10) -> list[tuple[KernelEntry, ConversionEntry]]:
    """The conversions of every kernel by loop-weighted cost, costliest first (no-ops left out)."""
    pairs = [(k, c) for k in kernels for c in k.conversions if c.weighted_cost > 0]
    return sorted(pairs, key=lambda kc: (-kc[1].weighted_cost, kc[0].name, kc[1].number))[:count]


MODE_TEXT = {"stock": "stock Triton", "linear": "linear_layouts (plugin on)",
             "legacy": "linear_layouts legacy mode (plugin on)"}


def write_atomically(path: str, text: str) -> None:
    """Readers (a browser, another process) never see a half-written file."""
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)

