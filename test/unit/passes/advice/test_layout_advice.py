"""The report's advice on hand-picked layouts (``passes/advice/layout_advice.py``): each kind of finding
on a Gluon kernel written to have it (``examples/gluon_advice_example.py``), exact suggestions,
none where Triton's own coalescing already chose, and the report's Advice section."""

import os
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")

from support import REPO  # noqa: E402

from linear_layouts.passes.advice.layout_advice import (CONVERSION_IN_LOOP, GLOBAL_ACCESS, REPLICATED,  # noqa: E402
                                                SHARED_ACCESS, advise, gluon_expression)

sys.path.insert(0, str(REPO / "examples"))
import gluon_advice_example as example  # noqa: E402

from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

TARGET = example.TARGETS["sm_90"]
POINTERS = {"X": "*fp32", "Y": "*fp32"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    from support.triton_cache import use_private_triton_cache
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")


def _findings(kernel, constexprs):
    compiled = triton.compile(GluonASTSource(kernel, POINTERS, constexprs, attrs=example.ALIGNED), target=TARGET)
    return advise(compiled.asm["ttgir"], "sm_90")


def _kernel_gain(kernel, constexprs, finding):
    """The whole kernel's modelled cost as written over its cost with ``finding`` applied (as
    ll-apply-advice applies it), priced independently of the advice's own pricing."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.advice.advice_edits import advised_module
    from linear_layouts.passes.gluon.kernel_price import modelled_cost
    from linear_layouts.passes.ir.snapshot import parse_module
    compiled = triton.compile(GluonASTSource(kernel, POINTERS, constexprs, attrs=example.ALIGNED), target=TARGET)
    module = parse_module(compiled.asm["ttgir"], "<kernel>")
    target = target_named("sm_90")
    [unmerged] = [f for f in advise(compiled.asm["ttgir"], "sm_90", merged=False)
                  if f.op_key == finding.op_key and f.kind == finding.kind]
    advised = advised_module(module, module.print(debuginfo=True), [unmerged], target)
    return modelled_cost(module, target) / modelled_cost(advised, target)


def _by_kind(findings):
    out = {}
    for f in findings:
        out.setdefault(f.kind, []).append(f)
    return out


def test_gluon_expression_of_a_blocked_layout():
    text = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    assert gluon_expression(text) == "gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])"


def test_one_element_per_thread_copy_gets_16_byte_vectors():
    findings = _findings(example.copy, {"N": 1024})
    assert {f.kind for f in findings} == {GLOBAL_ACCESS}
    assert {f.op for f in findings} == {"tt.load", "tt.store"}
    for f in findings:
        assert f.suggestion == "gl.BlockedLayout([4], [32], [4], [0])"
        assert f.finding.startswith("4-byte accesses in gl.BlockedLayout([1], [32], [4], [0])")
        assert "allow 16-byte accesses" in f.finding and f.gain > 1.0
        assert "gluon_advice_example.py:" in f.location and "unknown" not in f.location


def test_column_sums_loads_across_rows_and_converts_in_the_loop():
    kinds = _by_kind(_findings(example.column_sums, {"M": 64, "N": 64}))
    [load] = kinds[GLOBAL_ACCESS]
    assert load.op == "tt.load" and load.suggestion == "gl.BlockedLayout([1, 4], [2, 16], [4, 1], [1, 0])"
    assert "contiguous along dim 1" in load.finding
    [conversion] = kinds[CONVERSION_IN_LOOP]
    assert conversion.op == "ttg.convert_layout"
    assert conversion.suggestion == "load in gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]) (its offsets in that layout)"
    assert conversion.gain > 1.0
    # 128 rows of threads over a 64-row tile hold every element twice, but the layout that fits
    # the tile ([1, 1], [32, 1], [2, 2]) costs the whole kernel more than it saves: no finding
    # (the load's own suggestion holds no copies either)
    assert REPLICATED not in kinds


def test_a_tile_wider_than_the_tensor_is_replicated_data():
    kinds = _by_kind(_findings(example.scale_rows, {"N": 256}))
    [copies] = kinds[REPLICATED]
    assert copies.finding.startswith("each element of the 256 tensor is held 4 times")
    assert copies.suggestion == "gl.BlockedLayout([2], [32], [4], [0])"
    assert copies.gain == pytest.approx(_kernel_gain(example.scale_rows, {"N": 256}, copies)) and copies.gain > 4.0
    # the access advice agrees: the widest vector whose tile fits 256 elements (8 bytes, not 16)
    assert {f.suggestion for f in kinds[GLOBAL_ACCESS]} == {"gl.BlockedLayout([2], [32], [4], [0])"}


def test_an_unswizzled_transpose_buffer_gets_a_conflict_free_swizzle():
    [shared] = _by_kind(_findings(example.transpose, {"N": 64}))[SHARED_ACCESS]
    assert shared.op == "ttg.local_alloc" and "gluon_advice_example.py" in shared.location
    # rows written 4 floats at a time, columns read: 896 extra wavefronts over 160 accesses
    assert shared.finding.startswith("896 extra wavefronts (bank conflicts) over 160 accesses")
    assert shared.suggestion == "gl.SwizzledSharedLayout(4, 4, 8, [1, 0])"
    assert "in gl.SwizzledSharedLayout(1, 1, 1, [1, 0])" in shared.finding
    # the gain is the whole kernel's (its global accesses too), below the buffer's own
    # (160 + 896) / 160 = 6.6 and above 1
    assert shared.gain == pytest.approx(_kernel_gain(example.transpose, {"N": 64}, shared))
    assert 1.2 < shared.gain < (160 + 896) / 160


def test_a_conversion_of_a_value_made_before_the_loop_is_hoisted():
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def invariant(X, Y, N: gl.constexpr):
        a: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
        b: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
        r = gl.arange(0, N, layout=gl.SliceLayout(1, a))
        c = gl.arange(0, N, layout=gl.SliceLayout(0, a))
        x = gl.load(X + r[:, None] * N + c[None, :])
        rb = gl.arange(0, N, layout=gl.SliceLayout(1, b))
        cb = gl.arange(0, N, layout=gl.SliceLayout(0, b))
        acc = gl.zeros([N, N], gl.float32, layout=b)
        for k in range(4):
            acc += gl.convert_layout(x, b) * k
        gl.store(Y + rb[:, None] * N + cb[None, :], acc)

    [hoist] = _by_kind(_findings(invariant, {"N": 64}))[CONVERSION_IN_LOOP]
    assert hoist.suggestion == "convert once before the loop (gl.convert_layout there)"
    assert "of a value made before the loop" in hoist.finding and hoist.gain > 1.0


def test_no_advice_where_triton_chose_the_layouts():
    """Triton's own coalescing picks these kernels' layouts: nothing to say."""
    from triton.compiler import ASTSource
    sys.path.insert(0, str(REPO / "examples"))
    import report_example
    for kernel, signature, constexprs in (
            (report_example.transpose, POINTERS, {"BLOCK": 32}),
            (report_example.normalize_rows, dict(POINTERS, SUMS="*fp32"), {"N": 128, "ROWS": 16})):
        compiled = triton.compile(ASTSource(kernel, signature, constexprs=constexprs), target=TARGET)
        assert advise(compiled.asm["ttgir"], "sm_90") == []


def test_the_report_shows_the_advice(tmp_path):
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    done = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md",
                           str(REPO / "examples" / "gluon_advice_example.py")], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    section = done.stdout.split("## Advice: layouts worth changing", 1)[1]
    assert "gl.BlockedLayout([1, 4], [2, 16], [4, 1], [1, 0])" in section
    assert "conversion in a loop" in section and "replicated data" in section
    assert "gl.SwizzledSharedLayout(4, 4, 8, [1, 0])" in section


def test_the_readme_advice_excerpt_is_the_report_s_row(tmp_path):
    """The README shows one row of the advice for examples/gluon_advice_example.py: every field
    it shows (kernel, location, kind, the finding's start, the suggestion, the gain) is the report's."""
    import re
    readme = (REPO / "README.md").read_text()
    row = re.search(r"^(transpose +examples/gluon_advice_example\.py:\S+) +(shared-memory access) +(.*?) \.\.\. +"
                    r"(gl\.SwizzledSharedLayout\([^)]*\)) +([\d.]+x)$", readme, re.M)
    assert row, "the README's advice excerpt is gone or reworded"
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    done = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md", "-o",
                           str(tmp_path / "out"), "examples/gluon_advice_example.py"], env=env,
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    def without_column(text):   # file:line:col -> file:line (the column differs between releases)
        return re.sub(r"(\.py:\d+):\d+", r"\1", re.sub(r" +", " ", text))
    kernel_and_place = without_column(row.group(1))
    lines = [without_column(line) for line in done.stdout.splitlines() if row.group(2) in line]
    # the gain is the whole kernel's, which the releases model differently: the README's is 3.9's
    gain = row.group(5) if triton.__version__.startswith("3.9.") else "x"
    assert any(line.startswith(kernel_and_place) and row.group(3) in line and row.group(4) in line
               and line.endswith(gain) for line in lines), lines
