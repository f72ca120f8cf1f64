"""Gluon kernels with hand-picked layouts a newcomer might write, for the report's advice.

In Gluon the author writes every layout; these four compile and run, but each of their
layouts costs something the report's advice names (``passes/advice/layout_advice.py``), with the
layout to write instead::

    python -m linear_layouts report --format md examples/gluon_advice_example.py
    python -m linear_layouts report --measure --format md examples/gluon_advice_example.py --launch   # GPU

``--launch`` (a GPU and torch): launch each kernel once and check it against torch instead of
compiling for a target, so ``report --measure`` times them as written and with the advice applied.

* ``copy``: one element per thread, so 4-byte loads where the pointers allow 16 bytes;
* ``column_sums``: a tile loaded with the threads down the columns (each warp's loads touch a
  sector per element) and converted inside the loop, on every iteration, to the accumulator's
  layout;
* ``scale_rows``: a row vector held in a layout whose tile is wider than the vector (every
  thread holds copies of the same elements);
* ``transpose``: a tile written to shared memory by rows and read back by columns through an
  unswizzled buffer (bank conflicts on the reads).
"""

import argparse

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

TARGETS = {"sm_90": GPUTarget("cuda", 90, 32), "sm_80": GPUTarget("cuda", 80, 32)}
ALIGNED = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}


@gluon.jit
def copy(X, Y, N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offsets = gl.arange(0, N, layout=layout)
    gl.store(Y + offsets, gl.load(X + offsets))


@gluon.jit
def column_sums(X, Y, M: gl.constexpr, N: gl.constexpr):
    columns_first: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1])
    accumulator: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, columns_first))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, columns_first))
    total = gl.zeros([M, N], gl.float32, layout=accumulator)
    for k in range(8):
        tile = gl.load(X + k * M * N + rows[:, None] * N + cols[None, :])
        total += gl.convert_layout(tile, accumulator)
    out_rows = gl.arange(0, M, layout=gl.SliceLayout(1, accumulator))
    out_cols = gl.arange(0, N, layout=gl.SliceLayout(0, accumulator))
    gl.store(Y + out_rows[:, None] * N + out_cols[None, :], gl.sum(total, axis=0)[None, :] + total)


@gluon.jit
def scale_rows(X, Y, N: gl.constexpr):
    wide: gl.constexpr = gl.BlockedLayout([8], [32], [4], [0])
    offsets = gl.arange(0, N, layout=wide)
    gl.store(Y + offsets, gl.load(X + offsets) * 2.0)


@gluon.jit
def transpose(X, Y, N: gl.constexpr):
    by_rows: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    by_columns: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
    unswizzled: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    rows = gl.arange(0, N, layout=gl.SliceLayout(1, by_rows))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, by_rows))
    tile = gl.load(X + rows[:, None] * N + cols[None, :])
    buffer = gl.allocate_shared_memory(gl.float32, [N, N], unswizzled, tile)
    columns = buffer.load(by_columns)
    out_rows = gl.arange(0, N, layout=gl.SliceLayout(1, by_columns))
    out_cols = gl.arange(0, N, layout=gl.SliceLayout(0, by_columns))
    gl.store(Y + out_cols[None, :] * N + out_rows[:, None], columns)


def launch() -> None:
    """Each kernel once on the GPU, checked against torch."""
    import torch
    x = torch.randn(8 * 64 * 64, device="cuda")
    y = torch.empty_like(x)
    copy[(1,)](x, y, N=1024)
    torch.testing.assert_close(y[:1024], x[:1024], rtol=0, atol=0)
    column_sums[(1,)](x, y, M=64, N=64)
    total = x.view(8, 64, 64).sum(0)
    torch.testing.assert_close(y[:4096].view(64, 64), total.sum(0)[None, :] + total, rtol=1e-4, atol=1e-4)
    scale_rows[(1,)](x, y, N=256)
    torch.testing.assert_close(y[:256], 2 * x[:256], rtol=0, atol=0)
    transpose[(1,)](x, y, N=64)
    torch.testing.assert_close(y[:4096].view(64, 64), x[:4096].view(64, 64).T, rtol=0, atol=0)
    print("launched and checked 4 Gluon kernels")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="sm_90")
    parser.add_argument("--launch", action="store_true", help="launch each kernel on the GPU (needs torch)")
    args = parser.parse_args()
    if args.launch:
        launch()
        return
    target = TARGETS[args.target]
    pointers = {"X": "*fp32", "Y": "*fp32"}
    triton.compile(GluonASTSource(copy, pointers, {"N": 1024}, attrs=ALIGNED), target=target)
    triton.compile(GluonASTSource(column_sums, pointers, {"M": 64, "N": 64}, attrs=ALIGNED), target=target)
    triton.compile(GluonASTSource(scale_rows, pointers, {"N": 256}, attrs=ALIGNED), target=target)
    triton.compile(GluonASTSource(transpose, pointers, {"N": 64}, attrs=ALIGNED), target=target)
    print(f"compiled 4 Gluon kernels for {target.backend} {target.arch}")


if __name__ == "__main__":
    main()
