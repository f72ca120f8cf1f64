"""What the plugin remembers within one process between compiles, and how to forget it.

Two kinds of memory:

* **Caches keyed by a kernel's contents**: layouts parsed from encoding texts
  (``passes.ir.layouts``), tensor types, shape-op layouts, the assignment's cost model
  (``passes.assign.layout_costs``: a conversion's plan cost, a reduction's, a load's), the planner's
  plans (``lowering.choosing.plan_memory.PROCESS_PLANS``, only while ``LINEAR_LAYOUTS_CACHE`` is on), the
  simulator's accepted islands in memory (``passes.islands.verified_islands``) and small tables of the
  simulator and the F2 algebra.  A kernel compiled a second time in the same process finds its
  layouts there: its second compile is faster than its first (measured: docs/compile-time.md,
  'What the small savings saved').
* **Data loaded once per process**: the choice model and the measured table (JSON files),
  the installed Triton's release and conventions.  Every compile uses them alike.

:func:`forget_kernels` empties the first kind, so that a benchmark of a *cold* compile
(``benchmarks/compile_time.py``, ``benchmarks/harness/compile_time_corpus.py``) measures what the first
compile of a kernel costs, not its repeats.  Every ``functools.lru_cache`` of the package is
found by looking, not listed by hand, so a cache added later is forgotten too unless it is one
of :data:`PROCESS_DATA`.
"""

from __future__ import annotations

import functools
import sys

# Loaders of per-process data (qualified names): kept by forget_kernels.
PROCESS_DATA = frozenset({
    "linear_layouts.lowering.choosing.fitted_model.load_model",
    "linear_layouts.lowering.choosing.measured_choices._load",
    "linear_layouts.passes.ir.bindings.installed_triton_version",
    "linear_layouts.passes.ir.bindings.installed_conventions",
})


def package_caches() -> dict[str, "functools._lru_cache_wrapper"]:
    """Every ``functools.lru_cache`` of the loaded modules of the package, by qualified name."""
    caches = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("linear_layouts"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, functools._lru_cache_wrapper) and getattr(value, "__module__", "") == name:
                caches[f"{name}.{value.__qualname__}"] = value
    return caches


def forget_kernels() -> int:
    """Empty every cache keyed by a kernel's contents (module docstring); return how many
    ``lru_cache`` caches were emptied."""
    emptied = 0
    for name, cache in package_caches().items():
        if name not in PROCESS_DATA:
            cache.cache_clear()
            emptied += 1
    plan_memory = sys.modules.get("linear_layouts.lowering.choosing.plan_memory")
    if plan_memory is not None:
        plan_memory.PROCESS_PLANS.forget()
    verified = sys.modules.get("linear_layouts.passes.islands.verified_islands")
    if verified is not None:
        verified.forget_in_memory()
    return emptied
