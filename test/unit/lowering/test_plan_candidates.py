"""The planner's ``rank`` and the pass option ``candidate``: every verified candidate can be
emitted on its own (benchmarks/plan_choice.py times them against each other and stock Triton)."""

import re
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
    # measured=false stock_gate=false: the cost model's own pick (a recorded measurement, and the
    # choice model under triton 3.6, send this conversion
    # to stock Triton under triton 3.6, see test_measured_choices below).
    first = _ll_opt("ll-lower-conversions{measured=false stock_gate=false}", tmp_path)
    second = _ll_opt("ll-lower-conversions{candidate=1}", tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "shfl.sync" in first.stdout and "llvm.store " not in first.stdout
    assert "llvm.store " in second.stdout and "shfl.sync" not in second.stdout


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


# --------------------------------------------------------------------------- measured choices

TRANSPOSE_1WARP = """#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @f(%x: tensor<32x32xi16, #blocked1>) -> tensor<32x32xi16, #blocked> {
    %y = ttg.convert_layout %x : tensor<32x32xi16, #blocked1> -> tensor<32x32xi16, #blocked>
    tt.return %y : tensor<32x32xi16, #blocked>
  }
}
"""


def _lower(text, **options):
    from linear_layouts.passes.lower_conversions import lower_text
    return lower_text(text, **options)


# An island's ldmatrix.x4.trans / stmatrix.x4.trans (the NVVM ops; emit_nvidia._matrix_attributes)
LDMATRIX_X4_TRANS = r"nvvm\.ldmatrix \S+ \{[^}]*layout = #nvvm\.mma_layout<col>, num = 4 : i32"
STMATRIX_X4_TRANS = r"nvvm\.stmatrix [^{]+\{[^}]*layout = #nvvm\.mma_layout<col>[^}]*\} : !llvm\.ptr<3>, i32, i32, i32, i32(?!,)"


def test_a_measured_candidate_replaces_the_cost_models_pick():
    # Measured on an H100 (benchmarks/results/plan_choice_measured_pruned.json): for this 1-warp
    # transpose of 16-bit elements the model's pick (st.shared.v4 + ldmatrix.trans, the same code
    # as stock Triton's) took 0.202 ms, candidate 1 (stmatrix.trans + ld.shared.v4) 0.122 ms.
    text, outcomes = _lower(TRANSPOSE_1WARP, target="sm_90")
    assert outcomes[0].lowered
    assert re.search(STMATRIX_X4_TRANS, text) and "ldmatrix" not in text
    assert "measured on NVIDIA H100 80GB HBM3 with triton 3.6.0: candidate 1 took 0.1220 ms" in outcomes[0].remark()
    model, outcomes = _lower(TRANSPOSE_1WARP, target="sm_90", measured=False)
    assert re.search(LDMATRIX_X4_TRANS, model) and "stmatrix" not in model
    assert "measured" not in outcomes[0].remark()


def test_stock_is_chosen_where_it_was_measured_faster_with_the_same_release():
    from linear_layouts.passes.ir.bindings import triton_version
    # the same conversion of 8-bit elements: on the H100 the model's pick (shared memory) took
    # 0.0219 ms, stock's shuffles 0.0135 ms (benchmarks/results/plan_choice_measured_pruned.json)
    text, outcomes = _lower(MODULE.replace("xi32", "xi8"), target="sm_90")
    if triton_version().startswith("3.6."):
        assert not outcomes[0].lowered and "ttg.convert_layout" in text
        assert "stock Triton's lowering took 0.0135 ms where the cost model's pick took 0.0219 ms" in outcomes[0].remark()
    else:  # stock's lowering was measured with 3.6 only: elsewhere the model decides
        assert outcomes[0].lowered and "llvm.store " in text


def test_a_stale_measurement_is_ignored(tmp_path, monkeypatch):
    """An entry whose recorded instruction mix is not what the planner builds now describes an
    older planner: it is not followed."""
    import json
    from linear_layouts.lowering.choosing import measured_choices

    table = json.load(open(measured_choices.TABLE))
    for entry in table["choices"].values():
        entry["model_pick_mix"] = {"st.shared.b8": 1}
    path = tmp_path / "choices.json"
    path.write_text(json.dumps(table))
    monkeypatch.setattr(measured_choices, "TABLE", str(path))
    text, outcomes = _lower(TRANSPOSE_1WARP, target="sm_90")
    assert re.search(LDMATRIX_X4_TRANS, text) and "measured" not in outcomes[0].remark()


def test_every_recorded_measurement_still_describes_the_planners_plans():
    """Each entry of lowering/choosing/measured_choices.json names the plans it measured by their
    instruction mix; if the planner now builds other plans the entry is silently ignored, so a
    planner change must come with a re-measurement (benchmarks/plan_choice.py --write-choices)."""
    import json
    from linear_layouts.lowering.choosing import measured_choices
    from linear_layouts.lowering.choosing.lowering_choice import instruction_mix as _instruction_mix

    table = json.load(open(measured_choices.TABLE))
    from linear_layouts.dialect.conventions import TritonConventions
    release = TritonConventions(tuple(int(x) for x in table["triton"].split(".")[:2]))
    stale = []
    for key, entry in table["choices"].items():
        src = to_linear_layout(entry["src"], tuple(entry["shape"]), conventions=release)
        dst = to_linear_layout(entry["dst"], tuple(entry["shape"]), conventions=release)
        assert measured_choices.conversion_key(src, dst, entry["bits"], "sm_90") == key, entry["case"]
        pick = plan_conversion(src, dst, entry["bits"], "sm_90")
        if _instruction_mix(pick) != entry["model_pick_mix"]:
            stale.append((entry["case"], "model pick"))
        if entry["fastest"] != "stock":
            fastest = plan_conversion(src, dst, entry["bits"], "sm_90", rank=entry["fastest"])
            if _instruction_mix(fastest) != entry["fastest_mix"]:
                stale.append((entry["case"], f"candidate {entry['fastest']}"))
    assert len(table["choices"]) == 72
    assert not stale, f"measurements that no longer match the planner's plans: {stale}"
