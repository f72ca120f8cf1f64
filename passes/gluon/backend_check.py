"""The last word before a resolved Gluon kernel is handed on: every layout the backend's
lowering has a requirement of (``cp.async`` widths, AMD's direct-to-LDS loads and packed buffer
atomics) meets it, computed on the module itself as the backend will compute it
(:mod:`..assign.backend_requirements`), whatever chose its layouts.  A layout that does not is
an :class:`.auto_seeds.Unresolvable`: the kernel is left to Triton's resolution, never emitted
with a layout the backend would reject or lower badly."""

from __future__ import annotations

from typing import Optional

from ..assign.backend_requirements import layout_problem, requirement_facts
from ..assign.layout_rules import encoding_of, global_access
from ..assign.pointer_contiguity import PointerAnalysis
from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.snapshot import Module, functions_with_bodies, ops_under
from .auto_seeds import Unresolvable


def check_on_parsed_text(module: Module, text: Optional[str]) -> bool:
    """:func:`check_backend_requirements` on ``module`` read with ``text``, the text it was
    just parsed from; whether it was checked (False where there is no such text, or the module
    does not line up with it: the caller checks the module as printed)."""
    if text is None:
        return False
    try:
        lines = ModuleLines(module, text)
    except TextMismatch:
        return False
    check_backend_requirements(module, lines)
    return True


def check_backend_requirements(module: Module, lines: ModuleLines) -> None:
    """Every ``cp.async`` of the resolved module copies at least 4 bytes a thread (on AMD,
    every direct-to-LDS load loads a width the target has, its whole run in the buffer; every
    packed f16 / bf16 buffer atomic updates 2 elements at a time), as the backend's lowering
    will compute it on this very module (:mod:`..assign.backend_requirements`): the last word
    before a kernel is handed on, whatever chose its layouts.  ``lines``: the module's lines
    (its print, or the text it was parsed from)."""
    for function in functions_with_bodies(module):
        pointers = PointerAnalysis.of_function(lines, function)
        for op in ops_under(function):
            facts = requirement_facts(op, pointers)
            access = global_access(op) if facts is not None else None
            if access is None or encoding_of(access.addresses) is None:
                continue
            problem = layout_problem(encoding_of(access.addresses), facts)
            if problem is not None:
                raise Unresolvable(op, f"{problem} (left to Triton's resolution)")
