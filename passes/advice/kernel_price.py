"""What a whole kernel costs, for the advice: the cost model the resolution of Gluon's automatic
layouts uses, plus the register limit of ``ll-assign-layouts``.

A finding's suggestion is an edit of a layout variable (``apply_advice``), and an edit reaches
every op laid out in that variable, inside loops too: a store after a loop advised 4-byte
accesses with no copies, if its layout is the loop's loads' layout, makes those loads narrower
on every iteration.  Pricing the one store would call that a gain; only the kernel before and
after the edit, priced by one model, says what the edit does.  So the price here is
:func:`..gluon.resolve_auto_layouts.modelled_cost`'s (every op the model prices, loop-weighted:
``passes.assign.layout_graph.loop_weight``), which is also the cost ``ll-resolve-auto-layouts``
minimizes: a layout the resolution chose is one the advice, priced the same way, finds no
cheaper edit of (where the resolution had that edit among its candidates).  The register limit
is ``ll-assign-layouts``' (``passes.assign.register_budget``): an edit that makes a loop carry
more registers than a thread has, where the kernel as written does not, would spill.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lowering.target import Target
from ..assign.assign_layouts import make_costs
from ..assign.layout_graph import build_graph
from ..assign.layout_solver import assignment_work
from ..ir.module_lines import ModuleLines
from ..assign.register_budget import peak_registers
from ..ir.snapshot import Module


@dataclass(frozen=True)
class KernelPrice:
    cost: float            # the modelled cost of the whole module, loop-weighted
    registers: float       # the most registers per thread the data its loops carry needs

    def spills_where(self, before: "KernelPrice", target: Target) -> bool:
        """Whether this kernel surely spills where ``before`` did not (the target's limit)."""
        limit = target.registers_per_thread
        return limit > 0 and self.registers > limit >= before.registers


def kernel_price(module: Module, target: Target) -> KernelPrice:
    """The module's :class:`KernelPrice` under its own layouts.  The cost is
    ``modelled_cost(module, target)`` (the same graph, costs and sum; a test holds them equal)."""
    lines = ModuleLines(module, module.print(debuginfo=True))
    total, peak = 0.0, 0.0
    for function in [op for op in module.walk() if op.name in ("tt.func", "func.func") and op.regions]:
        graph = build_graph(function, lines, reorder_reductions=True, memory_ops=True, shared_ops=True)
        keys = graph.stock_keys()
        total += assignment_work(graph, keys, make_costs(graph, target)).total
        peak = max(peak, peak_registers(graph, keys)[0])
    return KernelPrice(total, peak)
