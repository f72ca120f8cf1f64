"""``ll-assign-layouts``: choose the layouts of a kernel's tensors by modelled cost.

Triton's ``RemoveLayoutConversions`` propagates the layouts of anchors (loads, stores, dots)
forward and resolves conflicts by a fixed preference; every conversion costs it "32 x bytes"
however it lowers.  This pass starts from the module Triton produced and, per function:

1. builds the layout graph (:mod:`.layout_graph`): which ops may change layout under which rules
   (:mod:`.layout_rules`), with candidates propagated from their neighbours both ways;
2. prices every candidate with our calibrated cost model (:mod:`.layout_costs`): conversions
   by the plan our planner would pick, reductions by shuffle rounds and cross-warp traffic,
   elementwise work by registers, everything times its loop weight;
3. solves for the cheapest assignment (:mod:`.layout_solver`, an integer program): the least
   busiest pipe (and DRAM floor), ties broken by the summed cost; with ``pipes=false``, the
   least summed cost;
4. accepts it only if it beats Triton's own assignment by ``margin`` (a fraction of the
   function's modelled time), every conversion it adds fits the shared memory beside the
   kernel's buffers (:mod:`.scratch_budget`), the data its loops carry fits a thread's registers
   (:mod:`.register_budget`) and the rewritten module parses; otherwise the
   function keeps Triton's layouts.  The modelled time is the busiest of the SM's pipes (:mod:`.pipe_time`:
   shuffles, shared memory and L1 data on one, ALU work on another, barriers on both; the ops
   no assignment changes count too) or the kernel's DRAM floor (:mod:`.dram_floor`: in a kernel
   bound by its memory traffic, cheaper conversions do not show), whichever is higher.
   ``pipes=false`` takes the summed cost instead of the busiest pipe; ``dram_floor=false``
   leaves the floor out.  Remarks say which bound holds, with conversions, modelled cost and
   time before and after, and the floor.

Every conversion left or added is an ordinary ``ttg.convert_layout``: ``ll-lower-conversions``
plans, verifies and simulates it like any other (or leaves it to Triton).  Dots and float sums
keep Triton's layouts (a float sum in another layout adds in another order;
``reorder_reductions=true`` allows it).  Loads and stores keep theirs unless
``memory_ops=true``: then those whose pointers :mod:`.pointer_contiguity` can
read may change layout too, priced by sectors and vector width (``layout_costs.memory_cost``).

Worked example (``lit/assign-layouts/reduce-then-store.mlir``)::

    %r = "tt.reduce"(%x) <{axis = 1}> : (tensor<64x128xi32, #B>) -> tensor<64xi32, #slice1>
    %e = arith.muli %r, %r : tensor<64xi32, #slice1>
    %c = ttg.convert_layout %e : tensor<64xi32, #slice1> -> tensor<64xi32, #B1>
    tt.store %p, %c : tensor<64x!tt.ptr<i32>, #B1>

The store is fixed in ``#B1``; converting before the multiply or after it costs the same, so the
pass keeps this one.  Were the multiply inside a loop over the store, the conversion would move
out of it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Optional

from ...dialect import LayoutError
from ...lowering.target import Target, UnknownTarget
from ..framework import ModulePass, PassContext, PassFailure
from .dram_floor import dram_floor
from .layout_costs import conversion_work, elementwise_work, memory_work, reduction_work
from .layout_graph import LayoutGraph, build_graph, propose_candidates
from .layout_rules import (BUFFER_MEMORY_OPS, ELEMENTWISE_OPS, ELEMENTWISE_PREFIXES, GLOBAL_ACCESS_OPS,
                           MEMORY_OPS, SHAPE_KINDS, SHARED_ACCESS_OPS, combiner_is_redux, combiner_ops, encoding_of,
                           global_access)
from .shared_access_costs import async_copy_vector, local_load_work, local_store_work
from .layout_solver import Costs, Solution, assignment_cost, assignment_work, conversion_cost, least_work, solve
from .pipe_time import NOTHING, Work
from ..ir.module_lines import ModuleLines, TextMismatch
from .register_budget import register_overflow
from .scratch_budget import scratch_overflow
from ..ir.module_target import module_target
from ..ir.snapshot import Module, Operation, functions_with_bodies, parse_module

DEFAULT_MARGIN = 0.10


@dataclass
class FunctionAssignment:
    """What the pass did to one function."""

    name: str
    converts_before: int
    converts_after: int
    cost_before: float
    cost_after: float
    accepted: bool
    reason: str
    left: dict = field(default_factory=dict)      # conversions left, by why they stay
    candidates: int = 0                            # nodes with a choice
    seconds: float = 0.0
    dram_floor: float = 0.0                        # the least time its memory traffic takes
    time_before: float = 0.0                       # modelled time (.pipe_time), Triton's layouts
    time_after: float = 0.0                        # ... and the chosen ones
    bound_before: str = ""                         # what sets it: a pipe, "dram" or "sum"
    bound_after: str = ""
    # The conversions' part of the modelled cost (.layout_solver.conversion_cost), loop-weighted:
    # what the corpus goal measures (docs/layout-assignment.md, "Conversion cost is not the objective").
    conversion_cost_before: float = 0.0
    conversion_cost_after: float = 0.0

    def remark(self) -> str:
        verdict = "layouts assigned by cost" if self.accepted else "kept Triton's layouts"
        left = ", ".join(f"{count} {why}" for why, count in sorted(self.left.items()))
        return (f"@{self.name}: {verdict}: conversions {self.converts_before} -> {self.converts_after}, "
                f"modelled cost {self.cost_before:.1f} -> {self.cost_after:.1f} (loop-weighted)"
                + (f"; {self.reason}" if self.reason else "") + (f"; left: {left}" if left else "")
                + (f"; modelled time {self.time_before:.1f} -> {self.time_after:.1f} "
                   f"(bound: {self.bound_before} -> {self.bound_after})" if self.bound_before else "")
                + (f"; DRAM floor {self.dram_floor:.1f}" if self.dram_floor else ""))


@dataclass
class Assignment:
    functions: list[FunctionAssignment] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return any(f.accepted for f in self.functions)


# --------------------------------------------------------------------------- the model

def make_costs(graph: LayoutGraph, target: Target) -> Costs:
    def node_work(index: int, key: str) -> Work:
        node = graph.nodes[index]
        kind = node.rule.kind
        if kind in ("convert", "trans") + SHAPE_KINDS:   # these rename registers: no instruction
            return NOTHING
        if node.position >= 0:
            if node.op.name == "scf.if":   # priced as the select Triton's canonicalizer may make of it
                result = node.op.results[node.position]
                return elementwise_work(key, result.tensor_type.shape, target).scaled(node.weight)
            return NOTHING
        if kind == "reduce":
            operand = node.op.operands[0].tensor_type
            count = sum(1 for v in node.op.operands if encoding_of(v) is not None)
            return reduction_work(key, operand.shape, node.rule.axis, target, combiner_is_redux(node.op), count,
                                  combiner_ops(node.op)).scaled(node.weight)
        if node.op.name in GLOBAL_ACCESS_OPS:
            return _memory_work(node, key).scaled(node.weight)
        if node.op.name in SHARED_ACCESS_OPS:
            return _shared_work(node, key).scaled(node.weight)
        work = NOTHING
        for v in node.op.results:
            if encoding_of(v) is not None:
                work = work + elementwise_work(node.rule.result(key), v.tensor_type.shape, target)
        return work.scaled(node.weight)

    def _memory_work(node, key: str) -> Work:
        access = global_access(node.op)       # pointers, or a buffer op's offsets
        bits = 8 * access.element_bytes
        vector = node.contiguity.vector
        if node.async_copy is not None:       # one run consecutive in global and shared memory
            vector = min(vector, async_copy_vector(key, access.shape, node.async_copy.memdesc_type, bits, target))
        return memory_work(key, access.shape, bits, node.contiguity.dim, vector, target)

    def _shared_work(node, key: str) -> Work:
        """A local load (the result in ``key``) or store / alloc (operand 0 in ``key``)."""
        load = node.op.name == "ttg.local_load"
        tensor = node.op.results[0] if load else node.op.operands[0]
        memdesc = node.op.operands[0] if load else (node.op.results[0] if node.op.name == "ttg.local_alloc"
                                                    else node.op.operands[1])
        price = local_load_work if load else local_store_work
        return price(key, tensor.tensor_type.shape, memdesc.type, tensor.tensor_type.element.logical_bits, target)

    def convert_work(use, src: str, dst: str) -> Work:
        if src == dst:
            return NOTHING
        tensor_type = use.value.tensor_type
        bits = tensor_type.element.logical_bits if not tensor_type.element_type.startswith("!tt.ptr") else 64
        return conversion_work(src, dst, tensor_type.shape, bits, target)

    return Costs(lambda index, key: node_work(index, key).total,
                 lambda use, src, dst: convert_work(use, src, dst).total,
                 node_work, convert_work, fixed_work(graph, target))


_AXIS = re.compile(r"\baxis = (\d+)")


def fixed_work(graph: LayoutGraph, target: Target) -> Work:
    """The loop-weighted work of the ops no assignment changes (``LayoutGraph.fixed``), in their
    own layouts: global loads and stores (one element per access where the pointers cannot be
    read), reductions and elementwise ops.  Dots, shared-memory ops and ops we cannot price are left out (the time then errs
    towards the conversions and reductions we do price)."""
    total = NOTHING
    for fixed in graph.fixed:
        op = fixed.op
        try:
            if op.name in MEMORY_OPS or op.name in BUFFER_MEMORY_OPS:
                access = global_access(op)
                key = encoding_of(access.addresses) if access is not None else None
                if key is None:
                    continue
                bits = 8 * access.element_bytes
                # Pointers the analysis cannot read: one element per access, the last dim
                # contiguous (the fewest bytes per instruction Triton would issue).
                dim, vector = ((fixed.contiguity.dim, fixed.contiguity.vector) if fixed.contiguity is not None
                               else (len(access.shape) - 1, 1))
                work = memory_work(key, access.shape, bits, dim, vector, target)
            elif op.name == "tt.reduce":
                operands = [v for v in op.operands if encoding_of(v) is not None]
                axis = _AXIS.search(fixed.header)
                if not operands or axis is None:
                    continue
                operand = operands[0].tensor_type
                work = reduction_work(encoding_of(operands[0]), operand.shape, int(axis.group(1)), target,
                                      combiner_is_redux(op), len(operands), combiner_ops(op))
            elif op.name.startswith(ELEMENTWISE_PREFIXES) or op.name in ELEMENTWISE_OPS:
                work = NOTHING
                for v in op.results:
                    if encoding_of(v) is not None:
                        work = work + elementwise_work(encoding_of(v), v.tensor_type.shape, target)
            else:
                continue
        except LayoutError:             # a layout our algebra does not know: not priced
            continue
        total = total + work.scaled(fixed.weight)
    return total


# --------------------------------------------------------------------------- rewriting

def _retyped(value, encoding: str) -> str:
    tensor_type = value.tensor_type
    dims = "x".join(str(d) for d in tensor_type.shape)
    return f"tensor<{dims}x{tensor_type.element_type}, {encoding}>"


def rewrite(graph: LayoutGraph, keys: list[str], lines: ModuleLines, counter: list[int]) -> int:
    """Apply the assignment to ``lines``; returns how many conversions it adds."""
    for node, key in zip(graph.nodes, keys):
        if key == node.stock_key:
            continue
        if node.position >= 0:       # a value carried by scf.for or scf.while, or an scf.if result
            # the op's own types (for scf.while also its after region's ^bb0 line), then its
            # regions' terminators: scf.yield, and scf.condition in an scf.while's before region
            lines.replace_type_at(node.op, node.position, node.stock_key, key)
            for region in node.op.regions:
                lines.replace_type_at(region.blocks[0].operations[-1], node.position, node.stock_key, key)
        elif node.rule.kind == "convert":
            continue   # its line is rewritten with its operand below
        elif node.rule.kind in ("trans",) + SHAPE_KINDS:
            lines.replace_operand_and_result_encoding(node.op, (node.stock_key, key),
                                                      (node.rule.result(node.stock_key), node.rule.result(key)))
        elif node.rule.kind == "gather":     # the indices (operand 1) and the result; not the source
            lines.replace_operand_and_result_encoding(node.op, (node.stock_key, key), (node.stock_key, key),
                                                      operand_index=1)
        else:
            lines.replace_encoding(node.op, node.stock_key, key)
    added: dict[tuple[int, str], str] = {}
    renamed: dict[tuple[int, int], str] = {}
    for use in graph.uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        if use.private:
            _retype_convert(lines, use, provided, required)
            continue
        if provided == required:
            continue
        slot = (id(use.value), required)
        if slot not in added:
            name = f"%ll_assign{counter[0]}"
            counter[0] += 1
            added[slot] = name
            # the conversion takes the location of the op that needs it, so that remarks and the
            # report point to that op's source line
            lines.insert_after_definition(use.value, f"{name} = ttg.convert_layout {lines.name_of(use.value)} : "
                                                     f"{_retyped(use.value, provided)} -> {_retyped(use.value, required)}"
                                                     + _location_of(lines, use.op))
        previous = renamed.setdefault((id(use.op), id(use.value)), added[slot])
        if previous != added[slot]:
            raise TextMismatch(f"{use.op.name} uses one value in two layouts")
    for (op_id, value_id), new_name in renamed.items():
        use = next(u for u in graph.uses if id(u.op) == op_id and id(u.value) == value_id)
        lines.rename_operand(use.op, lines.name_of(use.value), new_name)
    return len(added)


_TRAILING_LOCATION = re.compile(r"\s(loc\((?:[^()]|\([^()]*\))*\))\s*$")


def _location_of(lines: ModuleLines, op) -> str:
    """`` loc(...)`` as ``op``'s line prints it (the module's text carries locations), or ""."""
    found = _TRAILING_LOCATION.search(lines.header(op))
    return f" {found.group(1)}" if found else ""


def _retype_convert(lines: ModuleLines, use, provided: str, required: str) -> None:
    """Write a convert's line as ``%c = ttg.convert_layout %v : SRC -> DST`` for its new source
    and result layouts."""
    op = use.op
    index = lines.of[id(op)].header
    line = lines.lines[index]
    head, _, rest = line.partition(" : ")
    location = rest[rest.find(" loc("):] if " loc(" in rest else ""
    lines.lines[index] = f"{head} : {_retyped(use.value, provided)} -> {_retyped(op.results[0], required)}{location}"


# --------------------------------------------------------------------------- the driver

# Why an op keeps Triton's layout, by op name (see layout_rules: these have no rule).
_FIXED_BECAUSE = {
    "tt.dot": "an MMA accumulator", "ttng.warp_group_dot": "an MMA accumulator", "ttng.tc_gen5_mma": "an MMA",
    "tt.load": "a global load", "tt.store": "a global store", "tt.atomic_rmw": "a global atomic",
    "tt.atomic_cas": "a global atomic", "tt.trans": "a transpose of a layout the rule does not transpose",
    "tt.reshape": "a reshape that may reorder elements, or of a layout the rule does not reshape",
    "tt.join": "a join of a layout the rule does not join", "tt.split": "a split of a layout the rule does not split",
    "ttg.local_load": "a shared-memory load", "ttg.local_alloc": "a shared-memory store",
    "ttg.local_store": "a shared-memory store", "tt.reduce": "a float reduction",
    "tt.gather": "a gather Triton laid out for its warp-local lowering", "tt.call": "a call", "scf.if": "an scf.if (no rule yet)",
    "scf.while": "an scf.while value whose layouts differ between its regions",
    "scf.condition": "an scf.while value whose layouts differ between its regions",
    "tt.return": "a return", "ttng.tmem_load": "a tensor-memory load",
}


def _fixed_because(op_name: str) -> str:
    return _FIXED_BECAUSE.get(op_name, f"{op_name} (no rule)")


def _why_left(graph: LayoutGraph, keys: list[str], use) -> str:
    """``producer -> consumer``, and for each side that is fixed, why (``tt.dot -> tt.store
    (fixed: an MMA accumulator; a global store)``)."""
    producer_op = None if use.value.is_block_argument else use.value.owner
    producer = graph.nodes[use.producer].op.name if use.producer is not None else (
        producer_op.name if producer_op is not None else "argument")
    consumer = use.op.name
    reasons = []
    if use.producer is None:
        reasons.append("a function argument" if producer_op is None else _fixed_because(producer))
    if use.consumer is None:
        reasons.append(_fixed_because(consumer))
    elif use.private:
        # A convert stays because of what its result must feed: name the fixed users.
        users = sorted({u.op.name for u in graph.uses if u.value is use.op.results[0] and u.consumer is None})
        if users:
            consumer += " -> " + ", ".join(users)
            reasons += [_fixed_because(name) for name in users]
    return f"{producer} -> {consumer}" + (f" (fixed: {'; '.join(reasons)})" if reasons else "")


def _conversions(graph: LayoutGraph, keys: list[str], costs: Costs) -> dict[str, int]:
    """Conversions an assignment needs (costing something), by producer -> consumer."""
    left: dict[str, int] = {}
    seen = set()
    for use in graph.uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        if costs.conversion(use, provided, required) == 0:
            continue
        slot = (id(use.value), required, id(use.op) if use.private else None)
        if slot in seen:
            continue
        seen.add(slot)
        why = _why_left(graph, keys, use)
        left[why] = left.get(why, 0) + 1
    return left


@dataclass(frozen=True)
class AssignOptions:
    margin: float = DEFAULT_MARGIN
    reorder_reductions: bool = False
    memory_ops: bool = False
    dram_floor: bool = True      # a gain must show above the kernel's DRAM floor (.dram_floor)
    pipes: bool = True           # time is the busiest pipe (.pipe_time), not the summed cost


def assign_module(module: Module, target: "str | Target | None" = None, margin: float = DEFAULT_MARGIN,
                  reorder_reductions: bool = False, apply: bool = True, memory_ops: bool = False,
                  dram_floor: bool = True, pipes: bool = True) -> Assignment:
    """Choose the layouts of every function of ``module`` (see the module docstring); with
    ``apply``, rewrite the module where an assignment is accepted."""
    options = AssignOptions(margin, reorder_reductions, memory_ops, dram_floor, pipes)
    num_warps = module.num_warps or 4
    result = Assignment()
    try:
        hw_target = module_target(module, target)
    except UnknownTarget as error:
        raise PassFailure(None, f"ll-assign-layouts: {error}") from None
    state: dict = {}

    def transform(text: str) -> str:
        lines = ModuleLines(module, text)
        state["lines"] = lines
        counter = [0]
        for function in functions_with_bodies(module):
            started = time.perf_counter()
            outcome = _assign_function(function, lines, hw_target, options, num_warps, counter)
            outcome.seconds = time.perf_counter() - started
            result.functions.append(outcome)
        return lines.text()

    original = module.print(debuginfo=True)
    try:
        new_text = transform(original)
    except TextMismatch as error:
        name = module.filename
        result.functions = [FunctionAssignment(name, 0, 0, 0.0, 0.0, False,
                                               f"the module's text could not be read op by op ({error})")]
        return result
    if not apply or not result.accepted:
        return result
    try:
        parse_module(new_text, module.filename, safe=module.safe)
    except Exception as error:   # an IRError from Triton's parser: keep Triton's assignment
        for f in result.functions:
            if f.accepted:
                f.accepted, f.reason = False, f"the rewritten module did not verify ({str(error).splitlines()[0]})"
        return result
    module.rewrite_text(lambda _text: new_text)
    module.canonicalize()
    return result


def _assign_function(function: Operation, lines: ModuleLines, target: Target, options: AssignOptions,
                     num_warps: int, counter: list[int]) -> FunctionAssignment:
    name = function.symbol or "?"
    ops = list(_ops(function))
    converts = sum(1 for op in ops if op.name == "ttg.convert_layout")
    if any(op.name == "ttg.warp_specialize" for op in ops):
        return FunctionAssignment(name, converts, converts, 0.0, 0.0, False,
                                  "warp-specialized: partitions keep Triton's layouts")
    graph = build_graph(function, lines, options.reorder_reductions, options.memory_ops)
    propose_candidates(graph)
    costs = make_costs(graph, target)
    stock = graph.stock_keys()
    before = assignment_cost(graph, stock, costs)
    floor = dram_floor(ops, lines, num_warps, target) if options.dram_floor else 0.0
    choosing = sum(1 for node in graph.nodes if len(node.candidates) > 1)
    work_before = assignment_work(graph, stock, costs) if options.pipes else None
    hopeless = _best_possible(graph, costs, options, floor, before, work_before) if choosing else None
    solution: Solution = (Solution(stock, before, True, "bounded") if hopeless else
                          solve(graph, costs, pipes=options.pipes, floor=floor))
    # What the kernel would gain in time, not in instructions: the busiest of the SM's pipes
    # (.pipe_time) or the DRAM floor (.dram_floor); with pipes=false, the summed cost.
    if options.pipes:
        work_after = work_before if solution.keys == stock else assignment_work(graph, solution.keys, costs)
        time_before, time_after = work_before.time(floor), work_after.time(floor)
        bounds = (work_before.bound(floor), work_after.bound(floor))
        busy_before, busy_after = work_before.time(), work_after.time()
    else:
        time_before, time_after = max(floor, before), max(floor, solution.cost)
        bounds = ("dram" if floor > before else "sum", "dram" if floor > solution.cost else "sum")
        busy_before, busy_after = before, solution.cost
    gain = time_before - time_after
    accepted = gain > max(options.margin * time_before, 1e-6) and solution.keys != stock
    overflow = scratch_overflow(graph, solution.keys, ops, target) if accepted else None
    accepted = accepted and overflow is None
    spills = register_overflow(graph, solution.keys, target) if accepted else None
    accepted = accepted and spills is None
    keys = solution.keys if accepted else stock
    left = _conversions(graph, keys, costs)
    before_count = sum(_conversions(graph, stock, costs).values())
    after_count = sum(left.values())
    reason = "" if accepted else (f"shared memory: {overflow}" if overflow else f"registers: {spills}" if spills else
                                  hopeless or _why_kept(choosing, solution, time_before, time_after, (busy_before, busy_after),
                                            bounds, options.margin))
    outcome = FunctionAssignment(name, before_count, after_count, before,
                                 solution.cost if accepted else before, accepted, reason, left, choosing,
                                 dram_floor=floor, time_before=time_before,
                                 time_after=time_after if accepted else time_before,
                                 bound_before=bounds[0], bound_after=bounds[1] if accepted else bounds[0],
                                 conversion_cost_before=conversion_cost(graph, stock, costs),
                                 conversion_cost_after=conversion_cost(graph, keys, costs))
    if accepted:
        rewrite(graph, keys, lines, counter)
    return outcome


def _best_possible(graph: LayoutGraph, costs: Costs, options: AssignOptions, floor: float,
                   before: float, stock_work: Optional[Work] = None) -> Optional[str]:
    """Why no assignment can be accepted, judged without the solver (``layout_solver.least_work``:
    every conversion a choice could change made free, every node at its least work); None where
    one might be.  Exact, not a guess: the solver could only confirm it, after pricing every
    candidate conversion, which is most of the pass's time.  ``before``: Triton's assignment's
    summed cost; ``stock_work``: its work per pipe, where the caller has it already.

    Example: Triton's assignment models 753.7 under a DRAM floor of 753.7 and the bound's busiest
    pipe is 120: the best any assignment could reach is still 753.7 (the floor), so the function
    is memory-bound and the solver is not run."""
    if options.pipes:
        stock = stock_work or assignment_work(graph, graph.stock_keys(), costs)
        least = least_work(graph, costs)
        time_before, best = stock.time(floor), least.time(floor)
        busy_before, busy_best = stock.time(), least.time()
    else:
        # The summed cost leaves out the work no choice changes (costs.fixed_work); so does the bound.
        busy_before, busy_best = before, least_work(graph, costs).total - costs.fixed_work.total
        time_before, best = max(floor, busy_before), max(floor, busy_best)
    if time_before - best > max(options.margin * time_before, 1e-6):
        return None
    if busy_before - busy_best > max(options.margin * busy_before, 1e-6):
        return (f"memory-bound: even with every conversion a choice could change made free, the modelled "
                f"time {busy_best:.1f} hides under the DRAM floor {floor:.1f}, so no gain could show")
    return (f"no assignment can beat Triton's by more than {options.margin:.0%}: even with every conversion a "
            f"choice could change made free, the modelled time goes at best {time_before:.1f} -> {best:.1f}")


def _why_kept(choosing: int, solution: Solution, time_before: float, time_after: float, busy: tuple[float, float],
              bounds: tuple[str, str], margin: float) -> str:
    """Why Triton's layouts stay.  ``busy``: Triton's and the best assignment's times without
    the floor."""
    if choosing == 0:
        return "no op here can change layout"
    if not solution.optimal:
        return f"the solver stopped early ({solution.status})"
    busy_before, busy_after = busy
    if bounds[1] == "dram" and busy_before - busy_after > max(margin * busy_before, 1e-6):
        return (f"memory-bound: the best assignment's modelled time {busy_after:.1f} hides under "
                f"the DRAM floor {time_after:.1f}, so its gain could not show")
    if bounds[1] not in ("dram", "sum"):
        return (f"no assignment's modelled time beats Triton's by more than {margin:.0%} "
                f"({time_before:.1f} -> {time_after:.1f}, bound by the {bounds[1]} pipe)")
    return f"no assignment beats Triton's by more than {margin:.0%}"


def _ops(function: Operation):
    from ..ir.snapshot import ops_under
    return ops_under(function)


@dataclass(frozen=True)
class AssignLayouts(ModulePass):
    name = "ll-assign-layouts"
    description = "Choose the layouts of every tensor by modelled cost (conversions, reductions, loops)"
    margin: float = DEFAULT_MARGIN
    reorder_reductions: bool = False
    memory_ops: bool = False
    dram_floor: bool = True
    pipes: bool = True
    report: bool = False

    def check_options(self) -> Optional[str]:
        if not 0.0 <= self.margin < 1.0:
            return f"option margin={self.margin}: expected a fraction from 0 to 1"
        return None

    def apply(self, module: Module, context: PassContext) -> None:
        assignment = assign_module(module, context.target, self.margin, self.reorder_reductions,
                                   memory_ops=self.memory_ops, dram_floor=self.dram_floor, pipes=self.pipes)
        if context.remarks or self.report:
            for function in assignment.functions:
                context.report(f"{module.filename}: remark: [{self.name}] {function.remark()}")
