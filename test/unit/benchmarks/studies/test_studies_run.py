"""Every study kept in benchmarks/studies still starts: its command-line scripts answer ``--help``
(which runs everything they import at the top, the package and the harnesses one folder up
included), and the helper modules import.  A study that no longer runs, or whose question is
answered and no doc, harness or test needs its script, is deleted (docs/studies.md keeps its
finding and the commit that holds it; benchmarks/harness/regenerate_results.py lists it).  All of them in one child process (Triton imported once),
each as ``python benchmarks/studies/<name>.py --help`` would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import REPO

STUDIES = REPO / "benchmarks" / "studies"
# Need torch and a GPU at import time (they launch at the top level): checked by compiling only.
GPU_AT_IMPORT: set[str] = set()

CHILD = r"""
import json, runpy, sys, traceback
results = {}
for path, command in json.loads(sys.argv[1]):
    sys.argv = [path, "--help"] if command else [path]
    try:
        runpy.run_path(path, run_name="__main__" if command else "study")
        results[path] = "ok"
    except SystemExit as done:
        results[path] = "ok" if done.code in (0, None) else f"exit {done.code}"
    except BaseException:
        results[path] = traceback.format_exc(limit=3)
print("RESULTS " + json.dumps(results))
"""


def test_every_study_starts():
    scripts = sorted(p for p in STUDIES.glob("*.py") if p.name not in GPU_AT_IMPORT)
    assert len(scripts) >= 3
    for name in GPU_AT_IMPORT:
        compile((STUDIES / name).read_text(encoding="utf-8"), name, "exec")
    plan = [(str(p), "argparse" in p.read_text(encoding="utf-8")) for p in scripts]
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(plan)], capture_output=True, text=True,
                          timeout=600, cwd=str(STUDIES), env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(STUDIES), *filter(None, [os.environ.get("PYTHONPATH")])])})
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULTS ")), None)
    assert line, done.stderr[-3000:]
    results = json.loads(line[len("RESULTS "):])
    assert {path: r for path, r in results.items() if r != "ok"} == {}
    assert len(results) == len(plan)
