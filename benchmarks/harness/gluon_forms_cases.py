"""Which Gluon kernels ``gluon_forms_gpu.py`` measures, and how each is launched.

The selection rule, stated before measuring: every ``@gluon.jit`` kernel that a Gluon tutorial of
the installed release (``python/tutorials/gluon/01`` to ``08``, and the attention example) launches,
that runs on an H100 (sm_90), and that writes at least one distributed layout the hardware does not
force (a ``BlockedLayout``, ``SliceLayout`` or ``DistributedLinearLayout``, in the kernel or in the
host code that passes it one).  At triton 3.6.0's commit that is 8 kernels:

* 01-intro: none (scalar loads, no layout written);
* 02-layouts: ``memcpy_1d_kernel``, ``memcpy_2d_kernel``, ``memcpy_2d_inout_kernel``;
* 03-async-copy: ``memcpy_1d_cpasync_kernel``, ``elementwise_add_kernel``,
  ``elementwise_add_cpasync_kernel``, ``elementwise_add_pipelined_kernel``;
* 04-tma: ``elementwise_add_tma_kernel`` (``memcpy_1d_tma_kernel`` writes no distributed layout);
* 05-wgmma, 07-persistence: none (TMA, NVMMA and dot-operand layouts only: forced);
* 06-tcgen05, the attention example, 08's matmul: Blackwell only;
* 08-warp-specialization: ``elementwise_add_warp_specialized_kernel``.

Plus our own ``gluon_forms_builtin.py`` (a copy and a tile transpose), which run where the
tutorials are not carried (CI).

Each case launches the kernel through the file's own launcher with the shapes of the tutorial's
own benchmark (its ``__main__`` block; where it sweeps a layout, the sweep's first entry; 03's
``memcpy_1d_cpasync`` has no benchmark and copies the 1 Gi elements of 03's), and checks it with
the file's own test function, every parametrization of it.  ``compile_args`` is the same launch
written out for a compile without a GPU: pointers as ``*fp32``, integers as their values (the JIT
specializes 1 to a constant, multiples of 16 as divisible), descriptors by block shape, and the
layouts the launcher passes as the expressions its code writes (made into each form by the rule).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HARNESS_DIR))
TUTORIALS_DIR = os.path.join(REPO_ROOT, ".peer-tests", "triton", "python", "tutorials", "gluon")
BUILTIN = os.path.join(HARNESS_DIR, "gluon_forms_builtin.py")

PTR = "*fp32"


@dataclass(frozen=True)
class Layout:
    """A layout the host code passes, as the expression it writes (``gl`` in scope)."""

    expression: str


@dataclass(frozen=True)
class Descriptor:
    """A TMA descriptor argument: fp32, this block shape, the launcher's default NVMMA layout."""

    block_shape: tuple


@dataclass(frozen=True)
class Case:
    name: str
    file: str                      # path of the source (a tutorial file or BUILTIN)
    kernel: str                    # the @gluon.jit kernel's name in it
    test: str                      # the file's test function for it
    tensors: Callable              # torch -> {name: tensor}; "out" is what the kernel writes
    launch: Callable               # (module, tensors, layout) -> None: the file's launcher
    compile_args: dict             # kernel argument -> PTR | int | Layout | Descriptor | constexpr value
    num_warps: int = 4
    options: dict = field(default_factory=dict)

    @property
    def builtin(self) -> bool:
        return self.file == BUILTIN


def _tutorial(name: str) -> str:
    return os.path.join(TUTORIALS_DIR, name)


# ------------------------------------------------------------------------------ inputs (GPU)

G = 1 << 30
SIDE = 32 * 1024


def _vector(n):
    return lambda torch: {"input": torch.randn(n, device="cuda"), "out": torch.empty(n, device="cuda")}


def _matrix(m, n, transposed_out=False):
    def make(torch):
        out = torch.empty(n, m, device="cuda").T if transposed_out else torch.empty(m, n, device="cuda")
        return {"input": torch.randn(m, n, device="cuda"), "out": out}
    return make


def _abc(torch):
    return {"A": torch.randn(SIDE, SIDE, device="cuda"), "B": torch.randn(SIDE, SIDE, device="cuda"),
            "out": torch.empty(SIDE, SIDE, device="cuda")}


def _add_args(**constexprs):
    return {"a_ptr": PTR, "b_ptr": PTR, "c_ptr": PTR, "xnumel": SIDE, "ynumel": SIDE,
            "xstride_a": SIDE, "ystride_a": 1, "xstride_b": SIDE, "ystride_b": 1, "xstride_c": SIDE, "ystride_c": 1,
            **constexprs}


SMEM_2D = "gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])"
ROWS = "gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])"           # 02's memcpy_2d bench
COLUMNS = "gl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1])"        # get_layout_for_gmem_access, stride(0) == 1


def cases() -> list[Case]:
    return [
        Case("02-layouts/memcpy_1d_kernel", _tutorial("02-layouts.py"), "memcpy_1d_kernel", "test_memcpy_1d",
             _vector(2 * G),
             lambda m, t, L: m.memcpy_1d_impl(t["input"], t["out"], 2048, L("gl.BlockedLayout([1], [32], [4], [0])"), 4),
             {"in_ptr": PTR, "out_ptr": PTR, "xnumel": 2 * G, "XBLOCK": 2048,
              "layout": Layout("gl.BlockedLayout([1], [32], [4], [0])")}),
        Case("02-layouts/memcpy_2d_kernel", _tutorial("02-layouts.py"), "memcpy_2d_kernel", "test_memcpy_2d",
             _matrix(SIDE, 2 * SIDE),
             lambda m, t, L: m.memcpy_2d_impl(t["input"], t["out"], 1, 2048, L(ROWS), 4),
             {"in_ptr": PTR, "out_ptr": PTR, "xnumel": SIDE, "ynumel": 2 * SIDE, "xstride_in": 2 * SIDE,
              "ystride_in": 1, "xstride_out": 2 * SIDE, "ystride_out": 1, "layout": Layout(ROWS), "XBLOCK": 1,
              "YBLOCK": 2048}),
        Case("02-layouts/memcpy_2d_inout_kernel", _tutorial("02-layouts.py"), "memcpy_2d_inout_kernel",
             "test_memcpy_2d_inout", _matrix(SIDE, SIDE, transposed_out=True),
             lambda m, t, L: m.memcpy_2d_inout(t["input"], t["out"]),
             {"in_ptr": PTR, "out_ptr": PTR, "xnumel": SIDE, "ynumel": SIDE, "xstride_in": SIDE, "ystride_in": 1,
              "xstride_out": 1, "ystride_out": SIDE, "layout_in": Layout(ROWS.replace("[1, 4]", "[1, num_warps]")),
              "layout_out": Layout(COLUMNS.replace("[4, 1]", "[num_warps, 1]")), "XBLOCK": 128, "YBLOCK": 128}),
        Case("03-async-copy/memcpy_1d_cpasync_kernel", _tutorial("03-async-copy.py"), "memcpy_1d_cpasync_kernel",
             "test_memcpy_1d_cpasync", _vector(G),
             lambda m, t, L: m.memcpy_1d_cpasync(t["input"], t["out"]),
             {"in_ptr": PTR, "out_ptr": PTR, "xnumel": G, "XBLOCK": 8192}),
        Case("03-async-copy/elementwise_add_kernel", _tutorial("03-async-copy.py"), "elementwise_add_kernel",
             "test_elementwise_add", _abc, lambda m, t, L: m.elementwise_add(t["A"], t["B"], t["out"]),
             _add_args(XBLOCK=32, YBLOCK=64)),
        Case("03-async-copy/elementwise_add_cpasync_kernel", _tutorial("03-async-copy.py"),
             "elementwise_add_cpasync_kernel", "test_elementwise_add_cpasync", _abc,
             lambda m, t, L: m.elementwise_add_cpasync(t["A"], t["B"], t["out"], L(SMEM_2D)),
             _add_args(XBLOCK=32, YBLOCK=64, smem_layout=Layout(SMEM_2D))),
        Case("03-async-copy/elementwise_add_pipelined_kernel", _tutorial("03-async-copy.py"),
             "elementwise_add_pipelined_kernel", "test_elementwise_add_pipelined", _abc,
             lambda m, t, L: m.elementwise_add_pipelined(t["A"], t["B"], t["out"], num_buffers=2),
             _add_args(XBLOCK=32, YBLOCK=64, smem_layout=Layout(SMEM_2D), num_buffers=2)),
        Case("04-tma/elementwise_add_tma_kernel", _tutorial("04-tma.py"), "elementwise_add_tma_kernel",
             "test_elementwise_add_pipelined", _abc,
             lambda m, t, L: m.elementwise_add_tma(t["A"], t["B"], t["out"], 32, 64, 2),
             {"a_desc": Descriptor((32, 64)), "b_desc": Descriptor((32, 64)), "c_desc": Descriptor((32, 64)),
              "xnumel": SIDE, "ynumel": SIDE, "XBLOCK": 32, "YBLOCK": 64, "num_buffers": 2}),
        Case("08-warp-specialization/elementwise_add_warp_specialized_kernel", _tutorial("08-warp-specialization.py"),
             "elementwise_add_warp_specialized_kernel", "test_elementwise_add_warp_specialized", _abc,
             lambda m, t, L: m.elementwise_add_warp_specialized(t["A"], t["B"], t["out"], 32, 64, 2, 2, 4),
             {"a_desc": Descriptor((32, 64)), "b_desc": Descriptor((32, 64)), "c_desc": Descriptor((32, 64)),
              "xnumel": SIDE, "ynumel": SIDE, "XBLOCK": 32, "YBLOCK": 64, "num_load_buffers": 2,
              "num_store_buffers": 2, "num_warps": 4}, options={"maxnreg": 128}),
        Case("builtin/copy_kernel", BUILTIN, "copy_kernel", "test_copy", _vector(G // 4),
             lambda m, t, L: m.copy(t["input"], t["out"]),
             {"in_ptr": PTR, "out_ptr": PTR, "xnumel": G // 4, "XBLOCK": 4096,
              "layout": Layout("gl.BlockedLayout([4], [32], [num_warps], [0])")}),
        Case("builtin/transpose_kernel", BUILTIN, "transpose_kernel", "test_transpose", _matrix(8192, 8192),
             lambda m, t, L: m.transpose(t["input"], t["out"]),
             {"in_ptr": PTR, "out_ptr": PTR, "M": 8192, "N": 8192, "BM": 64, "BN": 64}),
    ]
