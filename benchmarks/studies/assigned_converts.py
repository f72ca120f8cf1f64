"""How many conversions a kernel compiled with ``ll-assign-layouts`` has, and whether it changed.

Triton's ``compiled.asm["ttgir"]`` is the TTGIR *before* our passes (they run inside the
``llir`` stage), so it shows stock's conversions even where the assignment removed or moved
them.  The plugin counts what the assignment left in ``linear_layouts.stats()``; a benchmark
takes a copy of the stats before a compile and reads the difference after it.
"""

from __future__ import annotations

import dataclasses


def stats_snapshot():
    import linear_layouts
    return dataclasses.replace(linear_layouts.stats())


def converts_left(compiled, before) -> tuple[int, bool]:
    """(conversions in the kernel as compiled, whether ll-assign-layouts changed it) for one
    kernel compiled after ``before = stats_snapshot()``."""
    import linear_layouts
    after = linear_layouts.stats()
    if after.kernels_assigned > before.kernels_assigned:
        return after.conversions_after_assignment - before.conversions_after_assignment, True
    return compiled.asm["ttgir"].count("ttg.convert_layout"), False
