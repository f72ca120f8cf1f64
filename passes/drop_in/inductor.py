"""torch.compile (Inductor) and the plugin: its compile workers follow ``enable()``.

Inductor compiles Triton kernels in a pool of worker processes (a sidecar subprocess that forks
its workers, or forked or spawned workers: ``TORCHINDUCTOR_WORKER_START``).  Those processes
get the plugin from the environment (``passes.drop_in.environment``; the package's start-up hook turns
it on right after they import triton), and the environment is what their parent had when the
pool started.  ``enable()`` writes the environment; a pool started before it would compile
stock kernels for the rest of the program, so when the setting changes and a pool is up, it is
shut down here and the next compile starts a new one (torch's own
``shutdown_compile_workers``).  The main process compiles kernels itself while a pool starts.

Two things outlive a restart, and get a warning, once:

* functions torch.compile compiled before the change keep the kernels they were compiled with
  (``torch._dynamo.reset()`` compiles them again);
* a torch whose pool functions moved or were renamed: then only a setting made before the
  program starts reaches the workers (``LINEAR_LAYOUTS=1``).

Nothing here imports torch: a program that has not imported Inductor has no pool to restart.
"""

from __future__ import annotations

import sys
import warnings

_warned: set = set()


def follow_setting_change() -> None:
    """After ``enable()``, ``disable()`` or a change of configuration: workers started before
    compile with the new setting from their next kernel on."""
    async_compile = sys.modules.get("torch._inductor.async_compile")
    if async_compile is None:
        return
    pools = getattr(async_compile, "_pool_set", None)
    shutdown = getattr(async_compile, "shutdown_compile_workers", None)
    if pools is None or shutdown is None:
        _warn_once("no-restart", "linear-layouts: this torch's compile-worker pool cannot be restarted; kernels "
                                 "torch.compile builds in its workers follow the setting only if it is made "
                                 "before the program starts (LINEAR_LAYOUTS=1 python prog.py)")
        return
    if len(pools):
        shutdown()
    kernels = getattr(async_compile, "CompiledTritonKernels", None)
    if kernels is not None and hasattr(kernels, "cache_clear"):
        kernels.cache_clear()
    if _graphs_compiled() and "compiled-before" not in _warned:
        _warn_once("compiled-before", "linear-layouts: functions torch.compile compiled before this change keep "
                                      "the kernels they were compiled with; torch._dynamo.reset() compiles them "
                                      "again (or set the plugin up before compiling)")


def _graphs_compiled() -> bool:
    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", None) if utils is not None else None
    try:
        return bool(counters and counters["stats"]["unique_graphs"])
    except (KeyError, TypeError):
        return False


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, RuntimeWarning, stacklevel=4)
