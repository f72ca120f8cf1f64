"""The layout graph of one function: which layouts each op may take, and where values flow.

One **node** per op whose layout the assignment may change (an op with a rule in
:mod:`.layout_rules`; for ``scf.for``, one node per tensor iteration argument, which ties the
init operand, the body's argument, the yielded value and the loop's result together; for
``scf.while``, one node per carried tensor value, tying the init operand, the before region's
argument, what ``scf.condition`` forwards, the after region's argument, what it yields and the
loop's result; for ``scf.if``, one node per tensor result, tying it to what both branches
yield).  Every
other op is fixed.  One **use** per (tensor value, consuming op, operand): the value arrives in
the layout its producer gives it and must be in the layout its consumer asks for; where the two
differ, a conversion runs.

Conversions are charged where they would run:

* into a ``ttg.convert_layout``: the op itself converts, where it stands (a *private* use);
* into any other op: one new conversion per (value, layout asked for), placed right after the
  value is defined, so every consumer that asks for that layout shares it, and a value defined
  before a loop is converted once, not on every iteration.

**Candidates.**  Each node starts with the key Triton gave it (so Triton's assignment is always
a candidate), a reduction its reduce-friendly key and a load or store its coalesced key
(:mod:`.layout_seeds`), and takes the keys its neighbours' layouts imply through the rules, both ways
along every use, until nothing changes (at most ``MAX_CANDIDATES`` per node; keys that give the
same linear layouts on every type of the op count once).  Example: in ``%r = tt.reduce %x`` ->
``%c = ttg.convert_layout %r`` -> ``tt.store %p, %c`` the convert takes the key of the reduce's
result as a candidate (and with it no conversion at all), and the store's fixed layout flows
back to the convert.

**Requirements.**  A key the backend's lowering would reject for its op
(:mod:`.backend_requirements`: a ``cp.async`` copying under 4 bytes a thread, an AMD
direct-to-LDS load of a width the target lacks, a packed f16 buffer atomic with one element a
thread) is never offered;
:func:`enforce_requirements` also takes out a node's own key where it breaks one.

**Loop weights.**  An op inside ``scf.for`` loops runs once per iteration of each: its weight is
the product of their trip counts, static where the bounds and step are ``arith.constant``\\ s,
``ASSUMED_TRIPS`` otherwise (also for ``scf.while``).  A conversion of a loop's block argument
is placed at the start of its region, so it runs once per iteration too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Optional

from ...dialect import LayoutError
from .backend_requirements import (AsyncCopyFacts, BufferAtomicFacts, atomic_elements, best_async_copy_vector,
                                   buffer_atomic_elements, layout_problem, module_target_text, requirement_facts)
from .layout_rules import (ATOMICS, BUFFER_ATOMICS, GLOBAL_ACCESS_OPS, SHAPE_KINDS, SHARED_ACCESS_OPS, Rule,
                           encoding_of, global_access, rule_for)
from .shared_access_costs import buffer_fastest_dim, memdesc_of
from ..ir.module_lines import ModuleLines
from ..ir.layouts import tensor_layout_of
from .layout_seeds import coalesced, reduce_friendly, shared_tile
from .pointer_contiguity import PointerAnalysis
from ..ir.snapshot import Operation, Value, ops_under

MAX_CANDIDATES = 6
ASSUMED_TRIPS = 16

_CONSTANT = re.compile(r"= arith\.constant (-?\d+) : (?:i\d+|index)")


@dataclass
class Node:
    """An op (or one iteration argument of an ``scf.for``) whose key the solver chooses."""

    index: int
    op: Operation
    rule: Rule
    weight: float
    position: int = -1                 # scf.for, scf.while: which carried value; scf.if: which result
    candidates: list[str] = field(default_factory=list)
    contiguity: object = None          # tt.load/tt.store: the pointers' (pointer_contiguity.Contiguity)
    # cp.async: what its vector depends on besides the layout (backend_requirements.AsyncCopyFacts)
    async_copy: object = None
    # a packed (f16, bf16) buffer atomic: the same (backend_requirements.BufferAtomicFacts)
    buffer_atomic: object = None

    @property
    def stock_key(self) -> str:
        return self.rule.stock_key

    def problem(self, key: str) -> Optional[str]:
        """Why the backend would reject ``key`` for this node's op (None: it accepts it)."""
        if self.position >= 0:
            return None
        return layout_problem(key, self.async_copy if self.async_copy is not None else self.buffer_atomic)

    def __str__(self) -> str:
        what = {"scf.for": "iteration argument", "scf.while": "carried value"}.get(self.op.name, "result")
        where = f" ({what} {self.position})" if self.position >= 0 else ""
        return f"{self.op.name}{where} at {self.op.location}"


@dataclass
class Use:
    """A tensor value flowing into an operand of an op."""

    value: Value
    operand: int                       # operand number in ``op``
    op: Operation                      # the consuming op (scf.yield for a loop-carried value)
    producer: Optional[int]            # node giving the value its layout (None: fixed)
    consumer: Optional[int]            # node whose key says what layout it needs (None: fixed)
    private: bool                      # the consumer is a ttg.convert_layout
    weight: float                      # how often the conversion would run


@dataclass(frozen=True)
class FixedOp:
    """An op whose layouts no assignment changes (see ``LayoutGraph.fixed``)."""

    op: Operation
    weight: float                      # its loop weight
    header: str                        # its printed first line (a reduction's axis)
    contiguity: object = None          # tt.load/tt.store: the pointers' contiguity, if known


@dataclass
class LayoutGraph:
    function: Operation
    nodes: list[Node]
    uses: list[Use]
    producer_of: dict[int, int]        # id(value) -> node index
    # Ops that keep their layouts whatever the assignment (global loads and stores, reductions
    # and elementwise ops with no rule), with their loop weights and, for memory ops, the
    # pointers' contiguity: their work is the same in every assignment, but it keeps the SM's
    # pipes busy (.pipe_time), so a pipe-aware time counts it.
    fixed: list["FixedOp"] = field(default_factory=list)

    def value_encoding(self, value: Value, keys: list[str]) -> str:
        """The value's encoding when node i has key ``keys[i]``."""
        node = self.producer_of.get(id(value))
        if node is None:
            return encoding_of(value)
        return self.nodes[node].rule.result(keys[node])

    def requirement(self, use: Use, keys: list[str]) -> str:
        """The encoding the consumer needs the value in (for a convert: its own key)."""
        if use.consumer is None:
            return encoding_of(use.value)
        node = self.nodes[use.consumer]
        return keys[use.consumer] if node.rule.kind == "convert" else node.rule.operand(keys[use.consumer], use.operand)

    def stock_keys(self) -> list[str]:
        return [node.stock_key for node in self.nodes]


# --------------------------------------------------------------------------- building

def loop_weight(op: Operation, lines: ModuleLines) -> float:
    weight = 1.0
    parent = op.parent_op
    while parent is not None:
        if parent.name == "scf.for":
            trips = _static_trips(parent, lines)
            weight *= trips if trips is not None else ASSUMED_TRIPS
        elif parent.name == "scf.while":
            weight *= ASSUMED_TRIPS
        parent = parent.parent_op
    return weight


def _static_trips(loop: Operation, lines: ModuleLines) -> Optional[int]:
    bounds = []
    for value in loop.operands[:3]:
        producer = value.defining_op if value is not None else None
        m = _CONSTANT.search(lines.header(producer)) if producer is not None and producer.name == "arith.constant" \
            and id(producer) in lines.of else None
        if m is None:
            return None
        bounds.append(int(m.group(1)))
    return trip_count(*bounds)


def trip_count(lower: int, upper: int, step: int) -> Optional[int]:
    """Iterations of ``scf.for %i = lower to upper step step`` (None for a step that is not
    positive)."""
    return max(0, -(-(upper - lower) // step)) if step > 0 else None


def _loop_iteration_values(loop: Operation) -> list[tuple[int, Value, Value, Value, Value]]:
    """Per tensor iteration argument i of an ``scf.for``: (i, init operand, body argument,
    yielded value, loop result)."""
    body = loop.regions[0].blocks[0]
    terminator = body.operations[-1]
    out = []
    for i, result in enumerate(loop.results):
        if encoding_of(result) is None:
            continue
        out.append((i, loop.operands[3 + i], body.arguments[1 + i], terminator.operands[i], result))
    return out


def _while_carried_values(loop: Operation) -> list[tuple[int, list[Value], list[Value]]]:
    """Per position i carried by an ``scf.while`` with both regions: (i, [init operand, before
    argument, after argument, loop result] (the values the node gives or takes a layout),
    [the condition's forwarded operand i, the after region's yielded operand i] (the values
    fed back)).  Positions that do not exist in every list are left out."""
    before, after = (region.blocks[0] for region in loop.regions)
    condition, yielded = before.operations[-1], after.operations[-1]
    if condition.name != "scf.condition" or yielded.name != "scf.yield":
        return []
    out = []
    for i, result in enumerate(loop.results):
        if not (i < len(loop.operands) and i < len(before.arguments) and i + 1 < len(condition.operands)
                and i < len(after.arguments) and i < len(yielded.operands)):
            continue
        out.append((i, [loop.operands[i], before.arguments[i], after.arguments[i], result],
                    [condition.operands[i + 1], yielded.operands[i]]))
    return out


def _branch_values(branch: Operation) -> list[tuple[int, list[Value], Value]]:
    """Per tensor result i of an ``scf.if`` with both regions: (i, [then's and else's yielded
    values], result)."""
    yields = [region.blocks[0].operations[-1] for region in branch.regions]
    out = []
    for i, result in enumerate(branch.results):
        if encoding_of(result) is None or any(len(y.operands) <= i for y in yields):
            continue
        out.append((i, [y.operands[i] for y in yields], result))
    return out


def build_graph(function: Operation, lines: ModuleLines, reorder_reductions: bool = False,
                memory_ops: bool = False, shared_ops: bool = False) -> LayoutGraph:
    """The graph of ``function`` (module docstring); ``memory_ops`` and ``shared_ops`` as for
    :func:`.layout_rules.rule_for`."""
    nodes: list[Node] = []
    node_of_op: dict[int, int] = {}
    producer_of: dict[int, int] = {}
    loop_nodes: dict[tuple[int, int], int] = {}      # (id(scf.for or scf.if), position) -> node
    ops = [op for op in ops_under(function) if op is not function]
    fixed: list[FixedOp] = []
    pointers = PointerAnalysis.of_function(lines, function)
    for op in ops:
        if op.name == "scf.for" and op.regions and op.regions[0].blocks:
            for i, init, argument, yielded, result in _loop_iteration_values(op):
                same = {encoding_of(v) for v in (init, argument, yielded, result)}
                if len(same) != 1:
                    continue
                node = Node(len(nodes), op, Rule("identity", encoding_of(result)), loop_weight(op, lines), i)
                nodes.append(node)
                loop_nodes[(id(op), i)] = node.index
                producer_of[id(result)] = producer_of[id(argument)] = node.index
            continue
        if op.name == "scf.while" and len(op.regions) == 2 and all(r.blocks for r in op.regions):
            for i, defined, fed_back in _while_carried_values(op):
                # one encoding everywhere (None among them: a scalar, or not a distributed tensor)
                same = {encoding_of(v) for v in defined + fed_back}
                if len(same) != 1 or None in same:
                    continue
                init, before_argument, after_argument, result = defined
                node = Node(len(nodes), op, Rule("identity", encoding_of(result)), loop_weight(op, lines), i)
                nodes.append(node)
                loop_nodes[(id(op), i)] = node.index
                producer_of[id(result)] = producer_of[id(before_argument)] = node.index
                producer_of[id(after_argument)] = node.index
            continue
        if op.name == "scf.if" and len(op.regions) == 2 and all(r.blocks for r in op.regions):
            for i, branches, result in _branch_values(op):
                if len({encoding_of(v) for v in branches + [result]}) != 1:
                    continue
                node = Node(len(nodes), op, Rule("identity", encoding_of(result)), loop_weight(op, lines), i)
                nodes.append(node)
                loop_nodes[(id(op), i)] = node.index
                producer_of[id(result)] = node.index
            continue
        rule = rule_for(op, lines.header(op), reorder_reductions, memory_ops, shared_ops)
        contiguity = None
        access = global_access(op) if op.name in GLOBAL_ACCESS_OPS else None
        if access is not None:
            contiguity = access_contiguity(op, pointers)
        if rule is None or (op.name in GLOBAL_ACCESS_OPS and contiguity is None):
            # priced by its addresses: an op whose pointers the analysis cannot read stays fixed
            fixed.append(FixedOp(op, loop_weight(op, lines), lines.header(op), contiguity))
            continue
        facts = requirement_facts(op, pointers)
        node = Node(len(nodes), op, rule, loop_weight(op, lines), contiguity=contiguity,
                    async_copy=facts if isinstance(facts, AsyncCopyFacts) else None,
                    buffer_atomic=facts if isinstance(facts, BufferAtomicFacts) else None)
        nodes.append(node)
        node_of_op[id(op)] = node.index
        for result in op.results:
            if encoding_of(result) is not None:
                producer_of[id(result)] = node.index
    _share_printed_encodings(ops, nodes)
    uses = _uses(ops, nodes, node_of_op, loop_nodes, producer_of, lines)
    return LayoutGraph(function, nodes, uses, producer_of, fixed)


def access_contiguity(op: Operation, pointers: PointerAnalysis):
    """The contiguity (``pointer_contiguity.Contiguity``) of a global access's addresses, its
    vector no wider than one instruction of the op moves: a buffer atomic's 2 elements (f16,
    bf16) or 1 (``backend_requirements.buffer_atomic_elements``), a ``tt.atomic_rmw`` /
    ``tt.atomic_cas``'s what the target's atomics update at once
    (``backend_requirements.atomic_elements``: 4 f32 of an ``fadd`` on sm_90, 1 on sm_80), so
    that it is priced and seeded as the lowering issues it.  None where the analysis cannot
    read them."""
    access = global_access(op)
    contiguity = pointers.contiguity(access.addresses, access.base) if access is not None else None
    if contiguity is not None and op.name in BUFFER_ATOMICS:
        contiguity = replace(contiguity, vector=min(contiguity.vector, buffer_atomic_elements(op)))
    elif contiguity is not None and op.name in ATOMICS:
        elements = atomic_elements(op, pointers.lines.header(op), module_target_text(pointers.lines.lines))
        contiguity = replace(contiguity, vector=min(contiguity.vector, elements))
    return contiguity


def _share_printed_encodings(ops: list[Operation], nodes: list[Node]) -> None:
    """Shape ops print a result that is the same layout as an encoding the function already has
    in that encoding's words (see Rule.known)."""
    printed = tuple(sorted({encoding_of(v) for op in ops for v in list(op.operands) + list(op.results)
                            if encoding_of(v) is not None}))
    for node in nodes:
        if node.rule.kind in SHAPE_KINDS:
            node.rule = replace(node.rule, known=printed)


def _uses(ops: list[Operation], nodes: list[Node], node_of_op: dict, loop_nodes: dict, producer_of: dict,
          lines: ModuleLines) -> list[Use]:
    """One Use per tensor operand of every op: who gives the value its layout, who says which
    it needs, and how often a conversion between them would run."""
    uses = []
    for op in ops:
        for position, value in enumerate(op.operands):
            if encoding_of(value) is None:
                continue
            consumer = node_of_op.get(id(op))
            if op.name == "scf.for" and position >= 3:
                consumer = loop_nodes.get((id(op), position - 3))
            elif op.name == "scf.while":
                consumer = loop_nodes.get((id(op), position))
            elif op.name == "scf.condition" and position >= 1:      # operand 0: the i1 condition
                consumer = loop_nodes.get((id(op.parent_op), position - 1))
            elif op.name == "scf.yield" and op.parent_op is not None and \
                    op.parent_op.name in ("scf.for", "scf.if", "scf.while"):
                consumer = loop_nodes.get((id(op.parent_op), position))
            private = consumer is not None and nodes[consumer].rule.kind == "convert"
            producer = producer_of.get(id(value))
            if private:
                weight = nodes[consumer].weight
            elif value.is_block_argument:
                # converted at the start of the region whose argument it is: once per iteration
                owner = value.owner.parent.parent if value.owner.parent is not None else None
                weight = loop_weight(owner, lines) * (_body_trips(owner, lines) if owner is not None
                                                      and owner.name in ("scf.for", "scf.while") else 1)
            else:
                weight = loop_weight(value.owner, lines)
            uses.append(Use(value, position, op, producer, consumer, private, weight))
    return uses


def _body_trips(loop: Operation, lines: ModuleLines) -> float:
    """How often the loop's body (for ``scf.while``: either region) runs per run of the loop."""
    if loop.name == "scf.while":
        return ASSUMED_TRIPS
    trips = _static_trips(loop, lines)
    return trips if trips is not None else ASSUMED_TRIPS


# --------------------------------------------------------------------------- candidates

def _type_shapes(graph: LayoutGraph, node: Node) -> list[tuple[str, int, tuple[int, ...]]]:
    """(role, operand number, shape) of every tensor type the node's key decides."""
    if node.position >= 0:
        return [("result", -1, node.op.results[node.position].tensor_type.shape)]
    shapes = [("result", -1, v.tensor_type.shape) for v in node.op.results if encoding_of(v) is not None]
    if node.rule.kind != "convert":
        shapes += [("operand", i, v.tensor_type.shape) for i, v in enumerate(node.op.operands)
                   if encoding_of(v) is not None]
    return shapes


def key_signature(graph: LayoutGraph, node: Node, key: str):
    """The linear layouts ``key`` gives the node's types (None: it does not fit them)."""
    if not node.rule.accepts(key):
        return None
    signature = []
    try:
        for role, position, shape in _type_shapes(graph, node):
            encoding = node.rule.result(key) if role == "result" else node.rule.operand(key, position)
            if encoding is not None:
                signature.append(tensor_layout_of(encoding, shape))
    except (LayoutError, ValueError, KeyError, IndexError):
        return None
    return tuple(signature)


def propose_candidates(graph: LayoutGraph, pinned: frozenset = frozenset()) -> None:
    """Fill every node's ``candidates`` (its stock key first; see the module docstring).
    ``pinned``: indices of nodes that keep their stock key (a layout the author wrote)."""
    signatures: list[list] = []
    for node in graph.nodes:
        node.candidates = [node.stock_key]
        signatures.append([key_signature(graph, node, node.stock_key)])

    def offer(node: Node, key: str) -> bool:
        if node.index in pinned or key in node.candidates or len(node.candidates) >= MAX_CANDIDATES:
            return False
        if node.problem(key) is not None:      # the backend would reject it: never a candidate
            return False
        signature = key_signature(graph, node, key)
        if signature is None or signature in signatures[node.index]:
            return False
        node.candidates.append(key)
        signatures[node.index].append(signature)
        return True

    matrix_layouts = _matrix_layouts(graph)
    for node in graph.nodes:               # layouts no neighbour implies (see layout_seeds)
        for key in _seeds(node):
            offer(node, key)
        if node.op.name in SHARED_ACCESS_OPS and node.position < 0:
            for key in matrix_layouts.get(_tensor_shape(node), ()):
                offer(node, key)

    changed = True
    while changed:
        changed = False
        for use in graph.uses:
            producer = graph.nodes[use.producer] if use.producer is not None else None
            consumer = graph.nodes[use.consumer] if use.consumer is not None else None
            provided = [producer.rule.result(k) for k in producer.candidates] if producer else [encoding_of(use.value)]
            if consumer is not None:
                for encoding in provided:
                    keys = [encoding] if consumer.rule.kind == "convert" else \
                        consumer.rule.keys_for_operand(encoding, use.operand)
                    for key in keys:
                        changed |= offer(consumer, key)
                required = [k if consumer.rule.kind == "convert" else consumer.rule.operand(k, use.operand)
                            for k in consumer.candidates]
            else:
                required = [encoding_of(use.value)]
            if producer is not None:
                for encoding in required:
                    if encoding is None:
                        continue
                    for key in producer.rule.keys_for_result(encoding):
                        changed |= offer(producer, key)


def enforce_requirements(graph: LayoutGraph, pinned: frozenset = frozenset()) -> list[tuple[Node, str]]:
    """Take every candidate the backend would reject out of the nodes not ``pinned`` (the
    node's own key too: in ``ll-resolve-auto-layouts`` that is a first guess, not a layout that
    compiled).  Returns (node, why) for each node left with no candidate it accepts; such a
    node keeps its own key, and its op must be left to Triton."""
    stuck = []
    for node in graph.nodes:
        if node.index in pinned:
            continue
        valid = [key for key in node.candidates if node.problem(key) is None]
        if valid:
            node.candidates = valid
        else:
            stuck.append((node, node.problem(node.stock_key)))
    return stuck


def _tensor_shape(node: Node) -> tuple:
    tensor = next((v for v in list(node.op.operands) + list(node.op.results) if encoding_of(v) is not None), None)
    return tuple(tensor.tensor_type.shape) if tensor is not None else ()


def _matrix_layouts(graph: LayoutGraph) -> dict[tuple, list[str]]:
    """The MMA layouts (``#ttg.nvidia_mma``) the function's values have, by tensor shape: a
    local load or store of that shape is offered them, since Triton lowers a shared access in
    an MMA layout with ``ldmatrix`` / ``stmatrix`` (8x8 tiles of 16-bit elements, a
    ``.trans`` form for a transposed view).  Example: a 64x64 f16 tile read through a
    transposed view and written to another buffer, in the wgmma accumulator's layout: 4
    ``ldmatrix.x4.trans`` and 4 ``stmatrix.x4`` a thread, where 16-byte vectors take 4 reads
    and 8 writes."""
    found: dict[tuple, list[str]] = {}
    for op in ops_under(graph.function):
        for value in list(op.results):
            encoding = encoding_of(value)
            if encoding is not None and encoding.startswith("#ttg.nvidia_mma"):
                layouts = found.setdefault(tuple(value.tensor_type.shape), [])
                if encoding not in layouts:
                    layouts.append(encoding)
    return found


def _seeds(node: Node) -> list[str]:
    """A reduction's reduce-friendly key, a load's or store's coalesced key, a local load's or
    store's key with 16-byte vectors along its buffer and its 2-D tile
    (:func:`.layout_seeds.shared_tile`), where they differ from its own."""
    seeds = []
    if node.rule.kind == "reduce" and node.rule.axis >= 0:
        seeds.append(reduce_friendly(node.stock_key, node.op.operands[0].tensor_type.shape, node.rule.axis))
    elif node.op.name in GLOBAL_ACCESS_OPS and node.contiguity is not None:
        access = global_access(node.op)
        vector = best_async_copy_vector(node.async_copy) if node.async_copy is not None else node.contiguity.vector
        seeds.append(coalesced(node.stock_key, access.shape, node.contiguity.dim, vector, access.element_bytes))
    elif node.op.name in SHARED_ACCESS_OPS and node.position < 0:
        # 16-byte vectors along the buffer's consecutive elements (the widest a plan reads)
        tensor = next(v for v in list(node.op.operands) + list(node.op.results) if encoding_of(v) is not None)
        memdesc = memdesc_of(node.op)
        dim = buffer_fastest_dim(memdesc.type) if memdesc is not None else None
        if dim is not None:
            element_bytes = max(1, tensor.tensor_type.element.logical_bits // 8)
            seeds.append(coalesced(node.stock_key, tensor.tensor_type.shape, dim, 16 // element_bytes, element_bytes))
            # and 2-D tiles: vectors along the buffer and along the next dim (a transpose's other side)
            seeds.append(shared_tile(node.stock_key, tensor.tensor_type.shape, dim, element_bytes))
    return [key for key in seeds if key is not None and key != node.stock_key]
