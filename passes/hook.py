"""Our passes inside ``triton.compile`` and ``@triton.jit``: ``linear_layouts.enable()``.

Triton calls ``knobs.runtime.add_stages_inspection_hook(backend, stages, options, language,
capability)`` while it assembles a compilation (3.6+).  We wrap the ``llir`` stage: the TTGIR
module goes through our pipeline (by default ``ll-lower-conversions``, which replaces the
``ttg.convert_layout`` ops we own by verified LLVM-dialect islands), then through Triton's own
``make_llir`` and everything after it.  Wrapping ``llir`` rather than ``ttgir`` means kernels
compiled from ``.ttgir`` files go through us too (they skip the ``ttgir`` stage).

Caching.  A kernel compiled with the plugin must never be served to a run without it, nor the
other way round:

* Triton 3.7+ also calls the hook with *no* arguments when it computes cache keys (for the
  on-disk cache and for ``@triton.jit``'s in-memory cache); we return ``(key, hash)`` naming
  our version, mode and pipeline.
* Triton 3.6 does not.  There, while the plugin is on, Triton's cache directory is a
  sub-directory of its own named after that same key (``passes.cache_dirs``, which does the
  same for torch.compile's caches under every release), and every ``@triton.jit`` function's
  in-memory kernel cache is cleared whenever the plugin is switched on or off.

Processes started later (torch.compile's compile workers, spawned workers, subprocesses) get
the setting through the environment: ``enable()`` writes ``LINEAR_LAYOUTS`` and
``LINEAR_LAYOUTS_OPTIONS`` (``passes.environment``), the package's start-up hook turns the
plugin on in them right after they import triton (``passes.after_triton``), and a pool of
torch.compile workers already running is restarted (``passes.inductor``).

Usage::

    import linear_layouts
    linear_layouts.enable()                 # or enable(mode="legacy"), enable(only="shuffle")
    with linear_layouts.enabled(remarks=True): ...
    linear_layouts.disable()

Beside other stages hooks (a profiler's, another plugin's).  Triton has one hook slot, and
tools chain by wrapping what they find there.  Ours is one trampoline, :func:`_stages_hook`,
put into the slot by the first ``enable()``, which records the hook it found there once, as
the hook below it; what the trampoline does depends on the setting of the moment (our
pipeline, or nothing), so ``enable()``, ``disable()`` and ``enabled()`` only change the setting
and never stack a second trampoline over a hook that wraps the first.  ``disable()`` takes
the trampoline out only while it is the hook in the slot, putting back the hook below it; a
hook installed after ours stays where it is, calling a trampoline that passes through.  A
trampoline called again while it runs (a chain that leads back to it, e.g. a wrapper of ours
put in below it) ends the cycle there, so every hook runs once per compile.

Never a failure where stock Triton compiles: if our passes, ``make_llir`` or any later stage
(translation to LLVM IR, ptxas) fails on a module with our islands, the kernel is compiled
again from Triton's own TTGIR without them, with one warning per compiled specialization (a
kernel name and its TTGIR) and a record in ``linear_layouts.stats()`` (``stats().fallbacks``).
Where that stock compile fails too, the failure is not ours: Triton's own error goes to the
caller and nothing is recorded.  A stage stopped by a signal from outside (Ctrl-C during
ptxas, a harness's SIGTERM) is no failure either: its error goes to the caller at once, as
without the plugin (``interrupting_signal``).  No ``fork()`` on this path: the process may hold CUDA state and
threads.

For a program that does not import us: ``LINEAR_LAYOUTS=1 python -m linear_layouts run prog.py``
(``LINEAR_LAYOUTS=legacy`` for the legacy baseline).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import inspect
import os
import re
import signal
import sys
import threading
import warnings
from dataclasses import asdict, dataclass, field, replace
from typing import Optional, Sequence, Union

from ..lowering.emit.emit_nvidia import GUARD_MARK
from .ir.bindings import installed_conventions
from .ir.diagnostics import IRError
from ..lowering.plan import Method
from .classify_conversions import ClassifyConversions
from .framework import ModulePass, PassContext, run_pipeline
from .barriers.guard_barriers import prune_guard_barriers
from .lower_conversions import LowerConversions
from .options import Mode, OptionError, VerifyLevel, parse_flag, parse_methods, parse_word
from .ir.parsing import triton_module_from_text
from .pipeline import PipelineError, parse_pipeline, pipeline_text
# Imported where used, not here: the layout assignment (enable(assign_layouts=True)), the advice
# (apply_advice=True) and Gluon's automatic layouts (Gluon kernels only) are most of the plugin's
# import time, which every process that calls enable() pays before its first compile
# (benchmarks/studies/first_compile.py).
from . import cache_dirs, cache_hits, environment, inductor, shared_stats
from .ir.snapshot import parse_module, snapshot_of
from .verified_islands import source_fingerprint
from .version import __version__


class PluginError(ValueError):
    """enable() was called with an unknown mode, option or pipeline."""


@dataclass(frozen=True)
class PluginConfig:
    """What the plugin runs on every kernel (the pass objects, with their typed options), and
    the cache key that goes with it.  The pipeline text is derived from the passes."""

    mode: Mode
    passes: tuple[ModulePass, ...]
    remarks: bool = False
    # Gluon kernels: our ll-resolve-auto-layouts gives their automatic layouts concrete ones
    # before Triton's resolution (which then finds nothing left), in the ``ttgir`` stage.  On by
    # default: it met its goals on the GPU (docs/gluon-auto-layouts.md); where it fails, Triton's
    # own resolution runs instead (a fallback, never a failure where stock compiles).
    resolve_auto_layouts: bool = True
    # Gluon kernels: the report's layout advice applied to the ``ttgir`` stage's result
    # (``ll-apply-advice``), where the author's layouts are final.
    apply_advice: bool = False
    # enable()'s keyword arguments that differ from their defaults, as JSON-able values: written
    # to the environment (LINEAR_LAYOUTS_OPTIONS) so that processes started later, torch.compile's
    # workers among them, compile as this one does (passes.environment).
    enable_options: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def pipeline(self) -> str:
        """The passes as an ``ll-opt -p`` pipeline string (non-default options only)."""
        return pipeline_text(list(self.passes))

    @property
    def owns_local_loads(self) -> bool:
        """The pipeline lowers ``ttg.local_load``, ``ttg.local_store`` or ``ttg.local_alloc`` (with a
        source) too (``only=...,local_load``)."""
        return any(isinstance(p, LowerConversions) and p.owns_local_memory_ops for p in self.passes)

    @property
    def reports(self) -> bool:
        """A pass of the pipeline prints a line per conversion (``report=true``)."""
        return any(getattr(p, "report", False) for p in self.passes)

    @property
    def cache_key(self) -> str:
        resolve = "-resolve-auto-layouts" if self.resolve_auto_layouts else ""
        advice = "-apply-advice" if self.apply_advice else ""
        return (f"linear_layouts-{__version__}-{source_fingerprint()}-{self.mode}-{self.pipeline}{resolve}{advice}"
                f"{environment_switches()}")

    @property
    def cache_hash(self) -> str:
        return hashlib.sha256(self.cache_key.encode()).hexdigest()


def environment_switches() -> str:
    """The environment variables that change what the plugin emits, as they are now, for the cache
    key: a kernel compiled with ``LINEAR_LAYOUTS_STOCK_GATE=off`` (every conversion ours) or
    ``LINEAR_LAYOUTS_BYTE_VECTORS=1`` must not be taken from Triton's cache by a run without it,
    nor the reverse.  "" when none is set."""
    from ..lowering.choosing.fitted_model import gate_turned_off
    from ..lowering.emit.emit_nvidia import bytes_as_vectors

    return ("-stock-gate-off" if gate_turned_off() else "") + ("-byte-vectors" if bytes_as_vectors() else "")


def default_passes(mode: Mode, only: Sequence[Method] = (), report: bool = False, remarks: bool = False,
                   verify: VerifyLevel = VerifyLevel.EMITTED, assign_layouts: bool = False) -> tuple[ModulePass, ...]:
    """The pipeline of a mode.  ``linear``: our lowering of every conversion we own (``only``
    narrows it, e.g. ``(Method.SHUFFLE, Method.SHARED)``).  ``legacy``: Triton as it was before
    linear layouts (padded, unswizzled shared memory for every conversion that is not a register
    renaming).  ``assign_layouts``: first choose the kernel's layouts by cost
    (``ll-assign-layouts``)."""
    if assign_layouts:
        from .assign.assign_layouts import AssignLayouts
    assign = (AssignLayouts(report=remarks or report),) if assign_layouts else ()
    classify = (ClassifyConversions(report=True),) if report else ()
    return assign + classify + (LowerConversions(only=only, mode=mode, verify=verify, remarks=remarks),)


# --------------------------------------------------------------------------- state

_config: Optional[PluginConfig] = None
# Our trampoline in Triton's hook slot (see the module docstring): whether it is in the chain
# (the hook in the slot, or wrapped by a hook installed after it), and the hook it found in the
# slot when it went in, which it calls first on every compile.
_trampoline_installed = False
_hook_below = None
_trampoline_running = threading.local()   # .active: a trampoline call in progress on this thread


def active_config() -> Optional[PluginConfig]:
    """The configuration in force, or None when the plugin is off."""
    return _config


def hook_consulted_for_cache_key() -> bool:
    """Triton 3.7 and later ask the stages hook for a cache key; 3.6 does not."""
    return installed_conventions().stages_hook_gives_cache_key


def enable(mode: Union[Mode, str] = Mode.LINEAR, *, only: Union[None, str, Sequence[Method]] = None,
           report: bool = False, remarks: bool = False, pipeline: Optional[str] = None,
           verify: Union[VerifyLevel, str] = VerifyLevel.EMITTED, assign_layouts: bool = False,
           resolve_auto_layouts: bool = True, apply_advice: bool = False) -> PluginConfig:
    """Run our passes in every kernel compiled from now on.

    ``mode`` is ``"linear"`` (our layout engine) or ``"legacy"`` (the pre-linear-layouts
    baseline, for comparisons).  ``only`` picks which lowerings we own (as in
    ``ll-lower-conversions{only=...}``: ``"shuffle,shared"`` or a sequence of ``Method``),
    ``report`` prints one line per conversion, ``remarks`` says why a conversion was left to
    Triton; ``pipeline`` replaces the whole pipeline (an ``ll-opt -p`` string).  ``verify`` is
    ``"emitted"`` (default: every island is executed by the emitted-code simulator before it is
    used, and one that fails is left to Triton) or ``"plan"`` (only the plan verifier; cheaper
    compiles, see the README).  ``assign_layouts`` first re-chooses the layouts of every
    kernel's tensors by modelled cost (``ll-assign-layouts``; opt-in, see the README).
    ``resolve_auto_layouts`` gives a Gluon kernel's automatic layouts (``gl.AutoLayout()``,
    ``gl.CoalescedLayout()``) concrete ones by modelled cost (``ll-resolve-auto-layouts``, in
    the ``ttgir`` stage; on by default, ``False`` leaves them to Triton's own resolution, see
    docs/gluon-auto-layouts.md).  ``apply_advice`` compiles
    a Gluon kernel with the report's layout advice applied (``ll-apply-advice`` on the result
    of the ``ttgir`` stage; opt-in, see docs/report.md).  Every
    value is read into its type here (``passes.options``);
    a bad one is a :class:`PluginError` naming it, and the plugin stays as it was.
    """
    # A new boolean option: a keyword of enable(), passed on here among the flags (checked to be
    # True or False by _config_from), and a parameter of default_passes() that adds its pass.
    try:
        config = _config_from(mode, only, pipeline, verify, report=report, remarks=remarks,
                              assign_layouts=assign_layouts, resolve_auto_layouts=resolve_auto_layouts,
                              apply_advice=apply_advice)
    except (OptionError, PipelineError) as error:
        raise PluginError(str(error)) from None
    given = {"only": only, "pipeline": pipeline, "verify": verify, "report": report, "remarks": remarks,
             "assign_layouts": assign_layouts, "resolve_auto_layouts": resolve_auto_layouts,
             "apply_advice": apply_advice}
    config = replace(config, enable_options=_non_default_options(given))
    _switch_to(config)
    return config


def _non_default_options(given: dict) -> dict:
    """enable()'s keyword arguments that differ from its defaults, as JSON values (a sequence of
    methods as ``"shuffle,shared"``, an enum as its word)."""
    defaults = {name: parameter.default for name, parameter in inspect.signature(enable).parameters.items()}
    options = {}
    for name, value in given.items():
        if isinstance(value, (list, tuple)):
            value = ",".join(getattr(item, "value", str(item)) for item in value)
        value = getattr(value, "value", value)
        if value != getattr(defaults[name], "value", defaults[name]):
            options[name] = value
    return options


def _config_from(mode, only, pipeline, verify, **flags: bool) -> PluginConfig:
    """``enable()``'s arguments, read into their types, as a configuration.  ``flags``: the
    boolean options, each checked to be True or False."""
    mode = parse_word(Mode, mode, "mode", "mode")
    verify = parse_word(VerifyLevel, verify, "verify", "verify level")
    flags = {name: parse_flag(value, name) for name, value in flags.items()}
    resolve = flags.pop("resolve_auto_layouts", True)
    advice = flags.pop("apply_advice", False)
    if only is not None:
        given, only = only, parse_methods(only, "only")
        if not only:   # enable(only="") names nothing; leave out ``only`` for the default methods
            raise OptionError(f"only={given!r}: expected a comma-separated list of "
                              f"{', '.join(m.value for m in Method)}")
    if pipeline is None:
        passes = default_passes(mode, only or (), verify=verify, **flags)
    elif not isinstance(pipeline, str):
        raise OptionError(f"pipeline must be a pipeline string such as 'll-lower-conversions', "
                          f"got {type(pipeline).__name__}")
    else:
        try:
            passes = tuple(parse_pipeline(pipeline))
        except PipelineError as e:
            raise PipelineError(f"pipeline '{pipeline}': {e}") from None
    return PluginConfig(mode, passes, flags["remarks"], resolve, advice)


def disable() -> None:
    """Back to stock Triton for kernels compiled from now on."""
    _switch_to(None)


@contextlib.contextmanager
def enabled(mode: Union[Mode, str] = Mode.LINEAR, **options):
    """``with linear_layouts.enabled(): ...`` - the plugin on inside the block only; afterwards
    the setting from before the block (off, or an outer block's) is back."""
    previous = _config
    config = enable(mode, **options)
    try:
        yield config
    finally:
        _switch_to(previous)


def _switch_to(config: Optional[PluginConfig]) -> None:
    """Make ``config`` (None: off) what kernels compiled from now on get."""
    global _config
    if config is None and _config is None and not _trampoline_installed:
        return
    import triton

    previous, _config = _config, config
    if config is not None:
        _install_trampoline(triton.knobs.runtime)
        cache_dirs.use_plugin_directories(config.cache_hash, hook_consulted_for_cache_key())
        environment.export(config.mode.value, config.enable_options)
    else:
        _remove_trampoline_if_on_top(triton.knobs.runtime)
        cache_dirs.restore_stock_directories()
        environment.unexport()
    cache_hits.install(config is not None and config.remarks)
    if config != previous:
        forget_jit_kernels()
        inductor.follow_setting_change()


def _trampoline_in_chain(current) -> bool:
    """Whether Triton's hook ``current`` leads to our trampoline.  Another tool's hook cannot be
    looked into: one installed after ours is taken to call ours (that is what a wrapping hook
    does).  But an empty slot, or the very hook ours was installed over, cannot lead to ours:
    someone put back what they had found before us."""
    if current is _stages_hook:
        return True
    return _trampoline_installed and current is not None and current is not _hook_below


def _install_trampoline(runtime) -> None:
    """Put our trampoline into Triton's hook slot over whatever is there, unless it is in the
    chain already (then the hook below it stays the one it recorded when it went in)."""
    global _trampoline_installed, _hook_below
    current = runtime.add_stages_inspection_hook
    if _trampoline_in_chain(current):
        _trampoline_installed = True
        return
    _hook_below = current
    runtime.add_stages_inspection_hook = _stages_hook
    _trampoline_installed = True


def _remove_trampoline_if_on_top(runtime) -> None:
    """Take our trampoline out of the slot if it is the hook there, putting back exactly what
    was there before it (a profiler's or another plugin's hook, or None).  Wrapped by a hook
    installed after it, it stays, and passes through while the plugin is off."""
    global _trampoline_installed, _hook_below
    current = runtime.add_stages_inspection_hook
    if current is _stages_hook:
        runtime.add_stages_inspection_hook = _hook_below
    elif _trampoline_in_chain(current):
        return
    _trampoline_installed, _hook_below = False, None


def enable_from_environment() -> Optional[PluginConfig]:
    """Honour ``LINEAR_LAYOUTS`` (``1``/``linear`` or ``legacy`` turns the plugin on; unset,
    empty or ``0`` leaves it off) with ``LINEAR_LAYOUTS_OPTIONS`` (``enable()``'s keyword
    arguments as JSON); see ``passes.environment``."""
    try:
        mode = environment.requested_mode()
        options = environment.requested_options()
    except environment.SettingError as error:
        raise PluginError(str(error)) from None
    if mode is None:
        return None
    modes = [m.value for m in Mode]
    if mode not in modes + ["report"]:
        raise PluginError(f"{environment.VARIABLE}={mode!r}: expected 1, {', '.join(modes)} or report "
                          f"(0 or unset: off)")
    if mode == "report":
        raise PluginError(f"LINEAR_LAYOUTS='report': report is for programs that import linear_layouts, "
                          f"or: python -m linear_layouts report")
    unknown = sorted(set(options) - set(inspect.signature(enable).parameters) - {"mode"})
    if unknown or "mode" in options:
        raise PluginError(f"{environment.OPTIONS_VARIABLE}: unknown option(s) {', '.join(unknown or ['mode'])}; "
                          f"expected keyword arguments of enable() (the mode is LINEAR_LAYOUTS itself)")
    return enable(mode, **options)


# --------------------------------------------------------------------------- in-memory caches

def forget_jit_kernels() -> None:
    """Forget the kernels ``@triton.jit`` functions keep in memory, so none compiled under the
    other setting is launched.  (On 3.7+ their keys already differ; clearing is harmless.)"""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return
    with warnings.catch_warnings():  # isinstance() on some torch objects warns about deprecations
        warnings.simplefilter("ignore")
        for obj in gc.get_objects():
            try:
                is_jit_function = isinstance(obj, JITFunction)
            except ReferenceError:   # a weak proxy whose object is gone (torch keeps some)
                continue
            if is_jit_function:
                caches = getattr(obj, "device_caches", None)
                if caches is not None:
                    caches.clear()


# --------------------------------------------------------------------------- the hook

@dataclass(frozen=True)
class Fallback:
    """One kernel that Triton compiled *without* our islands because something after our
    passes failed on them (``stage``: ``our passes``, ``llir``, ``ptx``, ``cubin``, ``amdgcn``,
    ``hsaco``); ``reason`` is the first line of the error.  After a ``cubin``/``hsaco`` failure
    the binary is stock's, but the kernel's ``asm["ptx"]``/``asm["amdgcn"]`` still show the text
    with our islands that the assembler rejected (Triton records every stage as it runs)."""

    kernel: str
    stage: str
    reason: str


@dataclass
class PluginStats:
    """What the drop-in did since the process started (or since ``reset_stats()``)."""

    kernels: int = 0                 # kernels that went through our pipeline
    kernels_with_islands: int = 0    # ... and came back with at least one island
    conversions: int = 0             # ttg.convert_layout ops in those kernels' TTGIR
    islands: int = 0                 # ... of them replaced by our islands (fallbacks not counted)
    local_loads: int = 0             # ttg.local_load ops in the kernels that went through it
    local_loads_lowered: int = 0     # ... of which replaced by our islands (only=...,local_load)
    # ttg.local_store and ttg.local_alloc-with-a-source ops replaced by our islands
    # (only=...,local_store,local_alloc)
    local_writes_lowered: int = 0
    # Guard barriers our islands put around their shared-memory accesses for Triton's sake, and
    # how many of them the LLVM IR showed redundant with Triton's own (passes.barriers.guard_barriers)
    guard_barriers: int = 0
    guard_barriers_dropped: int = 0
    # Kernels whose layouts ll-assign-layouts re-chose (enable(assign_layouts=True) or a pipeline
    # with it), and the ttg.convert_layout ops left in them after it: Triton's asm["ttgir"] is
    # the TTGIR before our passes, so this is where an assignment's effect can be counted.
    kernels_assigned: int = 0
    conversions_after_assignment: int = 0
    # Gluon kernels whose automatic layouts ll-resolve-auto-layouts resolved
    # (enable(resolve_auto_layouts=True)); a kernel where it failed is a fallback instead
    auto_layouts_resolved: int = 0
    # Gluon kernels compiled with the layout advice applied (enable(apply_advice=True)) and
    # changed by it; a kernel where it failed is a fallback instead
    advice_applied: int = 0
    fallbacks: list = None           # Fallback records: compiled without our islands

    def __post_init__(self):
        if self.fallbacks is None:
            self.fallbacks = []

    def summary(self) -> str:
        lines = [f"linear-layouts: {self.kernels} kernels, {self.kernels_with_islands} with islands, "
                 f"{self.islands} of {self.conversions} conversions lowered by us, "
                 f"{len(self.fallbacks)} kernels compiled without them after a failure"
                 + (f"; {self.local_loads_lowered} of {self.local_loads} local loads lowered" if self.local_loads else "")
                 + (f"; {self.local_writes_lowered} local stores and allocations with a source lowered"
                    if self.local_writes_lowered else "")
                 + (f"; {self.guard_barriers_dropped} of {self.guard_barriers} guard barriers dropped as redundant"
                    if self.guard_barriers else "")]
        lines += [f"  {f.kernel}: {f.stage}: {f.reason}" for f in self.fallbacks]
        return "\n".join(lines)


_stats = PluginStats()
# (kernel name, digest of its TTGIR) of every compiled specialization warned about: one warning
# each, however often it is compiled, and one for each specialization of a kernel name.
_warned_specializations: set = set()


def stats() -> PluginStats:
    """Counts of the drop-in's work, fallbacks included (``linear_layouts.stats()``)."""
    return _stats


def combined_stats(directory: str) -> PluginStats:
    """The counts every process of a program wrote into ``directory`` (``LINEAR_LAYOUTS_STATS_DIR``,
    see ``passes.shared_stats``), added up."""
    total = PluginStats()
    for snapshot in shared_stats.read_snapshots(directory):
        for name, value in snapshot.items():
            if name == "fallbacks":
                total.fallbacks += [Fallback(**f) for f in value]
            elif isinstance(getattr(total, name, None), int):
                setattr(total, name, getattr(total, name) + value)
    return total


def _share_stats() -> None:
    shared_stats.write_snapshot(asdict(_stats))


def reset_stats() -> None:
    global _stats
    _stats = PluginStats()
    _warned_specializations.clear()


shared_stats.reset_in_forked_children(reset_stats)


# Signals that stop a compile from outside (Ctrl-C, a harness's time limit, a closed terminal).
# A tool killed by one of them did not fail on our code: the compile stops, as without us.
# SIGKILL is left out: the kernel's own memory use (the out-of-memory killer) sends it too.
_INTERRUPTING_SIGNALS = frozenset(int(getattr(signal, name)) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                                  if hasattr(signal, name))
_ERROR_CODE = re.compile(r"error code (-?\d+)")


def interrupting_signal(error: BaseException) -> Optional[int]:
    """The signal that stopped a tool (ptxas) during the failed stage, or None where the stage
    failed on its own.  Triton raises its own error (``PTXASError: `ptxas` failed with error
    code -2``) from inside the ``except`` of the tool's ``CalledProcessError``; its return code
    is -N for a tool killed by signal N, 128+N for one whose shell wrapper was.  Example: Ctrl-C
    during ptxas gives -2 (SIGINT): an interruption, never a fallback."""
    seen = error
    while seen is not None:
        code = getattr(seen, "returncode", None)
        if code is None and (match := _ERROR_CODE.search(str(seen))):
            code = int(match.group(1))
        if isinstance(code, int):
            number = -code if code < 0 else code - 128
            if number in _INTERRUPTING_SIGNALS:
                return number
        seen = seen.__cause__ or seen.__context__
    return None


def _compile_without_islands(kernel: str, ttgir: str, stage: str, error: BaseException, remarks: bool,
                             stock_compile, instead: str = "compiled it with stock Triton's lowering instead"):
    """``stock_compile()``: Triton's own compile of the kernel (from its TTGIR, without our
    islands) up to the stage that failed with them.  Where it succeeds, the kernel is a
    fallback: recorded, and warned about once per specialization.  Where it fails too, the
    failure is not ours: Triton's own error goes to the caller, as it would without the plugin
    (not chained to ours), and nothing is recorded.  ``ttgir`` (Triton's TTGIR of the kernel)
    tells specializations of one kernel name apart.  A stage stopped by a signal from outside
    (:func:`interrupting_signal`) is no failure of ours: its error goes to the caller at once,
    with no stock compile and nothing recorded."""
    if interrupting_signal(error) is not None:
        raise error
    try:
        value = stock_compile()
    except Exception as stock_error:
        raise stock_error from None
    _record_fallback(kernel, ttgir, stage, error, remarks, instead)
    return value


def _first_line(error: BaseException) -> str:
    return (str(error).strip() or type(error).__name__).splitlines()[0][:300]


def _record_fallback(kernel: str, ttgir: str, stage: str, error: BaseException, remarks: bool,
                     instead: str = "compiled it with stock Triton's lowering instead") -> None:
    reason = _first_line(error)
    _stats.fallbacks.append(Fallback(kernel, stage, reason))
    what = "failed" if stage in (RESOLVE_STAGE, ADVICE_STAGE) else "failed with our islands"
    message = f"linear-layouts: kernel {kernel}: {stage} {what} ({reason}); {instead}"
    specialization = (kernel, hashlib.sha256(ttgir.encode()).hexdigest())
    if specialization not in _warned_specializations:
        _warned_specializations.add(specialization)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    if remarks:
        print(f"remark: [linear-layouts] {message}", file=sys.stderr)


def _stages_hook(*args):
    """Triton's stages hook: our trampoline (see the module docstring).  The hook installed
    before it (a profiler's, another plugin's) runs first and may change the stages; then, while
    the plugin is on, we wrap the ``llir`` stage it leaves.  For the 3.7+ cache-key call (no
    arguments) our key extends that hook's key.  While the plugin is off it only passes through."""
    if getattr(_trampoline_running, "active", False):
        # Called again from inside its own call, through a hook that leads back here: the
        # outer call does our part and calls the hooks below; this one ends the cycle.
        return None if args else ("", "")
    config, below = _config, _hook_below
    _trampoline_running.active = True
    try:
        result = below(*args) if below is not None else None
    finally:
        _trampoline_running.active = False
    if not args:  # 3.7+: asked for the cache key
        below_key, below_hash = result if result is not None else ("", "")
        if config is None:
            return below_key, below_hash
        if not below_key:
            return config.cache_key, config.cache_hash
        return (f"{below_key}|{config.cache_key}",
                hashlib.sha256(f"{below_hash}|{config.cache_hash}".encode()).hexdigest())
    backend, stages, options, language, capability = (list(args) + [None] * 5)[:5]
    if config is None or stages is None or "llir" not in stages:
        return result
    if config.resolve_auto_layouts and "ttgir" in stages and _is_gluon(language):
        stages["ttgir"] = _resolving_ttgir(stages["ttgir"], config)
    if config.apply_advice and "ttgir" in stages and _is_gluon(language):
        stages["ttgir"] = _advised_ttgir(stages["ttgir"], config)
    _wrap_stages(stages, config)
    return result


RESOLVE_STAGE = "ll-resolve-auto-layouts"
ASSIGN_LAYOUTS = "ll-assign-layouts"     # passes.assign.assign_layouts.AssignLayouts.name


def _is_gluon(language) -> bool:
    """Triton's ``Language.GLUON`` (3.6 and 3.9 name it so)."""
    return str(getattr(language, "name", language)).upper().endswith("GLUON")


def _resolving_ttgir(stock_ttgir, config: PluginConfig):
    """Gluon's ``ttgir`` stage with ``ll-resolve-auto-layouts`` first (see
    :mod:`.resolve_auto_layouts`): Triton's own resolution then finds no automatic layout left.
    Never a failure where stock compiles: if our pass or the stage after it fails, the stage
    runs on Triton's own module (its resolution), with a warning and a fallback record; where
    that fails too, Triton's error goes to the caller."""
    from .gluon.resolve_auto_layouts import METADATA_KEY, Resolution, has_auto_layouts

    def ttgir(src, metadata):
        text = src.str()
        if not has_auto_layouts(text):
            return stock_ttgir(src, metadata)
        name = _kernel_name(text)
        try:
            resolved, resolution = _resolve_auto_layouts(src, text, name, config.remarks)
            value = stock_ttgir(resolved, metadata)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            # what the report says of this kernel (the metadata goes into Triton's cache with it)
            metadata[METADATA_KEY] = Resolution(reason=_first_line(error)).record()
            return _compile_without_islands(name, text, RESOLVE_STAGE, error, config.remarks,
                                            lambda: stock_ttgir(src, metadata),
                                            "resolved its automatic layouts with Triton's own resolution instead")
        metadata[METADATA_KEY] = resolution.record()
        _stats.auto_layouts_resolved += 1
        return value
    return ttgir


ADVICE_STAGE = "ll-apply-advice"


def _advised_ttgir(ttgir_stage, config: PluginConfig):
    """Gluon's ``ttgir`` stage, then ``ll-apply-advice`` on its result (the author's layouts,
    final).  Never a failure where stock compiles: if the pass fails, the stage's own result is
    used, with a warning and a fallback record."""
    from .advice.apply_advice import apply_advice

    def ttgir(src, metadata):
        value = ttgir_stage(src, metadata)
        text = value.str()
        name = _kernel_name(text)
        try:
            with cyclic_gc_paused():
                module = parse_module(text, filename=f"<{name}>", safe=False, context=value.context, printed=True)
                applied = apply_advice(module)
                if config.remarks:
                    for line in applied.remarks():
                        print(f"<{name}>: remark: [{ADVICE_STAGE}] {line}", file=sys.stderr)
                if not applied.rounds:
                    return value
                advised = triton_module_from_text(module.text_for_triton(), value.context)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            return _compile_without_islands(name, text, ADVICE_STAGE, error, config.remarks, lambda: value,
                                            "compiled as written, without the advice")
        _stats.advice_applied += 1
        return advised
    return ttgir


# Whether the report records compiles (``passes.recorder`` says so): our resolution then prices
# Triton's own too, for the report's "Automatic layouts" section.
_report_recording = False


def set_report_recording(on: bool) -> None:
    global _report_recording
    _report_recording = on


def _resolve_auto_layouts(src, text: str, name: str, remarks: bool):
    """Our resolution of the Gluon module ``src`` (given as ``text``), as a new Triton module in
    its context, and the :class:`Resolution`; ``src`` itself is not modified.  Triton's own
    resolution is priced too (a subprocess) only for the remarks or the report."""
    from .gluon.resolve_auto_layouts import resolve_module

    compare = remarks or _report_recording
    with cyclic_gc_paused():
        module = parse_module(text, filename=f"<{name}>", safe=False, context=src.context, printed=True)
        resolution = resolve_module(module, compare=compare)
        if not resolution.resolved:
            raise RuntimeError(resolution.reason)
        if remarks:
            for line in resolution.remarks():
                print(f"<{name}>: remark: [ll-resolve-auto-layouts] {line}", file=sys.stderr)
        return triton_module_from_text(module.text_for_triton(), src.context), resolution


def _wrap_stages(stages: dict, config: PluginConfig) -> None:
    """Run our pipeline before ``llir`` (and, on its LLVM IR, drop the guard barriers Triton's own
    make redundant: ``guard_barriers``); if ``llir`` or any later stage fails on a module with
    our islands, compile the kernel again from Triton's own TTGIR without them (and if that
    fails too, let Triton's own error through: :func:`_compile_without_islands`).

    Why this is safe: our pipeline parses Triton's module into a new one and never touches the
    original, so the original is still Triton's exact TTGIR when a later stage fails.  The
    stages after ``llir`` (``ptx``/``cubin`` or ``amdgcn``/``hsaco``) are pure functions of
    their input and the metadata, which ``make_llir`` fills again on the stock rerun."""
    _WrappedStages(stages, config).install(stages)


@dataclass
class _KernelCompile:
    """One kernel's trip through the wrapped stages: what a later stage needs to compile it
    again without our islands, and what is booked in the stats once its last stage succeeds."""

    stock_src: object = None           # Triton's own TTGIR module
    ttgir: str = ""                    # ... as text (tells specializations apart in warnings)
    name: str = "kernel"
    lowered: Optional["PipelineResult"] = None   # set while the kernel carries our islands
    guards: int = 0                    # guard barriers in its LLVM IR
    guards_dropped: int = 0            # ... of which dropped as redundant


class _WrappedStages:
    """The stages of one compilation with ours around them (see :func:`_wrap_stages`)."""

    def __init__(self, stages: dict, config: PluginConfig):
        self.original = dict(stages)
        self.config = config
        names = list(stages)
        self.after_llir = names[names.index("llir") + 1:]
        self.last_stage = (self.after_llir or ["llir"])[-1]
        self.kernel = _KernelCompile()

    def install(self, stages: dict) -> None:
        stages["llir"] = self.llir
        for name in self.after_llir:
            stages[name] = self._later_stage(name)
        if shared_stats.directory() is not None:
            stages[self.last_stage] = _then_share_stats(stages[self.last_stage])

    def llir(self, src, metadata):
        names = _op_names(src)
        _stats.kernels += 1
        _stats.conversions += names.count("ttg.convert_layout")

        def stock_llir():
            return self.original["llir"](src, metadata)

        if not _has_work_for(self.config, names):
            # Nothing for us: our passes would only add attributes, and a module without
            # islands is compiled from Triton's own TTGIR anyway.  No print, no parse: the op
            # names come from a walk of the module (about 0.02 ms where a print takes 0.7 ms).
            self.kernel = _KernelCompile(stock_src=src)
            return stock_llir()
        text = src.str()
        kernel = self.kernel = _KernelCompile(stock_src=src, ttgir=text, name=_kernel_name(text))
        try:
            lowered = run_plugin_pipeline(src, self.config, {"name": kernel.name}, text)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            return self._fall_back("our passes", error, stock_llir)
        if lowered.islands == 0 and not lowered.assigned:
            return stock_llir()
        try:
            result = self.original["llir"](lowered.module, metadata)
        except Exception as error:  # Triton's llir stage on our islands: fall back, never fail the kernel
            return self._fall_back("llir", error, stock_llir)
        kernel.lowered = lowered
        # Our guard barriers that Triton's own barriers make redundant go (see guard_barriers);
        # every guard is counted, a warp group's named ones too (those are never dropped).
        kernel.guards = result.count(GUARD_MARK) if isinstance(result, str) else 0
        if kernel.guards:
            result, kernel.guards_dropped = prune_guard_barriers(result)
        _stats.local_loads += lowered.local_loads
        self._book_if_last("llir")
        return result

    def _later_stage(self, name: str):
        def run(src, metadata):
            try:
                value = self.original[name](src, metadata)
            except Exception as error:  # a later Triton stage: fall back if our islands are in the kernel
                if self.kernel.lowered is None or self.kernel.stock_src is None:
                    raise
                self.kernel.lowered = None
                return self._fall_back(name, error, lambda: self._stock_up_to(name, metadata))
            self._book_if_last(name)
            return value
        return run

    def _stock_up_to(self, name: str, metadata):
        """Triton's own compile of the kernel, from its TTGIR, up to stage ``name``."""
        value = self.original["llir"](self.kernel.stock_src, metadata)
        for stage in self.after_llir[:self.after_llir.index(name) + 1]:
            value = self.original[stage](value, metadata)
        return value

    def _fall_back(self, stage: str, error: BaseException, stock_compile):
        return _compile_without_islands(self.kernel.name, self.kernel.ttgir, stage, error, self.config.remarks,
                                        stock_compile)

    def _book_if_last(self, stage: str) -> None:
        """After the last stage, a kernel that still carries our islands is booked, once."""
        kernel = self.kernel
        if stage != self.last_stage or kernel.lowered is None:
            return
        _stats.kernels_with_islands += 1
        _stats.islands += kernel.lowered.conversions_lowered
        _stats.local_loads_lowered += kernel.lowered.local_loads_lowered
        _stats.local_writes_lowered += kernel.lowered.local_writes_lowered
        _stats.guard_barriers += kernel.guards
        _stats.guard_barriers_dropped += kernel.guards_dropped
        if kernel.lowered.assigned:
            _stats.kernels_assigned += 1
            _stats.conversions_after_assignment += kernel.lowered.conversions_after_assignment


def _then_share_stats(stage):
    """The kernel's last stage, then this process's counts written for the program's total."""
    def run(src, metadata):
        try:
            return stage(src, metadata)
        finally:
            _share_stats()
    return run


def _has_work_for(config: PluginConfig, op_names: Sequence[str]) -> bool:
    """The module (the names of its ops) holds an op the pipeline may replace (an allocation
    counts whether or not it has a source: the pipeline looks)."""
    names = set(op_names)
    local_ops = bool(names & {"ttg.local_load", "ttg.local_store", "ttg.local_alloc"})
    return "ttg.convert_layout" in names or (config.owns_local_loads and local_ops)


def _op_names(module) -> list[str]:
    """The name of every op of a Triton module, in walk order (no print of the module)."""
    names: list[str] = []
    module.walk(lambda op: names.append(op.get_name()))
    return names


# %5 = ttg.convert_layout %4 : tensor<...> -> tensor<...>  (one op per match; names in loc()
# strings are quoted and never follow "= ")
_CONVERT_OP = re.compile(r"= ttg\.convert_layout\b")


def _kernel_name(text: str) -> str:
    """The first public function of a TTGIR module (Triton's kernel), for messages."""
    m = re.search(r"tt\.func (?:public )?@([\w$.]+)", text)
    return m.group(1) if m else "kernel"


@dataclass(frozen=True)
class PipelineResult:
    """What :func:`run_plugin_pipeline` did to one kernel."""

    module: object                  # the Triton module for the next stage (the one given if nothing changed)
    conversions_lowered: int = 0    # ttg.convert_layout ops replaced by islands
    local_loads: int = 0            # ttg.local_load ops in the kernel (counted when the pipeline owns them)
    local_loads_lowered: int = 0    # ... of which replaced by islands
    local_writes_lowered: int = 0   # ttg.local_store and ttg.local_alloc-with-a-source ops replaced
    remarks: tuple[str, ...] = ()   # the passes' remarks and report lines
    assigned: bool = False          # ll-assign-layouts rewrote the module: ours even without islands
    conversions_after_assignment: int = 0   # ttg.convert_layout ops in the module it rewrote

    @property
    def islands(self) -> int:
        """Every island in the module: one per op replaced."""
        return self.conversions_lowered + self.local_loads_lowered + self.local_writes_lowered


def run_plugin_pipeline(triton_module, config: PluginConfig, metadata=None,
                        text: Optional[str] = None) -> PipelineResult:
    """Run ``config``'s pipeline on a Triton TTGIR module; return what it did: a new Triton
    module (in the same context) for the next stage and how many ops islands replaced (when no
    pass rewrote the module's text: the module given, and none).  The module given is not
    modified.  Errors name the kernel and say what failed."""
    name = (metadata or {}).get("name", "kernel") if isinstance(metadata, dict) else "kernel"
    if text is None:
        text = triton_module.str()
    with cyclic_gc_paused():
        return _run_plugin_pipeline(triton_module, config, name, text)


@contextlib.contextmanager
def cyclic_gc_paused():
    """Python's cyclic garbage collector off while our pipeline runs (back on afterwards, unless
    it was off before).  The module snapshot is a graph of parent links (ops, blocks, regions),
    thousands of young objects for a large kernel, which the collector would traverse
    again and again as the passes allocate, promoting them to older generations (whose
    collections scan the whole heap) although they all die together when the pipeline ends.
    Paused, they are collected once, at the next collection after it: on the corpus the
    collector's time over whole compiles falls from 62 to 19 ms per 25 kernels.  What is
    computed is unchanged.  Pipelines of several threads at once: the last one to end turns the
    collector back on."""
    global _pipelines_running, _gc_was_on
    with _gc_lock:
        if _pipelines_running == 0:
            _gc_was_on = gc.isenabled()
            gc.disable()
        _pipelines_running += 1
    try:
        yield
    finally:
        with _gc_lock:
            _pipelines_running -= 1
            if _pipelines_running == 0 and _gc_was_on:
                gc.enable()


# How many pipelines run now (in any thread), and whether the collector was on when the first
# of them began (then the last one to end turns it back on).
_pipelines_running = 0
_gc_was_on = False
_gc_lock = threading.Lock()


def _run_plugin_pipeline(triton_module, config: PluginConfig, name: str, text: str) -> PipelineResult:
    """:func:`run_plugin_pipeline` after the kernel's name and text are known."""
    remarks = _RemarkLines(sys.stderr if config.remarks or config.reports else None)
    try:
        if _reads_only(config):
            # The passes only read the module and splice islands into its text: a snapshot of
            # Triton's module itself, no copy parsed (a compile that falls back gets it unchanged).
            module = snapshot_of(triton_module, text, f"<{name}>")
        else:
            # Parsed into the compilation's own context: its dialects are loaded already.
            module = parse_module(text, filename=f"<{name}>", safe=False,
                                  context=getattr(triton_module, "context", None), printed=True)
        context = PassContext(report_stream=remarks)
        assigned = {}

        def after_pass(done, current):
            # ll-assign-layouts changes which conversions exist: islands are counted against
            # the conversions it left, and a module it rewrote is ours even without islands.
            if done.name == ASSIGN_LAYOUTS and current.has_rewrites:
                assigned["text"] = current.print()

        context.after_pass = after_pass
        run_pipeline(module, list(config.passes), context)
        # No pass rewrote anything, so no island: the hook compiles Triton's own module.
        # (Attributes a pass only set are not worth a print and a parse into Triton.)
        new_text = module.text_for_triton() if module.has_rewrites else text
    except IRError as e:
        raise RuntimeError(f"linear-layouts: kernel {name}: {e}") from None
    counts = _replaced_ops(assigned.get("text", text), new_text, config.owns_local_loads)
    if new_text is not text:
        triton_module = triton_module_from_text(new_text, triton_module.context)
    return PipelineResult(triton_module, remarks=tuple(remarks.lines), assigned="text" in assigned,
                          conversions_after_assignment=len(_CONVERT_OP.findall(assigned.get("text", ""))), **counts)


def _reads_only(config: PluginConfig) -> bool:
    """Every pass of the pipeline only reads the module and rewrites its text
    (``ll-lower-conversions``, the default): a read-only snapshot of Triton's own module will do
    (``snapshot.snapshot_of``)."""
    return all(type(p) is LowerConversions for p in config.passes)


def _replaced_ops(text: str, new_text: str, owns_local_ops: bool) -> dict[str, int]:
    """How many ops of each kind islands replaced, counted on the text before and after (each
    island replaces one op; counting casts would not do: a shared-memory island holds two or
    more, one of them its scratch buffer's).  The same text: none (not counted)."""
    if new_text is text:
        return {"conversions_lowered": 0} if not owns_local_ops else \
            {"conversions_lowered": 0, "local_loads": text.count("= ttg.local_load "), "local_loads_lowered": 0,
             "local_writes_lowered": 0}
    conversions = len(_CONVERT_OP.findall(text)) - len(_CONVERT_OP.findall(new_text))
    if not owns_local_ops:
        return {"conversions_lowered": conversions}
    loads = text.count("= ttg.local_load ")
    writes = sum(text.count(op) - new_text.count(op) for op in ("ttg.local_store ", "= ttg.local_alloc %"))
    return {"conversions_lowered": conversions, "local_loads": loads,
            "local_loads_lowered": loads - new_text.count("= ttg.local_load ") if loads else 0,
            "local_writes_lowered": writes}


class _RemarkLines:
    """The passes' report stream: keeps every line, and copies it to ``forward`` (stderr when
    remarks or reports are on; None: kept only)."""

    def __init__(self, forward=None):
        self.forward = forward
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.extend(line for line in text.splitlines() if line)
        if self.forward is not None:
            self.forward.write(text)
        return len(text)

    def flush(self) -> None:
        if self.forward is not None:
            self.forward.flush()
