"""Why a ``ttg.convert_layout`` exists: the op that produced its source, the ops that use its
result, and the reason the IR shows (issue 27, item 4).

Triton inserts a conversion where a value's layout is not the one its user wants: a ``tt.dot``
operand (``#dot_op``), a store or load (the coalesced layout ``ttg.coalesce`` picked from the
pointer's contiguity), a reduction's result (a ``#slice`` layout) meeting a value of another
layout, a broadcast.  The rules below read that from the producer's and consumers' op names;
``Why.hint`` stays empty for now: whether a store's one-element-per-thread layout comes from a
contiguity Triton could not prove is not in the TTGIR (a transpose's store is strided for real).
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _where(op) -> str:
    """``tt.reduce at prog.py:12:5``; only the op's name where its location is unknown (ops
    without results) or inside ``triton.language`` (``tl.sum`` is Triton's own code)."""
    location = op.location or "unknown"
    if location == "unknown" or "triton/language/" in location.replace("\\", "/"):
        return op.name
    return f"{op.name} at {location.rsplit('/', 1)[-1]}"


def users_of(module) -> dict:
    """id(Value) -> the ops that use it, for every op of ``module``."""
    users: dict = {}
    for op in module.walk():
        for operand in op.operands:
            if operand is not None:
                users.setdefault(id(operand), []).append(op)
    return users


def explain(op, users: dict) -> Why:
    """Why the conversion ``op`` exists (``users``: ``users_of(module)``)."""
    source = op.operands[0]
    producer_op = source.defining_op if source is not None else None
    producer = _where(producer_op) if producer_op is not None else "a block argument (a loop-carried value)"
    consumer_ops = users.get(id(op.results[0]), [])
    consumers = tuple(_where(c) for c in consumer_ops)
    names = {c.name for c in consumer_ops}
    hint = ""
    if names & set(_DOT):
        reason = "a dot operand: the matrix multiply wants its operands in the #dot_op layout"
    elif names & set(_MEMORY):
        reason = "a memory access: the store/load uses the layout Triton picked for coalescing from the pointer's contiguity"
    elif producer_op is not None and producer_op.name in _REDUCE:
        reason = "a reduction's result (a #slice layout) is used where another layout is wanted"
    elif names & set(_SHAPE):
        reason = "a shape operation (broadcast, expand_dims, reshape, ...) wants its operand in another layout"
    elif names & set(_REDUCE):
        reason = "a reduction wants its operand in another layout"
    elif producer_op is not None and producer_op.name in _SHAPE:
        reason = "the result of a shape operation is used where another layout is wanted"
    elif not consumer_ops:
        reason = "no user in this kernel"
    else:
        reason = "its users want another layout than its producer's (elementwise ops or control flow joining values)"
    return Why(reason, producer, consumers, hint)
