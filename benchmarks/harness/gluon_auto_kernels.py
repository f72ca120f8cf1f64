"""Gluon kernels in three forms, for ``gluon_forms_gpu.py kernels`` (``gluon_auto_suite``): as an expert lays them out, *auto*
and *newcomer*.

Each kernel takes its layouts as ``gl.constexpr`` parameters, so the three forms are one source
with three sets of layouts, made by one rule stated before measuring:

* **expert**: the layouts written by hand (vectorized, coalesced loads; warps on rows where a
  row is reduced; a transpose converts between a row- and a column-coalesced layout);
* **auto**: every distributed layout the hardware does not force replaced by
  ``gl.AutoLayout()``, and those of the index vectors of loads and stores by
  ``gl.CoalescedLayout()``; an explicit ``gl.convert_layout`` between two such layouts has no
  layout left to name and goes (``CONVERT=False``);
* **newcomer**: every such layout a plain ``gl.BlockedLayout`` with one element per thread
  (lanes along the last dimension, warps along the first), the same layout everywhere.

Sizes: fp32; copy 64 Mi elements; transpose, column sum 8192 x 8192; row softmax 8192 x 1024.
The inputs are small integers (as floats), so every sum is exact whatever the order: the
column sum is bit-exact across forms; the softmax divides and exponentiates (compared with the
tolerance of Triton's own softmax test, ``atol=1e-6, rtol=1e-5``, and reported bit-exact or not).
"""

from __future__ import annotations

from dataclasses import dataclass

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

WARPS = 4
FORMS = ("expert", "auto", "newcomer")


@gluon.jit
def copy_kernel(src, dst, BLOCK: gl.constexpr, L: gl.constexpr):
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=L)
    gl.store(dst + offs, gl.load(src + offs))


@gluon.jit
def transpose_kernel(src, dst, M, N, BM: gl.constexpr, BN: gl.constexpr, IN_R: gl.constexpr, IN_C: gl.constexpr,
                     OUT_R: gl.constexpr, OUT_C: gl.constexpr, OUT: gl.constexpr, CONVERT: gl.constexpr):
    pm = gl.program_id(0) * BM
    pn = gl.program_id(1) * BN
    r = pm + gl.arange(0, BM, layout=IN_R)
    c = pn + gl.arange(0, BN, layout=IN_C)
    x = gl.load(src + r[:, None] * N + c[None, :])
    if CONVERT:
        x = gl.convert_layout(x, OUT)
    ro = pm + gl.arange(0, BM, layout=OUT_R)
    co = pn + gl.arange(0, BN, layout=OUT_C)
    gl.store(dst + co[None, :] * M + ro[:, None], x)


@gluon.jit
def column_sum_kernel(src, dst, M, N, BM: gl.constexpr, BN: gl.constexpr, R: gl.constexpr, C: gl.constexpr,
                      ACC: gl.constexpr, OUT: gl.constexpr):
    pn = gl.program_id(0) * BN
    c = pn + gl.arange(0, BN, layout=C)
    acc = gl.zeros([BM, BN], gl.float32, layout=ACC)
    for m in range(0, M, BM):
        r = m + gl.arange(0, BM, layout=R)
        acc += gl.load(src + r[:, None] * N + c[None, :])
    co = pn + gl.arange(0, BN, layout=OUT)
    gl.store(dst + co, gl.sum(acc, axis=0))


@gluon.jit
def row_softmax_kernel(src, dst, N: gl.constexpr, BM: gl.constexpr, R: gl.constexpr, C: gl.constexpr):
    r = gl.program_id(0) * BM + gl.arange(0, BM, layout=R)
    c = gl.arange(0, N, layout=C)
    offs = r[:, None] * N + c[None, :]
    x = gl.load(src + offs)
    e = gl.exp(x - gl.max(x, axis=1)[:, None])
    gl.store(dst + offs, e / gl.sum(e, axis=1)[:, None])


def _blocked2(per_thread, lanes, warps, order):
    return gl.BlockedLayout(per_thread, lanes, warps, order)


def _rows_cols(layout):
    return gl.SliceLayout(1, layout), gl.SliceLayout(0, layout)


NEWCOMER_1D = gl.BlockedLayout([1], [32], [WARPS], [0])
NEWCOMER_2D = gl.BlockedLayout([1, 1], [1, 32], [WARPS, 1], [1, 0])
AUTO, COALESCED = gl.AutoLayout(), gl.CoalescedLayout()


@dataclass(frozen=True)
class Case:
    """One kernel: its launch shape and each form's layout constexprs."""

    name: str
    kernel: object
    signature: dict          # the non-constexpr arguments (for a CPU compile)
    constexprs: dict         # shared by every form
    layouts: dict            # form -> constexprs of that form's layouts


def cases() -> list[Case]:
    copy_expert = gl.BlockedLayout([4], [32], [WARPS], [0])
    t_in = _blocked2([1, 4], [4, 8], [WARPS, 1], [1, 0])
    t_out = _blocked2([4, 1], [8, 4], [1, WARPS], [0, 1])
    cs = _blocked2([1, 4], [1, 32], [WARPS, 1], [1, 0])
    sm = _blocked2([1, 4], [1, 32], [WARPS, 1], [1, 0])
    pointers = {"src": "*fp32", "dst": "*fp32"}
    sizes = {**pointers, "M": "i32", "N": "i32"}
    return [
        Case("copy", copy_kernel, pointers, {"BLOCK": 4096},
             {"expert": {"L": copy_expert}, "auto": {"L": COALESCED}, "newcomer": {"L": NEWCOMER_1D}}),
        Case("transpose", transpose_kernel, sizes, {"BM": 64, "BN": 64},
             {"expert": dict(zip(("IN_R", "IN_C"), _rows_cols(t_in))) | dict(zip(("OUT_R", "OUT_C"), _rows_cols(t_out)))
              | {"OUT": t_out, "CONVERT": True},
              "auto": {"IN_R": COALESCED, "IN_C": COALESCED, "OUT_R": COALESCED, "OUT_C": COALESCED, "OUT": AUTO,
                       "CONVERT": False},
              "newcomer": dict(zip(("IN_R", "IN_C"), _rows_cols(NEWCOMER_2D)))
              | dict(zip(("OUT_R", "OUT_C"), _rows_cols(NEWCOMER_2D))) | {"OUT": NEWCOMER_2D, "CONVERT": False}}),
        Case("column_sum", column_sum_kernel, sizes, {"BM": 32, "BN": 128},
             {"expert": dict(zip(("R", "C"), _rows_cols(cs))) | {"ACC": cs, "OUT": gl.SliceLayout(0, cs)},
              "auto": {"R": COALESCED, "C": COALESCED, "ACC": COALESCED, "OUT": COALESCED},
              "newcomer": dict(zip(("R", "C"), _rows_cols(NEWCOMER_2D)))
              | {"ACC": NEWCOMER_2D, "OUT": gl.SliceLayout(0, NEWCOMER_2D)}}),
        Case("row_softmax", row_softmax_kernel, pointers, {"N": 1024, "BM": WARPS},
             {"expert": dict(zip(("R", "C"), _rows_cols(sm))), "auto": {"R": COALESCED, "C": COALESCED},
              "newcomer": dict(zip(("R", "C"), _rows_cols(NEWCOMER_2D)))}),
    ]
