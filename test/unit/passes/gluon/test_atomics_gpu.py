"""Triton's atomics with automatic layouts, run on a GPU: the kernels of ``atomic_kernels.py``
(``gl.atomic_add`` of a loaded tile, ``gl.atomic_cas`` with the old values stored), their layouts
resolved by ours (``linear_layouts.enable()``), compared element for element with what the atomics
must leave.  Skipped where there is no GPU; the layouts and the instructions they lower to are
tested on the CPU in ``test_atomics.py``."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

pytest.importorskip("triton.experimental.gluon")

import linear_layouts  # noqa: E402
from support.gpu import cuda_gpu_missing  # noqa: E402
from support.triton_cache import use_private_triton_cache  # noqa: E402


def _resolved_and_fallbacks():
    """The drop-in's counts so far (they add up over the process: the tests compare differences)."""
    stats = linear_layouts.stats()
    return stats.auto_layouts_resolved, len(stats.fallbacks)


def _atomic_kernels():
    path = pathlib.Path(__file__).with_name("atomic_kernels.py")
    spec = importlib.util.spec_from_file_location("atomic_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.gpu
@pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))
@pytest.mark.parametrize("dtype_name", ["float32", "float16"])
@pytest.mark.parametrize("n", [256, 1024])
def test_automatic_atomic_add_adds_every_element(monkeypatch, tmp_path, dtype_name, n):
    import torch
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    kernels, dtype = _atomic_kernels(), getattr(torch, dtype_name)
    # small integers: every sum is exact in both types, whatever order the atomics run in
    x = torch.randint(-8, 8, (n,), device="cuda").to(dtype)
    y = torch.randint(-8, 8, (n,), device="cuda").to(dtype)
    expected = y + 3 * x
    before = _resolved_and_fallbacks()
    linear_layouts.enable()
    try:
        for _ in range(3):
            kernels.add_into[(1,)](x, y, N=n)
        torch.cuda.synchronize()
        after = _resolved_and_fallbacks()
    finally:
        linear_layouts.disable()
    assert (after[0] - before[0], after[1] - before[1]) == (1, 0)    # resolved by ours, no fallback
    assert torch.equal(y, expected)


@pytest.mark.gpu
@pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))
def test_automatic_atomic_cas_swaps_where_equal_and_returns_the_old_values(monkeypatch, tmp_path):
    import torch
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    kernels, n = _atomic_kernels(), 1024
    x = torch.arange(n, dtype=torch.int32, device="cuda")
    y = torch.where(torch.arange(n, device="cuda") % 3 == 0, x, -x - 1).to(torch.int32)
    y_before = y.clone()
    z = torch.full_like(x, 12345)
    before = _resolved_and_fallbacks()
    linear_layouts.enable()
    try:
        kernels.swap_into[(1,)](x, y, z, N=n)
        torch.cuda.synchronize()
        after = _resolved_and_fallbacks()
    finally:
        linear_layouts.disable()
    assert (after[0] - before[0], after[1] - before[1]) == (1, 0)    # resolved by ours, no fallback
    assert torch.equal(z, y_before)                                 # the old values
    assert torch.equal(y, torch.where(y_before == x, x + 1, y_before))  # swapped where equal
