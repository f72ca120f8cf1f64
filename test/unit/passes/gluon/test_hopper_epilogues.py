"""Gluon's automatic layouts in the epilogues of Hopper-class kernels, compiled on the CPU
(``support.hopper_gluon_kernels``: each kernel in its expert form, every layout written, and
its automatic form, ``gl.AutoLayout()`` wherever the hardware does not force a layout).

* ``convert_layout(acc, gl.AutoLayout())`` after ``warpgroup_mma`` or an ``mma_v2`` dot is where
  the author asks us to choose: ours resolves it, with no fallback, where Triton's resolution
  fails ("Failed to infer return type");
* the automatic wgmma epilogue stores 16-byte vectors, as the expert form does;
* automatic values that meet the accumulator directly (no conversion written) are weighed
  with the store behind a conversion too (``epilogue_stores``): the wgmma one stores 16-byte
  vectors; the expert's direct form, its layouts written, compiles as stock compiles it;
* a transposing epilogue through shared memory loads at least as wide as the expert's;
* the remarks and the count of conversions describe the module handed on, after Triton's
  canonicalizer folded a conversion into a ``local_load``;
* the model reads a transposed shared view as the installed Triton's PTX does."""

import re
import warnings

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402
from support.hopper_gluon_kernels import KERNELS, source, target  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


def _compile(name: str, auto: bool, ours: bool = True):
    """The kernel compiled for its target; with ours: the warnings it gave and its remarks."""
    if ours:
        linear_layouts.enable(resolve_auto_layouts=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernel = triton.compile(source(name, auto), target=target(name))
    finally:
        if ours:
            linear_layouts.disable()
    return kernel, [str(w.message) for w in caught if "linear-layouts" in str(w.message)]


def _count(ptx: str, instruction: str) -> int:
    """Instructions of ``ptx`` that begin with ``instruction`` (``st.global.v4.b32`` counts as
    ``st.global.v4``; ``ld.shared.v4.b16`` is no ``ld.shared.b16``)."""
    return len(re.findall(re.escape(instruction) + r"(?!\w)", ptx))


def _resolved_alone(kernel) -> None:
    stats = linear_layouts.stats()
    assert stats.auto_layouts_resolved == 1 and stats.fallbacks == []
    assert "#gluon" not in kernel.asm["ttgir"]


@pytest.mark.parametrize("name", ["wgmma_epilogue", "mma_v2_epilogue", "pipelined_matmul"])
def test_a_conversion_into_an_automatic_layout_resolves(name):
    with pytest.raises(Exception):             # Triton: "Failed to infer return type"
        _compile(name, True, ours=False)
    kernel, caught = _compile(name, True)
    assert caught == []
    _resolved_alone(kernel)


@pytest.mark.parametrize("name", ["wgmma_epilogue", "mma_v2_epilogue", "pipelined_matmul"])
def test_the_automatic_epilogue_stores_as_wide_as_the_expert(name):
    expert, _ = _compile(name, False, ours=False)
    automatic, _ = _compile(name, True)
    wide = _count(expert.asm["ptx"], "st.global.v4")
    assert wide > 0
    assert _count(automatic.asm["ptx"], "st.global.v4") == wide
    assert _count(automatic.asm["ptx"], "st.global.b32") == _count(automatic.asm["ptx"], "st.global.b16") == 0


def test_the_wgmma_epilogue_stores_16_byte_vectors():
    kernel, _ = _compile("wgmma_epilogue", True)
    assert _count(kernel.asm["ptx"], "st.global.v4.b32") == 4      # 64x64 f16, 128 threads: 4 x 16 bytes each


def test_values_meeting_the_accumulator_directly_store_behind_a_conversion():
    """This test read "compile as stock does" until the resolution weighed the alternative of
    ``epilogue_stores``: Gluon's front end marks each meeting of an automatic value with the
    accumulator (the bias, the pointers) with ``set_auto_layout``, which pinned the store to the
    ``#mma`` layout (16 ``st.global.b32`` a thread, as stock).  The store's pointers were
    automatic in the source, so the resolution now also resolves the store and the work that only
    feeds it behind one conversion of the accumulator, prices both kernels whole and keeps the
    cheaper: 4 ``st.global.v4`` a thread (an H200 runs the converted store at 0.47x-0.94x the
    direct one's time, benchmarks/results/epilogue_store.md).  Every conversion left has a plan
    our verifier proves, and the remarks count the conversions of the module handed on."""
    from linear_layouts.lowering.planner import plan_conversion
    from linear_layouts.lowering.plan import Unsupported
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    stock, _ = _compile("wgmma_direct_epilogue", True, ours=False)
    ours, caught = _compile("wgmma_direct_epilogue", True)
    assert caught == []
    _resolved_alone(ours)
    assert _count(stock.asm["ptx"], "st.global.b32") == 16 and _count(stock.asm["ptx"], "st.global.v4") == 0
    assert _count(ours.asm["ptx"], "st.global.v4") == 4                 # 64x64 f16, 128 threads: 4 x 16 bytes
    assert _count(ours.asm["ptx"], "st.global.b32") == _count(ours.asm["ptx"], "st.global.b16") == 0
    ttgir = ours.asm["ttgir"]
    record = _record(ours)
    assert record.resolved and record.conversions == ttgir.count("ttg.convert_layout") == 1
    assert "tt.store" in "".join(record.remarks()) and "behind a conversion" in "".join(record.remarks())
    for src, dst, shape, element in _conversions(ttgir):
        assert "nvidia_mma" in src and "blocked" in dst
        bits = {"f16": 16, "bf16": 16, "f32": 32}[element]
        plan = plan_conversion(tensor_layout_of(src, shape), tensor_layout_of(dst, shape), bits, "sm_90")
        assert not isinstance(plan, Unsupported), plan
    # the store's pointers and value in one layout, the one converted to
    store = re.search(r"tt\.store %\S+, %\S+ : tensor<64x64x!tt\.ptr<f16>, (#\w+)>", ttgir)
    assert store is not None and store.group(1) == re.search(r"-> tensor<64x64xf16, (#\w+)>", ttgir).group(1)


def test_the_experts_direct_epilogue_compiles_as_stock_does():
    """The expert's direct form builds its pointers in the accumulator's slices (no
    ``set_auto_layout`` before its store): the author fixed the store's layout, and ``enable()``
    leaves it; the automatic form's store (Gluon's print before any resolution, the corpus's
    ``*.input.ttgir``) is the one the alternative is weighed for."""
    import os
    from linear_layouts.passes.gluon.epilogue_stores import met_stores
    from linear_layouts.passes.ir.snapshot import parse_module
    from support import REPO
    stock, _ = _compile("wgmma_direct_epilogue", False, ours=False)
    ours, caught = _compile("wgmma_direct_epilogue", False)
    assert caught == []
    for instruction in ("st.global.v4", "st.global.b32", "st.shared.v4", "ldmatrix"):
        assert _count(ours.asm["ptx"], instruction) == _count(stock.asm["ptx"], instruction)
    release = "triton-" + ".".join(triton.__version__.split(".")[:2])
    path = os.path.join(str(REPO), "test", "lit", "corpus", "gluon", release,
                        "ours.wgmma_direct_epilogue_auto.sm90.input.ttgir")
    if os.path.exists(path):
        with open(path) as f:
            module = parse_module(f.read(), path)
        assert [op.name for op in met_stores(module)] == ["tt.store"]


def test_every_kernel_has_both_forms():
    assert set(KERNELS) >= {"pipelined_matmul", "transpose_epilogue", "wgmma_epilogue", "wgmma_direct_epilogue",
                            "mma_v2_epilogue"}


# --------------------------------------------------------------------------- a transpose through shared memory

# 3.8 spells some of them with the state space's qualifier: st.shared::cta.v4.b32
_SHARED_ACCESS = re.compile(r"\b(ld|st)\.shared(?:::cta)?((?:\.v(\d))?)\.b(8|16|32|64|128)\b")


def _shared_bytes(ptx: str, kind: str) -> list[int]:
    """Bytes each ``kind`` ("ld" or "st") ``.shared`` instruction moves (``ld.shared.v4.b16`` -> 8)."""
    return [int(m.group(3) or 1) * int(m.group(4)) // 8 for m in _SHARED_ACCESS.finditer(ptx) if m.group(1) == kind]


def test_a_transposing_epilogue_loads_at_least_as_wide_as_the_expert():
    expert, _ = _compile("transpose_epilogue", False, ours=False)
    automatic, caught = _compile("transpose_epilogue", True)
    assert caught == []
    _resolved_alone(automatic)
    ours, theirs = automatic.asm["ptx"], expert.asm["ptx"]
    # no shared access narrower than the expert's (8 bytes on 3.9: ld.shared.v4.b16), none scalar
    assert min(_shared_bytes(theirs, "ld")) >= 8
    assert all(width >= min(_shared_bytes(theirs, "ld")) for width in _shared_bytes(ours, "ld"))
    assert all(width >= 8 for width in _shared_bytes(ours, "st"))
    # the tile is 64x64 f16 over 128 threads, 64 bytes a thread: four 16-byte reads a thread,
    # ldmatrix.x4.trans in the accumulator's layout on 3.9, ld.shared.v4 on 3.6 (whose view of
    # the unswizzled buffer runs along dim 1, as the buffer it is written to does); the expert's
    # layout holds each element twice (16 reads of 8 bytes on 3.9)
    assert len(_shared_bytes(ours, "ld")) + _count(ours, "ldmatrix") == 4
    # written back (and the accumulator written first) in no more instructions than the expert's
    assert len(_shared_bytes(ours, "st")) + _count(ours, "stmatrix") <= \
        len(_shared_bytes(theirs, "st")) + _count(theirs, "stmatrix")


def _record(kernel):
    from linear_layouts.passes.gluon.resolution_record import METADATA_KEY, Resolution
    return Resolution.from_record(getattr(kernel.metadata, METADATA_KEY))


def _local_load_layouts(ttgir: str) -> list[str]:
    """The result layout of every local_load of ``ttgir``, with its aliases spelled out."""
    aliases = dict(re.findall(r"^(#[\w]+) = (#ttg\.\w+<.*>)$", ttgir, re.MULTILINE))
    found = re.findall(r"ttg\.local_load .* -> tensor<[^,]+, (#[\w]+)>", ttgir)
    return [aliases.get(name, name) for name in found]


@pytest.mark.parametrize("name", ["transpose_epilogue", "wgmma_epilogue"])
def test_the_remarks_describe_the_module_handed_on(name):
    """A conversion of a local load's result that Triton's canonicalizer would fold into the
    load is priced as the load it becomes; the remark names the layout the load ends with and
    the count is of the conversions left."""
    kernel, _ = _compile(name, True)
    record, ttgir = _record(kernel), kernel.asm["ttgir"]
    assert record.resolved
    assert record.conversions == ttgir.count("ttg.convert_layout")
    for group in record.groups:
        if group.op == "ttg.local_load":
            assert group.layout in _local_load_layouts(ttgir)


def test_a_fold_after_the_choice_is_named_in_the_remark():
    from linear_layouts.passes.gluon.priced_as_emitted import folded_loads
    from linear_layouts.passes.gluon.resolution_record import GroupRemark, Resolution
    from linear_layouts.passes.gluon.resolve_auto_layouts import _describe_folds
    chosen, final = ["#A", "#B"], ["#A", "#C"]
    assert folded_loads(chosen, final) == [("#B", "#C")]
    assert folded_loads(chosen, ["#A"]) == []           # a load left dead: no one-to-one reading
    result = Resolution(True, groups=[GroupRemark(2, "ttg.local_load", "k.py:3:4", "#B", "the cheapest")])
    _describe_folds(result, folded_loads(chosen, final))
    assert result.groups[0].layout == "#C" and "folded" in result.groups[0].why


# --------------------------------------------------------------------------- Blackwell

def _conversions(ttgir: str) -> list[tuple[str, str, tuple, str]]:
    """(source layout, destination layout, shape, element type) of every conversion of ``ttgir``."""
    aliases = dict(re.findall(r"^(#[\w]+) = (#ttg\.\w+<.*>)$", ttgir, re.MULTILINE))
    found = re.findall(r"ttg\.convert_layout %\S+ : tensor<([\dx]+)x(\w+), (#[\w]+)> -> tensor<[^,]+, (#[\w]+)>", ttgir)
    return [(aliases.get(src, src), aliases.get(dst, dst), tuple(int(d) for d in shape.split("x")), element)
            for shape, element, src, dst in found]


def test_a_tcgen05_epilogue_resolves_with_each_conversion_verified():
    """``convert_layout(tmem.load(reg_layout), gl.AutoLayout())`` on sm_100: resolved, stores
    as wide as the expert's, and every conversion left has a plan our verifier proves."""
    from linear_layouts.lowering.planner import plan_conversion
    from linear_layouts.lowering.plan import Unsupported
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    with pytest.raises(Exception):             # Triton: "Failed to infer return type"
        _compile("tcgen05_epilogue", True, ours=False)
    expert, _ = _compile("tcgen05_epilogue", False, ours=False)
    kernel, caught = _compile("tcgen05_epilogue", True)
    assert caught == []
    _resolved_alone(kernel)
    assert _count(kernel.asm["ptx"], "st.global.v4") == _count(expert.asm["ptx"], "st.global.v4") == 8
    conversions = _conversions(kernel.asm["ttgir"])
    assert len(conversions) == 1                      # the accumulator, after its cast to f16
    for src, dst, shape, element in conversions:
        bits = {"f16": 16, "bf16": 16, "f32": 32}[element]
        plan = plan_conversion(tensor_layout_of(src, shape), tensor_layout_of(dst, shape), bits, "sm_100")
        assert not isinstance(plan, Unsupported), plan


# --------------------------------------------------------------------------- the model against Triton's PTX

@gluon.jit
def _transposed_view_load(c_ptr, LAYOUT: gl.constexpr):
    tile = gl.allocate_shared_memory(gl.float16, [64, 64],
                                     gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=16, rank=2))
    x = tile.permute((1, 0)).load(LAYOUT)
    rows = gl.arange(0, 64, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, 64, gl.SliceLayout(0, LAYOUT))
    gl.store(c_ptr + rows[:, None] * 64 + cols[None, :], x)


_VIEW = ("!ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = true, "
         "elementBitWidth = 16}>, #ttg.shared_memory, mutable>")
_DOWN = ("#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>",
         gl.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1]))
_ACROSS = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
           gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]))


def test_the_model_reads_a_transposed_view_as_triton_emits_it():
    """A transposed view of an unswizzled NVMMA buffer, read in 8 elements a thread down dim 0
    or across dim 1: the one the installed Triton reads in 16-byte vectors (the other in 2-byte
    loads: 3.8 and 3.9 read the view down dim 0, 3.6 and 3.7 across dim 1) is the one the model prices lower."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.assign.shared_access_costs import local_load_work
    widths, prices = {}, {}
    for text, layout in (_DOWN, _ACROSS):
        kernel = triton.compile(GluonASTSource(_transposed_view_load, {"c_ptr": "*fp16"}, {"LAYOUT": layout},
                                               attrs={(0,): [["tt.divisibility", 16]]}), target=target("wgmma_epilogue"))
        widths[text] = min(_shared_bytes(kernel.asm["ptx"], "ld"))
        prices[text] = local_load_work(text, (64, 64), _VIEW, 16, target_named("sm_90")).total
    wide, narrow = sorted(widths, key=widths.get, reverse=True)
    assert (widths[wide], widths[narrow]) == (16, 2)
    assert prices[wide] < prices[narrow]


def _fp8_copy_ptx(auto: bool) -> str:
    from support.hopper_gluon_kernels import SM90, fp8_copy_source
    if auto:
        linear_layouts.enable(resolve_auto_layouts=True)
    try:
        return triton.compile(fp8_copy_source(auto), target=SM90, options={"num_warps": 1}).asm["ptx"]
    finally:
        if auto:
            linear_layouts.disable()


def test_an_fp8_transposing_copy_reads_bytes_as_the_author_does():
    """One warp copies 8x64 fp8 slices from a 64-byte-swizzled NVMMA buffer into a transposed
    one.  Reading two bytes per load (``ld.shared.v2.b8``) halves the loads but Triton widens
    every byte before packing it into the transposed store: 128 ``cvt.u32.u16`` and 65 more
    ``prmt.b32``, 1.098x the author's run time in flagdnn's fp8 matmul on an H200.  The model
    prices that unpacking, so the automatic form emits the author's instructions, both
    releases: 128 byte loads for the copy and 128 for the final read, 3 ``prmt`` per packed
    word, no widening."""
    expert, auto = _fp8_copy_ptx(False), _fp8_copy_ptx(True)
    for ptx in (expert, auto):
        assert _count(ptx, "ld.shared.b8") == 256
        assert _count(ptx, "ld.shared.v2.b8") == 0
        assert _count(ptx, "cvt.u32.u16") == 0
        assert _count(ptx, "prmt.b32") == 192
    for kind in ("st.shared.v2.b32", "st.shared.v4.b32", "st.shared.b32"):
        assert _count(auto, kind) == _count(expert, kind)


def test_the_model_prices_unpacking_bytes_loaded_in_vectors():
    """The copy's two candidate layouts as the model sees them: the 2-byte read costs fewer
    shared accesses but more ALU work, and more in all."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.assign.shared_access_costs import local_load_work, local_store_work
    view = ("!ttg.memdesc<8x64xf8E4M3FN, #ttg.nvmma_shared<{{swizzlingByteWidth = 64, transposed = {}, "
            "elementBitWidth = 8}}>, #ttg.shared_memory, mutable, 64x64>")
    sm90 = target_named("sm_90")
    costs = {}
    for name, spt, order in (("bytes", "[8, 1]", "[0, 1]"), ("pairs", "[8, 2]", "[0, 1]")):
        enc = (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], "
               f"order = {order}}}>")
        costs[name] = (local_load_work(enc, (8, 64), view.format("false"), 8, sm90),
                       local_store_work(enc, (8, 64), view.format("true"), 8, sm90))
    assert costs["pairs"][0].shared < costs["bytes"][0].shared
    assert costs["pairs"][0].alu > costs["bytes"][0].alu == 0
    assert sum(w.total for w in costs["pairs"]) > sum(w.total for w in costs["bytes"])
