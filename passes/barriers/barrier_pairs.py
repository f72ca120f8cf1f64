"""Our islands' whole-CTA barriers in the LLVM IR, as the guard pruning reads them.

They are NVVM barrier calls (convergent, so LLVM never duplicates
one under a lane-dependent branch), each right after an inline-asm marker saying whose it is:

    call void asm sideeffect "// guard", ""()                           (or "// guard alone",
    call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)             "// island barrier")

The pruning reads each such pair as the one line of inline PTX the barriers once were
(``bar.sync 0; // guard``, ``... alone``, ``bar.sync 0;``: ``classify`` tells them from
Triton's barrier calls) and splits the pairs it keeps back after.
"""

from __future__ import annotations

import re

from ...lowering.emit.emit_nvidia import (ALONE_GUARD_BARRIER_ASM, ALONE_GUARD_MARKER, GUARD_BARRIER_ASM,
                                          GUARD_MARKER, ISLAND_BARRIER_ASM, ISLAND_BARRIER_MARKER)

_MARKER_LINE = re.compile(
    r'^(?P<head>\s*(?:(?:tail|notail|musttail) )?)call void asm sideeffect "(?P<marker>// [a-z ]+)", ""\(\)(?P<tail>.*)$')
_CTA_BARRIER_LINE = re.compile(
    r"^\s*(?:(?:tail|notail|musttail) )?call void @llvm\.nvvm\.(?:barrier0\(\)|barrier\.cta\.sync\.aligned(?:\.all)?\(i32 0\)|barrier\.sync\(i32 0\))")
_JOINED = {GUARD_MARKER: GUARD_BARRIER_ASM, ALONE_GUARD_MARKER: ALONE_GUARD_BARRIER_ASM,
           ISLAND_BARRIER_MARKER: ISLAND_BARRIER_ASM}
_PAIR_TAG = re.compile(r" ; ll-pair (\d+)$")


def joined_pairs(llir: str) -> tuple[str, list[str]] | None:
    """``llir`` with each marker and the barrier call right after it as one inline-asm line
    tagged ``; ll-pair K``, and the K-th pair's two lines as they were; None where a marker is not
    right before a whole-CTA barrier call (LLVM put something between: nothing is pruned then,
    since that barrier could pass for one of Triton's)."""
    if not any(marker in llir for marker in _JOINED):
        return llir, []
    lines = llir.split("\n")
    out, pairs, i = [], [], 0
    while i < len(lines):
        marker = _MARKER_LINE.match(lines[i]) if "asm sideeffect \"// " in lines[i] else None
        if marker and marker.group("marker") in _JOINED:
            if i + 1 == len(lines) or not _CTA_BARRIER_LINE.match(lines[i + 1]):
                return None
            out.append(f'{marker.group("head")}call void asm sideeffect "{_JOINED[marker.group("marker")]}", ""()'
                       f'{marker.group("tail")} ; ll-pair {len(pairs)}')
            pairs.append(lines[i] + "\n" + lines[i + 1])
            i += 2
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out), pairs


def split_pairs(llir: str, pairs: list[str]) -> str:
    """``joined_pairs`` undone on the lines still there (the pruning drops whole lines)."""
    if not pairs:
        return llir
    return "\n".join(pairs[int(tag.group(1))] if (tag := _PAIR_TAG.search(line)) else line
                     for line in llir.split("\n"))
