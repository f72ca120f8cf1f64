"""Warp-specialized kernels with the plugin on (issue: a convert through shared memory inside a
``gl.warp_specialize`` partition hung an H100: our islands waited on ``bar.sync 0``, for every
thread of the CTA, which the other warp groups never reach).

Compiled for sm_90 without a GPU (both Triton releases CI tests): every barrier our islands put
in the PTX is one of the named barriers stock Triton uses for the same warp groups, and there
is no whole-CTA ``bar.sync 0;``.  On a GPU (``-m gpu``) the kernel runs bit-exact."""

from __future__ import annotations

import re

import pytest
import triton
from triton.backends.compiler import GPUTarget

import linear_layouts
from linear_layouts.passes.drop_in import hook
from support import ws_kernels
from support.gpu import cuda_gpu_missing
from support.triton_cache import use_private_triton_cache

TARGET = GPUTarget("cuda", 90, 32)
BARRIER = re.compile(r"\b(bar\.sync|bar\.warp\.sync|barrier\.sync)\s+([^;]*);")


def barriers(ptx: str) -> list[str]:
    return [f"{name} {' '.join(args.split())}" for name, args in BARRIER.findall(ptx)]


def compile_ws(enabled: bool):
    hook.reset_stats()
    if enabled:
        linear_layouts.enable()
    try:
        return triton.compile(ws_kernels.source(), target=TARGET, options={"num_warps": 4})
    finally:
        linear_layouts.disable()


def test_partition_islands_use_the_partitions_named_barriers(monkeypatch, tmp_path):
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    stock = barriers(compile_ws(False).asm["ptx"])
    ours_kernel = compile_ws(True)
    stats = linear_layouts.stats()
    assert stats.islands == 4 and not stats.fallbacks, stats.summary()
    # each island's two guards are its warp group's barrier, never dropped by the pruning
    assert (stats.guard_barriers, stats.guard_barriers_dropped) == (8, 0), stats.summary()
    ours = barriers(ours_kernel.asm["ptx"])
    # stock: the default group's barrier 0 for 128 threads, partition 0 (4 warps) barrier 2,
    # partition 1 (2 warps) barrier 3, partition 2 (1 warp) bar.warp.sync; 1 = the dispatch loop
    assert set(stock) == {"bar.sync 0, 128", "bar.sync 2, 128", "bar.sync 3, 64", "bar.warp.sync -1",
                          "barrier.sync 1"}
    assert "bar.sync 0" not in ours          # the whole CTA: the hang
    assert set(ours) - set(stock) <= {"bar.warp.sync 0xffffffff"}   # a plan's own warp barrier
    for form in ("bar.sync 0, 128", "bar.sync 2, 128", "bar.sync 3, 64"):
        assert form in ours


def test_automatic_warp_specialization_keeps_stocks_barriers(monkeypatch, tmp_path):
    """``tl.range(..., warp_specialize=True)`` on sm_90: the epilogue's conversions lowered by
    us, every barrier one that stock uses too."""
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    hook.reset_stats()
    stock = triton.compile(ws_kernels.auto_ws_source(), target=TARGET, options={"num_warps": 4})
    assert "ttg.warp_specialize" in stock.asm["ttgir"]
    with linear_layouts.enabled():
        ours = triton.compile(ws_kernels.auto_ws_source(), target=TARGET, options={"num_warps": 4})
    assert hook.stats().islands >= 1 and not hook.stats().fallbacks, hook.stats().summary()
    assert set(barriers(ours.asm["ptx"])) == set(barriers(stock.asm["ptx"]))


def test_ll_opt_leaves_a_partition_it_cannot_align_to_triton():
    from linear_layouts.passes.lower_conversions import lower_text
    text = open(__file__.replace("unit/passes/barriers/test_warp_specialize.py",
                                 "lit/lower-conversions/warp-specialize.mlir")).read()
    module = text.split("// -----")[1]
    _, outcomes = lower_text(module)
    assert [o.lowered for o in outcomes] == [False]
    assert "its 8 warps start at warp 4" in outcomes[0].reason



@pytest.mark.gpu
@pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))
def test_warp_specialized_kernel_runs_bit_exact_on_the_gpu(monkeypatch, tmp_path):
    import torch
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("Gluon warp specialization needs sm_90 or newer")
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    x = torch.randn(64, 64, device="cuda")
    for enabled in (False, True):
        y = torch.zeros(4, 64, 64, device="cuda")
        if enabled:
            linear_layouts.enable()
        try:
            ws_kernels.ws_kernel[(1,)](x, y, num_warps=4)
            torch.cuda.synchronize()
        finally:
            linear_layouts.disable()
        assert torch.equal(y, ws_kernels.expected(x)), f"plugin {'on' if enabled else 'off'}"


@pytest.mark.gpu
@pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))
def test_automatic_warp_specialization_runs_bit_exact_on_the_gpu(monkeypatch, tmp_path):
    import torch
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("automatic warp specialization needs sm_90 or newer")
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    a = torch.randn(128, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(128, 512, device="cuda", dtype=torch.float16)
    outputs = []
    for enabled in (False, True):
        c = torch.zeros(128, 128, device="cuda", dtype=torch.float16)
        with linear_layouts.enabled() if enabled else _nothing():
            ws_kernels.auto_ws_matmul[(1,)](a, b, c, 512, BM=128, BN=128, BK=64, num_warps=4)
            torch.cuda.synchronize()
        outputs.append(c)
    assert torch.equal(outputs[0], outputs[1])
    torch.testing.assert_close(outputs[1].float(), (a.float() @ b.float().T), atol=0.1, rtol=0.02)


def _nothing():
    import contextlib
    return contextlib.nullcontext()
