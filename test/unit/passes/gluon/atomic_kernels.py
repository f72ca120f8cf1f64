"""Gluon kernels that update global memory through Triton's atomics with every distributed layout
automatic, for ``test_atomics.py``:

* ``add``: a tile loaded and added into another (``gl.atomic_add``: ``tt.atomic_rmw fadd``), the
  old values unused;
* ``cas``: a tile loaded, compared and swapped into another (``gl.atomic_cas``: ``tt.atomic_cas``),
  the old values stored.

Run as a script it compiles one of them with ``linear_layouts.enable(remarks=True)`` and prints a
JSON verdict (the tests run it in a subprocess: the plugin's state is per process)::

    python atomic_kernels.py KERNEL DTYPE TARGET N

with TARGET ``sm_90``, ``sm_80`` or ``gfx942`` and N the tile's elements."""

import json
import re
import sys

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def add_into(X, Y, N: gl.constexpr):
    offs = gl.arange(0, N, layout=gl.AutoLayout())
    x = gl.load(X + offs)
    gl.atomic_add(Y + offs, x)


@gluon.jit
def swap_into(X, Y, Z, N: gl.constexpr):
    offs = gl.arange(0, N, layout=gl.AutoLayout())
    x = gl.load(X + offs)
    old = gl.atomic_cas(Y + offs, x, x + 1)
    gl.store(Z + offs, old)


# name -> (kernel, its pointer arguments)
KERNELS = {"add": (add_into, ("X", "Y")), "cas": (swap_into, ("X", "Y", "Z"))}
TARGETS = {"sm_90": ("cuda", 90, 32), "sm_80": ("cuda", 80, 32), "gfx942": ("hip", "gfx942", 64)}
# the atomic instructions of PTX and of AMDGCN
_ATOMIC_INSTRUCTION = re.compile(r"\b((?:atom|red)\.global\.[\w.]+|global_atomic_\w+)")
_ATOMIC_LAYOUT = r"tt\.atomic_(?:rmw|cas) [^:]*: \(tensor<[^,]*, #(\w+)>"


def compile_kernel(kernel: str, dtype: str, target: str, elements: int) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    import linear_layouts

    function, pointers = KERNELS[kernel]
    signature = {name: f"*{dtype}" for name in pointers} | {"N": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(pointers))}
    linear_layouts.enable(remarks=True)
    try:
        compiled = triton.compile(GluonASTSource(function, signature, {"N": elements}, attrs=attrs),
                                  target=GPUTarget(*TARGETS[target]))
    except Exception as error:   # the verdict says why; stderr holds Triton's diagnostics and our remarks
        return {"compiled": False, "error": str(error).splitlines()[0]}
    ttgir = compiled.asm["ttgir"]
    code = compiled.asm["ptx"] if "ptx" in compiled.asm else compiled.asm["amdgcn"]
    layout = re.search(_ATOMIC_LAYOUT, ttgir)
    encoding = re.search(r"^#" + layout.group(1) + r" = (#ttg\.blocked<.*>)$", ttgir, re.M)
    stats = linear_layouts.stats()
    return {"compiled": True, "layout": encoding.group(1),
            "atomics": sorted(set(_ATOMIC_INSTRUCTION.findall(code))),
            "resolved": stats.auto_layouts_resolved, "fallbacks": [f.stage for f in stats.fallbacks]}


if __name__ == "__main__":
    print(json.dumps(compile_kernel(*sys.argv[1:4], int(sys.argv[4]))))
