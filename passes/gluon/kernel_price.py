"""What a whole kernel costs: the cost model ``ll-resolve-auto-layouts`` minimizes
(:func:`modelled_cost`: every op the model prices, loop-weighted:
``passes.assign.layout_graph.loop_weight``), plus the register limit of ``ll-assign-layouts``
(``passes.assign.register_budget``): a layout that makes a loop carry more registers than a
thread has, where another does not, would spill.

Two users.  The resolution weighs the alternative for a store meeting an accumulator by it
(:mod:`.epilogue_stores`).  The advice prices each edit by it (``passes.advice``): an edit of a
layout variable reaches every op laid out in that variable, inside loops too (a store after a
loop advised 4-byte accesses, if its layout is the loop's loads' layout, makes those loads
narrower on every iteration); pricing the one store would call that a gain, only the kernel
before and after the edit, priced by one model, says what the edit does.  A layout the
resolution chose is then one the advice, priced the same way, finds no cheaper edit of.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...lowering.target import Target
from ..assign.assign_layouts import make_costs
from ..assign.layout_graph import build_graph
from ..assign.layout_solver import assignment_work
from ..ir.module_lines import ModuleLines
from ..assign.register_budget import peak_registers
from ..ir.snapshot import Module, functions_with_bodies


@dataclass(frozen=True)
class KernelPrice:
    cost: float            # the modelled cost of the whole module, loop-weighted
    registers: float       # the most registers per thread the data its loops carry needs

    def spills_where(self, before: "KernelPrice", target: Target) -> bool:
        """Whether this kernel surely spills where ``before`` did not (the target's limit)."""
        limit = target.registers_per_thread
        return limit > 0 and self.registers > limit >= before.registers


def modelled_cost(module: Module, target: Target) -> float:
    """The whole module's modelled cost under its own layouts (loop-weighted, every op the
    model prices), as ``ll-assign-layouts`` prices Triton's assignment: what the resolution
    minimizes and reports against Triton's own resolution."""
    return _priced(module, target, registers=False).cost


def kernel_price(module: Module, target: Target) -> KernelPrice:
    """The module's :class:`KernelPrice` under its own layouts: :func:`modelled_cost` and the
    register peak of its loops."""
    return _priced(module, target, registers=True)


def _priced(module: Module, target: Target, registers: bool) -> KernelPrice:
    lines = ModuleLines(module, module.print(debuginfo=True))     # one print per snapshot
    total, peak = 0.0, 0.0
    for function in functions_with_bodies(module):
        graph = build_graph(function, lines, reorder_reductions=True, memory_ops=True, shared_ops=True)
        keys = graph.stock_keys()
        total += assignment_work(graph, keys, make_costs(graph, target)).total
        if registers:
            peak = max(peak, peak_registers(graph, keys)[0])
    return KernelPrice(total, peak)
