"""One small kernel (a 32x32 transpose, one convert_layout) that the drop-in hook tests compile."""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def transpose_kernel(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
    tl.store(Y + offs[None, :] * BLOCK + offs[:, None], x)


SOURCE = ASTSource(fn=transpose_kernel, signature={"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 32})
TARGET = GPUTarget("cuda", 90, 32)
