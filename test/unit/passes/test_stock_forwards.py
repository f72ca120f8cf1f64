"""No-op and register-renaming conversions are left to Triton where stock forwards the values
too (``stock_lowering.stock_moves_nothing``, ``lowering_choice._stock_moves_nothing``): no
instruction either way, and no island to emit, simulate and re-parse.  i1 too (stock's kernel
is ours, instruction for instruction: ``benchmarks/studies/i1_forwarding.py``); with the stock gate off
every one stays ours.  ``benchmarks/studies/stock_dominance.py`` checks the premise
against final code (stock's kernel holds no costly instruction on every such pair)."""

from __future__ import annotations

import pytest

from linear_layouts.lowering.choosing.stock_lowering import stock_moves_nothing
from linear_layouts.lowering.plan import Method, Scope
from linear_layouts.passes.lower_conversions import lower_text
from linear_layouts.tools.fuzz.testcases import single_convert_ttgir
from linear_layouts.tools.fuzz.random_layouts import planned_random_cases

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
# BLOCKED on a 16x32 tensor, written as a linear layout: the same map (a no-op)
SAME_AS_LINEAR = ("#ttg.linear<{register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], "
                  "warp = [[4, 0], [8, 0]], block = []}>")
# BLOCKED with its two register bases swapped: each thread keeps its elements (a renaming)
REGISTERS_SWAPPED = ("#ttg.linear<{register = [[0, 2], [0, 1]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], "
                     "warp = [[4, 0], [8, 0]], block = []}>")
# lanes and registers trade places: data moves between lanes (stock shuffles it)
LANES_TRADED = ("#ttg.linear<{register = [[0, 4], [0, 2]], lane = [[0, 1], [0, 8], [0, 16], [1, 0], [2, 0]], "
                "warp = [[4, 0], [8, 0]], block = []}>")
NOOP_REMARK = ("stock Triton's lowering: the two layouts are one map, and stock forwards the values without an "
               "instruction as our island would (left to it, the compile makes no island)")
RENAME_REMARK = ("stock Triton's lowering: it only renames registers, and stock forwards the values without an "
                 "instruction as our island would (left to it, the compile makes no island)")


@pytest.fixture
def gate_on(monkeypatch):
    """The suite turns the stock gate off (conftest.py); these tests are about the gate."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


def _outcome(element_type: str, dst: str, target: str = "sm_90", **options):
    text = single_convert_ttgir((16, 32), element_type, BLOCKED, dst, 4, target)
    _, outcomes = lower_text(text, **options)
    assert len(outcomes) == 1
    return outcomes[0]


@pytest.mark.parametrize("target", ["sm_90", "sm_80"])   # under 3.6 sm_90 has a measured model too
def test_a_noop_is_left_to_triton_with_the_remark(gate_on, target):
    outcome = _outcome("f16", SAME_AS_LINEAR, target)
    assert not outcome.lowered and outcome.reason == NOOP_REMARK and outcome.method == Method.NOOP


def test_a_register_renaming_is_left_to_triton_with_the_remark(gate_on):
    outcome = _outcome("f32", REGISTERS_SWAPPED)
    assert not outcome.lowered and outcome.reason == RENAME_REMARK and outcome.method == Method.RENAME


def test_i1_noops_are_left_to_triton_too(gate_on):
    outcome = _outcome("i1", SAME_AS_LINEAR)
    assert not outcome.lowered and outcome.reason == NOOP_REMARK and outcome.method == Method.NOOP
    outcome = _outcome("i1", REGISTERS_SWAPPED)
    assert not outcome.lowered and outcome.reason == RENAME_REMARK and outcome.method == Method.RENAME


def test_the_gate_off_keeps_them_ours(gate_on, monkeypatch):
    assert _outcome("f16", SAME_AS_LINEAR, stock_gate=False).lowered
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    assert _outcome("f32", REGISTERS_SWAPPED).lowered


def test_a_conversion_that_moves_data_is_not_forwarded(gate_on):
    outcome = _outcome("f32", LANES_TRADED)
    assert "forwards the values" not in outcome.reason


def test_the_scope_answer_on_the_fixture_layouts():
    from linear_layouts.passes.ir.layouts import tensor_layout_of

    src = tensor_layout_of(BLOCKED, (16, 32))
    assert stock_moves_nothing(src, tensor_layout_of(SAME_AS_LINEAR, (16, 32)), 16) is Scope.NONE
    assert stock_moves_nothing(src, tensor_layout_of(REGISTERS_SWAPPED, (16, 32)), 32) is Scope.REGISTER
    assert stock_moves_nothing(src, tensor_layout_of(LANES_TRADED, (16, 32)), 32) is None
    assert stock_moves_nothing(src, tensor_layout_of(SAME_AS_LINEAR, (16, 32)), 1) is Scope.NONE
    assert stock_moves_nothing(src, tensor_layout_of(LANES_TRADED, (16, 32)), 1) is None


def test_forwarded_exactly_where_the_planner_plans_a_noop_or_a_rename():
    """On random conversions (every target, every element width): ``stock_moves_nothing``
    answers exactly where the planner's only candidate is a no-op or a renaming."""
    seen = {Scope.NONE: 0, Scope.REGISTER: 0, None: 0}
    for src, dst, bits, target, plans, scope in planned_random_cases(seed=911, count=400):
        answer = stock_moves_nothing(src, dst, bits, target)
        forwarding_plan = len(plans) == 1 and plans[0].method in (Method.NOOP, Method.RENAME)
        assert (answer is not None) == forwarding_plan, (src, dst, bits, target.name)
        if answer is not None:
            assert answer == scope
        seen[answer] += 1
    assert seen[Scope.NONE] and seen[Scope.REGISTER] and seen[None]   # every answer was drawn


# The docstring example of ``stock_moves_nothing``: a 1x1 i1 tensor in layouts whose tile is far
# larger, so that, as triton 3.6 builds a blocked layout, every register of a thread holds the one
# element (3.6 compiled stock's kernel with 16 selects, ours with 1:
# benchmarks/results/i1_forwarding_3.6.0.md).  3.9 builds these layouts without the copies.
COPIES_SRC = "#ttg.blocked<{sizePerThread = [8, 2], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [0, 1]}>"
COPIES_DST = "#ttg.blocked<{sizePerThread = [8, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [0, 1]}>"
# A #ttg.linear layout keeps its zero register basis in every release (seed 7301's case 313 of that
# run: a 4x1 i1 tensor, 4 warps; 3.6: stock 2 selects, ours 1).
LINEAR_COPIES = ("#ttg.linear<{register = [[0, 0]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], "
                 "warp = [[1, 0], [2, 0]], block = []}>")


def test_i1_register_copies_stay_ours_where_the_struct_keeps_every_copy():
    from linear_layouts.dialect.conventions import TritonConventions
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.stock_lowering import holds_register_copies

    as_36 = TritonConventions((3, 6))
    src = to_linear_layout(COPIES_SRC, (1, 1), conventions=as_36)
    dst = to_linear_layout(COPIES_DST, (1, 1), conventions=as_36)
    assert holds_register_copies(src) and holds_register_copies(dst)
    assert stock_moves_nothing(src, dst, 1, "sm_80", unique_struct=False) is None        # before 3.9
    assert stock_moves_nothing(src, dst, 1, "sm_80", unique_struct=True) is Scope.NONE   # 3.9 on
    assert stock_moves_nothing(src, dst, 8, "sm_80", unique_struct=False) is Scope.NONE  # only i1
    as_39 = TritonConventions((3, 9))
    assert not holds_register_copies(to_linear_layout(COPIES_SRC, (1, 1), conventions=as_39))
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    plain = tensor_layout_of(BLOCKED, (16, 32))
    assert not holds_register_copies(plain)
    assert stock_moves_nothing(plain, tensor_layout_of(SAME_AS_LINEAR, (16, 32)), 1, unique_struct=False) is Scope.NONE


@pytest.mark.parametrize("release, lowered", [("3.6.0", True), ("3.8.0", True), ("3.9.0", False)])
def test_the_release_decides_i1_copies(gate_on, monkeypatch, release, lowered):
    from linear_layouts.passes import lower_conversions

    monkeypatch.setattr(lower_conversions, "triton_version", lambda: release)
    text = single_convert_ttgir((4, 1), "i1", LINEAR_COPIES, LINEAR_COPIES, 4, "sm_80")
    outcome = lower_text(text)[1][0]
    assert outcome.lowered == lowered
    if not lowered:
        assert outcome.reason == NOOP_REMARK
