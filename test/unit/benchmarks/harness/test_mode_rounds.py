"""benchmarks/harness/mode_rounds.py: every (mode, round) in a fresh process with its own Triton cache,
the order rotating from round to round; and broadcast_load_gpu's summary from fake rounds."""

import json
import os
import sys

from support import REPO

sys.path[:0] = [os.path.join(str(REPO), "benchmarks"), os.path.join(str(REPO), "benchmarks", "studies")]
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


def test_broadcast_load_summary_from_fake_rounds():
    import broadcast_load_gpu as b

    def rounds(ms, checksum=7):
        return [{"k": {"ms": t, "checksum": checksum, "converts": 1, "assigned": False}} for t in ms]

    runs = {"convert": rounds([2.0, 2.2, 2.1]), "direct": rounds([1.0, 1.1, 1.05]),
            "ours": rounds([2.0, 2.0, 2.0]), "ours_margin0": rounds([4.0, 4.0, 4.0], checksum=8)}
    (name, ms, ratio, noise, exact, converts), = b.summarize(runs)
    assert ms["convert"] == 2.1 and ratio["direct"] == 1.05 / 2.1 and ratio["ours_margin0"] == 4.0 / 2.1
    assert noise == 2.1 / 2.0 and not exact
    assert "| k | 2.1000 | 1.0500 | 2.0000 | 4.0000 | 0.500 | 0.952 | 1.905 | 1.050 | 1/1/1/1 | NO |" in \
        b.render(b.summarize(runs), 3, "gpu", "v")
