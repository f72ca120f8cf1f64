"""Every study kept in benchmarks/studies still starts: its command-line scripts answer ``--help``
(which imports everything they import at the top, the package and the harnesses one folder up
included), and the helper modules import.  A study that no longer runs is deleted, not kept
(docs/studies.md keeps its finding)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import REPO

STUDIES = REPO / "benchmarks" / "studies"
# Need torch and a GPU at import time (they launch at the top level): checked by parsing only.
GPU_AT_IMPORT = {"epilogue_ncu.py"}


def _scripts():
    return sorted(p.name for p in STUDIES.glob("*.py") if p.name != "on_path.py")


def _is_command(path) -> bool:
    return "argparse" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", _scripts())
def test_study_starts(name):
    path = STUDIES / name
    if name in GPU_AT_IMPORT:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
        return
    if _is_command(path):
        command = [sys.executable, str(path), "--help"]
    else:
        command = [sys.executable, "-c", f"import {path.stem}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(STUDIES), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=str(STUDIES), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
