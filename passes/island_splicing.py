"""Putting islands into a module's printed text, in place of the ops they replace.

The bindings cannot build an island's ops, so islands travel as text: ``lower_conversions``
marks each op it replaces with an ``ll.island = N : i32`` attribute (a ``ttg.local_store``, which
has no result to mark, by its position among the printed stores), and :func:`splice_islands`
finds each marked line of the printed module and puts the island's text there, with the op's
own SSA names and types in place of the island's placeholders (``%SOURCE``, ``%RESULT``,
``%BUFFER``, ``@SRC_TYPE@``, ``@DST_TYPE@``, ``@BUFFER_TYPE@``).
"""

from __future__ import annotations

import re

from ..lowering.emit.emit_llvm import Island
from .framework import PassFailure


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


def splice_islands(text: str, islands: dict[int, Island],
                    store_islands: dict[int, int] | None = None) -> str:
    """Put each island in place of its op: converts and local loads by their ``ll.island``
    attribute, local stores (``store_islands``: k-th ``ttg.local_store`` line -> island) by
    position."""
    done = set()
    stores_seen = [0]

    def replace_store(m: re.Match) -> str:
        k = stores_seen[0]
        stores_seen[0] += 1
        number = (store_islands or {}).get(k)
        return m.group(0) if number is None else replace(m, number)

    def replace(m: re.Match, number: int | None = None) -> str:
        number = int(m.group("number")) if number is None else number
        island = islands[number]
        done.add(number)
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

    out = _LOCAL_LOAD_LINE.sub(replace, _CONVERT_LINE.sub(replace, text))
    out = _LOCAL_ALLOC_LINE.sub(replace, out)
    if store_islands:
        out = _LOCAL_STORE_LINE.sub(replace_store, out)
    missing = set(islands) - done
    if missing:
        raise PassFailure(None, f"internal error: could not find the printed convert of island(s) {sorted(missing)}")
    return out
