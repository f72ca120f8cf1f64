"""``python -m linear_layouts report PROG.py``: what layout conversions a user's own program has.

The recorder (``passes.recorder``) stores every kernel the program compiled.  This module
turns those records into an explanation, kernel by kernel:

1. merge the records of every process (``pytest -n`` workers each write their own file) and
   keep one entry per distinct kernel (name, target, TTGIR), counting how often it compiled;
2. for each ``ttg.convert_layout``: where it is in the user's source, its layouts, how far the
   data moves, the plan ours would emit and its cost per warp (``tools.conversion_report``), and
   what ``ll-lower-conversions`` does with it: owns it, or leaves it to Triton and why
   (``passes.lower_conversions.plan_module``, measured choices included);
3. compile each kernel's TTGIR twice, stock and with ``linear_layouts.enable()``, and count the
   data-movement instructions of the final PTX / AMDGCN (``--no-compare`` skips this);
4. write the result: ``index.html`` + one page per kernel + pictures (``tools.report_html``), or
   ``report.md`` (``--format md``, also printed, for terminals and CI logs).

Everything here is linear in the number of conversions; pictures are drawn only for the first
``max_pictures`` conversions of each kernel.
"""

from __future__ import annotations

import atexit
import hashlib
import linecache
import os
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from linear_layouts.passes import recorder
from linear_layouts.tools.conversion_why import Why, explain, users_of
from linear_layouts.tools.loop_weights import ASSUMED_TRIPS, LoopWeight, conversion_weights
from linear_layouts.tools.conversion_report import (ConversionRow, count_instructions, counts_text, format_table,
                                                    report_conversions)

DEFAULT_DIRECTORY = "ll-report"
DEFAULT_PICTURES = 3
# Final code stage and instruction patterns (conversion_report.FINAL_CODE_PATTERNS) per backend.
FINAL_CODE = {"cuda": ("ptx", "nvidia"), "hip": ("amdgcn", "amd")}


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
    why: Optional[Why] = None         # producer, consumers, reason, hint (tools.conversion_why)

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
    compare_problem: str = ""
    problem: str = ""                 # why the kernel could not be analysed

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

    def verdict(self) -> str:
        """Ours vs stock in the final code's data-movement instructions (all kinds summed):
        ``ours 20 fewer``, ``same``, ``ours 2 more``; "" when not compared."""
        if self.stock_counts is None or self.ours_counts is None:
            return ""
        difference = sum(self.ours_counts.values()) - sum(self.stock_counts.values())
        if difference == 0:
            return "same"
        return f"ours {abs(difference)} {'fewer' if difference < 0 else 'more'}"

    def final_code_text(self, which: str) -> str:
        counts = self.stock_counts if which == "stock" else self.ours_counts
        if counts is None:
            return self.compare_problem or "-"
        return counts_text(counts)


def count_text(n: int, noun: str) -> str:
    """``1 conversion``, ``3 conversions``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _counter_text(counter: Counter) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))) or "-"


# ----------------------------------------------------------------------------- records -> kernels

def target_name(record: dict) -> str:
    """The planner's name of a record's target: cuda 90 -> ``sm_90``, hip gfx942 -> ``gfx942``."""
    backend, arch = record.get("backend"), record.get("arch")
    if backend == "cuda":
        return f"sm_{arch}"
    return str(arch)


def distinct_kernels(records: list[dict]) -> list[tuple[dict, int]]:
    """One (record, times compiled) per distinct (name, target, TTGIR), in first-seen order."""
    return [(group[0], len(group)) for group in _groups(records)]


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
    from linear_layouts.passes.diagnostics import IRError
    from linear_layouts.passes.snapshot import parse_module
    from linear_layouts.passes.layouts import value_layout
    from linear_layouts.passes.lower_conversions import lower_module

    target = target_name(record)
    kernel = KernelEntry(record.get("name") or "kernel", target, record.get("backend") or "?",
                         record.get("specialization") or "", record.get("num_warps"), compiles,
                         record.get("ttgir") or "", slug)
    if not kernel.ttgir:
        kernel.problem = "Triton kept no TTGIR for this kernel (TRITON_STORE_BINARY_ONLY?)"
        return kernel
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
        entry.why = explain(op, users)
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
        entry.outcome = f"ours: {outcome.method}" if outcome.lowered else f"left to Triton: {outcome.reason}"
        entry.remark = outcome.remark()
    return kernel


# ----------------------------------------------------------------------------- stock vs ours

def compare_final_code(kernel: KernelEntry, record: dict, workdir: str) -> None:
    """Compile the kernel's TTGIR with stock Triton and with ``linear_layouts.enable()`` and count
    the data-movement instructions of each final code.  Problems are recorded, never raised."""
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes import hook

    if kernel.backend not in FINAL_CODE:
        kernel.compare_problem = f"no final-code counts for backend {kernel.backend!r}"
        return
    stage, vendor = FINAL_CODE[kernel.backend]
    gpu_target = GPUTarget(kernel.backend, record.get("arch"), record.get("warp_size"))
    path = os.path.join(workdir, f"{kernel.slug}.ttgir")
    with open(path, "w", encoding="utf-8") as f:
        f.write(kernel.ttgir)
    previous = hook.active_config()
    try:
        with recorder.paused():
            hook.disable()
            stock = triton.compile(path, target=gpu_target)
            kernel.stock_counts = count_instructions(stock.asm[stage], vendor)
            with hook.enabled("linear"):
                ours = triton.compile(path, target=gpu_target)
            kernel.ours_counts = count_instructions(ours.asm[stage], vendor)
    except Exception as error:   # the Triton boundary: triton.compile raises what its passes raise
        # (RuntimeError, its CompilationError, ...); a kernel it cannot recompile from its TTGIR is
        # a note in the report, not the end of it
        lines = str(error).strip().splitlines()
        kernel.compare_problem = f"recompiling failed: {(lines[0] if lines else type(error).__name__)[:160]}"
    finally:
        if previous is not None and hook.active_config() != previous:
            hook.enable(previous.mode, pipeline=previous.pipeline, remarks=previous.remarks)


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
            if options.compare and kernel.ttgir and not kernel.problem:
                compare_final_code(kernel, record, workdir)
            kernels.append(kernel)
    return kernels


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


MODE_TEXT = {"stock": "stock Triton", "linear": "linear_layouts (plugin on)",
             "legacy": "linear_layouts legacy mode (plugin on)"}


def run_lines(kernels: list[KernelEntry], options: "ReportOptions") -> list[str]:
    """What the program ran with, and which runs the report holds."""
    modes = Counter()
    for k in kernels:
        modes.update(k.modes)
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
    lowering = Counter(c.row.lowering for c in conversions if c.row.lowering != "-")
    scopes = Counter(c.row.scope for c in conversions)
    left = sum(1 for c in conversions if not c.owned)
    lines = [f"{count_text(len(kernels), 'kernel')} ({count_text(sum(k.compiles for k in kernels), 'compile')}), "
             f"{sum(1 for k in kernels if k.conversions)} with layout conversions; "
             f"{count_text(len(conversions), 'conversion')}, {sum(1 for c in conversions if c.row.is_noop)} of them no-ops.",
             f"How far the data moves (scope): {_counter_text(scopes)}.",
             f"Planned lowering: {_counter_text(lowering)}; left to Triton: {left}."]
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
    with_scratch = [k for k in kernels if k.scratch_bytes]
    if with_scratch:
        largest = max(with_scratch, key=lambda k: k.scratch_bytes)
        lines.append(f"Scratch (shared memory) for conversions: in {count_text(len(with_scratch), 'kernel')}, "
                     f"the most {largest.scratch_bytes} B ({largest.name} on {largest.target}).")
    return lines


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


def md_code(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it holds (CommonMark: the fence is
    one backtick longer than the longest run inside, padded with a space where ``text`` starts or
    ends with a backtick)."""
    text = str(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown(kernels: list[KernelEntry], options: Optional["ReportOptions"] = None) -> str:
    """The whole report as Markdown (tables as fixed-width code blocks: readable raw, too)."""
    lines = ["# linear-layouts report", ""]
    lines += summary_lines(kernels)
    lines += run_lines(kernels, options or ReportOptions())
    lines.append(weights_line(kernels))
    look = worth_a_look(kernels)
    if look:
        lines += ["", "Worth a look first (by loop-weighted conversion cost per warp): " +
                  ", ".join(f"{k.name} on {k.target} ({k.weighted_cost:.1f})" for k in look)]
    costliest = costliest_conversions(kernels)
    if costliest:
        lines += ["", "Costliest conversions (weighted cost = cost per warp x runs):", ""]
        lines += [f"{n}. {k.name} #{c.number} {md_code(c.row.location)}: {c.weighted_cost:.1f} = "
                  f"{c.cost:.1f} x {c.weight.runs}" + (" (assumed trip count)" if c.weight.assumed else "")
                  for n, (k, c) in enumerate(costliest, start=1)]
    lines += ["", "## Kernels", "", "```"] + format_table(KERNEL_HEADER, kernel_table_rows(kernels)) + ["```"]
    for k in kernels:
        if not k.conversions:
            continue
        lines += ["", f"## {k.name} on {k.target}", "", f"specialization: {k.specialization or '-'}; "
                  f"num_warps={k.num_warps}", "", "```"]
        lines += format_table(CONVERSION_HEADER, conversion_table_rows(k))
        lines += ["```", ""]
        for c in k.conversions:
            lines.append(f"- #{c.number} {md_code(c.location)}" + (f": {md_code(c.source_line)}" if c.source_line else ""))
            if c.why is not None:
                lines.append(f"  - why: {c.why.reason}; from {md_code(c.why.producer)}, used by "
                             + (", ".join(md_code(u) for u in c.why.consumers) or "nothing"))
                if c.why.hint:
                    lines.append(f"  - hint: {c.why.hint}")
            lines.append(f"  - {md_code(c.remark)}")
    return "\n".join(lines) + "\n"


def write_report(options: ReportOptions, records: Optional[list[dict]] = None) -> str:
    """Write the report of ``options.directory``'s records (or ``records``); returns the path of
    the main file.  Processes writing into one directory take turns (a lock file), and each
    writes everything recorded so far, so the last one to finish leaves the complete report."""
    os.makedirs(options.directory, exist_ok=True)
    with _directory_lock(options.directory):
        if records is None:
            records = recorder.read_records(options.directory, None if options.append else options.run)
        kernels = build_kernels(records, options)
        if options.format == "md":
            path = os.path.join(options.directory, "report.md")
            _write_atomically(path, markdown(kernels, options))
            return path
        from linear_layouts.tools.report_html import write_html
        return write_html(kernels, options)


class _directory_lock:
    """An exclusive ``flock`` on ``DIR/.lock`` (where flock exists; elsewhere no lock)."""

    def __init__(self, directory: str):
        self.path = os.path.join(directory, ".lock")
        self.handle = None

    def __enter__(self):
        self.handle = open(self.path, "a")
        try:
            import fcntl
            fcntl.flock(self.handle, fcntl.LOCK_EX)
        except ImportError:
            pass
        return self

    def __exit__(self, *exc):
        self.handle.close()   # closing releases the lock


def _write_atomically(path: str, text: str) -> None:
    """Readers (a browser, another process) never see a half-written file."""
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)


# ----------------------------------------------------------------------------- environment mode

ENVIRONMENT_HELP = ("LINEAR_LAYOUTS=report records every kernel and writes a report when the process ends; "
                    "LINEAR_LAYOUTS_REPORT_DIR (default ll-report), LINEAR_LAYOUTS_REPORT_MODE (stock or linear: "
                    "what runs), LINEAR_LAYOUTS_REPORT_FORMAT (html or md), LINEAR_LAYOUTS_REPORT_PICTURES (N), "
                    "LINEAR_LAYOUTS_REPORT_COMPARE (1 or 0), LINEAR_LAYOUTS_REPORT_APPEND (1: keep earlier runs)")
# A run: one id for a process and everything it starts (inherited through the environment), or
# for one pytest-xdist session; the process that started the run writes the report (WRITER).
RUN_VARIABLE = "LINEAR_LAYOUTS_REPORT_RUN"
WRITER_VARIABLE = "LINEAR_LAYOUTS_REPORT_WRITER"


class ReportSetupError(ValueError):
    """A report option (from the command line or the environment) that makes no sense."""


def options_from_environment() -> tuple[ReportOptions, str]:
    """(report options, mode) from the ``LINEAR_LAYOUTS_REPORT_*`` variables."""
    env = os.environ
    mode = env.get("LINEAR_LAYOUTS_REPORT_MODE", "stock").strip().lower() or "stock"
    fmt = env.get("LINEAR_LAYOUTS_REPORT_FORMAT", "html").strip().lower() or "html"
    pictures = env.get("LINEAR_LAYOUTS_REPORT_PICTURES", str(DEFAULT_PICTURES)).strip()
    compare = env.get("LINEAR_LAYOUTS_REPORT_COMPARE", "1").strip().lower()
    append = env.get("LINEAR_LAYOUTS_REPORT_APPEND", "0").strip().lower()
    if not pictures.isdigit():
        raise ReportSetupError(f"LINEAR_LAYOUTS_REPORT_PICTURES={pictures!r}: expected a number of pictures")
    if compare not in ("0", "1", "true", "false", "on", "off"):
        raise ReportSetupError(f"LINEAR_LAYOUTS_REPORT_COMPARE={compare!r}: expected 1 or 0")
    if append not in ("0", "1", "true", "false", "on", "off"):
        raise ReportSetupError(f"LINEAR_LAYOUTS_REPORT_APPEND={append!r}: expected 1 or 0")
    options = ReportOptions(env.get("LINEAR_LAYOUTS_REPORT_DIR", DEFAULT_DIRECTORY) or DEFAULT_DIRECTORY, fmt,
                            compare in ("1", "true", "on"), int(pictures), append=append in ("1", "true", "on"))
    check_options(options, mode)
    return options, mode


def check_options(options: ReportOptions, mode: str) -> None:
    if mode not in ("stock", "linear"):
        raise ReportSetupError(f"report mode {mode!r}: expected stock or linear")
    if options.format not in ("html", "md"):
        raise ReportSetupError(f"report format {options.format!r}: expected html or md")
    if os.path.exists(options.directory) and not os.path.isdir(options.directory):
        raise ReportSetupError(f"report directory {options.directory!r} exists and is not a directory")


def start(options: ReportOptions, mode: str, write_at_exit: bool) -> None:
    """Record from now on (and, for ``mode="linear"``, run our lowering); with
    ``write_at_exit``, write the report when the process ends."""
    from linear_layouts.passes import hook

    check_options(options, mode)
    if mode == "linear" and hook.active_config() is None:
        hook.enable("linear")
    inherited = os.environ.get(RUN_VARIABLE)
    xdist = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if inherited:
        options.run = inherited
    elif xdist:
        options.run = f"xdist-{xdist}"            # every worker of one pytest -n session
    else:
        options.run = f"{os.getpid()}-{time.time_ns()}"
        # children (forks, multiprocessing's spawned workers, subprocesses) are of this run, and
        # this process writes the report
        os.environ[RUN_VARIABLE] = options.run
        os.environ[WRITER_VARIABLE] = str(os.getpid())
    recorder.start(options.directory, progress=options.progress, run=options.run, append=options.append)
    if write_at_exit:
        atexit.register(_write_at_exit, options)


def is_writer() -> bool:
    """Whether this process writes the report: not a child (fork, spawned worker) of the process
    that started the run; every pytest-xdist worker writes (the last one leaves the whole report)."""
    writer = os.environ.get(WRITER_VARIABLE)
    return not writer or writer == str(os.getpid())



def start_from_environment() -> None:
    """``LINEAR_LAYOUTS=report``: called when ``linear_layouts`` is imported."""
    options, mode = options_from_environment()
    start(options, mode, write_at_exit=True)


def _write_at_exit(options: ReportOptions) -> None:
    if recorder.recording_directory() is None or not is_writer():
        return
    recorder.stop()
    try:
        path = write_report(options)
        print(f"linear-layouts report: wrote {path}", file=sys.stderr)
    except Exception as error:   # at exit, a traceback would hide the program's own output
        print(f"linear-layouts report: could not write the report: {error}", file=sys.stderr)
