"""Gluon kernels written with automatic layouts (``gl.AutoLayout()`` by default, loads and
stores through ``gl.CoalescedLayout()`` where said), for the tests of
``ll-resolve-auto-layouts`` (``test_resolve_auto_layouts.py``).  Stock Triton's resolution
rejects all but ``copy_coalesced``, ``reshape_fixed`` and ``histogram_fixed``."""

from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

TARGET = GPUTarget("cuda", 90, 32)


@gluon.jit
def copy(src, dst, N: gl.constexpr):
    i = gl.arange(0, N)
    gl.store(dst + i, gl.load(src + i))


@gluon.jit
def copy_coalesced(src, dst, N: gl.constexpr):
    i = gl.arange(0, N, layout=gl.CoalescedLayout())
    gl.store(dst + i, gl.load(src + i))


@gluon.jit
def transpose(src, dst, M: gl.constexpr, N: gl.constexpr):
    r = gl.arange(0, M)[:, None]
    c = gl.arange(0, N)[None, :]
    gl.store(dst + c * M + r, gl.load(src + r * N + c))


@gluon.jit
def column_sum(src, dst, M: gl.constexpr, N: gl.constexpr):
    r = gl.arange(0, M)[:, None]
    c = gl.arange(0, N)
    x = gl.load(src + r * N + c[None, :])
    gl.store(dst + c, gl.sum(x, axis=0))


@gluon.jit
def row_softmax(src, dst, M: gl.constexpr, N: gl.constexpr):
    r = gl.arange(0, M)[:, None]
    c = gl.arange(0, N)[None, :]
    x = gl.load(src + r * N + c)
    e = gl.exp(x - gl.max(x, axis=1)[:, None])
    gl.store(dst + r * N + c, e / gl.sum(e, axis=1)[:, None])


@gluon.jit
def accumulate(src, dst, K, N: gl.constexpr):
    i = gl.arange(0, N)
    acc = gl.zeros([N], gl.float32)
    for k in range(K):
        acc += gl.load(src + k * N + i)
    gl.store(dst + i, acc)


@gluon.jit
def branch(src, dst, flag, N: gl.constexpr):
    i = gl.arange(0, N)
    x = gl.load(src + i)
    if flag > 0:
        x = x * 2.0
    gl.store(dst + i, x)


@gluon.jit
def conflict(src, dst, N: gl.constexpr):
    L1: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    L4: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
    i = gl.arange(0, N)
    a = gl.load(src + gl.set_auto_layout(i, L1))
    gl.store(dst + gl.set_auto_layout(i, L4), gl.convert_layout(a, L4))


@gluon.jit
def reshape_fixed(src, dst, N: gl.constexpr):
    # an automatic value through tt.reshape: the 2-D layout the store fixes flows back through
    # the reshape (stock resolves it too)
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    i = gl.reshape(gl.arange(0, N), [N // 32, 32])
    j = gl.set_auto_layout(i, L)
    gl.store(dst + j, gl.load(src + j))


@gluon.jit
def histogram_fixed(src, dst, N: gl.constexpr, B: gl.constexpr):
    # an automatic value out of tt.histogram, which ll-resolve-auto-layouts has no rule for
    # (stock resolves it: the layout the store fixes flows back to the histogram)
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    h = gl.histogram(gl.load(src + gl.arange(0, N, layout=L)), B, layout=gl.AutoLayout())
    gl.store(dst + gl.arange(0, B, layout=L), gl.set_auto_layout(h, L))


_ALIGNED = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
_POINTERS = {"src": "*fp32", "dst": "*fp32"}

# name -> (kernel, signature, constexprs)
KERNELS = {
    "copy": (copy, _POINTERS, {"N": 1024}),
    "copy_coalesced": (copy_coalesced, _POINTERS, {"N": 1024}),
    "transpose": (transpose, _POINTERS, {"M": 64, "N": 64}),
    "column_sum": (column_sum, _POINTERS, {"M": 64, "N": 128}),
    "row_softmax": (row_softmax, _POINTERS, {"M": 16, "N": 256}),
    "accumulate": (accumulate, {**_POINTERS, "K": "i32"}, {"N": 1024}),
    "branch": (branch, {**_POINTERS, "flag": "i32"}, {"N": 1024}),
    "conflict": (conflict, _POINTERS, {"N": 512}),
    "reshape_fixed": (reshape_fixed, _POINTERS, {"N": 1024}),
    "histogram_fixed": (histogram_fixed, {"src": "*i32", "dst": "*i32"}, {"N": 1024, "B": 64}),
}


def source(name: str) -> GluonASTSource:
    kernel, signature, constexprs = KERNELS[name]
    return GluonASTSource(kernel, signature, constexprs, attrs=_ALIGNED)


# --------------------------------------------------------------------------- shared memory, cp.async, TMA, warp specialization
# (written like Triton's Gluon tutorials 03, 04 and 08 in their auto form; the names of the
# copies into shared memory differ between releases, hence the aliases)

from triton.experimental.gluon.language.nvidia.ampere import async_copy as _cp  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared as _fence_async_shared,  # noqa: E402
                                                               mbarrier as _mbarrier, tma as _tma)

_cp_async_load = getattr(_cp, "async_load", None) or _cp.async_copy_global_to_shared      # 3.9 / 3.6
_tma_async_load = getattr(_tma, "async_load", None) or _tma.async_copy_global_to_shared    # 3.9 / 3.6
_tma_async_store = getattr(_tma, "async_store", None) or _tma.async_copy_shared_to_global  # 3.9 / 3.6
_barrier = getattr(gl, "barrier", None) or gl.thread_barrier                              # 3.9 / 3.6


@gluon.jit
def cp_async_copy(src, dst, N: gl.constexpr):
    # cp.async into an unswizzled buffer, a local load with no layout, a store
    i = gl.arange(0, N, layout=gl.CoalescedLayout())
    smem = gl.allocate_shared_memory(gl.float32, [N], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    _cp_async_load(smem, src + i)
    _cp.commit_group()
    _cp.wait_group(0)
    gl.store(dst + i, smem.load(gl.AutoLayout()))


@gluon.jit
def shared_round_trip(src, dst, M: gl.constexpr, N: gl.constexpr):
    # a tile through a 128-byte swizzled buffer: local_alloc with a source, local_load,
    # local_store, local_load again, every distributed layout automatic
    r = gl.arange(0, M)[:, None]
    c = gl.arange(0, N)[None, :]
    layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2)
    smem = gl.allocate_shared_memory(gl.float32, [M, N], layout, gl.load(src + r * N + c))
    x = smem.load(gl.AutoLayout())
    _barrier()
    smem.store(x * 2.0)
    _barrier()
    gl.store(dst + r * N + c, smem.load(gl.AutoLayout()))


@gluon.jit
def tma_scale(in_desc, out_desc):
    # TMA into shared memory (no distributed layout), a local load with no layout, a local store
    # and a TMA store: as 04-tma's elementwise add
    smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_type.shape, in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], _mbarrier.MBarrierLayout())
    _mbarrier.init(bar, count=1)
    _mbarrier.expect(bar, in_desc.block_type.nbytes)
    _tma_async_load(in_desc, [0, 0], bar, smem)
    _mbarrier.wait(bar, phase=0)
    _mbarrier.invalidate(bar)
    x = smem.load(gl.AutoLayout())
    smem.store(x * 2.0)
    _fence_async_shared()
    _tma_async_store(out_desc, [0, 0], smem)
    _tma.store_wait(0)


@gluon.jit
def _ws_copy_part(src, dst, N: gl.constexpr):
    i = gl.arange(0, N)
    gl.store(dst + i, gl.load(src + i) + 1.0)


@gluon.jit
def _ws_default(src, dst, N: gl.constexpr):
    _ws_copy_part(src, dst, N)


@gluon.jit
def _ws_worker(src, dst, N: gl.constexpr):
    _ws_copy_part(src + N, dst + N, N)


@gluon.jit
def ws_copy(src, dst, N: gl.constexpr):
    # two partitions (4 and 2 warps), each with automatic layouts of its own
    gl.warp_specialize([(_ws_default, (src, dst, N)), (_ws_worker, (src, dst, N))], [2], [24])


@gluon.jit
def strided_add(a, b, c, xnumel, ynumel, xstride, XBLOCK: gl.constexpr, YBLOCK: gl.constexpr):
    # 03's elementwise add in auto form: the loop's bounds reach the loads through arith.bitcast
    x = gl.program_id(0) * XBLOCK + gl.arange(0, XBLOCK, gl.CoalescedLayout())
    for y0 in range(0, ynumel, YBLOCK):
        y = y0 + gl.arange(0, YBLOCK, gl.CoalescedLayout())
        mask = (x < xnumel)[:, None] & (y < ynumel)[None, :]
        offsets = xstride * x[:, None] + y[None, :]
        gl.store(c + offsets, gl.load(a + offsets, mask=mask) + gl.load(b + offsets, mask=mask), mask=mask)


def _tile_descriptor(shape):
    layout = gl.NVMMASharedLayout.get_default_for(list(shape), gl.float32)
    return f"tensordesc<fp32[{','.join(map(str, shape))}],{layout!r}>"


_ADD = {"a": "*fp32", "b": "*fp32", "c": "*fp32", "xnumel": "i32", "ynumel": "i32", "xstride": "i32"}
_ADD_ALIGNED = {(i,): [["tt.divisibility", 16]] for i in range(6)}

# name -> (kernel, signature, constexprs[, attrs]): stock Triton's resolution rejects the first
# four ("'ttg.local_load' op Failed to infer return type", or an assertion in its coalescing pass
# for cp.async); both resolve strided_add.
SHARED_KERNELS = {
    "cp_async_copy": (cp_async_copy, _POINTERS, {"N": 4096}),
    "shared_round_trip": (shared_round_trip, _POINTERS, {"M": 32, "N": 64}),
    "tma_scale": (tma_scale, {"in_desc": _tile_descriptor((32, 64)), "out_desc": _tile_descriptor((32, 64))}, {}),
    "ws_copy": (ws_copy, _POINTERS, {"N": 1024}),
    "strided_add": (strided_add, _ADD, {"XBLOCK": 32, "YBLOCK": 64}, _ADD_ALIGNED),
}
KERNELS.update(SHARED_KERNELS)


def source(name: str) -> GluonASTSource:  # noqa: F811 (the kernels above use the attrs they name)
    kernel, signature, constexprs, *attrs = KERNELS[name] if name in KERNELS else SHAPE_KERNELS[name]
    return GluonASTSource(kernel, signature, constexprs, attrs=attrs[0] if attrs else _ALIGNED)


# --------------------------------------------------------------------------- join and split
# (not in KERNELS: triton 3.6 and 3.7's Gluon abort building gl.split of an automatic layout, an
# assertion in its builder; test_shape_ops.py compiles split_auto from 3.8 on)

@gluon.jit
def join_auto(src, dst, N: gl.constexpr):
    # pairs (x, 2x) stored interleaved: two joins, every layout automatic
    i = gl.arange(0, N)
    x = gl.load(src + i)
    gl.store(dst + gl.join(i * 2, i * 2 + 1), gl.join(x, x * 2.0))


@gluon.jit
def split_auto(src, dst, N: gl.constexpr):
    # interleaved pairs loaded, split and summed, every layout automatic
    i = gl.arange(0, N)
    a, b = gl.split(gl.load(src + gl.join(i * 2, i * 2 + 1)))
    gl.store(dst + i, a + b)


SHAPE_KERNELS = {
    "join_auto": (join_auto, _POINTERS, {"N": 512}),
    "split_auto": (split_auto, _POINTERS, {"N": 512}),
}
