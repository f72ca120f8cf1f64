"""A small Triton program for ``python -m linear_layouts report`` (the README's quick start).

It compiles three kernels the way a user's program would, without a GPU, for the target given
on the command line (default sm_90): a transpose (its ``ttg.convert_layout`` crosses warps), a
row normalization (storing the row sums needs a conversion) and an interleave of two vectors::

    python -m linear_layouts report -o report/ examples/report_example.py
    python -m linear_layouts report --format md examples/report_example.py --target gfx942
"""

import argparse

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

TARGETS = {"sm_90": GPUTarget("cuda", 90, 32), "sm_80": GPUTarget("cuda", 80, 32),
           "gfx942": GPUTarget("hip", "gfx942", 64)}


@triton.jit
def transpose(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tile = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
    tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tile)


@triton.jit
def normalize_rows(X, Y, SUMS, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    x = tl.load(X + rows[:, None] * N + cols[None, :])
    total = tl.sum(x, axis=1)
    tl.store(SUMS + rows, total)                  # the row sums, one per row
    tl.store(Y + rows[:, None] * N + cols[None, :], x / total[:, None])


@triton.jit
def interleave_pairs(X, Y, D: tl.constexpr):
    offs = tl.arange(0, D // 2)
    a = tl.load(X + 2 * offs)
    b = tl.load(X + 2 * offs + 1)
    tl.store(Y + tl.arange(0, D), tl.interleave(a * b, a + b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="sm_90")
    target = TARGETS[parser.parse_args().target]
    triton.compile(ASTSource(transpose, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 32}), target=target)
    triton.compile(ASTSource(normalize_rows, {"X": "*fp32", "Y": "*fp32", "SUMS": "*fp32"},
                             constexprs={"N": 128, "ROWS": 16}), target=target)
    triton.compile(ASTSource(interleave_pairs, {"X": "*fp16", "Y": "*fp16"}, constexprs={"D": 256}), target=target)
    print(f"compiled 3 kernels for {target.backend} {target.arch}")


if __name__ == "__main__":
    main()
