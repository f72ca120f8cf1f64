"""Stock Triton's lowering as a candidate: ll-lower-conversions leaves a convert to
Triton where the choice model (lowering/choosing/fitted_model.py) cannot show a gain, under the Triton release
the model was fitted on, and says so; stock_gate=false keeps our plan."""

import pytest

from linear_layouts.passes import lower_conversions
from linear_layouts.passes.lower_conversions import lower_text


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the gate off (test/unit/conftest.py); these tests are about the gate."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)

# The f16 pair (64x128 f16, sizePerThread [1, 8] -> [1, 4], 4 warps): the planner's pick, a
# shared-memory plan, ran 1.24x stock's 64 shuffles in a dependent chain on an H100.
PAIR = """
#A = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @f(%x: tensor<64x128xf16, #A>) -> tensor<64x128xf16, #B> {
    %y = ttg.convert_layout %x : tensor<64x128xf16, #A> -> tensor<64x128xf16, #B>
    tt.return %y : tensor<64x128xf16, #B>
  }
}
"""


@pytest.fixture
def triton_36(monkeypatch):
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")


def test_left_to_triton_where_the_model_shows_no_gain(triton_36):
    text, outcomes = lower_text(PAIR, measured=False)
    assert "ttg.convert_layout" in text and not outcomes[0].lowered
    remark = outcomes[0].remark()
    assert ("left to Triton: stock Triton's lowering: it moves this lane-scope conversion with 32 warp shuffle(s) "
            "a thread, our pick needs a shared plan (a rule chosen on timings on") in remark


def test_the_gate_also_overrules_a_measured_table_entry(triton_36):
    """The table (measured in the independent harness) sends this pair to candidate 1; the gate,
    fitted to dependent chains, sends the family of that plan to stock."""
    text, outcomes = lower_text(PAIR)
    assert "ttg.convert_layout" in text and not outcomes[0].lowered


def test_stock_gate_false_keeps_our_plan(triton_36):
    text, outcomes = lower_text(PAIR, measured=False, stock_gate=False)
    assert outcomes[0].lowered and "ttg.convert_layout" not in text


def test_dominance_under_a_release_the_model_was_not_fitted_on(monkeypatch):
    """Under 3.9 the measured model does not answer: our shared-memory plan needs shared-memory
    wavefronts where stock only shuffles, so the pair is left to Triton, the remark says why."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.9.0")
    text, outcomes = lower_text(PAIR, measured=False)
    assert not outcomes[0].lowered
    assert "needs at least (32 warp shuffles)" in outcomes[0].remark()
    text, outcomes = lower_text(PAIR, measured=False, stock_gate=False)
    assert outcomes[0].lowered


def test_stock_gate_option_parses():
    from linear_layouts.passes.pipeline import parse_pipeline
    passes = parse_pipeline("ll-lower-conversions{stock_gate=false}")
    assert passes[0].stock_gate is False
