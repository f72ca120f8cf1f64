"""benchmarks/harness/mode_rounds.py: every (mode, round) in a fresh process with its own Triton cache,
the order rotating from round to round."""

import os
import sys

from support import REPO

sys.path[:0] = [os.path.join(str(REPO), "benchmarks")]
from harness import mode_rounds  # noqa: E402

CHILD = """
import json, os, sys
mode, path = sys.argv[2], sys.argv[3]
with open(os.environ["ORDER_LOG"], "a") as log:
    log.write(mode + "\\n")
with open(path, "w") as f:
    json.dump({"mode": mode, "pid": os.getpid(), "cache": os.environ["TRITON_CACHE_DIR"]}, f)
"""


def test_modes_rotate_and_each_run_is_a_process_of_its_own(tmp_path, monkeypatch):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    monkeypatch.setenv("ORDER_LOG", str(tmp_path / "order.log"))
    runs = mode_rounds.run_mode_rounds(str(script), ("a", "b", "c"), 3, "ll_test_rounds_")
    order = (tmp_path / "order.log").read_text().split()
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert [r["mode"] for r in runs["b"]] == ["b", "b", "b"]
    results = [r for mode in runs.values() for r in mode]
    assert len({r["pid"] for r in results}) == 9 and len({r["cache"] for r in results}) == 9

