"""The edit of an epilogue-store finding (``layout_advice``'s ``EPILOGUE_STORE``): a store whose
value is in a layout the hardware forces (an MMA accumulator's) converted first to a layout it
stores wider in, with the work between them and the store's addresses laid out anew.

Where the value comes from an accumulator, its layout is no variable the author can change
(``advice_edits``' edit changes a variable everywhere it is used): the author converts, with
``y = gl.convert_layout(y, L)``, and builds the indices in ``L``'s slices.  Where to convert
(right after the accumulator, or after the bias and the activation) and which ``L`` are choices
of cost, and ``ll-resolve-auto-layouts`` makes exactly these choices for the automatic form of
such an epilogue.  So the edit is made as an author asks for it in Gluon: every op between the
forced values and the store that only feeds the store (elementwise work, loads of operands such
as a bias, constants, the address chain -- ``tt.make_range``, ``tt.splat``, ``tt.expand_dims``,
``tt.broadcast``, ``tt.addptr`` -- and the mask) is given ``#gluon.auto_encoding``, each value
it reads from outside is converted into it (``gl.convert_layout(v, gl.AutoLayout())``), and
:func:`..gluon.resolve_auto_layouts.resolve_module` chooses every layout and where the
conversion runs, by the model ``kernel_price`` prices (the same cost).  Example: the direct
epilogue of ``benchmarks/studies/epilogue_store.py`` (bias add and ReLU in the ``wgmma``
layout, 4-byte stores) becomes a conversion right after ``acc.to(gl.float16)``, the bias loaded
coalesced, and 16-byte stores: the expert's converted epilogue.
"""

from __future__ import annotations

import re
from typing import Optional

from ...lowering.target import Target
from ..gluon.resolve_auto_layouts import resolve_module
from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.op_locations import users_of
from ..ir.snapshot import Module, Operation, Value, parse_module
from ..ir.text_edits import mlir_string_literal

AUTO = "#gluon.auto_encoding"
# the layouts an MMA unit gives its accumulator (a ``tmem_load``'s result is found by its producer)
MMA_ENCODINGS = ("#ttg.nvidia_mma", "#ttg.amd_mfma", "#ttg.amd_wmma")
FORCING_OPS = ("ttng.tmem_load",)
# the ops an epilogue's edit may lay out anew: elementwise ops (``arith.*``, ``math.*``) and these
MOVABLE = ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.make_range", "tt.addptr", "tt.load",
           "ttg.convert_layout", "tt.fp_to_fp", "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int")
_TYPE = re.compile(r"tensor<((?:\d+x)+(?:!tt\.ptr<[^<>]*>|\w+)), #[\w.]+(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)?>")
_LOCATION = re.compile(r"^(.*):(\d+):(\d+)$")


class EpilogueUnresolved(TextMismatch):
    """The epilogue's automatic form did not resolve (the edit is no advice then)."""


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
    return op.name in MOVABLE or op.name.startswith(("arith.", "math."))


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


def epilogue_trial(module: Module, stores: list[tuple], target: Target, edits: list[str]) -> Module:
    """A new module: ``module`` (a trial of its own, in the context of the kernel) with each
    store of ``stores`` ((op key, location): ``("tt.store", k)`` and where the finding places it) and the work that only feeds it laid out
    by ``ll-resolve-auto-layouts`` (module docstring).  Raises :class:`EpilogueUnresolved`
    where the resolution gives up."""
    from .findings import op_keys
    text = module.print(debuginfo=True)
    lines = ModuleLines(module, text)
    keys = op_keys(module)
    by_key = {keys[id(op)]: op for op in module.walk()}
    chosen = [by_key[k] for k, _ in stores if k in by_key]
    if len(chosen) != len(stores):
        raise EpilogueUnresolved("an advised store is not in the trial")
    users = users_of(module)
    region: dict[int, Operation] = {}
    for store in chosen:
        region.update(epilogue_region(store, users, tuple(chosen)))
    converted: dict[int, str] = {}
    for op in [op for op in module.walk() if id(op) in region] + chosen:
        renamed = set()
        for operand in op.operands:
            if operand.tensor_type is None or (operand.defining_op is not None and id(operand.defining_op) in region) \
                    or id(operand) in renamed:
                continue
            renamed.add(id(operand))
            if id(operand) not in converted:
                converted[id(operand)] = name = f"%ll_epilogue{len(converted)}"
                base = _TYPE.match(operand.type)
                if base is None:
                    raise EpilogueUnresolved(f"{op.name}: an operand's type {operand.type[:60]} not read")
                lines.insert_after_definition(operand, f"{name} = ttg.convert_layout {lines.name_of(operand)} : "
                                                       f"{operand.type} -> tensor<{base.group(1)}, {AUTO}> "
                                                       f"{_loc(operand, op)}")
            lines.rename_operand(op, lines.name_of(operand), converted[id(operand)])
        lines.replace_each_type(op, _TYPE, lambda base: f"tensor<{base}, {AUTO}>")
    trial = parse_module(lines.text(), module.filename, safe=module.safe, context=module.context, marked=False)
    resolution = resolve_module(trial, target, compare=False, price=False)
    if not resolution.resolved:
        raise EpilogueUnresolved(f"the epilogue's automatic form did not resolve: {resolution.reason}")
    for (key, where) in stores:
        edits.append(f"{key[0]} #{key[1]} at {where}: its value converted before it, "
                     f"{len(region)} op(s) feeding it laid out by ll-resolve-auto-layouts")
    return trial


def _loc(value: Value, user: Operation) -> str:
    """The location of a conversion written after ``value``'s definition: its defining op's
    (a block argument's: the user's)."""
    op = value.defining_op if not value.is_block_argument else None
    where = op.location if op is not None and op.location != "unknown" else user.location
    m = _LOCATION.match(where or "")
    if m is None:
        return "loc(unknown)"
    return f"loc({mlir_string_literal(m.group(1))}:{m.group(2)}:{m.group(3)})"
