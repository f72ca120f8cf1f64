"""Gluon written with no layouts, resolved by linear_layouts (no GPU needed: compiled for sm_90).

    python docs/examples/gluon_auto.py            # the layouts each kernel got, and why
    python docs/examples/gluon_auto.py --stock    # the same kernels with Triton's own resolution

Stock Triton rejects both kernels: no layout reaches the column sum's index vectors, and the
transpose's tile; with ``enable(resolve_auto_layouts=True)`` they compile."""

import re
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

import linear_layouts


@gluon.jit
def column_sum(src, dst, M: gl.constexpr, N: gl.constexpr):
    r = gl.arange(0, M)[:, None]
    c = gl.arange(0, N)
    x = gl.load(src + r * N + c[None, :])
    gl.store(dst + c, gl.sum(x, axis=0))


@gluon.jit
def transpose(src, dst, M: gl.constexpr, N: gl.constexpr):
    r = gl.arange(0, M)[:, None]
    c = gl.arange(0, N)[None, :]
    gl.store(dst + c * M + r, gl.load(src + r * N + c))


def main() -> int:
    stock = "--stock" in sys.argv
    if not stock:
        linear_layouts.enable(resolve_auto_layouts=True, remarks=True)
    aligned = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    for kernel in (column_sum, transpose):
        src = GluonASTSource(kernel, {"src": "*fp32", "dst": "*fp32"}, {"M": 64, "N": 128}, attrs=aligned)
        try:
            compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
        except Exception as error:
            print(f"{kernel.__name__}: Triton fails: {str(error).splitlines()[0]}")
            continue
        layouts = sorted(set(re.findall(r"^#\w+ = (#ttg\.blocked<.*>)$", compiled.asm["ttgir"], flags=re.M)))
        print(f"{kernel.__name__}: compiled; layouts: {'; '.join(layouts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
