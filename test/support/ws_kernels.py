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
