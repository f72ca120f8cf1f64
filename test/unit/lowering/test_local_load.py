"""``ttg.local_load`` through linear layouts: plans (lowering.local_memory), the verifier, the
emitted islands (simulated for every thread) and the pass option ``only=...,local_load``.

Known answers come from Triton's own lowering of the same loads (the PTX of stock Triton has the
same ldmatrix / ld.shared counts: benchmarks/results/local_load_gpu.md, 324 of 324 cases)."""

import os
import random
import re
import sys
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.dialect import to_linear_layout  # noqa: E402
from linear_layouts.lowering.describe import cost_text  # noqa: E402
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_local_load_island  # noqa: E402
from linear_layouts.tools.fuzz.testcases import linear_encoding_text, random_linear_bases, single_convert_ttgir  # noqa: E402
from linear_layouts.lowering.instructions import AccessForm  # noqa: E402
from linear_layouts.lowering.sim.sim_local_memory import check_emitted_local_load  # noqa: E402
from linear_layouts.lowering.local_memory import plan_local_load  # noqa: E402
from linear_layouts.lowering.target import target_named  # noqa: E402
from linear_layouts.lowering.verify import verify_local_load  # noqa: E402
from linear_layouts.passes.lower_conversions import lower_text  # noqa: E402
from support.triton_cache import use_private_triton_cache  # noqa: E402

MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
ROW_MAJOR = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


def plan_for(shared, dst, shape, bits, target="sm_80"):
    return plan_local_load(to_linear_layout(shared, list(shape)), to_linear_layout(dst, list(shape)), bits,
                           target_named(target))


def site(element_type="f16"):
    return IslandSite(result="%r", source="%m", src_type="!ttg.memdesc<...>", dst_type="tensor<...>",
                       element_type=element_type, in_loop=True)


# ------------------------------------------------------------------------------- known answers

@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_mma_v2_operands_are_read_with_ldmatrix_like_stock_triton(target):
    a = plan_for("#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>",
                 f"#ttg.dot_op<{{opIdx = 0, parent = {MMA}, kWidth = 2}}>", (64, 32), 16, target)
    b = plan_for("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
                 f"#ttg.dot_op<{{opIdx = 1, parent = {MMA}, kWidth = 2}}>", (32, 64), 16, target)
    assert a.form is AccessForm.MATRIX and b.form is AccessForm.MATRIX_TRANS
    assert cost_text(a.cost, a.target).startswith("ldmatrix.x4=4,")
    assert cost_text(b.cost, b.target).startswith("ldmatrix.trans.x4=4,")
    assert a.cost.load_conflicts == 0 and b.cost.load_conflicts == 0


def test_contiguous_registers_make_one_128_bit_load():
    # The worked example of lowering/local_memory.py: 16x16 fp16, 8 contiguous columns per lane.
    plan = plan_for(ROW_MAJOR, "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], "
                    "order = [1, 0]}>", (16, 16), 16, "sm_90")
    assert plan.form is AccessForm.VECTOR
    assert [len(op.registers) for op in plan.shared.ops] == [8]


def test_a_column_per_thread_from_a_row_major_buffer_is_read_element_by_element():
    # sizePerThread [4, 1] down a column: no two registers are neighbours in the buffer.
    plan = plan_for(ROW_MAJOR, "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], "
                    "order = [0, 1]}>", (32, 32), 32, "sm_80")
    assert plan.form is AccessForm.VECTOR
    assert sorted(len(op.registers) for op in plan.shared.ops) == [1] * 8


def test_a_multi_cta_layout_is_left_to_triton():
    shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0], CTAsPerCGA = [2, 1], " \
             "CTASplitNum = [2, 1], CTAOrder = [1, 0]}>"
    dst = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], " \
          "CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>"
    plan = plan_for(shared, dst, (64, 32), 32, "sm_90")
    assert not plan and "multi-CTA" in plan.reason


# ----------------------------------------------------------------- random layouts, every thread

SHARED = [ROW_MAJOR, "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>",
          "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
          "#ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>",
          "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>"]
ELEMENTS = {"i8": 8, "f16": 16, "f32": 32, "i64": 64}
# A random local load or store: a buffer layout, an element type, a register layout of random
# linear bases (broadcast included) over these warps of this target, of this shape.
RANDOM_CASES = dict(seed=st.integers(0, 2**31), shared=st.sampled_from(SHARED),
                    element=st.sampled_from(sorted(ELEMENTS)), warps=st.sampled_from([1, 2, 4]),
                    target=st.sampled_from(["sm_80", "sm_90", "gfx942"]),
                    shape=st.sampled_from([(16, 16), (32, 16), (8, 64), (32, 32)]))


def random_register_layout(seed, shape, warps, target) -> str | None:
    """``#ttg.linear`` text of a random register layout, or None when the tensor has fewer
    elements than the CTA has threads (no such layout)."""
    lanes = target_named(target).warp_size
    if shape[0] * shape[1] < lanes * warps:
        return None
    return linear_encoding_text(random_linear_bases(random.Random(seed), shape, warps, lanes, broadcast=True))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(**RANDOM_CASES)
def test_random_loads_are_planned_verified_and_their_islands_read_every_element(seed, shared, element, warps,
                                                                                  target, shape):
    dst = random_register_layout(seed, shape, warps, target)
    if dst is None:
        return
    plan = plan_for(shared, dst, shape, ELEMENTS[element], target)
    assert plan, plan.reason                     # one CTA holds every element: always plannable
    assert verify_local_load(plan)
    island = emit_local_load_island(plan, site(element), 2)
    check = check_emitted_local_load(island.text, plan, site(element), 2)
    assert check, check.errors


def test_fp8_mma_operand_bytes_leave_ldmatrix_words_through_a_vector_bitcast():
    """An 8-bit mma operand read with ldmatrix: its bytes come out of each word through
    ``<4 x i8>`` (LLVM then sees Triton's repacking for the mma put them back: the fp8 matmul
    loop had 17% more SASS with shifts), and the island still reads every element right."""
    dst = f"#ttg.dot_op<{{opIdx = 0, parent = {MMA}, kWidth = 4}}>"
    plan = plan_for("#ttg.swizzled_shared<{vec = 16, perPhase = 1, maxPhase = 8, order = [1, 0]}>", dst,
                    (64, 64), 8, "sm_90")
    assert plan.form is AccessForm.MATRIX
    island = emit_local_load_island(plan, site("f8E4M3FN"), 2)
    assert island.counts["ldmatrix"] == 4                     # four x4: sixteen words
    assert island.text.count(": i32 to vector<4xi8>") == 16 and ": i32 to i8" not in island.text
    assert check_emitted_local_load(island.text, plan, site("f8E4M3FN"), 2)


def test_the_verifier_catches_a_wrong_address():
    plan = plan_for(ROW_MAJOR, "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
                    "order = [1, 0]}>", (8, 16), 32, "sm_90")
    assert verify_local_load(plan)
    first = plan.shared.ops[0]
    broken = replace(first, address=first.address.with_const(first.address.const ^ 16))
    bad = replace(plan, shared=replace(plan.shared, ops=(broken,) + plan.shared.ops[1:]))
    result = verify_local_load(bad)
    assert not result and "wrong element" in result.errors[0]


def test_the_simulator_catches_a_wrong_island():
    plan = plan_for(ROW_MAJOR, "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
                    "order = [1, 0]}>", (8, 16), 32, "sm_90")
    island = emit_local_load_island(plan, site("f32"), 2)
    assert check_emitted_local_load(island.text, plan, site("f32"), 2)
    # Read from the wrong place: shift the base pointer by one 16-byte vector.
    text = re.sub(r"(%\S+) = llvm\.extractvalue (%\S+)\[0\] : !llvm\.struct<\(ptr<3>, i32, i32\)>",
                  r"\1_base = llvm.extractvalue \2[0] : !llvm.struct<(ptr<3>, i32, i32)>\n"
                  r"%sixteen = llvm.mlir.constant(16 : i32) : i32\n"
                  r"\1 = llvm.getelementptr \1_base[%sixteen] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8",
                  island.text, count=1)
    assert text != island.text
    result = check_emitted_local_load(text, plan, site("f32"), 2)
    assert not result and ("wrong element" in result.errors[0] or "outside" in result.errors[0])
    # A wrong descriptor struct (rank 3 for a rank-2 memdesc) is caught too.
    assert not check_emitted_local_load(island.text, plan, site("f32"), 3)


# ------------------------------------------------------------------------------ the pass option

def kernel(buffers=0, target="sm_80"):
    return single_convert_ttgir((64, 32), "f16", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], "
                                "warpsPerCTA = [4, 1], order = [1, 0]}>",
                                f"#ttg.dot_op<{{opIdx = 0, parent = {MMA}, kWidth = 2}}>", 4, target, name="k",
                                shared_encoding="#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, "
                                                "order = [1, 0]}>", buffers=buffers)


# The remark of a plan chosen with cost constants not measured on its target says so (only
# sm_90's are measured).
def estimated_on(target: str) -> str:
    return "" if target == "sm_90" else f"; cost model estimated for {target} (not measured on it)"


ESTIMATED_ON_SM80 = estimated_on("sm_80")


def test_local_loads_are_opt_in():
    text, outcomes = lower_text(kernel(), filename="k.ttgir")
    assert outcomes == [] and "ttg.local_load" in text


@pytest.mark.parametrize("buffers", [0, 3])
def test_only_local_load_lowers_it_with_a_remark(buffers):
    text, outcomes = lower_text(kernel(buffers), filename="k.ttgir", only="local_load")
    assert [o.remark().split(": remark: ")[1] for o in outcomes] == \
        ["[ll-lower-conversions] lowered: local_load, guard bar.sync=1, ldmatrix=4" + ESTIMATED_ON_SM80]
    assert "ttg.local_load" not in text and len(re.findall(r"nvvm\.ldmatrix \S+ \{[^}]*<row>, num = 4 : i32", text)) == 4


def test_unknown_lowering_names_the_known_ones():
    from linear_layouts.passes.framework import PassFailure
    with pytest.raises(PassFailure, match="local_load"):
        lower_text(kernel(), filename="k.ttgir", only="local_loads")


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "gfx942"])
def test_lowered_kernels_compile(target, tmp_path):
    import triton
    from linear_layouts.lowering.target import target_named as named
    if target == "gfx942":
        text = single_convert_ttgir((64, 64), "f16", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], "
                                    "warpsPerCTA = [4, 1], order = [1, 0]}>",
                                    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerCTA = [4, 1], "
                                    "order = [1, 0]}>", 4, target, name="k", shared_encoding=ROW_MAJOR)
    else:
        text = kernel(3, target)
    lowered, outcomes = lower_text(text, filename="k.ttgir", only="local_load")
    assert all(o.lowered for o in outcomes) and outcomes
    path = tmp_path / "k.ttgir"
    path.write_text(lowered)
    compiled = triton.compile(str(path), target=named(target).gpu_target(named(target).warp_size))
    asm = compiled.asm["amdgcn" if target == "gfx942" else "ptx"]
    if target == "gfx942":
        assert len(re.findall(r"ds_read_b128", asm)) == 2
    else:
        assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", asm)) == 4


# ------------------------------------------------------------------------------- local stores

from linear_layouts.lowering.emit.emit_llvm import emit_local_store_island  # noqa: E402
from linear_layouts.lowering.sim.sim_local_memory import check_emitted_local_store  # noqa: E402
from linear_layouts.lowering.local_memory import plan_local_store  # noqa: E402
from linear_layouts.lowering.verify import verify_local_store  # noqa: E402

WGMMA_ACC = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
NVMMA_128 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def store_plan_for(src, shared, shape, bits, target):
    return plan_local_store(to_linear_layout(src, list(shape)), to_linear_layout(shared, list(shape)), bits,
                            target_named(target))


def store_site(element_type):
    return IslandSite(result="", source="%v", src_type="tensor<...>", dst_type="", element_type=element_type,
                       in_loop=True, buffer="%m", buffer_type="!ttg.memdesc<...>")


def test_hopper_epilogue_store_uses_stmatrix_where_the_target_has_it():
    hopper = store_plan_for(WGMMA_ACC, NVMMA_128, (64, 64), 16, "sm_90")
    ampere = store_plan_for(WGMMA_ACC, NVMMA_128, (64, 64), 16, "sm_80")
    assert hopper.form is AccessForm.MATRIX and cost_text(hopper.cost, hopper.target).startswith("stmatrix.x4=4,")
    assert ampere.form is AccessForm.VECTOR and cost_text(ampere.cost, ampere.target).startswith("st.shared.b32=16,")


@settings(max_examples=30, deadline=None, derandomize=True)
@given(**RANDOM_CASES)
def test_random_stores_are_planned_verified_and_their_islands_fill_the_buffer(seed, shared, element, warps,
                                                                                target, shape):
    src = random_register_layout(seed, shape, warps, target)
    if src is None:
        return
    plan = store_plan_for(src, shared, shape, ELEMENTS[element], target)
    assert plan, plan.reason
    assert verify_local_store(plan)
    island = emit_local_store_island(plan, store_site(element), 2)
    check = check_emitted_local_store(island.text, plan, store_site(element), 2)
    assert check, check.errors


def test_a_wrong_store_is_caught_by_the_verifier_and_the_simulator():
    plan = store_plan_for("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
                          "order = [1, 0]}>", ROW_MAJOR, (8, 16), 32, "sm_90")
    first = plan.shared.ops[0]
    moved = replace(first, address=first.address.with_const(first.address.const ^ 16))
    bad = replace(plan, shared=replace(plan.shared, ops=(moved,) + plan.shared.ops[1:]))
    result = verify_local_store(bad)
    assert not result and "buffer elements wrong" in result.errors[0]
    island = emit_local_store_island(plan, store_site("f32"), 2)
    assert check_emitted_local_store(island.text, plan, store_site("f32"), 2)
    # Drop the island's last store: part of the buffer is never written.
    lines = island.text.splitlines()
    last_store = max(i for i, line in enumerate(lines) if "llvm.store " in line)
    result = check_emitted_local_store("\n".join(lines[:last_store] + lines[last_store + 1:]), plan,
                                       store_site("f32"), 2)
    assert not result and "never stored" in result.errors[0]


def test_only_local_store_lowers_the_store_of_a_pipelined_buffer():
    text, outcomes = lower_text(kernel(buffers=3), filename="k.ttgir", only="local_store")
    assert [o.remark().split(": remark: ")[1] for o in outcomes] == \
        ["[ll-lower-conversions] lowered: local_store, guard bar.sync=2, st.shared.b128=2" + ESTIMATED_ON_SM80]
    assert "ttg.local_store" not in text and "ttg.local_load" in text


# ------------------------------------------------------------------ allocations with a source

BLOCKED_8 = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
ALLOC_CASES = {
    # a Hopper epilogue: the wgmma accumulator into a 128-byte-swizzled nvmma buffer
    "sm_90": (((64, 64), WGMMA_ACC, BLOCKED_8, NVMMA_128), "guard bar.sync=1, stmatrix=4",
              r"stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", 4),
    # an Ampere operand staged in a swizzled buffer: 8 contiguous halves per lane, 128-bit stores
    "sm_80": (((64, 32), "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
               "order = [1, 0]}>", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], "
               "order = [1, 0]}>", SWIZZLED), "guard bar.sync=1, st.shared.b128=2", r"st\.shared\.v4\.b32", 2),
    "gfx942": (((64, 64), "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], "
                "order = [1, 0]}>", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerCTA = [4, 1], "
                "order = [1, 0]}>", ROW_MAJOR), "ds_write.b128=2, guard s_barrier=1", r"ds_write_b128", 2),
}


def alloc_kernel(target):
    (shape, src, dst, shared), _, _, _ = ALLOC_CASES[target]
    return single_convert_ttgir(shape, "f16", src, dst, 4, target, name="k", shared_encoding=shared)


def test_allocations_with_a_source_are_opt_in():
    for only in ("", "local_load,local_store"):
        text, outcomes = lower_text(alloc_kernel("sm_90"), filename="k.ttgir", only=only)
        assert all(o.method != "local_alloc" for o in outcomes) and "ttg.local_alloc %" in text


@pytest.mark.parametrize("target", sorted(ALLOC_CASES))
def test_only_local_alloc_stores_into_a_fresh_mutable_buffer_viewed_with_the_original_type(target):
    _, mix, _, _ = ALLOC_CASES[target]
    text, outcomes = lower_text(alloc_kernel(target), filename="k.ttgir", only="local_alloc")
    assert [o.remark().split(": remark: ")[1] for o in outcomes] == \
        [f"[ll-lower-conversions] lowered: local_alloc, {mix}" + estimated_on(target)]
    assert "ttg.local_alloc %" not in text
    alloc = re.search(r"(%\S+) = ttg\.local_alloc : \(\) -> (!ttg\.memdesc<\S+, #shared, #smem, mutable>)", text)
    view = re.search(r"(%\S+) = ttg\.memdesc_subslice (%\S+)\[0, 0\] : (\S.*?) -> (!ttg\.memdesc<[^>]*>)", text)
    assert alloc and view and view.group(2) == alloc.group(1) and view.group(3) == alloc.group(2)
    assert view.group(4).endswith("#shared, #smem>")      # immutable, as the allocation was
    assert re.search(rf"ttg\.local_load {re.escape(view.group(1))} : {re.escape(view.group(4))}", text)


def test_with_local_load_too_the_stores_and_loads_share_one_barrier():
    text, outcomes = lower_text(alloc_kernel("sm_90"), filename="k.ttgir", only="local_alloc,local_load")
    assert [o.remark().split(": remark: ")[1] for o in outcomes] == [
        "[ll-lower-conversions] lowered: local_alloc, stmatrix=4",
        "[ll-lower-conversions] lowered: local_load, guard bar.sync=1, ld.shared.b128=4"]


def test_an_allocation_without_a_source_is_left_alone():
    text, outcomes = lower_text(kernel(buffers=3), filename="k.ttgir", only="local_alloc")
    assert outcomes == [] and "ttg.local_alloc : () ->" in text and "ttg.local_store" in text


def test_an_allocation_we_cannot_lower_is_left_to_triton_with_a_remark():
    no_target = alloc_kernel("sm_90").replace('ttg.target = "cuda:90", ', "")
    assert "ttg.target" not in no_target
    text, outcomes = lower_text(no_target, filename="k.ttgir", only="local_alloc")
    assert [o.remark().split(": remark: ")[1] for o in outcomes] == [
        "[ll-lower-conversions] left to Triton: the module has no ttg.target attribute (pass target=...)"]
    assert "ttg.local_alloc %" in text


@pytest.mark.parametrize("target", sorted(ALLOC_CASES))
def test_lowered_allocations_compile_with_a_barrier_between_our_stores_and_the_reads(target, tmp_path):
    import triton
    from linear_layouts.lowering.target import target_named as named
    _, _, store, count = ALLOC_CASES[target]
    lowered, outcomes = lower_text(alloc_kernel(target), filename="k.ttgir", only="local_alloc")
    assert outcomes and all(o.lowered for o in outcomes)
    path = tmp_path / "k.ttgir"
    path.write_text(lowered)
    compiled = triton.compile(str(path), target=named(target).gpu_target(named(target).warp_size))
    amd = target == "gfx942"
    assert compiled.asm["hsaco" if amd else "cubin"]
    asm = compiled.asm["amdgcn" if amd else "ptx"]
    assert len(re.findall(store, asm)) == count
    last_store = max(m.start() for m in re.finditer(store, asm))
    first_read = min(m.start() for m in re.finditer(r"ds_read_b|ld\.shared|ldmatrix", asm))
    barrier = r"s_barrier" if amd else r"bar\.sync"
    assert last_store < first_read and re.search(barrier, asm[last_store:first_read])


def _hopper_ttgir(kernel_kind: str) -> str:
    """Stock Triton's TTGIR (sm_90, compiled on the CPU) of a kernel whose buffers are read through
    the async proxy: wgmma operands staged by ``ttg.local_alloc``, or a TMA store's staging buffer."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def wgmma_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
        a = tl.load(A + rm[:, None] * K + rk[None, :])
        b = tl.load(B + rk[:, None] * N + rn[None, :])
        tl.store(C + rm[:, None] * N + rn[None, :], tl.dot(a, b).to(tl.float16))

    @triton.jit
    def tma_store_kernel(A, desc, M: tl.constexpr, N: tl.constexpr):
        rm, rn = tl.arange(0, M), tl.arange(0, N)
        desc.store([0, 0], tl.load(A + rm[:, None] * N + rn[None, :]) * 2)

    if kernel_kind == "wgmma":
        source = ASTSource(wgmma_kernel, {"A": "*fp16", "B": "*fp16", "C": "*fp16", "M": "constexpr",
                                          "N": "constexpr", "K": "constexpr"}, constexprs={"M": 64, "N": 64, "K": 64})
    else:
        source = ASTSource(tma_store_kernel, {"A": "*fp16", "desc": "tensordesc<fp16[64, 64]>", "M": "constexpr",
                                              "N": "constexpr"}, constexprs={"M": 64, "N": 64})
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ttgir"]


@pytest.mark.parametrize("kernel_kind, reader", [("wgmma", r"wgmma\.mma_async"), ("tma", r"cp\.async\.bulk\.tensor")])
def test_async_proxy_readers_see_stores_fence_barrier_as_with_stock_triton(kernel_kind, reader, tmp_path):
    """Triton's own order is stores, fence.proxy.async, bar.sync, then wgmma / the TMA store; our
    island's guard barrier comes before Triton's ttng.fence_async_shared, so it fences first."""
    import triton
    from triton.backends.compiler import GPUTarget
    text = _hopper_ttgir(kernel_kind)
    assert "ttng.fence_async_shared" in text
    lowered, outcomes = lower_text(text, filename="k.ttgir", only="local_alloc")
    remarks = [o.remark().split(": remark: ")[1] for o in outcomes if o.method == "local_alloc"]
    last = "[ll-lower-conversions] lowered: local_alloc, fence.proxy.async=1, guard bar.sync=1, st.shared.b16=32"
    # two operands in a row: no barrier between their stores, one fence and barrier after both
    assert remarks == (["[ll-lower-conversions] lowered: local_alloc, st.shared.b16=32", last]
                       if kernel_kind == "wgmma" else [last])
    path = tmp_path / "k.ttgir"
    path.write_text(lowered)
    compiled = triton.compile(str(path), target=GPUTarget("cuda", 90, 32))
    assert compiled.asm["cubin"]
    ptx = compiled.asm["ptx"]
    first_read = re.search(reader, ptx).start()
    stores = [m.start() for m in re.finditer(r"st\.shared\.b16", ptx[:first_read])]
    assert len(stores) == 32 * len(remarks)
    assert re.search(r"bar\.sync", ptx[:stores[0]]) is None        # a fresh buffer: no guard before
    between = ptx[stores[-1]:first_read]
    fence, barrier = between.find("fence.proxy.async.shared::cta"), between.find("bar.sync")
    assert 0 <= fence < barrier


def test_the_drop_in_lowers_allocations_with_a_source_and_counts_them(tmp_path, monkeypatch):
    """enable(only="local_alloc") inside triton.compile: the wgmma kernel's two operand
    allocations become islands (fenced for the async proxy), counted apart from conversions."""
    import triton
    import linear_layouts
    from linear_layouts.passes.drop_in import hook
    from triton.backends.compiler import GPUTarget
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    path = _write(tmp_path / "k.ttgir", _hopper_ttgir("wgmma"))
    stock = triton.compile(str(path), target=GPUTarget("cuda", 90, 32))
    hook.reset_stats()
    with linear_layouts.enabled(only="local_alloc"):
        ours = triton.compile(str(path), target=GPUTarget("cuda", 90, 32))
    assert hook.stats().local_writes_lowered == 2 and hook.stats().islands == 0
    assert "2 local stores and allocations with a source lowered" in hook.stats().summary()
    # Our island's fence before the barrier, and Triton's own (now redundant) after it.
    assert stock.asm["ptx"].count("fence.proxy.async") == 1 and ours.asm["ptx"].count("fence.proxy.async") == 2


def _write(path, text):
    path.write_text(text)
    return path
