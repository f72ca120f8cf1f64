"""Reshape, join and split with automatic layouts, run on a GPU: the kernels of
``support/gluon_auto_kernels.py`` with their layouts resolved by ours (``linear_layouts.enable()``),
compared element for element with what they must store.  Skipped where there is no GPU; the
layouts are tested on the CPU in ``test_shape_ops.py``."""

from __future__ import annotations

import pytest

pytest.importorskip("triton.experimental.gluon")

import linear_layouts  # noqa: E402
from linear_layouts.passes.ir.bindings import installed_triton_version  # noqa: E402
from support.gpu import cuda_gpu_missing  # noqa: E402
from support.gluon_auto_kernels import KERNELS, SHAPE_KERNELS  # noqa: E402
from support.triton_cache import use_private_triton_cache  # noqa: E402

GPU_MISSING = cuda_gpu_missing()


def _resolved_and_fallbacks():
    """The drop-in's counts so far (they add up over the process: the tests compare differences)."""
    stats = linear_layouts.stats()
    return stats.auto_layouts_resolved, len(stats.fallbacks)


def _launch_with_ours(name, src, dst):
    import torch
    kernel, _, constexprs = KERNELS[name] if name in KERNELS else SHAPE_KERNELS[name]
    before = _resolved_and_fallbacks()
    linear_layouts.enable()
    try:
        kernel[(1,)](src, dst, **constexprs)
        torch.cuda.synchronize()
        after = _resolved_and_fallbacks()
    finally:
        linear_layouts.disable()
    assert (after[0] - before[0], after[1] - before[1]) == (1, 0)     # resolved by ours, no fallback
    return constexprs


@pytest.mark.gpu
@pytest.mark.skipif(GPU_MISSING is not None, reason=str(GPU_MISSING))
def test_a_reshape_with_automatic_layouts_copies_every_element(monkeypatch, tmp_path):
    import torch
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    src = torch.randn(1024, device="cuda")
    dst = torch.full_like(src, float("nan"))
    _launch_with_ours("reshape_fixed", src, dst)
    assert torch.equal(dst, src)


@pytest.mark.gpu
@pytest.mark.skipif(GPU_MISSING is not None, reason=str(GPU_MISSING))
def test_a_join_with_automatic_layouts_interleaves_the_pairs(monkeypatch, tmp_path):
    import torch
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    src = torch.randn(512, device="cuda")
    dst = torch.full((1024,), float("nan"), device="cuda")
    _launch_with_ours("join_auto", src, dst)
    assert torch.equal(dst[0::2], src) and torch.equal(dst[1::2], src * 2.0)


@pytest.mark.gpu
@pytest.mark.skipif(GPU_MISSING is not None, reason=str(GPU_MISSING))
@pytest.mark.skipif(installed_triton_version() < (3, 8),
                    reason="triton 3.6 and 3.7's Gluon abort building gl.split of an automatic layout")
def test_a_split_with_automatic_layouts_sums_the_pairs(monkeypatch, tmp_path):
    import torch
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    src = torch.randn(1024, device="cuda")
    dst = torch.full((512,), float("nan"), device="cuda")
    _launch_with_ours("split_auto", src, dst)
    assert torch.equal(dst, src[0::2] + src[1::2])
