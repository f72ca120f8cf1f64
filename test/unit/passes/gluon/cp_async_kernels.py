"""Gluon kernels that copy global memory into shared memory with ``cp.async``, every distributed
layout automatic, for ``test_cp_async_requirements.py``.  Run as a script it compiles one of
them with ``linear_layouts.enable(remarks=True)`` and prints a JSON verdict (the test runs it in
a subprocess: Triton may abort on an invalid kernel)::

    python cp_async_kernels.py NAME DTYPE ARCH DIVISIBILITY

``DIVISIBILITY``: the ``tt.divisibility`` (bytes) of every argument, 0 for none (alignment
unknown)."""

import json
import re
import sys

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp

copy_to_shared = getattr(cp, "async_load", None) or cp.async_copy_global_to_shared     # 3.9 / 3.6
barrier = getattr(gl, "barrier", None) or gl.thread_barrier                             # 3.9 / 3.6


@gluon.jit
def tile_sum(src, dst, K, M: gl.constexpr, N: gl.constexpr):
    # the pointers advanced every iteration (loop-carried), as attention kernels walk K and V
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    smem = gl.allocate_shared_memory(src.dtype.element_ty, [M, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    pointers = src + r * N + c
    acc = gl.zeros([M, N], gl.float32, layout=gl.AutoLayout())
    for _ in range(K):
        copy_to_shared(smem, pointers)
        cp.commit_group()
        cp.wait_group(0)
        acc += smem.load(gl.AutoLayout()).to(gl.float32)
        barrier()
        pointers += M * N
    gl.store(dst + r * N + c, acc)


@gluon.jit
def masked_copy(src, dst, m, n, M: gl.constexpr, N: gl.constexpr):
    # into an NVMMA (128-byte swizzled) buffer, under a mask whose bounds are arguments
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    smem = gl.allocate_shared_memory(src.dtype.element_ty, [M, N], layout)
    mask = (r < m) & (c < n)
    copy_to_shared(smem, src + r * N + c, mask=mask)
    cp.commit_group()
    cp.wait_group(0)
    gl.store(dst + r * N + c, smem.load(gl.AutoLayout()), mask=mask)


@gluon.jit
def clamped_rows(src, dst, n, M: gl.constexpr, N: gl.constexpr):
    # rows clamped to the last valid one (gl.minimum), as attention-residual kernels read tokens
    t = gl.program_id(0) * M + gl.arange(0, M, layout=gl.AutoLayout())
    r = gl.minimum(t, n - 1)[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    smem = gl.allocate_shared_memory(src.dtype.element_ty, [M, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    copy_to_shared(smem, src + r * N + c)
    cp.commit_group()
    cp.wait_group(0)
    gl.store(dst + t[:, None] * N + c, smem.load(gl.AutoLayout()), mask=t[:, None] < n)


KERNELS = {
    "tile_sum": (tile_sum, {"K": "i32"}, {"M": 64, "N": 64}),
    "masked_copy": (masked_copy, {"m": "i32", "n": "i32"}, {"M": 64, "N": 64}),
    "clamped_rows": (clamped_rows, {"n": "i32"}, {"M": 64, "N": 64}),
}


def compile_kernel(name: str, dtype: str, arch: int, divisibility: int) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    import linear_layouts

    kernel, scalars, constexprs = KERNELS[name]
    signature = {"src": f"*{dtype}", "dst": "*fp32" if name == "tile_sum" else f"*{dtype}", **scalars}
    attrs = {(i,): [["tt.divisibility", divisibility]] for i in range(len(signature))} if divisibility else {}
    linear_layouts.enable(remarks=True)
    try:
        compiled = triton.compile(GluonASTSource(kernel, signature, constexprs, attrs=attrs),
                                  target=GPUTarget("cuda", arch, 32))
    except Exception as error:   # the verdict says why; stderr holds Triton's diagnostics and our remarks
        return {"compiled": False, "error": str(error).splitlines()[0]}
    ptx, ttgir = compiled.asm["ptx"], compiled.asm["ttgir"]
    copies = re.findall(r"cp\.async\.(c[ag])\.shared\.global \[[^]]*\], \[[^]]*\], (0x[0-9a-f]+)", ptx)
    copy_layout = re.search(r"ttg\.async_copy_global_to_local [^:]* : tensor<[^,]*, #(\w+)>", ttgir)
    per_thread = re.search(r"#" + copy_layout.group(1) + r" = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", ttgir)
    return {"compiled": True, "copies": sorted({(kind, int(size, 16)) for kind, size in copies}),
            "size_per_thread": [int(x) for x in per_thread.group(1).split(", ")],
            "fallbacks": [f.stage for f in linear_layouts.stats().fallbacks]}


if __name__ == "__main__":
    name, dtype, arch, divisibility = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(compile_kernel(name, dtype, arch, divisibility)))
