"""The text editor of a printed module: edits that change the layouts of its tensors, insert
conversions and rename operands, shared by ``ll-assign-layouts`` (``passes.assign``),
``ll-resolve-auto-layouts`` (``passes.gluon``) and ``ll-apply-advice`` (``passes.advice``).

Triton's Python bindings cannot change a value's type or build most ops, so these passes
rewrite the printed module (as every other structural edit here does, see
:meth:`.snapshot.Module.rewrite_text`) and lets Triton's parser check the result.

:class:`ModuleLines` ties the snapshot's ops to the lines that print them.  MLIR prints a module
in pre-order, one op per line: an op without regions is one line; an op with regions is a first
line (``scf.for ... {``, ``%r = "tt.reduce"(%x) <{axis = 1 : i32}> ({``), the lines of its regions,
and a last line at the op's own indentation (``}``, ``}) : (tensor<...>) -> tensor<...>``).
Block labels (``^bb0(...)``) and the ``} else {`` / ``} do {`` between regions belong to no op;
the one label an edit needs, that of an ``scf.while``'s after region (the only place its
arguments are printed), is remembered with the while::

    %r:2 = scf.while (%arg3 = %x, %arg4 = %c0) : (T0, i32) -> (T0, i32) {   <- before arguments
      scf.condition(%c) %arg3, %arg4 : T0, i32
    } do {
    ^bb0(%arg3: T0, %arg4: i32):                                            <- after arguments
      scf.yield %p, %q : T0, i32
    }

Walking the snapshot and the lines together gives every op its lines.  The snapshot has ops
the print leaves out: an ``scf.if`` without results and an ``scf.for`` without iteration
arguments print their regions without the ``scf.yield`` that ends each block (MLIR's
``printBlockTerminators=false``).  Whether a yield was left out is read from where the walk
stands, never from what the next op is: the yield is the last op of its block, so it was left
out exactly when the next line closes its region::

    %acc = scf.for %k = ... iter_args(%a = %cst) -> (T) : i32 {
      scf.if %p {
        ttng.barrier_expect %b, 24576, %true : ...
      }                                          <- the if's yield: left out, its region ends here
      scf.yield %a : T                           <- the for's yield: printed (it carries %a)
    }

(Peeking for "the next op line is an ``scf.yield``" would give the for's yield to the if, and
the walk would lose its place.)  Every other line must be what the walk expects: the op's own
line (its first word is the op's name), its own ``}`` at its indentation, or a line of no op
(``} else {``, ``^bb0(...):``, a region label); anything else stops the walk with a
:class:`TextMismatch` that names the op and its line in the text given (alias definitions
counted), and the caller keeps the module as it was.

Encoding aliases (``#blocked = #ttg.blocked<...>``) are expanded first, so every type on a line
is spelled exactly as :attr:`.snapshot.Value.type` spells it and a layout change is a text
substitution of one encoding by another on the op's own lines::

    %5 = arith.addf %3, %4 : tensor<64xf32, #ttg.blocked<{sizePerThread = [2], ...}>>
    -> (key #ttg.blocked<{sizePerThread = [2], ...}> replaced by #ttg.slice<{dim = 1, ...}>)
    %5 = arith.addf %3, %4 : tensor<64xf32, #ttg.slice<{dim = 1, ...}>>
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from .snapshot import Module, Operation, Value
from .types import alias_pattern, split_top_level


WARP_PARTITIONS = "ttg.warp_specialize.partitions"
# The region labels a ttg.warp_specialize prints: ``default {``, ``partition0(%a: T) num_warps(4) {``.
_REGION_LABEL = re.compile(r"^(default \{|partition\d+\(.*\) num_warps\(\d+\) \{)$")
_PARTITION_WARPS = re.compile(r"\) num_warps\((\d+)\) \{$")


class TextMismatch(Exception):
    """The printed module does not line up with the snapshot as expected."""


@dataclass
class OpLines:
    header: int                       # index of the op's first line
    closer: Optional[int] = None      # index of its last line, for ops with regions
    result_names: list[str] = field(default_factory=list)
    iter_args: list[str] = field(default_factory=list)   # scf.for: the body's iteration arguments;
                                                         # scf.while: the before region's arguments
    after_label: Optional[int] = None                    # scf.while: index of the after region's ^bb0 line
    after_args: list[str] = field(default_factory=list)  # scf.while: the after region's arguments
    arguments: list[str] = field(default_factory=list)   # tt.func: the function's arguments


_RESULTS = re.compile(r"^\s*(%[^=]*?) = ")
_ITER_ARGS = re.compile(r"iter_args\((.*?)\) ->")
_WHILE_ARGS = re.compile(r"scf\.while \((.*?)\) : \(")
_LOCATION_ALIAS = re.compile(r"^#loc")
_FUNCTION_ARGUMENT = re.compile(r"(%[\w$.-]+): ")
# an op's line: results (``%a, %b = ``, ``%r:2 = ``), then the op's name, quoted in generic form
_OP_NAME = re.compile(r'^\s*(?:%[^=]*? = )?"?([\w$.]+)')


def _defines_alias(line: str) -> bool:
    """``#blocked = #ttg.blocked<...>`` (location aliases ``#loc3 = loc(...)`` are kept)."""
    return line.startswith("#") and not _LOCATION_ALIAS.match(line) and " = " in line


def expand_aliases(text: str, aliases: dict[str, str]) -> str:
    """``text`` with every attribute alias except locations replaced by what it stands for,
    and the alias definitions removed."""
    lines = [line for line in text.split("\n") if not _defines_alias(line)]
    text = "\n".join(lines)
    for name in sorted(aliases, key=len, reverse=True):
        if not name.startswith("#loc"):
            text = alias_pattern(name).sub(lambda _m, v=aliases[name]: v, text)
    return text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _printed_name(op: Operation) -> str:
    return "module" if op.name == "builtin.module" else op.name


class ModuleLines:
    """The module's printed lines, each op's place among them, and pending edits."""

    def __init__(self, module: Module, text: str):
        # the aliases the text itself defines: no print of the module to find them
        self.lines = expand_aliases(text, module.aliases(text)).split("\n")
        # self.lines[i] is line _line_numbers[i] of ``text``: messages name the line the user sees
        self._line_numbers = [number for number, line in enumerate(text.split("\n"), start=1)
                              if not _defines_alias(line)]
        self.of: dict[int, OpLines] = {}
        self._inserted: dict[int, list[str]] = {}
        self._position = 0
        self._place(module.body)

    def line_number(self, index: int) -> int:
        """The number of the line of the text given that ``self.lines[index]`` is (1-based)."""
        return self._line_numbers[index] if index < len(self._line_numbers) else index + 1

    # -- lining up ---------------------------------------------------------------------

    def _unreadable(self, op: Operation, index: int, what: str) -> TextMismatch:
        line = self.lines[index].strip() if index < len(self.lines) else "the end of the module"
        where = f" ({op.location})" if op.location != "unknown" else ""
        return TextMismatch(f"cannot read {op.name}{where}: line {self.line_number(index)} "
                            f"({line[:60]}) {what}")

    def _next_op_line(self, op: Operation) -> int:
        """The index of the line that must print ``op``: the next line past blank lines and
        lines of no op (see :func:`_of_no_op`)."""
        while self._position < len(self.lines):
            if not _of_no_op(self.lines, self._position):
                return self._position
            self._position += 1
        raise self._unreadable(op, self._position, "is reached before the op's line")

    def _region_ends_here(self) -> bool:
        """Whether the next non-blank line closes a region (``}``, ``} else {``, ``})``)."""
        index = self._position
        while index < len(self.lines) and not self.lines[index].strip():
            index += 1
        return index < len(self.lines) and self.lines[index].strip().startswith("}")

    def _place(self, root: Operation) -> None:
        # Iterative: an explicit stack of (op, children left) mirrors the pre-order walk.
        stack: list[tuple[Operation, list[Operation]]] = []
        self._open(root, stack)
        while stack:
            op, children = stack[-1]
            if children:
                self._open(children.pop(0), stack)
                continue
            stack.pop()
            if op.name != WARP_PARTITIONS and any(region.blocks for region in op.regions):
                self._close(op)

    def _open(self, op: Operation, stack: list) -> None:
        if op.name == WARP_PARTITIONS:
            # printed as part of its ttg.warp_specialize: ``partitionN(%a: T, ...) num_warps(W) {``
            # lines label its regions; the ops inside have lines of their own
            stack.append((op, [child for region in op.regions for block in region.blocks for child in block.operations]))
            return
        if _opens_after_region(op):
            self._read_after_label(op.parent_op)
        if _may_be_left_out(op) and self._region_ends_here():
            return                       # a terminator the print leaves out (module docstring)
        index = self._next_op_line(op)
        line = self.lines[index]
        if _printed_op(line) != _printed_name(op):
            raise self._unreadable(op, index, "prints another op")
        placed = OpLines(index, result_names=_result_names(line))
        if op.name == "scf.for":
            m = _ITER_ARGS.search(line)
            placed.iter_args = [pair.split(" = ")[0].strip() for pair in split_top_level(m.group(1))] if m else []
        elif op.name == "scf.while":
            m = _WHILE_ARGS.search(line)
            placed.iter_args = [pair.split(" = ")[0].strip() for pair in split_top_level(m.group(1))] if m else []
            if len(placed.iter_args) != len(op.regions[0].blocks[0].arguments if op.regions and op.regions[0].blocks
                                            else []):
                raise self._unreadable(op, index, "does not print the arguments of scf.while")
        elif op.name in ("tt.func", "func.func"):
            placed.arguments = _FUNCTION_ARGUMENT.findall(line[line.find("("):])
        self.of[id(op)] = placed
        self._position = index + 1
        children = [child for region in op.regions for block in region.blocks for child in block.operations]
        stack.append((op, children))

    def _read_after_label(self, loop: Operation) -> None:
        """Before the first op of an ``scf.while``'s after region: its ``^bb0(%a: T, ...):`` line
        (past the ``} do {``), printed exactly when the region has arguments."""
        placed = self.of[id(loop)]
        expected = len(loop.regions[1].blocks[0].arguments)
        while self._position < len(self.lines):
            stripped = self.lines[self._position].strip()
            if stripped.startswith("^"):
                args = split_top_level(stripped[stripped.index("(") + 1:stripped.rindex(")")]) \
                    if "(" in stripped else []
                placed.after_label, placed.after_args = self._position, [a.split(":")[0].strip() for a in args]
                if len(args) != expected:
                    raise self._unreadable(loop, self._position, "does not print the after region's arguments")
                self._position += 1
                return
            if stripped and not stripped.startswith(("}", "//")):
                break
            self._position += 1
        if expected:
            raise self._unreadable(loop, placed.header, "has no ^bb0 line for its after region")

    def _close(self, op: Operation) -> None:
        """After the op's last region: its own ``}`` at the indentation of its first line (past
        blank lines and the ``} else {`` of an else region whose one op was left out)."""
        placed = self.of[id(op)]
        indent = _indent(self.lines[placed.header])
        while self._position < len(self.lines):
            line = self.lines[self._position]
            stripped = line.strip()
            if stripped and not (stripped.startswith("}") and stripped.endswith("{") and _indent(line) == indent):
                if not stripped.startswith("}") or _indent(line) != indent:
                    raise self._unreadable(op, self._position, f"is not the end of the op at line "
                                                               f"{self.line_number(placed.header)}")
                placed.closer = self._position
                self._position += 1
                return
            self._position += 1
        raise self._unreadable(op, placed.header, "has no closing line")

    # -- reading -----------------------------------------------------------------------

    def partition_warps(self, warp_specialize: Operation) -> list[int]:
        """The ``num_warps`` of each worker partition of a ``ttg.warp_specialize``, in order."""
        placed = self.of[id(warp_specialize)]
        end = placed.closer if placed.closer is not None else len(self.lines) - 1
        return [int(m.group(1)) for line in self.lines[placed.header:end + 1]
                for m in [_PARTITION_WARPS.search(line.strip())] if m and _REGION_LABEL.match(line.strip())
                and _indent(line) == _indent(self.lines[placed.header])]

    def name_of(self, value: Value) -> str:
        """The SSA name the module prints for a value (``%5``, ``%r#1``, ``%arg7``)."""
        if value.is_block_argument:
            owner = value.owner.parent.parent if value.owner.parent is not None else None
            if owner is not None and owner.name == "scf.for" and value.index >= 1:
                return self.of[id(owner)].iter_args[value.index - 1]
            if owner is not None and owner.name == "scf.while" and id(owner) in self.of:
                placed = self.of[id(owner)]
                names = placed.iter_args if value.owner.parent is owner.regions[0] else placed.after_args
                if value.index < len(names):
                    return names[value.index]
            if owner is not None and owner.name in ("tt.func", "func.func") and id(owner) in self.of \
                    and value.index < len(self.of[id(owner)].arguments):
                return self.of[id(owner)].arguments[value.index]
            raise TextMismatch("only arguments of functions, scf.for iteration arguments and scf.while "
                               "arguments are renamed")
        names = self.of[id(value.owner)].result_names
        if value.index >= len(names):
            raise TextMismatch(f"no printed name for result {value.index} of {value.owner.name}")
        return names[value.index]

    def header(self, op: Operation) -> str:
        """The op's first line ("" for a terminator MLIR leaves out)."""
        placed = self.of.get(id(op))
        return self.lines[placed.header] if placed is not None else ""

    # -- edits -------------------------------------------------------------------------

    def _type_lines(self, op: Operation) -> list[int]:
        """The lines that print the op's operand and result types: its first line, and for
        ops in generic form with regions (``tt.reduce``) its last line."""
        placed = self.of[id(op)]
        lines = [placed.header]
        if placed.closer is not None and self.lines[placed.closer].strip().startswith("})"):
            lines.append(placed.closer)
        return lines

    def replace_encoding(self, op: Operation, old: str, new: str) -> None:
        """Every ``old`` encoding in the op's types becomes ``new`` (see the module docstring)."""
        if old == new:
            return
        found = False
        for index in self._type_lines(op):
            if old in self.lines[index]:
                found = True
                self.lines[index] = self.lines[index].replace(old, new)
        if not found:
            raise TextMismatch(f"{op.name} at line {self.line_number(self.of[id(op)].header)} does not print {old[:60]}")

    def replace_each_type(self, op: Operation, pattern: "re.Pattern", choose: Callable[[str], str],
                          after_label: bool = False) -> int:
        """Each match of ``pattern`` (a tensor type; group 1 its shape and element type) in the
        op's types, in print order, becomes ``choose(group 1)``; returns how many matched.  For
        types that all print one placeholder encoding (Gluon's ``#gluon.auto_encoding``) but
        each need their own.  ``after_label``: an ``scf.while``'s ``^bb0(...)`` line of its
        after region instead (its arguments' types)."""
        count = 0
        placed = self.of[id(op)]
        indices = ([placed.after_label] if placed.after_label is not None else []) if after_label else \
            self._type_lines(op)
        for index in indices:
            line, n = pattern.subn(lambda m: choose(m.group(1)), self.lines[index])
            self.lines[index], count = line, count + n
        return count

    def replace_operand_and_result_encoding(self, op: Operation, operand: tuple[str, str],
                                            result: tuple[str, str], operand_index: Optional[int] = None) -> None:
        """For a one-line op printed ``... : OPERAND_TYPE -> RESULT_TYPE`` (``tt.trans``,
        ``tt.reshape``, ``tt.join``, ``tt.split``), replace the encoding ``operand[0]`` by
        ``operand[1]`` on the operand's side and ``result[0]`` by ``result[1]`` on the result's:
        the two sides differ, so one substitution would not do.  ``operand_index``: the operand
        types are a list ``(T0, T1) -> R`` (``tt.gather``) and only type number
        ``operand_index`` changes."""
        index = self.of[id(op)].header
        line = self.lines[index]
        # the last " : " starts the types: an attribute dictionary before it may hold one too
        # (``{axis = 0 : i32}``)
        head, colon, types = line.rpartition(" : ")
        left, arrow, right = types.partition(" -> ")
        if not colon or not arrow or operand[0] not in left or result[0] not in right:
            raise TextMismatch(f"{op.name} at line {self.line_number(index)} does not print its types as expected")
        if operand_index is None:
            left = left.replace(*operand)
        else:
            listed = split_top_level(left.strip()[1:-1]) if left.strip().startswith("(") else []
            if operand_index >= len(listed) or operand[0] not in listed[operand_index]:
                raise TextMismatch(f"{op.name} at line {self.line_number(index)}: operand type {operand_index} is not in {operand[0][:60]}")
            listed[operand_index] = listed[operand_index].replace(*operand)
            left = "(" + ", ".join(listed) + ")"
        self.lines[index] = head + colon + left + arrow + right.replace(*result)

    def replace_type_at(self, op: Operation, position: int, old_encoding: str, new_encoding: str) -> None:
        """Replace the encoding of type number ``position`` in what the op prints:

        * ``scf.for`` and ``scf.if``: their result types ``-> (T0, T1, ...)``;
        * ``scf.while``: both lists of its header ``(T0, T1) -> (T0, T1)`` (carried values and
          results) and the type of argument ``position`` on its after region's ``^bb0`` line;
        * ``scf.yield`` and ``scf.condition``: the types after `` : `` (``scf.condition`` prints
          no type for its i1 condition, so ``position`` counts the values it forwards)."""
        index = self.of[id(op)].header
        line = self.lines[index]
        if op.name in ("scf.yield", "scf.condition"):
            if " : " not in line:
                raise TextMismatch(f"{op.name} at line {self.line_number(index)} prints no types")
            start = line.index(" : ") + 3
            end = line.find(" loc(", start)
            spans = [(start, len(line) if end < 0 else end)]
        elif op.name == "scf.while":
            # "scf.while (%a = %x) : (T0, T1) -> (T0, T1) {", one result printed without parentheses
            arguments = _WHILE_ARGS.search(line)
            if arguments is None:
                raise TextMismatch(f"scf.while at line {self.line_number(index)} does not print its types as expected")
            before = _within_parentheses(line, arguments.end() - 1)
            arrow = before[1] + len(") -> ")
            if not line.startswith(") -> ", before[1]):
                raise TextMismatch(f"scf.while at line {self.line_number(index)} does not print its result types")
            after = _within_parentheses(line, arrow) if line.startswith("(", arrow) else (arrow, line.rindex(" {"))
            spans = [after, before]        # right to left: replacing one span keeps the other's offsets
        else:
            # scf.for: "iter_args(...) -> (T0, T1) : i32 {"; scf.if: "scf.if %c -> (T0, T1) {"
            after = line.index("iter_args(") if op.name == "scf.for" else line.index("scf.if")
            spans = [_within_parentheses(line, line.index(" -> (", after) + len(" -> "))]
        for start, end in spans:
            types = split_top_level(line[start:end])
            if position >= len(types) or old_encoding not in types[position]:
                raise TextMismatch(f"{op.name}: type {position} is not in {old_encoding[:60]}")
            types[position] = types[position].replace(old_encoding, new_encoding)
            line = line[:start] + ", ".join(types) + line[end:]
        self.lines[index] = line
        if op.name == "scf.while":        # its after region's arguments are printed on their own line
            self._replace_block_argument_type(op, position, old_encoding, new_encoding)

    def _replace_block_argument_type(self, loop: Operation, position: int, old_encoding: str,
                                     new_encoding: str) -> None:
        """On an ``scf.while``'s ``^bb0(%a: T0 loc(...), %b: T1):`` line, argument ``position``."""
        index = self.of[id(loop)].after_label
        if index is None:
            raise TextMismatch("scf.while: its after region's arguments are not printed")
        line = self.lines[index]
        start, end = _within_parentheses(line, line.index("("))
        arguments = split_top_level(line[start:end])
        if position >= len(arguments) or old_encoding not in arguments[position]:
            raise TextMismatch(f"^bb0 at line {self.line_number(index)}: argument {position} is not in {old_encoding[:60]}")
        arguments[position] = arguments[position].replace(old_encoding, new_encoding)
        self.lines[index] = line[:start] + ", ".join(arguments) + line[end:]

    def rename_operand(self, op: Operation, old_name: str, new_name: str) -> None:
        """Uses of ``old_name`` on the op's first line (where MLIR prints operands) become
        ``new_name``."""
        index = self.of[id(op)].header
        pattern = re.compile(re.escape(old_name) + r"(?![\w$.#-])")
        line, count = pattern.subn(new_name, self.lines[index])
        if not count:
            raise TextMismatch(f"{op.name} at line {self.line_number(index)} does not use {old_name}")
        self.lines[index] = line

    def insert_after_definition(self, value: Value, text: str) -> None:
        """Add an op line right after the value is defined: after its op (after the last line
        of an op with regions), or at the start of the region whose argument it is (an
        ``scf.for`` body, an ``scf.while``'s before region: after the op's first line; an
        ``scf.while``'s after region: after its ``^bb0`` line)."""
        if value.is_block_argument:
            owner = value.owner.parent.parent
            placed = self.of[id(owner)]
            index, indent = placed.header, _indent(self.lines[placed.header]) + 2
            if owner.name == "scf.while" and value.owner.parent is not owner.regions[0]:
                if placed.after_label is None:
                    raise TextMismatch("scf.while: its after region's arguments are not printed")
                index = placed.after_label
        else:
            placed = self.of[id(value.owner)]
            index = placed.closer if placed.closer is not None else placed.header
            indent = _indent(self.lines[placed.header])
        self._inserted.setdefault(index, []).append(" " * indent + text)

    def text(self) -> str:
        out = []
        for index, line in enumerate(self.lines):
            out.append(line)
            out.extend(self._inserted.get(index, []))
        return "\n".join(out)


def _printed_op(line: str) -> str:
    """The op name a line prints: ``%5 = arith.addf ...`` -> arith.addf, ``%r = "tt.reduce"(...``
    -> tt.reduce, ``scf.for %k = ...`` -> scf.for."""
    m = _OP_NAME.match(line)
    return m.group(1) if m else ""


def _of_no_op(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` prints no op: a blank line, a comment, a location alias, a block
    label (``^bb0(...):``), a line between two regions of one op (``} else {``, ``} do {``,
    ``default {``, ``partition0(...) num_warps(4) {``), or the ``}`` that ends one region of a
    ``ttg.warp_specialize`` before the next one's label."""
    stripped = lines[index].strip()
    if not stripped or stripped.startswith(("^", "#", "//")) or _REGION_LABEL.match(stripped):
        return True
    if stripped.startswith("}") and stripped.endswith("{"):
        return True
    following = next((line.strip() for line in lines[index + 1:] if line.strip()), "")
    return stripped == "}" and bool(_REGION_LABEL.match(following))


def _may_be_left_out(op: Operation) -> bool:
    """Whether the print may leave the op out: it ends its block and yields nothing (the
    implicit ``scf.yield`` of an ``scf.if`` without results, an ``scf.for`` without iteration
    arguments)."""
    return (not op.operands and not op.results and not op.regions and op.parent is not None
            and op.parent.operations[-1] is op)


def _result_names(line: str) -> list[str]:
    """``%a = ...`` -> [%a]; ``%r:2 = ...`` -> [%r#0, %r#1]; ``%a, %b = ...`` -> [%a, %b]."""
    m = _RESULTS.match(line)
    if not m:
        return []
    names = []
    for group in m.group(1).split(", "):
        name, _, count = group.strip().partition(":")
        names += [f"{name}#{i}" for i in range(int(count))] if count else [name]
    return names


def _within_parentheses(line: str, opening: int) -> tuple[int, int]:
    """(start, end) of the text inside the parentheses that open at ``line[opening]``."""
    if line[opening:opening + 1] != "(":
        raise TextMismatch(f"expected '(' at column {opening + 1} of {line.strip()[:60]}")
    depth, end = 1, opening + 1
    while depth:
        if end >= len(line):
            raise TextMismatch(f"unbalanced parentheses in {line.strip()[:60]}")
        depth += {"(": 1, ")": -1}.get(line[end], 0)
        end += 1
    return opening + 1, end - 1


def _opens_after_region(op: Operation) -> bool:
    """Whether ``op`` is the first op of an ``scf.while``'s after region."""
    block = op.parent
    loop = op.parent_op
    return (loop is not None and loop.name == "scf.while" and len(loop.regions) == 2 and block is not None
            and block.parent is loop.regions[1] and bool(block.operations) and block.operations[0] is op)
