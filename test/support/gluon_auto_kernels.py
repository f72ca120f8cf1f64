"""Gluon kernels written with automatic layouts (``gl.AutoLayout()`` by default, loads and
stores through ``gl.CoalescedLayout()`` where said), for the tests of
``ll-resolve-auto-layouts`` (``test_resolve_auto_layouts.py``).  Stock Triton's resolution
rejects all but ``copy_coalesced`` and ``reshape_fixed``."""

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
    # an automatic value through tt.reshape, which ll-resolve-auto-layouts has no rule for
    # (stock resolves it: the 2-D layout the store fixes flows back through the reshape)
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    i = gl.reshape(gl.arange(0, N), [N // 32, 32])
    j = gl.set_auto_layout(i, L)
    gl.store(dst + j, gl.load(src + j))


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
}


def source(name: str) -> GluonASTSource:
    kernel, signature, constexprs = KERNELS[name]
    return GluonASTSource(kernel, signature, constexprs, attrs=_ALIGNED)
