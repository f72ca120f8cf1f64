"""Edits of printed module text: our op markers replaced by attributes, function attributes
added, and MLIR's spelling of string literals and symbols.

Why edits go through text: the bindings can only build a handful of attribute kinds, and no
``#ttg.linear`` arrays.  When a module is parsed, every op that has results gets a marker
attribute ``ll.op_id = N : i32`` (:data:`MARKER`) through the bindings.  The printer writes the
marker where MLIR itself prints an op's attributes, so committing edits is a text substitution
of each marker by the new attributes (or by nothing), followed by a re-parse that validates
the result.  Markers never appear in printed output.

Setting an attribute the op already has replaces it (MLIR refuses a dictionary with a key
twice): passes run again on their own output, as Triton runs its passes, give the same module.
"""

from __future__ import annotations

import re

from .diagnostics import IRError

MARKER = "ll.op_id"

_MARKER_USE = re.compile(re.escape(MARKER) + r" = (\d+) : i32")


def replace_markers(text: str, pending: dict[int, dict[str, str]]) -> str:
    """Put each op's pending attributes where its marker is, and drop markers without any.

    A marker sits in an op's attribute dictionary in one of four places, e.g. for marker 7
    and pending ``{ll.layout = X}``:

        ... attributes {ll.op_id = 7 : i32}      ->  ... attributes {ll.layout = X}   (or nothing)
        ... {ll.op_id = 7 : i32} : ...           ->  ... {ll.layout = X} : ...        (or nothing)
        {ll.op_id = 7 : i32, axis = 0 : i32}     ->  {ll.layout = X, axis = 0 : i32}
        {axis = 0 : i32, ll.op_id = 7 : i32}     ->  {axis = 0 : i32, ll.layout = X}

    An attribute of the same name already in the dictionary goes (``{ll.layout = Old, ll.op_id
    = 7 : i32}`` -> ``{ll.layout = X}``).  The scan starts at the marker's literal text and reads
    no further than its dictionary, so megabytes of lowered LLVM-dialect code (structs of
    thousands of fields on one line) cost one pass.
    """
    pieces, done = [], 0
    for m in _MARKER_USE.finditer(text):
        start, end = m.span()
        attrs = pending.get(int(m.group(1)))
        body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items())) if attrs else ""
        dictionary = _enclosing_dictionary(text, start, end) if attrs else None
        if dictionary is not None:
            # Rewrite the whole dictionary: the marker becomes our attributes, and any attribute
            # of theirs already there goes.
            opening, closing = dictionary
            entries = []
            for entry in _top_level_entries(text[opening + 1:closing]):
                if entry.startswith(MARKER + " = "):
                    entries.append(body)
                elif _entry_name(entry) not in attrs:
                    entries.append(entry)
            start, end, new = opening + 1, closing, ", ".join(entries)
        elif text.startswith("}", end) and text.endswith(" attributes {", 0, start):
            start, end, new = start - len(" attributes {"), end + 1, f" attributes {{{body}}}" if body else ""
        elif text.startswith("}", end) and text.endswith(" {", 0, start):
            start, end, new = start - 2, end + 1, f" {{{body}}}" if body else ""
        elif text.startswith(", ", end):
            end, new = end + 2, f"{body}, " if body else ""
        elif text.endswith(", ", 0, start):
            start, new = start - 2, f", {body}" if body else ""
        else:
            new = body
        pieces.append(text[done:start])
        pieces.append(new)
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


# --------------------------------------------------------------------------- attribute dictionaries
#
# An attribute dictionary as MLIR prints it: ``{name = value, unit_name, "quoted-name" = value}``.
# Values nest ``{}``, ``[]``, ``()`` and ``<>`` (``#ttg.linear<{...}>``, ``array<i32: 1, 2>``,
# ``(i32) -> ()``: the ``>`` of an arrow closes nothing) and hold strings, in which MLIR prints
# every '"' as ``\22``: each '"' in printed text starts or ends a string.

_OPENING, _CLOSING = "{[(<", "}])>"


def _is_bracket(text: str, i: int) -> bool:
    return text[i] in "{[(<}])" or (text[i] == ">" and (i == 0 or text[i - 1] != "-"))


def _enclosing_dictionary(text: str, start: int, end: int):
    """``(index of '{', index of '}')`` of the dictionary that holds ``text[start:end]`` (an
    entry of it), or None if there is none on either side."""
    depth, in_string, i = 0, False, start - 1
    while i >= 0:
        c = text[i]
        if c == '"':
            in_string = not in_string
        elif not in_string and _is_bracket(text, i):
            if c in _CLOSING:
                depth += 1
            elif depth:
                depth -= 1
            elif c == "{":
                break
            else:
                return None   # the entry sits in a list or a type, not in a dictionary
        i -= 1
    else:
        return None
    closing = _closing_brace(text, end)
    return None if closing is None else (i, closing)


def _closing_brace(text: str, i: int):
    """The index of the '}' that closes the dictionary ``text[i]`` is inside of, or None."""
    depth, in_string = 0, False
    while i < len(text):
        c = text[i]
        if c == '"':
            in_string = not in_string
        elif not in_string and _is_bracket(text, i):
            if c in _OPENING:
                depth += 1
            elif depth:
                depth -= 1
            elif c == "}":
                return i
            else:
                return None
        i += 1
    return None


def _top_level_entries(body: str) -> list[str]:
    """The entries of a dictionary's text between its braces, split at top-level commas."""
    entries, depth, in_string, begin = [], 0, False, 0
    for i, c in enumerate(body):
        if c == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif _is_bracket(body, i):
            depth += 1 if c in _OPENING else -1
        elif c == "," and depth == 0:
            entries.append(body[begin:i].strip())
            begin = i + 1
    last = body[begin:].strip()
    return entries + [last] if last else entries


def _entry_name(entry: str) -> str:
    """``ll.scope = "warp"`` -> ``ll.scope``; ``"ttg.num-warps" = 4 : i32`` -> ``"ttg.num-warps"``;
    a unit attribute is its name."""
    return entry.split(" = ", 1)[0].strip()


def mlir_string_literal(text: str) -> str:
    """``text`` as MLIR prints a string literal: UTF-8 bytes, with ``\\`` for a backslash and
    ``\\XX`` (two upper-case hex digits) for '"' and every byte that is not printable ASCII.
    For example ``back\\slash "ü".mlir`` prints as ``"back\\\\slash \\22\\C3\\BC\\22.mlir"``."""
    out = []
    for byte in text.encode("utf-8", errors="surrogateescape"):
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and byte != 0x22:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


_BARE_SYMBOL = re.compile(r"[A-Za-z_][\w$.]*\Z", re.ASCII)


def printed_symbol(symbol: str) -> str:
    """A symbol reference as MLIR prints it: ``@name``, or ``@"..."`` for any other name
    (``@"tr\\C3\\A4nspose"`` for ``tränspose``)."""
    return "@" + symbol if _BARE_SYMBOL.match(symbol) else "@" + mlir_string_literal(symbol)


def add_function_attributes(text: str, symbol: str, attrs: dict[str, str]) -> str:
    """Set discardable attributes of ``tt.func @symbol`` in printed text (replacing any of the
    same names it has)."""
    body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items()))
    pattern = re.compile(r"^(\s*tt\.func[^\n]*" + re.escape(printed_symbol(symbol)) + r"\([^\n]*?)( \{)?$", re.M)
    m = pattern.search(text)
    if not m:
        raise IRError(f"error: function @{symbol} not found in the printed module")
    line = m.group(1)
    if " attributes {" in line:
        opening = line.index(" attributes {") + len(" attributes ")
        closing = _closing_brace(line, opening + 1)
        if closing is None:
            raise IRError(f"error: the attributes of function @{symbol} are not a dictionary in the printed module")
        kept = [entry for entry in _top_level_entries(line[opening + 1:closing]) if _entry_name(entry) not in attrs]
        line = line[:opening + 1] + ", ".join([body] + kept) + line[closing:]
    else:  # the header ends with the signature (the function's own loc follows its body)
        line = line + f" attributes {{{body}}}"
    return text[:m.start()] + line + (m.group(2) or "") + text[m.end():]

