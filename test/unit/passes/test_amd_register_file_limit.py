"""On AMD, before triton 3.9, a conversion whose island would hold more elements a thread than a
lane has registers is left to Triton (``island_limits.register_file_problem``): past the register
file the kernel spills whoever lowers it, and those releases' AMDGPU back end took 5x stock's
compile time on our islands' spills (docs/compile-time.md, the bound on every island; the
structured fuzz's gfx942 case 12).  Structural, no timing: which plans the limit hands back, on which releases."""

from __future__ import annotations

from linear_layouts.lowering.choosing.island_limits import register_file_problem
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import target_named
from linear_layouts.passes.ir.layouts import tensor_layout_of
from linear_layouts.passes.lower_conversions import lower_text
from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

GFX942 = target_named("gfx942")


# A slice whose every lane holds the same registers (the replicated slice, for 64 lanes), 8 warps:
# a thread holds an eighth of the tensor (8,192 elements: 1,024 registers; 4,096: 512).
SLICE = ("#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [8, 8], threadsPerWarp = [1, 64], "
         "warpsPerCTA = [8, 1], order = [1, 0]}>}>")


DESTINATION = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [64], warpsPerCTA = [8], order = [0]}>"


def _plan(shape):
    plan = plan_conversion(tensor_layout_of(SLICE, shape), tensor_layout_of(DESTINATION, shape), 16, GFX942)
    assert plan, plan.reason
    return plan


def test_a_side_past_the_register_file_is_handed_back_before_3_9():
    plan = _plan((8192,))
    assert plan.src.in_dims["register"] == 1024 > GFX942.registers_per_thread
    problem = register_file_problem(plan, GFX942, "3.6.0")
    assert problem.startswith("1024 elements per thread, more than gfx942's 512 registers a lane")
    assert "AMD_REGISTER_FILE_LIMIT_BEFORE" in problem
    assert register_file_problem(plan, GFX942, "3.8.0")
    assert register_file_problem(plan, GFX942, "3.9.0") == ""       # measured 1.07x stock there
    assert register_file_problem(plan, target_named("sm_90"), "3.6.0") == ""   # AMD only


def test_a_side_within_the_register_file_stays_ours():
    plan = _plan((4096,))
    assert plan.src.in_dims["register"] == 512 == GFX942.registers_per_thread
    assert register_file_problem(plan, GFX942, "3.6.0") == ""


def test_the_pass_leaves_it_to_triton_with_the_gate_off(monkeypatch):
    """With the stock gate off (every plan ours), the limit still holds before 3.9."""
    from linear_layouts.passes import lower_conversions

    text = single_convert_ttgir((8192,), "bf16", SLICE, DESTINATION, 8, "gfx942", name="k")
    for release, lowered in (("3.6.0", False), ("3.9.0", True)):
        monkeypatch.setattr(lower_conversions, "triton_version", lambda release=release: release)
        (outcome,) = lower_text(text, filename="slice", stock_gate=False)[1]
        assert outcome.lowered == lowered, release
        if not lowered:
            assert "AMD_REGISTER_FILE_LIMIT_BEFORE" in outcome.reason
