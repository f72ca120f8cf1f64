"""Triton's own resolution of Gluon's automatic layouts, for comparison: ``gluon-inline``,
``gluon-infer-coalesced-encodings``, ``gluon-resolve-auto-encodings``, the canonicalizer and CSE,
as the ``ttgir`` stage of a Gluon compile runs them (CSE too: the stage runs a loop-aware CSE
next, and our own resolution's module is priced after CSE, so both are priced alike).  Run as a child process
(:func:`.resolve_auto_layouts._triton_resolution`): Triton's pass may abort the process.

Reads module text on stdin; prints the resolved module (exit 0) or Triton's diagnostics on
stderr (exit 1)."""

from __future__ import annotations

import sys


def resolve_like_triton(text: str, filename: str = "<stdin>") -> str:
    from triton._C.libtriton import passes
    from ..ir.snapshot import parse_module
    module = parse_module(text, filename, safe=False)
    module.run_triton_passes(passes.gluon.add_inliner, passes.gluon.add_infer_coalesced_encodings,
                             passes.gluon.add_resolve_auto_encodings, passes.common.add_canonicalizer,
                             passes.common.add_cse)
    return module.print(debuginfo=True)


def main() -> None:
    from ..ir.diagnostics import IRError
    try:
        sys.stdout.write(resolve_like_triton(sys.stdin.read()))
    except IRError as error:
        sys.stderr.write(str(error) + "\n")
        sys.exit(1)
