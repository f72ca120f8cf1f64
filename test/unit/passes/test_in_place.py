"""Islands built in place (``passes.drop_in.in_place``, the drop-in's default under triton 3.6;
``LINEAR_LAYOUTS_IN_PLACE=0`` splices every island as text instead, ``=1`` builds under any
release): each
one-round shared-memory plan becomes ``ttg.local_alloc`` / ``ttg.local_store`` /
``ttg.local_load`` with our swizzle as a ``#ttg.shared_linear`` layout, in Triton's own module.

What must hold: the offset bases are the plan's swizzle written as coordinates (a worked
example), and only a bijection onto the tensor is built; through the drop-in, FLA's kernels
under the measured rule of sm_90 (triton 3.6's) get their islands that way, the compile then
equals Triton's own compile of the rewritten module, and where Triton's ``make_llir`` fails on
it the kernel falls back to stock's code from a copy of its original module."""

import glob
import os
import re

import pytest

triton = pytest.importorskip("triton")

from triton.backends.compiler import GPUTarget  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.dialect.linear_layout import LinearLayout  # noqa: E402
from linear_layouts.passes.drop_in import in_place, stage_wrappers; from linear_layouts.passes import lower_conversions# noqa: E402
from linear_layouts.passes.drop_in.in_place import IN_PLACE_VARIABLE, offset_bases  # noqa: E402
from linear_layouts.passes.drop_in.plugin_config import in_place_by_default  # noqa: E402

from support import REPO  # noqa: E402

FLA = REPO / "test" / "lit" / "corpus" / "fla"
TARGET = GPUTarget("cuda", 90, 32)


class _Plan:
    """What ``offset_bases`` reads of a plan: its swizzle."""

    def __init__(self, swizzle):
        self.shared = type("Shared", (), {"smem_layout": swizzle})()


def _swizzle(vector, bank, segment, size):
    return LinearLayout.from_bases({"vector": [[v] for v in vector], "bank": [[b] for b in bank],
                                    "segment": [[s] for s in segment], "reps": []}, {"dim0": size},
                                   require_surjective=False)


def test_offset_bases_write_the_swizzle_as_coordinates():
    # FLA's chunk_fwd_kernel_h (mma -> blocked, bf16 32x32): the plan's swizzle, flattened with dim0 lowest
    swizzle = _swizzle([32, 64, 128], [1, 256, 512], [8, 16, 258, 516], 1024)
    assert offset_bases(_Plan(swizzle), [32, 32]) == [[0, 1], [0, 2], [0, 4], [1, 0], [0, 8], [0, 16],
                                                      [8, 0], [16, 0], [2, 8], [4, 16]]


@pytest.mark.parametrize("vector, why", [([32, 64, 64 ^ 32], "dependent"), ([32, 64], "too few for the tensor"),
                                         ([0, 64, 128], "a zero basis")])
def test_only_a_bijection_onto_the_tensor_is_built(vector, why):
    swizzle = _swizzle(vector, [1, 256, 512], [8, 16, 258, 516], 1024)
    assert offset_bases(_Plan(swizzle), [32, 32]) is None, why


def test_a_buffer_of_one_element_is_not_built():
    # Legacy mode plans a 1-element tensor (a row's mean in a layer norm) through shared
    # memory; its swizzle has no basis, and Triton's get_shared_linear_layout crashes the
    # process on an empty basis list.
    assert offset_bases(_Plan(_swizzle([], [], [], 1)), [1]) is None


LAYER_NORM_ROW = """
#slice = #ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>}>
#one = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: tensor<1xf32, #slice>, %y: tensor<1x!tt.ptr<f32>, #one>) {
    %0 = ttg.convert_layout %x : tensor<1xf32, #slice> -> tensor<1xf32, #one>
    tt.store %y, %0 : tensor<1x!tt.ptr<f32>, #one>
    tt.return
  }
}
"""


def test_legacy_mode_leaves_a_one_element_conversion_to_the_text_route():
    """paper_kernels' layer norm of 4096 columns under mode=legacy crashed here (in a forked
    child: a crash must fail the test, not end the run)."""
    from linear_layouts.passes.ir.sandbox import run_forked
    from linear_layouts.passes.lower_conversions import LowerConversions
    from linear_layouts.passes.options import Mode

    def child():
        text, built = in_place.in_place_module_text(LAYER_NORM_ROW, "k", LowerConversions(mode=Mode.LEGACY))
        return f"built {built}, convert kept: {'ttg.convert_layout' in text}"
    assert run_forked(child) == "built 0, convert kept: True"


@pytest.fixture(autouse=True)
def shared_picks_kept(monkeypatch):
    """Shared-memory picks in Triton's rounds kept ours (the study switch ``SHARED_PICKS_KEPT``): under
    triton 3.6 the default sends them to stock (``fitted_model.shared_memory_in_tritons_rounds``),
    and this module's subject is how such islands are built and spliced."""
    monkeypatch.setattr("linear_layouts.lowering.choosing.fitted_model.SHARED_PICKS_KEPT", True)


@pytest.fixture
def sixteen_bit_rule_off(monkeypatch):
    """The rule that leaves 16-bit conversions where ldmatrix/stmatrix is in play to stock
    (``fitted_model.sixteen_bits_where_matrices_are_in_play``) taken out: for tests whose subject
    is how islands are built or spliced, on 16-bit kernels whose conversions it sends to stock."""
    from linear_layouts.lowering.choosing import fitted_model
    monkeypatch.setattr(fitted_model, "sixteen_bits_where_matrices_are_in_play", lambda plan: False)


@pytest.fixture
def in_place_on_3_6(monkeypatch):
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)   # the measured rule decides
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", "off")
    monkeypatch.setenv(IN_PLACE_VARIABLE, "1")
    yield
    linear_layouts.disable()


def _ptx(path, plugin):
    if plugin:
        linear_layouts.enable()
    try:
        return triton.compile(str(path), target=TARGET).asm["ptx"]
    finally:
        linear_layouts.disable()


def _rewritten_text(path):
    """The module of ``path`` as the drop-in rewrites it, printed (the hook's own function on a
    module parsed here)."""
    from linear_layouts.lowering.choosing.plan_memory import ModulePlans
    from linear_layouts.passes.ir.bindings import bindings, new_context
    from linear_layouts.passes.lower_conversions import LowerConversions

    context = new_context()
    handle = bindings().parse_mlir_module(str(path), context)
    handle.context = context
    built = in_place.lower_in_place(handle, handle.str(), "k", LowerConversions(), ModulePlans(None))
    assert built.left_ours == 0, "a kernel whose every island is built in place"
    return str(handle), built.built


def _normalized(ptx):
    return [re.sub(r"%(r|rd|rs|p|f|fd)\d+", "%", line) for line in ptx.splitlines() if not line.startswith("//")]


def test_the_drop_in_builds_fla_islands_in_place(in_place_on_3_6, tmp_path):
    path = FLA / "abc_bwd_intra_K_bf16.cuda90.ttgir"
    text, count = _rewritten_text(path)
    assert count == 3 and text.count("ttg.local_store") - open(path).read().count("ttg.local_store") == 3
    assert text.count("#ttg.shared_linear<") >= 1
    rewritten = tmp_path / "rewritten.ttgir"
    rewritten.write_text(text)
    before = linear_layouts.stats().islands
    ours = _ptx(path, plugin=True)
    assert linear_layouts.stats().islands - before == 3
    os.environ.pop(IN_PLACE_VARIABLE)
    assert _normalized(ours) == _normalized(_ptx(rewritten, plugin=False))


@pytest.mark.parametrize("stage, kernel", [("llir", "gla_fwd_o"), ("ptx", "abc_fwd_intra_V")])
def test_a_failing_stage_falls_back_to_a_copy_of_the_original(in_place_on_3_6, sixteen_bit_rule_off, monkeypatch, stage,
                                                             kernel):
    """The module built in place is not Triton's any more: where Triton's ``make_llir`` fails on
    it, or a later stage (ptxas's turn, ``make_ptx``), the kernel is compiled as stock from a copy
    parsed from the module's print.  (One kernel per stage, a fallback being warned about once per
    kernel name; each one whose in-place PTX differs from stock's, so that compiling the changed
    module instead would show.)"""
    path = FLA / f"{kernel}_bf16.cuda90.ttgir"
    stock = _ptx(path, plugin=False)
    real = stage_wrappers._WrappedStages._llir_in_place

    def stage_fails_once(self, src, metadata, text, lowering, plans, *more):
        original, failed = self.original[stage], []

        def fails_once(module, meta):      # the first call is on our module, later ones on stock's
            if not failed:
                failed.append(True)
                raise RuntimeError(f"injected failure of {stage} on the module built in place")
            return original(module, meta)
        self.original[stage] = fails_once
        return real(self, src, metadata, text, lowering, plans, *more)
    monkeypatch.setattr(stage_wrappers._WrappedStages, "_llir_in_place", stage_fails_once)
    with pytest.warns(RuntimeWarning, match=f"injected failure of {stage}"):
        ours = _ptx(path, plugin=True)
    assert _normalized(ours) == _normalized(stock)


def _spy_on_in_place(monkeypatch, calls):
    """``calls`` gets "in place" each time the drop-in builds in place (from the types or from a
    snapshot: one call either way on these kernels)."""
    for name in ("lower_in_place", "lower_in_place_from_types"):
        real = getattr(stage_wrappers, name)
        monkeypatch.setattr(stage_wrappers, name, lambda *args, real=real: calls.append("in place") or real(*args))


def test_booleans_are_built_on_bytes(in_place_on_3_6, monkeypatch, tmp_path):
    """Liger-Kernel's ``neighborhood_attention_qk`` (f32) converts an i1 mask (blocked -> mma) and
    an f32 tile.  The mask goes through memory as bytes: widened before the store, the load
    narrowed back, each in its own side's layout.  Both conversions are built, none is left for
    the text route (the kernel pays no print, splice and re-parse), and the drop-in's compile is
    Triton's own compile of the module as rewritten.  The subject is how a boolean is built, so
    the rule that sends the mask's plan (bytes through ``ldmatrix``) to stock is taken out
    (``fitted_model.bytes_through_matrices``; with it, the tile, stock's own code, goes too)."""
    from linear_layouts.lowering.choosing import fitted_model
    monkeypatch.setattr(fitted_model, "bytes_through_matrices", lambda plan: False)
    path = REPO / "test" / "lit" / "corpus" / "liger_kernel" / "neighborhood_attention_qk_f32_64.cuda90.ttgir"
    text, count = _rewritten_text(path)
    assert count == 2
    assert re.search(r"arith.extui %\S+ : tensor<64x64xi1, #blocked2> to tensor<64x64xi8, #blocked2>", text)
    assert re.search(r"ttg.local_load %\S+ : !ttg.memdesc<64x64xi8, #shared\d*, #smem, mutable> -> tensor<64x64xi8, #mma>",
                     text)
    assert re.search(r"arith.trunci %\S+ : tensor<64x64xi8, #mma> to tensor<64x64xi1, #mma>", text)
    rewritten = tmp_path / "rewritten.ttgir"
    rewritten.write_text(text)
    calls = []
    _spy_on_in_place(monkeypatch, calls)
    real_pipeline = stage_wrappers.run_plugin_pipeline
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline",
                        lambda *args, **more: calls.append("text") or real_pipeline(*args, **more))
    ours = _ptx(path, plugin=True)
    assert calls == ["in place"], "no conversion left for the text route"
    os.environ.pop(IN_PLACE_VARIABLE)
    assert _normalized(ours) == _normalized(_ptx(rewritten, plugin=False))


@pytest.mark.parametrize("encoding", [
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], "
    "instrShape = [16, 8]}>, kWidth = 2}>",
    "#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[32, 0]], block = []}>"])
def test_a_type_is_made_from_its_text_in_the_modules_context(encoding):
    """``parse_type`` (how a boolean's byte-wide twin type is made): the type of that text, made in
    the context given (it prints back the same); a text that is no type is an error, not an abort."""
    from linear_layouts.passes.ir.bindings import new_context
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.ir.parsing import parse_type

    context = new_context()
    text = f"tensor<64x64xi8, {encoding}>"
    assert str(parse_type(text, context)) == text
    with pytest.raises(IRError):
        parse_type(text.replace("#ttg.", "#ttg.no_such_"), context)


@pytest.mark.parametrize("element", ["i1", "f8E4M3FN", "f8E5M2", "i8"])
def test_each_element_type_is_built_with_its_own_buffer(in_place_on_3_6, monkeypatch, tmp_path, element):
    """One conversion (blocked -> mma v3, 64x64, 4 warps) of each byte-wide element type, every
    plan ours (the gate off): built in place, through a buffer of the type's bytes (i1 as i8,
    each fp8 as itself), and compiled by Triton to a kernel that stores through shared memory."""
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    text = single_convert_ttgir((64, 64), element,
                                "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>",
                                "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
                                4)
    path = tmp_path / f"{element}.ttgir"
    path.write_text(text)
    rewritten, count = _rewritten_text(path)
    assert count == 1
    buffer = "i8" if element == "i1" else element
    assert re.search(rf"ttg.local_store %\S+, %\S+ : tensor<64x64x{buffer}, #blocked\d*> -> !ttg.memdesc<64x64x{buffer}, "
                     rf"#shared\d*, #smem, mutable>", rewritten), rewritten
    assert ("arith.trunci" in rewritten) == (element == "i1")
    ptx = _ptx(path, plugin=True)
    assert "st.shared" in ptx and ".entry convert_kernel" in ptx


@pytest.mark.parametrize("variable", ["1", "", "0", "off"])
def test_the_variable_picks_the_route(in_place_on_3_6, monkeypatch, variable):
    """On, the drop-in builds in place and splices no text (every island of this kernel can be
    built); off, it splices every island as text; unset, the release decides (on under 3.6)."""
    monkeypatch.setenv(IN_PLACE_VARIABLE, variable)
    calls = []
    _spy_on_in_place(monkeypatch, calls)
    real_pipeline = stage_wrappers.run_plugin_pipeline
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline",
                        lambda *args, **more: calls.append("text") or real_pipeline(*args, **more))
    _ptx(FLA / "abc_bwd_intra_K_bf16.cuda90.ttgir", plugin=True)
    in_place = variable in ("1",) or (variable == "" and in_place_by_default())
    assert calls == (["in place"] if in_place else ["text"])


def test_what_is_not_built_in_place_is_spliced_as_text(in_place_on_3_6, sixteen_bit_rule_off, monkeypatch):
    """FLA's ``chunk_gla_bwd_kernel_inter`` under 3.6's rule (the 16-bit rule and
    ``not_worth_a_text_route`` taken out): 10 conversions built in place and one the pass lowers
    otherwise.  That one is spliced as an island into the module as rewritten (printed after the rewrite), the 10 dead converts left alone by that pass: Triton's
    ``make_llir`` gets one module holding both, and the kernel counts 11 islands."""
    path = FLA / "gla_bwd_inter_bf16.cuda90.ttgir"
    original = open(path).read()
    calls, handed = [], []
    real_pipeline = stage_wrappers.run_plugin_pipeline
    _spy_on_in_place(monkeypatch, calls)
    # that one runs once a program on 16 elements: the rule that leaves such a conversion to
    # Triton rather than pay the text route is taken out (its own test is below)
    monkeypatch.setattr(in_place, "not_worth_a_text_route", lambda *args: False)

    def pipeline(src, config, metadata, text, plans, **more):
        calls.append("text")
        assert text.count("ttg.local_store") - original.count("ttg.local_store") == 10, "printed after the rewrite"
        lowered = real_pipeline(src, config, metadata, text, plans, **more)
        handed.append(lowered.module.str())
        return lowered
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", pipeline)
    before = linear_layouts.stats().islands
    _ptx(path, plugin=True)
    assert calls == ["in place", "text"]
    assert linear_layouts.stats().islands - before == 11
    (module,) = handed
    assert module.count("ttg.local_store") - original.count("ttg.local_store") == 10
    assert module.count("ttg.convert_layout") == original.count("ttg.convert_layout") - 1, \
        "one convert spliced, the dead ones left"
    assert "llvm.inline_asm" in module or "llvm.store" in module, "the island itself"


def test_a_conversion_run_once_in_a_register_pays_no_text_route(in_place_on_3_6, monkeypatch):
    """The same kernel under 3.6's rule: its one conversion the pass would lower otherwise
    (``tensor<1x16xf32, #mma> -> #blocked`` after the loop, 16 elements over 128 threads: a
    shuffle plan, in a kernel whose work is in a loop) is left to Triton
    (``in_place.not_worth_a_text_route``), so the module is
    neither printed nor spliced: Triton's ``make_llir`` gets the module as rewritten in place,
    that convert still in it.  The converts inside the loop (16 x i1, 16 x i32) and the 64x16
    tiles are not the rule's, nor is FLA's ``l2norm_fwd``, a kernel without a loop: its one
    conversion (8 elements) still goes the text route."""
    path = FLA / "gla_bwd_inter_bf16.cuda90.ttgir"
    calls = []
    real_pipeline = stage_wrappers.run_plugin_pipeline
    _spy_on_in_place(monkeypatch, calls)
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline",
                        lambda *args, **more: calls.append("text") or pytest.fail("no text route expected"))
    before = linear_layouts.stats().islands
    _ptx(path, plugin=True)
    assert calls == ["in place"]
    assert linear_layouts.stats().islands - before >= 1        # the ones built in place
    from linear_layouts.passes.ir.bindings import new_context
    from linear_layouts.passes.ir.parsing import triton_module_from_text
    module = triton_module_from_text(open(path).read(), new_context())
    converts = []
    module.walk(lambda op: converts.append(op) if op.get_name() == "ttg.convert_layout" else None)
    tensors = [in_place.Value(str(op.get_result(0).get_type()), None, 0).tensor_type for op in converts]
    once = [in_place.runs_once_in_a_register(op, t, 128) for op, t in zip(converts, tensors)]
    assert sum(once) == 7 and len(once) == 20
    assert [t.shape for t, o in zip(tensors, once) if not o and t.shape in ((16,), (1, 16))] == [(16,), (1, 16)] * 2
    calls.clear()
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", lambda *args, **more: calls.append("text") or
                        real_pipeline(*args, **more))
    _ptx(FLA / "l2norm_fwd_bf16.cuda90.ttgir", plugin=True)
    assert calls == ["in place", "text"]


@pytest.mark.parametrize("text_route_rule", [True, False])
def test_the_types_build_what_the_snapshot_builds(in_place_on_3_6, monkeypatch, text_route_rule):
    """Without a warp-specialized region or a call, the drop-in builds from the conversions' types
    (``lower_in_place_from_types``, no snapshot): on every FLA and Liger-Kernel sm_90 kernel Triton
    parses, the module comes out character for character as the snapshot's route builds it, with
    the same counts and the same conversions left to Triton (one kernel at least builds, one
    leaves a conversion for the text route; with ``not_worth_a_text_route`` one kernel,
    gla_bwd_inter, leaves one to Triton instead, without it none)."""
    if not text_route_rule:
        monkeypatch.setattr(in_place, "not_worth_a_text_route", lambda *args: False)
    from linear_layouts.lowering.choosing.plan_memory import ModulePlans
    from linear_layouts.passes.ir.bindings import bindings, new_context
    from linear_layouts.passes.lower_conversions import LowerConversions
    from linear_layouts.passes.drop_in.plugin_config import Mode, PluginConfig

    config = PluginConfig(Mode.LINEAR, (LowerConversions(),))

    def parsed(path):
        context = new_context()
        handle = bindings().parse_mlir_module(str(path), context)
        handle.context = context
        return handle
    compared, counts = 0, []
    for path in sorted(glob.glob(str(FLA / "*.cuda90.ttgir"))
                       + glob.glob(str(REPO / "test" / "lit" / "corpus" / "liger_kernel" / "*.cuda90.ttgir"))):
        try:
            by_types, by_snapshot = parsed(path), parsed(path)
        except Exception:      # ops this Triton does not know: not a kernel it compiles
            continue
        names = stage_wrappers.op_names(by_types)
        if stage_wrappers.SNAPSHOT_NEEDED.intersection(names) or "ttg.convert_layout" not in names:
            continue
        types_plans, snapshot_plans = ModulePlans(None), ModulePlans(None)
        from_types = in_place.lower_in_place_from_types(by_types, config, types_plans)
        from_snapshot = in_place.lower_in_place(by_snapshot, by_snapshot.str(), "k", LowerConversions(), snapshot_plans)
        assert (from_types.built, from_types.left_ours) == (from_snapshot.built, from_snapshot.left_ours), path
        assert len(types_plans.left_to_stock) == len(snapshot_plans.left_to_stock), path
        assert by_types.str() == by_snapshot.str(), path
        compared += 1
        counts.append((from_types.built, from_types.left_ours, len(types_plans.left_to_stock)))
    assert compared >= 40
    assert any(built for built, _, _ in counts)
    assert any(left for _, left, _ in counts)
    assert sum(1 for _, _, stock in counts if stock) == (1 if text_route_rule else 0)


@pytest.mark.parametrize("release, variable, enabled, mark", [
    ((3, 6), "", True, ""), ((3, 6), "0", False, "-text-islands"), ((3, 6), "1", True, ""),
    ((3, 8), "", False, ""), ((3, 8), "1", True, "-in-place"), ((3, 9), "off", False, "")])
def test_the_release_decides_the_default(monkeypatch, release, variable, enabled, mark):
    """Building in place is the default under the release it was measured on (3.6); elsewhere the
    variable turns it on.  The cache key names a route other than the release's default."""
    from linear_layouts.passes.drop_in import plugin_config
    from linear_layouts.passes.ir import bindings
    monkeypatch.setattr(bindings, "installed_triton_version", lambda: release)
    monkeypatch.setenv(IN_PLACE_VARIABLE, variable)
    assert plugin_config.in_place_enabled() is enabled
    assert plugin_config.in_place_mark() == mark


# An f16 ROWS x 8 tile converted between two blocked layouts and back in a loop, over ``WARPS``
# warps (the held-out fresh9301/24 with 2 warps and 64 rows).  Every element stays in its warp
# (rows 0-31 are warp 0's in both layouts): the plan, one round, waits with ``bar.warp.sync``.
WARP_LOCAL_LOOP = """
#src = #ttg.blocked<{sizePerThread = [2, 8], threadsPerWarp = [16, 2], warpsPerCTA = [WARPS, 1], order = [1, 0]}>
#dst = #ttg.blocked<{sizePerThread = [8, 2], threadsPerWarp = [4, 8], warpsPerCTA = [WARPS, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = WARPS : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @warp_local(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>) {
    %r0 = tt.make_range {end = ROWS : i32, start = 0 : i32} : tensor<ROWSxi32, #ttg.slice<{dim = 1, parent = #src}>>
    %r0e = tt.expand_dims %r0 {axis = 1 : i32} : tensor<ROWSxi32, #ttg.slice<{dim = 1, parent = #src}>> -> tensor<ROWSx1xi32, #src>
    %s0 = arith.constant dense<8> : tensor<ROWSx1xi32, #src>
    %rows = arith.muli %r0e, %s0 : tensor<ROWSx1xi32, #src>
    %rowsb = tt.broadcast %rows : tensor<ROWSx1xi32, #src> -> tensor<ROWSx8xi32, #src>
    %r1 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 0, parent = #src}>>
    %r1e = tt.expand_dims %r1 {axis = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 0, parent = #src}>> -> tensor<1x8xi32, #src>
    %colsb = tt.broadcast %r1e : tensor<1x8xi32, #src> -> tensor<ROWSx8xi32, #src>
    %offs = arith.addi %rowsb, %colsb : tensor<ROWSx8xi32, #src>
    %xs = tt.splat %X : !tt.ptr<f16> -> tensor<ROWSx8x!tt.ptr<f16>, #src>
    %xp = tt.addptr %xs, %offs : tensor<ROWSx8x!tt.ptr<f16>, #src>, tensor<ROWSx8xi32, #src>
    %x = tt.load %xp : tensor<ROWSx8x!tt.ptr<f16>, #src>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %cn = arith.constant 64 : i32
    %out = scf.for %i = %c0 to %cn step %c1 iter_args(%a = %x) -> (tensor<ROWSx8xf16, #src>) : i32 {
      %y = ttg.convert_layout %a : tensor<ROWSx8xf16, #src> -> tensor<ROWSx8xf16, #dst>
      %y2 = arith.addf %y, %y : tensor<ROWSx8xf16, #dst>
      %b = ttg.convert_layout %y2 : tensor<ROWSx8xf16, #dst> -> tensor<ROWSx8xf16, #src>
      scf.yield %b : tensor<ROWSx8xf16, #src>
    }
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<ROWSx8x!tt.ptr<f16>, #src>
    %yp = tt.addptr %ys, %offs : tensor<ROWSx8x!tt.ptr<f16>, #src>, tensor<ROWSx8xi32, #src>
    tt.store %yp, %out : tensor<ROWSx8x!tt.ptr<f16>, #src>
    tt.return
  }
}
"""


def _warp_local_kernel(tmp_path, monkeypatch, warps, rows):
    """``WARP_LOCAL_LOOP`` over ``warps`` and ``rows`` in a file, and a list that gets what each
    build in place (from the types) did."""
    path = tmp_path / f"warp_local_{warps}.ttgir"
    path.write_text(WARP_LOCAL_LOOP.replace("WARPS", str(warps)).replace("ROWS", str(rows)))
    built = []
    real = stage_wrappers.lower_in_place_from_types
    monkeypatch.setattr(stage_wrappers, "lower_in_place_from_types",
                        lambda *args: built.append(real(*args)) or built[-1])
    return path, built


def _barriers(ptx):
    return ptx.count("bar.sync"), ptx.count("bar.warp.sync")


def test_a_plan_that_stays_in_its_warp_is_spliced_as_text(in_place_on_3_6, sixteen_bit_rule_off, monkeypatch, tmp_path):
    """Built in place, Triton's barrier analysis would put a CTA barrier between our stores and
    loads (and another before the next trip's stores) where the plan waits for its own warp:
    ``waits_for_its_warp_only`` sends such plans the text route.  The drop-in's kernel then has
    the text route's barriers exactly (CTA barriers only around the two conversions, each
    waiting for its warp inside); building them in place anyway leaves more ``bar.sync``."""
    path, built = _warp_local_kernel(tmp_path, monkeypatch, warps=2, rows=64)
    in_place_ptx = _ptx(path, plugin=True)
    assert [(b.built, b.left_ours) for b in built] == [(0, 2)], "both conversions left to the text route"
    monkeypatch.setenv(IN_PLACE_VARIABLE, "0")
    text_ptx = _ptx(path, plugin=True)
    assert _barriers(in_place_ptx) == _barriers(text_ptx)
    assert _barriers(text_ptx)[1] >= 2, "each conversion waits for its warp"

    monkeypatch.setenv(IN_PLACE_VARIABLE, "1")
    monkeypatch.setattr(in_place, "waits_for_its_warp_only", lambda plan: False)
    built.clear()
    forced_ptx = _ptx(path, plugin=True)
    assert [(b.built, b.left_ours) for b in built] == [(2, 0)]
    assert _barriers(forced_ptx)[0] > _barriers(text_ptx)[0], "in place: CTA barriers instead of the warp's"


def test_in_a_cta_of_one_warp_the_plan_is_built_in_place(in_place_on_3_6, monkeypatch, tmp_path):
    """One warp: the plan's warp barrier and Triton's CTA barrier wait for the same 32 threads,
    so the conversions are built in place as before.  (The gate is off: by default a CTA of one
    warp leaves its shared-memory conversions to stock.)"""
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    path, built = _warp_local_kernel(tmp_path, monkeypatch, warps=1, rows=32)
    _ptx(path, plugin=True)
    assert [(b.built, b.left_ours) for b in built] == [(2, 0)]


BRANCHED = """
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%c: i1, %p: !tt.ptr<i32>) {
    %a = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #blocked>
    %top = ttg.convert_layout %a : tensor<16xi32, #blocked> -> tensor<16xi32, #blocked1>
    scf.if %c {
      %inner = ttg.convert_layout %a : tensor<16xi32, #blocked> -> tensor<16xi32, #blocked1>
      %s = tt.splat %p : !tt.ptr<i32> -> tensor<16x!tt.ptr<i32>, #blocked1>
      tt.store %s, %inner : tensor<16x!tt.ptr<i32>, #blocked1>
    }
    %s2 = tt.splat %p : !tt.ptr<i32> -> tensor<16x!tt.ptr<i32>, #blocked1>
    tt.store %s2, %top : tensor<16x!tt.ptr<i32>, #blocked1>
    tt.return
  }
}
"""


def test_a_conversion_under_a_branch_does_not_run_once_in_the_sense_of_the_rule():
    """``runs_once_in_a_register`` asks for the function's top block: 16 x i32 (one register a
    thread of 128 holds 4096 bits) directly in the body: True; the same convert inside an
    ``scf.if``: False, as inside a loop."""
    from linear_layouts.passes.ir.bindings import new_context
    from linear_layouts.passes.ir.parsing import triton_module_from_text
    module = triton_module_from_text(BRANCHED, new_context())
    converts = []
    module.walk(lambda op: converts.append(op) if op.get_name() == "ttg.convert_layout" else None)
    tensors = [in_place.Value(str(op.get_result(0).get_type()), None, 0).tensor_type for op in converts]
    once = sorted(in_place.runs_once_in_a_register(op, t, 128) for op, t in zip(converts, tensors))
    assert once == [False, True]
    assert not any(in_place.runs_once_in_a_register(op, t, 8) for op, t in zip(converts, tensors))   # 512 > 256 bits
