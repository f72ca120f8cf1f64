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
  sub-directory of its own named after that same key (``passes.drop_in.cache_dirs``, which does the
  same for torch.compile's caches under every release), and every ``@triton.jit`` function's
  in-memory kernel cache is cleared whenever the plugin is switched on or off.

Processes started later (torch.compile's compile workers, spawned workers, subprocesses) get
the setting through the environment: ``enable()`` writes ``LINEAR_LAYOUTS`` and
``LINEAR_LAYOUTS_OPTIONS`` (``passes.drop_in.environment``), the package's start-up hook turns the
plugin on in them right after they import triton (``passes.drop_in.after_triton``), and a pool of
torch.compile workers already running is restarted (``passes.drop_in.inductor``).

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

This module is the adapter from a configuration to Triton's stages: the public API
(``enable``, ``disable``, ``enabled``), the trampoline in Triton's hook slot, and the switch
between settings.  The rooms it uses, one job each:

* ``plugin_config``: ``PluginConfig`` (the passes, the Gluon switches, the cache key);
* ``stage_wrappers``: ``llir`` and the stages after it, with our pipeline (``plugin_pipeline``);
* ``layout_stages``: Gluon's ``ttgir`` stage with our resolution and the advice;
* ``plugin_stats``: the counts and the fallbacks (``shared_stats``: across processes);
* ``cache_dirs``, ``cache_hits``: caches of our own, remarks for kernels from Triton's cache;
* ``environment``, ``after_triton``, ``inductor``: the setting in other processes.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import threading
import warnings
from dataclasses import replace
from typing import Optional, Union

from . import cache_dirs, cache_hits, enable_options, environment, inductor
from .layout_stages import advised_ttgir, is_gluon, resolving_ttgir, set_report_recording  # noqa: F401
from ..ir.bindings import installed_conventions
from ..options import Mode, OptionError, VerifyLevel
from ..pipeline import PipelineError
# The rooms of the drop-in, re-exported here where callers know them by this module's name.
from .plugin_config import (PluginConfig, PluginError, config_from, default_passes,  # noqa: F401
                            environment_switches, non_default_options)
from .plugin_pipeline import ASSIGN_LAYOUTS, PipelineResult, cyclic_gc_paused, run_plugin_pipeline  # noqa: F401
from .plugin_stats import (Fallback, PluginStats, combined_stats, interrupting_signal, reset_stats,  # noqa: F401
                           stats)
from .stage_wrappers import wrap_stages as _wrap_stages


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


def enable(mode: Union[Mode, str] = Mode.LINEAR, **options) -> PluginConfig:
    # The options, their defaults and their docs are declared once, in passes.drop_in.enable_options
    # (this function's signature and docstring are made from it, below).  Every value is read
    # into its type in config_from (passes.options); a bad one, or a name that is no option, is
    # a PluginError naming it, and the plugin stays as it was.
    problem = enable_options.unknown_names_problem(options)
    if problem:
        raise PluginError(problem)
    # The settings of the whole process (in_place, stock_gate, ...: environment.settings()): those
    # given here win over the environment's; the others stay as the environment has them.
    settings_given = {name: value for name, value in options.items() if name in enable_options.SETTING_NAMES}
    options = {name: value for name, value in options.items() if name not in settings_given}
    try:
        typed_settings = {name: environment.read_setting(name, value) for name, value in settings_given.items()}
        environment.settings(given=typed_settings)   # the environment's too: a bad one is named here
    except environment.SettingError as error:
        raise PluginError(str(error)) from None
    given = {**{name: default for name, default in enable_options.DEFAULTS.items()
                if name != "mode" and name not in enable_options.SETTING_NAMES}, **options}
    try:
        config = config_from(mode, given["only"], given["pipeline"], given["verify"], report=given["report"],
                             remarks=given["remarks"], assign_layouts=given["assign_layouts"],
                             resolve_auto_layouts=given["resolve_auto_layouts"],
                             apply_advice=given["apply_advice"], advice_findings=given["advice_findings"])
    except (OptionError, PipelineError) as error:
        raise PluginError(str(error)) from None
    config = replace(config, enable_options={**non_default_options(given, enable_options.DEFAULTS), **settings_given},
                     settings=tuple(sorted(typed_settings.items())))
    _switch_to(config)
    return config


enable.__signature__ = enable_options.signature().replace(return_annotation="PluginConfig")
enable.__doc__ = enable_options.docstring("Run our passes in every Triton kernel compiled from now on.")


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
    environment.use_given_settings(dict(config.settings) if config is not None else {})
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
    arguments as JSON); see ``passes.drop_in.environment``."""
    try:
        mode = environment.requested_mode()
        options = environment.requested_options()
    except environment.SettingError as error:
        raise PluginError(str(error)) from None
    if mode is None:
        return None
    problem = environment.mode_problem(mode)
    if problem:
        raise PluginError(problem)
    if mode == "report":
        raise PluginError("LINEAR_LAYOUTS='report': report is for programs that import linear_layouts, "
                          "or: python -m linear_layouts report")
    if "mode" in options:
        raise PluginError(f"{environment.OPTIONS_VARIABLE}: unknown option 'mode' (the mode is "
                          f"{environment.VARIABLE} itself)")
    problem = enable_options.unknown_names_problem(options, environment.OPTIONS_VARIABLE)
    if problem:
        raise PluginError(problem)
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
    if config.resolve_auto_layouts and "ttgir" in stages and is_gluon(language):
        stages["ttgir"] = resolving_ttgir(stages["ttgir"], config)
    if config.apply_advice and "ttgir" in stages and is_gluon(language):
        stages["ttgir"] = advised_ttgir(stages["ttgir"], config)
    _wrap_stages(stages, config)
    return result
