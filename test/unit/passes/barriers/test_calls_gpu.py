"""noinline helpers whose store needs a conversion through shared memory, run on a GPU with the
plugin on and off (issue: a helper called twice in a row raced, because the guard barrier at
its entry was pruned looking only inside the helper).  Skipped where there is no GPU; the
barrier placement itself is tested on the CPU in test_guard_barriers.py."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

import linear_layouts
from support.gpu import cuda_gpu_missing
from support.triton_cache import use_private_triton_cache


@triton.jit(noinline=True)
def _transpose_store(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
    tl.store(Y + offs[None, :] * BLOCK + offs[:, None], x)      # a layout change: shared memory


@triton.jit
def twice_kernel(X, Y, Z, BLOCK: tl.constexpr):
    _transpose_store(X, Y, BLOCK)
    _transpose_store(Y, Z, BLOCK)          # reads what the first call wrote (global memory)


@triton.jit
def loop_then_sum_kernel(X, Y, S, BLOCK: tl.constexpr, TIMES: tl.constexpr):
    for i in range(TIMES):
        _transpose_store(X + i * BLOCK * BLOCK, Y + i * BLOCK * BLOCK, BLOCK)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
    tl.store(S + offs, tl.sum(x, axis=0))   # a cross-warp reduction: Triton's scratch memory



def _run(enabled, launch):
    if enabled:
        linear_layouts.enable()
    try:
        out = launch()
        import torch
        torch.cuda.synchronize()
        return out
    finally:
        linear_layouts.disable()


@pytest.mark.gpu
@pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))
@pytest.mark.parametrize("block, warps", [(64, 4), (128, 8)])
def test_noinline_helpers_are_bit_exact_on_the_gpu(monkeypatch, tmp_path, block, warps):
    import torch
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    x = torch.randn(4 * block * block, device="cuda")

    def twice():
        y, z = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
        for _ in range(20):    # a race shows as an occasional wrong element
            twice_kernel[(1,)](x, y, z, BLOCK=block, num_warps=warps)
        return z[:block * block].clone()

    def loop_then_sum():
        y, s = torch.full_like(x, float("nan")), torch.zeros(block, device="cuda")
        for _ in range(20):
            loop_then_sum_kernel[(1,)](x, y, s, BLOCK=block, TIMES=4, num_warps=warps)
        return torch.cat([y, s])

    for launch in (twice, loop_then_sum):
        stock, ours = _run(False, launch), _run(True, launch)
        assert torch.equal(stock, ours), launch.__name__
    assert torch.equal(twice(), x[:block * block])   # transposed twice: X again


def test_the_helpers_conversion_is_an_island(monkeypatch, tmp_path):
    """The GPU test above is about our islands: the helper's conversion is lowered by us."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from linear_layouts.passes.drop_in import hook
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    hook.reset_stats()
    with linear_layouts.enabled():
        compiled = triton.compile(ASTSource(twice_kernel, {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "BLOCK": "constexpr"},
                                            constexprs={"BLOCK": 64}),
                                  target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    assert hook.stats().islands >= 1, hook.stats().summary()
    assert compiled.asm["ptx"].count("call.uni") == 2
