"""benchmarks/studies/sass_twins.py on three shuffle twins of stock's lowering (issue 25), compiled for
sm_90 on the CPU: our twin's SASS per loop iteration of the timed round trip
(``plan_contexts.chain_ttgir``, the return trip stock's) equals stock's exactly.  Before the
shuffle islands packed through LLVM vectors, tested lane bits as Triton does and selected
64-bit elements whole, ours was 115 / 212 / 510 against stock's 83 / 148 / 387 (Triton 3.6).
Also the loop and unroll bookkeeping of the script, on a made-up listing."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from support import REPO  # noqa: E402


def load_script():
    sys.path.insert(0, str(REPO / "benchmarks" / "studies"))   # the script imports its siblings (on_path: benchmarks/ too)
    spec = importlib.util.spec_from_file_location("sass_twins", REPO / "benchmarks" / "studies" / "sass_twins.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blocked(spt, tpw, wpc, order):
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")


# name, src, dst, shape, bits, warps, twin candidate, stock's SASS per iteration on Triton 3.6, releases where equal
TWINS = [
    ("fresh404/69:spt:64x8:i32:w2", _blocked([8, 1], [4, 8], [1, 2], [0, 1]), _blocked([4, 1], [4, 8], [1, 2], [0, 1]),
     [64, 8], 32, 2, 0, 83, ("3.6", "3.9")),
    ("fresh404/133:blocked:16x16:i16:w4", _blocked([4, 8], [4, 8], [1, 4], [1, 0]),
     _blocked([8, 4], [4, 8], [2, 2], [1, 0]), [16, 16], 16, 4, 1, 148, ("3.6", "3.9")),
    # Triton 3.9 lowers this one otherwise (353 per iteration): the twin is 3.6's
    ("fresh303/2:spt:16x64:i64:w1", _blocked([2, 1], [8, 4], [1, 1], [0, 1]), _blocked([1, 1], [8, 4], [1, 1], [0, 1]),
     [16, 64], 64, 1, 1, 387, ("3.6",)),
]


@pytest.mark.parametrize("name, src, dst, shape, bits, warps, twin, stock_count, releases", TWINS,
                         ids=[t[0].split(":")[0] for t in TWINS])
def test_our_twin_is_as_long_as_stocks_code(tmp_path, monkeypatch, name, src, dst, shape, bits, warps, twin,
                                            stock_count, releases):
    import triton
    release = ".".join(triton.__version__.split(".")[:2])
    if release not in releases:
        pytest.skip(f"the twin is Triton {'/'.join(releases)}'s lowering")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    script = load_script()
    entry = {"case": name, "src": src, "dst": dst, "shape": shape, "bits": bits, "num_warps": warps, "twin": twin}
    tool = script.cuobjdump_path()
    stock = script.compile_job((0, entry, "stock", "chain", tool))[3]
    ours = script.compile_job((0, entry, "ours", "chain", tool))[3]
    assert "error" not in stock and "error" not in ours
    assert ours["mix"] == stock["mix"]      # the same shuffles and shared accesses: a twin
    if release == "3.6":
        assert stock["total"] == stock_count
    assert ours["total"] == stock["total"]
    assert ours["ops"].get("SEL", 0) == stock["ops"].get("SEL", 0)


SASS = """
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   MOV R1, 0x1 ;
        /*0020*/                   SHFL.IDX PT, R2, R0, R1, 0x1f ;
        /*0030*/                   SEL R3, R2, R0, P0 ;
        /*0040*/                   SHFL.IDX PT, R4, R3, R1, 0x1f ;
        /*0050*/                   NOP ;
        /*0060*/               @P1 BRA 0x20 ;
        /*0070*/                   EXIT ;
"""
PTX = """
$L__BB0_1:
	shfl.sync.idx.b32 	%r2, %r1, %r3, 31, -1;
	selp.b32 	%r4, %r2, %r1, %p1;
	@%p2 bra 	$L__BB0_1;
"""


def test_loop_counts_divide_by_the_unroll_factor():
    """The SASS loop (0x20..0x60) holds two shuffles where the PTX loop holds one: unrolled twice;
    per iteration 1 SHFL, 0.5 SEL, 0.5 BRA (the NOP is padding)."""
    counts = load_script().loop_counts(PTX, SASS)
    assert counts["unroll"] == 2
    assert counts["ops"] == {"BRA": 0.5, "SEL": 0.5, "SHFL": 1.0}
    assert counts["total"] == 2.0
