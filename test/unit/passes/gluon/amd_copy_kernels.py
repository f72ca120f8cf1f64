"""Gluon kernels that copy through AMD's memory ops with every distributed layout automatic, for
``test_direct_to_lds_requirements.py`` and ``test_buffer_ops.py``:

* ``global_to_shared``: ``cdna4.async_copy.global_load_to_shared`` (``ttg.async_copy_global_to_local``,
  lowered to ``global_load_lds_dword*``), ``copy_through_shared`` from a tensor of pointers;
* ``copy``: ``cdna3.buffer_load`` / ``buffer_store`` (a scalar base and a tensor of offsets:
  ``amdg.buffer_load`` / ``amdg.buffer_store``);
* ``to_shared``: ``cdna4.async_copy.buffer_load_to_shared`` (``amdg.buffer_load_to_local``,
  lowered to ``buffer_load_dword* ... lds``), the same kernel from a scalar base and offsets;
* ``atomic_add``: ``cdna3.buffer_atomic_add`` (``amdg.buffer_atomic_rmw fadd``, lowered to
  ``buffer_atomic_pk_add_f16`` for f16, ``buffer_atomic_add_f32`` for f32);
* ``transposed_atomic_add``: the same of a tile loaded column by column (``gl.load`` of pointers
  contiguous along dim 0): the loads would take 16-byte columns, and the atomic, in their layout,
  one element a thread along its rows, which a packed f16 atomic cannot do.

Run as a script it compiles one of them with ``linear_layouts.enable(remarks=True)`` and prints a
JSON verdict (the tests run it in a subprocess: the plugin's state is per process)::

    python amd_copy_kernels.py KERNEL DTYPE ARCH

Triton 3.9's front end takes automatic layouts for all three; 3.6's for ``buffer_load`` /
``buffer_store`` only (the copies into shared memory ask for a blocked or slice layout)."""

import json
import re
import sys

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import cdna3
from triton.experimental.gluon.language.amd.cdna4 import async_copy as cp


@gluon.jit
def copy_through_shared(src, dst, M: gl.constexpr, N: gl.constexpr, BUFFER: gl.constexpr):
    # a 64 x 64 tile through an unswizzled row-major buffer, as a matmul stages its operands:
    # loaded into it from a tensor of pointers, or (BUFFER) from a scalar base and offsets
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    smem = gl.allocate_shared_memory(src.dtype.element_ty, [M, N], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    if BUFFER:
        cp.buffer_load_to_shared(smem, src, r * N + c)
    else:
        cp.global_load_to_shared(smem, src + r * N + c)
    cp.commit_group()
    cp.wait_group(0)
    gl.store(dst + r * N + c, smem.load(gl.AutoLayout()))


@gluon.jit
def buffer_copy(src, dst, n, M: gl.constexpr, N: gl.constexpr):
    # a masked 64 x 64 tile, doubled, through offsets from scalar bases
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    offsets = r * N + c
    x = cdna3.buffer_load(src, offsets, mask=offsets < n, other=0.0)
    cdna3.buffer_store(x * 2, dst, offsets, mask=offsets < n)


@gluon.jit
def atomic_add_into(src, dst, n, M: gl.constexpr, N: gl.constexpr):
    # a masked 64 x 64 tile added into another, the old values written back over the source
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    offsets = r * N + c
    x = cdna3.buffer_load(src, offsets, mask=offsets < n, other=0.0)
    old = cdna3.buffer_atomic_add(dst, offsets, x, mask=offsets < n)
    cdna3.buffer_store(old, src, offsets, mask=offsets < n)


@gluon.jit
def transposed_add_into(src, dst, n, M: gl.constexpr, N: gl.constexpr):
    # a 64 x 64 tile read column-major, added into a row-major one
    r = gl.arange(0, M, layout=gl.AutoLayout())[:, None]
    c = gl.arange(0, N, layout=gl.AutoLayout())[None, :]
    x = gl.load(src + r + c * M)
    cdna3.buffer_atomic_add(dst, r * N + c, x)


_ATOMIC_LAYOUT = r"amdg\.buffer_atomic_rmw [^:]*: (?:[^:]*-> )?tensor<[^,]*, #(\w+)>"
# name -> (kernel, its constexprs besides M and N, where the TTGIR names the access's layout)
KERNELS = {"global_to_shared": (copy_through_shared, {"BUFFER": False},
                                r"ttg\.async_copy_global_to_local [^:]* : tensor<[^,]*, #(\w+)>"),
           "copy": (buffer_copy, {}, r"amdg\.buffer_load %\w+\[%\w+\][^:]*: (?:[^:]*-> )?tensor<[^,]*, #(\w+)>"),
           "to_shared": (copy_through_shared, {"BUFFER": True},
                         r"amdg\.buffer_load_to_local [^:]* : [^\[]*\[tensor<[^,]*, #(\w+)>\]"),
           "atomic_add": (atomic_add_into, {}, _ATOMIC_LAYOUT),
           "transposed_atomic_add": (transposed_add_into, {}, _ATOMIC_LAYOUT)}


def compile_kernel(kernel: str, dtype: str, arch: str) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    import linear_layouts

    function, constexprs, layout_of_access = KERNELS[kernel]
    signature = {"src": f"*{dtype}", "dst": f"*{dtype}", **({"n": "i32"} if "n" in function.arg_names else {})}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(signature))}
    linear_layouts.enable(remarks=True)
    try:
        compiled = triton.compile(GluonASTSource(function, signature, {"M": 64, "N": 64, **constexprs}, attrs=attrs),
                                  target=GPUTarget("hip", arch, 64))
    except Exception as error:   # the verdict says why; stderr holds Triton's diagnostics and our remarks
        return {"compiled": False, "error": str(error).splitlines()[0]}
    amdgcn, ttgir = compiled.asm["amdgcn"], compiled.asm["ttgir"]
    layout = re.search(layout_of_access, ttgir)
    per_thread = re.search(r"#" + layout.group(1) + r" = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", ttgir)
    stats = linear_layouts.stats()
    return {"compiled": True,
            # "buffer_load_dwordx4 ... lds": a direct-to-LDS load
            "buffer_ops": sorted({m.group(1) + (" ... lds" if m.group(2) else "") for m in
                                  re.finditer(r"\b(buffer_(?:load|store|atomic)_\w+)[^\n]*?( lds)?$", amdgcn, re.M)}),
            "loads": sorted(set(re.findall(r"\bglobal_load_lds_\w+", amdgcn))),
            "size_per_thread": [int(x) for x in per_thread.group(1).split(", ")],
            "resolved": stats.auto_layouts_resolved, "fallbacks": [f.stage for f in stats.fallbacks]}


if __name__ == "__main__":
    print(json.dumps(compile_kernel(*sys.argv[1:4])))
