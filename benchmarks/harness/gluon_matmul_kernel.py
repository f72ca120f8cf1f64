"""The Gluon mma_v2 matmul of ``benchmarks/gluon_forms_gpu.py matmul``, as an expert writes it for
Ampere-style tensor cores: fp16 tiles loaded in a 16-byte ``BlockedLayout``, converted to
``mma_v2``'s dot-operand layouts, an fp32 accumulator, the result converted back and stored.

It is a file of its own so that ``harness.peer_gluon_forms.load_kernels`` can make its automatic
form by the same rule as other projects' kernels (every blocked and slice layout to
``AutoLayout``, aranges to ``CoalescedLayout`` where the front end takes it, else ``AutoLayout``).
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2


@gluon.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[gl.num_warps(), 1],
                                                  instr_shape=[16, 8])
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=8)
    b_layout: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=8)
    pid_m, pid_n = gl.program_id(0), gl.program_id(1)
    rm = pid_m * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, blocked))
    rn = pid_n * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, blocked))
    rk_a = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
    rk_b = gl.arange(0, BK, layout=gl.SliceLayout(1, blocked))
    a_ptrs = a_ptr + rm[:, None] * K + rk_a[None, :]
    b_ptrs = b_ptr + rk_b[:, None] * N + rn[None, :]
    acc = gl.zeros([BM, BN], gl.float32, layout=mma)
    for _ in range(0, K, BK):
        a = gl.convert_layout(gl.load(a_ptrs), a_layout)
        b = gl.convert_layout(gl.load(b_ptrs), b_layout)
        acc = mma_v2(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    c = gl.convert_layout(acc.to(gl.float16), blocked)
    gl.store(c_ptr + rm[:, None] * N + rn[None, :], c)
