"""mode="legacy": Triton before linear layouts (``lowering.legacy``), as a benchmark baseline.

* a zoo of random conversions (the encoding fuzz of ``test_plan_encodings``): every legacy plan
  passes the exhaustive verifier, and none uses shuffles, ldmatrix/stmatrix or warp barriers;
* known answers: the vector widths and the row padding that legacy ``getScratchConfigForCvt``
  chose, and the scratch size that follows;
* no-ops only for identical attributes; equivalent but different attributes go through shared
  memory; register-only conversions stay renames;
* the pass option ``ll-lower-conversions{mode=legacy}``.

The compile tests (PTX / AMDGCN) are in ``test_legacy_compile.py``.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.describe import cost_text
from linear_layouts.lowering.legacy import (plan_legacy_conversion, plan_legacy_local_load,
                                            plan_legacy_local_store)
from linear_layouts.lowering.instructions import AccessForm, AccessKind, BarrierScope
from linear_layouts.lowering.local_memory import plan_local_load, plan_local_store
from linear_layouts.lowering.plan import Barrier, Unsupported
from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.verify import verify_plan
from linear_layouts.tools.fuzz.random_layouts import layout_of, random_encoding_case

ZOO_CASES = 300


def blocked(spt, tpw, wpc, order):
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")


MMA_V2 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"


def legacy(a: str, b: str, shape, bits=16, target="sm_90"):
    src, dst = to_linear_layout(a, list(shape)), to_linear_layout(b, list(shape))
    return plan_legacy_conversion(src, dst, bits, target, (a, b))


def test_zoo_of_conversions_passes_the_verifier():
    rng = random.Random(7)
    methods: Counter = Counter()
    done = 0
    while done < ZOO_CASES:
        a, b, shape, bits, target = random_encoding_case(rng)
        src, dst = layout_of(a, shape), layout_of(b, shape)
        if src is None or dst is None:
            continue
        done += 1
        plan = plan_legacy_conversion(src, dst, bits, target, (a, b))
        if isinstance(plan, Unsupported):
            assert plan.scope == "block", f"{a} -> {b} {shape} {bits} {target.name}: {plan.reason}"
            methods["unsupported-block"] += 1
            continue
        assert verify_plan(plan).ok
        methods[plan.method] += 1
        assert plan.shuffle is None
        if plan.shared is not None:
            kinds = {op.scope if isinstance(op, Barrier) else (op.kind, op.form) for op in plan.shared.ops}
            assert kinds <= {(AccessKind.STORE, AccessForm.VECTOR), (AccessKind.LOAD, AccessForm.VECTOR),
                             BarrierScope.CTA}, kinds
            assert plan.shared.num_rounds == 1
            plan_cost(plan)  # the cost model understands padded addresses
    assert methods["shared"] > ZOO_CASES // 2 and methods["noop"] > 0


def test_padding_worked_example_same_fastest_dim():
    """32x64 f16, both orders [1, 0]: inVec 8, outVec 4, rows of 64 padded by 8 (the module
    docstring's example): element (m, n) at 72 m + n."""
    src = blocked([1, 8], [4, 8], [4, 1], [1, 0])
    dst = blocked([1, 4], [2, 16], [4, 1], [1, 0])
    plan = legacy(src, dst, (32, 64))
    sh = plan.shared
    assert (sh.store_vector, sh.load_vector) == (8, 4)
    assert sh.scratch_elements == 32 * (64 + 8) and sh.scratch_bytes == 32 * 72 * 2
    stores = [op for op in sh.ops if not isinstance(op, Barrier) and op.is_store]
    assert {(op.address.pad_row_log2, op.address.pad_elements) for op in stores} == {(6, 8)}
    # lane 8 of warp 0 holds row 1 (threadsPerWarp [4, 8]): address 72, not 64
    assert stores[0].address.evaluate(8) == 72 + stores[0].address.const
    assert [op.scope for op in sh.ops if isinstance(op, Barrier)] == [BarrierScope.CTA]


def test_padding_when_fastest_dims_differ():
    """Orders [1, 0] -> [0, 1]: legacy vectorised only along the last dim, so inVec = outVec = 1;
    the destination's fastest dim (dim0, 32 long) is padded by 1."""
    plan = legacy(blocked([1, 4], [8, 4], [4, 1], [1, 0]), blocked([4, 1], [4, 8], [1, 4], [0, 1]), (32, 64))
    sh = plan.shared
    assert (sh.store_vector, sh.load_vector) == (1, 1)
    assert sh.scratch_elements == 64 * (32 + 1)
    address = sh.ops[0].address
    assert (address.pad_row_log2, address.pad_elements) == (5, 1)


def test_mma_to_blocked_keeps_the_destination_vector():
    """From an mma layout to blocked, legacy kept outVec = the destination's contiguity even
    across a transposition; inVec follows the rule (2 along dim1 here)."""
    plan = legacy(MMA_V2, blocked([1, 8], [4, 8], [4, 1], [1, 0]), (64, 64))
    assert (plan.shared.store_vector, plan.shared.load_vector) == (2, 8)
    assert plan.shared.scratch_elements == 64 * (64 + 8)
    transposed = legacy(MMA_V2, blocked([8, 1], [8, 4], [1, 4], [0, 1]), (64, 64))
    assert (transposed.shared.store_vector, transposed.shared.load_vector) == (1, 8)
    assert transposed.shared.scratch_elements == 64 * (64 + 8)


def test_non_blocked_destination_pads_the_last_dim():
    """A destination that is not blocked pads the last dim (dim1) whatever its order."""
    plan = legacy(blocked([4, 1], [8, 4], [1, 4], [0, 1]), MMA_V2, (64, 64))
    address = plan.shared.ops[0].address
    # mma order [1, 0]: dim1 fastest; pad = max(inVec 1, outVec 2) = 2
    assert (address.pad_row_log2, address.pad_elements) == (6, 2)
    assert plan.shared.scratch_elements == 64 * 66


def test_rank_one_is_not_padded():
    plan = legacy(blocked([1], [32], [4], [0]), blocked([4], [32], [4], [0]), (512,), bits=32)
    assert plan.method == "shared" and plan.shared.scratch_elements == 512
    assert all(op.address.pad_elements == 0 for op in plan.shared.ops if not isinstance(op, Barrier))


def linear_text(layout, register=None) -> str:
    """``#ttg.linear`` text of a LinearLayout (``register``: other register bases)."""
    bases = {d: [list(b) for b in layout.bases[d]] for d in ("register", "lane", "warp")}
    if register is not None:
        bases["register"] = register
    return (f"#ttg.linear<{{register = {bases['register']}, lane = {bases['lane']}, warp = {bases['warp']}, "
            "block = []}>")


def test_noop_only_for_identical_attributes():
    a = blocked([1, 4], [8, 4], [4, 1], [1, 0])
    assert legacy(a, a, (32, 32)).method == "noop"
    # the same layout written as #ttg.linear: equivalent, but legacy Triton went through memory
    plan = legacy(a, linear_text(to_linear_layout(a, [32, 32])), (32, 32))
    assert plan.scope == "none" and plan.method == "shared" and verify_plan(plan).ok


def test_register_only_conversion_stays_a_rename():
    a = blocked([2, 4], [8, 4], [4, 1], [1, 0])
    layout = to_linear_layout(a, [64, 16])
    reversed_registers = [list(b) for b in reversed(layout.bases["register"])]
    plan = legacy(a, linear_text(layout, reversed_registers), (64, 16))
    assert plan.scope == "register" and plan.method == "rename" and plan.shared is None


def test_lane_scope_conversion_uses_shared_memory_and_a_cta_barrier():
    plan = legacy(blocked([4], [32], [1], [0]), blocked([1], [32], [1], [0]), (128,), bits=8)
    assert plan.scope == "lane" and plan.method == "shared"
    assert [op.scope for op in plan.shared.ops if isinstance(op, Barrier)] == [BarrierScope.CTA]
    amd = legacy(blocked([4], [64], [1], [0]), blocked([1], [64], [1], [0]), (256,), bits=8, target="gfx942")
    assert {(op.kind, op.form) for op in amd.shared.ops if not isinstance(op, Barrier)} == \
        {(AccessKind.STORE, AccessForm.VECTOR), (AccessKind.LOAD, AccessForm.VECTOR)}


def test_pass_option_mode_legacy():
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir
    from linear_layouts.passes.pipeline import PipelineError, parse_pipeline
    from linear_layouts.passes.lower_conversions import lower_text
    text = single_convert_ttgir((128,), "f16", blocked([4], [32], [1], [0]), blocked([1], [32], [1], [0]), 1)
    _, old = lower_text(text, mode="legacy")
    assert old[0].plan.scope == "lane" and old[0].method == "shared"
    assert "legacy" in old[0].plan.notes[0]
    (lower,) = parse_pipeline("ll-lower-conversions{mode=legacy}")
    assert lower.mode == "legacy"
    with pytest.raises(Exception, match="unknown mode"):
        lower_text(text, mode="ancient")
    with pytest.raises(PipelineError):
        parse_pipeline("ll-lower-conversions{mod=legacy}")


# ------------------------------------------------------------------ local loads and stores

MMA_V2 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


def _local_load(shared, dst, shape, bits=16, target="sm_90"):
    buffer, layout = to_linear_layout(shared, list(shape)), to_linear_layout(dst, list(shape))
    return (plan_local_load(buffer, layout, bits, target_named(target)),
            plan_legacy_local_load(buffer, layout, bits, target_named(target), dst))


def test_legacy_reads_mma_operands_with_ldmatrix_as_triton_always_did():
    a_dst = f"#ttg.dot_op<{{opIdx = 0, parent = {MMA_V2}, kWidth = 2}}>"
    b_dst = f"#ttg.dot_op<{{opIdx = 1, parent = {MMA_V2}, kWidth = 2}}>"
    _, a = _local_load("#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>", a_dst, (64, 32))
    _, b = _local_load(SWIZZLED, b_dst, (32, 64))
    assert a.form is AccessForm.MATRIX and b.form is AccessForm.MATRIX_TRANS
    assert cost_text(a.cost, a.target).startswith("ldmatrix.x4=4,")
    assert a.notes[-1] == "legacy: ldmatrix for an mma operand"


def test_legacy_reads_other_layouts_with_vector_loads_where_linear_uses_ldmatrix():
    dst = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    linear, legacy = _local_load(SWIZZLED, dst, (64, 64))
    assert linear.form is AccessForm.MATRIX
    assert legacy.form is AccessForm.VECTOR and legacy.notes[-1] == "legacy: vector loads"
    assert [len(op.registers) for op in legacy.shared.ops] == [2] * 16    # 32-bit loads, 2 f16 each
    # An FMA dot's operand (parent blocked) was a plain load too.
    fma = "#ttg.dot_op<{opIdx = 0, parent = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], " \
          "warpsPerCTA = [4, 1], order = [1, 0]}>}>"
    assert _local_load(SWIZZLED, fma, (64, 64))[1].form is AccessForm.VECTOR


def test_legacy_stores_never_use_stmatrix():
    acc = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
    nvmma = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
    src, buffer = to_linear_layout(acc, [64, 64]), to_linear_layout(nvmma, [64, 64])
    linear = plan_local_store(src, buffer, 16, target_named("sm_90"))
    legacy = plan_legacy_local_store(src, buffer, 16, target_named("sm_90"))
    assert linear.form is AccessForm.MATRIX and cost_text(linear.cost, linear.target).startswith("stmatrix.x4=4,")
    assert legacy.form is AccessForm.VECTOR and cost_text(legacy.cost, legacy.target).startswith("st.shared.b32=16,")
