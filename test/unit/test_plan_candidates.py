"""The planner's ``rank`` and the pass option ``candidate``: every verified candidate can be
emitted on its own (benchmarks/plan_choice.py times them against each other and stock Triton)."""

import subprocess
import sys

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.plan import Unsupported

SRC = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
DST = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"

MODULE = f"""#src = {SRC}
#dst = {DST}
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func @f(%x: tensor<64xi32, #src>) -> tensor<64xi32, #dst> {{
    %y = ttg.convert_layout %x : tensor<64xi32, #src> -> tensor<64xi32, #dst>
    tt.return %y : tensor<64xi32, #dst>
  }}
}}
"""


def _layouts():
    return to_linear_layout(SRC, (64,)), to_linear_layout(DST, (64,))


def test_rank_walks_the_verified_candidates_in_cost_order():
    src, dst = _layouts()
    methods = []
    for rank in range(8):
        plan = plan_conversion(src, dst, 32, "sm_90", rank=rank)
        if not plan:
            assert plan.reason == f"candidate {rank} asked for, and only {rank} plans passed the verifier"
            break
        methods.append(plan.method)
    # Two 32-bit registers <-> lanes in one warp: the shuffle plan (2 shfl) is the cheapest,
    # then shared memory with each store/load width pair the target offers.
    assert methods == ["shuffle", "shared", "shared", "shared"]


def test_negative_rank_is_refused():
    src, dst = _layouts()
    try:
        plan_conversion(src, dst, 32, "sm_90", rank=-1)
    except ValueError as e:
        assert "rank -1" in str(e)
    else:
        raise AssertionError("rank -1 accepted")


def _ll_opt(pipeline, tmp_path):
    path = tmp_path / "cvt.ttgir"
    path.write_text(MODULE)
    return subprocess.run([sys.executable, "-m", "linear_layouts.tools.ll_opt", "-p", pipeline, str(path)],
                          capture_output=True, text=True)


def test_candidate_option_emits_that_candidate(tmp_path):
    first = _ll_opt("ll-lower-conversions", tmp_path)
    second = _ll_opt("ll-lower-conversions{candidate=1}", tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "shfl.sync" in first.stdout and "st.shared" not in first.stdout
    assert "st.shared" in second.stdout and "shfl.sync" not in second.stdout


def test_candidate_beyond_the_last_leaves_the_conversion_to_triton(tmp_path):
    result = _ll_opt("ll-lower-conversions{candidate=9 remarks=true}", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ttg.convert_layout" in result.stdout
    assert "candidate 9 asked for, and only 4 plans passed the verifier" in result.stdout + result.stderr


def test_negative_candidate_option_is_a_usage_error(tmp_path):
    result = _ll_opt("ll-lower-conversions{candidate=-1}", tmp_path)
    assert result.returncode == 1
    assert "candidate=-1: expected 0 or more" in result.stderr
    assert "Traceback" not in result.stderr
