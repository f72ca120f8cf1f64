"""Compile time on a third-party library's kernels: stock Triton and the plugin, TTGIR to cubin.

    python benchmarks/compile_time.py corpus                       # Liger-Kernel's 120 TTGIR files
    python benchmarks/compile_time.py corpus --repeats 5 --out benchmarks/results
    python benchmarks/compile_time.py corpus --corpus test/lit/corpus/fla --name compile_time_heldout

The kernels are ``test/lit/corpus/liger_kernel/`` (compiled from Liger-Kernel 0.8.5 by
``tools/corpus/gen_corpus_thirdparty.py``; a file's name says its target, ``cuda90`` or ``cuda80``), or
the folder ``--corpus`` names: ``test/lit/corpus/fla/`` is a held-out one (flash-linear-attention,
``gen_corpus_thirdparty.py --library fla``), which no benchmark or tuning of the project used.
Each file is compiled by ``triton.compile(path)`` from its TTGIR to a cubin, two ways, the
modes interleaved so that drift hits both alike, each compile with Triton's cache off
(``TRITON_ALWAYS_COMPILE=1``):

* ``stock``: Triton alone;
* ``ours``: ``linear_layouts.enable()`` with nothing remembered (``LINEAR_LAYOUTS_CACHE=off``, and
  every in-process cache keyed by a kernel emptied first: ``passes.drop_in.process_memory.forget_kernels``):
  every conversion planned, emitted, verified and simulated, as on a first compile;
* ``warm``: the same with the plans and simulator verdicts of an earlier compile of the file
  remembered (``passes/islands/verified_islands.py``), as for a recompile or an autotuner's next config;
* ``round_trip``: stock Triton, but its TTGIR module printed and parsed back, unchanged, before
  its ``make_llir``: the text round trip every compile that gets an island of ours pays (Triton's
  bindings create no ops, so islands reach Triton as text), whatever our passes cost.  Its
  overhead is a floor under ours on a kernel with islands: a bound below it is out of reach
  there without ops built in place.

The plugin works after TTGIR (it lowers conversions to LLVM IR), so starting from TTGIR leaves
out only stock work (parsing Python, TTIR, the TTGIR passes): the overhead measured here is an
upper bound of the overhead of a compile from source.  Each figure is the median of
``--repeats`` compiles; the report gives the median overhead over kernels, the worst kernel, and
how many are above 15%, and the kernels without a conversion as the measure of the machine's
noise (the plugin leaves them alone).  Two clocks: wall time, what a user waits, and CPU time
(this process and its children, e.g. ``ptxas``), what the compile computes: on a loaded machine
(another job, other tests) wall time also counts the waits for a core, CPU time far less so.
A third summary takes each mode's fastest compile of the repeats: noise only adds time, so the
minimum is the least disturbed figure (a second opinion on the +15% count, not a replacement).

Where ours' extra time goes: the plugin's own work is timed inside the compile, and Triton's own
stages (``make_llir`` on the module with our islands, then PTX and cubin) are timed beneath the
plugin, so each kernel's overhead splits into the plugin's work and Triton's extra work on our
islands.  ``--match TEXT`` measures only the files whose name contains TEXT.
Writes ``<--name>_<triton version>.md`` (and ``.json.gz``; ``--name`` is ``compile_time_corpus``
unless given).
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import platform
import re
import resource
import statistics
import sys
import tempfile
import time
from typing import NamedTuple, Optional

from harness.common import require_package  # noqa: E402

require_package()

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "test", "lit", "corpus", "liger_kernel")
TOO_SLOW = 0.15          # the bound for a single kernel
PER_KERNEL_BOUND = 0.10  # no kernel above +10%
REPORT_NAME = "compile_time_corpus"


def target_of(path: str):
    from triton.backends.compiler import GPUTarget

    match = re.search(r"\.cuda(\d+)\.ttgir$", path)
    if not match:
        raise ValueError(f"{path}: the file name does not say its target (expected NAME.cudaNN.ttgir)")
    return GPUTarget("cuda", int(match.group(1)), 32)


MODES = ("stock", "ours", "warm", "round_trip")


class Timing(NamedTuple):
    """Seconds one compile took: ``wall`` by the clock, ``cpu`` this process's and its children's
    user and system time; ``plugin``: of the wall time, the part inside the plugin's own work
    (its passes and its guard-barrier pruning; 0 for stock).  ``llir`` and ``after_llir``:
    Triton's own stages, timed beneath the plugin (``_StageClock``): its ``make_llir`` (on our
    module with islands, for ours) and the stages after it (PTX, cubin).  The rest of the
    difference to stock is the machine's noise."""

    wall: float
    cpu: float
    plugin: float = 0.0
    llir: float = 0.0
    after_llir: float = 0.0
    phases: Optional[dict] = None    # the plugin's own work by phase (PhaseClock), ours modes


class FunctionClock:
    """Adds up, by label, the wall time and the calls of functions of the package while it is
    entered.  ``stages``: (module under ``linear_layouts.``, attribute, label) rows; each function
    is wrapped where its callers look it up and put back on exit (an attribute may be a class's
    method, ``Class.method``).  A row whose function this checkout does not have is skipped (an older
    tree, compared).  Several rows may share a label; a row that names where an older tree's
    callers looked a function up is harmless (nothing calls it there now)."""

    def __init__(self, stages):
        self.stages = tuple(stages)
        self.totals: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()

    def __enter__(self):
        import importlib

        self.saved = []
        for module_name, attribute, label in self.stages:
            try:
                owner = importlib.import_module(f"linear_layouts.{module_name}")
            except ImportError:
                continue
            *path, attribute = attribute.split(".")
            for name in path:
                owner = getattr(owner, name, None)
            real = None if owner is None else owner.__dict__.get(attribute)
            if real is None:
                continue
            self.saved.append((owner, attribute, real))
            setattr(owner, attribute, self._timed(label, real))
        return self

    def _timed(self, label: str, real):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.totals[label] += time.perf_counter() - start
                self.calls[label] += 1
        return timed

    def __exit__(self, *exc):
        for module, attribute, real in reversed(self.saved):
            setattr(module, attribute, real)


class PluginClock(FunctionClock):
    """The wall time spent in the hook's calls into the plugin while it is entered (``seconds``):
    the conversions asked from their types (``types_first``), the pipeline, the guard pruning, or
    the islands built in place (``passes.drop_in.in_place``, the default; from the types, its choices of
    the conversions ``types_first`` did not reach included: a run before this clock counted
    them out, and so under-read the plugin's own work on kernels built in place)."""

    # Where the stage wrappers look the two up; ``passes.drop_in.hook`` was the place before the hook was
    # split into rooms (kept, so that an older tree is still timed).
    CALLERS = ("passes.drop_in.stage_wrappers", "passes.drop_in.hook")

    def __init__(self):
        super().__init__([(module, name, "plugin") for module in self.CALLERS
                          for name in ("every_conversion_is_stocks", "run_plugin_pipeline", "prune_guard_barriers",
                                          "lower_in_place", "lower_in_place_from_types")])

    @property
    def seconds(self) -> float:
        return self.totals["plugin"]


class PhaseClock(FunctionClock):
    """Each phase of the plugin's own work while it is entered (``seconds``, by phase): the
    conversions asked from their types before anything is printed, the snapshot of Triton's
    module, planning (layouts, candidates, choice, plan verifier), emission,
    the emitted-code simulator, the re-parse of the module with its islands into Triton, the
    pruning of guard barriers on the LLVM IR, and (unless ``LINEAR_LAYOUTS_IN_PLACE=0``) the islands built
    in Triton's module (``passes.drop_in.in_place``; its snapshot and planning count as theirs).  What is left of :class:`PluginClock`'s total is the
    passes' glue (guard placement, splicing, remarks)."""

    # phase: (module, names) rows where the callers look the functions up, today's first, then
    # older trees' (before the drop-in and the islands had folders of their own under passes/,
    # before the hook was split into rooms, before the island checks left lower_conversions).
    PHASES = {"types first": [("drop_in.stage_wrappers", "every_conversion_is_stocks"),
                              ("stage_wrappers", "every_conversion_is_stocks")],
              "snapshot": [("drop_in.plugin_pipeline", "snapshot_of"), ("drop_in.in_place", "snapshot_of"),
                           ("plugin_pipeline", "snapshot_of"), ("hook", "snapshot_of"), ("in_place", "snapshot_of")],
              "plan": [("lower_conversions", "plan_module"), ("drop_in.in_place", "plan_module", "conversion_choices"),
                       ("in_place", "plan_module", "conversion_choices")],
              "build in place": [("drop_in.in_place", "build_in_place"), ("in_place", "build_in_place")],
              "emit": [("islands.island_checks", "emit_island", "emit_local_load_island", "emit_local_store_island"),
                       ("island_checks", "emit_island", "emit_local_load_island", "emit_local_store_island"),
                       ("lower_conversions", "emit_island", "emit_local_load_island", "emit_local_store_island")],
              "simulate": [("islands.island_checks", "IslandChecks._simulated"),
                           ("island_checks", "IslandChecks._simulated"),
                           ("lower_conversions", "_simulate_unless_accepted")],
              "re-parse": [("drop_in.plugin_pipeline", "triton_module_from_text"),
                           ("plugin_pipeline", "triton_module_from_text"), ("hook", "triton_module_from_text")],
              "prune guards": [("drop_in.stage_wrappers", "prune_guard_barriers"),
                               ("stage_wrappers", "prune_guard_barriers"), ("hook", "prune_guard_barriers")]}

    def __init__(self):
        super().__init__([(f"passes.{module}", name, phase) for phase, rows in self.PHASES.items()
                          for module, *names in rows for name in names])

    @property
    def seconds(self) -> dict:
        return {phase: self.totals[phase] for phase in self.PHASES}


class _StageClock:
    """Adds up the wall time of Triton's own stages of a compile: a stages hook put into Triton's
    slot *beneath* the plugin (installed before ``enable()``, it is the hook the plugin's
    trampoline finds and calls first), so it wraps Triton's stage functions themselves and the
    plugin's work around ``llir`` is not in them."""

    def __init__(self, round_trip: bool = False):
        self.seconds: dict[str, float] = {}
        self.round_trip = round_trip     # llir gets the module printed and parsed back (mode round_trip)

    def hook(self, *args):
        if not args:                 # Triton 3.7+: asked for a cache key (nothing to add)
            return "", ""
        stages = args[1]
        if stages is not None:
            for name, stage in list(stages.items()):
                stages[name] = self._timed(name, stage)
            if self.round_trip and "llir" in stages:
                stages["llir"] = _after_round_trip(stages["llir"])
        return None

    def _timed(self, name: str, stage):
        def timed(src, metadata):
            start = time.perf_counter()
            try:
                return stage(src, metadata)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        return timed

    def split(self) -> tuple[float, float]:
        """(``llir``, the stages after it) in seconds."""
        names = list(self.seconds)
        after = names[names.index("llir") + 1:] if "llir" in names else []
        return self.seconds.get("llir", 0.0), sum(self.seconds[name] for name in after)

    def __enter__(self):
        import triton

        self.saved = triton.knobs.runtime.add_stages_inspection_hook
        triton.knobs.runtime.add_stages_inspection_hook = self.hook
        return self

    def __exit__(self, *exc):
        import triton

        triton.knobs.runtime.add_stages_inspection_hook = self.saved


def _after_round_trip(make_llir):
    """``make_llir`` given its module printed (with locations, as the plugin prints it) and
    parsed back into the compile's context, unchanged: the round trip alone."""
    from linear_layouts.passes.ir.parsing import triton_module_from_text

    def llir(src, metadata):
        return make_llir(triton_module_from_text(src.str(), src.context), metadata)
    return llir


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def compile_as(mode: str, path: str, target) -> Timing:
    """Compile ``path`` once in ``mode`` (see the module docstring); the time of the compile
    alone (not of ``enable()`` / ``disable()``: under 3.6 they scan the heap for JIT functions)."""
    import triton

    import linear_layouts
    from linear_layouts.passes.islands import verified_islands

    os.environ[verified_islands.CACHE_SWITCH] = "on" if mode == "warm" else "off"
    if mode == "ours":          # cold: the first compile of the kernel in this process
        from linear_layouts.passes.drop_in.process_memory import forget_kernels
        forget_kernels()
    with _StageClock(round_trip=mode == "round_trip") as stages:
        if mode in ("ours", "warm"):
            linear_layouts.enable()
        try:
            with PluginClock() as plugin, PhaseClock() as phases:
                start, cpu_start = time.perf_counter(), cpu_seconds()
                triton.compile(path, target=target)
                wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
        finally:
            linear_layouts.disable()
    return Timing(wall, cpu, plugin.seconds, *stages.split(), phases=phases.seconds)


def measure(paths: list[str], repeats: int, skipped: list) -> list[dict]:
    """Rows of medians per file; files stock Triton cannot compile go to ``skipped`` with why."""
    from linear_layouts.passes.islands import verified_islands

    os.environ[verified_islands.CACHE_DIR_VARIABLE] = tempfile.mkdtemp(prefix="ll_compile_corpus_verified_")
    for mode in ("stock", "ours"):        # warm up: imports, Triton's first-compile setup
        compile_as(mode, paths[0], target_of(paths[0]))
    rows = []
    for number, path in enumerate(paths, start=1):
        target = target_of(path)
        try:
            compile_as("stock", path, target)
        except Exception as error:      # a file this Triton cannot compile (e.g. ops newer than it)
            lines = str(error).strip().splitlines()
            skipped.append({"file": os.path.basename(path), "why": (lines[0] if lines else type(error).__name__)[:160]})
            print(f"[{number}/{len(paths)}] {os.path.basename(path)}: stock Triton does not compile it: "
                  f"{skipped[-1]['why']}", flush=True)
            continue
        compile_as("warm", path, target)        # the warm mode's first compile: what it remembers
        times = {mode: [] for mode in MODES}
        for _ in range(repeats):
            for mode in MODES:
                times[mode].append(compile_as(mode, path, target))
        row = {"file": os.path.basename(path), "converts": open(path).read().count("ttg.convert_layout"),
               **{mode: statistics.median(t.wall for t in values) for mode, values in times.items()},
               **{f"{mode}_cpu": statistics.median(t.cpu for t in values) for mode, values in times.items()},
               **{f"{mode}_min": min(t.wall for t in values) for mode, values in times.items()},
               "ours_plugin": statistics.median(t.plugin for t in times["ours"]),
               "ours_phases": {phase: statistics.median((t.phases or {}).get(phase, 0.0) for t in times["ours"])
                               for phase in PhaseClock.PHASES},
               **{f"{mode}_{stage}": statistics.median(getattr(t, stage) for t in times[mode])
                  for mode in ("stock", "ours") for stage in ("llir", "after_llir")}}
        row["plugin_share"] = row["ours_plugin"] / row["stock"]
        for clock in CLOCKS:
            row[clock.key("ratio")] = row[clock.key("ours")] / row[clock.key("stock")]
            row[clock.key("warm_ratio")] = row[clock.key("warm")] / row[clock.key("stock")]
            row[clock.key("round_trip_ratio")] = row[clock.key("round_trip")] / row[clock.key("stock")]
        rows.append(row)
        print(f"[{number}/{len(paths)}] {row['file']}: stock {row['stock'] * 1000:.0f} ms, ours "
              f"{row['ours'] * 1000:.0f} ms ({row['ratio']:.3f}), warm {row['warm'] * 1000:.0f} ms "
              f"({row['warm_ratio']:.3f}); CPU ours / stock {row['ratio_cpu']:.3f}; the plugin's own work "
              f"{row['ours_plugin'] * 1000:.0f} ms", flush=True)
    return rows


class Clock(NamedTuple):
    """Which time a summary is about: its rows' keys end in ``suffix`` (``""``: wall time)."""

    name: str
    suffix: str

    def key(self, field: str) -> str:
        return field + self.suffix


WALL, CPU = Clock("wall time", ""), Clock("CPU time", "_cpu")
# Each mode's fastest compile of the repeats: the machine's noise (another job taking a core)
# only ever adds time, so the minimum is the least disturbed figure of each.
FASTEST = Clock("wall time, fastest of the repeats", "_min")
CLOCKS = (WALL, CPU, FASTEST)


def summary_lines(rows: list[dict], clock: Clock = WALL) -> list[str]:
    """The summary of ``rows`` on one clock (rows of an older run without CPU times: wall only)."""
    ratio, warm_ratio = clock.key("ratio"), clock.key("warm_ratio")
    stock, ours = clock.key("stock"), clock.key("ours")
    ratios = [r[ratio] for r in rows]
    with_converts = [r[ratio] for r in rows if r["converts"]]
    worst = max(rows, key=lambda r: r[ratio])
    above = [r for r in rows if r[ratio] - 1 > TOO_SLOW]
    without = [r[ratio] for r in rows if not r["converts"]]
    lines = [f"* kernels: {len(rows)} ({len(with_converts)} with a `ttg.convert_layout`)",
             f"* overhead, median over kernels: **{(statistics.median(ratios) - 1) * 100:+.1f}%**"
             + (f"; over the kernels with a conversion: {(statistics.median(with_converts) - 1) * 100:+.1f}%"
                if with_converts else ""),
             f"* worst: {worst['file']} {(worst[ratio] - 1) * 100:+.1f}% ({worst[stock] * 1000:.0f} ms -> "
             f"{worst[ours] * 1000:.0f} ms)",
             f"* above +{TOO_SLOW:.0%}: {len(above)}" + (f" ({', '.join(r['file'] for r in above)})" if above else "")]
    if without:
        # The plugin does nothing on a kernel without a conversion (its TTGIR is not even parsed):
        # their ratios are what this machine's timing noise alone does to one kernel.
        lines.append(f"* the machine's noise: the {len(without)} kernels without a conversion (the plugin leaves them "
                     f"alone) range {min(without):.3f} to {max(without):.3f}, median {statistics.median(without):.3f}; "
                     f"with a conversion, above the noise's top ({max(without):.3f}): "
                     f"{sum(1 for x in with_converts if x > max(without))}")
    shares = [r for r in rows if r["converts"] and "plugin_share" in r]
    if clock is WALL and shares:
        # Measured inside the compile (no difference of two noisy totals): what the plugin's own
        # passes cost, as a share of stock's compile of the same kernel.
        worst_share = max(shares, key=lambda r: r["plugin_share"])
        lines.append(f"* the plugin's own work (its passes and guard pruning, timed inside the compile) on the kernels "
                     f"with a conversion: median {statistics.median(r['plugin_share'] for r in shares):.1%} of stock's "
                     f"compile, worst {worst_share['file']} {worst_share['plugin_share']:.1%} "
                     f"({worst_share['ours_plugin'] * 1000:.0f} ms)")
    if clock is WALL:
        lines += account_lines(rows)
    if all(warm_ratio in r for r in rows):
        warm = [r[warm_ratio] for r in rows]
        warm_converts = [r[warm_ratio] for r in rows if r["converts"]]
        worst_warm = max(rows, key=lambda r: r[warm_ratio])
        lines.append(f"* warm (islands remembered from an earlier compile, `passes/islands/verified_islands.py`): median "
                     f"**{(statistics.median(warm) - 1) * 100:+.1f}%**"
                     + (f"; over the kernels with a conversion: {(statistics.median(warm_converts) - 1) * 100:+.1f}%"
                        if warm_converts else "")
                     + f"; worst {worst_warm['file']} {(worst_warm[warm_ratio] - 1) * 100:+.1f}%; above "
                     f"+{TOO_SLOW:.0%}: {sum(1 for x in warm if x - 1 > TOO_SLOW)}")
    lines += per_kernel_lines(rows, clock)
    lines += round_trip_lines(rows, clock)
    return lines


def _untouched(row: dict) -> bool:
    """Every conversion of the kernel went to stock from its types (``passes/drop_in/types_first.py``):
    no phase but ``types first`` ran, so Triton compiled its own module, unprinted and unchanged."""
    phases = row.get("ours_phases") or {}
    return bool(phases) and all(seconds == 0 for phase, seconds in phases.items() if phase != "types first")


def per_kernel_lines(rows: list[dict], clock: Clock) -> list[str]:
    """The per-kernel bound (``PER_KERNEL_BOUND``) apart from the machine's noise where that can
    be done exactly: on a kernel the plugin left untouched (``_untouched``) stock's compile and
    ours run the same stages on the same module, so its overhead is the plugin's own work, timed
    inside the compile; on the kernels it changed, the measured ratio on ``clock``.  Example: a
    kernel whose compile took 1.76 s for stock and 2.01 s for ours, 20 ms of it the plugin's own
    types-first pass and nothing else of ours: +1.1%, not +14% (its extra 230 ms are noise: the
    two compiles did the same work).  None for runs that did not time the phases."""
    timed = [r for r in rows if r["converts"] and r.get("ours_phases") and "plugin_share" in r]
    if not timed:
        return []
    untouched = [r for r in timed if _untouched(r)]
    changed = [r for r in timed if not _untouched(r)]
    parts = []
    if untouched:
        worst = max(untouched, key=lambda r: r["plugin_share"])
        parts.append(f"on the {len(untouched)} kernels whose every conversion went to stock from its types (Triton "
                     f"compiled its own module), the plugin's own work: worst {worst['plugin_share']:+.1%} "
                     f"({worst['file']})")
    ratio = clock.key("ratio")
    if changed:
        worst = max(changed, key=lambda r: r[ratio])
        above = sum(1 for r in changed if r[ratio] - 1 > PER_KERNEL_BOUND)
        parts.append(f"on the {len(changed)} it changed, measured: worst {(worst[ratio] - 1) * 100:+.1f}% "
                     f"({worst['file']}), above +{PER_KERNEL_BOUND:.0%}: {above}")
    return ["* per kernel apart from the noise: " + "; ".join(parts)]


def round_trip_lines(rows: list[dict], clock: Clock) -> list[str]:
    """The floor the text round trip puts under ours (mode ``round_trip``; none for older runs):
    its median overhead over the kernels with a conversion, and ours' beside it."""
    key = clock.key("round_trip_ratio")
    with_converts = [r for r in rows if r["converts"] and key in r]
    if not with_converts:
        return []
    floor = statistics.median(r[key] for r in with_converts)
    ours = statistics.median(r[clock.key("ratio")] for r in with_converts)
    return [f"* the text round trip alone (stock, its module printed and parsed back before `make_llir`: what a "
            f"compile with an island pays before any pass of ours), median over the kernels with a conversion: "
            f"**{(floor - 1) * 100:+.1f}%** (ours: {(ours - 1) * 100:+.1f}%)"]


def _stage_delta(row: dict, stage: str) -> float:
    """How much longer Triton's own stage(s) ``stage`` (``llir``, ``after_llir``) took on our
    module than on stock's (seconds, medians)."""
    return row[f"ours_{stage}"] - row[f"stock_{stage}"]


def account_lines(rows: list[dict]) -> list[str]:
    """Where ours' extra wall time goes on the kernels with a conversion (rows of runs that timed
    Triton's stages; none for older ones): the plugin's own work, Triton's ``make_llir`` on our
    module (our islands are LLVM-dialect code its LLVM pipeline optimizes), and the stages after
    it (PTX, cubin); each a median over those kernels, and for the worst kernel."""
    timed = [r for r in rows if r["converts"] and "ours_llir" in r]
    if not timed:
        return []

    def account(values: dict) -> str:
        return (f"the plugin's own work {values['plugin'] * 1000:.1f} ms, Triton's make_llir on our module "
                f"{values['llir'] * 1000:+.1f} ms, the stages after it {values['after'] * 1000:+.1f} ms")

    parts = {"plugin": lambda r: r["ours_plugin"], "llir": lambda r: _stage_delta(r, "llir"),
             "after": lambda r: _stage_delta(r, "after_llir")}
    medians = {name: statistics.median(part(r) for r in timed) for name, part in parts.items()}
    worst = max(timed, key=lambda r: r["ratio"])
    lines = [f"* where the extra time goes (Triton's stages timed beneath the plugin), medians over the kernels with a "
             f"conversion: {account(medians)}; on the worst, {worst['file']} (+{(worst['ours'] - worst['stock']) * 1000:.0f}"
             f" ms): {account({name: part(worst) for name, part in parts.items()})}"]
    return lines + phase_lines(timed)


def _has_island(row: dict) -> bool:
    """The kernel got an island: one was emitted, or built in place (``passes.drop_in.in_place``)."""
    phases = row["ours_phases"]
    return phases.get("emit", 0.0) > 0 or phases.get("build in place", 0.0) > 0


def phase_lines(rows: list[dict]) -> list[str]:
    """The plugin's own work by phase (``PhaseClock``), medians over the kernels with a
    conversion that got an island and over those that got none (rows of runs that timed the
    phases; none for older ones)."""
    timed = [r for r in rows if r.get("ours_phases")]
    lines = []
    for label, group in (("with an island", [r for r in timed if _has_island(r)]),
                         ("without one", [r for r in timed if not _has_island(r)])):
        if not group:
            continue
        medians = {phase: statistics.median(r["ours_phases"].get(phase, 0.0) for r in group) for phase in PhaseClock.PHASES}
        plugin = statistics.median(r["ours_plugin"] for r in group)
        lines.append(f"* the plugin's own work on the {len(group)} kernels {label}, medians: {plugin * 1000:.1f} ms in all; "
                     + ", ".join(f"{phase} {seconds * 1000:.1f} ms" for phase, seconds in medians.items() if seconds))
    return lines


def clocks_of(rows: list[dict]) -> tuple[Clock, ...]:
    """The clocks every row has (CPU times came later: an older run's JSON has wall times only)."""
    return tuple(clock for clock in CLOCKS if all(clock.key("ratio") in r for r in rows))


def write_report(rows: list[dict], skipped: list[dict], run: dict, out: str) -> None:
    """``compile_time_corpus.md`` and ``.json`` in ``out``; ``run``: triton, cpus, repeats,
    python, corpus and command of the measurement."""
    lines = ["# Compile time on a third-party library's kernels: stock Triton and the plugin", "",
             f"triton {run['triton']}, python {run.get('python', '?')}, {run['cpus']} CPUs; "
             f"`{run.get('corpus', 'test/lit/corpus/liger_kernel')}`, TTGIR to cubin, median (and fastest) of {run['repeats']} "
             "compiles per mode, modes interleaved, Triton's cache off, ours with nothing remembered (`LINEAR_LAYOUTS_CACHE=off`, in-process caches emptied before each compile). "
             f"Produced by `{run.get('command', 'python benchmarks/compile_time.py corpus')}`.", ""]
    clocks = clocks_of(rows)
    for clock in clocks:
        if len(clocks) > 1:
            lines += [f"{clock.name[0].upper()}{clock.name[1:]}:", ""]
        lines += summary_lines(rows, clock) + [""]
    lines.pop()
    if skipped:
        lines.append(f"* not measured: {len(skipped)} files stock Triton {run['triton']} does not compile: "
                     + "; ".join(f"{s['file']} ({s['why']})" for s in skipped))
    lines += [""] + table_lines(rows, clocks)
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"{run.get('name', REPORT_NAME)}_{run['triton']}")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    # gzipped: benchmarks/results stays under its size limit (test_regenerate_results)
    with gzip.open(stem + ".json.gz", "wt") as f:
        json.dump({**run, "rows": rows, "skipped": skipped}, f)


def table_lines(rows: list[dict], clocks: tuple[Clock, ...]) -> list[str]:
    """The per-kernel table, slowest ratio first; the CPU columns, the fastest-of-the-repeats
    column and the stage columns where the rows have them (older runs' JSON does not)."""
    cpu, fastest = CPU in clocks, FASTEST in clocks
    stages = all("ours_llir" in r for r in rows)
    header = "| file | converts | stock ms | ours ms | ours / stock | warm ms | warm / stock |"
    rule = "|---|---:|---:|---:|---:|---:|---:|"
    if cpu:
        header += " CPU: stock ms | ours ms | ours / stock | plugin's own ms |"
        rule += "---:|---:|---:|---:|"
    if fastest:
        header += " fastest: ours / stock |"
        rule += "---:|"
    round_trip = cpu and all("round_trip_ratio_cpu" in r for r in rows)
    if round_trip:
        header += " CPU: round trip / stock |"
        rule += "---:|"
    if stages:
        header += " Triton's make_llir: ours - stock ms | later stages: ours - stock ms |"
        rule += "---:|---:|"
    lines = [header, rule]
    for r in sorted(rows, key=lambda r: -r["ratio"]):
        line = (f"| {r['file']} | {r['converts']} | {r['stock'] * 1000:.1f} | {r['ours'] * 1000:.1f} | {r['ratio']:.3f} "
                f"| {r['warm'] * 1000:.1f} | {r['warm_ratio']:.3f} |")
        if cpu:
            line += (f" {r['stock_cpu'] * 1000:.1f} | {r['ours_cpu'] * 1000:.1f} | {r['ratio_cpu']:.3f} "
                     f"| {r['ours_plugin'] * 1000:.1f} |")
        if fastest:
            line += f" {r['ratio_min']:.3f} |"
        if round_trip:
            line += f" {r['round_trip_ratio_cpu']:.3f} |"
        if stages:
            line += f" {_stage_delta(r, 'llir') * 1000:+.1f} | {_stage_delta(r, 'after_llir') * 1000:+.1f} |"
        lines.append(line)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="compile_time.py corpus", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=CORPUS, help="a folder of NAME.cudaNN.ttgir files")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    parser.add_argument("--match", default="", help="only the files whose name contains this text")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--name", default=REPORT_NAME,
                        help="the report's file name before _<triton version>.md (default: %(default)s)")
    parser.add_argument("--render", metavar="JSON",
                        help="measure nothing: rewrite the report of an earlier run from its .json or .json.gz (into --out)")
    args = parser.parse_args(argv)
    if args.render:
        with (gzip.open(args.render, "rt") if args.render.endswith(".gz") else open(args.render)) as f:
            saved = json.load(f)
        write_report(saved["rows"], saved.get("skipped", []), {"name": args.name, **saved}, args.out)
        return 0
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: expected 1 or more")
    paths = [p for p in sorted(glob.glob(os.path.join(args.corpus, "*.ttgir"))) if args.match in os.path.basename(p)]
    if not paths:
        print(f"compile_time_corpus: no .ttgir files in {args.corpus}", file=sys.stderr)
        return 1
    paths = paths[:args.limit] if args.limit else paths
    # set here, not at import: a test importing this module must not switch Triton's cache off
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ll_compile_corpus_")
    skipped: list = []
    rows = measure(paths, args.repeats, skipped)
    from linear_layouts.passes.drop_in.in_place import IN_PLACE_VARIABLE
    route = os.environ.get(IN_PLACE_VARIABLE, "")      # the route, where the environment names one
    command = (f"{IN_PLACE_VARIABLE}={route} " if route else "") + "python benchmarks/compile_time.py corpus" + \
        "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    write_report(rows, skipped, {"triton": triton.__version__, "cpus": os.cpu_count(), "repeats": args.repeats,
                                 "python": platform.python_version(), "corpus": os.path.relpath(args.corpus, REPO),
                                 "command": command, "name": args.name}, args.out)
    for clock in clocks_of(rows):
        print(f"{clock.name}:\n" + "\n".join(summary_lines(rows, clock)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
