"""Why a ``ttg.convert_layout`` exists: the op that produced its source, the ops that use its
result, their lines of source, the reason the IR shows, and a hint where the IR shows one
(docs/report.md, 'Options and what the pages hold').

Triton inserts a conversion where a value's layout is not the one its user wants: a ``tt.dot``
operand (``#dot_op``), a store or load (the coalesced layout ``ttg.coalesce`` picked from the
pointer's contiguity), a reduction's result (a ``#slice`` layout) meeting a value of another
layout, a broadcast; or the source asks for one (``convert_layout`` on the conversion's line).
The rules below read that from the producer's and consumers' op names.

Hint: a conversion feeding a store or load whose destination layout holds several elements per
thread but one at a time along *every* dimension (no run of consecutive elements in a thread's registers) is the
layout ``ttg.coalesce`` picks when it could not prove the pointer contiguous along any
dimension: every access is one element wide.  Where the offsets are contiguous (a stride that is
1 at run time), ``tl.multiple_of`` / ``tl.max_contiguous`` on the offsets (or the stride as a
``tl.constexpr``) let Triton vectorize; the hint names the kernel's integer arguments the
pointer is computed from (a runtime stride among them is the usual cause).  A transpose's store
is strided for real along one dimension but contiguous along the other: its layout has a run
there, and no hint is given.

Ops without results (``tt.store``) have no location in the parsed snapshot; ``text_locations``
reads theirs from the TTGIR text (the k-th ``tt.store`` line is the k-th ``tt.store`` op).
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass, field

from linear_layouts.passes.ir.op_locations import no_result_locations, text_locations, users_of  # noqa: F401

_DOT = ("tt.dot", "ttng.warp_group_dot", "tt.dot_scaled", "ttg.local_alloc")
_MEMORY = ("tt.store", "tt.load", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store")
_REDUCE = ("tt.reduce", "tt.scan", "tt.histogram")
_SHAPE = ("tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.join", "tt.split", "tt.cat")


@dataclass(frozen=True)
class Why:
    reason: str
    producer: str            # "tt.reduce at file:line" or "a block argument (loop-carried value)"
    consumers: tuple         # "tt.store at file:line", ...
    hint: str = ""
    kind: str = ""           # dot operand / store / load / reduction / broadcast / explicit / shape / other
    sources: tuple = field(default=())   # (producer or consumer text, its line of source) where readable




def _location(op, located: dict) -> str:
    location = op.location or "unknown"
    if location == "unknown" and not op.results:
        location = located.get(id(op), "unknown")
    return location


def _user_code(location: str) -> bool:
    return location != "unknown" and "triton/language/" not in location.replace("\\", "/")


def _where(op, located: dict | None = None) -> str:
    """``tt.reduce at prog.py:12:5``; only the op's name where its location is unknown or
    inside ``triton.language`` (``tl.sum`` is Triton's own code)."""
    location = _location(op, located or {})
    if not _user_code(location):
        return op.name
    return f"{op.name} at {location.rsplit('/', 1)[-1]}"


def source_of(location: str) -> str:
    """The line of source at ``path:line:col`` ("" when unreadable)."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return ""
    return linecache.getline(parts[0], int(parts[1])).strip()


def consecutive_per_thread(layout) -> dict:
    """Per dimension of a distributed linear layout: how many consecutive elements along it one
    thread holds in its registers (the run its leading register bases make: 1, 2, 4, ...)."""
    names = list(layout.out_dims)
    runs = {}
    for d, name in enumerate(names):
        run = 1
        for basis in layout.bases.get("register", ()):
            unit = [0] * len(names)
            unit[d] = run
            if list(basis) != unit:
                break
            run *= 2
        runs[name] = run
    return runs


def argument_names(ttgir: str) -> list:
    """The names of the kernel function's arguments, in order (``%X: !tt.ptr<f32> ...``)."""
    return [name for name, _ in kernel_signature(ttgir)]


def kernel_signature(ttgir: str) -> list:
    """(name, "aligned" or "") per kernel argument: "aligned" where it carries ``tt.divisibility``."""
    for line in ttgir.splitlines():
        if line.lstrip().startswith("tt.func"):
            head = line[line.find("(") + 1:]
            head = re.sub(r"loc\([^()]*(?:\([^()]*\))?\)", "", head)
            parts = re.split(r"(?=%[\w$.-]+\s*:)", head)
            out = []
            for part in parts:
                match = re.match(r"%([\w$.-]+)\s*:", part)
                if match:
                    out.append((match.group(1), "aligned" if "tt.divisibility" in part else ""))
            return out
    return []


def _arguments_of(value, names: list) -> list:
    """(name, type) of the kernel arguments ``value`` is computed from (its def chain, up to 60
    values)."""
    seen: set = set()
    found = set()
    stack = [value]
    while stack and len(seen) < 60:
        v = stack.pop()
        if v is None or id(v) in seen:
            continue
        seen.add(id(v))
        op = v.defining_op
        if op is not None:
            stack.extend(op.operands)
            continue
        block = v.owner
        function = block.parent.parent if block.parent is not None else None
        if function is not None and function.name == "tt.func" and v.index < len(names):
            found.add((names[v.index], v.type.strip()))
    return sorted(found)


def contiguity_hint(op, consumer_ops, dst_layout, bits: int, names: list = ()) -> str:
    """The hint for a conversion feeding a memory access with no run of consecutive elements
    per thread along any dimension (see the module's docstring); "" otherwise.  ``names``:
    ``kernel_signature(ttgir)`` (which pointer arguments are known aligned), or plain names."""
    memory = [c for c in consumer_ops if c.name in _MEMORY]
    if not memory or dst_layout is None or not bits or bits >= 128:
        return ""
    try:
        runs = consecutive_per_thread(dst_layout)
    except (AttributeError, TypeError, ValueError):
        return ""
    if any(run > 1 for run in runs.values()):
        return ""
    if dst_layout.in_dims.get("register", 1) < 2:   # one element per thread in all: nothing to vectorize
        return ""
    access = memory[0]
    signature = dict(names) if names and isinstance(names[0], tuple) else {n: "" for n in names}
    used = _arguments_of(access.operands[0], list(signature)) if access.operands else []
    arguments = [name for name, kind in used if re.fullmatch(r"i\d+", kind)]
    unaligned = [name for name, kind in used if kind.startswith("!tt.ptr") and not signature.get(name)]
    text = (f"{access.name} accesses one {bits}-bit element per thread at a time: its layout has no run of consecutive "
            f"elements along any dimension ({', '.join(f'{d}: {n}' for d, n in runs.items())}), the layout "
            "ttg.coalesce picks when it cannot prove the pointer contiguous. If the offsets are contiguous at run "
            "time, say so: tl.max_contiguous(tl.multiple_of(offs, N), N) on the offsets, or pass the stride as a "
            "tl.constexpr (Triton also specializes an integer argument equal to 1)")
    if unaligned:
        text += (f"; the pointer argument{'s' if len(unaligned) > 1 else ''} {', '.join(unaligned)} "
                 f"{'are' if len(unaligned) > 1 else 'is'} not known to be 16-byte aligned (no tt.divisibility: a "
                 "launch specializes that, triton.compile of an ASTSource without attrs does not)")
    if arguments:
        text += f"; the pointer is computed from the integer argument{'s' if len(arguments) > 1 else ''} " \
                + ", ".join(arguments)
    return text + "."


def explain(op, users: dict, located: dict | None = None, dst_layout=None, bits: int = 0,
            arguments: list = ()) -> Why:
    """Why the conversion ``op`` exists (``users``: ``users_of(module)``; ``located``:
    ``no_result_locations(module, ttgir)``; ``dst_layout``/``bits``: its destination's linear
    layout and element width, for the contiguity hint; ``arguments``: ``kernel_signature(ttgir)``)."""
    located = located or {}
    source = op.operands[0]
    producer_op = source.defining_op if source is not None else None
    producer = _where(producer_op, located) if producer_op is not None else "a block argument (a loop-carried value)"
    consumer_ops = users.get(id(op.results[0]), [])
    consumers = tuple(_where(c, located) for c in consumer_ops)
    names = {c.name for c in consumer_ops}
    sources = []
    for other, text in ([(producer_op, producer)] if producer_op is not None else []) + list(zip(consumer_ops, consumers)):
        location = _location(other, located)
        line = source_of(location) if _user_code(location) else ""
        if line:
            sources.append((text, line))
    hint = ""
    if "convert_layout" in source_of(op.location):
        kind, reason = "explicit", "an explicit convert_layout in the source"
    elif names & set(_DOT):
        kind, reason = "dot operand", "a dot operand: the matrix multiply wants its operands in the #dot_op layout"
    elif names & set(_MEMORY):
        stores = bool(names & {"tt.store", "tt.descriptor_store", "tt.atomic_rmw", "tt.atomic_cas"})
        kind = "store" if stores else "load"
        reason = (f"a memory access: the {'store' if stores else 'load'} uses the layout Triton picked for "
                  "coalescing from the pointer's contiguity")
        hint = contiguity_hint(op, consumer_ops, dst_layout, bits, arguments)
    elif producer_op is not None and producer_op.name in _REDUCE:
        kind, reason = "reduction", "a reduction's result (a #slice layout) is used where another layout is wanted"
    elif names & {"tt.broadcast", "tt.expand_dims"}:
        kind, reason = "broadcast", "a broadcast (expand_dims, broadcast) wants its operand in another layout"
    elif names & set(_SHAPE):
        kind, reason = "shape", "a shape operation (broadcast, expand_dims, reshape, ...) wants its operand in another layout"
    elif names & set(_REDUCE):
        kind, reason = "reduction", "a reduction wants its operand in another layout"
    elif producer_op is not None and producer_op.name in _SHAPE:
        kind, reason = "shape", "the result of a shape operation is used where another layout is wanted"
    elif not consumer_ops:
        kind, reason = "other", "no user in this kernel"
    else:
        kind, reason = "other", "its users want another layout than its producer's (elementwise ops or control flow joining values)"
    return Why(reason, producer, consumers, hint, kind, tuple(sources))
