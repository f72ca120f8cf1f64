"""``ll-resolve-auto-layouts`` and ``enable(resolve_auto_layouts=True)``: Gluon kernels written
with automatic layouts, compiled end to end for sm_90 (the lit tests in
``lit/resolve-auto-layouts/`` show the IR).

* every kernel of ``support.gluon_auto_kernels`` that stock Triton's resolution rejects
  compiles with ours, to PTX, with no fallback;
* where both resolve a kernel, ours models no worse; where both choose the same layouts, the
  PTX is the same;
* the layouts the author wrote are never changed, and no automatic encoding is left;
* where ours cannot resolve a kernel that stock can, the kernel compiles with Triton's own
  resolution, with a warning and a fallback record."""

import pathlib
import re
import warnings

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import hook# noqa: E402
from linear_layouts.passes.ir.diagnostics import IRError  # noqa: E402
from linear_layouts.passes.framework import PassContext, run_pipeline  # noqa: E402
from linear_layouts.passes.gluon.resolve_auto_layouts import (ResolveAutoLayouts, has_auto_layouts,  # noqa: E402
                                                        resolve_module)
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402
from support.gluon_auto_kernels import KERNELS, TARGET, source  # noqa: E402
from support.ptx_accesses import mean_access_bytes  # noqa: E402

LIT = pathlib.Path(__file__).parents[3] / "lit" / "resolve-auto-layouts"
STOCK_REJECTS = [name for name in KERNELS if name not in ("copy_coalesced", "reshape_fixed", "histogram_fixed",
                                                           "strided_add")]


pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


def _compile_with_ours(name):
    linear_layouts.enable(resolve_auto_layouts=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernel = triton.compile(source(name), target=TARGET)
    finally:
        linear_layouts.disable()
    return kernel, [str(w.message) for w in caught if "linear-layouts" in str(w.message)]


@pytest.mark.parametrize("name", STOCK_REJECTS)
def test_stock_rejects_and_ours_compiles(name):
    with pytest.raises(Exception):
        triton.compile(source(name), target=TARGET)
    kernel, caught = _compile_with_ours(name)
    assert caught == []
    stats = linear_layouts.stats()
    assert stats.auto_layouts_resolved == 1 and stats.fallbacks == []
    ptx = kernel.asm["ptx"]
    assert ".entry " + name in ptx
    assert "#gluon" not in kernel.asm["ttgir"]


@pytest.mark.parametrize("name", ["copy", "column_sum", "row_softmax", "accumulate", "branch"])
def test_loads_vectorize(name):
    """Every load of these kernels reads 16-byte aligned, row-contiguous f32: ours loads 4 at a
    time."""
    kernel, _ = _compile_with_ours(name)
    ptx = kernel.asm["ptx"]
    assert "ld.global.v4.b32" in ptx and not re.search(r"ld\.global\.b32", ptx)


# Per kernel touching shared memory: what ours must issue (every access 16 bytes, or ldmatrix /
# stmatrix, which move 16 bytes a lane too) and what it must not (a scalar access).  Triton 3.8
# spells some accesses with their state space: st.shared::cta.v4.b32.
_SHARED_PTX = {
    "cp_async_copy": ([r"cp\.async\.cg\.shared\.global \[[^]]*\], \[[^]]*\], 0x10", r"ld\.shared(?:::cta)?\.v4\.b32",
                       r"st\.global\.v4\.b32"], [r"cp\.async\.ca", r"ld\.shared(?:::cta)?\.b32", r"st\.global\.b32"]),
    "shared_round_trip": ([r"ld\.global\.v4\.b32", r"st\.global\.v4\.b32", r"(ld\.shared(?:::cta)?\.v4|ldmatrix)",
                           r"(st\.shared(?:::cta)?\.v4|stmatrix)"], [r"ld\.shared(?:::cta)?\.b32", r"st\.shared(?:::cta)?\.b32"]),
    "tma_scale": ([r"cp\.async\.bulk\.tensor", r"(ld\.shared(?:::cta)?\.v4|ldmatrix)", r"(st\.shared(?:::cta)?\.v4|stmatrix)"],
                  [r"ld\.shared(?:::cta)?\.b32", r"st\.shared(?:::cta)?\.b32"]),
    "ws_copy": ([r"ld\.global\.v4\.b32", r"st\.global\.v4\.b32"], [r"ld\.global\.b32", r"st\.global\.b32"]),
}


@pytest.mark.parametrize("name", sorted(_SHARED_PTX))
def test_shared_memory_cp_async_tma_and_partitions_compile_with_wide_accesses(name):
    """cp.async, local loads and stores, TMA and warp-specialized partitions with automatic
    layouts (the rules stock's resolution lacks: it rejects all four): resolved by ours, no
    fallback, and every access as wide as the pointers and the buffer allow."""
    kernel, caught = _compile_with_ours(name)
    assert caught == [] and linear_layouts.stats().fallbacks == []
    ptx = kernel.asm["ptx"]
    must, must_not = _SHARED_PTX[name]
    for pattern in must:
        assert re.search(pattern, ptx), pattern
    for pattern in must_not:
        assert not re.search(pattern, ptx), pattern


def test_global_accesses_at_least_as_wide_as_tritons_where_both_resolve():
    """Every kernel stock's resolution compiles: ours' global loads and stores move at least as
    many bytes per instruction as stock's (03's elementwise add once got scalar accesses from
    ours where stock's were 16-byte: the loop bounds' arith.bitcast hid their divisibility)."""
    compared = []
    for name in KERNELS:
        try:
            stock = triton.compile(source(name), target=TARGET).asm["ptx"]
        except Exception:
            continue
        ours, _ = _compile_with_ours(name)
        for kind in ("ld", "st"):
            assert mean_access_bytes(ours.asm["ptx"], kind) >= mean_access_bytes(stock, kind), (name, kind)
        compared.append(name)
    assert {"copy_coalesced", "strided_add"} <= set(compared)
    assert mean_access_bytes(stock, "ld") == 16.0           # strided_add, the last one: 16-byte loads


def test_same_layouts_as_stock_give_the_same_ptx():
    """copy_coalesced: stock resolves CoalescedLayout to the coalesced layout, as ours does."""
    stock = triton.compile(source("copy_coalesced"), target=TARGET).asm["ptx"]
    ours, caught = _compile_with_ours("copy_coalesced")
    assert caught == [] and linear_layouts.stats().auto_layouts_resolved == 1
    assert ours.asm["ptx"] == stock


def test_falls_back_to_triton_where_ours_cannot():
    kernel, caught = _compile_with_ours("histogram_fixed")
    stock = triton.compile(source("histogram_fixed"), target=TARGET)
    assert len(caught) == 1 and "tt.histogram" in caught[0] and "Triton's own resolution instead" in caught[0]
    stats = linear_layouts.stats()
    assert stats.auto_layouts_resolved == 0 and [f.stage for f in stats.fallbacks] == ["ll-resolve-auto-layouts"]
    assert kernel.asm["ptx"] == stock.asm["ptx"]


# --------------------------------------------------------------------------- the pass on the lit inputs

def _lit_input(name):
    return (LIT / name).read_text()


def _fixed_ops(text):
    """(op name, result types) of every op that prints no automatic layout, Gluon's own ops
    aside: what the author wrote."""
    module = parse_module(text, "in.mlir")
    return {(op.name, tuple(v.type for v in op.results)) for op in module.walk()
            if op.results and not any(e in v.type for v in list(op.operands) + list(op.results)
                                      for e in ("#gluon.auto_encoding", "#gluon.coalesced_encoding"))
            and not op.name.startswith("gluon.")}


@pytest.mark.parametrize("name", sorted(p.name for p in LIT.glob("*.mlir") if p.name not in ("unsupported-op.mlir", "reshape-reorder.mlir")))
def test_author_layouts_kept_and_no_auto_left(name):
    text = _lit_input(name)
    module = parse_module(text, name)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    out = module.print()
    assert not has_auto_layouts(out) and "gluon." not in out
    after = {(op.name, tuple(v.type for v in op.results)) for op in module.walk()}
    kept = {entry for entry in _fixed_ops(text) if entry[0] not in ("arith.constant", "tt.make_range")}
    assert kept <= after


def test_models_no_worse_than_triton_where_triton_resolves():
    module = parse_module(_lit_input("load-unreached.mlir"), "load-unreached.mlir")
    resolution = resolve_module(module)
    assert resolution.cost_triton is not None and resolution.cost_ours < resolution.cost_triton


def test_triton_error_is_reported_where_triton_fails():
    module = parse_module(_lit_input("conflict-outside-loop.mlir"), "c.mlir")
    resolution = resolve_module(module)
    assert resolution.cost_triton is None and "found conflicting encodings for value" in resolution.triton_error
    assert resolution.conversions == 1


def test_unresolvable_op_is_a_clear_failure():
    text = _lit_input("copy-no-layout.mlir").replace(
        "%4 = tt.load %3 : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>",
        "%h = tt.histogram %i : tensor<512xi32, #gluon.auto_encoding> -> tensor<64xi32, #gluon.auto_encoding>\n"
        "    %4 = tt.load %3 : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>")
    module = parse_module(text, "r.mlir")
    with pytest.raises(IRError, match=r"error: \[ll-resolve-auto-layouts\] r.mlir:\d+:\d+: tt.histogram: no layout rule"):
        run_pipeline(module, [ResolveAutoLayouts(compare=False)], PassContext())


def test_transpose_recomputes_its_offsets_and_vectorizes_both_sides():
    """The transpose's tile is loaded row-coalesced and stored column-coalesced, one conversion
    of the data between; its offsets, needed in both layouts, are recomputed rather than
    converted (passes/gluon/rematerialize.py), so Triton's axis analysis still sees their alignment."""
    kernel, caught = _compile_with_ours("transpose")
    ptx = kernel.asm["ptx"]
    assert caught == []
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx
    assert not re.search(r"(ld|st)\.global\.b32", ptx)


# --------------------------------------------------------------------------- random programs made automatic

_SLICE = re.compile(r"#ttg\.slice<\{dim = \d+, parent = #ttg\.blocked<\{[^}]*\}>\}>")
_BLOCKED = re.compile(r"#ttg\.blocked<\{[^}]*\}>")


def _made_automatic(text):
    """Every layout of a random program (tools/fuzz/random_programs.py: blocked and slices of blocked)
    made #gluon.auto_encoding; its conversions become conversions to an automatic layout,
    which the resolution places or drops."""
    return _BLOCKED.sub("#gluon.auto_encoding", _SLICE.sub("#gluon.auto_encoding", text))


@pytest.mark.parametrize("seed", range(16))
def test_random_programs_made_automatic_compute_the_same(seed):
    """Random kernels (ranges, splats, constants, adds, broadcasts, max-reductions, branches,
    scf.for loops with loads and stores, scf.while loops, transposes) with every layout automatic: ours resolves each,
    and what every store computes is the original program's (conversions looked through)."""
    import random

    from linear_layouts.tools.fuzz.random_programs import random_program, structure
    text = random_program(random.Random(seed), steps=8, kernel=True, transposes=True, loop_loads=True, whiles=True)
    module = parse_module(_made_automatic(text), f"auto{seed}.mlir", safe=False)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    assert not has_auto_layouts(module.print())
    assert structure(module) == structure(parse_module(text, f"random{seed}.mlir", safe=False))


@pytest.mark.parametrize("seed", [3, 11])
def test_random_programs_made_automatic_compile_to_ptx(seed, tmp_path):
    import random
    import subprocess
    import sys

    from linear_layouts.tools.fuzz.random_programs import random_program
    text = random_program(random.Random(seed), steps=8, kernel=True, transposes=True, loop_loads=True, whiles=True)
    path = tmp_path / f"auto{seed}.mlir"
    path.write_text(_made_automatic(text))
    ll_opt = pathlib.Path(sys.executable).parent / "ll-opt"
    run = subprocess.run([str(ll_opt), str(path), "-p", "ll-resolve-auto-layouts{compare=false},ll-lower-conversions",
                          "--emit", "ptx"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert ".entry random" in run.stdout


_MASK_CONVERTED = """\
#A = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @masked(%p: !tt.ptr<f32>, %n: i32) {
    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #A>
    %s = tt.splat %n : i32 -> tensor<512xi32, #A>
    %m = arith.cmpi slt, %r, %s : tensor<512xi32, #A>
    %c = ttg.convert_layout %m : tensor<512xi1, #A> -> tensor<512xi1, #B>
    %rb = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #B>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #B>
    %q = tt.addptr %ps, %rb : tensor<512x!tt.ptr<f32>, #B>, tensor<512xi32, #B>
    %v = tt.load %q, %c : tensor<512x!tt.ptr<f32>, #B>
    tt.store %q, %v, %c : tensor<512x!tt.ptr<f32>, #B>
    tt.return
  }
}
"""


def test_a_converted_mask_is_computed_again_in_the_layout_it_is_needed_in():
    """A comparison of index vectors (a load's mask) is recomputed like the indices it compares:
    converting an i1 tensor costs a trip through shared memory (Triton's memcpy_2d_inout tutorial,
    advised, converted its mask so: 32 st.shared + 32 ld.shared, 2 barriers)."""
    from linear_layouts.passes.gluon.rematerialize import rematerialize_conversions
    module = parse_module(_MASK_CONVERTED, "mask.mlir", safe=False)
    assert rematerialize_conversions(module) == 1
    module.canonicalize()
    text = module.print()
    assert "ttg.convert_layout" not in text
    # the mask is compared in the load's layout (#B, one element a thread), and #A is gone
    assert "arith.cmpi slt, %0, %1 : tensor<512xi32, #blocked>" in text
    assert text.split("module")[0].strip() == ("#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], "
                                               "warpsPerCTA = [4], order = [0]}>")


def test_a_conversion_step_one_inserted_takes_its_users_location():
    """The conflict's conversion (placed before the loop) carried the marker location
    'll-resolve-auto' while the layouts were chosen; in the result it points at the op that uses
    it, so remarks and the report name a source line."""
    module = parse_module(_lit_input("conflict-outside-loop.mlir"), "c.mlir", safe=False)
    assert resolve_module(module, compare=False).resolved
    (convert,) = [op for op in module.walk() if op.name == "ttg.convert_layout"]
    assert convert.location == "c.mlir:52:7"


@pytest.mark.parametrize("remarks", [False, True])
def test_tritons_resolution_runs_only_for_the_remarks(monkeypatch, remarks):
    """ll-resolve-auto-layouts prices Triton's own resolution (a second Python with Triton) only
    where a remark prints that price: ll-opt without --remarks starts no such process."""
    import io
    from linear_layouts.passes.gluon import stock_resolution
    calls = []
    real = stock_resolution.triton_resolution
    monkeypatch.setattr(stock_resolution, "triton_resolution", lambda *a: calls.append(1) or real(*a))
    report = io.StringIO()
    run_pipeline(parse_module(_lit_input("copy-no-layout.mlir"), "r.mlir"), [ResolveAutoLayouts()],
                 PassContext(report_stream=report, remarks=remarks))
    assert calls == ([1] if remarks else [])
    assert ("Triton's resolution fails" in report.getvalue()) is remarks
