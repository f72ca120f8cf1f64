"""Each finding of the advice says what is wrong in the kernel as written, what the suggestion
changes, and why the kernel is better for it as a whole (``passes/advice/layout_advice.py``):
where the suggested accesses are narrower, what the kernel gains in exchange.  The two kernels
a reader of docs/your-kernel.md meets: its Gluon transpose compiled without the pointers'
alignment (4-byte accesses either way: the suggestion changes where the lanes fall), and
``scale_rows`` of ``examples/gluon_advice_example.py`` (16-byte accesses advised 8-byte ones)."""

import sys

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")

from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

from support import REPO  # noqa: E402

from linear_layouts.passes.advice.layout_advice import GLOBAL_ACCESS, advise  # noqa: E402

sys.path.insert(0, str(REPO / "examples"))
import gluon_advice_example as example  # noqa: E402

POINTERS = {"X": "*fp32", "Y": "*fp32"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    from support.triton_cache import use_private_triton_cache
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")


@gluon.jit
def transpose(X, Y, BLOCK: gl.constexpr):
    """docs/your-kernel.md's Gluon transpose."""
    by_rows: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    by_columns: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
    rows = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, by_rows))
    cols = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, by_rows))
    tile = gl.convert_layout(gl.load(X + rows[:, None] * BLOCK + cols[None, :]), by_columns)
    out_rows = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, by_columns))
    out_cols = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, by_columns))
    gl.store(Y + out_cols[None, :] * BLOCK + out_rows[:, None], tile)


def _global_accesses(kernel, constexprs, attrs):
    compiled = triton.compile(GluonASTSource(kernel, POINTERS, constexprs, attrs=attrs),
                              target=example.TARGETS["sm_90"])
    return {f.op: f for f in advise(compiled.asm["ttgir"], "sm_90") if f.kind == GLOBAL_ACCESS}


def test_a_suggestion_as_wide_as_the_access_says_what_it_changes():
    """Without the pointers' alignment every access is 4 bytes, as written and suggested: the
    finding says that the lanes of each access are spread over four times the sectors its bytes
    need, that the suggestion packs them, and what the whole kernel gains (its conversion too)."""
    findings = _global_accesses(transpose, {"BLOCK": 32}, {})
    assert set(findings) == {"tt.load", "tt.store"}
    for f in findings.values():
        assert "(the suggestion: 4-byte, no copies)" not in f.finding
        assert "each warp access spreads its 128 bytes over 16 32-byte sectors, where 4 would hold them" in f.finding
        assert ("(the suggestion: 4-byte accesses, 128 bytes in 4 sectors an access: a warp moves 1024 bytes in "
                "8 accesses over 32 sectors instead of 1024 in 8 over 128)") in f.finding
        assert "; the whole kernel: modelled cost " in f.finding and "its layout conversions 1 costing" in f.finding
        assert f.gain > 1.1


def test_a_narrower_suggestion_says_what_the_kernel_gains_in_exchange():
    """``scale_rows``'s 256-element row in a 1024-element tile: 16-byte accesses, every element
    accessed by 4 warps; the 8-byte suggestion is narrower, and each element is accessed once."""
    findings = _global_accesses(example.scale_rows, {"N": 256}, example.ALIGNED)
    assert set(findings) == {"tt.load", "tt.store"}
    for f in findings.values():
        assert f.finding.startswith("16-byte accesses in gl.BlockedLayout([8], [32], [4], [0]): ")
        assert "(the suggestion: 8-byte, no copies)" not in f.finding
        assert "each element is accessed 4 times (the layout's tile is larger than the tensor)" in f.finding
        assert ("(the suggestion: 8-byte accesses, each element once, 256 bytes in 8 sectors an access: narrower, "
                "but a warp moves 256 bytes in 1 access over 8 sectors instead of 1024 in 2 over 64)") in f.finding
        assert f.suggestion == "gl.BlockedLayout([2], [32], [4], [0])"
