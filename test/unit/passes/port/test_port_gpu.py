"""The pipelined ports run on a GPU: each dot loop the port writes pipelined (a ring of tiles in
shared memory, copies ahead, the waits) computes what the original computes, on the GPU's own
target.  Skipped where there is no GPU; on the CPU ``test_port.py`` checks the same ports compile,
keep every access as wide and keep the matrix instruction.

    python -m pytest -m gpu test/unit/passes/port/test_port_gpu.py
"""

from __future__ import annotations

import pytest

from linear_layouts import port
from support.gpu import cuda_gpu_missing

from . import port_kernels as k

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))]


def _target() -> str:
    import torch
    major, minor = torch.cuda.get_device_capability()
    return {8: "sm80", 9: "sm90", 10: "sm100", 12: "sm120"}.get(major, f"sm{major}{minor}")


def _tensor(*shape, zeros=False):
    import torch
    torch.manual_seed(len(shape) * 1000 + shape[0])
    made = torch.zeros(shape, dtype=torch.float16, device="cuda") if zeros else \
        torch.randn(shape, dtype=torch.float16, device="cuda") / 8
    return made


def _checked(kernel, grid, **arguments):
    made = port(kernel, _target(), num_warps=4, num_stages=3, check=True, grid=grid, details=True,
                atol=1e-2, rtol=1e-2, **arguments)
    assert made.pipelines.loops, made.pipelines.skipped
    assert made.check.outputs.startswith("equal"), made.check.summary()
    return made


@pytest.mark.parametrize("K", [1024, 1000])      # a whole number of tiles, and a masked last tile
def test_a_pipelined_matmul_with_computed_offsets_computes_the_originals_product(K):
    M, N = 256, 256
    _checked(k.matmul_offsets_kernel, (M // 128, N // 128), a_ptr=_tensor(M, K), b_ptr=_tensor(K, N),
             c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, stride_am=K, stride_bk=N, stride_cm=N,
             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)


def test_a_pipelined_matmul_with_advanced_pointers_computes_the_originals_product():
    M, N, K = 256, 256, 1024
    _checked(k.matmul_kernel, (M // 128, N // 128), a_ptr=_tensor(M, K), b_ptr=_tensor(K, N),
             c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, stride_am=K, stride_bk=N, stride_cm=N,
             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)


def test_a_pipelined_persistent_matmul_computes_the_originals_product():
    M, N, K = 512, 512, 640
    _checked(k.persistent_matmul_kernel, (3,), a_ptr=_tensor(M, K), b_ptr=_tensor(K, N),
             c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, stride_am=K, stride_bk=N, stride_cm=N,
             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)


def test_a_pipelined_attention_computes_the_originals_output():
    n_ctx, head = 1024, 64
    _checked(k.attention_kernel, (n_ctx // 128,), q_ptr=_tensor(n_ctx, head), k_ptr=_tensor(n_ctx, head),
             v_ptr=_tensor(n_ctx, head), o_ptr=_tensor(n_ctx, head, zeros=True), N_CTX=n_ctx, stride_m=head,
             BLOCK_M=128, BLOCK_N=64, HEAD=head)


@pytest.mark.parametrize("M, N, K", [(256, 256, 1024), (200, 328, 1000)])   # whole tiles; ragged edges (masked)
def test_a_block_pointer_matmul_computes_the_originals_product(M, N, K):
    from . import block_pointer_kernels as bk
    made = port(bk.block_matmul_kernel, _target(), num_warps=4, num_stages=3, check=True, grid=((M + 127) // 128,
                (N + 127) // 128), details=True, atol=1e-2, rtol=1e-2, a_ptr=_tensor(M, K), b_ptr=_tensor(K, N),
                c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1,
                stride_cm=N, stride_cn=1, BM=128, BN=128, BK=64)
    assert made.check.outputs.startswith("equal"), made.check.summary()
    if K == 1024:     # whole tiles: pipelined, as Triton's compile pipelines it
        assert made.pipelines.loops, made.pipelines.skipped
    assert "a_bp.mask((0, 1), " in made.source or "boundary_check=(0, 1), padding_option=\"zero\"" in made.source


def test_a_rank_three_block_pointer_checks_the_dimensions_asked_on_the_gpu():
    import torch
    from . import block_pointer_kernels as bk
    B, M, N = 5, 48, 32      # the last block of batches out of bounds (checked), the rest whole
    x = torch.randn(B, M, N, device="cuda")
    made = port(bk.block_scale_3d_kernel, _target(), num_warps=4, check=True, grid=(3, 3), details=True,
                x_ptr=x, y_ptr=torch.zeros_like(x), B=B, M=M, N=N, stride_b=M * N, stride_m=N, BB=2, BM=16, BN=32)
    assert made.check.outputs.startswith("equal"), made.check.summary()


def test_a_tensor_descriptor_port_computes_the_originals_output():
    import torch
    import triton
    from . import descriptor_kernels as dk
    # descriptors made in the kernel live in global scratch memory the launch allocates
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    M, N = 200, 328      # ragged edges: the copies clip them, as the original's do
    made = port(dk.descriptor_scale_kernel, _target(), num_warps=4, check=True, grid=(4,), details=True,
                x_ptr=_tensor(M, N), y_ptr=_tensor(M, N, zeros=True), M=M, N=N, BM=64, BN=64)
    assert made.check.outputs.startswith("equal"), made.check.summary()


@pytest.mark.parametrize("M, N, K", [(256, 256, 1024), (200, 328, 1000)])   # whole tiles; ragged edges (clipped)
def test_a_descriptor_matmul_pipelined_with_the_tma_computes_the_originals_product(M, N, K):
    import torch
    import triton
    from . import descriptor_kernels as dk
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    made = port(dk.descriptor_matmul_kernel, _target(), num_warps=8, num_stages=3, check=True,
                grid=((M + 127) // 128, (N + 127) // 128), details=True, atol=1e-2, rtol=1e-2, a_ptr=_tensor(M, K),
                b_ptr=_tensor(K, N), c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, BM=128, BN=128, BK=64)
    assert made.check.outputs.startswith("equal"), made.check.summary()
    assert made.pipelines.loops, made.pipelines.skipped


def test_a_pipelined_loop_counting_down_computes_the_originals_product():
    M, N, K = 256, 256, 1024      # whole tiles: the kernel masks nothing
    _checked(k.matmul_descending_kernel, (M // 128, N // 128), a_ptr=_tensor(M, K), b_ptr=_tensor(K, N),
             c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, stride_am=K, stride_bk=N, stride_cm=N,
             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)


def test_rings_of_two_depths_compute_the_originals_product():
    M, N, K = 256, 256, 1024
    made = _checked(k.matmul_scaled_b_kernel, (M // 128, N // 128), a_ptr=_tensor(M, K), b_ptr=_tensor(K, N),
                    c_ptr=_tensor(M, N, zeros=True), M=M, N=N, K=K, stride_am=K, stride_bk=N, stride_cm=N,
                    BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
    assert "2 tiles of b_raw" in str(made.pipelines.described) or "tiles of a, b_raw" in str(made.pipelines.described)
