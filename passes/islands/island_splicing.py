"""Putting islands into a module's printed text, in place of the ops they replace.

The bindings cannot build an island's ops, so islands travel as text: ``lower_conversions``
names each op it replaces by its position among the printed ops of its name (``OpPositions``:
the 2nd ``ttg.convert_layout`` of the text, the 1st ``ttg.local_store``; MLIR prints a module's
ops in the order ``Module.walk()`` visits them), and :func:`splice_islands` finds each of those
lines of the printed module and puts the island's text there, with the op's own SSA names and
types in place of the island's placeholders (``%SOURCE``, ``%RESULT``, ``%BUFFER``,
``@SRC_TYPE@``, ``@DST_TYPE@``, ``@BUFFER_TYPE@``).  Positions need no attribute on the op, so
the module is never edited before the splice: the drop-in splices into Triton's own print of
the module it was given (no copy parsed to carry markers, no second print).  An op can also be
named by an ``ll.island = N : i32`` attribute (tools that set one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...lowering.emit.emit_llvm import Island
from ..framework import PassFailure


def allocation_around(store_island: str, buffer: str, rank: int) -> str:
    """A ``ttg.local_alloc``'s island: a fresh *mutable* allocation (Triton's verifier wants
    ``mutable`` on an allocation without a source), the simulated store island into it, and the
    original result as a ``ttg.memdesc_subslice`` of the whole buffer (offsets 0), which keeps
    the result's own type (immutable, as its users expect) and, being a view, keeps Triton's
    alias analysis tying the result's users to the allocation (its liveness, its barriers).
    Neither ``memdesc_reinterpret`` (3.9: "source and result must have the same mutability")
    nor an ``unrealized_conversion_cast`` (no alias: the bytes could be given to another buffer
    while the result is still read) would do."""
    zeros = ", ".join(["0"] * rank)
    return "\n".join([f"{buffer} = ttg.local_alloc : () -> @BUFFER_TYPE@", store_island,
                      f"%RESULT = ttg.memdesc_subslice {buffer}[{zeros}] : @BUFFER_TYPE@ -> @DST_TYPE@"])


def _mutable(memdesc_type: str) -> str:
    """``!ttg.memdesc<..., #smem>`` -> ``!ttg.memdesc<..., #smem, mutable>`` (an allocation's type
    has no alloc shape after ``mutable``)."""
    if re.search(r", mutable>$", memdesc_type):
        return memdesc_type
    if not memdesc_type.endswith(">"):
        raise PassFailure(None, f"internal error: unexpected memdesc type {memdesc_type}")
    return memdesc_type[:-1] + ", mutable>"


# %5 = ttg.convert_layout %4 {ll.island = 0 : i32, ...} : tensor<...> -> tensor<...> loc(#loc3)
_CONVERT_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<result>%[^\s=]+) = ttg\.convert_layout (?P<source>%[^\s{]+) "
    r"\{(?P<attrs>[^\n]*?ll\.island = (?P<number>\d+) : i32[^\n]*?)\} : (?P<src_type>.+?) -> "
    r"(?P<dst_type>.+?)(?P<loc> loc\(.*\))?$", re.M)


# %5 = ttg.local_load %4 {ll.island = 1 : i32} : !ttg.memdesc<...> -> tensor<...> loc(#loc3)
# (3.6+ may print an async token operand: ``ttg.local_load %4 token %t {...}``; the island does
# not need it: the token only orders the op after the copy that the memdesc's producer waits for)
_LOCAL_LOAD_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<result>%[^\s=]+) = ttg\.local_load (?P<source>%[^\s{]+)(?: token %[^\s{]+)? "
    r"\{(?P<attrs>[^\n]*?ll\.island = (?P<number>\d+) : i32[^\n]*?)\} : (?P<src_type>.+?) -> "
    r"(?P<dst_type>.+?)(?P<loc> loc\(.*\))?$", re.M)


# %5 = ttg.local_alloc %4 {ll.island = 2 : i32} : (tensor<...>) -> !ttg.memdesc<...> loc(#loc3)
_LOCAL_ALLOC_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<result>%[^\s=]+) = ttg\.local_alloc (?P<source>%[^\s{]+) "
    r"\{(?P<attrs>[^\n]*?ll\.island = (?P<number>\d+) : i32[^\n]*?)\} : \((?P<src_type>.+?)\) -> "
    r"(?P<alloc_type>.+?)(?P<loc> loc\(.*\))?$", re.M)


# ttg.local_store %3, %4 : tensor<...> -> !ttg.memdesc<...> loc(#loc3)
_LOCAL_STORE_LINE = re.compile(
    r"^(?P<indent>[ \t]*)ttg\.local_store (?P<source>%[^\s,]+), (?P<buffer>%[^\s{:]+)(?: \{[^\n]*?\})? : "
    r"(?P<src_type>.+?) -> (?P<buffer_type>.+?)(?P<loc> loc\(.*\))?$", re.M)


@dataclass
class OpPositions:
    """Which printed ops islands replace, by position: ``islands[(name, k)]`` is the island of
    the k-th op named ``name`` (counted from 0 in walk order, which is the order of the printed
    text); ``totals[name]`` how many ops of that name the module has, checked against the text
    before anything is replaced (a mismatch means the text is not the print of the walked module:
    an internal error, never a wrong splice)."""

    islands: dict[tuple[str, int], int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)


# The start of every printed op of each name we replace (custom form; a generic-form print would
# not match, and its count would then differ from the walk's: see OpPositions).
_OP_START = {
    "ttg.convert_layout": re.compile(r"^[ \t]*%[^\s=]+ = ttg\.convert_layout\b", re.M),
    "ttg.local_load": re.compile(r"^[ \t]*%[^\s=]+ = ttg\.local_load\b", re.M),
    "ttg.local_alloc": re.compile(r"^[ \t]*%[^\s=]+ = ttg\.local_alloc\b", re.M),
    "ttg.local_store": re.compile(r"^[ \t]*ttg\.local_store\b", re.M),
}
SPLICED_OPS = tuple(_OP_START)
# Each op's whole line, its attribute dictionary optional.
_OP_LINE = {
    "ttg.convert_layout": re.compile(
        r"(?P<indent>[ \t]*)(?P<result>%[^\s=]+) = ttg\.convert_layout (?P<source>%[^\s{]+)(?: \{[^\n]*?\})? : "
        r"(?P<src_type>.+?) -> (?P<dst_type>.+?)(?P<loc> loc\(.*\))?$", re.M),
    "ttg.local_load": re.compile(
        r"(?P<indent>[ \t]*)(?P<result>%[^\s=]+) = ttg\.local_load (?P<source>%[^\s{]+)(?: token %[^\s{]+)?"
        r"(?: \{[^\n]*?\})? : (?P<src_type>.+?) -> (?P<dst_type>.+?)(?P<loc> loc\(.*\))?$", re.M),
    "ttg.local_alloc": re.compile(
        r"(?P<indent>[ \t]*)(?P<result>%[^\s=]+) = ttg\.local_alloc (?P<source>%[^\s{]+)(?: \{[^\n]*?\})? : "
        r"\((?P<src_type>.+?)\) -> (?P<alloc_type>.+?)(?P<loc> loc\(.*\))?$", re.M),
    "ttg.local_store": _LOCAL_STORE_LINE,
}


def splice_islands(text: str, islands: dict[int, Island],
                   store_islands: dict[int, int] | None = None, positions: OpPositions | None = None) -> str:
    """Put each island in place of its op: by position (``positions``, see :class:`OpPositions`),
    or, without positions, converts and local loads by their ``ll.island`` attribute and local
    stores by position (``store_islands``: k-th ``ttg.local_store`` line -> island)."""
    if positions is not None:
        return _splice_by_position(text, islands, positions)
    done = set()
    stores_seen = [0]

    def replace_store(m: re.Match) -> str:
        k = stores_seen[0]
        stores_seen[0] += 1
        number = (store_islands or {}).get(k)
        return m.group(0) if number is None else replace(m, number)

    def replace(m: re.Match, number: int | None = None) -> str:
        number = int(m.group("number")) if number is None else number
        done.add(number)
        return _island_text(m, islands[number])

    out = _LOCAL_LOAD_LINE.sub(replace, _CONVERT_LINE.sub(replace, text))
    out = _LOCAL_ALLOC_LINE.sub(replace, out)
    if store_islands:
        out = _LOCAL_STORE_LINE.sub(replace_store, out)
    missing = set(islands) - done
    if missing:
        raise PassFailure(None, f"internal error: could not find the printed convert of island(s) {sorted(missing)}")
    return out


def _island_text(m: re.Match, island: Island) -> str:
    """The island's text for the printed op ``m`` (its line), with the op's names and types."""
    groups = m.groupdict()
    body = island.text.replace("%SOURCE", m.group("source")).replace("@SRC_TYPE@", m.group("src_type"))
    if groups.get("alloc_type"):   # a local_alloc with a source: a store into a fresh buffer
        body = (body.replace("@BUFFER_TYPE@", _mutable(m.group("alloc_type")))
                .replace("%RESULT", m.group("result")).replace("@DST_TYPE@", m.group("alloc_type")))
    elif groups.get("buffer"):   # a local store: no result, a memdesc operand
        body = body.replace("%BUFFER", m.group("buffer")).replace("@BUFFER_TYPE@", m.group("buffer_type"))
    else:
        body = body.replace("%RESULT", m.group("result")).replace("@DST_TYPE@", m.group("dst_type"))
    # Every op of the island carries the location of the op it replaces, as Triton's own
    # lowering of the op would: line tables, profilers and debuggers attribute the island to
    # the user's line.  (Without one, Triton's parser gives each op the line of the text it
    # was parsed from: lines the user's file does not have.)
    indent, loc = m.group("indent"), m.group("loc") or ""
    return "\n".join(indent + line.lstrip() + loc for line in body.splitlines())


def _splice_by_position(text: str, islands: dict[int, Island], positions: OpPositions) -> str:
    """:func:`splice_islands` with the ops named by their positions in the text."""
    edits = []                   # (start, end, island number, the op line's match)
    for name, start in _OP_START.items():
        wanted = {k: number for (op, k), number in positions.islands.items() if op == name}
        if not wanted and name not in positions.totals:
            continue
        starts = [m.start() for m in start.finditer(text)]
        if len(starts) != positions.totals.get(name, 0):
            raise PassFailure(None, f"internal error: the printed module has {len(starts)} {name} ops, "
                                    f"its walk {positions.totals.get(name, 0)}")
        for k, number in wanted.items():
            m = _OP_LINE[name].match(text, starts[k])
            if m is None:
                raise PassFailure(None, f"internal error: could not read the printed {name} of island {number}")
            edits.append((m.start(), m.end(), number, m))
    pieces, done = [], 0
    for begin, end, number, m in sorted(edits, key=lambda e: e[0]):
        pieces += [text[done:begin], _island_text(m, islands[number])]
        done = end
    return "".join(pieces) + text[done:]
