"""harness/op_rounds.py, the rounds of fla_ops_gpu.py and liger_ops_gpu.py, on the CPU: each
child gets an empty Triton cache of its own that is gone once the child is done (a run of many
ops once filled a GPU machine's disk with them), and an op's saved tensors go once its rounds
are compared; the modes run in order on even rounds and reversed on odd ones."""

import json
import os
import sys

from support import REPO

sys.path[:0] = [os.path.join(str(REPO), "benchmarks")]
from harness import op_rounds  # noqa: E402


def test_each_child_has_its_own_cache_and_it_is_removed(tmp_path):
    seen = tmp_path / "seen.txt"
    code = ("import os, sys; cache = os.environ['TRITON_CACHE_DIR']; assert os.listdir(cache) == []; "
            f"open(os.path.join(cache, 'kernel.ptx'), 'w').write('x'); open({str(seen)!r}, 'a').write(cache + '\\n')")
    kept = []
    assert op_rounds.run_child([sys.executable, "-c", code], 60, "ll_test_op_rounds_", keep=kept.append) == ""
    assert op_rounds.run_child([sys.executable, "-c", code], 60, "ll_test_op_rounds_") == ""
    first, second = seen.read_text().split()
    assert first != second and kept == [first]
    assert not os.path.exists(first) and not os.path.exists(second)


def test_a_failing_child_says_why_and_leaves_no_cache(tmp_path):
    why = op_rounds.run_child([sys.executable, "-c", "raise SystemExit('no GPU here')"], 60, "ll_test_op_rounds_")
    assert why == "no GPU here"


def test_rounds_alternate_the_modes_and_drop_the_saved_tensors(tmp_path, monkeypatch):
    order = []

    def start(op, mode, round_, out_file):
        order.append((round_, mode))
        open(out_file + f".{op}.{mode}.pt", "w").write("tensors")
        with open(out_file, "a") as f:
            f.write(json.dumps({"op": op, "mode": mode, "ms": 1.0}) + "\n")
        return ""
    compared = []
    monkeypatch.setattr(op_rounds, "compare", lambda out_file, op, mode="ours", stock_file="":
                        compared.append((os.path.basename(out_file), mode, os.path.basename(stock_file))) or "bit-exact")
    rows, failures, exact = op_rounds.run_rounds(["rope"], ["stock", "ours", "text"], 2, start, str(tmp_path),
                                                 stock_twice=True)
    assert order == [(0, "stock"), (0, "ours"), (0, "text"), (1, "text"), (1, "ours"), (1, "stock")]
    assert len(rows) == 6 and failures == {}
    assert exact == {("rope", "ours"): "bit-exact", ("rope", "text"): "bit-exact", ("rope", "stock"): "bit-exact"}
    assert ("rope.r1.jsonl", "stock", "rope.r0.jsonl") in compared
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".pt")]
