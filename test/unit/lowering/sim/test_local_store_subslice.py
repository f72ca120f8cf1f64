"""``ttg.local_store`` into ``ttg.memdesc_subslice`` views: the plan writes the view's part of
the buffer, every address XORed at run time with ``L^-1(o)`` (o: the view's start, from the
descriptor struct), as Triton 3.6 and 3.9 write views (docs/verified-facts.md).  Known offsets
for a small view at a nonzero start, a hypothesis property over random buffers, views and
starts (plan verifier and emitted-code simulator: the view written, nothing else), mutations
both must catch, the pass, and compiles through Triton for sm_80 and sm_90."""

import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_local_store_island
from linear_layouts.lowering.instructions import AccessForm
from linear_layouts.lowering.sim.sim_local_memory import check_emitted_local_store
from linear_layouts.lowering.legacy import plan_legacy_local_store
from linear_layouts.lowering.local_memory import plan_local_store
from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.verify import verify_local_store
from linear_layouts.passes.lower_conversions import lower_text
from support import REPO
from support.subslice_views import ELEMENTS, FP64_SHARED, RANDOM_VIEW, ROW_MAJOR, random_view_registers

HALF = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
LIT = REPO / "test" / "lit" / "lower-conversions" / "local-store-subslice.mlir"


def view_plan(shared, src, buffer_shape, view_shape, bits, target="sm_80"):
    return plan_local_store(to_linear_layout(src, list(view_shape)), to_linear_layout(shared, list(buffer_shape)),
                            bits, target_named(target), view=True)


def site(element_type="f32"):
    return IslandSite(result="", source="%s", src_type="tensor<...>", dst_type="", element_type=element_type,
                       buffer="%m", buffer_type="!ttg.memdesc<...>", in_loop=True)


def swizzled_offset(row, col, columns=16, vec=4, max_phase=4):
    """Triton's definition of the swizzled encoding with perPhase 1 (independent of our layouts)."""
    return row * columns + (col ^ (row % max_phase) * vec)


# ------------------------------------------------------------------------------- known answers

def test_the_right_half_is_written_at_the_swizzled_offsets_of_its_start():
    """The 32x8 view at [0, 8] of a 32x16 f32 swizzled buffer, 2 columns a thread: lane l of
    warp 0 writes view row l // 4, columns 2(l % 4), +1, i.e. buffer columns 8 + 2(l % 4)."""
    plan = view_plan(FP64_SHARED, HALF, (32, 16), (32, 8), 32)
    assert plan and plan.view.start_images == ((0, 0, 0, 0, 0), (0, 0, 0, 8))
    assert plan.form is AccessForm.VECTOR and plan.shared.store_vector == 2
    start_offset = plan.view.start_offset((0, 8))
    assert start_offset == 8
    got = [op.address.evaluate(lane, 0) ^ start_offset for lane in range(6) for op in plan.shared.ops]
    want = [swizzled_offset(lane // 4, 8 + 2 * (lane % 4)) for lane in range(6)]
    assert got == want == [8, 10, 12, 14, 28, 30]    # row 1: phase 1 moves column 8 to 12
    assert verify_local_store(plan)


def test_only_a_view_may_be_smaller_than_its_buffer():
    whole = plan_local_store(to_linear_layout(HALF, [32, 8]), to_linear_layout(FP64_SHARED, [32, 16]), 32,
                             target_named("sm_80"))
    assert not whole and "differ in size along 'dim1'" in whole.reason
    legacy = plan_legacy_local_store(to_linear_layout(HALF, [32, 8]), to_linear_layout(FP64_SHARED, [32, 16]), 32,
                                     target_named("sm_80"), view=True)
    assert legacy and legacy.view is not None and verify_local_store(legacy)


def test_the_verifier_catches_a_wrong_start_image_and_writes_outside_the_view():
    plan = view_plan(FP64_SHARED, HALF, (32, 16), (32, 8), 32)
    wrong = replace(plan, view=replace(plan.view, start_images=((0, 0, 0, 0, 0), (0, 0, 0, 16))))
    result = verify_local_store(wrong)
    assert not result and result.errors[0].startswith("view start [0, 8]: ")
    # A plan that ignores the start writes the left half at [0, 8]: outside the view.
    ignoring = replace(plan, view=replace(plan.view, start_images=((0, 0, 0, 0, 0), (0, 0, 0, 0))))
    result = verify_local_store(ignoring)
    assert not result and "view start [0, 8]" in result.errors[0]


# ------------------------------------------------------------------------- emitted islands

def test_the_island_reads_the_start_and_an_island_ignoring_it_is_caught():
    plan = view_plan(FP64_SHARED, HALF, (32, 16), (32, 8), 32)
    island = emit_local_store_island(plan, site(), 2)
    assert re.search(r"llvm\.extractvalue %\S+\[2\] : !llvm\.struct<\(ptr<3>, i32, i32\)>", island.text)
    assert check_emitted_local_store(island.text, plan, site(), 2)
    ignoring = re.sub(r"(%\S+) = llvm\.extractvalue (%\S+)\[2\] : !llvm\.struct<\(ptr<3>, i32, i32\)>",
                      r"\1 = llvm.mlir.constant(0 : i32) : i32", island.text)
    assert ignoring != island.text
    result = check_emitted_local_store(ignoring, plan, site(), 2)
    assert not result and result.errors[0].startswith("view start [0, 8]: ")
    assert "never stored" in result.errors[0] or "outside the view" in result.errors[0]


def test_an_island_with_a_wrong_start_image_is_caught():
    plan = view_plan(FP64_SHARED, HALF, (32, 16), (32, 8), 32)
    bad_plan = replace(plan, view=replace(plan.view, start_images=((0, 0, 0, 0, 0), (0, 0, 0, 4))))
    bad = emit_local_store_island(bad_plan, site(), 2)     # XORs 4 (column 4), not 8
    result = check_emitted_local_store(bad.text, plan, site(), 2)
    assert not result and "view start [0, 8]" in result.errors[0]


def test_a_whole_buffer_store_island_is_unchanged_by_the_view_machinery():
    src = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    plan = plan_local_store(to_linear_layout(src, [32, 16]), to_linear_layout(FP64_SHARED, [32, 16]), 32,
                            target_named("sm_80"))
    assert plan and plan.view is None
    island = emit_local_store_island(plan, site(), 2)
    assert not re.search(r"extractvalue %\S+\[[12]\] : !llvm\.struct<\(ptr<3>", island.text)
    assert check_emitted_local_store(island.text, plan, site(), 2)


# -------------------------------------------------------------- random buffers, views, starts



@settings(max_examples=40, deadline=None, derandomize=True)
@given(**RANDOM_VIEW)
def test_random_views_are_planned_verified_and_their_islands_write_exactly_the_view_at_every_start(
        seed, shared, element, warps, target, buffer_shape, shrink):
    drawn = random_view_registers(seed, buffer_shape, shrink, warps, target_named(target).warp_size)
    if drawn is None:
        return
    view_shape, src = drawn
    plan = view_plan(shared, src, buffer_shape, view_shape, ELEMENTS[element], target)
    assert plan, plan.reason
    assert plan.view is not None and len(plan.view.checked_starts()) == 1 << sum(shrink)
    assert verify_local_store(plan)
    island = emit_local_store_island(plan, site(element), 2)
    check = check_emitted_local_store(island.text, plan, site(element), 2)
    assert check, check.errors


def test_the_view_region_is_the_elements_between_start_and_start_plus_shape():
    plan = view_plan(ROW_MAJOR, HALF, (32, 16), (32, 8), 32)
    elements = np.arange(32 * 16)              # dim0 (rows) in the low 5 bits, dim1 above
    inside = plan.view.contains(elements, (0, 8))
    assert inside.sum() == 256
    assert (inside == ((elements >> 5) >= 8)).all()     # columns 8..15, every row


# ------------------------------------------------------------------------------- the pass

def test_the_lit_kernel_has_both_view_stores_lowered():
    text, outcomes = lower_text(LIT.read_text(), filename="k.ttgir", only="local_store")
    stores = [o for o in outcomes if o.method == "local_store"]
    assert [o.lowered for o in stores] == [True, True], [o.reason for o in stores]
    assert all(o.plan.view is not None for o in stores)
    assert "ttg.local_store" not in text


def test_a_padded_view_store_is_left_to_triton():
    padded = LIT.read_text().replace(FP64_SHARED, "#ttg.padded_shared<[16:+4] {order = [1, 0], shape = [32, 16]}>")
    text, outcomes = lower_text(padded, filename="k.ttgir", only="local_store")
    stores = [o for o in outcomes if o.method == "local_store"]
    assert [o.lowered for o in stores] == [False, False]
    assert all("padded_shared view (32x8 of 32x16): left to Triton" in o.reason for o in stores)


def test_the_legacy_mode_lowers_view_stores_with_vector_stores():
    text, outcomes = lower_text(LIT.read_text(), filename="k.ttgir", only="local_store", mode="legacy")
    stores = [o for o in outcomes if o.method == "local_store"]
    assert [o.lowered for o in stores] == [True, True], [o.reason for o in stores]


# ------------------------------------------------------------------- compiles through Triton

@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_lit_kernel_of_view_stores_compiles_like_stock(target, tmp_path):
    """Under the installed Triton (3.9 in .venv, 3.6 in .venv-compat): both stores lowered, the
    module compiles, and every store is a 64-bit st.shared as in stock Triton's PTX."""
    import triton
    source = LIT.read_text().replace('ttg.target = "cuda:80"', f'ttg.target = "cuda:{target[3:]}"')
    (tmp_path / "stock.ttgir").write_text(source)
    stock = triton.compile(str(tmp_path / "stock.ttgir"), target=target_named(target).gpu_target(32))
    lowered, outcomes = lower_text(source, filename="k.ttgir", only="local_store")
    assert [o.lowered for o in outcomes] == [True, True] and all(o.plan.view for o in outcomes)
    (tmp_path / "ours.ttgir").write_text(lowered)
    ours = triton.compile(str(tmp_path / "ours.ttgir"), target=target_named(target).gpu_target(32))
    stock_stores = set(re.findall(r"st\.shared\.\S+", stock.asm["ptx"]))
    assert stock_stores == set(re.findall(r"st\.shared\.\S+", ours.asm["ptx"])) == {"st.shared.v2.b32"}
