"""Triton's diagnostics as messages for our users, and the exceptions of the IR layer:
:class:`IRError` (a module could not be parsed or transformed) and :class:`PassFailure` (a pass
cannot transform an op; ``passes.framework`` re-exports it, where the passes take it from).

MLIR's C++ prints diagnostics to the process's stderr (fd 2) with the location of the file it
parsed: a temporary file of ours.  :class:`CapturedStderr` collects them and
:func:`rewrite_diagnostics` turns ``loc("/tmp/ll_opt_x.mlir":4:25): error: ...`` into
``kernel.ttgir:4:25: error: ...``.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile


class IRError(Exception):
    """A module could not be parsed, verified or transformed; ``str()`` is the user message,
    starting with a location (``file:line:col: error: ...``) when one is known."""


class PassFailure(Exception):
    """Raised by a pass when it cannot transform ``op`` (an :class:`~.snapshot.Operation`, or
    None): the pipeline stops with a diagnostic.  Defined here, below the pass framework, so
    that the IR layer (``layouts``) raises it without importing upward."""

    def __init__(self, op, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


_LOC_DIAG = re.compile(r'^loc\((?P<loc>.*?)\):\s*(?P<rest>(error|warning|note|remark):.*)$')
_FILE_LINE_COL = re.compile(r'"(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def rewrite_diagnostics(text: str, temp_path: str, display_name: str) -> str:
    """Triton prints ``loc("/tmp/x.mlir":4:25): error: ...`` (or a named location such as
    ``loc("x"("k.py":3:9))``); users want ``in.mlir:4:25: error: ...``."""
    lines = []
    for line in text.splitlines():
        m = _LOC_DIAG.match(line.strip())
        if m:
            positions = list(_FILE_LINE_COL.finditer(m.group("loc")))
            if positions:
                p = positions[-1]
                f = display_name if p.group("file") == temp_path else p.group("file")
                line = f"{f}:{p.group('line')}:{p.group('col')}: {m.group('rest')}"
            else:
                line = f"{display_name}: {m.group('rest')}"
        if line.strip():
            lines.append(line)
    return "\n".join(lines)


class CapturedStderr:
    """Redirect the process-level stderr (fd 2, where MLIR's C++ prints diagnostics) to a file."""

    def __enter__(self):
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace")
        self._file.close()
        return False


def location_text(loc: str, temp_path: str, filename: str) -> str:
    """``loc("file":3:5)`` -> ``file:3:5``; named locations keep the innermost file position."""
    m = re.search(r'"([^"]*)":(\d+):(\d+)', loc)
    if not m:
        return "unknown"
    f = filename if m.group(1) == temp_path else m.group(1)
    return f"{f}:{m.group(2)}:{m.group(3)}"

