"""``ttg.local_load`` from ``ttg.memdesc_subslice`` views: the plan reads the whole buffer through
the view's part of it, every address XORed at run time with ``L^-1(o)`` (o: the view's start,
from the descriptor struct), as Triton 3.6 and 3.9 read views (``SharedMemoryObject::
getShmemOffset``; docs/verified-facts.md).  Known answers for the fp64 mma v2 operand views of
``test/lit/corpus/cuda80/matmul_fp64.ttgir``, a hypothesis property over random buffers, views
and starts (plan verifier and emitted-code simulator, every start), mutations both must catch,
the pass on the corpus file, and compiles through Triton for sm_80 and sm_90."""

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_local_load_island
from linear_layouts.lowering.instructions import AccessForm
from linear_layouts.lowering.sim.sim_local_memory import check_emitted_local_load
from linear_layouts.lowering.local_memory import plan_local_load, subslice_view
from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.verify import verify_local_load
from linear_layouts.passes.lower_conversions import lower_text
from support import REPO
from support.triton_cache import use_private_triton_cache
from support.subslice_views import ELEMENTS, FP64_SHARED, RANDOM_VIEW, ROW_MAJOR, random_view_registers

FP64_MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [8, 8]}>"
CORPUS_FP64 = REPO / "test" / "lit" / "corpus" / "cuda80" / "matmul_fp64.ttgir"


def view_plan(shared, dst, buffer_shape, view_shape, bits, target="sm_80"):
    return plan_local_load(to_linear_layout(shared, list(buffer_shape)), to_linear_layout(dst, list(view_shape)),
                           bits, target_named(target), view=True)


def site(element_type="f64"):
    return IslandSite(result="%r", source="%m", src_type="!ttg.memdesc<...>", dst_type="tensor<...>",
                       element_type=element_type, in_loop=True)


def swizzled_offset(row, col, columns=16, vec=4, max_phase=4):
    """The offset of (row, col) in a row-major swizzled buffer with perPhase 1, by Triton's
    definition of the encoding (independent of our layouts): whole groups of ``vec`` columns
    XOR the row's phase."""
    return row * columns + (col ^ (row % max_phase) * vec)


def a_operand_plan():
    return view_plan(FP64_SHARED, f"#ttg.dot_op<{{opIdx = 0, parent = {FP64_MMA}, kWidth = 1}}>", (32, 16), (32, 8), 64)


# ------------------------------------------------------------------------------- known answers

def test_the_fp64_a_operand_view_has_one_start_bit_column_8():
    plan = a_operand_plan()
    assert plan.view.shape == (32, 8) and plan.view.buffer_shape == (32, 16)
    assert plan.view.start_images == ((0, 0, 0, 0, 0), (0, 0, 0, 8))
    assert plan.view.starts() == [(0, 0), (0, 8)]
    assert plan.view.start_offset((0, 8)) == 8 and plan.view.element((0, 8)) == 8 << 5


@pytest.mark.parametrize("start", [(0, 0), (0, 8)])
def test_the_fp64_a_operand_view_reads_the_offsets_of_its_start(start):
    """Lanes 0..4, registers 0..3 of warp 0 (the mma v2 fp64 A operand: lane l holds row l // 4,
    column l % 4; register 1 is column + 4, register 2 row + 16), read at start [0, 0] (the
    corpus file's prologue) and [0, 8] (its loop), against the swizzle formula."""
    plan = a_operand_plan()
    assert plan.form is AccessForm.VECTOR and [op.registers for op in plan.shared.ops] == [(0,), (1,), (2,), (3,)]
    start_offset = plan.view.start_offset(start)
    got = [[op.address.evaluate(lane, 0) ^ start_offset for op in plan.shared.ops] for lane in range(5)]
    want = [[swizzled_offset(lane // 4 + dr, start[1] + lane % 4 + dc) for dr, dc in ((0, 0), (0, 4), (16, 0), (16, 4))]
            for lane in range(5)]
    assert got == want
    if start == (0, 8):
        assert got[:4] == [[8, 12, 264, 268], [9, 13, 265, 269], [10, 14, 266, 270], [11, 15, 267, 271]]
        assert got[4][0] == 28          # row 1: its swizzle phase moves column 8 to 12, offset 16 + 12


def test_the_fp64_b_operand_view_moves_by_whole_rows():
    plan = view_plan(FP64_SHARED, f"#ttg.dot_op<{{opIdx = 1, parent = {FP64_MMA}, kWidth = 1}}>", (16, 32), (8, 32), 64)
    assert plan and verify_local_load(plan)
    assert plan.view.start_images == ((0, 0, 0, 8 * 32), (0, 0, 0, 0, 0))   # row 8: phase 0, offset 256
    lane0 = [op.address.evaluate(0, 0) ^ plan.view.start_offset((8, 0)) for op in plan.shared.ops]
    assert lane0[0] == 256


def test_a_view_start_image_that_splits_a_vector_keeps_the_vector_whole():
    # 8x2 view of an 8x4 row-major f32 buffer, every register a row of the view: its 2 columns
    # are one 64-bit vector, and the start (column 2, offset 2) moves the vector whole.
    dst = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
    plan = view_plan(ROW_MAJOR, dst, (32, 4), (32, 2), 32, "sm_90")
    assert plan and plan.shared.load_vector == 2 and plan.view.start_images == ((0,) * 5, (0, 2))
    # A 2-row view of an 8-row column-major buffer: the start image (row 2 = offset 2) meets the
    # offset bit of the registers' column pair only if the vector spanned rows; here it does not.
    column_major = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
    dst = "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [0, 1]}>"
    plan = view_plan(column_major, dst, (4, 32), (2, 32), 32, "sm_90")
    assert plan and plan.shared.load_vector == 2 and plan.view.start_images == ((0, 2), (0,) * 5)
    assert verify_local_load(plan)


def test_only_a_view_may_be_smaller_than_its_buffer():
    dst = f"#ttg.dot_op<{{opIdx = 0, parent = {FP64_MMA}, kWidth = 1}}>"
    whole = plan_local_load(to_linear_layout(FP64_SHARED, [32, 16]), to_linear_layout(dst, [32, 8]), 64,
                            target_named("sm_80"))
    assert not whole and "differ in size along 'dim1'" in whole.reason
    larger = plan_local_load(to_linear_layout(FP64_SHARED, [32, 8]), to_linear_layout(dst, [32, 16]), 64,
                             target_named("sm_80"), view=True)
    assert not larger and "larger than its buffer" in larger.reason


def test_subslice_view_images_are_the_inverse_of_the_start_bits():
    buffer = to_linear_layout("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>", [16, 16])
    view = subslice_view(buffer, (4, 8))
    # Row 4 (phase 0) and row 8 (phase 0): 64, 128; column 8: offset 8.
    assert view.start_images == ((0, 0, 64, 128), (0, 0, 0, 8))
    assert len(view.starts()) == 8 and view.start_offset((12, 8)) == 64 ^ 128 ^ 8


# ------------------------------------------------------------------------- emitted islands

def test_the_island_reads_the_start_from_the_descriptor_and_the_simulator_checks_every_start():
    plan = a_operand_plan()
    island = emit_local_load_island(plan, site(), 2)
    # dim 1's offset, bit 3 of it, times offset 8: XORed into the thread part of every address.
    assert re.search(r"llvm\.extractvalue %\S+\[2\] : !llvm\.struct<\(ptr<3>, i32, i32\)>", island.text)
    assert "llvm.extractvalue" in island.text and not re.search(r"extractvalue %\S+\[1\] : !llvm\.struct<\(ptr<3>",
                                                                island.text)
    assert check_emitted_local_load(island.text, plan, site(), 2)
    # An island that ignores the descriptor's offsets is right at start [0, 0] only.
    ignoring = re.sub(r"(%\S+) = llvm\.extractvalue (%\S+)\[2\] : !llvm\.struct<\(ptr<3>, i32, i32\)>",
                      r"\1 = llvm.mlir.constant(0 : i32) : i32", island.text)
    assert ignoring != island.text
    result = check_emitted_local_load(ignoring, plan, site(), 2)
    assert not result and result.errors[0].startswith("view start [0, 8]: ") and "wrong element" in result.errors[0]


def test_an_island_with_a_wrong_start_image_is_caught():
    plan = a_operand_plan()
    bad_plan = replace(plan, view=replace(plan.view, start_images=((0, 0, 0, 0, 0), (0, 0, 0, 4))))
    bad_island = emit_local_load_island(bad_plan, site(), 2)   # XORs 4 (column 4), not 8
    result = check_emitted_local_load(bad_island.text, plan, site(), 2)
    assert not result and "view start [0, 8]" in result.errors[0]


def test_a_register_constant_sharing_a_start_bit_is_xored_not_added(monkeypatch):
    """Rows 0..3 in registers (f64, one load each) of a 32x16 buffer swizzled like the fp64 operands: row 2 is offset
    32 xor 8 (phase 2 moves column 0 to 8), so a register's constant 40 shares bit 3 with the
    start image 8 of the view [0, 8].  The island XORs that bit and adds only 32; an island that
    added all of 40 (as it may when no start can set bit 3) reads offset 8 + 8 + 32 = 48 instead
    of 32 at start [0, 8], and the simulator says so."""
    from linear_layouts.lowering.local_memory import SubsliceView
    dst = ("#ttg.linear<{register = [[1, 0], [2, 0], [16, 0]], lane = [[0, 1], [0, 2], [0, 4], [4, 0], [8, 0]], "
           "warp = [], block = []}>")
    plan = view_plan(FP64_SHARED, dst, (32, 16), (32, 8), 64, "sm_90")   # f64: no ldmatrix
    assert sorted(op.address.const for op in plan.shared.ops)[:4] == [0, 20, 40, 60]
    good = emit_local_load_island(plan, site("f64"), 2)
    assert check_emitted_local_load(good.text, plan, site("f64"), 2)
    monkeypatch.setattr(SubsliceView, "start_mask", property(lambda self: 0))
    adding = emit_local_load_island(plan, site("f64"), 2)
    assert adding.text != good.text
    result = check_emitted_local_load(adding.text, plan, site("f64"), 2)
    assert not result and result.errors[0].startswith("view start [0, 8]: ")


def test_the_verifier_checks_the_start_too():
    plan = a_operand_plan()
    wrong = replace(plan, view=replace(plan.view, start_images=((0, 0, 0, 0, 0), (0, 0, 0, 16))))
    result = verify_local_load(wrong)
    assert not result and result.errors[0].startswith("view start [0, 8]: ")
    assert verify_local_load(plan)


# -------------------------------------------------------------- random buffers, views, starts



@settings(max_examples=40, deadline=None, derandomize=True)
@given(**RANDOM_VIEW)
def test_random_views_are_planned_verified_and_their_islands_read_every_element_at_every_start(
        seed, shared, element, warps, target, buffer_shape, shrink):
    drawn = random_view_registers(seed, buffer_shape, shrink, warps, target_named(target).warp_size)
    if drawn is None:
        return
    view_shape, dst = drawn
    plan = view_plan(shared, dst, buffer_shape, view_shape, ELEMENTS[element], target)
    assert plan, plan.reason                  # the buffer holds every element: always plannable
    assert plan.view is not None and len(plan.view.checked_starts()) == 1 << sum(shrink)
    assert verify_local_load(plan)
    island = emit_local_load_island(plan, site(element), 2)
    check = check_emitted_local_load(island.text, plan, site(element), 2)
    assert check, check.errors


# ------------------------------------------------------------------------------- the pass

def test_the_fp64_matmul_corpus_file_has_every_local_load_lowered():
    text, outcomes = lower_text(CORPUS_FP64.read_text(), filename="matmul_fp64.ttgir", only="local_load")
    loads = [o for o in outcomes if o.method == "local_load"]
    assert len(loads) == 6 and all(o.lowered for o in loads), [o.reason for o in loads]
    assert all(o.plan.view is not None for o in loads)
    assert "ttg.local_load" not in text
    # Each island reads its start from the descriptor of its own view, including the views of
    # the loop's block arguments (%a_67 -> memdesc_subslice [0, 8]).
    assert len(re.findall(r"llvm\.extractvalue %\S+\[2\] : !llvm\.struct<\(ptr<3>, i32, i32\)>", text)) == 3
    assert len(re.findall(r"llvm\.extractvalue %\S+\[1\] : !llvm\.struct<\(ptr<3>, i32, i32\)>", text)) == 3


LOOP_CARRIED = """
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = ttg.local_alloc : () -> !ttg.memdesc<32x16xf32, #shared, #smem, mutable>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %a) -> (!ttg.memdesc<32x16xf32, #shared, #smem, mutable>) : i32 {
      %x = ttg.local_load %m : !ttg.memdesc<32x16xf32, #shared, #smem, mutable> -> tensor<32x16xf32, #blocked>
      scf.yield %m : !ttg.memdesc<32x16xf32, #shared, #smem, mutable>
    }
    tt.return
  }
}
"""


def test_a_whole_buffer_block_argument_is_read_like_its_allocation():
    """A loop-carried whole buffer: Triton reads it at ``L^-1(c)``, offsets ignored (its type is
    no view), and so does the island: the same text as for the allocation itself."""
    text, outcomes = lower_text(LOOP_CARRIED, filename="k.ttgir", only="local_load")
    assert [o.lowered for o in outcomes] == [True] and outcomes[0].plan.view is None
    direct = LOOP_CARRIED.replace("ttg.local_load %m", "ttg.local_load %a")
    direct_text, direct_outcomes = lower_text(direct, filename="k.ttgir", only="local_load")
    assert direct_outcomes[0].lowered
    assert direct_outcomes[0].plan.shared == outcomes[0].plan.shared
    assert not re.search(r"extractvalue %\S+\[[12]\] : !llvm\.struct<\(ptr<3>", text)


def _view_kernel(shared: str) -> str:
    """LOOP_CARRIED reading the [0, 8] view of its allocation (a constant start) instead."""
    return (LOOP_CARRIED.replace("#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>",
                                 f"#shared = {shared}")
            .replace("%r = scf.for", "%v = ttg.memdesc_subslice %a[0, 8] : !ttg.memdesc<32x16xf32, #shared, #smem, "
                     "mutable> -> !ttg.memdesc<32x8xf32, #shared, #smem, mutable, 32x16>\n    %r = scf.for")
            .replace("%x = ttg.local_load %m : !ttg.memdesc<32x16xf32, #shared, #smem, mutable> -> tensor<32x16xf32, "
                     "#blocked>", "%x = ttg.local_load %v : !ttg.memdesc<32x8xf32, #shared, #smem, mutable, 32x16> -> "
                     "tensor<32x8xf32, #blocked>"))


def test_a_constant_view_of_an_allocation_is_lowered():
    text, outcomes = lower_text(_view_kernel(FP64_SHARED), filename="k.ttgir", only="local_load")
    assert [o.lowered for o in outcomes] == [True], [o.reason for o in outcomes]
    assert outcomes[0].plan.view.start_images == ((0, 0, 0, 0, 0), (0, 0, 0, 8))
    assert outcomes[0].plan.shared.load_vector == 4          # 4 columns a lane: one 128-bit load each


def test_a_padded_view_is_left_to_triton():
    """Triton pads ``L^-1(c) xor L^-1(o)`` as a whole; a view plan has no padding."""
    text, outcomes = lower_text(_view_kernel("#ttg.padded_shared<[16:+4] {order = [1, 0], shape = [32, 16]}>"),
                                filename="k.ttgir", only="local_load")
    assert [o.lowered for o in outcomes] == [False]
    assert "padded_shared view (32x8 of 32x16): left to Triton" in outcomes[0].reason
    assert "ttg.local_load" in text


PADDED = "#ttg.padded_shared<[16:+4] {order = [1, 0], shape = [32, 16]}>"


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_a_padded_buffer_is_left_to_triton_for_loads_and_stores(target):
    """Triton moves offset x of a ``[16:+4]`` buffer to x + (x >> 4) * 4; our islands do not
    pad, so a whole padded buffer is left to Triton too: its load, and a store of a register
    value into it (``local_alloc`` with a source)."""
    padded = LOOP_CARRIED.replace("#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>", PADDED)
    text, outcomes = lower_text(padded, filename="k.ttgir", only="local_load", target=target)
    assert [o.lowered for o in outcomes] == [False]
    assert outcomes[0].reason == f"a padded_shared buffer ({PADDED}): our islands do not pad offsets; left to Triton"
    assert "ttg.local_load" in text
    stored = padded.replace(
        "%a = ttg.local_alloc : () -> !ttg.memdesc<32x16xf32, #shared, #smem, mutable>",
        "%z = arith.constant dense<0.0> : tensor<32x16xf32, #blocked>\n"
        "    %a = ttg.local_alloc %z : (tensor<32x16xf32, #blocked>) -> !ttg.memdesc<32x16xf32, #shared, #smem, mutable>")
    text, outcomes = lower_text(stored, filename="k.ttgir", only="local_alloc", target=target)
    assert [(o.lowered, o.reason) for o in outcomes] == [
        (False, f"a padded_shared buffer ({PADDED}): our islands do not pad offsets; left to Triton")]


# ------------------------------------------------------------------- compiles through Triton

LIT_SUBSLICE = REPO / "test" / "lit" / "lower-conversions" / "local-load-subslice.mlir"


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_lit_kernel_of_views_compiles_like_stock(target, tmp_path):
    """The lit test's kernel (a constant view and a loop-carried one), under the installed
    Triton (3.9 in .venv, 3.6 in .venv-compat): both loads lowered, the module compiles, and
    every load is a 64-bit ld.shared as in stock Triton's PTX."""
    import triton
    from linear_layouts.lowering.target import target_named as named
    source = LIT_SUBSLICE.read_text().replace('ttg.target = "cuda:80"', f'ttg.target = "cuda:{target[3:]}"')
    (tmp_path / "stock.ttgir").write_text(source)
    stock = triton.compile(str(tmp_path / "stock.ttgir"), target=named(target).gpu_target(32))
    lowered, outcomes = lower_text(source, filename="k.ttgir", only="local_load")
    assert [o.lowered for o in outcomes] == [True, True] and all(o.plan.view for o in outcomes)
    (tmp_path / "ours.ttgir").write_text(lowered)
    ours = triton.compile(str(tmp_path / "ours.ttgir"), target=named(target).gpu_target(32))
    stock_loads = set(re.findall(r"ld\.shared\.\S+", stock.asm["ptx"]))
    assert stock_loads == set(re.findall(r"ld\.shared\.\S+", ours.asm["ptx"])) == {"ld.shared.v2.b32"}


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_fp64_matmul_compiles_with_our_view_islands(target, tmp_path):
    import triton
    from linear_layouts.lowering.target import target_named as named
    source = CORPUS_FP64.read_text().replace('ttg.target = "cuda:80"', f'ttg.target = "cuda:{target[3:]}"')
    (tmp_path / "stock.ttgir").write_text(source)
    try:
        triton.compile(str(tmp_path / "stock.ttgir"), target=named(target).gpu_target(32))
    except Exception as error:  # the corpus was written by triton 3.9; 3.6 crashes on this file
        pytest.skip(f"stock triton {triton.__version__} cannot compile it: {str(error).splitlines()[0][:120]}")
    lowered, outcomes = lower_text(source, filename="matmul_fp64.ttgir", only="local_load")
    assert sum(o.lowered for o in outcomes if o.method == "local_load") == 6
    path = tmp_path / "k.ttgir"
    path.write_text(lowered)
    compiled = triton.compile(str(path), target=named(target).gpu_target(32))
    ptx = compiled.asm["ptx"]
    assert "mma.sync.aligned.m8n8k4.row.col.f64" in ptx
    assert len(re.findall(r"ld\.shared\.v2\.b32|ld\.shared\.b64|ld\.shared\.v2\.u32|ld\.shared\.u64", ptx)) >= 24


@pytest.mark.parametrize("capability", [80, 90])
def test_a_jit_fp64_dot_compiles_through_the_drop_in_with_its_views_lowered(capability, tmp_path, monkeypatch):
    import triton
    import triton.language as tl
    import linear_layouts
    from linear_layouts.passes.drop_in import hook
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def fp64_dot(A, B, C, K: tl.constexpr):
        rm = tl.arange(0, 32)
        rn = tl.arange(0, 32)
        rk = tl.arange(0, 16)
        acc = tl.zeros((32, 32), dtype=tl.float64)
        for k in range(0, K, 16):
            a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(B + (k + rk)[:, None] * 32 + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(C + rm[:, None] * 32 + rn[None, :], acc)

    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    signature = {"A": "*fp64", "B": "*fp64", "C": "*fp64", "K": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    source = ASTSource(fp64_dot, signature, constexprs={"K": 64}, attrs=attrs)
    stock = triton.compile(source, target=GPUTarget("cuda", capability, 32))
    # Triton 3.9 splits K of the fp64 operands into memdesc_subslice views on sm_80 (m8n8k4
    # mma); 3.6, and 3.9 on sm_90, load the whole 32x16 / 16x32 buffers (the corpus file,
    # retargeted above, has the views on both targets).
    splits_k = triton.__version__.startswith("3.9") and capability == 80
    assert ("memdesc_subslice" in stock.asm["ttgir"]) == splits_k
    hook.reset_stats()
    with linear_layouts.enabled(only="local_load"):
        ours = triton.compile(ASTSource(fp64_dot, signature, constexprs={"K": 64}, attrs=attrs),
                              target=GPUTarget("cuda", capability, 32))
    stats = hook.stats()
    assert not stats.fallbacks, stats.fallbacks
    views = stock.asm["ttgir"].count("ttg.local_load")
    assert views >= 2 and stats.local_loads_lowered == stats.local_loads == views
    assert ours.asm["ptx"].count("mma.sync.aligned.m8n8k4.row.col.f64") == \
        stock.asm["ptx"].count("mma.sync.aligned.m8n8k4.row.col.f64")


def test_many_starts_are_checked_bit_by_bit():
    buffer = to_linear_layout(ROW_MAJOR, [64, 64])
    view = subslice_view(buffer, (8, 4))
    assert len(view.starts()) == 128
    assert view.checked_starts() == sorted({(0, 0), (56, 60), (8, 0), (16, 0), (32, 0), (0, 4), (0, 8), (0, 16),
                                            (0, 32)})
