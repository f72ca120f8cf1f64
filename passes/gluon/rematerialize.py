"""Recompute index arithmetic in the layout a conversion asks for, instead of converting it.

After ``ll-resolve-auto-layouts`` chooses layouts, one index vector may be needed in two
layouts (a transpose's row offsets: by the load in one layout, by the store in another).  The
assignment gives each value one layout, so the second becomes a ``ttg.convert_layout`` of
integers.  Converting costs a shuffle or a trip through shared memory, and worse: once our
island lowers it, Triton's axis analysis no longer sees that the offsets are multiples of 16
bytes, and the loads they address stop vectorizing.  Triton's own canonicalizer recomputes a
converted range, splat or constant; this does the same for a whole chain of them.

A conversion qualifies when its operand is an integer or pointer tensor computed only by ops
that read no memory and whose layouts follow one another by the rules below, from scalars:

* ``tt.make_range``, ``tt.splat`` of a scalar, a splat ``arith.constant``: the leaves;
* ``tt.broadcast``, ``tt.addptr``, ``arith`` integer ops and ``arith.cmpi`` (a mask): operands in
  the result's layout;
* ``tt.expand_dims`` on axis ``a``: its operand in ``#ttg.slice<{dim = a, parent = L}>``;
* ``ttg.convert_layout``: its operand recomputed in the layout needed (no copy of the op).

The chain is copied, each op in the layout the conversion's result needs (a value needed in
two layouts is copied twice), right after the operand's definition; the conversion then goes
from that layout to itself and the canonicalizer folds it, and the original chain, if nothing
else uses it.  Worked example::

    %r = tt.make_range ...            : tensor<64xi32, #slice<{dim = 1, parent = #A}>>
    %x = tt.expand_dims %r {axis = 1} : ... -> tensor<64x1xi32, #A>
    %m = arith.muli %x, %n            : tensor<64x1xi32, #A>
    %c = ttg.convert_layout %m        : tensor<64x1xi32, #A> -> tensor<64x1xi32, #B>

becomes a second range in ``#slice<{dim = 1, parent = #B}>``, expanded and multiplied in
``#B``; ``%c`` is then a no-op.
"""

from __future__ import annotations

import re
from typing import Optional

from ..assign.layout_costs import elementwise_work
from ..assign.layout_rules import slice_of
from ..assign.pipe_time import Work
from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.snapshot import Module, Operation, Value

MAX_CHAIN = 32
_LEAVES = frozenset({"tt.make_range", "tt.splat", "arith.constant"})
_SAME_LAYOUT = frozenset({"tt.broadcast", "tt.addptr", "arith.addi", "arith.subi", "arith.muli", "arith.divsi",
                          "arith.divui", "arith.remsi", "arith.remui", "arith.andi", "arith.ori", "arith.xori",
                          "arith.shli", "arith.shrsi", "arith.shrui", "arith.extsi", "arith.extui", "arith.trunci",
                          "arith.minsi", "arith.maxsi", "arith.minui", "arith.maxui", "arith.cmpi"})
_AXIS = re.compile(r"\baxis = (\d+)")


def _is_index(value: Value) -> bool:
    element = value.tensor_type.element_type if value.tensor_type is not None else ""
    return element.startswith("!tt.ptr") or re.fullmatch(r"i\d+", element) is not None


def _chain(value: Value, lines: ModuleLines) -> Optional[list[Operation]]:
    """The ops that compute ``value`` from scalars, if every one may be recomputed (else None)."""
    ops, seen, work = [], set(), [value]
    while work:
        v = work.pop()
        op = v.defining_op
        if op is None or len(op.results) != 1:
            return None
        if id(op) in seen:
            continue
        seen.add(id(op))
        ops.append(op)
        if len(ops) > MAX_CHAIN or not (op.name in _LEAVES or op.name in _SAME_LAYOUT
                                        or op.name in ("tt.expand_dims", "ttg.convert_layout")):
            return None
        if op.name == "arith.constant" and "dense<" not in lines.header(op):
            return None
        if op.name == "tt.splat" and op.operands[0].tensor_type is not None:
            return None
        if op.name not in _LEAVES:
            work += [u for u in op.operands if u.tensor_type is not None]
    return ops


def _operand_encoding(op: Operation, header: str, encoding: str) -> str:
    if op.name == "tt.expand_dims":
        return slice_of(int(_AXIS.search(header).group(1)), encoding)
    return encoding


def _copy_line(op: Operation, header: str, encoding: str, name: str, renamed: dict[str, str],
               strict: bool = False) -> str:
    """``op``'s line computing its result in ``encoding``, as ``name``, reading ``renamed``
    operands (``strict``: see ``_rematerialize``)."""
    line = header.strip()
    old = op.results[0].tensor_type.encoding
    if strict and old not in line:
        raise TextMismatch(f"{op.name}: its line does not print {old[:60]}")
    if op.name == "tt.expand_dims":
        head, arrow, result_type = line.rpartition(" -> ")
        old_operand = op.operands[0].tensor_type.encoding
        if strict and (old_operand not in head or old not in result_type):
            raise TextMismatch(f"{op.name}: its line does not print its types as MLIR does")
        line = head.replace(old_operand, _operand_encoding(op, header, encoding)) + arrow + \
            result_type.replace(old, encoding)
    else:
        line = line.replace(old, encoding)
    line = re.sub(r"^%[\w$.#-]+ =", f"{name} =", line)
    for before, after in renamed.items():
        line = re.sub(re.escape(before) + r"(?![\w$.#-])", after, line)
    return line


def recompute_work(value: Value, lines: ModuleLines, encoding: str, target) -> Optional[Work]:
    """What recomputing ``value`` in ``encoding`` costs, as this module will do it in place of a
    conversion (None: its chain does not qualify, the conversion stays).  The solver prices a
    conversion of such a value at the least of the two, so that an index vector two layouts
    need (a bias load's columns and a store's) does not tie their layouts together.  Priced
    as every op of the chain run in ``encoding`` on the value's shape: an upper bound (the
    ops before an ``expand_dims`` hold fewer elements).  Example: the columns of a 64x64
    store, ``tt.make_range`` in a slice of the accumulator's layout, needed in a slice of a
    blocked one: one range, 2 registers a thread, where a conversion through shared memory
    costs a store, a barrier and a load."""
    if value.tensor_type is None or not _is_index(value) or value.tensor_type.encoding is None:
        return None
    chain = _chain(value, lines)
    if chain is None:
        return None
    ops = sum(1 for op in chain if op.name != "ttg.convert_layout")
    return elementwise_work(encoding, value.tensor_type.shape, target).scaled(ops)


def rematerialize_conversions(module: Module, text: Optional[str] = None) -> int:
    """Recompute every qualifying conversion's operand in its result's layout (see the module
    docstring); returns how many conversions became no-ops.  ``text``: the text the module was
    just parsed from, where the caller has it (no print of the module; where its lines do not
    line up or spell a type otherwise than MLIR, or leave an op's location out, the module as
    printed)."""
    if text is not None and not module.has_temporary_locations:
        try:
            return _rematerialize(module, ModuleLines(module, text), strict=True)
        except TextMismatch:
            pass
    return _rematerialize(module, ModuleLines(module, module.print(debuginfo=True)))


def rematerialized(module: Module, text: str) -> tuple[Optional[int], str]:
    """(how many conversions became no-ops, the new text) for ``module`` read with ``text``,
    the text it stands for, without changing ``module``: where ``module`` was built in Python
    (``passes.ir.edited_snapshot``), the edits go into the one text parsed next.  (None, ``text``)
    where its lines do not line up or spell a type otherwise than MLIR (the caller parses
    ``text`` and calls :func:`rematerialize_conversions`)."""
    try:
        lines = ModuleLines(module, text)
        done = _rematerialize(module, lines, strict=True, commit=False)
    except TextMismatch:
        return None, text
    return done, lines.text() if done else text


def _rematerialize(module: Module, lines: ModuleLines, strict: bool = False, commit: bool = True) -> int:
    """``strict``: the lines are not MLIR's print, so every type an edit replaces must be
    spelled on them as MLIR spells it (else TextMismatch, and the caller prints the module).
    ``commit``: the module becomes the edited lines (else the caller takes them)."""
    counter = [0]
    done = 0
    for convert in [op for op in module.walk() if op.name == "ttg.convert_layout"]:
        source, target = convert.operands[0], convert.results[0].tensor_type.encoding
        if source.tensor_type is None or not _is_index(source) or source.tensor_type.encoding is None:
            continue
        chain = _chain(source, lines)
        if chain is None:
            continue
        copies: dict[tuple[int, str], str] = {}
        new_lines: list[str] = []

        def copy(value: Value, encoding: str) -> str:
            key = (id(value), encoding)
            if value.defining_op.name == "ttg.convert_layout":    # an earlier conversion: recompute past it
                return copy(value.defining_op.operands[0], encoding)
            if key not in copies:
                op = value.defining_op
                header = lines.header(op)
                renamed = {}
                if op.name not in _LEAVES:
                    needed = _operand_encoding(op, header, encoding)
                    for operand in op.operands:
                        if operand.tensor_type is not None:
                            renamed[lines.name_of(operand)] = copy(operand, needed)
                name = f"%ll_remat{counter[0]}"
                counter[0] += 1
                new_lines.append(_copy_line(op, header, encoding, name, renamed, strict))
                copies[key] = name
            return copies[key]

        recomputed = copy(source, target)
        for text in new_lines:
            lines.insert_after_definition(source, text)
        index = lines.of[id(convert)].header
        head, arrow, result_type = lines.lines[index].rpartition(" -> ")
        if strict and source.tensor_type.encoding not in head:
            raise TextMismatch(f"ttg.convert_layout at line {lines.line_number(index)} does not print {source.tensor_type.encoding[:60]}")
        head = re.sub(re.escape(lines.name_of(source)) + r"(?![\w$.#-])", recomputed, head)
        lines.lines[index] = head.replace(source.tensor_type.encoding, target) + arrow + result_type
        done += 1
    if done and commit:
        module.replace_text(lines.text())
    return done
