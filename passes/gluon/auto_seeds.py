"""A first, legal layout for every value Gluon leaves as ``#gluon.auto_encoding`` or
``#gluon.coalesced_encoding``: the starting point that ``ll-resolve-auto-layouts`` hands to the
assignment's solver.

Gluon's TTGIR before resolution (triton 3.6 and 3.9 print it the same way) gives every tensor
the author did not lay out one encoding whatever its rank (``tensor<32xi32,
#gluon.auto_encoding>`` and ``tensor<32x64xf32, #gluon.auto_encoding>``), and marks where an
author's layout meets an automatic one with ``gluon.set_auto_layout %v : T<auto> -> T<#L>``.

Each op that touches automatic values gets a :class:`~.layout_rules.Rule` (the same rules as
``ll-assign-layouts``: elementwise, source, ``expand_dims``, ``reduce``, ``trans``, ``reshape``,
``join`` and ``split``, loads and stores, ``scf.for`` iteration arguments, ``scf.if`` results,
``scf.while`` carried values) and a *key*; its values' encodings follow from the key.  A reshape,
join or split takes only a key its result follows from (:mod:`..assign.shape_layouts`: a split's
operand must hold each pair in one thread's consecutive registers); a use that arrives in another
layout is converted; a reshape that may reorder elements (``allow_reorder``) has no rule.  Keys
spread from op to op both ways, from these seeds, in this order:

1. the layouts the author fixed (``set_auto_layout``'s result): its operand is asked for it
   (a ``convert_layout`` from the author's layout into an automatic one fixes nothing: its
   result takes a key like any automatic value, and the op converts to it);
2. each load, store, atomic or ``cp.async`` not reached yet (first those the backend requires
   something of: ``cp.async``, a packed f16 / bf16 buffer atomic, 3.6's AMD ``tt.atomic_cas``),
   AMD's buffer ops alike (their pointers: a scalar base plus a tensor of offsets): the coalesced
   blocked layout its pointers allow (:func:`.layout_seeds.coalesced`, from
   :mod:`.pointer_contiguity`; for ``cp.async`` and AMD's direct-to-LDS loads the vector the
   target and the mask allow too, so that the first guess copies at least 4 bytes a thread
   wherever some layout does; for an atomic no more than one instruction updates);
3. any op still without a key: the coalesced layout of its shape with one element per thread.

Where two keys meet at one value (the conflict Triton rejects with "found conflicting encodings
for value"), the value keeps the layout its producer gives it and the use gets a
``ttg.convert_layout``: the result is always a legal module, never the best one; the solver
moves or removes those conversions.

Example (``lit/resolve-auto-layouts/conflict-outside-loop.mlir``): ``%i`` reaches
``#blocked`` through one ``set_auto_layout`` and ``#blocked1`` through another; ``%i`` takes
``#blocked`` (the first seed), and the second ``set_auto_layout`` becomes a conversion from
``#blocked`` to ``#blocked1``.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Optional

from ...dialect.attributes import BlockedEncoding
from ..assign.backend_requirements import AsyncCopyFacts, best_async_copy_vector, requirement_facts
from ..assign.layout_graph import access_contiguity
from ..assign.layout_rules import (DIRECT_TO_SHARED_OPS, ELEMENTWISE_OPS, ELEMENTWISE_PREFIXES, GLOBAL_ACCESS_OPS,
                                   SHAPE_KINDS, SHARED_ACCESS_OPS, Rule, global_access, slice_parts, trans_order)
from ..assign.layout_seeds import coalesced
from ..ir.module_lines import WARP_PARTITIONS
from ..assign.pointer_contiguity import PointerAnalysis
from ..ir.snapshot import Operation, Value, ops_under

AUTO_ENCODINGS = ("#gluon.auto_encoding", "#gluon.coalesced_encoding")
SET_AUTO_LAYOUT = "gluon.set_auto_layout"
# the stock key of a conversion whose result layout is ours to choose (a conversion from a
# fixed layout to an automatic one): no layout yet, its users' or a seed's decides the first
CHOSEN = ""
_AXIS = re.compile(r"\baxis = (\d+)")
_REORDERS = re.compile(r"\b(allow_reorder|efficient_layout)\b")


class Unresolvable(Exception):
    """An op with automatic layouts this resolution has no rule for."""

    def __init__(self, op: Operation, why: str):
        super().__init__(f"{op.location}: {op.name}: {why}")
        self.op = op


def is_auto(value: Optional[Value]) -> bool:
    tensor_type = value.tensor_type if value is not None else None
    return tensor_type is not None and tensor_type.encoding in AUTO_ENCODINGS


def touches_auto(op: Operation) -> bool:
    return any(is_auto(v) for v in list(op.operands) + list(op.results))


@dataclass
class Unit:
    """An op (or an ``scf.for`` iteration argument) whose key decides its automatic values."""

    op: Operation
    rule: Rule
    defines: list[Value]                               # values whose encoding is rule.result(key)
    uses: list[tuple[Value, Operation, int]]           # (value, consuming op, operand number)
    position: int = -1                                 # scf.for: which iteration argument; scf.if: which result
    key: Optional[str] = None
    why: str = ""                                      # the seed that gave the key, if any

    def requirement(self, operand: int) -> Optional[str]:
        if self.position >= 0 or self.rule.kind == "identity":
            return self.key
        return self.rule.operand(self.key, operand)


@dataclass
class Seeding:
    """Every automatic value's first encoding, and the uses that need a conversion."""

    units: list[Unit]
    encoding: dict[int, str]                          # id(value) -> encoding
    values: dict[int, Value]
    conversions: list[tuple[Value, Operation, int, str, str]] = field(default_factory=list)
    groups: list[list[Unit]] = field(default_factory=list)   # units tied by automatic values


def default_blocked(rank: int, num_warps: int, lanes: int) -> str:
    """A blocked layout of ``rank`` with the fastest dim last (lanes and warps are re-dealt by
    :func:`.layout_seeds.coalesced`, which reads only their numbers and the order)."""
    return str(BlockedEncoding([1] * rank, [1] * (rank - 1) + [lanes], [1] * (rank - 1) + [num_warps],
                               list(range(rank - 1, -1, -1))))


def coalesced_for(shape, element_bytes: int, dim: int, vector: int, num_warps: int, lanes: int) -> str:
    return coalesced(default_blocked(len(shape), num_warps, lanes), shape, dim, vector, element_bytes)


def _rule(op: Operation, header: str) -> Rule:
    name = op.name
    if name in ("ttg.convert_layout", SET_AUTO_LAYOUT) and is_auto(op.results[0]):
        if not is_auto(op.operands[0]):
            # a conversion from the author's layout to an automatic one (``convert_layout(acc,
            # gl.AutoLayout())`` after an MMA): the place where the author asks us to choose;
            # its result's layout is free, the operand keeps its own, and the op converts
            # between them (nowhere, where the solver gives the result the operand's layout)
            return Rule("convert", CHOSEN)
        # a conversion between two automatic layouts (set_auto_layout to gl.CoalescedLayout(),
        # as a store of a local_load's value writes it): ours to place or drop
        return Rule("identity", "")
    if name == SET_AUTO_LAYOUT or name == "ttg.convert_layout":
        return Rule("convert", op.results[0].tensor_type.encoding)
    if name in ("tt.splat", "tt.make_range") or (name == "arith.constant" and "dense<" in header):
        return Rule("source", "")
    if name in GLOBAL_ACCESS_OPS or name in SHARED_ACCESS_OPS or name == "tt.broadcast" or name in ELEMENTWISE_OPS or (
            name.startswith(ELEMENTWISE_PREFIXES) and name != "arith.constant" and not op.regions):
        return Rule("identity", "")
    if name == "tt.expand_dims":
        return Rule("expand_dims", "", int(_AXIS.search(header).group(1)))
    if name == "tt.reduce":
        return Rule("reduce", "", int(_AXIS.search(header).group(1)) if op.results and
                    op.results[0].tensor_type is not None else -1)
    if name == "tt.trans":
        perm = trans_order(header)
        if perm:
            return Rule("trans", "", perm=perm)
    if name in ("tt.reshape", "tt.join", "tt.split"):
        kind = name.split(".")[1]
        if kind == "reshape" and _REORDERS.search(header):
            # its result's element order follows the layouts Triton picks: not ours to choose
            raise Unresolvable(op, "no layout rule for a reshape that may reorder elements with automatic layouts "
                                   "(left to Triton's resolution)")
        return Rule(kind, "", shapes=(op.operands[0].tensor_type.shape, op.results[0].tensor_type.shape))
    raise Unresolvable(op, "no layout rule for this op with automatic layouts (left to Triton's resolution)")


def build_units(function: Operation, lines) -> list[Unit]:
    units: list[Unit] = []
    for op in ops_under(function):
        if op is function or not touches_auto(op):
            continue
        if op.name in ("tt.func", "tt.return", "tt.call"):
            raise Unresolvable(op, "a function boundary with automatic layouts (inline it first)")
        if op.name in ("scf.yield", "scf.condition") and op.parent_op is not None and \
                op.parent_op.name in ("scf.for", "scf.if", "scf.while"):
            continue      # its operands are uses of the loop's carried values or the if's results (below)
        if op.name == "scf.while" and len(op.regions) == 2 and all(r.blocks for r in op.regions):
            units += _while_units(op)
            continue
        if op.name == "scf.for":
            units += _loop_units(op)
            continue
        if op.name == "scf.if" and len(op.regions) == 2 and all(r.blocks for r in op.regions):
            units += _branch_units(op)
            continue
        if op.name.startswith("scf."):
            raise Unresolvable(op, "automatic layouts through this control flow are left to Triton's resolution")
        rule = _rule(op, lines.header(op))
        defines = [v for v in op.results if is_auto(v)]
        uses = [(v, op, i) for i, v in enumerate(op.operands) if is_auto(v)]
        fixed = [v for v in list(op.operands) + list(op.results) if v.tensor_type is not None
                 and v.tensor_type.encoding is not None and not is_auto(v) and not v.tensor_type.is_shared]
        unit = Unit(op, rule, defines, uses)
        if rule.kind == "convert" and rule.stock_key != CHOSEN:
            unit.key, unit.why = rule.stock_key, "set_auto_layout"
        elif rule.kind == "convert":
            pass                  # its operand is the author's: a use of no automatic value
        elif fixed:
            raise Unresolvable(op, "an op mixing automatic and fixed layouts")
        units.append(unit)
    return units


def warps_of(op: Operation, lines, num_warps: int) -> int:
    """The warps that run ``op``: a worker partition's own ``num_warps``, else the module's."""
    child, parent = op, op.parent_op
    while parent is not None:
        if parent.name == WARP_PARTITIONS and parent.parent_op is not None:
            region = next(i for i, r in enumerate(parent.regions) if child.parent is not None
                          and child.parent.parent is r)
            return lines.partition_warps(parent.parent_op)[region]
        child, parent = parent, parent.parent_op
    return num_warps


def _loop_units(loop: Operation) -> list[Unit]:
    body = loop.regions[0].blocks[0]
    terminator = body.operations[-1]
    units = []
    for i, result in enumerate(loop.results):
        if not is_auto(result):
            continue
        units.append(Unit(loop, Rule("identity", ""), [body.arguments[1 + i], result],
                          [(loop.operands[3 + i], loop, 3 + i), (terminator.operands[i], terminator, i)], position=i))
    return units


def _branch_units(branch: Operation) -> list[Unit]:
    """One unit per automatic result of an ``scf.if``: the result and what both branches yield."""
    yields = [region.blocks[0].operations[-1] for region in branch.regions]
    return [Unit(branch, Rule("identity", ""), [result], [(y.operands[i], y, i) for y in yields], position=i)
            for i, result in enumerate(branch.results) if is_auto(result)]


def _while_units(loop: Operation) -> list[Unit]:
    """One unit per automatic value an ``scf.while`` carries: its initial value, both regions'
    arguments, what ``scf.condition`` forwards, what the after region yields and the result."""
    before, after = (region.blocks[0] for region in loop.regions)
    condition, yielded = before.operations[-1], after.operations[-1]
    units = []
    for i, result in enumerate(loop.results):
        if not is_auto(result):
            continue
        units.append(Unit(loop, Rule("identity", ""), [before.arguments[i], after.arguments[i], result],
                          [(loop.operands[i], loop, i), (condition.operands[i + 1], condition, i + 1),
                           (yielded.operands[i], yielded, i)], position=i))
    return units


def seed_layouts(function: Operation, lines, num_warps: int, lanes: int) -> Seeding:
    """Give every automatic value of ``function`` an encoding (see the module docstring)."""
    units = _printing_authors_layouts(build_units(function, lines))
    values: dict[int, Value] = {}
    producer: dict[int, Unit] = {}
    consumers: dict[int, list[tuple[Unit, int]]] = {}
    for unit in units:
        for v in unit.defines:
            producer[id(v)] = unit
            values[id(v)] = v
        for index, (v, _op, operand) in enumerate(unit.uses):
            consumers.setdefault(id(v), []).append((unit, index))
            values[id(v)] = v
    encoding: dict[int, str] = {}
    work: deque[Unit] = deque()

    def give(unit: Unit, key: str, why: str) -> None:
        unit.key, unit.why = key, why
        work.append(unit)

    def spread() -> None:
        while work:
            unit = work.popleft()
            for v in unit.defines:
                encoding[id(v)] = unit.rule.result(unit.key) if unit.position < 0 else unit.key
                if encoding[id(v)] is None:      # (a key the rule has no result for: never written)
                    raise Unresolvable(unit.op, f"no result layout follows from {unit.key} "
                                                "(left to Triton's resolution)")
                for consumer, index in consumers.get(id(v), []):
                    if consumer.key is None:
                        keys = _keys_for_use(consumer, index, encoding[id(v)])
                        if keys:
                            give(consumer, keys[0], unit.why)
            for index, (v, _op, operand) in enumerate(unit.uses):
                # a set_auto_layout asks for its layout without requiring it (it converts)
                needed = unit.key if unit.rule.kind == "convert" else \
                    unit.requirement(operand if unit.position < 0 else -1)
                source = producer.get(id(v))
                if needed is None or source is None or source.key is not None:
                    continue
                keys = [needed] if source.position >= 0 else _usable(source, source.rule.keys_for_result(needed))
                if keys:
                    give(source, keys[0], unit.why)

    for unit in units:                      # 1. the author's layouts
        if unit.key is not None:
            work.append(unit)
    spread()
    pointers = PointerAnalysis.of_function(lines, function)
    # 2. loads, stores, buffer atomics and cp.async: their pointers' coalesced layout; first the ops the
    # backend requires something of (cp.async, a packed buffer atomic), since it rejects one
    # that is too narrow while a narrow load only costs more
    accesses = sorted((u for u in units if u.op.name in GLOBAL_ACCESS_OPS and global_access(u.op) is not None),
                      key=lambda u: requirement_facts(u.op, pointers) is None)
    for unit in accesses:
        if unit.key is None:
            access = global_access(unit.op)        # pointers, or a buffer op's base and offsets
            contiguity = access_contiguity(unit.op, pointers)
            dim, vector = (contiguity.dim, contiguity.vector) if contiguity else (len(access.shape) - 1, 1)
            if unit.op.name in DIRECT_TO_SHARED_OPS:      # the widest the target and the mask allow too
                vector = best_async_copy_vector(AsyncCopyFacts.of(unit.op, pointers))
            give(unit, coalesced_for(access.shape, access.element_bytes, dim, vector,
                                     warps_of(unit.op, lines, num_warps), lanes), f"coalesced:{dim}:{vector}")
            spread()
    for unit in units:                      # 3. the rest: one element per thread, coalesced
        if unit.key is None:
            give(unit, _default_key(unit, warps_of(unit.op, lines, num_warps), lanes), "default")
            spread()
    seeding = Seeding(units, encoding, values)
    for unit in units:
        for v, op, operand in unit.uses:
            needed = unit.requirement(operand if unit.position < 0 else -1)
            if needed is not None and encoding[id(v)] != needed:
                seeding.conversions.append((v, op, operand, encoding[id(v)], needed))
    seeding.groups = _groups(units, producer, consumers)
    return seeding


def _printing_authors_layouts(units: list[Unit]) -> list[Unit]:
    """``units``, each shape op's result that is the same layout as one the author wrote printed
    as that one, so that the set_auto_layout it meets folds away (see ``Rule.known``)."""
    known = tuple(dict.fromkeys(u.rule.stock_key for u in units if u.rule.kind == "convert"
                                and u.rule.stock_key != CHOSEN))
    for unit in units:
        if unit.rule.kind in SHAPE_KINDS:
            unit.rule = replace(unit.rule, known=known)
    return units


def _keys_for_use(unit: Unit, index: int, encoding: str) -> list[str]:
    if unit.rule.kind == "convert":
        return []
    if unit.position >= 0:
        return [encoding]
    return _usable(unit, unit.rule.keys_for_operand(encoding, unit.uses[index][2]))


def _usable(unit: Unit, keys: list[str]) -> list[str]:
    """``keys`` a reshape, join or split can take: those the algebra gives a result for (a split
    takes only an operand whose last dimension is register basis 0; the use of a value in any
    other layout gets a conversion instead)."""
    if unit.rule.kind not in SHAPE_KINDS:
        return keys
    return [key for key in keys if unit.rule.accepts(key)]


def _default_key(unit: Unit, num_warps: int, lanes: int) -> str:
    """Step 3's key: one element per thread, coalesced, on the key's shape; for a shape op whose
    operand cannot take that (a split), the key that gives its result that layout instead."""
    shape = _key_shape(unit)
    key = coalesced_for(shape, 4, len(shape) - 1, 1, num_warps, lanes)
    if unit.rule.kind not in SHAPE_KINDS or unit.rule.accepts(key):
        return key
    result_shape = unit.defines[0].tensor_type.shape
    keys = _usable(unit, unit.rule.keys_for_result(coalesced_for(result_shape, 4, len(result_shape) - 1, 1,
                                                                 num_warps, lanes)))
    if not keys:
        raise Unresolvable(unit.op, "no layout of its operand that this op's result can take "
                                    "(left to Triton's resolution)")
    return keys[0]


def _key_shape(unit: Unit) -> tuple:
    """The shape whose rank the unit's key has (a reduction's, a transpose's and a reshape's,
    join's or split's operand)."""
    if unit.rule.kind in ("reduce", "trans") + SHAPE_KINDS or \
            unit.rule.kind == "identity" and unit.uses and not unit.defines:
        return unit.uses[0][0].tensor_type.shape
    return unit.defines[0].tensor_type.shape


def _groups(units: list[Unit], producer: dict, consumers: dict) -> list[list[Unit]]:
    """Units tied by automatic values (union-find over values), in program order."""
    parent = list(range(len(units)))
    index_of = {id(u): i for i, u in enumerate(units)}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for v_id, users in consumers.items():
        source = producer.get(v_id)
        for consumer, _index in users:
            if source is not None:
                parent[find(index_of[id(source)])] = find(index_of[id(consumer)])
            parent[find(index_of[id(consumer)])] = find(index_of[id(users[0][0])])
    groups: dict[int, list[Unit]] = {}
    for i, unit in enumerate(units):
        groups.setdefault(find(i), []).append(unit)
    return sorted(groups.values(), key=lambda g: index_of[id(g[0])])
