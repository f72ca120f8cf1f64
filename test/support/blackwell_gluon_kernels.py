"""A Blackwell-class Gluon kernel (sm_100: ``tcgen05_mma`` into tensor memory), written for the
Gluon corpus (``test/support/gen_corpus_gluon.py``) that the IR walk and our passes must read.

* ``tcgen05_matmul``: a TMA + mbarrier K loop that issues ``tcgen05_mma`` into an accumulator in
  tensor memory (``ttng.tmem_alloc``, ``ttng.tc_gen5_mma``, ``tcgen05_commit``), then loads it into
  registers (``ttng.tmem_load``), converts it to a blocked layout and stores it.

The accumulator's register layout is computed on the host by the release's own helper where it
has one (``get_tmem_reg_layout``, 3.6 to 3.8); from 3.9 on ``load()`` infers it (``LOAD_DEFAULT``)."""

from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia import blackwell
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory, mbarrier,
                                                                  tcgen05_commit, tcgen05_mma, tma)

SM100 = GPUTarget("cuda", 100, 32)
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared       # 3.7+ / 3.6
_get_tmem_reg_layout = getattr(blackwell, "get_tmem_reg_layout", None)                # 3.6-3.8 / none


@gluon.jit
def tcgen05_matmul(a_desc, b_desc, c_ptr, K, N_TOTAL, LOAD_DEFAULT: gl.constexpr, ACC_LAYOUT: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_s = gl.allocate_shared_memory(a_desc.dtype, [BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [BK, BN], b_desc.layout)
    tma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(tma_bar, count=1)
    mbarrier.init(mma_bar, count=1)
    acc_tmem = allocate_tensor_memory(gl.float32, [BM, BN], TensorMemoryLayout((BM, BN), 1))
    phase = 0
    use_acc = False
    for k in range(0, K, BK):
        mbarrier.expect(tma_bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        _tma_load(a_desc, [off_m, k], tma_bar, a_s)
        _tma_load(b_desc, [k, off_n], tma_bar, b_s)
        mbarrier.wait(tma_bar, phase)
        tcgen05_mma(a_s, b_s, acc_tmem, use_acc=use_acc)
        tcgen05_commit(mma_bar)
        mbarrier.wait(mma_bar, phase)
        use_acc = True
        phase ^= 1
    mbarrier.invalidate(tma_bar)
    mbarrier.invalidate(mma_bar)
    if LOAD_DEFAULT:
        acc = acc_tmem.load()
    else:
        acc = acc_tmem.load(ACC_LAYOUT)
    out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    c = gl.convert_layout(acc.to(gl.float16), out_layout)
    rows = off_m + gl.arange(0, BM, gl.SliceLayout(1, out_layout))
    cols = off_n + gl.arange(0, BN, gl.SliceLayout(0, out_layout))
    gl.store(c_ptr + rows[:, None] * N_TOTAL + cols[None, :], c)


def _descriptor(shape):
    layout = gl.NVMMASharedLayout.get_default_for(list(shape), gl.float16)
    return f"tensordesc<fp16[{','.join(map(str, shape))}],{layout!r}>"


def source(name: str = "tcgen05_matmul") -> GluonASTSource:
    """``tcgen05_matmul`` on 128x128 tiles, K in steps of 64, 4 warps."""
    assert name == "tcgen05_matmul"
    BM, BN, BK = 128, 128, 64
    signature = {"a_desc": _descriptor((BM, BK)), "b_desc": _descriptor((BK, BN)), "c_ptr": "*fp16",
                 "K": "i32", "N_TOTAL": "i32"}
    if _get_tmem_reg_layout is not None:
        layout = _get_tmem_reg_layout(gl.float32, (BM, BN), TensorMemoryLayout((BM, BN), 1), 4)
        constexprs = {"LOAD_DEFAULT": False, "ACC_LAYOUT": layout}
    else:
        constexprs = {"LOAD_DEFAULT": True, "ACC_LAYOUT": 0}
    aligned = {(tcgen05_matmul.arg_names.index(n),): [["tt.divisibility", 16]] for n in ("c_ptr", "K", "N_TOTAL")}
    return GluonASTSource(tcgen05_matmul, signature, constexprs, attrs=aligned)
