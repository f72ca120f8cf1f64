"""The minimal conversion between two distributed layouts, and the hardware scope it crosses.

A ``ttg.convert_layout`` moves every tensor element from where the source layout keeps it to
where the destination layout wants it.  Both layouts map hardware coordinates (register, lane,
warp, block) to tensor coordinates, so

    C = dst.invert_and_compose(src)

maps each destination hardware coordinate to a source hardware coordinate holding the same
element.  Much of C is usually the identity: if C maps ``warp`` to ``warp`` and nothing else
touches warps, no data crosses warps, and the warp dimension can be *quotiented out*.  Triton
(``minimalCvtLayout`` in ``lib/Analysis/Utility.cpp``) quotients from the slowest level down:
block, then warp, then lane, then register, stopping at the first level that does move data.
What remains names the levels the data must cross:

    dims(C) == {}                       no-op: the two layouts are the same map
    dims(C) == {register}               a renaming of registers inside each thread
    dims(C) == {register, lane}         data crosses lanes of one warp (shuffles)
    dims(C) contains warp               data crosses warps (shared memory + CTA barrier)
    dims(C) contains block              data crosses CTAs of a cluster

Worked example (one warp of 4 lanes, 2 registers, a 8-element tensor):
src puts element e in lane e // 2, register e % 2; dst puts it in lane e % 4, register e // 4.
C maps dst register 1 (element 4) to src (lane 2, register 0): registers feed lanes, so C is
not trivial over ``lane`` and the scope is "lane".

Registers that hold broadcast copies (zero bases) are removed first: a copy is not data that
has to move, and keeping it would make C look non-trivial over registers.
"""

from __future__ import annotations

import functools

from ..dialect import LinearLayout
from .plan import Scope

# Hardware levels from the fastest (inside a thread) to the slowest (across CTAs).
HARDWARE_LEVELS = ("register", "lane", "warp", "block")


def _strip_register_broadcast(layout: LinearLayout) -> LinearLayout:
    if layout.has_in_dim("register"):
        return layout.remove_zero_bases_along_dim("register")
    return layout


def _common_suffix(a: list[str], b: list[str]) -> list[str]:
    suffix = []
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        suffix.append(x)
    return list(reversed(suffix))


@functools.lru_cache(maxsize=1024)
def minimal_conversion(src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """Triton's ``minimalCvtLayout`` on layouts with register broadcasting removed: the part of
    ``dst.invert_and_compose(src)`` that moves data (its in dims equal its out dims).

    Remembered (layouts are immutable): one conversion asks for it from the planner, the stock
    gate and the predictions of stock's lowering, and each computation costs a noticeable part
    of a compile (docs/compile-time.md, 'What the small savings saved');
    ``passes.drop_in.process_memory`` forgets it for a cold compile."""
    src = _strip_register_broadcast(src)
    dst = _strip_register_broadcast(dst)
    conversion = dst.invert_and_compose(src)
    # Only dims both layouts share, in their common order (normally register, lane, warp,
    # block), can be quotiented; go from the slowest and stop at the first that moves data.
    common = _common_suffix(dst.in_dim_names, src.in_dim_names)
    for dim in reversed(common):
        quotient = conversion.quotient([dim])
        if quotient is None:
            break
        conversion = quotient
    return conversion


def scope_of(conversion: LinearLayout) -> Scope:
    """The widest hardware level named by a minimal conversion (``Scope.NONE`` when it is empty)."""
    dims = set(conversion.in_dim_names) | set(conversion.out_dim_names)
    for level in reversed(HARDWARE_LEVELS):
        if level in dims:
            return Scope(level)
    return Scope.NONE


def conversion_scope(src: LinearLayout, dst: LinearLayout) -> Scope:
    """The widest level the conversion crosses: none, register, lane, warp or block."""
    return scope_of(minimal_conversion(src, dst))
