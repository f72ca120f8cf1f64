"""benchmarks/paper_kernels.py without a GPU: its kernels compile for sm_90 in every mode with
the op counts we report, they compute the right thing (Triton's interpreter against the numpy
references), and the report's ratios and verdicts are right for known timings."""

import json
import os
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton")

from support import REPO  # noqa: E402

ROOT = str(REPO)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import paper_kernels  # noqa: E402


@pytest.fixture(autouse=True)
def fp_fusion(monkeypatch):
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")


def test_mma_v2_gemm_is_the_ampere_path_and_its_epilogue_convert_is_ours(tmp_path):
    """DISABLE_MMA_V3=1 gives mma v2 on sm_90 with the operands through ttg.local_load (cp.async
    into shared memory first); without it the same kernel is a wgmma kernel."""
    case = paper_kernels.mma_v2_gemm_case(2048, 2048, 8192, 128, 128, 32, num_warps=4, num_stages=4)
    stock = paper_kernels.compile_case(case, "stock", str(tmp_path / "stock"))
    linear = paper_kernels.compile_case(case, "linear", str(tmp_path / "linear"))
    assert paper_kernels.mma_v2_problem(case, stock) is None
    assert (stock["mma"], stock["convert_layout"], stock["local_load"], stock["local_store"]) == ("v2", 1, 2, 0)
    assert stock["async_copy_global_to_local"] > 0
    assert (linear["plugin_conversions"], linear["lowered"], linear["fallbacks"]) == (1, 1, 0)
    assert os.environ.get("DISABLE_MMA_V3") is None, "the switch must not outlive the case"
    wgmma_case = paper_kernels.PaperCase(**{**case.__dict__, "environment": {}})
    wgmma = paper_kernels.compile_case(wgmma_case, "stock", str(tmp_path / "wgmma"))
    assert wgmma["mma"] == "v3" and wgmma["local_load"] == 0
    assert "expected nvidia_mma versionMajor = 2" in paper_kernels.mma_v2_problem(case, wgmma)


def test_dry_run_prints_counts_and_every_layer_norm_convert_is_lowered(capsys):
    """The layer norm's four converts (W and B to the rows' slice layout, mean and 1/std to the
    store's layout) are all ours, in linear and in legacy mode."""
    status = paper_kernels.dry_run([paper_kernels.layer_norm_case(2048, 512)])
    out = capsys.readouterr().out
    assert status == 0, out
    [row] = [line for line in out.splitlines() if line.startswith("layer_norm[M=2048 N=512]")]
    #          mma convert ours legacy local_load local_store local_alloc cp.async fallbacks
    assert row.split()[2:11] == ["-", "4", "4", "4", "0", "0", "0", "0", "0"]
    assert "1 cases x 3 modes compiled for sm_90: no problems" in out


def test_compile_signature_is_what_a_launch_specializes_to():
    case = paper_kernels.int4_gemm_case(2048, 4096, 4096, 128, 128, 64, num_warps=8, num_stages=3)
    signature, constexprs, attrs = compile_signature = paper_kernels.compile_signature(case)
    assert compile_signature
    names = case.function.arg_names
    assert signature["A"] == "*fp16" and signature["B"] == "*i8" and signature["SCALES"] == "*fp16"
    assert signature["stride_ak"] == "constexpr" and constexprs["stride_ak"] == 1     # 1 is specialized
    assert signature["stride_am"] == "i32" and attrs[(names.index("stride_am"),)] == [["tt.divisibility", 16]]
    assert attrs[(names.index("A"),)] == [["tt.divisibility", 16]]
    assert signature["BLOCK_K"] == "constexpr" and constexprs["BLOCK_K"] == 64


def test_streamk_split_covers_every_tail_iteration_once():
    split = paper_kernels.streamk_split(1536, 1536, 8192, 128, 128, 64, programs=132)
    # 144 tiles: 132 in one whole wave, 12 tiles x 128 iterations = 1536 over 132 programs
    assert split == {"FULL_TILES": 132, "TAIL_ITERATIONS_PER_PROGRAM": 11, "TAIL_EXTRA_ITERATIONS": 84}
    assert 132 * 11 + 84 == 12 * 128


def test_kernels_match_numpy_in_the_interpreter():
    """Tiny versions of all five kernels (stream-K runs crossing tile boundaries, ragged layer-norm
    rows and columns, both score mods) in Triton's interpreter."""
    environment = {**os.environ, "TRITON_DEFAULT_FP_FUSION": "1"}
    environment.pop("TRITON_INTERPRET", None)      # the script sets it itself
    result = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "paper_kernels.py"), "--interpret"],
                            capture_output=True, text=True, env=environment, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    count = len(paper_kernels.interpreter_cases())
    assert f"{count}/{count} cases match their references" in result.stdout


def test_a_case_must_name_every_kernel_argument_once():
    case = paper_kernels.layer_norm_case(64, 512)
    with pytest.raises(ValueError, match=r"argument 'eps' of layer_norm_fwd_kernel must be given exactly once"):
        paper_kernels.PaperCase(**{**case.__dict__, "scalars": {k: v for k, v in case.scalars.items() if k != "eps"}})
    with pytest.raises(ValueError, match=r"has no argument 'EPS'"):
        paper_kernels.PaperCase(**{**case.__dict__, "constexprs": {**case.constexprs, "EPS": 1}})


def _timed(ms, low=None, high=None, correct=True, **extra):
    return {"ok": True, "correct": correct, "ms": ms, "min_ms": low or ms * 0.98, "max_ms": high or ms * 1.05,
            "lowered": 1, "fallbacks": 0, **extra}


def test_report_ratios_noise_and_verdicts(tmp_path):
    counts = {"mma": "v2", "convert_layout": 1, "local_load": 2, "local_store": 0, "local_alloc": 2,
              "async_copy_global_to_local": 6}
    rows = [
        {"kernel": "gemm", "shape": "a", "name": "gemm[a]", "stock": _timed(1.0, **counts), "linear": _timed(0.99),
         "legacy": _timed(1.2), "stock_again": _timed(1.01)},
        {"kernel": "gemm", "shape": "b", "name": "gemm[b]", "stock": _timed(2.0, **counts), "linear": _timed(2.04),
         "legacy": _timed(2.02), "stock_again": _timed(1.98)},
        {"kernel": "norm", "shape": "c", "name": "norm[c]", "stock": _timed(1.0), "linear": _timed(1.2),
         "legacy": _timed(1.0), "stock_again": _timed(1.0)},
        {"kernel": "norm", "shape": "d", "name": "norm[d]", "stock": _timed(1.0), "linear": _timed(0.5, correct=False),
         "legacy": {"ok": False, "error": "RuntimeError: boom"}, "stock_again": _timed(1.0)},
    ]
    summary = paper_kernels.summarize(rows)
    gemm = summary["per_kernel"]["gemm"]
    gemm_vs_stock = (0.99 * 1.02) ** 0.5
    gemm_vs_legacy = (0.99 / 1.2 * 2.04 / 2.02) ** 0.5
    assert gemm["ours_over_stock"]["geomean"] == pytest.approx(gemm_vs_stock)
    assert (gemm["ours_over_stock"]["min"], gemm["ours_over_stock"]["max"]) == pytest.approx((0.99, 1.02))
    assert gemm["ours_over_legacy"]["geomean"] == pytest.approx(gemm_vs_legacy)
    assert rows[3]["ours_over_stock"] is None and rows[3]["ours_over_legacy"] is None   # wrong / failed: no ratio
    assert summary["ours_over_stock"] == pytest.approx((0.99 * 1.02 * 1.2) ** (1 / 3))
    assert summary["noise_max"] == pytest.approx(0.01)
    environment = {"gpu": "test GPU", "triton": "3.6.0", "torch": "2.11", "python": "3.11"}
    paper_kernels.write_report(rows, summary, environment, str(tmp_path), elapsed_s=90)
    md = (tmp_path / "paper_kernels.md").read_text()
    # 1.005 is above 1.00 but within the 1% the stock run moved by itself
    assert f"| gemm | {gemm_vs_stock:.3f} [0.990, 1.020] | {gemm_vs_legacy:.3f} [0.825, 1.010] | 1.0% | within noise |" \
        in md
    assert "| norm | 1.200 [1.200, 1.200] | 1.200 [1.200, 1.200] | 0.0% | no |" in md
    assert "| gemm[a] | v2 | 1.0000 [0.9800, 1.0500] | 0.9900 [0.9702, 1.0395] |" in md
    assert "* norm[d] [legacy]: RuntimeError: boom" in md
    assert "* norm[d] [linear]: wrong result" in md
    assert json.loads((tmp_path / "paper_kernels.json").read_text())["summary"]["per_kernel"]["norm"]
    assert (tmp_path / "paper_kernels.png").stat().st_size > 10_000
    assert "Produced by `python benchmarks/paper_kernels.py --out benchmarks/results --rounds 1` " in md
    # a run of some kernels names them, so that its command reproduces it
    paper_kernels.write_report(rows, summary, dict(environment, only="gemm,norm", rounds=2), str(tmp_path), elapsed_s=90)
    assert ("Produced by `python benchmarks/paper_kernels.py --out benchmarks/results --rounds 2 --only gemm,norm` "
            in (tmp_path / "paper_kernels.md").read_text())
