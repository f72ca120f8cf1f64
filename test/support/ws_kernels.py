"""Warp-specialized Gluon kernels whose partitions each convert a tile through shared memory
(a row-major -> column-major blocked layout change, which both Triton and our islands do with
shared memory and barriers).  Default group: 4 warps; workers of 4, 2 and 1 warps.  Each
partition copies X into its own output, so a wrong element, a race or a hang shows.

Works on Triton 3.6 (``worker_num_regs`` required) and 3.9.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

COLS = 64


@gluon.jit
def _copy_through_conversion(X, Y, ROWS: gl.constexpr, WARPS: gl.constexpr):
    src: gl.constexpr = gl.BlockedLayout([1, 4], [32, 1], [1, WARPS], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([4, 1], [1, 32], [WARPS, 1], [0, 1])
    rows = gl.arange(0, ROWS, layout=gl.SliceLayout(1, src))
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    x = gl.load(X + rows[:, None] * 64 + cols[None, :])
    y = gl.convert_layout(x, dst)
    rows2 = gl.arange(0, ROWS, layout=gl.SliceLayout(1, dst))
    cols2 = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(Y + rows2[:, None] * 64 + cols2[None, :], y + 1.0)


@gluon.jit
def _default(X, Y):
    _copy_through_conversion(X, Y, 64, 4)


@gluon.jit
def _worker4(X, Y):
    _copy_through_conversion(X, Y + 64 * 64, 64, 4)


@gluon.jit
def _worker2(X, Y):
    _copy_through_conversion(X, Y + 2 * 64 * 64, 32, 2)


@gluon.jit
def _worker1(X, Y):
    _copy_through_conversion(X, Y + 3 * 64 * 64, 32, 1)


@gluon.jit
def ws_kernel(X, Y):
    """Y[0] = X + 1 (default, 4 warps), Y[1] = X + 1 (4 warps), Y[2][:32] and Y[3][:32] from 2
    and 1 warps."""
    gl.warp_specialize([(_default, (X, Y)), (_worker4, (X, Y)), (_worker2, (X, Y)), (_worker1, (X, Y))],
                       [4, 2, 1], [24, 24, 24])


def source():
    from triton.experimental.gluon._runtime import GluonASTSource
    return GluonASTSource(fn=ws_kernel, signature={"X": "*fp32", "Y": "*fp32"}, constexprs={})


def expected(x):
    """The output the kernel must write (torch or numpy ``x`` of 64x64)."""
    y = x.new_zeros((4, 64, 64)) if hasattr(x, "new_zeros") else None
    y[0] = x + 1
    y[1] = x + 1
    y[2, :32] = x[:32] + 1
    y[3, :32] = x[:32] + 1
    return y


# Triton's automatic warp specialization (``tl.range(..., warp_specialize=True)``, sm_90+)
# makes the same structure: a loader and an MMA partition, the epilogue's conversions around.
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def auto_ws_matmul(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B.T for one BM x BN tile (A: BM x K, B: BN x K, row-major, fp16)."""
    a_desc = tl.make_tensor_descriptor(A, shape=[BM, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(B, shape=[BN, K], strides=[K, 1], block_shape=[BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([0, k]).T, acc)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    tl.store(C + offs_m[:, None] * BN + offs_n[None, :], acc.to(tl.float16))


def auto_ws_source():
    from triton.compiler import ASTSource
    return ASTSource(fn=auto_ws_matmul, signature={"A": "*fp16", "B": "*fp16", "C": "*fp16", "K": "i32"},
                     constexprs={"BM": 128, "BN": 128, "BK": 64})
