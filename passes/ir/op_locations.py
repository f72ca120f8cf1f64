"""Where ops are in the user's source, read from TTGIR text, and who uses each value.

Ops without results (``tt.store``) have no location in the parsed snapshot;
``text_locations`` reads theirs from the TTGIR text (the k-th ``tt.store`` line is the k-th
``tt.store`` op).  Used by the report (``tools.report.conversion_why``) and the layout advice
(``passes.advice``).
"""

from __future__ import annotations

import re

_LOC_ALIAS = re.compile(r"^(#loc\d*) = (loc\(.*\))\s*$")
_TRAILING_LOC = re.compile(r" loc\((#loc\d*|\"[^\"]*\":\d+:\d+)\)\s*$")
_FILE_LINE = re.compile(r'"([^"]*)":(\d+):(\d+)')


def text_locations(ttgir: str) -> dict:
    """(op name, k) -> ``file:line:col`` of the k-th (0, 1, ...) op of that name without results
    in the TTGIR text; a call site's location is the caller's line (the user's, not
    ``triton.language``'s)."""
    aliases = {}
    for line in ttgir.splitlines():
        match = _LOC_ALIAS.match(line)
        if match:
            aliases[match.group(1)] = match.group(2)

    def resolve(loc: str, depth: int = 0) -> str:
        if depth > 20:
            return "unknown"
        call = re.fullmatch(r"loc\(callsite\((#loc\d*) at (#loc\d*)\)\)", loc)
        if call:   # the caller's line
            return resolve(aliases.get(call.group(2), "loc(unknown)"), depth + 1)
        found = _FILE_LINE.search(loc)
        if found:
            return f"{found.group(1)}:{found.group(2)}:{found.group(3)}"
        ref = re.search(r"(#loc\d*)", loc)
        return resolve(aliases.get(ref.group(1), "loc(unknown)"), depth + 1) if ref else "unknown"

    seen: dict = {}
    out = {}
    for line in ttgir.splitlines():
        stripped = line.strip()
        match = re.match(r"([a-z_]+\.[\w.]+)\b", stripped)
        if not match or "=" in stripped.split(" ", 1)[0]:
            continue
        name = match.group(1)
        k = seen.get(name, 0)
        seen[name] = k + 1
        loc = _TRAILING_LOC.search(stripped)
        if loc:
            out[(name, k)] = resolve(f"loc({loc.group(1)})")
    return out


def no_result_locations(module, ttgir: str) -> dict:
    """id(op) -> location for the ops of ``module`` without results (``text_locations``)."""
    by_text = text_locations(ttgir)
    seen: dict = {}
    out = {}
    for op in module.walk():
        if op.results:
            continue
        k = seen.get(op.name, 0)
        seen[op.name] = k + 1
        if (op.name, k) in by_text:
            out[id(op)] = by_text[(op.name, k)]
    return out


def users_of(module) -> dict:
    """id(Value) -> the ops that use it, for every op of ``module``."""
    users: dict = {}
    for op in module.walk():
        for operand in op.operands:
            if operand is not None:
                users.setdefault(id(operand), []).append(op)
    return users
