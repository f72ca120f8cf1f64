"""A twin of stock's shared-memory code (lowering/choosing/stock_shared.py) is left to Triton in a
kernel without other islands, and kept as an island in a kernel that has islands of ours
(``lowering_choice.kept_among_islands``), as ll-lower-conversions decides under triton 3.6 on
sm_90 (the release whose lowering the twin test follows)."""

import pytest

from linear_layouts.lowering.instructions import AccessForm
from linear_layouts.lowering.choosing.lowering_choice import (TWIN_AMONG_ISLANDS, LoweringChoice, kept_among_islands,
                                                              ours, stock)
from linear_layouts.passes import lower_conversions
from linear_layouts.passes.lower_conversions import lower_text

HEADER = """
#mma2 = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#b2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma3 = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16, 8]}>
#b4 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
"""
# FLA's chunk_h accumulator (16x16 f32, mma v2 over 2x2 warps) -> blocked: our pick stores and
# loads 64 bits, as stock does: a twin.
TWIN = """    %y = ttg.convert_layout %x : tensor<16x16xf32, #mma2> -> tensor<16x16xf32, #b2>
"""
# mma v3 -> blocked, 64x16 f32: our pick stores with stmatrix, which stock does not use: ours.
GAINS = """    %w = ttg.convert_layout %v : tensor<64x16xf32, #mma3> -> tensor<64x16xf32, #b4>
"""
ALONE = HEADER + """  tt.func public @f(%x: tensor<16x16xf32, #mma2>) -> tensor<16x16xf32, #b2> {
""" + TWIN + """    tt.return %y : tensor<16x16xf32, #b2>
  }
}
"""
TOGETHER = HEADER + """  tt.func public @f(%x: tensor<16x16xf32, #mma2>, %v: tensor<64x16xf32, #mma3>) -> (tensor<16x16xf32, #b2>, tensor<64x16xf32, #b4>) {
""" + TWIN + GAINS + """    tt.return %y, %w : tensor<16x16xf32, #b2>, tensor<64x16xf32, #b4>
  }
}
"""


@pytest.fixture(autouse=True)
def shared_picks_kept(monkeypatch):
    """Shared-memory picks in Triton's rounds kept ours (the study switch ``SHARED_PICKS_KEPT``): under
    triton 3.6 the default sends them to stock (``fitted_model.shared_memory_in_tritons_rounds``),
    and this module's subject is how such islands are built and spliced."""
    monkeypatch.setattr("linear_layouts.lowering.choosing.fitted_model.SHARED_PICKS_KEPT", True)


@pytest.fixture(autouse=True)
def triton_36(monkeypatch):
    """The suite turns the stock gate off (conftest.py); the twin rule is the gate's, under 3.6."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")


def test_a_twin_alone_is_left_to_triton():
    text, (outcome,) = lower_text(ALONE, measured=False)
    assert not outcome.lowered and "ttg.convert_layout" in text
    assert "lowering/choosing/stock_shared.py" in outcome.reason
    assert "kept_among_islands" in outcome.reason


def test_a_twin_beside_an_island_is_an_island_too():
    text, (twin, gains) = lower_text(TOGETHER, measured=False)
    assert gains.lowered and twin.lowered and "ttg.convert_layout" not in text
    assert twin.note_text == TWIN_AMONG_ISLANDS and not gains.note
    assert "stock's own code" in twin.remark()
    assert {op.form for op in twin.plan.shared.ops if hasattr(op, "form")} == {AccessForm.VECTOR}


def test_under_39_no_twin_is_kept_for_its_kernel(monkeypatch):
    """Where the measured model does not answer (3.9) a twin never gains on stock's floor: stock,
    whatever the kernel holds, and never with a twin to keep."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.9.0")
    _, (twin, _) = lower_text(TOGETHER, measured=False)
    assert not twin.lowered and "stock_shared.py" not in twin.reason


def test_kept_among_islands_on_choices():
    class Plan:
        method = "shared"

    twin_plan, island_plan = Plan(), Plan()
    twin = LoweringChoice(reason="a twin", method="shared", twin_plan=twin_plan)
    other_stock = stock("stock shuffles")
    island = ours(island_plan)
    assert kept_among_islands([twin, other_stock]) == [twin, other_stock]          # no island: unchanged
    kept = kept_among_islands([twin, other_stock, island])
    assert kept[0].plan is twin_plan and kept[0].note == TWIN_AMONG_ISLANDS
    assert kept[1] is other_stock and kept[2] is island
