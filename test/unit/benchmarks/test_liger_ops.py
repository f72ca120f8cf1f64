"""benchmarks/liger_ops_gpu.py on the CPU, without torch or Liger: ``--list`` names every op with
its shapes and imports neither, and the report turns rows of stock / ours / text over two rounds,
one child failed, into the numbers it should (medians, noise, geometric mean, the failure)."""

import os
import subprocess
import sys

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks")
sys.path.insert(0, BENCHMARKS)

import liger_ops_gpu  # noqa: E402


def test_list_names_every_op_without_torch_or_liger():
    code = ("import sys; import liger_ops_gpu; code = liger_ops_gpu.main(['--list']); "
            "assert not {'torch', 'triton', 'liger_kernel'} & set(sys.modules), sorted(sys.modules); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], cwd=BENCHMARKS, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for op in liger_ops_gpu.OPS:
        assert f"\n{op} " in "\n" + done.stdout
    assert "liger_kernel.ops.rms_norm.LigerRMSNormFunction" in done.stdout
    assert "tokens 2,097,152, hidden 256, bf16" in done.stdout        # block RMSNorm's rows
    assert len(liger_ops_gpu.OPS) >= 15
    # the ops whose kernels hold a convert_layout in test/lit/corpus/liger_kernel
    assert {"block_rms_norm", "rope", "qwen2vl_mrope", "llama4_rope", "neighborhood_attention",
            "mhc"} <= set(liger_ops_gpu.OPS)


def test_an_unknown_op_is_a_usage_error():
    done = subprocess.run([sys.executable, os.path.join(BENCHMARKS, "liger_ops_gpu.py"), "--list", "--ops", "rope,nope"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "no such op nope" in done.stderr


def _row(op, mode, round_, ms):
    row = {"op": op, "mode": mode, "round": round_, "ms": ms}
    if mode != "stock":
        row.update(islands=4, kernels_with_islands=2, conversions=6)
    return row


def test_report_numbers():
    rows = [_row("rms_norm", "stock", 0, 2.0), _row("rms_norm", "ours", 0, 1.9), _row("rms_norm", "text", 0, 2.1),
            _row("rms_norm", "text", 1, 2.31), _row("rms_norm", "ours", 1, 2.2), _row("rms_norm", "stock", 1, 2.2),
            _row("rope", "stock", 0, 4.0), _row("rope", "ours", 0, 3.0), _row("rope", "text", 0, 4.4),
            _row("rope", "text", 1, 5.5), _row("rope", "stock", 1, 5.0)]        # rope's ours of round 1 failed
    failures = {("rope", "ours", 1): "timed out after 300 s"}
    exact = {("rms_norm", "ours"): "bit-exact", ("rms_norm", "text"): "bit-exact", ("rms_norm", "stock"): "bit-exact",
             ("rope", "ours"): "differs (largest difference 0.5)", ("rope", "text"): "bit-exact"}
    text = liger_ops_gpu.report("--rounds 2 --text", "GPU X, triton 3.6.0 (1 s)", ["rms_norm", "rope"],
                                ["stock", "ours", "text"], 2, rows, failures, exact)
    lines = text.splitlines()
    assert lines[0] == "# Liger-Kernel's ops, whole: stock against `enable()`"
    assert lines[2].startswith("Produced by `python benchmarks/liger_ops_gpu.py --rounds 2 --text` "
                               "on GPU X, triton 3.6.0 (1 s).")
    # ours / stock: 0.95 and 1.0, median 0.975; stock 2.0 and 2.2: median 2.1, noise 1.1
    assert ("| rms_norm | 2.100 | 2.050 | 0.950, 1.000 | 0.975 | 1.100 | 4 (2) | "
            "bit-exact; stock against itself: bit-exact |") in lines
    assert "| rms_norm, text | | 2.205 | 1.050, 1.050 | 1.050 | | 4 (2) | bit-exact |" in lines
    # rope: round 0 only (ours failed in round 1), so no noise
    assert "| rope | 4.000 | 3.000 | 0.750 | 0.750 | nan | 4 (2) | differs (largest difference 0.5) |" in lines
    assert "| rope, text | | 4.400 | 1.100 | 1.100 | | 4 (2) | bit-exact |" in lines
    # geometric mean of 0.975 and 0.75 = sqrt(0.73125) = 0.8551...
    assert "Geometric mean of the per-op medians, ours / stock: **0.855** over 2 ops." in lines
    assert lines[-1] == "* rope ours round 1: timed out after 300 s"
    assert text.endswith("\n")


def test_an_op_that_never_ran_is_listed_as_failed():
    failures = {("mhc", "stock", 0): "RuntimeError: out of memory", ("mhc", "ours", 0): "RuntimeError: out of memory"}
    text = liger_ops_gpu.report("", "GPU X", ["mhc"], ["stock", "ours"], 1, [], failures, {})
    assert "| mhc | - | - | - | - | - | - | failed: RuntimeError: out of memory |" in text
    assert "Geometric mean" not in text
    assert text.count("* mhc ") == 2
