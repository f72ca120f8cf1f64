"""The advice priced on the whole kernel (``passes/gluon/kernel_price.py``, ``layout_advice``,
``apply_advice``): a finding's gain is the kernel's modelled cost as written over its cost with
the suggestion applied as ``ll-apply-advice`` applies it; a suggestion for one op that makes
the kernel costlier elsewhere (a store after a loop whose layout the loop's loads share) is no
finding and is not applied; the advice leaves the layouts ``ll-resolve-auto-layouts`` chose;
every layout is written as a Gluon expression; an alignment that limits the vector is said."""

import re
import sys

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")

from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.lowering.target import target_named  # noqa: E402
from linear_layouts.passes.advice import layout_advice  # noqa: E402
from linear_layouts.passes.advice.apply_advice import apply_advice  # noqa: E402
from linear_layouts.passes.gluon.kernel_price import kernel_price  # noqa: E402
from linear_layouts.passes.advice.layout_advice import GLOBAL_ACCESS, advise, without_resolved  # noqa: E402
from linear_layouts.passes.gluon.resolution_record import METADATA_KEY, Resolution  # noqa: E402
from linear_layouts.passes.gluon.kernel_price import modelled_cost  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402
from support import REPO  # noqa: E402

SM90 = GPUTarget("cuda", 90, 32)
ALIGNED = {(i,): [["tt.divisibility", 16]] for i in range(4)}
SIGNATURE = {"src": "*fp32", "dst": "*fp32", "M": "i32", "N": "i32"}

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py: a private cache, every compile run


@gluon.jit
def column_sum_sliced_store(src, dst, M, N, BM: gl.constexpr, BN: gl.constexpr):
    # 16-byte loads in the loop, a cross-warp reduction per step, one store after the loop in
    # a slice of the loads' layout (every warp holds the sums: copies the store repeats)
    L: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])
    pn = gl.program_id(0) * BN
    c = pn + gl.arange(0, BN, layout=gl.SliceLayout(0, L))
    acc = gl.zeros([BN], gl.float32, layout=gl.SliceLayout(0, L))
    for m in range(0, M, BM):
        r = m + gl.arange(0, BM, layout=gl.SliceLayout(1, L))
        acc += gl.sum(gl.load(src + r[:, None] * N + c[None, :]), axis=0)
    gl.store(dst + c, acc)


@gluon.jit
def column_sum_row_store(src, dst, M, N, BM: gl.constexpr, BN: gl.constexpr):
    # the same, the sums stored as a 1xBN row in the loads' own layout: the store's suggestion
    # is an edit of the layout variable the loop's loads use
    L: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])
    pn = gl.program_id(0) * BN
    c = pn + gl.arange(0, BN, layout=gl.SliceLayout(0, L))
    acc = gl.zeros([BN], gl.float32, layout=gl.SliceLayout(0, L))
    for m in range(0, M, BM):
        r = m + gl.arange(0, BM, layout=gl.SliceLayout(1, L))
        acc += gl.sum(gl.load(src + r[:, None] * N + c[None, :]), axis=0)
    gl.store(dst + c[None, :], acc[None, :])


def _ttgir(kernel, constexprs, signature=SIGNATURE, attrs=ALIGNED):
    return triton.compile(GluonASTSource(kernel, signature, constexprs, attrs=attrs), target=SM90).asm["ttgir"]


@pytest.mark.parametrize("kernel", [column_sum_sliced_store, column_sum_row_store])
def test_a_store_after_the_loop_gets_no_finding_that_narrows_the_loops_loads(kernel):
    ttgir = _ttgir(kernel, {"BM": 32, "BN": 128})
    stores = [f for f in advise(ttgir, "sm_90") if f.op == "tt.store" and f.gain > 1.0]
    assert stores == []
    # the store alone would gain (4-byte accesses with no copies, where each warp repeats the
    # row): what the finding was priced on before; the kernel's gain is what counts
    module = parse_module(ttgir, "<column sum>")
    unpriced = [f for f in _per_access_findings(ttgir) if f.op == "tt.store" and f.kind == GLOBAL_ACCESS]
    assert unpriced and all(f.gain > 3 for f in unpriced)
    assert all(_whole_kernel_gain(module, f) < layout_advice.MIN_KERNEL_GAIN for f in unpriced)


@pytest.mark.parametrize("kernel", [column_sum_sliced_store, column_sum_row_store])
def test_apply_advice_leaves_the_column_sum_unchanged(kernel):
    module = parse_module(_ttgir(kernel, {"BM": 32, "BN": 128}), "<column sum>")
    before = module.print(debuginfo=True)
    applied = apply_advice(module, "sm_90")
    assert applied.rounds == 0 and module.print(debuginfo=True) == before
    assert applied.cost_after == applied.cost_before


def _per_access_findings(ttgir):
    """The findings as the access alone prices them (no whole-kernel pricing, no threshold)."""
    module = parse_module(ttgir, "<kernel>")
    target = target_named("sm_90")
    original = layout_advice._priced_on_the_kernel
    layout_advice._priced_on_the_kernel = lambda _m, groups, _t, _trials=None: [f for group in groups for f in group]
    try:
        return layout_advice.advise_module(module, ttgir, target, merged=False)
    finally:
        layout_advice._priced_on_the_kernel = original


def _whole_kernel_gain(module, finding):
    from linear_layouts.passes.advice.advice_edits import advised_module
    target = target_named("sm_90")
    advised = advised_module(module, module.print(debuginfo=True), [finding], target)
    return modelled_cost(module, target) / modelled_cost(advised, target)


def test_the_transposes_bank_conflicts_still_gain_the_kernel():
    sys.path.insert(0, str(REPO / "examples"))
    import gluon_advice_example as example
    ttgir = _ttgir(example.transpose, {"N": 64}, {"X": "*fp32", "Y": "*fp32"}, example.ALIGNED)
    [shared] = [f for f in advise(ttgir, "sm_90") if f.op == "ttg.local_alloc"]
    assert shared.suggestion == "gl.SwizzledSharedLayout(4, 4, 8, [1, 0])" and shared.gain > 1.2
    module = parse_module(ttgir, "<transpose>")
    applied = apply_advice(module, "sm_90")
    assert applied.rounds >= 1 and applied.cost_after < applied.cost_before


def test_the_kernel_price_is_the_resolutions_model():
    module = parse_module(_ttgir(column_sum_row_store, {"BM": 32, "BN": 128}), "<column sum>")
    target = target_named("sm_90")
    assert kernel_price(module, target).cost == pytest.approx(modelled_cost(module, target))


@gluon.jit
def layer_norm_auto(X, Y, W, B, N: gl.constexpr, BM: gl.constexpr, eps: gl.constexpr):
    # every layout left automatic; X and Y with no alignment known, W and B 16-byte aligned
    rows = gl.program_id(0) * BM + gl.arange(0, BM)
    cols = gl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = gl.load(X + offs).to(gl.float32)
    mean = gl.sum(x, axis=1) / N
    xc = x - mean[:, None]
    rstd = 1 / gl.sqrt(gl.sum(xc * xc, axis=1) / N + eps)
    w = gl.load(W + cols).to(gl.float32)
    b = gl.load(B + cols).to(gl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    gl.store(Y + offs, y.to(gl.float16))


def _layer_norm_resolved(bm):
    signature = {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16"}
    attrs = {(2,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]}
    with linear_layouts.enabled(resolve_auto_layouts=True):
        kernel = triton.compile(GluonASTSource(layer_norm_auto, signature, {"N": 1024, "BM": bm, "eps": 1e-5},
                                               attrs=attrs), target=SM90)
    return kernel.asm["ttgir"], Resolution.from_record(getattr(kernel.metadata, METADATA_KEY))


@pytest.mark.parametrize("bm", [4, 16])
def test_no_finding_changes_a_layout_the_resolution_chose(bm):
    ttgir, resolution = _layer_norm_resolved(bm)
    assert resolution.resolved
    # the W and B loads (16-byte aligned pointers): with 4 rows, 2-byte accesses in a slice of
    # the resolved layout, which alone would gain from 16-byte vectors (the kernel would not);
    # with 16 rows the resolution itself loads them 16 bytes at a time (their columns computed
    # again in that layout, the values converted)
    wide = [f for f in _per_access_findings(ttgir) if f.kind == GLOBAL_ACCESS and "16-byte" in f.finding]
    if bm == 4:
        assert wide
    else:
        assert len(re.findall(r"tt\.load .*tensor<1024x!tt\.ptr<f16>, #blocked1>", ttgir)) == 2
        assert "#blocked1 = #ttg.blocked<{sizePerThread = [8]" in ttgir
    assert [f for f in advise(ttgir, "sm_90") if f.gain > 1.0] == []
    # and the report keeps the resolution's choices whatever the model says
    assert without_resolved(_per_access_findings(ttgir), resolution) == []


@pytest.mark.parametrize("bm", [4, 16])
def test_the_resolution_says_the_alignment_limits_the_vector(bm):
    _ttgir_text, resolution = _layer_norm_resolved(bm)
    [group] = resolution.groups
    assert "its pointers' alignment is not known: 2-byte accesses at most" in group.why


def test_findings_are_gluon_expressions():
    ttgir = _ttgir(column_sum_sliced_store, {"BM": 32, "BN": 128})
    [store] = [f for f in _per_access_findings(ttgir) if f.op == "tt.store"]
    assert "16-byte accesses in gl.SliceLayout(0, gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0]))" in store.finding
    assert store.suggestion == "gl.BlockedLayout([1], [32], [4], [0])"
    sys.path.insert(0, str(REPO / "examples"))
    import gluon_advice_example as example
    for kernel, constexprs in ((example.column_sums, {"M": 64, "N": 64}), (example.transpose, {"N": 64}),
                               (example.scale_rows, {"N": 256}), (example.copy, {"N": 1024})):
        findings = advise(_ttgir(kernel, constexprs, {"X": "*fp32", "Y": "*fp32"}, example.ALIGNED), "sm_90")
        assert findings and not [f for f in findings if "#ttg" in f.finding + f.suggestion]


@gluon.jit
def scale_rows_unaligned(src, dst, N: gl.constexpr):
    wide: gl.constexpr = gl.BlockedLayout([8], [32], [4], [0])     # a tile 4 times the tensor
    offsets = gl.arange(0, N, layout=wide)
    gl.store(dst + offsets, gl.load(src + offsets) * 2.0)


def test_an_unaligned_access_says_its_alignment_limits_the_vector():
    ttgir = _ttgir(scale_rows_unaligned, {"N": 256}, {"src": "*fp32", "dst": "*fp32"}, {})
    accesses = [f for f in advise(ttgir, "sm_90") if f.kind == GLOBAL_ACCESS]
    assert accesses and all("its pointers' alignment is not known: 4-byte accesses at most" in f.finding
                            for f in accesses)
    assert all(f.suggestion == "gl.BlockedLayout([1], [32], [4], [0])" for f in accesses)
