"""Known answers for the conversion planner (docs/verified-facts.md, "Stock Triton's lowering, the
peer we compare with"; paper Appendix C)."""

from __future__ import annotations

import pytest

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.dialect.linear_layout import LinearLayout
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.describe import instruction_counts
from linear_layouts.lowering.instructions import AccessForm, AccessKind, ShuffleMode
from linear_layouts.lowering.plan import SharedAccess, Unsupported
from linear_layouts.lowering.planner import plan_candidates, plan_conversion
from linear_layouts.lowering.verify import verify_plan
from support.known_layouts import COLUMN_PAIRS, ROWS, layout


STORE, LOAD = (AccessKind.STORE, AccessForm.VECTOR), (AccessKind.LOAD, AccessForm.VECTOR)
MATRIX_LOAD = (AccessKind.LOAD, AccessForm.MATRIX)


def instructions(plan) -> set[tuple[AccessKind, AccessForm]]:
    return {(op.kind, op.form) for op in plan.shared.ops if isinstance(op, SharedAccess)}


def offsets_of(plan) -> dict[int, int]:
    """element (flattened m + 16 n) -> scratch offset, from the plan's swizzle."""
    cols = plan.shared.smem_layout.flat_columns
    n_offset = plan.shared.scratch_elements.bit_length() - 1
    result = {}
    for o in range(1 << n_offset):
        e = 0
        for i in range(n_offset):
            if o >> i & 1:
                e ^= cols[i]
        result[e] = o
    return result


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_appendix_c_plain_swizzle_is_32m_plus_n_xor_2m(target):
    plans, scope = plan_candidates(ROWS, COLUMN_PAIRS, 32, target)
    assert scope == "lane"
    plain = [p for p in plans if p.shared is not None and instructions(p) == {STORE, LOAD}]
    assert len(plain) == 1
    plan = plain[0]
    assert verify_plan(plan).ok
    cost = plan_cost(plan)
    assert cost.bank_conflicts == 0
    assert cost.max_store_bits == cost.max_load_bits == 32  # no common register direction: scalar
    offsets = offsets_of(plan)
    assert all(offsets[m + 16 * n] == 32 * m + (n ^ 2 * m) for m in range(16) for n in range(32))
    assert offsets[3 + 16 * 5] == 99  # the worked example's offset(3, 5)


def test_appendix_c_best_plan_is_vector_stores_and_ldmatrix():
    # Stock Triton turns a fp32 transpose in one warp into st.shared.v4 + ldmatrix.x4.
    plan = plan_conversion(ROWS, COLUMN_PAIRS, 32, "sm_90")
    assert plan and plan.method == "shared"
    assert instructions(plan) == {STORE, MATRIX_LOAD}
    cost = plan_cost(plan)
    assert cost.bank_conflicts == 0
    named = instruction_counts(cost, plan.target)
    assert named["st.shared.b128"] == 4 and named["ldmatrix.x4"] == 4
    assert named["bar.warp.sync"] == 1
    assert cost.scratch_bytes == 16 * 32 * 4


MMA2 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"
MMA3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
BLOCKED_F16 = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
BLOCKED_F32 = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>"


@pytest.mark.parametrize("mma,target", [(MMA2, "sm_80"), (MMA3, "sm_90")])
@pytest.mark.parametrize("blocked,bits", [(BLOCKED_F16, 16), (BLOCKED_F32, 32)])
def test_epilogue_mma_to_blocked_vectorizes_to_128_bits(mma, target, blocked, bits):
    src = to_linear_layout(mma, [128, 64])
    dst = to_linear_layout(blocked, [128, 64])
    plan = plan_conversion(src, dst, bits, target)
    assert plan and plan.scope == "warp" and plan.method == "shared"
    cost = plan_cost(plan)
    assert cost.max_store_bits == 128 and cost.max_load_bits == 128
    assert cost.bank_conflicts == 0
    # rounds keep the scratch buffer below the whole tile
    assert cost.scratch_bytes < 128 * 64 * bits // 8


def test_blocked2_to_blocked1_takes_two_shuffles():
    # 64 elements, one warp: sizePerThread [2] -> [1] (docs/verified-facts.md: stock Triton emits 2 shfl.sync).
    src = layout([[1]], [[2], [4], [8], [16], [32]], out={"dim0": 64})
    dst = layout([[32]], [[1], [2], [4], [8], [16]], out={"dim0": 64})
    plan = plan_conversion(src, dst, 32, "sm_90")
    assert plan and plan.method == "shuffle"
    assert plan_cost(plan).shuffles == 2
    plan = plan_conversion(src, dst, 64, "sm_90")
    assert plan and plan.method == "shuffle" and plan_cost(plan).shuffles == 4  # two halves


def test_register_lane_transposition_ships_with_one_xor_shuffle():
    # (r0 l0): register bit 0 and lane bit 0 swap roles; half of the elements stay put.
    src = layout([[1]], [[2], [4], [8], [16], [32]], out={"dim0": 64})
    dst = layout([[2]], [[1], [4], [8], [16], [32]], out={"dim0": 64})
    plan = plan_conversion(src, dst, 32, "sm_80")
    assert plan and plan.method == "shuffle"
    cost = plan_cost(plan)
    assert cost.shuffles == 1 and instruction_counts(cost, plan.target) == {"shfl.xor": 1, "select": 3}
    assert [r.mode for r in plan.shuffle.rounds] == [ShuffleMode.LOCAL, ShuffleMode.XOR]


def test_sixteen_bit_elements_travel_packed():
    # registers (0, 1) -> pairs stay together: one word per pair
    src = layout([[1], [2]], [[4], [8], [16], [32], [64]], out={"dim0": 128})
    dst = layout([[1], [64]], [[2], [4], [8], [16], [32]], out={"dim0": 128})
    plans, _ = plan_candidates(src, dst, 16, "sm_90")
    plan = min((p for p in plans if p.method == "shuffle"), key=lambda p: plan_cost(p).shuffles)
    assert verify_plan(plan).ok
    assert plan.shuffle.elements_per_word == 2
    assert plan_cost(plan).shuffles == 2


def test_register_permutation_is_a_rename_with_broadcast_copies():
    src = layout([[1], [2]], [[4], [8], [16], [32], [64]], out={"dim0": 128})
    dst = layout([[2], [0], [1]], [[4], [8], [16], [32], [64]], out={"dim0": 128})
    plan = plan_conversion(src, dst, 32, "sm_90")
    assert plan and plan.scope == "register" and plan.method == "rename"
    # dst register j: bit 0 -> element 2, bit 1 -> copy, bit 2 -> element 1
    assert plan.output.sources == (0, 2, 0, 2, 1, 3, 1, 3)
    assert plan_cost(plan).counts == {}


def test_identical_layouts_are_a_noop():
    plan = plan_conversion(ROWS, ROWS, 16, "sm_80")
    assert plan and plan.scope == "none" and plan.method == "noop"


CROSS_CTA_SRC = layout([[1]], [[2], [4], [8], [16], [32]], block=[[64]], out={"dim0": 128})
CROSS_CTA_DST = layout([[64]], [[2], [4], [8], [16], [32]], block=[[1]], out={"dim0": 128})


@pytest.mark.parametrize("target", ["sm_80", "gfx942"])
def test_cross_cta_conversion_is_unsupported_with_a_reason(target):
    src, dst = CROSS_CTA_SRC, CROSS_CTA_DST
    if target == "gfx942":  # wave64
        src = layout([[1]], [[2], [4], [8], [16], [32], [64]], block=[[128]], out={"dim0": 256})
        dst = layout([[128]], [[2], [4], [8], [16], [32], [64]], block=[[1]], out={"dim0": 256})
    plan = plan_conversion(src, dst, 32, target)
    assert isinstance(plan, Unsupported) and not plan
    assert plan.scope == "block" and "CTA" in plan.reason and "distributed shared memory" in plan.reason


def test_cross_cta_conversion_uses_distributed_shared_memory_on_sm90():
    plan = plan_conversion(CROSS_CTA_SRC, CROSS_CTA_DST, 32, "sm_90")
    assert plan and plan.scope == "block" and verify_plan(plan).ok
    cost = plan_cost(plan)
    assert instruction_counts(cost, plan.target) == {"st.shared.b32": 2, "barrier.cluster": 2,
                                                     "ld.shared::cluster.b32": 2}
    remote = [op for op in plan.shared.ops if isinstance(op, SharedAccess) and op.cta is not None]
    assert {op.cta.const for op in remote} == {0, 1}  # register 1 (element + 64) lives in CTA 1


def test_amd_wave64_uses_ds_bpermute_or_lds():
    src = layout([[1]], [[2], [4], [8], [16], [32], [64]], out={"dim0": 128})
    dst = layout([[64]], [[1], [2], [4], [8], [16], [32]], out={"dim0": 128})
    plan = plan_conversion(src, dst, 32, "gfx942")
    assert plan and plan.method == "shuffle"
    assert set(instruction_counts(plan_cost(plan), plan.target)) <= {"ds_bpermute", "select"}
    assert {r.mode for r in plan.shuffle.rounds} <= {ShuffleMode.XOR, ShuffleMode.INDEX}
    plans, _ = plan_candidates(src, dst, 32, "gfx90a")
    shared = [p for p in plans if p.shared is not None]
    assert shared and all(verify_plan(p).ok for p in shared)
    assert instructions(shared[0]) <= {STORE, LOAD}
    named = instruction_counts(plan_cost(shared[0]), shared[0].target)
    assert set(named) <= {"ds_write.b32", "s_barrier", "ds_read.b32"}


@pytest.mark.parametrize("bits", [1, 8, 16, 32, 64, "ptr"])
def test_every_element_width_plans_and_verifies(bits):
    plan = plan_conversion(ROWS, COLUMN_PAIRS, bits, "sm_90")
    assert plan and verify_plan(plan).ok


def test_layouts_must_match_the_targets_warp_size():
    plan = plan_conversion(ROWS, COLUMN_PAIRS, 32, "gfx942")
    assert isinstance(plan, Unsupported) and "32 lanes" in plan.reason and "64" in plan.reason
