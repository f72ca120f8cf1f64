"""Triton kernels with block pointers (``tl.make_block_ptr``; triton 3.6 to 3.8), for the port's tests."""

import triton
import triton.language as tl


@triton.jit
def block_copy_kernel(x_ptr, n, BLOCK: tl.constexpr):
    block = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    tl.store(block, tl.load(block) + 1)


@triton.jit
def block_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(pid_m * BM, 0),
                             block_shape=(BM, BK), order=(1, 0))
    b_bp = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, pid_n * BN),
                             block_shape=(BK, BN), order=(1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                             offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN), order=(1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def block_scale_3d_kernel(x_ptr, y_ptr, B, M, N, stride_b, stride_m, BB: tl.constexpr, BM: tl.constexpr,
                          BN: tl.constexpr):
    x = tl.make_block_ptr(x_ptr, (B, M, N), (stride_b, stride_m, 1), (tl.program_id(0) * BB, tl.program_id(1) * BM, 0),
                          (BB, BM, BN), (2, 1, 0))
    y = tl.make_block_ptr(y_ptr, (B, M, N), (stride_b, stride_m, 1), (tl.program_id(0) * BB, tl.program_id(1) * BM, 0),
                          (BB, BM, BN), (2, 1, 0))
    v = tl.load(x, boundary_check=(0, 2), padding_option="nan")
    tl.store(y, v * 2, boundary_check=(0, 1, 2))


@triton.jit
def block_cast_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, NEVER: tl.constexpr):
    x = tl.make_block_ptr(x_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    y = tl.make_block_ptr(y_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    v = tl.load(x, boundary_check=(0,)).to(tl.float32) * 2
    if NEVER:     # a branch Triton never compiles: no layout of Triton's to give its access
        tl.store(y, v.to(y.dtype.element_ty) + 1, boundary_check=(0,))
    else:
        tl.store(y, v.to(y.dtype.element_ty), boundary_check=(0,))
