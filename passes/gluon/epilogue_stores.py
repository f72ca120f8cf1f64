"""A store from a layout the hardware forces, laid out anew behind one conversion: the edit an
epilogue-store finding of the advice makes (``advice.epilogue_edit``), and the alternative
``ll-resolve-auto-layouts`` weighs where an automatic store meets an accumulator.

A value an MMA unit produces (an accumulator in ``#ttg.nvidia_mma``, ``#ttg.amd_mfma``,
``#ttg.amd_wmma``, or a ``ttng.tmem_load``'s result) has its layout forced; a store of it in that
layout may store narrow (``st.global.b32`` from a wgmma accumulator's f16).  The alternative:
every op between the forced values and the store that only feeds the store (elementwise work,
loads of operands such as a bias, constants, the address chain -- ``tt.make_range``,
``tt.splat``, ``tt.expand_dims``, ``tt.broadcast``, ``tt.addptr`` -- and the mask) is given
``#gluon.auto_encoding``, each value it reads from outside in a fixed layout is converted into it
(``gl.convert_layout(v, gl.AutoLayout())``), and a ``gluon.set_auto_layout`` among those ops (the
mark Gluon's front end puts where an automatic value meets a fixed one) is dropped, its users
reading the automatic value itself.  ``ll-resolve-auto-layouts`` then chooses every layout and
where the conversion runs.  Example: ``benchmarks/harness/hopper_kernels.py``'s
``wgmma_direct_epilogue`` written with no layout (the bias, the indices and the store meet the
accumulator directly) becomes a conversion of the accumulator, the bias loaded coalesced, and
16-byte stores.

This module writes the text; whether the alternative is taken is its caller's choice: priced on
the whole kernel (:mod:`.kernel_price`) by the advice and by the resolution alike.
"""

from __future__ import annotations

import re
from typing import Optional

from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.snapshot import Module, Operation, Value
from ..ir.text_edits import mlir_string_literal
from .auto_seeds import SET_AUTO_LAYOUT, is_auto

AUTO = "#gluon.auto_encoding"
# the layouts an MMA unit gives its accumulator (a ``tmem_load``'s result is found by its producer)
MMA_ENCODINGS = ("#ttg.nvidia_mma", "#ttg.amd_mfma", "#ttg.amd_wmma")
FORCING_OPS = ("ttng.tmem_load",)
# the ops the edit may lay out anew: elementwise ops (``arith.*``, ``math.*``) and these
MOVABLE = ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.make_range", "tt.addptr", "tt.load",
           "ttg.convert_layout", "tt.fp_to_fp", "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int")
_TYPE = re.compile(r"tensor<((?:\d+x)+(?:!tt\.ptr<[^<>]*>|\w+)), #[\w.]+(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)?>")
_LOCATION = re.compile(r"^(.*):(\d+):(\d+)$")


def forced_layout(value: Value, limit: int = 64) -> Optional[str]:
    """The layout of a stored ``value`` where the hardware forces it: an MMA accumulator's
    (``#ttg.nvidia_mma`` v2/v3, ``#ttg.amd_mfma``, ``#ttg.amd_wmma``) or a ``ttng.tmem_load``'s
    result layout reaching the value through ops of that same layout; None otherwise."""
    tensor_type = value.tensor_type
    encoding = tensor_type.encoding if tensor_type is not None else None
    if encoding is None:
        return None
    if encoding.startswith(MMA_ENCODINGS):
        return encoding
    seen, stack = set(), [value]
    while stack and len(seen) < limit:
        current = stack.pop()
        op = current.defining_op if not current.is_block_argument else None
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        if op.name in FORCING_OPS:
            return encoding
        if op.regions:
            continue
        stack += [o for o in op.operands if o.tensor_type is not None and o.tensor_type.encoding == encoding]
    return None


def _movable(op: Operation) -> bool:
    if op.regions or not any(r.tensor_type is not None for r in op.results):
        return False
    return op.name in MOVABLE or op.name == SET_AUTO_LAYOUT or op.name.startswith(("arith.", "math."))


def epilogue_region(store: Operation, users: dict, others: tuple = ()) -> dict[int, Operation]:
    """id -> op of the ops the edit lays out anew for ``store``: those its operands are made by
    (backwards, in the store's block) that are movable and whose results only these ops, the
    store (or ``others``, stores edited at once) read."""
    region: dict[int, Operation] = {}
    stack = [o.defining_op for o in store.operands if not o.is_block_argument]
    while stack:
        op = stack.pop()
        if op is None or id(op) in region or op.parent_op is not store.parent_op or not _movable(op):
            continue
        region[id(op)] = op
        stack += [o.defining_op for o in op.operands if not o.is_block_argument]
    ends = {id(store)} | {id(o) for o in others}
    changed = True
    while changed:
        changed = False
        for key, op in list(region.items()):
            if any(id(u) not in region and id(u) not in ends for r in op.results for u in users.get(id(r), ())):
                del region[key]
                changed = True
    return region


def met_stores(module: Module) -> list[Operation]:
    """The ``tt.store`` ops whose pointers were automatic and meet a forced value's layout only by
    a ``gluon.set_auto_layout`` (Gluon's front end marks ``gl.store(ptrs, acc)`` so, ``ptrs``
    built with no layout): the stores the resolution weighs the alternative for.  A store whose
    pointers the author built in a written layout is none of them."""
    found = []
    for op in module.walk():
        if op.name != "tt.store" or len(op.operands) < 2:
            continue
        pointers = op.operands[0]
        meeting = pointers.defining_op if not pointers.is_block_argument else None
        if meeting is None or meeting.name != SET_AUTO_LAYOUT or not is_auto(meeting.operands[0]):
            continue
        forced = forced_layout(op.operands[1])
        if forced is not None and pointers.tensor_type.encoding == forced:
            found.append(op)
    return found


def write_auto_epilogue(module: Module, lines: ModuleLines, stores: list[Operation], users: dict) -> int:
    """Edit ``lines`` (``module``'s) so that each of ``stores`` and the ops that only feed it are
    automatic behind conversions of the fixed values they read (module docstring); the number of
    ops laid out anew.  The text then parses to a module for ``ll-resolve-auto-layouts``."""
    region: dict[int, Operation] = {}
    for store in stores:
        region.update(epilogue_region(store, users, tuple(stores)))
    dropped = {id(op.results[0]): op.operands[0] for op in region.values() if op.name == SET_AUTO_LAYOUT}

    def through(value: Value) -> Value:          # a dropped mark's value: the automatic value it marked
        while id(value) in dropped:
            value = dropped[id(value)]
        return value

    converted: dict[int, str] = {}
    for op in [op for op in module.walk() if id(op) in region] + list(stores):
        if op.name == SET_AUTO_LAYOUT:
            lines.lines[lines.of[id(op)].header] = ""
            continue
        renamed = set()
        for operand in op.operands:
            if operand.tensor_type is None or id(operand) in renamed:
                continue
            renamed.add(id(operand))
            source = through(operand)
            if source is not operand:
                lines.rename_operand(op, lines.name_of(operand), lines.name_of(source))
                if id(source) in renamed:
                    continue
                renamed.add(id(source))
            if is_auto(source) or (source.defining_op is not None and id(source.defining_op) in region):
                continue
            if id(source) not in converted:
                converted[id(source)] = name = f"%ll_epilogue{len(converted)}"
                base = _TYPE.match(source.type)
                if base is None:
                    raise TextMismatch(f"{op.name}: an operand's type {source.type[:60]} not read")
                lines.insert_after_definition(source, f"{name} = ttg.convert_layout {lines.name_of(source)} : "
                                                      f"{source.type} -> tensor<{base.group(1)}, {AUTO}> "
                                                      f"{_loc(source, op)}")
            lines.rename_operand(op, lines.name_of(source), converted[id(source)])
        lines.replace_each_type(op, _TYPE, lambda base: f"tensor<{base}, {AUTO}>")
    return len(region)


def _loc(value: Value, user: Operation) -> str:
    """The location of a conversion written after ``value``'s definition: its defining op's
    (a block argument's: the user's)."""
    op = value.defining_op if not value.is_block_argument else None
    where = op.location if op is not None and op.location != "unknown" else user.location
    m = _LOCATION.match(where or "")
    if m is None:
        return "loc(unknown)"
    return f"loc({mlir_string_literal(m.group(1))}:{m.group(2)}:{m.group(3)})"
