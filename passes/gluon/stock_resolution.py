"""Triton's own resolution of Gluon's automatic layouts, for comparison: ``gluon-inline``,
``gluon-infer-coalesced-encodings``, ``gluon-resolve-auto-encodings``, the canonicalizer and CSE,
as the ``ttgir`` stage of a Gluon compile runs them (CSE too: the stage runs a loop-aware CSE
next, and our own resolution's module is priced after CSE, so both are priced alike).  Run as a child process
(:func:`triton_resolution`, the parent's side): Triton's pass may abort the process.

Reads module text on stdin; prints the resolved module (exit 0) or Triton's diagnostics on
stderr (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from typing import Optional

from ..ir.sandbox import package_python


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


# --------------------------------------------------------------------------- the parent's side

def triton_resolution(text: str, filename: str) -> tuple[Optional[str], str]:
    """Triton's own resolution of ``text`` (in a subprocess: it may abort): (resolved text,
    "") or (None, Triton's first error line)."""
    try:
        run = subprocess.run(package_python(__name__, "main"), input=text, capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    if run.returncode == 0:
        return run.stdout, ""
    errors = [line for line in run.stderr.splitlines() if "error:" in line]
    message = errors[0] if errors else (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
    return None, message.split("error: ", 1)[-1].rstrip(":")     # "... for value:" (the value on the next line)
