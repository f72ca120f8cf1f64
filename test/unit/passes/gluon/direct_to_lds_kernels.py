"""Gluon kernels that load global memory straight into shared memory on AMD
(``cdna4.async_copy.global_to_shared``: ``ttg.async_copy_global_to_local``, lowered to
``global_load_lds_dword*``), every distributed layout automatic, for
``test_direct_to_lds_requirements.py``.  Run as a script it compiles one of them with
``linear_layouts.enable(remarks=True)`` and prints a JSON verdict (the test runs it in a
subprocess: the plugin's state is per process)::

    python direct_to_lds_kernels.py DTYPE ARCH

Triton 3.9's front end takes automatic layouts for these copies; 3.6's asks for a blocked or
slice layout."""

import json
import re
import sys

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd.cdna4 import async_copy as cp


@gluon.jit
def tile_copy(src, dst, M: gl.constexpr, N: gl.constexpr):
    # a 64 x 64 tile through an unswizzled row-major buffer, as a matmul stages its operands
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    smem = gl.allocate_shared_memory(src.dtype.element_ty, [M, N], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    cp.global_load_to_shared(smem, src + r * N + c)
    cp.commit_group()
    cp.wait_group(0)
    gl.store(dst + r * N + c, smem.load(gl.AutoLayout()))


def compile_kernel(dtype: str, arch: str) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    import linear_layouts

    signature = {"src": f"*{dtype}", "dst": f"*{dtype}"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(signature))}
    linear_layouts.enable(remarks=True)
    try:
        compiled = triton.compile(GluonASTSource(tile_copy, signature, {"M": 64, "N": 64}, attrs=attrs),
                                  target=GPUTarget("hip", arch, 64))
    except Exception as error:   # the verdict says why; stderr holds Triton's diagnostics and our remarks
        return {"compiled": False, "error": str(error).splitlines()[0]}
    amdgcn, ttgir = compiled.asm["amdgcn"], compiled.asm["ttgir"]
    copy_layout = re.search(r"ttg\.async_copy_global_to_local [^:]* : tensor<[^,]*, #(\w+)>", ttgir)
    per_thread = re.search(r"#" + copy_layout.group(1) + r" = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", ttgir)
    return {"compiled": True, "loads": sorted(set(re.findall(r"\bglobal_load_lds_\w+", amdgcn))),
            "size_per_thread": [int(x) for x in per_thread.group(1).split(", ")],
            "fallbacks": [f.stage for f in linear_layouts.stats().fallbacks]}


if __name__ == "__main__":
    print(json.dumps(compile_kernel(sys.argv[1], sys.argv[2])))
