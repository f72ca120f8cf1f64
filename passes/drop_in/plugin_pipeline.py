"""Our pipeline on one kernel inside a compile: Triton's TTGIR module in, a new module with
islands out (``run_plugin_pipeline``), and what was replaced.

The pipeline reads the module as a snapshot where every pass only reads and splices islands into
its text (``ll-lower-conversions``, the default), or parses a copy where a pass rewrites it
(``ll-assign-layouts``); Triton's own module is never modified, so a later stage that fails
on our islands can compile it as it was.  Python's cyclic collector is paused meanwhile
(:func:`cyclic_gc_paused`).
"""

from __future__ import annotations

import contextlib
import gc
import re
import sys
import threading
from dataclasses import dataclass
from typing import Optional

from ...lowering.choosing.plan_memory import ModulePlans
from ..framework import PassContext, run_pipeline
from ..ir.diagnostics import IRError
from ..ir.parsing import triton_module_from_text
from ..ir.snapshot import parse_module, snapshot_of
from ..lower_conversions import LowerConversions
from .plugin_config import PluginConfig

ASSIGN_LAYOUTS = "ll-assign-layouts"     # passes.assign.assign_layouts.AssignLayouts.name
# %5 = ttg.convert_layout %4 : tensor<...> -> tensor<...>  (one op per match; names in loc()
# strings are quoted and never follow "= ")
_CONVERT_OP = re.compile(r"= ttg\.convert_layout\b")

def kernel_name(text: str) -> str:
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
    def ops_replaced(self) -> int:
        """Every island in the module: one per op replaced (conversions and local-memory ops;
        ``PluginStats.islands`` counts the conversions alone)."""
        return self.conversions_lowered + self.local_loads_lowered + self.local_writes_lowered


def run_plugin_pipeline(triton_module, config: PluginConfig, metadata=None,
                        text: Optional[str] = None, plans: Optional[ModulePlans] = None,
                        snapshot=None) -> PipelineResult:
    """Run ``config``'s pipeline on a Triton TTGIR module; return what it did: a new Triton
    module (in the same context) for the next stage and how many ops islands replaced (when no
    pass rewrote the module's text: the module given, and none).  The module given is not
    modified.  Errors name the kernel and say what failed.  ``plans``: the compile's memory of
    plans and choices, where the caller asked the pass's questions first (``types_first``);
    ``snapshot``: a snapshot of ``triton_module`` read before (``snapshot.snapshot_of``, the
    module unchanged since), for a pipeline that only reads."""
    name = (metadata or {}).get("name", "kernel") if isinstance(metadata, dict) else "kernel"
    if text is None:
        text = triton_module.str()
    with cyclic_gc_paused():
        return _run_plugin_pipeline(triton_module, config, name, text, plans, snapshot)


@contextlib.contextmanager
def cyclic_gc_paused():
    """Python's cyclic garbage collector off while our pipeline runs (back on afterwards, unless
    it was off before).  The module snapshot is a graph of parent links (ops, blocks, regions),
    thousands of young objects for a large kernel, which the collector would traverse
    again and again as the passes allocate, promoting them to older generations (whose
    collections scan the whole heap) although they all die together when the pipeline ends.
    Paused, they are collected once, at the next collection after it, and most of the
    collector's time over whole compiles goes (measured: docs/compile-time.md, 'What the small
    savings saved').  What is computed is unchanged.  Pipelines of several threads at once: the last one to end turns the
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


def _run_plugin_pipeline(triton_module, config: PluginConfig, name: str, text: str,
                         plans: Optional[ModulePlans], snapshot=None) -> PipelineResult:
    """:func:`run_plugin_pipeline` after the kernel's name and text are known."""
    remarks = _RemarkLines(sys.stderr if config.remarks or config.reports else None)
    try:
        if _reads_only(config):
            # The passes only read the module and splice islands into its text: a snapshot of
            # Triton's module itself, no copy parsed (a compile that falls back gets it unchanged).
            module = snapshot or snapshot_of(triton_module, text, f"<{name}>")
        else:
            # Parsed into the compilation's own context: its dialects are loaded already.
            module = parse_module(text, filename=f"<{name}>", safe=False,
                                  context=getattr(triton_module, "context", None), printed=True)
        context = PassContext(report_stream=remarks, plans=plans)
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
    counts = _replaced_ops(assigned.get("text", text), new_text, config.owns_local_memory_ops)
    if new_text is not text:
        triton_module = triton_module_from_text(new_text, triton_module.context)
    return PipelineResult(triton_module, remarks=tuple(remarks.lines), assigned="text" in assigned,
                          conversions_after_assignment=len(_CONVERT_OP.findall(assigned.get("text", ""))), **counts)


def _reads_only(config: PluginConfig) -> bool:
    """Every pass of the pipeline only reads the module and rewrites its text
    (``ll-lower-conversions``, the default): a read-only snapshot of Triton's own module will do
    (``snapshot.snapshot_of``)."""
    return all(type(p) is LowerConversions for p in config.passes)


def _replaced_ops(text: str, new_text: str, owns_local_memory_ops: bool) -> dict[str, int]:
    """How many ops of each kind islands replaced, counted on the text before and after (each
    island replaces one op; counting casts would not do: a shared-memory island holds two or
    more, one of them its scratch buffer's).  The same text: none (not counted)."""
    if new_text is text:
        return {"conversions_lowered": 0} if not owns_local_memory_ops else \
            {"conversions_lowered": 0, "local_loads": text.count("= ttg.local_load "), "local_loads_lowered": 0,
             "local_writes_lowered": 0}
    conversions = len(_CONVERT_OP.findall(text)) - len(_CONVERT_OP.findall(new_text))
    if not owns_local_memory_ops:
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
