"""Warp-shuffle planning (``lowering.shuffle``): round structure, packing, broadcast."""

from __future__ import annotations

import pytest

from linear_layouts.dialect.linear_layout import LinearLayout
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.planner import plan_candidates, plan_conversion
from linear_layouts.lowering.instructions import ShuffleMode
from linear_layouts.lowering.shuffle import LaneConversion, packing_pairs, plan_shuffles, select_count
from linear_layouts.lowering.verify import verify_plan


def layout(register, lane, warp=(), out=None):
    return LinearLayout.from_bases({"register": [list(b) for b in register], "lane": [list(b) for b in lane],
                                    "warp": [list(b) for b in warp], "block": []}, out)


def test_receiver_driven_rounds_for_blocked2_to_blocked1():
    # C: dst reg0 -> src lane 16; dst lane0 -> src reg0; dst lanes 1-4 -> src lanes 0-3.
    conv = LaneConversion(1, 1, 5, reg_to_reg=(0,), reg_to_lane=(16,), lane_to_reg=(1, 0, 0, 0, 0),
                          lane_to_lane=(0, 1, 2, 4, 8))
    found = plan_shuffles(conv, [(0,), (1,)], [(0,), (1,)], 1, 1, 32)
    assert found is not None
    plan, cost = found
    assert cost.shuffles == 2
    # lane bit 0 is a "missing lane row": N must send it to the register bit
    assert plan.receive_round.lane == (1, 0, 0, 0, 0)
    assert [r.mode for r in plan.rounds] == [ShuffleMode.INDEX, ShuffleMode.INDEX]


def test_lane_permutation_only_is_one_xor_or_idx_shuffle_per_register():
    # lanes bits 0 and 1 swap roles; registers untouched: every register moves once
    src = layout([[1], [2]], [[4], [8], [16], [32], [64]], out={"dim0": 128})
    dst = layout([[1], [2]], [[8], [4], [16], [32], [64]], out={"dim0": 128})
    plan = plan_conversion(src, dst, 32, "sm_90")
    assert plan.method == "shuffle"
    cost = plan_cost(plan)
    assert cost.shuffles == 4 and cost.selects == 0


def test_packing_pairs_need_a_clean_register_image():
    conv = LaneConversion(2, 2, 5, reg_to_reg=(1, 0), reg_to_lane=(0, 16), lane_to_reg=(0, 2, 0, 0, 0),
                          lane_to_lane=(1, 0, 2, 4, 8))
    # dst reg 0 -> src reg bit 0 cleanly; src reg bit 1 is touched by a lane -> not packable
    assert packing_pairs(conv, 2) == [(0, 0)]


@pytest.mark.parametrize("bits,per_word", [(8, 4), (16, 2), (32, 1), (1, 4)])
def test_narrow_elements_pack_into_words(bits, per_word):
    src = layout([[1], [2], [4]], [[8], [16], [32], [64], [128]], out={"dim0": 256})
    dst = layout([[1], [2], [128]], [[4], [8], [16], [32], [64]], out={"dim0": 256})
    plans, scope = plan_candidates(src, dst, bits, "sm_80")
    shuffles = [p for p in plans if p.method == "shuffle"]
    assert scope == "lane" and shuffles and all(verify_plan(p).ok for p in shuffles)
    best = min(shuffles, key=lambda p: plan_cost(p).shuffles)
    assert best.shuffle.elements_per_word == per_word
    assert plan_cost(best).shuffles == 8 // per_word  # 8 registers of 32-bit words otherwise


def test_destination_lane_broadcast():
    # dst lane 4 is a copy (zero basis): lanes l and l^16 want the same elements
    src = layout([[1]], [[2], [4], [8], [16], [32]], out={"dim0": 64})
    dst = layout([[16], [32]], [[1], [2], [4], [8], [0]], out={"dim0": 64})
    plan = plan_conversion(src, dst, 32, "sm_90")
    assert plan and plan.scope == "lane" and verify_plan(plan).ok


def test_source_lane_broadcast():
    src = layout([[1], [32]], [[2], [4], [8], [16], [0]], out={"dim0": 64})
    dst = layout([[32], [1]], [[2], [4], [8], [0], [16]], out={"dim0": 64})
    plan = plan_conversion(src, dst, 16, "sm_90")
    assert plan and verify_plan(plan).ok


def test_select_count_takes_the_cheaper_emission():
    assert select_count(3, 8, 8, 0, 8) == 24      # butterflies beat 7 * 8 chained selects
    assert select_count(1, 2, 2, 1, 2) == 4
    assert select_count(0, 4, 4, 0, 4) == 0


def test_source_broadcast_over_warps_shuffles_inside_each_warp():
    # The source: every one of 2 warps holds all 64 elements.  The destination splits the
    # elements over warps: warp 1 wants elements 32..63.  C sends dst warp 0 to src lane 4,
    # a warp-scope conversion; but each warp has its own copy, so it is warp-local.
    src = layout([[1]], [[2], [4], [8], [16], [32]], warp=[[0]], out={"dim0": 64})
    dst = layout([], [[1], [2], [4], [8], [16]], warp=[[32]], out={"dim0": 64})
    plans, scope = plan_candidates(src, dst, 32, "sm_90")
    assert scope == "warp"
    shuffles = [p for p in plans if p.method == "shuffle"]
    assert shuffles and all(verify_plan(p).ok for p in shuffles)
    best = plan_conversion(src, dst, 32, "sm_90")
    # lanes 0 and 1 both read source lane 0 (registers 0 and 1): two rounds, one of them into a
    # phantom word (``with_phantom_registers``)
    assert best.method == "shuffle" and plan_cost(best).shuffles == 2
    assert all(r.source_lane.warp == (16,) for r in best.shuffle.rounds)  # warp 1 reads lanes 16..31
