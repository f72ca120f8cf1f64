"""The reason a conversion is left to Triton, as the report shows it beside stock's final code,
never compares ours with a floor of stock's instructions that says nothing.

examples/gpu_kernels.py's ``column_sum_kernel`` (examples/report_tour.py) ends with a conversion
whose source every warp already holds (a reduction's result, broadcast over the warps).  Stock's
floor there is zero in every kind (lowering/choosing/stock_bounds.py, case 3), yet stock's final
code under triton 3.9 has ``bar.sync=2 st.shared=1``: the remark used to read "our plan needs more
shuffles (2 > 0) ... stock at least: -", a comparison stock's own code contradicts."""

import pytest

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.stock_bounds import Costly, dominance
from linear_layouts.lowering.planner import plan_conversion

RELEASE = TritonConventions((3, 9))
PARENT = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], "
          "order = [1, 0]}>")
COLUMN_SUM_SOURCE = f"#ttg.slice<{{dim = 0, parent = {PARENT}}}>"
COLUMN_SUM_DESTINATION = ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], "
                          "order = [0]}>")


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the choice off (test/unit/conftest.py); the reason is the choice's."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


def column_sum_plan():
    src = to_linear_layout(COLUMN_SUM_SOURCE, (64,), conventions=RELEASE)
    dst = to_linear_layout(COLUMN_SUM_DESTINATION, (64,), conventions=RELEASE)
    return plan_conversion(src, dst, 32, "sm_90")


def test_a_floor_of_zero_is_not_compared_with():
    plan = column_sum_plan()
    reason = fitted_model.choose_dominant(plan).reason
    assert "stock at least: -" not in reason and "> 0)" not in reason, reason
    assert "no floor of its instructions is known" in reason
    verdict = dominance(plan)
    assert verdict.stock == Costly() and verdict.floor_says_nothing
    assert plan_is_named(reason, verdict.ours)


def plan_is_named(reason: str, ours: Costly) -> bool:
    """Ours is still said in full (``shuffles=2 selects=3``): what the plan would have cost."""
    return f"({ours.text()})" in reason


def test_a_known_floor_is_still_compared_with():
    """A conversion across warps through shared memory: stock's floor is real, and the reason
    names what ours needs more of and stock's floor, as before."""
    blocked = "#ttg.blocked<{{sizePerThread = [1, {v}], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}}>"
    src = to_linear_layout(blocked.format(v=8), (64, 128), conventions=RELEASE)
    dst = to_linear_layout(blocked.format(v=4), (64, 128), conventions=RELEASE)
    plan = plan_conversion(src, dst, 16, "sm_80")
    verdict = dominance(plan)
    assert not verdict.holds
    assert f"stock at least: {verdict.stock.text()}" in verdict.reason()
