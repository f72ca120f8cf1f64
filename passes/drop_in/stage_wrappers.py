"""The ``llir`` stage and every stage after it, with our pipeline before ``llir``.

``wrap_stages`` puts them into the stages Triton assembles for one compile.  ``llir`` runs our
pipeline (``passes.drop_in.plugin_pipeline``) on Triton's TTGIR module, then Triton's ``make_llir`` on
the result, and drops the guard barriers that Triton's own barriers make redundant; a kernel
whose module holds nothing for us skips the pipeline (the op names come from a walk, no print).
If ``llir`` or a later stage fails on our islands, the kernel is compiled again from Triton's own
TTGIR without them (``plugin_stats.compile_without_islands``).  Counts are booked once the last
stage succeeds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional, Sequence

from ...lowering.emit.emit_nvidia import GUARD_MARK
from . import shared_stats
from ..barriers.guard_barriers import prune_guard_barriers
from ..barriers.partitions import WARP_SPECIALIZE
from ..lower_conversions import LowerConversions
from .plugin_config import PluginConfig
from .plugin_pipeline import PipelineResult, kernel_name, run_plugin_pipeline
from .plugin_stats import compile_without_islands, share_stats, stats
from .in_place import in_place_enabled, lower_in_place, lower_in_place_from_types
from ..ir.bindings import op_names
from ..ir.parsing import triton_module_from_text
from .types_first import every_conversion_is_stocks, lowering_asked_first


# Ops after which the in-place route reads the module as a snapshot (partitions, calls).
SNAPSHOT_NEEDED = frozenset({WARP_SPECIALIZE, "tt.call"})


def wrap_stages(stages: dict, config: PluginConfig) -> None:
    """Run our pipeline before ``llir`` (and, on its LLVM IR, drop the guard barriers Triton's own
    make redundant: ``guard_barriers``); if ``llir`` or any later stage fails on a module with
    our islands, compile the kernel again from Triton's own TTGIR without them (and if that
    fails too, let Triton's own error through: ``plugin_stats.compile_without_islands``).

    Why this is safe: our pipeline parses Triton's module into a new one and never touches the
    original, so the original is still Triton's exact TTGIR when a later stage fails.  The
    stages after ``llir`` (``ptx``/``cubin`` or ``amdgcn``/``hsaco``) are pure functions of
    their input and the metadata, which ``make_llir`` fills again on the stock rerun."""
    _WrappedStages(stages, config).install(stages)


@dataclass
class _KernelCompile:
    """One kernel's trip through the wrapped stages: what a later stage needs to compile it
    again without our islands, and what is booked in the stats once its last stage succeeds."""

    stock_src: object = None           # Triton's own TTGIR module (None: changed in place, see ttgir)
    context: object = None             # the compilation's MLIR context (to parse ttgir back)
    ttgir: str = ""                    # ... as text (tells specializations apart in warnings)
    name: str = "kernel"
    lowered: Optional["PipelineResult"] = None   # set while the kernel carries our islands
    guards: int = 0                    # guard barriers in its LLVM IR
    guards_dropped: int = 0            # ... of which dropped as redundant


class _WrappedStages:
    """The stages of one compilation with ours around them (see :func:`wrap_stages`)."""

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
            stages[self.last_stage] = then_share_stats(stages[self.last_stage])

    def llir(self, src, metadata):
        names = op_names(src)
        stats().kernels += 1
        stats().conversions += names.count("ttg.convert_layout")

        def stock_llir():
            return self.original["llir"](src, metadata)

        # One memory of plans and choices for the compile: the pass takes the answers its
        # questions got from the types instead of asking them again.
        plans = LowerConversions.module_plans()
        if not has_work_for(self.config, names) or every_conversion_is_stocks(src, self.config, plans):
            # Nothing for us: our passes would only add attributes, and a module without
            # islands is compiled from Triton's own TTGIR anyway.  No print, no parse: the op
            # names come from a walk of the module, far cheaper than a print (docs/compile-time.md,
            # 'What the small savings saved'), and where every conversion goes to stock that is
            # known from their types (``types_first``).
            self.kernel = _KernelCompile(stock_src=src)
            return stock_llir()
        text = src.str()
        lowering = lowering_asked_first(self.config)
        if lowering is not None and in_place_enabled():
            return self._llir_in_place(src, metadata, text, lowering, plans, names)
        self.kernel = _KernelCompile(stock_src=src, ttgir=text, name=kernel_name(text))
        return self._llir_with_islands(src, metadata, text, plans, stock_llir)

    def _llir_with_islands(self, src, metadata, text: str, plans, stock_llir, built_in_place: int = 0,
                           snapshot=None):
        """Our pipeline on ``src`` (``text``: its print), its islands spliced as text into a new
        module, then Triton's ``make_llir`` on that; ``stock_llir`` on any failure.
        ``built_in_place``: conversions already built in ``src`` itself (``_llir_in_place``),
        counted with the islands; ``src`` is then compiled even where the pipeline adds none.
        ``snapshot``: ``src`` as read before, unchanged since (not read again)."""
        kernel = self.kernel
        try:
            lowered = run_plugin_pipeline(src, self.config, {"name": kernel.name}, text, plans, snapshot=snapshot)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            return self._fall_back("our passes", error, stock_llir)
        if lowered.ops_replaced == 0 and not lowered.assigned and not built_in_place:
            return self.original["llir"](src, metadata)
        if built_in_place:
            lowered = dataclasses.replace(lowered, conversions_lowered=lowered.conversions_lowered + built_in_place)
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
        stats().local_loads += lowered.local_loads
        self._book_if_last("llir")
        return result

    def _llir_in_place(self, src, metadata, text: str, lowering, plans, names: Sequence[str] = ()):
        """The default pipeline's one-round shared-memory islands built in Triton's module itself
        (``passes.drop_in.in_place``; on by default under triton 3.6); the conversions it would lower otherwise spliced as text
        into the module so rewritten (``_llir_with_islands``); then Triton's ``make_llir``.  The
        module is changed in place, so a fallback compiles a copy parsed from ``text``.  ``names``:
        its op names; without a warp-specialized region or a call among them, the conversions'
        choices come from their types, no snapshot taken (``in_place.lower_in_place_from_types``)."""
        kernel = self.kernel = _KernelCompile(stock_src=None, ttgir=text, name=kernel_name(text),
                                              context=getattr(src, "context", None))

        def stock_llir():
            return self.original["llir"](self._stock_module(), metadata)
        try:
            built = None
            if names and not SNAPSHOT_NEEDED.intersection(names):
                built = lower_in_place_from_types(src, self.config, plans)
            if built is None:
                built = lower_in_place(src, text, kernel.name, lowering, plans)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            return self._fall_back("our passes", error, stock_llir)
        if built.left_ours:
            # The built conversions are dead in the module as rewritten: its pass leaves them
            # (plans.built_in_place).  Where none was built, the module is as it was read.
            if built.built:
                return self._llir_with_islands(src, metadata, src.str(), plans, stock_llir, built_in_place=built.built)
            return self._llir_with_islands(src, metadata, text, plans, stock_llir, snapshot=built.snapshot)
        if not built.built:
            return self.original["llir"](src, metadata)
        try:
            result = self.original["llir"](src, metadata)
        except Exception as error:
            return self._fall_back("llir", error, stock_llir)
        kernel.lowered = PipelineResult(src, conversions_lowered=built.built)
        self._book_if_last("llir")
        return result

    def _stock_module(self):
        """Triton's own TTGIR module of the kernel: the one given, or, where ours changed it in
        place, a copy parsed from its print."""
        if self.kernel.stock_src is None:
            self.kernel.stock_src = triton_module_from_text(self.kernel.ttgir, self.kernel.context)
        return self.kernel.stock_src

    def _later_stage(self, name: str):
        def run(src, metadata):
            try:
                value = self.original[name](src, metadata)
            except Exception as error:  # a later Triton stage: fall back if our islands are in the kernel
                if self.kernel.lowered is None or (self.kernel.stock_src is None and not self.kernel.ttgir):
                    raise
                self.kernel.lowered = None
                return self._fall_back(name, error, lambda: self._stock_up_to(name, metadata))
            self._book_if_last(name)
            return value
        return run

    def _stock_up_to(self, name: str, metadata):
        """Triton's own compile of the kernel, from its TTGIR, up to stage ``name``."""
        value = self.original["llir"](self._stock_module(), metadata)
        for stage in self.after_llir[:self.after_llir.index(name) + 1]:
            value = self.original[stage](value, metadata)
        return value

    def _fall_back(self, stage: str, error: BaseException, stock_compile):
        return compile_without_islands(self.kernel.name, self.kernel.ttgir, stage, error, self.config.remarks,
                                        stock_compile)

    def _book_if_last(self, stage: str) -> None:
        """After the last stage, a kernel that still carries our islands is booked, once."""
        kernel = self.kernel
        if stage != self.last_stage or kernel.lowered is None:
            return
        stats().kernels_with_islands += 1
        stats().islands += kernel.lowered.conversions_lowered
        stats().local_loads_lowered += kernel.lowered.local_loads_lowered
        stats().local_writes_lowered += kernel.lowered.local_writes_lowered
        stats().guard_barriers += kernel.guards
        stats().guard_barriers_dropped += kernel.guards_dropped
        if kernel.lowered.assigned:
            stats().kernels_assigned += 1
            stats().conversions_after_assignment += kernel.lowered.conversions_after_assignment


def then_share_stats(stage):
    """The kernel's last stage, then this process's counts written for the program's total."""
    def run(src, metadata):
        try:
            return stage(src, metadata)
        finally:
            share_stats()
    return run


def has_work_for(config: PluginConfig, op_names: Sequence[str]) -> bool:
    """The module (the names of its ops) holds an op the pipeline may replace (an allocation
    counts whether or not it has a source: the pipeline looks)."""
    names = set(op_names)
    local_ops = bool(names & {"ttg.local_load", "ttg.local_store", "ttg.local_alloc"})
    return "ttg.convert_layout" in names or (config.owns_local_memory_ops and local_ops)


