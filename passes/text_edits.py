"""Edits of printed module text: our op markers replaced by attributes, function attributes
added, and MLIR's spelling of string literals and symbols.

Why edits go through text: the bindings can only build a handful of attribute kinds, and no
``#ttg.linear`` arrays.  When a module is parsed, every op that has results gets a marker
attribute ``ll.op_id = N : i32`` (:data:`MARKER`) through the bindings.  The printer writes the
marker where MLIR itself prints an op's attributes, so committing edits is a text substitution
of each marker by the new attributes (or by nothing), followed by a re-parse that validates
the result.  Markers never appear in printed output.
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

    The scan starts at the marker's literal text, so megabytes of lowered LLVM-dialect code
    (structs of thousands of fields on one line) cost one pass.
    """
    pieces, done = [], 0
    for m in _MARKER_USE.finditer(text):
        start, end = m.span()
        attrs = pending.get(int(m.group(1)))
        body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items())) if attrs else ""
        if text.startswith("}", end) and text.endswith(" attributes {", 0, start):
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
    """Add discardable attributes to ``tt.func @symbol`` in printed text."""
    body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items()))
    pattern = re.compile(r"^(\s*tt\.func[^\n]*" + re.escape(printed_symbol(symbol)) + r"\([^\n]*?)( \{)?$", re.M)
    m = pattern.search(text)
    if not m:
        raise IRError(f"error: function @{symbol} not found in the printed module")
    line = m.group(1)
    if " attributes {" in line:
        line = line.replace(" attributes {", f" attributes {{{body}, ", 1)
    else:  # the header ends with the signature (the function's own loc follows its body)
        line = line + f" attributes {{{body}}}"
    return text[:m.start()] + line + (m.group(2) or "") + text[m.end():]

