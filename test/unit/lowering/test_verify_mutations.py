"""The verifier must reject broken plans: take correct plans, break one thing, expect failure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linear_layouts.dialect.linear_layout import LinearLayout
from linear_layouts.lowering.instructions import AccessForm, BarrierScope, ShuffleMode
from linear_layouts.lowering.plan import Barrier, RegisterRename, SharedAccess, ThreadAffine
from linear_layouts.lowering.planner import plan_candidates, plan_conversion
from linear_layouts.lowering.verify import verify_plan


def layout(register, lane, warp=(), out=None):
    return LinearLayout.from_bases({"register": [list(b) for b in register], "lane": [list(b) for b in lane],
                                    "warp": [list(b) for b in warp], "block": []}, out)


SHUFFLE_SRC = layout([[1]], [[2], [4], [8], [16], [32]], out={"dim0": 64})
SHUFFLE_DST = layout([[32]], [[1], [2], [4], [8], [16]], out={"dim0": 64})
# two warps, data crosses warps: shared memory with a CTA barrier
SHARED_SRC = layout([[1], [2]], [[4], [8], [16], [32], [64]], warp=[[128]], out={"dim0": 256})
SHARED_DST = layout([[128], [64]], [[1], [2], [4], [8], [16]], warp=[[32]], out={"dim0": 256})


@pytest.fixture
def shuffle_plan():
    plan = plan_conversion(SHUFFLE_SRC, SHUFFLE_DST, 32, "sm_90")
    assert plan.method == "shuffle" and verify_plan(plan).ok
    return plan


@pytest.fixture
def shared_plan():
    plan = plan_conversion(SHARED_SRC, SHARED_DST, 32, "sm_90")
    assert plan.method == "shared" and verify_plan(plan).ok
    return plan


def with_rounds(plan, rounds):
    return replace(plan, shuffle=replace(plan.shuffle, rounds=tuple(rounds)))


def with_ops(plan, ops):
    return replace(plan, shared=replace(plan.shared, ops=tuple(ops)))


def test_wrong_source_lane_fails(shuffle_plan):
    rounds = list(shuffle_plan.shuffle.rounds)
    r = rounds[1]
    rounds[1] = replace(r, source_lane=r.source_lane.with_const(r.source_lane.const ^ 1))
    result = verify_plan(with_rounds(shuffle_plan, rounds))
    assert not result.ok and "wrong element" in result.errors[0]


def test_wrong_sent_register_fails(shuffle_plan):
    rounds = list(shuffle_plan.shuffle.rounds)
    rounds[0] = replace(rounds[0], send_word=rounds[0].send_word.with_const(rounds[0].send_word.const ^ 1))
    assert not verify_plan(with_rounds(shuffle_plan, rounds)).ok


def test_source_lane_outside_the_warp_fails(shuffle_plan):
    rounds = list(shuffle_plan.shuffle.rounds)
    rounds[0] = replace(rounds[0], source_lane=rounds[0].source_lane.with_const(32))
    result = verify_plan(with_rounds(shuffle_plan, rounds))
    assert not result.ok and "outside the warp" in result.errors[0]


def test_false_xor_claim_fails(shuffle_plan):
    rounds = [replace(r, mode=ShuffleMode.XOR) for r in shuffle_plan.shuffle.rounds]
    result = verify_plan(with_rounds(shuffle_plan, rounds))
    assert not result.ok and "marked xor" in result.errors[0]


def test_wrong_output_register_fails(shuffle_plan):
    sources = list(shuffle_plan.output.sources)
    sources[0], sources[1] = sources[1], sources[0]
    bad = replace(shuffle_plan, output=RegisterRename("staging", tuple(sources)))
    assert not verify_plan(bad).ok


def test_missing_broadcast_copy_fails():
    dst = layout([[32], [0]], [[1], [2], [4], [8], [16]], out={"dim0": 64})  # register 2, 3 are copies
    plan = plan_conversion(SHUFFLE_SRC, dst, 32, "sm_90")
    assert plan and verify_plan(plan).ok
    sources = list(plan.output.sources)
    assert sources[2:] == sources[:2]
    sources[3] = sources[2]
    assert not verify_plan(replace(plan, output=RegisterRename("staging", tuple(sources)))).ok


def test_missing_barrier_fails(shared_plan):
    ops = [op for op in shared_plan.shared.ops if not isinstance(op, Barrier)]
    result = verify_plan(with_ops(shared_plan, ops))
    assert not result.ok and "barrier" in result.errors[0]


def test_warp_barrier_across_warps_fails(shared_plan):
    ops = [Barrier(BarrierScope.WARP) if isinstance(op, Barrier) else op for op in shared_plan.shared.ops]
    result = verify_plan(with_ops(shared_plan, ops))
    assert not result.ok and "warp barrier" in result.errors[0]


def test_out_of_bounds_address_fails(shared_plan):
    ops = list(shared_plan.shared.ops)
    i = next(i for i, op in enumerate(ops) if isinstance(op, SharedAccess))
    op = ops[i]
    ops[i] = replace(op, address=op.address.with_const(op.address.const + shared_plan.shared.scratch_elements))
    result = verify_plan(with_ops(shared_plan, ops))
    assert not result.ok and "outside" in result.errors[0]


def test_wrong_load_address_fails(shared_plan):
    ops = list(shared_plan.shared.ops)
    i = max(i for i, op in enumerate(ops) if isinstance(op, SharedAccess) and not op.is_store)
    op = ops[i]
    ops[i] = replace(op, address=op.address.with_const(op.address.const ^ len(op.registers)))
    assert not verify_plan(with_ops(shared_plan, ops)).ok


def test_misaligned_vector_fails(shared_plan):
    ops = list(shared_plan.shared.ops)
    i = next(i for i, op in enumerate(ops) if isinstance(op, SharedAccess) and len(op.registers) > 1)
    op = ops[i]
    ops[i] = replace(op, address=op.address.with_const(op.address.const + 1))
    result = verify_plan(with_ops(shared_plan, ops))
    assert not result.ok and "aligned" in result.errors[0]


def test_store_after_load_without_barrier_fails():
    # a plan with rounds: dropping the barrier between rounds overwrites words still being read
    src = layout([[1], [2], [256]], [[4], [8], [16], [32], [64]], warp=[[128]], out={"dim0": 512})
    dst = layout([[128], [64], [256]], [[1], [2], [4], [8], [16]], warp=[[32]], out={"dim0": 512})
    plans, _ = plan_candidates(src, dst, 32, "sm_90")  # the candidates that run in 2 rounds
    plan = next(p for p in plans if p.shared is not None and p.shared.num_rounds == 2)
    assert verify_plan(plan).ok
    ops = list(plan.shared.ops)
    barriers = [i for i, op in enumerate(ops) if isinstance(op, Barrier)]
    assert len(barriers) == 3
    del ops[barriers[1]]  # the barrier between round 0's loads and round 1's stores
    result = verify_plan(with_ops(plan, ops))
    assert not result.ok and "write-after-read" in result.errors[0]


def test_matrix_instruction_with_wrong_row_address_fails():
    rows = layout([[1, 0], [2, 0], [4, 0], [8, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], out={"dim0": 16, "dim1": 32})
    pairs = layout([[0, 2], [0, 4], [0, 8], [0, 16]], [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], out={"dim0": 16, "dim1": 32})
    plan = plan_conversion(rows, pairs, 32, "sm_90")
    ops = list(plan.shared.ops)
    i = next(i for i, op in enumerate(ops) if isinstance(op, SharedAccess) and op.form is AccessForm.MATRIX)
    op = ops[i]
    lane = list(op.address.lane)
    lane[0], lane[1] = lane[1], lane[0]  # rows 1 and 2 swapped
    ops[i] = replace(op, address=ThreadAffine(op.address.const, tuple(lane), op.address.warp, op.address.block))
    assert not verify_plan(with_ops(plan, ops)).ok


def test_every_candidate_of_the_fixtures_verifies():
    for src, dst in ((SHUFFLE_SRC, SHUFFLE_DST), (SHARED_SRC, SHARED_DST)):
        for bits in (8, 16, 32, 64):
            plans, _ = plan_candidates(src, dst, bits, "sm_90")
            assert plans and all(verify_plan(p).ok for p in plans)


def test_cross_cta_plans_need_cluster_barriers():
    src = LinearLayout.from_bases({"register": [[1]], "lane": [[2], [4], [8], [16], [32]], "warp": [],
                                   "block": [[64]]}, {"dim0": 128})
    dst = LinearLayout.from_bases({"register": [[64]], "lane": [[2], [4], [8], [16], [32]], "warp": [],
                                   "block": [[1]]}, {"dim0": 128})
    plan = plan_conversion(src, dst, 32, "sm_90")
    assert plan and verify_plan(plan).ok
    ops = list(plan.shared.ops)
    assert isinstance(ops[-1], Barrier) and ops[-1].scope is BarrierScope.CLUSTER
    result = verify_plan(with_ops(plan, ops[:-1]))
    assert not result.ok and "cluster barrier" in result.errors[0]
    cta_only = [Barrier(BarrierScope.CTA) if isinstance(op, Barrier) else op for op in ops]
    result = verify_plan(with_ops(plan, cta_only))
    assert not result.ok and "not cluster-wide" in result.errors[0]
    # reading the wrong CTA
    i = next(i for i, op in enumerate(ops) if isinstance(op, SharedAccess) and op.cta is not None)
    ops[i] = replace(ops[i], cta=ops[i].cta.with_const(ops[i].cta.const ^ 1))
    assert not verify_plan(with_ops(plan, ops)).ok
