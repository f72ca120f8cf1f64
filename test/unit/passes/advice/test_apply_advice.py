"""``ll-apply-advice`` (``passes/advice/apply_advice.py``) and ``enable(apply_advice=True)``: the
advice applied to newcomer kernels gives the kernel an author gets by writing the suggested
layouts, and the advice then has nothing left to say (a fixed point)."""

import os
import sys
from collections import Counter

import pytest

from support import REPO  # noqa: E402

pytest.importorskip("triton.experimental.gluon")
sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

from linear_layouts.passes.advice.apply_advice import apply_advice, applicable  # noqa: E402
from linear_layouts.passes.advice.layout_advice import REPLICATED, advise  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402

SM90 = GPUTarget("cuda", 90, 32)
ALIGNED4 = {(i,): [["tt.divisibility", 16]] for i in range(4)}


pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py: a private cache, every compile run


@gluon.jit
def transpose_by_hand(src, dst, M, N, BM: gl.constexpr, BN: gl.constexpr):
    # the advice for the newcomer's transpose written by hand: the store's suggestion, and the
    # load's suggestion ([1, 4], [2, 16], ...) with its lanes split [8, 4] (the same sectors; the
    # conversion to the store's layout then moves 16 bytes per shared access: _cheapest_to_convert)
    load_layout: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    store_layout: gl.constexpr = gl.BlockedLayout([4, 1], [16, 2], [1, 4], [0, 1])
    pm = gl.program_id(0) * BM
    pn = gl.program_id(1) * BN
    r = pm + gl.arange(0, BM, layout=gl.SliceLayout(1, load_layout))
    c = pn + gl.arange(0, BN, layout=gl.SliceLayout(0, load_layout))
    x = gl.convert_layout(gl.load(src + r[:, None] * N + c[None, :]), store_layout)
    ro = pm + gl.arange(0, BM, layout=gl.SliceLayout(1, store_layout))
    co = pn + gl.arange(0, BN, layout=gl.SliceLayout(0, store_layout))
    gl.store(dst + co[None, :] * M + ro[:, None], x)


def _newcomer(name):
    from harness.gluon_auto_kernels import cases
    case = next(c for c in cases() if c.name == name)
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(len(case.signature))}
    return GluonASTSource(case.kernel, case.signature, {**case.constexprs, **case.layouts["newcomer"]}, attrs=aligned)


def _memory_ops(module) -> Counter:
    """(op, layout of its data) of every load, store and conversion: what decides the kernel's accesses."""
    out = Counter()
    for op in module.walk():
        if op.name in ("tt.load", "tt.store"):
            out[(op.name, op.operands[0].tensor_type.encoding)] += 1
        elif op.name == "ttg.convert_layout" and op.results[0].tensor_type.element_type == "f32":
            out[(op.name, op.operands[0].tensor_type.encoding, op.results[0].tensor_type.encoding)] += 1
    return out


def test_the_newcomers_transpose_advised_is_the_kernel_written_with_the_suggestions():
    advised = parse_module(triton.compile(_newcomer("transpose"), target=SM90).asm["ttgir"], "<newcomer>")
    applied = apply_advice(advised, "sm_90")
    assert applied.rounds == 1 and applied.left == []
    by_hand = triton.compile(GluonASTSource(transpose_by_hand, {"src": "*fp32", "dst": "*fp32", "M": "i32", "N": "i32"},
                                            {"BM": 64, "BN": 64}, attrs=ALIGNED4), target=SM90)
    expected = _memory_ops(parse_module(by_hand.asm["ttgir"], "<by hand>"))
    assert _memory_ops(advised) == expected
    assert len(expected) == 3      # the load, the conversion between the two layouts, the store


@pytest.mark.parametrize("name", ["copy", "transpose", "column_sum", "row_softmax"])
def test_the_advice_applied_is_a_fixed_point(name):
    ttgir = triton.compile(_newcomer(name), target=SM90).asm["ttgir"]
    assert applicable(advise(ttgir, "sm_90", merged=False))          # something to apply
    module = parse_module(ttgir, "<newcomer>")
    apply_advice(module, "sm_90")
    assert applicable(advise(module.print(debuginfo=True), "sm_90", merged=False)) == []


def test_a_row_softmax_keeps_a_warp_per_row():
    findings = advise(triton.compile(_newcomer("row_softmax"), target=SM90).asm["ttgir"], "sm_90")
    assert {f.suggestion for f in findings} == {"gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])"}


@gluon.jit
def row_copy(src, dst, N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])   # four warps on a dim of one
    r = gl.arange(0, 1, layout=gl.SliceLayout(1, layout))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    offsets = r[:, None] * N + c[None, :]
    gl.store(dst + offsets, gl.load(src + offsets))


def test_replicated_warps_get_a_layout_with_the_warps_along_the_row():
    ttgir = triton.compile(GluonASTSource(row_copy, {"src": "*fp32", "dst": "*fp32"}, {"N": 2048},
                                          attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}),
                           target=SM90).asm["ttgir"]
    replicated = [f for f in advise(ttgir, "sm_90") if f.kind == REPLICATED]
    assert [f.suggestion for f in replicated] == ["gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])"]
    module = parse_module(ttgir, "<row copy>")
    apply_advice(module, "sm_90")
    assert [f for f in advise(module.print(debuginfo=True), "sm_90") if f.kind == REPLICATED] == []


def test_enable_apply_advice_compiles_the_newcomers_transpose_with_16_byte_accesses():
    import linear_layouts
    before = linear_layouts.stats().advice_applied
    stock = triton.compile(_newcomer("transpose"), target=SM90).asm["ptx"]
    with linear_layouts.enabled(apply_advice=True):
        ptx = triton.compile(_newcomer("transpose"), target=SM90).asm["ptx"]
    assert (stock.count("ld.global.v4"), stock.count("st.global.v4")) == (0, 0)
    assert (ptx.count("ld.global.v4"), ptx.count("st.global.v4")) == (8, 8)
    # the conversion between the load's and the store's layouts: 16 bytes per shared access, as
    # the expert's transpose (gluon_forms_builtin.py), not 32 scalar stores and loads
    assert (ptx.count("st.shared.v4"), ptx.count("ld.shared.v4")) == (8, 8)
    assert ptx.count("st.shared.b32") == ptx.count("ld.shared.b32") == 0
    assert linear_layouts.stats().advice_applied == before + 1


def test_lane_variants_keep_elements_warps_and_order_and_hold_no_copies():
    from linear_layouts.passes.advice.advice_edits import _lane_variants, _power_splits
    assert _power_splits(8, 2) == [(1, 8), (2, 4), (4, 2), (8, 1)]
    assert len(_power_splits(32, 3)) == 21 and all(a * b * c == 32 for a, b, c in _power_splits(32, 3))
    variants = _lane_variants("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], "
                              "warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 64))
    # [1, 32] would tile 128 columns of 64, [32, 1] with 4 warps 128 rows (copies); [2, 16] is the layout itself
    assert [v.split("threadsPerWarp = ")[1].split("]")[0] + "]" for v in variants] == ["[4, 8]", "[8, 4]", "[16, 2]"]
    assert all("sizePerThread = [1, 4]" in v and "warpsPerCTA = [4, 1]" in v and "order = [1, 0]" in v
               for v in variants)
    assert _lane_variants("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>", (64,)) == []


def test_gap_recovery_in_geomean_terms():
    from harness.gluon_forms import gap_recovery
    assert gap_recovery([1.5], [1.05]) == pytest.approx(0.9)
    assert gap_recovery([4.0, 1.0], [1.0, 1.0]) == pytest.approx(1.0)      # geomean 2.0 -> 1.0
    assert gap_recovery([2.0, 2.0], [1.5, 1.5]) == pytest.approx(0.5)
    assert gap_recovery([1.0], [1.0]) != gap_recovery([1.0], [1.0])        # nan: no gap


def test_a_layout_the_resolution_chose_is_never_changed():
    # enable(resolve_auto_layouts=True, apply_advice=True) hands the advice the resolution the
    # ttgir stage recorded: a layout it chose is final, even where the advice would change it
    from linear_layouts.passes.gluon.resolution_record import GroupRemark, Resolution

    ttgir = triton.compile(_newcomer("copy"), target=SM90).asm["ttgir"]
    module = parse_module(ttgir, "<newcomer>")
    [layout] = {op.operands[0].tensor_type.encoding for op in module.walk() if op.name == "tt.load"}
    assert applicable(advise(ttgir, "sm_90", merged=False))          # the advice would change it
    chose_it = Resolution(resolved=True, groups=[GroupRemark(2, "tt.load", "<newcomer>", layout, "chosen", [])])
    applied = apply_advice(module, "sm_90", resolution=chose_it)
    assert applied.rounds == 0 and applied.left == []
    assert module.print(debuginfo=True) == parse_module(ttgir, "<newcomer>").print(debuginfo=True)


def test_named_findings_are_applied_alone_as_the_edit_their_gain_was_priced_on():
    # the newcomer's transpose has two findings; its store's alone makes the stores 16 bytes
    # wide and leaves the loads as written, and the kernel's cost falls by exactly the store's gain
    from linear_layouts.lowering import target_named
    from linear_layouts.passes.advice.apply_advice import ranked_findings
    ttgir = triton.compile(_newcomer("transpose"), target=SM90).asm["ttgir"]
    ranked = ranked_findings(parse_module(ttgir, "<newcomer>"), target_named("sm_90"))
    assert [f.key for f in ranked] == ["tt.store#0:global-access", "tt.load#0:global-access"]
    module = parse_module(ttgir, "<newcomer>")
    applied = apply_advice(module, "sm_90", findings=["tt.store#0:global-access"])
    assert applied.rounds == 1 and [f.key for f in applied.left] == ["tt.load#0:global-access"]
    assert applied.cost_before / applied.cost_after == pytest.approx(ranked[0].gain)
    assert [f.key for f in ranked_findings(module, target_named("sm_90"))] == ["tt.load#0:global-access"]


def test_enable_advice_findings_compiles_with_the_named_finding_only():
    import linear_layouts
    from linear_layouts.passes.drop_in import hook
    with linear_layouts.enabled(apply_advice=True, advice_findings="tt.store#0:global-access") as alone:
        ptx = triton.compile(_newcomer("transpose"), target=SM90).asm["ptx"]
    assert (ptx.count("ld.global.v4"), ptx.count("st.global.v4")) == (0, 8)
    with linear_layouts.enabled(apply_advice=True) as every:
        pass
    assert alone.cache_key != every.cache_key          # never served one another from Triton's cache
    assert alone.advice_findings == ("tt.store#0:global-access",)
    with pytest.raises(hook.PluginError, match="needs apply_advice=True"):
        linear_layouts.enable(advice_findings="tt.store#0:global-access")
    with pytest.raises(hook.PluginError, match="'store' is not a finding key"):
        linear_layouts.enable(apply_advice=True, advice_findings="store")
    assert hook.active_config() is None


def test_a_named_finding_the_kernel_does_not_have_is_a_clear_failure():
    from linear_layouts.passes.framework import PassFailure
    from linear_layouts.passes.pipeline import PipelineError, parse_pipeline
    module = parse_module(triton.compile(_newcomer("transpose"), target=SM90).asm["ttgir"], "<newcomer>")
    with pytest.raises(PassFailure, match=r"no finding tt.store#3:global-access in this kernel \(its findings: "
                                          r"tt.store#0:global-access, tt.load#0:global-access\)"):
        apply_advice(module, "sm_90", findings=["tt.store#3:global-access"])
    [named] = parse_pipeline("ll-apply-advice{findings=tt.load#0:global-access,tt.store#0:global-access}")
    assert named.findings == "tt.load#0:global-access,tt.store#0:global-access"
    with pytest.raises(PipelineError, match="'load' is not a finding key"):
        parse_pipeline("ll-apply-advice{findings=load}")


def _structure(module) -> list:
    """Per op in walk order: its name, result types, block argument types, and which op's
    result (or block argument) each operand is."""
    ops = list(module.walk())
    where = {}
    for i, op in enumerate(ops):
        where.update({id(r): (i, r.index) for r in op.results})
        where.update({id(a): (i, "argument", a.index) for region in op.regions for block in region.blocks
                      for a in block.arguments})
    return [(op.name, [r.type for r in op.results], [where.get(id(v)) for v in op.operands],
             [[a.type for a in block.arguments] for region in op.regions for block in region.blocks]) for op in ops]


def _trials(name):
    """(module, its text, the target, every edit a round of ll-apply-advice tries) for a newcomer kernel."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.advice.layout_advice import advise_module
    module = parse_module(triton.compile(_newcomer(name), target=SM90).asm["ttgir"], "<newcomer>")
    text, target = module.print(debuginfo=True), target_named("sm_90")
    findings = applicable(advise_module(module, text, target, merged=False))
    return module, text, target, [[f] for f in findings] + ([findings] if len(findings) > 1 else [])


@pytest.mark.parametrize("name", ["copy", "transpose", "column_sum", "row_softmax"])
def test_a_trial_built_in_python_is_the_module_its_text_parses_to(name):
    # what rematerialization reads before the one parse of a trial (advice_edits._Mirror)
    from linear_layouts.passes.advice.advice_edits import _edited_and_built
    module, text, target, subsets = _trials(name)
    assert subsets
    for subset in subsets:
        edited, built = _edited_and_built(module, text, subset, target, [])
        assert built is not None
        assert _structure(built) == _structure(parse_module(edited, module.filename))


def test_the_conversions_an_edit_writes_are_located_where_a_parse_of_their_lines_places_them():
    # advice_edits._located: the location written is the one the print of a parse gives the op
    # (the kernel compiled is the same), and the trial has no op located in a temporary file
    import re
    from linear_layouts.passes.advice.advice_edits import edited_text
    module, text, target, subsets = _trials("transpose")
    edited = edited_text(module, text, subsets[-1], target, [])
    written = [line for line in edited.split("\n") if "ttg.convert_layout" in line and "%ll_advice" in line]
    assert len(written) == 2        # the load's pointers into its own layout, its result back to the store's
    unlocated = re.sub(r' loc\("<newcomer>":\d+:\d+\)$', "", edited, flags=re.M)
    assert unlocated.count("\n") == edited.count("\n") and unlocated != edited
    located = parse_module(edited, module.filename)
    assert not located.has_temporary_locations
    assert located.print(debuginfo=True) == parse_module(unlocated, module.filename).print(debuginfo=True)
