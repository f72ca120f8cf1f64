"""The path a load takes to a dot operand, in Gluon's automatic form: an mma_v2 matmul whose
loads are automatic (``gl.convert_layout(gl.load(ptrs), dot_operand)``, every blocked and slice
layout left to the resolution).

Each load's first layout comes from the dot operand it feeds (the MMA, or the operand itself),
so propagation alone offers no blocked layout: the resolution used to load B (32x128 f16, rows
along N contiguous) in the MMA layout, 2-element (4-byte) accesses, every row loaded by two
warps.  A load is now always offered the coalesced layout its pointers allow, whatever its first
layout (``layout_seeds.coalesced``), and the model prices it against the conversion it needs."""

import re

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402
from triton.experimental.gluon.language.nvidia.ampere import mma_v2  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import hook# noqa: E402
from linear_layouts.passes.assign.layout_seeds import coalesced  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py

MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"


@gluon.jit
def matmul_auto(a_ptr, b_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr):
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, 8])
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=8)
    b_layout: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=8)
    rm = gl.program_id(0) * BM + gl.arange(0, BM, layout=gl.AutoLayout())
    rn = gl.program_id(1) * BN + gl.arange(0, BN, layout=gl.AutoLayout())
    rk_a = gl.arange(0, BK, layout=gl.AutoLayout())
    rk_b = gl.arange(0, BK, layout=gl.AutoLayout())
    a_ptrs = a_ptr + rm[:, None] * K + rk_a[None, :]
    b_ptrs = b_ptr + rk_b[:, None] * N + rn[None, :]
    acc = gl.zeros([BM, BN], gl.float32, layout=mma)
    for _ in range(0, K, BK):
        a = gl.convert_layout(gl.load(a_ptrs), a_layout)
        b = gl.convert_layout(gl.load(b_ptrs), b_layout)
        acc = mma_v2(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    gl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(gl.float16))


def test_a_load_seeded_with_an_mma_layout_is_offered_the_coalesced_layout():
    # 32x128 f16, dim 1 contiguous, 16-byte aligned, 4 warps of 32 lanes: 8 elements a thread,
    # 16 lanes along a row of 128, the 4 warps down the rows
    assert coalesced(MMA, (32, 128), 1, 8, 2) == (
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>")
    dot_b = f"#ttg.dot_op<{{opIdx = 1, parent = {MMA}, kWidth = 8}}>"
    assert coalesced(dot_b, (32, 128), 1, 8, 2) == coalesced(MMA, (32, 128), 1, 8, 2)
    # dim 0 contiguous (a column-major operand): the other dims follow in row-major order
    assert coalesced(MMA, (128, 32), 0, 8, 2) == (
        "#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>")
    assert coalesced("#ttg.not_a_layout<{}>", (32, 128), 1, 8, 2) is None


@pytest.mark.parametrize("capability", [80, 90])
def test_the_matmul_loads_b_in_16_byte_vectors_and_reads_its_operand_with_ldmatrix(capability):
    source = GluonASTSource(matmul_auto, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32",
                                          "N": "i32", "K": "i32"}, {"BM": 128, "BN": 128, "BK": 32},
                            attrs={(i,): [["tt.divisibility", 16]] for i in range(6)})
    linear_layouts.enable()
    try:
        kernel = triton.compile(source, target=GPUTarget("cuda", capability, 32), options={"num_warps": 4})
    finally:
        linear_layouts.disable()
    assert hook.stats().auto_layouts_resolved == 1 and not hook.stats().fallbacks
    loads = [line for line in kernel.asm["ttgir"].splitlines() if " = tt.load " in line]
    b_load = next(line for line in loads if "tensor<32x128x!tt.ptr<f16>" in line)
    assert "#ttg.dot_op" not in b_load and "#mma" not in b_load, b_load
    ptx = kernel.asm["ptx"]
    # A: 128x32 in its dot-operand layout, 8 consecutive k a thread; B: 32x128 coalesced; both
    # 16-byte loads, 4 per thread each (the loop's body: 8; 3.6 peels part of the loop, 12), and no
    # narrower global load at all (before: 32 4-byte loads of B)
    loads = re.findall(r"ld\.global[\w.]*", ptx)
    assert len(loads) >= 8 and set(loads) == {"ld.global.v4.b32"}, loads
    assert "ldmatrix" in ptx
