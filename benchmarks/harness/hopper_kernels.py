"""Hopper-class Gluon kernels (TMA, mbarrier, ``warpgroup_mma``, persistent and pipelined loops),
written for the tests of the IR walk, the automatic layouts and the advice on the kernels Gluon
exists for.  Each kernel comes in the form its author would write (``expert``: every layout
spelled out) and, where it has one, an automatic form (``auto``: every layout the hardware does
not force left to ``gl.AutoLayout()``).

* ``pipelined_matmul``: a TMA + mbarrier + ``warpgroup_mma`` matmul whose K loop issues the next
  stage's loads under an ``scf.if`` with no results, inside an ``scf.for`` that carries the
  accumulator: the loop MLIR prints with the if's empty yield left out;
* ``transpose_epilogue``: a persistent tile loop whose epilogue transposes the tile through
  shared memory (``permute`` of a shared view, ``load``, ``store``), 16-bit elements;
* ``wgmma_epilogue``: a wgmma accumulator with a bias, an activation and a store, the epilogue
  written as every Gluon tutorial does it: ``convert_layout(acc, <layout>)`` then the store;
* ``wgmma_direct_epilogue``: the same with no conversion written: the bias, the indices and
  the store meet the accumulator's layout directly (its expert form stores from the
  accumulator's layout);
* ``mma_v2_epilogue``: the same after an ``mma_v2`` dot (sm_80 and up);
* ``tcgen05_epilogue``: the same on Blackwell (sm_100): a ``tcgen05_mma`` into tensor memory,
  the accumulator loaded in the layout the tmem load needs, then converted for the store;
* ``fp8_transposing_copy`` (not in ``KERNELS``: one warp, compiled by ``fp8_copy_source``): the
  producer partition of a warp-specialized fp8 matmul that hands wgmma a K-major operand: 8x64
  slices of an fp8 tile copied from a 64-byte-swizzled NVMMA buffer into a transposed one,
  through registers (``local_load`` then ``local_store``).

The copies into shared memory changed names between releases (``async_copy_global_to_shared`` on
3.6, ``async_load`` from 3.7 on): the aliases below take whichever the installed Gluon has."""

from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia import blackwell as _blackwell
from triton.experimental.gluon.language.nvidia.ampere import mma_v2
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                  tcgen05_commit, tcgen05_mma)
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                               warpgroup_mma_wait)

SM90 = GPUTarget("cuda", 90, 32)
SM80 = GPUTarget("cuda", 80, 32)
SM100 = GPUTarget("cuda", 100, 32)

_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared       # 3.7+ / 3.6
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global     # 3.7+ / 3.6
_barrier = getattr(gl, "barrier", None) or gl.thread_barrier                         # 3.9 / 3.6


# --------------------------------------------------------------------------- pipelined matmul

@gluon.jit
def pipelined_matmul(a_desc, b_desc, c_ptr, K, N_TOTAL, AUTO: gl.constexpr, STAGES: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_s = gl.allocate_shared_memory(a_desc.dtype, [STAGES, BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [STAGES, BK, BN], b_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(STAGES - 1):
        mbarrier.expect(bars.index(i), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        _tma_load(a_desc, [off_m, i * BK], bars.index(i), a_s.index(i))
        _tma_load(b_desc, [i * BK, off_n], bars.index(i), b_s.index(i))
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, acc_layout)
    num_k = K // BK
    for k in range(num_k):
        s = k % STAGES
        mbarrier.wait(bars.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_s.index(s), b_s.index(s), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
        nk = k + STAGES - 1
        if nk < num_k:                      # the next stage's loads: an scf.if without results
            ns = nk % STAGES
            mbarrier.expect(bars.index(ns), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            _tma_load(a_desc, [off_m, nk * BK], bars.index(ns), a_s.index(ns))
            _tma_load(b_desc, [nk * BK, off_n], bars.index(ns), b_s.index(ns))
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(i))
    if AUTO:
        out_layout: gl.constexpr = gl.AutoLayout()
    else:
        out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    c = gl.convert_layout(acc.to(gl.float16), out_layout)
    if AUTO:
        rows = off_m + gl.arange(0, BM)
        cols = off_n + gl.arange(0, BN)
    else:
        rows = off_m + gl.arange(0, BM, gl.SliceLayout(1, out_layout))
        cols = off_n + gl.arange(0, BN, gl.SliceLayout(0, out_layout))
    gl.store(c_ptr + rows[:, None] * N_TOTAL + cols[None, :], c)


# --------------------------------------------------------------------------- transposing epilogue

@gluon.jit
def transpose_epilogue(a_desc, b_desc, c_desc, M, N, K, AUTO: gl.constexpr):
    # persistent: each program walks tiles num_programs apart; the tile is written transposed
    # (c = (a @ b)^T) through shared memory: the accumulator is stored, the buffer read back
    # through a transposed view, and stored into the TMA store's buffer
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    a_s = gl.allocate_shared_memory(a_desc.dtype, [BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [BK, BN], b_desc.layout)
    tile_layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=16, rank=2)
    t_s = gl.allocate_shared_memory(gl.float16, [BM, BN], tile_layout)
    c_s = gl.allocate_shared_memory(gl.float16, [BN, BM], c_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, BN, 16])
    if AUTO:
        t_layout: gl.constexpr = gl.AutoLayout()
    else:
        t_layout: gl.constexpr = gl.BlockedLayout([4, 16], [16, 2], [1, 4], [0, 1])
    phase = 0
    tiles_n = N // BN
    num_tiles = (M // BM) * tiles_n
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m = (tile // tiles_n) * BM
        off_n = (tile % tiles_n) * BN
        acc = gl.zeros([BM, BN], gl.float32, acc_layout)
        for k in range(0, K, BK):
            mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            _tma_load(a_desc, [off_m, k], bar, a_s)
            _tma_load(b_desc, [k, off_n], bar, b_s)
            mbarrier.wait(bar, phase)
            phase ^= 1
            acc = warpgroup_mma(a_s, b_s, acc)
        t_s.store(acc.to(gl.float16))
        _barrier()
        c_s.store(t_s.permute((1, 0)).load(t_layout))
        fence_async_shared()
        _tma_store(c_desc, [off_n, off_m], c_s)
        tma.store_wait(0)
    mbarrier.invalidate(bar)


# --------------------------------------------------------------------------- accumulator epilogues

@gluon.jit
def _one_wgmma_tile(a_ptr, b_ptr, acc_layout: gl.constexpr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    # the two wgmma epilogues' common start: operands loaded into NVMMA shared buffers, one wgmma
    load_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_rows = gl.arange(0, M, gl.SliceLayout(1, load_layout))
    k_cols = gl.arange(0, K, gl.SliceLayout(0, load_layout))
    k_rows = gl.arange(0, K, gl.SliceLayout(1, load_layout))
    n_cols = gl.arange(0, N, gl.SliceLayout(0, load_layout))
    a = gl.load(a_ptr + a_rows[:, None] * K + k_cols[None, :])
    b = gl.load(b_ptr + k_rows[:, None] * N + n_cols[None, :])
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16), b)
    fence_async_shared()
    return warpgroup_mma(a_s, b_s, gl.zeros([M, N], gl.float32, acc_layout))

@gluon.jit
def wgmma_epilogue(a_ptr, b_ptr, bias_ptr, c_ptr, AUTO: gl.constexpr, M: gl.constexpr, N: gl.constexpr,
                   K: gl.constexpr):
    # one tile: operands loaded into NVMMA shared buffers, one wgmma, a bias and a ReLU, a store
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, N, 16])
    acc = _one_wgmma_tile(a_ptr, b_ptr, acc_layout, M, N, K)
    if AUTO:
        out_layout: gl.constexpr = gl.AutoLayout()
    else:
        out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    y = gl.convert_layout(acc, out_layout)
    if AUTO:
        rows = gl.arange(0, M)
        cols = gl.arange(0, N)
    else:
        rows = gl.arange(0, M, gl.SliceLayout(1, out_layout))
        cols = gl.arange(0, N, gl.SliceLayout(0, out_layout))
    y = gl.maximum(y + gl.load(bias_ptr + cols)[None, :], 0.0)
    gl.store(c_ptr + rows[:, None] * N + cols[None, :], y.to(gl.float16))


@gluon.jit
def wgmma_direct_epilogue(a_ptr, b_ptr, bias_ptr, c_ptr, AUTO: gl.constexpr, M: gl.constexpr, N: gl.constexpr,
                          K: gl.constexpr):
    # wgmma_epilogue with no conversion written: the bias, the indices and the store meet the
    # accumulator's layout directly (Gluon's front end marks each meeting with set_auto_layout)
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, N, 16])
    acc = _one_wgmma_tile(a_ptr, b_ptr, acc_layout, M, N, K)
    if AUTO:
        rows = gl.arange(0, M)
        cols = gl.arange(0, N)
    else:
        rows = gl.arange(0, M, gl.SliceLayout(1, acc_layout))
        cols = gl.arange(0, N, gl.SliceLayout(0, acc_layout))
    y = gl.maximum(acc + gl.load(bias_ptr + cols)[None, :], 0.0)
    gl.store(c_ptr + rows[:, None] * N + cols[None, :], y.to(gl.float16))


@gluon.jit
def mma_v2_epilogue(a_ptr, b_ptr, c_ptr, AUTO: gl.constexpr, M: gl.constexpr, N: gl.constexpr,
                    K: gl.constexpr):
    load_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2],
                                                         instr_shape=[16, 8])
    a_rows = gl.arange(0, M, gl.SliceLayout(1, load_layout))
    k_cols = gl.arange(0, K, gl.SliceLayout(0, load_layout))
    k_rows = gl.arange(0, K, gl.SliceLayout(1, load_layout))
    n_cols = gl.arange(0, N, gl.SliceLayout(0, load_layout))
    a = gl.load(a_ptr + a_rows[:, None] * K + k_cols[None, :])
    b = gl.load(b_ptr + k_rows[:, None] * N + n_cols[None, :])
    a = gl.convert_layout(a, gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=8))
    b = gl.convert_layout(b, gl.DotOperandLayout(operand_index=1, parent=acc_layout, k_width=8))
    acc = mma_v2(a, b, gl.zeros([M, N], gl.float32, acc_layout))
    if AUTO:
        out_layout: gl.constexpr = gl.AutoLayout()
    else:
        out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    y = gl.convert_layout(acc, out_layout)
    if AUTO:
        rows = gl.arange(0, M)
        cols = gl.arange(0, N)
    else:
        rows = gl.arange(0, M, gl.SliceLayout(1, out_layout))
        cols = gl.arange(0, N, gl.SliceLayout(0, out_layout))
    gl.store(c_ptr + rows[:, None] * N + cols[None, :], y.to(gl.float16))


# --------------------------------------------------------------------------- a tcgen05 epilogue (sm_100)

@gluon.jit
def tcgen05_epilogue(a_ptr, b_ptr, c_ptr, AUTO: gl.constexpr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr,
                     REG_LAYOUT: gl.constexpr):
    # one tile on Blackwell: the accumulator in tensor memory, read into registers in the layout
    # the tmem load needs (REG_LAYOUT), then converted for the store
    load_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_rows = gl.arange(0, M, gl.SliceLayout(1, load_layout))
    k_cols = gl.arange(0, K, gl.SliceLayout(0, load_layout))
    k_rows = gl.arange(0, K, gl.SliceLayout(1, load_layout))
    n_cols = gl.arange(0, N, gl.SliceLayout(0, load_layout))
    a = gl.load(a_ptr + a_rows[:, None] * K + k_cols[None, :])
    b = gl.load(b_ptr + k_rows[:, None] * N + n_cols[None, :])
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16), b)
    fence_async_shared()
    acc_tmem = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout(block=(M, N), col_stride=1))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    tcgen05_mma(a_s, b_s, acc_tmem, use_acc=False)
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    acc = acc_tmem.load(REG_LAYOUT)
    if AUTO:
        out_layout: gl.constexpr = gl.AutoLayout()
    else:
        out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    y = gl.convert_layout(acc, out_layout)
    if AUTO:
        rows = gl.arange(0, M)
        cols = gl.arange(0, N)
    else:
        rows = gl.arange(0, M, gl.SliceLayout(1, out_layout))
        cols = gl.arange(0, N, gl.SliceLayout(0, out_layout))
    gl.store(c_ptr + rows[:, None] * N + cols[None, :], y.to(gl.float16))


@gluon.jit
def fp8_transposing_copy(src_ptr, dst_ptr, AUTO: gl.constexpr):
    io: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [1, 1], [1, 0])
    offsets = gl.arange(0, 64, gl.SliceLayout(1, io))[:, None] * 64 + gl.arange(0, 64, gl.SliceLayout(0, io))[None, :]
    staged = gl.allocate_shared_memory(gl.float8e4nv, [64, 64],
                                       gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, rank=2),
                                       gl.load(src_ptr + offsets))
    transposed = gl.allocate_shared_memory(gl.float8e4nv, [64, 64],
                                           gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, rank=2,
                                                                transposed=True))
    if AUTO:
        copy_layout: gl.constexpr = gl.AutoLayout()
    else:
        copy_layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0])   # the author's
    for i in gl.static_range(8):
        transposed.slice(8 * i, 8, dim=0).store(staged.slice(8 * i, 8, dim=0).load(copy_layout))
    _barrier()
    gl.store(dst_ptr + offsets, transposed.load(io))


def fp8_copy_source(auto: bool) -> GluonASTSource:
    """``fp8_transposing_copy`` in its expert or automatic form (compile with ``num_warps=1``)."""
    signature = {"src_ptr": "*fp8e4nv", "dst_ptr": "*fp8e4nv"}
    return GluonASTSource(fp8_transposing_copy, signature, {"AUTO": auto},
                          attrs=_aligned(fp8_transposing_copy, signature))


def _tmem_register_layout(shape, num_warps=4):
    """The register layout a 32x32b tmem load of an f32 accumulator of ``shape`` needs (3.9
    asks the descriptor's type, 3.6 a function)."""
    tmem = TensorMemoryLayout(block=tuple(shape), col_stride=1)
    if hasattr(_blackwell, "get_tmem_reg_layout"):                                   # 3.6
        return _blackwell.get_tmem_reg_layout(gl.float32, list(shape), tmem, num_warps)
    return _blackwell.tensor_memory_descriptor_type(gl.float32, list(shape), tmem, list(shape)).get_reg_layout(
        num_warps=num_warps)


# --------------------------------------------------------------------------- sources

def _descriptor(shape, dtype="fp16", transposed=False):
    layout = gl.NVMMASharedLayout.get_default_for(list(shape), gl.float16 if dtype == "fp16" else gl.float32,
                                                  transposed=transposed)
    return f"tensordesc<{dtype}[{','.join(map(str, shape))}],{layout!r}>"


def _aligned(kernel, signature):
    """Every pointer 16-byte aligned and every integer a multiple of 16, as a caller's torch
    tensors and tile-sized problems are."""
    return {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
            for name, kind in signature.items() if kind.startswith("*") or kind == "i32"}

# name -> (kernel, signature, constexprs, target)
KERNELS = {
    "pipelined_matmul": (pipelined_matmul,
                         {"a_desc": _descriptor((64, 64)), "b_desc": _descriptor((64, 128)), "c_ptr": "*fp16",
                          "K": "i32", "N_TOTAL": "i32"}, {"STAGES": 3}, SM90),
    "transpose_epilogue": (transpose_epilogue,
                           {"a_desc": _descriptor((64, 64)), "b_desc": _descriptor((64, 64)),
                            "c_desc": _descriptor((64, 64)), "M": "i32", "N": "i32", "K": "i32"}, {}, SM90),
    "wgmma_epilogue": (wgmma_epilogue, {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp32", "c_ptr": "*fp16"},
                       {"M": 64, "N": 64, "K": 64}, SM90),
    "wgmma_direct_epilogue": (wgmma_direct_epilogue,
                              {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp32", "c_ptr": "*fp16"},
                              {"M": 64, "N": 64, "K": 64}, SM90),
    "mma_v2_epilogue": (mma_v2_epilogue, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"},
                        {"M": 64, "N": 64, "K": 32}, SM80),
    "tcgen05_epilogue": (tcgen05_epilogue, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"},
                         {"M": 128, "N": 64, "K": 64, "REG_LAYOUT": _tmem_register_layout((128, 64))}, SM100),
}


def source(name: str, auto: bool) -> GluonASTSource:
    """The kernel ``name`` in its expert (``auto=False``) or automatic form."""
    kernel, signature, constexprs, _target = KERNELS[name]
    return GluonASTSource(kernel, signature, {**constexprs, "AUTO": auto}, attrs=_aligned(kernel, signature))


def target(name: str) -> GPUTarget:
    return KERNELS[name][3]
