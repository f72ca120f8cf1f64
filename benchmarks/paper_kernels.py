"""The paper's kernel comparison: kernels of the kinds the Linear Layouts paper evaluates, each
over several shapes, under stock Triton, our layout engine ("linear") and the legacy baseline.

    python benchmarks/paper_kernels.py --out benchmarks/results    # GPU (H100/H200, triton 3.6): under 6 min
    python benchmarks/paper_kernels.py --dry                       # no GPU: compile for sm_90, count ops
    python benchmarks/paper_kernels.py --interpret                 # no GPU: tiny shapes in Triton's interpreter

The kernels are written the way libraries write them (nothing in them knows about linear layouts):

* ``int4_gemm``: fp16 activations times int4 weights packed two to a byte along K, with one
  fp16 scale per group of 128 rows of K and per column (gpt-fast / TritonBench ``int4_gemm``
  style: the nibbles are unpacked with shifts and ``join -> permute -> reshape``);
* ``mma_v2_gemm``: the fp16 gemm of Triton's matmul tutorial as written for Ampere (grouped
  tile order, masked K loop, ``num_stages`` software pipelining).  On an H100 Triton would pick
  wgmma (mma v3) for it; Triton's own switch ``DISABLE_MMA_V3=1`` (read by its AccelerateMatmul
  pass, a cache-invalidating variable) gives the Ampere path: ``#ttg.nvidia_mma<{versionMajor =
  2`` accumulators and operands that go global -> shared (``cp.async``) -> registers through
  ``ttg.local_load``.  ``--dry`` checks both in the TTGIR, the GPU run records them;
* ``streamk_gemm``: a persistent gemm, one program per SM: the whole tiles that fill complete
  waves are computed data-parallel and stored; the K iterations of the remaining tiles are
  split evenly over all programs (stream-K) and added into the fp32 output with atomics, so the
  launch clears the output first (that memset is part of every mode's time);
* ``layer_norm``: layer norm forward, ROWS rows per program (fp16 in and out, statistics in
  fp32; mean and 1/std saved per row for the backward pass), N from 512 to 16384, two M;
* ``template_attention``: FlexAttention-style attention: a ``score_mod`` jit function, given
  as a ``tl.constexpr`` argument, rewrites every score of Q K^T (causal mask, ALiBi bias)
  before the online softmax.

For every kernel x shape x mode (stock, linear, legacy, stock_again: stock timed again after
the others, the run-to-run noise) the harness of ``benchmarks/kernels.py`` (``run_mode``)
compiles with an empty Triton cache, poisons the outputs, checks them against numpy references
and times ``triton.testing.do_bench`` (median, min and max of the repeats).  The report gives
time ours / stock and ours / legacy per case and their geometric means per kernel and overall,
and, per case, how many ``ttg.convert_layout`` / ``ttg.local_load`` / ``ttg.local_store`` ops
the TTGIR has and how many of them our passes lowered (``linear_layouts.stats()``).  Our passes
lower ``ttg.convert_layout`` only: local loads and stores are always Triton's.

Writes paper_kernels.json, paper_kernels.md and paper_kernels.png (bars: geometric mean over a
kernel's shapes, whiskers: the smallest and largest case) into --out.
"""

from __future__ import annotations

import os
import sys

# Triton's interpreter is chosen when a kernel is decorated: the switch must be set before
# `import triton` and before the kernels below are defined.
if __name__ == "__main__" and "--interpret" in sys.argv[1:]:
    os.environ["TRITON_INTERPRET"] = "1"

import contextlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from harness import skeleton  # noqa: E402
from harness.common import geomean, save_chart, scratch_directory  # noqa: E402
import kernels as suite  # noqa: E402  (the kernel suite's harness: run_mode, MODES)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = suite.MODES                  # stock, linear, legacy, stock_again
DRY_MODES = ("stock", "linear", "legacy")
H100_SM_COUNT = 132                  # H100 SXM and H200 both have 132 SMs (stream-K's grid in --dry)


# =========================================================================== kernels

@triton.jit
def grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """(row, column) of output tile number ``tile`` when tiles are numbered GROUP_M rows at a
    time (as in Triton's matmul tutorial): programs that run together share B's columns in L2.
    Example, 4x3 tiles, GROUP_M = 2: tiles 0..5 are rows 0-1 column by column, 6..11 rows 2-3."""
    tiles_per_group = GROUP_M * num_pid_n
    first_row = (tile // tiles_per_group) * GROUP_M
    rows_in_group = min(num_pid_m - first_row, GROUP_M)
    row = first_row + (tile % tiles_per_group) % rows_in_group
    column = (tile % tiles_per_group) // rows_in_group
    return row, column


@triton.jit
def int4_gemm_kernel(A, B, SCALES, C, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_sg, stride_sn, stride_cm, stride_cn,
                     GROUP_SIZE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ W (fp16), W[k, n] = q[k, n] * SCALES[k // GROUP_SIZE, n] with q in -8..7.

    B holds q two to a byte along K: byte (k // 2, n) has q[k, n] for even k in its low nibble
    and q[k + 1, n] in its high nibble, two's complement.  K must be a multiple of BLOCK_K, and
    BLOCK_K must divide GROUP_SIZE (one scale row per K block)."""
    pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    rk_bytes = tl.arange(0, BLOCK_K // 2)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk_bytes[:, None] * stride_bk + rn[None, :] * stride_bn
    four = tl.full((1,), 4, tl.int8)   # an int8 shift count: a literal 4 would widen the bytes to i32
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        packed = tl.load(b_ptrs)                        # (BLOCK_K / 2, BLOCK_N) int8
        low = (packed << four) >> four                  # arithmetic shift: sign-extends the nibble
        high = packed >> four
        # fp16 before the join, so that the dot operand is made of 16-bit values
        w = tl.join(low.to(tl.float16), high.to(tl.float16))          # (BLOCK_K/2, BLOCK_N, 2)
        w = tl.permute(w, (0, 2, 1)).reshape(BLOCK_K, BLOCK_N)       # row 2i + j = nibble j of byte row i
        scale = tl.load(SCALES + (k // GROUP_SIZE) * stride_sg + rn * stride_sn)
        acc += tl.dot(a, w * scale[None, :])
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += (BLOCK_K // 2) * stride_bk
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ B in fp16 with fp32 accumulation, any M, N, K (masked K loop, masked store)."""
    pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def tile_k_range(A, B, pid_m, pid_n, first_iteration, last_iteration,
                 stride_am, stride_ak, stride_bk, stride_bn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The partial product of one output tile over K blocks [first_iteration, last_iteration)."""
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = first_iteration * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(first_iteration, last_iteration):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.jit
def streamk_gemm_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        FULL_TILES, TAIL_ITERATIONS_PER_PROGRAM, TAIL_EXTRA_ITERATIONS,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    """C (fp32, cleared by the caller) = A @ B, one persistent program per SM.

    Tiles [0, FULL_TILES) fill whole waves: program p computes tiles p, p + P, p + 2P, ...
    completely and stores them.  The K iterations of the remaining tiles, numbered one after
    another (tile t's iteration i is FULL_TILES * iters + (t - FULL_TILES) * iters + i), are
    cut into P contiguous runs, TAIL_EXTRA_ITERATIONS of them one iteration longer; each run's
    partial sums are added into C with atomics, one add per tile it touches.  Example: 10
    tiles of 4 iterations on P = 4 programs: tiles 0-7 whole; tiles 8-9 are 8 iterations, 2 per
    program: program 1 adds iterations 2-3 of tile 8, program 2 iterations 0-1 of tile 9.
    M, N and K must be multiples of the block sizes."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    iterations = tl.cdiv(K, BLOCK_K)
    for tile in range(pid, FULL_TILES, programs):
        pid_m, pid_n = grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
        acc = tile_k_range(A, B, pid_m, pid_n, 0, iterations, stride_am, stride_ak, stride_bk, stride_bn,
                           BLOCK_M, BLOCK_N, BLOCK_K)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc)
    first = FULL_TILES * iterations + pid * TAIL_ITERATIONS_PER_PROGRAM + tl.minimum(pid, TAIL_EXTRA_ITERATIONS)
    last = first + TAIL_ITERATIONS_PER_PROGRAM + (pid < TAIL_EXTRA_ITERATIONS).to(tl.int32)
    while first < last:
        tile = first // iterations
        stop = tl.minimum(last, (tile + 1) * iterations)
        pid_m, pid_n = grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
        acc = tile_k_range(A, B, pid_m, pid_n, first - tile * iterations, stop - tile * iterations,
                           stride_am, stride_ak, stride_bk, stride_bn, BLOCK_M, BLOCK_N, BLOCK_K)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.atomic_add(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, sem="relaxed")
        first = stop


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, MEAN, RSTD, M, N, stride_row, eps,
                          ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    """Y = (X - mean) / sqrt(var + eps) * W + B per row of X (M x N, fp16; statistics in fp32),
    ROWS rows per program; saves each row's mean and 1/std for the backward pass."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    offsets = rows[:, None] * stride_row + cols[None, :]
    x = tl.load(X + offsets, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    centered = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1 / tl.sqrt(tl.sum(centered * centered, axis=1) / N + eps)
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = centered * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(MEAN + rows, mean, mask=row_ok)
    tl.store(RSTD + rows, rstd, mask=row_ok)


@triton.jit
def causal_mask(score, batch, head, q_index, kv_index):
    """score_mod: a query sees only the keys at or before its own position."""
    return tl.where(q_index >= kv_index, score, float("-inf"))


@triton.jit
def alibi_bias(score, batch, head, q_index, kv_index):
    """score_mod: ALiBi, a penalty growing with the distance, slope 2^-(head + 1)/2 per head."""
    slope = tl.exp2(-0.5 * (head + 1).to(tl.float32))
    distance = tl.abs(q_index - kv_index).to(tl.float32)
    return score - slope * distance


@triton.jit
def template_attention_kernel(Q, K, V, O, sm_scale, stride_batch, stride_head, stride_row, H, SEQ,
                              SCORE_MOD: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr,
                              BLOCK_N: tl.constexpr):
    """O = softmax(SCORE_MOD(Q K^T * sm_scale)) V for one (batch, head) and BLOCK_M queries,
    online softmax over key blocks in base 2.  Q, K, V, O are (batch, H, SEQ, D), rows
    contiguous, all with the same strides; SEQ is a multiple of BLOCK_N.  Every row must keep
    at least one finite score in the first key block (true of a causal mask and of ALiBi)."""
    batch = tl.program_id(1) // H
    head = tl.program_id(1) % H
    base = batch * stride_batch + head * stride_head
    q_index = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    q = tl.load(Q + base + q_index[:, None] * stride_row + dims[None, :])
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    LOG2E: tl.constexpr = 1.4426950408889634
    for start in range(0, SEQ, BLOCK_N):
        kv_index = start + tl.arange(0, BLOCK_N)
        k = tl.load(K + base + kv_index[:, None] * stride_row + dims[None, :])
        score = tl.dot(q, tl.trans(k)) * sm_scale
        score = SCORE_MOD(score, batch, head, q_index[:, None], kv_index[None, :]) * LOG2E
        m_new = tl.maximum(m_i, tl.max(score, axis=1))
        p = tl.exp2(score - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + base + kv_index[:, None] * stride_row + dims[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(O + base + q_index[:, None] * stride_row + dims[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty))


# =========================================================================== cases

@dataclass(frozen=True)
class Tensor:
    """One tensor argument: an input made by ``make(rng)``, or an output when ``make`` is None
    (poisoned before every launch and checked against the reference)."""

    shape: tuple
    dtype: str                                   # numpy's name: float16, float32, int8
    make: Optional[Callable] = None


# numpy dtype name -> Triton's pointee type
TRITON_TYPE = {"float16": "fp16", "float32": "fp32", "int8": "i8", "int32": "i32"}


@dataclass
class PaperCase:
    """One kernel at one shape, with everything needed to launch it, compile it without a GPU
    and check it: tensor arguments, other runtime arguments, constexprs, launch options."""

    kernel: str                 # the group in the report, e.g. "int4_gemm"
    shape: str                  # the problem, e.g. "M=2048 N=4096 K=4096"
    function: object            # the @triton.jit kernel
    grid: tuple
    tensors: dict               # argument name -> Tensor
    scalars: dict               # argument name -> int or float (runtime arguments)
    constexprs: dict            # argument name -> value
    reference: Callable         # {input name: array} -> {output name: expected array}
    atol: float
    rtol: float
    num_warps: int = 4
    num_stages: int = 3
    environment: dict = field(default_factory=dict)   # set while the case compiles and runs
    clear_output_first: bool = False                   # the kernel adds into its output (atomics)
    expect_mma_v2: bool = False                        # the TTGIR must use mma v2 with local_loads

    def __post_init__(self):
        named = [set(self.tensors), set(self.scalars), set(self.constexprs)]
        for argument in self.function.arg_names:
            if sum(argument in names for names in named) != 1:
                raise ValueError(f"case {self.name}: argument '{argument}' of {self.function.__name__} must be "
                                 "given exactly once (as a tensor, a scalar or a constexpr)")
        unknown = set().union(*named) - set(self.function.arg_names)
        if unknown:
            raise ValueError(f"case {self.name}: {self.function.__name__} has no argument {sorted(unknown)[0]!r}")

    @property
    def name(self) -> str:
        return f"{self.kernel}[{self.shape}]"

    @property
    def outputs(self) -> list:
        return [name for name, t in self.tensors.items() if t.make is None]

    def inputs(self, seed: int = 0) -> dict:
        """The input arrays (numpy), the same for every mode."""
        rng = np.random.default_rng(seed)
        arrays = {}
        for name, t in self.tensors.items():
            if t.make is None:
                continue
            array = np.ascontiguousarray(t.make(rng))
            if array.shape != tuple(t.shape) or array.dtype.name != t.dtype:
                raise ValueError(f"case {self.name}: input {name} was made as {array.dtype.name}{list(array.shape)}, "
                                 f"declared {t.dtype}{list(t.shape)}")
            arrays[name] = array
        return arrays

    def check(self, outputs: dict, expected: dict) -> tuple:
        """(all outputs close to the reference, worst |error| / (atol + rtol |expected|))."""
        worst = 0.0
        for name in self.outputs:
            got = np.asarray(outputs[name], dtype=np.float64)
            want = np.asarray(expected[name], dtype=np.float64)
            if not np.all(np.isfinite(got)):
                return False, float("inf")
            worst = max(worst, float(np.max(np.abs(got - want) / (self.atol + self.rtol * np.abs(want)))))
        return worst <= 1.0, worst


def _normal(shape, dtype="float16", scale=1.0):
    return lambda rng: (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dtype)


def _strides(shape):
    """Element strides of a contiguous array."""
    return tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))


def _as_f32(x):
    return np.asarray(x, dtype=np.float32)


def int4_gemm_case(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, group_size=128) -> PaperCase:
    if K % BLOCK_K or group_size % BLOCK_K or K % group_size:
        raise ValueError(f"int4_gemm: K={K} must be a multiple of group size {group_size} and of BLOCK_K={BLOCK_K}, "
                         "and BLOCK_K must divide the group size")

    def packed_weights(rng):
        q = rng.integers(-8, 8, size=(K, N), dtype=np.int8)
        return ((q[0::2] & 0xF) | (q[1::2] << 4)).astype(np.int8)

    def reference(x):
        packed = x["B"]
        q = np.empty((K, N), np.int8)
        q[0::2] = (packed << 4).astype(np.int8) >> 4
        q[1::2] = packed >> 4
        scales = np.repeat(x["SCALES"], group_size, axis=0)
        w = (q.astype(np.float32) * _as_f32(scales)).astype(np.float16)   # the kernel's fp16 product
        return {"C": (_as_f32(x["A"]) @ _as_f32(w)).astype(np.float16)}

    return PaperCase(
        "int4_gemm", f"M={M} N={N} K={K}", int4_gemm_kernel,
        grid=(triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),),
        tensors={"A": Tensor((M, K), "float16", _normal((M, K))),
                 "B": Tensor((K // 2, N), "int8", packed_weights),
                 "SCALES": Tensor((K // group_size, N), "float16",
                                  lambda rng: rng.uniform(0.005, 0.02, (K // group_size, N)).astype(np.float16)),
                 "C": Tensor((M, N), "float16")},
        scalars=dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_sg=N, stride_sn=1,
                     stride_cm=N, stride_cn=1),
        constexprs=dict(GROUP_SIZE=group_size, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8),
        reference=reference, atol=0.05, rtol=1e-2, num_warps=num_warps, num_stages=num_stages)


def mma_v2_gemm_case(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) -> PaperCase:
    return PaperCase(
        "mma_v2_gemm", f"M={M} N={N} K={K}", gemm_kernel,
        grid=(triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),),
        tensors={"A": Tensor((M, K), "float16", _normal((M, K))),
                 "B": Tensor((K, N), "float16", _normal((K, N))),
                 "C": Tensor((M, N), "float16")},
        scalars=dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1),
        constexprs=dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8),
        reference=lambda x: {"C": (_as_f32(x["A"]) @ _as_f32(x["B"])).astype(np.float16)},
        atol=0.25, rtol=1e-2, num_warps=num_warps, num_stages=num_stages,
        environment={"DISABLE_MMA_V3": "1"}, expect_mma_v2=True)


def streamk_split(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, programs) -> dict:
    """The host's share of stream-K: how many tiles fill whole waves, and how the K iterations
    of the others are spread over the programs."""
    tiles = (M // BLOCK_M) * (N // BLOCK_N)
    iterations = K // BLOCK_K
    full_tiles = tiles - tiles % programs
    tail_iterations = (tiles - full_tiles) * iterations
    return dict(FULL_TILES=full_tiles, TAIL_ITERATIONS_PER_PROGRAM=tail_iterations // programs,
                TAIL_EXTRA_ITERATIONS=tail_iterations % programs)


def streamk_gemm_case(M, N, K, programs, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3) -> PaperCase:
    if M % BLOCK_M or N % BLOCK_N or K % BLOCK_K:
        raise ValueError(f"streamk_gemm: M={M}, N={N}, K={K} must be multiples of the blocks "
                         f"{BLOCK_M}x{BLOCK_N}x{BLOCK_K}")
    return PaperCase(
        "streamk_gemm", f"M={M} N={N} K={K}", streamk_gemm_kernel, grid=(programs,),
        tensors={"A": Tensor((M, K), "float16", _normal((M, K))),
                 "B": Tensor((K, N), "float16", _normal((K, N))),
                 "C": Tensor((M, N), "float32")},
        scalars=dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1,
                     **streamk_split(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, programs)),
        constexprs=dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8),
        reference=lambda x: {"C": _as_f32(x["A"]) @ _as_f32(x["B"])},
        atol=0.05, rtol=1e-3, num_warps=num_warps, num_stages=num_stages, clear_output_first=True)


def layer_norm_case(M, N, eps=1e-5) -> PaperCase:
    block_n = triton.next_power_of_2(N)
    rows = max(1, 4096 // block_n)                         # about 4096 elements per program
    num_warps = max(4, min(16, block_n // 1024))

    def reference(x):
        v = x["X"].astype(np.float32)
        mean = v.mean(axis=1, keepdims=True)
        rstd = 1 / np.sqrt(((v - mean) ** 2).mean(axis=1, keepdims=True) + eps)
        y = (v - mean) * rstd * _as_f32(x["W"]) + _as_f32(x["B"])
        return {"Y": y.astype(np.float16), "MEAN": mean[:, 0], "RSTD": rstd[:, 0]}

    return PaperCase(
        "layer_norm", f"M={M} N={N}", layer_norm_fwd_kernel, grid=(triton.cdiv(M, rows),),
        tensors={"X": Tensor((M, N), "float16", _normal((M, N), scale=2.0)),
                 "Y": Tensor((M, N), "float16"),
                 "W": Tensor((N,), "float16", _normal((N,))),
                 "B": Tensor((N,), "float16", _normal((N,))),
                 "MEAN": Tensor((M,), "float32"),
                 "RSTD": Tensor((M,), "float32")},
        scalars=dict(M=M, N=N, stride_row=N, eps=eps),
        constexprs=dict(ROWS=rows, BLOCK_N=block_n),
        reference=reference, atol=2e-2, rtol=1e-2, num_warps=num_warps, num_stages=1)


# score_mod name -> (the jit function, the same on numpy arrays)
SCORE_MODS = {
    "causal": (causal_mask, lambda s, b, h, q, kv: np.where(q >= kv, s, -np.inf)),
    "alibi": (alibi_bias, lambda s, b, h, q, kv: s - np.float32(2.0 ** (-0.5 * (h + 1))) * np.abs(q - kv)),
}


def template_attention_case(batch, H, SEQ, D, score_mod, BLOCK_M=128, BLOCK_N=64, num_warps=None,
                            num_stages=3) -> PaperCase:
    if SEQ % BLOCK_M or SEQ % BLOCK_N:
        raise ValueError(f"template_attention: SEQ={SEQ} must be a multiple of {BLOCK_M} and {BLOCK_N}")
    modify, modify_numpy = SCORE_MODS[score_mod]
    shape = (batch, H, SEQ, D)
    sm_scale = D ** -0.5

    def reference(x):
        q, k, v = (_as_f32(x[n]) for n in "QKV")
        out = np.empty(shape, np.float16)
        positions = np.arange(SEQ)
        for b in range(batch):
            for h in range(H):
                s = modify_numpy((q[b, h] @ k[b, h].T) * np.float32(sm_scale), b, h, positions[:, None],
                                 positions[None, :])
                p = np.exp(s - s.max(axis=1, keepdims=True))
                out[b, h] = ((p / p.sum(axis=1, keepdims=True)) @ v[b, h]).astype(np.float16)
        return {"O": out}

    stride_batch, stride_head, stride_row, _ = _strides(shape)
    return PaperCase(
        "template_attention", f"B={batch} H={H} S={SEQ} D={D} {score_mod}", template_attention_kernel,
        grid=(SEQ // BLOCK_M, batch * H),
        tensors={"Q": Tensor(shape, "float16", _normal(shape)), "K": Tensor(shape, "float16", _normal(shape)),
                 "V": Tensor(shape, "float16", _normal(shape)), "O": Tensor(shape, "float16")},
        scalars=dict(sm_scale=sm_scale, stride_batch=stride_batch, stride_head=stride_head, stride_row=stride_row,
                     H=H, SEQ=SEQ),
        constexprs=dict(SCORE_MOD=modify, D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N),
        reference=reference, atol=2e-2, rtol=2e-2, num_warps=num_warps or (4 if D <= 64 else 8),
        num_stages=num_stages)


def paper_cases(sm_count: int = H100_SM_COUNT) -> list:
    """The suite: every kernel at the shapes the GPU run times (block sizes as a library's
    tuned table would pick them for an H100)."""
    return [
        # decode-sized: BLOCK_M = 32 is below wgmma's 64 rows, so Triton takes mma v2 by itself
        int4_gemm_case(32, 8192, 8192, 32, 64, 128, num_warps=4, num_stages=4),
        int4_gemm_case(2048, 4096, 4096, 128, 128, 64, num_warps=8, num_stages=3),
        int4_gemm_case(4096, 11008, 4096, 128, 128, 64, num_warps=8, num_stages=3),
        mma_v2_gemm_case(4096, 4096, 4096, 128, 256, 64, num_warps=8, num_stages=3),
        mma_v2_gemm_case(8192, 8192, 1024, 128, 256, 64, num_warps=8, num_stages=3),
        mma_v2_gemm_case(2048, 2048, 8192, 128, 128, 32, num_warps=4, num_stages=4),
        streamk_gemm_case(3072, 3072, 4096, sm_count),
        streamk_gemm_case(1536, 1536, 8192, sm_count),
        streamk_gemm_case(4096, 2048, 4096, sm_count),
        *[layer_norm_case(M, N) for M in (2048, 8192) for N in (512, 1024, 2048, 4096, 8192, 16384)],
        template_attention_case(4, 16, 2048, 64, "causal"),
        template_attention_case(4, 16, 2048, 128, "alibi"),
        template_attention_case(8, 16, 1024, 64, "alibi"),
    ]


def interpreter_cases() -> list:
    """Tiny versions of every kernel for Triton's CPU interpreter: ragged layer-norm rows and
    columns, a stream-K split where some programs cross a tile boundary, both score mods."""
    return [
        int4_gemm_case(32, 64, 256, 32, 32, 64, num_warps=4, num_stages=1),
        mma_v2_gemm_case(48, 32, 80, 32, 32, 32, num_warps=4, num_stages=1),
        streamk_gemm_case(64, 96, 160, programs=4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32),
        streamk_gemm_case(64, 32, 256, programs=3, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32),
        layer_norm_case(10, 48),
        layer_norm_case(3, 128),
        template_attention_case(1, 2, 64, 32, "causal", BLOCK_M=32, BLOCK_N=16),
        template_attention_case(2, 1, 64, 32, "alibi", BLOCK_M=16, BLOCK_N=32),
    ]


# =========================================================================== TTGIR op counts

# "%x = ttg.local_load %y : ..." / "ttg.local_store %a, %b : ..." / "%r:2 = scf.for ..."
_OP_AT_LINE_START = re.compile(r"^\s*(?:%[^=\n]*=\s*)?([a-z_]+\.[a-z_.]+)\b", re.M)
_MMA_VERSION = re.compile(r"#ttg\.nvidia_mma<\{versionMajor = (\d+)")
COUNTED_OPS = ("ttg.convert_layout", "ttg.local_load", "ttg.local_store", "ttg.local_alloc",
               "ttg.async_copy_global_to_local")


def ttgir_counts(ttgir: str) -> dict:
    """How many of the ops that move data between layouts the TTGIR has, and its mma version."""
    ops = Counter(_OP_AT_LINE_START.findall(ttgir))
    counts = {op.split(".", 1)[1]: ops[op] for op in COUNTED_OPS}
    versions = sorted(set(_MMA_VERSION.findall(ttgir)))
    counts["mma"] = "+".join(f"v{v}" for v in versions) if versions else "-"
    if "warp_group_dot" in ttgir and "v3" not in counts["mma"]:
        counts["mma"] += "(wgmma)"
    return counts


def mma_v2_problem(case: PaperCase, counts: dict) -> Optional[str]:
    """Why a case that must use mma v2 through local loads does not (None: it does)."""
    if not case.expect_mma_v2:
        return None
    if counts["mma"] != "v2":
        return f"{case.name}: expected nvidia_mma versionMajor = 2, the TTGIR has {counts['mma']}"
    if counts["local_load"] == 0:
        return f"{case.name}: expected the dot operands to come through ttg.local_load, the TTGIR has none"
    return None


class PluginCounts:
    """What ``linear_layouts.stats()`` counted during one compile (differences of its totals)."""

    def __init__(self):
        from linear_layouts.passes.drop_in import hook
        self._stats = hook.stats
        self._before = self._snapshot()

    def _snapshot(self):
        s = self._stats()
        return (s.kernels, s.conversions, s.islands, len(s.fallbacks), s.local_loads_lowered + s.local_writes_lowered)

    def since(self) -> dict:
        after = self._snapshot()
        kernels, conversions, islands, fallbacks, local = (a - b for a, b in zip(after, self._before))
        return {"plugin_kernels": kernels, "plugin_conversions": conversions, "lowered": islands,
                "fallbacks": fallbacks, "local_lowered": local}


@contextlib.contextmanager
def environment(variables: dict):
    """Set environment variables for the duration (DISABLE_MMA_V3 for the mma v2 gemm)."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# =========================================================================== --dry (no GPU)

def compile_signature(case: PaperCase):
    """(signature, constexprs, attrs) for ``ASTSource``: what a launch with the case's arguments
    specializes to.  Scalars go through Triton's own specialization (an int equal to 1 becomes
    the constexpr 1, one divisible by 16 gets tt.divisibility = 16); device allocations are
    16-byte aligned, so every pointer gets tt.divisibility = 16."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    signature, constexprs, attrs = {}, dict(case.constexprs), {}
    divisible = [["tt.divisibility", 16]]
    for index, name in enumerate(case.function.arg_names):
        if name in case.tensors:
            signature[name] = "*" + TRITON_TYPE[case.tensors[name].dtype]
            attrs[(index,)] = divisible
        elif name in case.scalars:
            value = case.scalars[name]
            kind, specialization = native_specialize_impl(BaseBackend, value, False, True, True)[:2]
            if kind == "constexpr":
                signature[name] = "constexpr"
                constexprs[name] = value
            else:
                signature[name] = kind
                if specialization == "D":
                    attrs[(index,)] = divisible
        else:
            signature[name] = "constexpr"
    return signature, constexprs, attrs


def compile_case(case: PaperCase, mode: str, cache_dir: str, target=None, only: str | None = None) -> dict:
    """Compile one case for sm_90 without a GPU (``mode``: stock, linear or legacy); return its
    TTGIR op counts and what our passes lowered."""
    import linear_layouts
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature, constexprs, attrs = compile_signature(case)
    source = ASTSource(fn=case.function, signature=signature, constexprs=constexprs, attrs=attrs)
    saved_cache = triton.knobs.cache.dir
    triton.knobs.cache.dir = cache_dir            # empty: every mode really compiles
    start = time.perf_counter()
    try:
        with environment(case.environment):
            if mode != "stock":
                linear_layouts.enable(mode, only=only)
            plugin = PluginCounts()
            compiled = triton.compile(source, target=target or GPUTarget("cuda", 90, 32),
                                      options={"num_warps": case.num_warps, "num_stages": case.num_stages})
            result = {**ttgir_counts(compiled.asm["ttgir"]), **plugin.since()}
    finally:
        linear_layouts.disable()
        triton.knobs.cache.dir = saved_cache
    result["compile_s"] = time.perf_counter() - start
    return result


def dry_run(cases: list, local_ops: bool = False) -> int:
    """Compile every case in every mode for sm_90 and print the op counts; 1 if any compile
    fails, a stock/linear/legacy TTGIR differs in its counts, or the mma v2 gemm is not."""
    import warnings

    workdir = scratch_directory("ll_paper_kernels_dry_")
    header = (f"{'case':52} {'mma':5} {'convert':>7} {'ours':>4} {'legacy':>6} {'local_load':>10} "
              f"{'local_store':>11} {'local_alloc':>11} {'cp.async':>8} {'fallbacks':>9} {'compile s':>9}")
    print(f"triton {triton.__version__}, sm_90, modes {', '.join(DRY_MODES)} "
          "(ours / legacy: converts, and with --local-ops local loads and stores, lowered by our passes "
          "in linear / legacy mode)")
    print(header)
    problems = []
    for number, case in enumerate(cases):
        results = {}
        for mode in DRY_MODES:
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    results[mode] = compile_case(case, mode, os.path.join(workdir, f"{number}-{mode}"),
                                                 only=LOCAL_OPS_ONLY if local_ops else None)
                fallback_warnings = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
                problems += [f"{case.name} [{mode}]: {message}" for message in fallback_warnings]
            except Exception as error:  # report every case, then fail
                problems.append(f"{case.name} [{mode}]: {type(error).__name__}: {str(error).splitlines()[0][:300]}")
        if len(results) < len(DRY_MODES):
            print(f"{case.name:52} compile failed")
            continue
        stock = results["stock"]
        for mode in ("linear", "legacy"):
            same = {k: results[mode][k] for k in COUNTED_OPS_SHORT + ("mma",)}
            if same != {k: stock[k] for k in COUNTED_OPS_SHORT + ("mma",)}:
                problems.append(f"{case.name}: the TTGIR under {mode} differs from stock's ({same} vs stock)")
        problem = mma_v2_problem(case, stock)
        if problem:
            problems.append(problem)
        fallbacks = sum(results[m]["fallbacks"] for m in ("linear", "legacy"))
        print(f"{case.name:52} {stock['mma']:5} {stock['convert_layout']:>7} "
              f"{results['linear']['lowered'] + results['linear']['local_lowered']:>4} "
              f"{results['legacy']['lowered'] + results['legacy']['local_lowered']:>6} {stock['local_load']:>10} {stock['local_store']:>11} "
              f"{stock['local_alloc']:>11} {stock['async_copy_global_to_local']:>8} {fallbacks:>9} "
              f"{sum(r['compile_s'] for r in results.values()):>9.1f}", flush=True)
    for problem in problems:
        print(f"problem: {problem}")
    print(f"{len(cases)} cases x {len(DRY_MODES)} modes compiled for sm_90: "
          f"{'no problems' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


COUNTED_OPS_SHORT = tuple(op.split(".", 1)[1] for op in COUNTED_OPS)


# =========================================================================== --interpret (no GPU)

class HostTensor:
    """A numpy array dressed as the few ``torch.Tensor`` methods Triton's interpreter calls:
    the interpreter reads and writes host memory at ``data_ptr()``, so the kernel works on the
    array itself (the storage calls answer the tensor itself, the copies back do nothing)."""

    def __init__(self, array: np.ndarray):
        self.array = np.ascontiguousarray(array)

    @property
    def dtype(self):
        return "torch." + self.array.dtype.name

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def _itself(self, *args, **kwargs):
        return self

    untyped_storage = cpu = copy_ = new_empty = set_ = _itself

    def storage_offset(self) -> int:
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return _strides(self.array.shape)


def _scalar_index_for_numpy_2():
    """Triton 3.6's interpreter turns a scalar argument into a Python int (``range(0, K, ...)``)
    with ``int()`` of a one-element array, which numpy 2.4 refuses; Triton 3.9 squeezes the array
    first.  Do what 3.9 does (a no-op there)."""
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor
    if getattr(original, "squeezes_scalars", False):
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))
    patch_lang_tensor.squeezes_scalars = True
    interpreter._patch_lang_tensor = patch_lang_tensor


def interpret(cases: list) -> int:
    """Run every case in Triton's CPU interpreter against its numpy reference; 1 on a mismatch."""
    if not triton.knobs.runtime.interpret:
        print("paper_kernels.py: error: --interpret needs TRITON_INTERPRET=1 before triton is imported "
              "(run the script directly: python benchmarks/paper_kernels.py --interpret)")
        return 1
    _scalar_index_for_numpy_2()
    failures = 0
    for case in cases:
        inputs = case.inputs()
        expected = case.reference(inputs)
        arrays = dict(inputs)
        for name in case.outputs:
            t = case.tensors[name]
            arrays[name] = np.zeros(t.shape, t.dtype) if case.clear_output_first else np.full(t.shape, np.nan, t.dtype)
        launch_arguments = {name: HostTensor(array) for name, array in arrays.items()}
        case.function[case.grid](**launch_arguments, **case.scalars, **case.constexprs)
        ok, worst = case.check({n: launch_arguments[n].array for n in case.outputs}, expected)
        failures += not ok
        print(f"{case.name:52} {'ok' if ok else 'WRONG'} (worst error {worst:.3f} of the tolerance)", flush=True)
    print(f"{len(cases) - failures}/{len(cases)} cases match their references in Triton's interpreter")
    return 1 if failures else 0


# =========================================================================== GPU run

class DeviceCase:
    """One case's inputs on the GPU and its expected outputs, made once and shared by the
    modes; ``bench()`` is the kernel suite's ``Bench`` for ``suite.run_mode``."""

    def __init__(self, case: PaperCase):
        import torch

        self.case = case
        inputs = case.inputs()
        self.expected = case.reference(inputs)
        self.tensors = {name: torch.from_numpy(array).cuda() for name, array in inputs.items()}
        for name in case.outputs:
            t = case.tensors[name]
            self.tensors[name] = torch.empty(t.shape, dtype=getattr(torch, t.dtype), device="cuda")
        self.compiled = None      # the CompiledKernel of the last launch (for its TTGIR)
        self.worst_error = None

    def launch(self):
        case = self.case
        if case.clear_output_first:
            for name in case.outputs:
                self.tensors[name].zero_()
        self.compiled = case.function[case.grid](**self.tensors, **case.scalars, **case.constexprs,
                                                 num_warps=case.num_warps, num_stages=case.num_stages)

    def check(self) -> bool:
        outputs = {name: self.tensors[name].float().cpu().numpy() for name in self.case.outputs}
        ok, self.worst_error = self.case.check(outputs, self.expected)
        return ok

    def bench(self):
        def setup():
            for name in self.case.outputs:     # poison every output (run_mode poisons the first again)
                self.tensors[name].fill_(float("nan"))
            return self.launch, self.check, self.tensors[self.case.outputs[0]]
        name = re.sub(r"[^\w.-]+", "_", self.case.name)
        return suite.Bench(name, setup)


# ``--local-ops``: the plugin's modes (linear and legacy alike) also own every local load, local
# store and allocation with a source, so "legacy" is Triton before linear layouts for those too
# (``lowering.legacy``: ldmatrix only for mma operands, no stmatrix).
LOCAL_OPS_ONLY = "noop,rename,shuffle,shared,local_load,local_store,local_alloc"


def run_case(case: PaperCase, cache_root: str, rounds: int = 3, only: str | None = None) -> dict:
    """Every mode of one case, ``rounds`` times in a rotated order (``suite.run_rounds``);
    ``only``: what the plugin owns in the linear and legacy modes (default: its default)."""
    import torch

    device_case = DeviceCase(case)
    bench = device_case.bench()
    row = {"kernel": case.kernel, "shape": case.shape, "name": case.name}

    def run_one(mode: str, number: int) -> dict:
        device_case.compiled = None
        with environment(case.environment):
            plugin = PluginCounts()
            result = suite.run_mode(bench, mode, cache_root, label=suite.round_label(mode, number),
                                    only=only if mode in ("linear", "legacy") else None)
            result.update(plugin.since())
        if device_case.compiled is not None:
            result.update(ttgir_counts(device_case.compiled.asm["ttgir"]))
            problem = mma_v2_problem(case, result)
            if problem:
                result["ok"], result["error"] = False, problem
        result["worst_error"] = device_case.worst_error
        torch.cuda.empty_cache()
        return result

    row.update(suite.run_rounds(run_one, MODES, rounds))
    del device_case
    torch.cuda.empty_cache()
    return row


def _ratio(row, a, b, key="ms"):
    """Time of mode a / time of mode b; None unless both ran and were right (a wrong result's
    time means nothing)."""
    if all(row[m].get("ok") and row[m].get("correct") and row[m].get(key) for m in (a, b)):
        return row[a][key] / row[b][key]
    return None


def summarize(rows: list) -> dict:
    """Per case and per kernel: ours / stock, ours / legacy (times), noise (stock again / stock)."""
    for row in rows:
        row["ours_over_stock"] = _ratio(row, "linear", "stock")
        row["ours_over_legacy"] = _ratio(row, "linear", "legacy")
        row["noise"] = _ratio(row, "stock_again", "stock")
    kernels = {}
    for row in rows:
        kernels.setdefault(row["kernel"], []).append(row)
    per_kernel = {}
    for kernel, kernel_rows in kernels.items():
        entry = {}
        for key in ("ours_over_stock", "ours_over_legacy", "noise"):
            values = [r[key] for r in kernel_rows if r[key]]
            entry[key] = {"geomean": geomean(values), "min": min(values, default=None),
                          "max": max(values, default=None)}
        per_kernel[kernel] = entry
    noise = [abs(r["noise"] - 1) for r in rows if r["noise"]]
    return {"per_kernel": per_kernel,
            "ours_over_stock": geomean([r["ours_over_stock"] for r in rows]),
            "ours_over_legacy": geomean([r["ours_over_legacy"] for r in rows]),
            "noise_max": max(noise, default=float("nan")),
            "noise_median": sorted(noise)[len(noise) // 2] if noise else float("nan")}


def _fmt(value, digits=3):
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and value is not None and math.isfinite(value) \
        else "-"


def write_report(rows: list, summary: dict, environment_info: dict, out: str, elapsed_s: float,
                 stem: str = "paper_kernels") -> None:
    os.makedirs(out, exist_ok=True)
    local_ops = environment_info.get("local_ops", False)
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump({"environment": environment_info, "summary": summary, "cases": rows}, f, indent=1)
    noise_max = summary["noise_max"]
    lines = ["# The paper's kernels: stock Triton vs linear-layouts vs legacy"
             + (", local loads and stores ours in both plugin modes" if local_ops else ""), "",
             f"GPU: {environment_info['gpu']}; triton {environment_info['triton']}; torch {environment_info['torch']}; "
             f"whole run {elapsed_s / 60:.1f} min. Times are the median over {environment_info.get('rounds', 1)} rounds "
             "(modes in a rotated order, each compiled afresh every round) of `triton.testing.do_bench` medians (min and max of "
             "every repeat in brackets); every output checked against numpy after poisoning.", "",
             f"Produced by `python benchmarks/paper_kernels.py --out benchmarks/results --rounds "
             f"{environment_info.get('rounds', 1)}{' --local-ops' if local_ops else ''}"
             f"{' --only ' + environment_info['only'] if environment_info.get('only') else ''}` (all modes in one run).", "",
             f"* time ours / stock, geometric mean over all cases: **{_fmt(summary['ours_over_stock'])}**",
             f"* time ours / legacy, geometric mean over all cases: **{_fmt(summary['ours_over_legacy'])}** "
             f"(speedup {_fmt(1 / summary['ours_over_legacy'] if summary['ours_over_legacy'] else None, 2)}x)",
             f"* run-to-run noise (stock timed twice): largest {_fmt(noise_max * 100, 1)}%, median "
             f"{_fmt(summary['noise_median'] * 100, 1)}%", "",
             "| kernel | ours / stock: geomean [min, max] | ours / legacy: geomean [min, max] | noise: largest | "
             "ours <= stock? |", "|---|---|---|---:|---|"]
    for kernel, entry in summary["per_kernel"].items():
        s, g, n = entry["ours_over_stock"], entry["ours_over_legacy"], entry["noise"]
        largest_noise = max(abs((n["min"] or 1) - 1), abs((n["max"] or 1) - 1))
        verdict = "-" if not s["max"] else ("yes" if s["geomean"] <= 1.0 else
                                             "within noise" if s["geomean"] <= 1.0 + largest_noise else "no")
        lines.append(f"| {kernel} | {_fmt(s['geomean'])} [{_fmt(s['min'])}, {_fmt(s['max'])}] | "
                     f"{_fmt(g['geomean'])} [{_fmt(g['min'])}, {_fmt(g['max'])}] | {_fmt(largest_noise * 100, 1)}% | "
                     f"{verdict} |")
    lines += ["", "Per case (ms; convert: `ttg.convert_layout` ops in the TTGIR, ours: lowered by our passes in linear "
              "mode / in legacy mode; local_load / local_store / local_alloc: "
              + ("lowered by our passes in both modes, by the linear or the legacy planner):" if local_ops
                 else "always lowered by Triton):"), "",
              "| case | mma | stock ms | linear ms | legacy ms | ours/stock | ours/legacy | noise | correct s/l/g/a | "
              "convert | ours lin/leg | local_load | local_store | local_alloc | cp.async |",
              "|---|---|---|---|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|"]

    def timing(r):
        return f"{r['ms']:.4f} [{r['min_ms']:.4f}, {r['max_ms']:.4f}]" if r.get("ok") else "fail"

    for row in rows:
        ok = "/".join("yes" if row[m].get("correct") else ("no" if row[m].get("ok") else "-") for m in MODES)
        stock = row["stock"]
        lines.append(f"| {row['name']} | {stock.get('mma', '-')} | {timing(row['stock'])} | {timing(row['linear'])} | "
                     f"{timing(row['legacy'])} | {_fmt(row['ours_over_stock'])} | {_fmt(row['ours_over_legacy'])} | "
                     f"{_fmt(row['noise'])} | {ok} | {stock.get('convert_layout', '-')} | "
                     f"{row['linear'].get('lowered', '-')}/{row['legacy'].get('lowered', '-')}"
                     + (f" (+{row['linear'].get('local_lowered', '-')}/{row['legacy'].get('local_lowered', '-')} local)"
                        if local_ops else "") + " | "
                     f"{stock.get('local_load', '-')} | {stock.get('local_store', '-')} | "
                     f"{stock.get('local_alloc', '-')} | {stock.get('async_copy_global_to_local', '-')} |")
    failures = [(row["name"], m, row[m].get("error", "")) for row in rows for m in MODES if not row[m].get("ok")]
    wrong = [(row["name"], m, row[m].get("worst_error")) for row in rows for m in MODES
             if row[m].get("ok") and not row[m].get("correct")]
    fallbacks = [(row["name"], m) for row in rows for m in ("linear", "legacy") if row[m].get("fallbacks")]
    if failures or wrong or fallbacks:
        lines += ["", "Problems:", ""]
        lines += [f"* {name} [{mode}]: {error}" for name, mode, error in failures]
        lines += [f"* {name} [{mode}]: wrong result (worst error {_fmt(e)} of the tolerance)" for name, mode, e in wrong]
        lines += [f"* {name} [{mode}]: compiled without our islands after a failure (linear_layouts.stats())"
                  for name, mode in fallbacks]
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(rows, summary, environment_info, os.path.join(out, stem + ".png"))


def plot(rows: list, summary: dict, environment_info: dict, path: str) -> None:
    """Top: per kernel, speedup of ours over stock and over legacy (time other / time ours):
    bars at the geometric mean over the kernel's shapes, whiskers at the smallest and largest
    case, as in the paper's figures.  Bottom: every case's time ours / stock with the noise."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        print(f"(no plot: {error})")
        return
    kernels = list(summary["per_kernel"])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8))
    width = 0.38
    extremes = []
    for offset, key, label in ((-width / 2, "ours_over_stock", "vs stock Triton"),
                               (width / 2, "ours_over_legacy", "vs legacy layouts")):
        means, lows, highs = [], [], []
        for kernel in kernels:
            entry = summary["per_kernel"][kernel][key]
            if not entry["max"]:
                means.append(0), lows.append(0), highs.append(0)
                continue
            mean = 1 / entry["geomean"]                       # speedup = 1 / time ratio
            means.append(mean)
            lows.append(mean - 1 / entry["max"])
            highs.append(1 / entry["min"] - mean)
        top.bar([i + offset for i in range(len(kernels))], means, width, yerr=[lows, highs], capsize=4, label=label)
        extremes += [m - low for m, low in zip(means, lows) if m] + [m + high for m, high in zip(means, highs) if m]
    if extremes:     # the differences are a few percent: start the axis near them, not at 0
        top.set_ylim(min(0.8, min(extremes) - 0.05), max(1.2, max(extremes) + 0.05))
    top.axhline(1.0, color="black", linewidth=0.8)
    top.set_xticks(range(len(kernels)), kernels)
    top.set_ylabel("speedup of ours")
    top.legend()
    top.set_title(f"linear-layouts on the paper's kernels ({environment_info['gpu']}, triton {environment_info['triton']})")
    ratios = [r["ours_over_stock"] or 0 for r in rows]
    noise = [r["noise"] or 0 for r in rows]
    bottom.bar(range(len(rows)), ratios, label="time ours / stock")
    bottom.plot(range(len(rows)), noise, "k_", markersize=10, label="stock again / stock (noise)")
    bottom.axhline(1.0, color="black", linewidth=0.8)
    bottom.set_xticks(range(len(rows)), [r["name"] for r in rows], rotation=70, fontsize=6)
    finite = [v for v in ratios + noise if v]
    if finite:
        bottom.set_ylim(min(0.9, min(finite) - 0.02), max(1.1, max(finite) + 0.02))
    bottom.legend(fontsize=7)
    fig.tight_layout()
    save_chart(fig, path)


def gpu_run(cases: list, out: str, rounds: int = 3, local_ops: bool = False, only: str = "") -> int:
    import torch

    start = time.perf_counter()
    cache_root = scratch_directory("ll_paper_kernels_cache_")
    rows = []
    for number, case in enumerate(cases):
        rows.append(run_case(case, cache_root, rounds, LOCAL_OPS_ONLY if local_ops else None))
        row = rows[-1]
        print(f"[{number + 1}/{len(cases)} {time.perf_counter() - start:.0f}s] {case.name}: " + ", ".join(
            f"{m}={row[m].get('ms', float('nan')):.4f}ms{'' if row[m].get('correct') else '(!)'}" for m in MODES),
            flush=True)
    environment_info = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
                        "torch": torch.__version__, "python": sys.version.split()[0],
                        "sm_count": torch.cuda.get_device_properties(0).multi_processor_count, "rounds": rounds,
                        "local_ops": local_ops, "only": only}
    write_report(rows, summarize(rows), environment_info, out, time.perf_counter() - start,
                 "paper_kernels_local_ops" if local_ops else "paper_kernels")
    return 0 if all(row[m].get("correct") for row in rows for m in MODES) else 1


# =========================================================================== main

def options(parser) -> None:
    parser.add_argument("--interpret", action="store_true",
                        help="no GPU: run tiny versions of every kernel in Triton's interpreter against numpy")
    parser.add_argument("--local-ops", action="store_true",
                        help="the linear and legacy modes own local loads, stores and allocations too "
                             "(writes paper_kernels_local_ops.*)")
    parser.add_argument("--only", help="comma-separated kernel names (int4_gemm, mma_v2_gemm, streamk_gemm, "
                                       "layer_norm, template_attention)")


def chosen_cases(args, env) -> list:
    """The interpreter's tiny cases, or the paper's (the GPU's SM count sets stream-K's split)."""
    if args.interpret and args.dry_run:
        raise skeleton.UsageError("argument --interpret: not allowed with argument --dry-run/--dry")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    if args.interpret:
        cases = interpreter_cases()
    elif args.dry_run:
        cases = paper_cases()
    else:
        import torch
        cases = paper_cases(torch.cuda.get_device_properties(0).multi_processor_count)
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        unknown = wanted - {case.kernel for case in cases}
        if unknown:
            raise skeleton.UsageError(f"--only: unknown kernel {sorted(unknown)[0]!r}")
        cases = [case for case in cases if case.kernel in wanted]
    return cases


def run(args, env, cases) -> int:
    """Each mode prints (and the GPU run writes) its own report: the exit status."""
    if args.interpret:
        return interpret(cases)
    if args.dry_run:
        return dry_run(cases, args.local_ops)
    return gpu_run(cases, args.out, args.rounds, args.local_ops, only=args.only or "")


def main(argv=None) -> int:
    return skeleton.main("paper_kernels", __doc__, argv, options=options, cases=chosen_cases, run=run,
                         summary=lambda args, env, cases, status: status, rounds=3,
                         dry_run="no GPU: compile every case and mode for sm_90, print op counts",
                         no_gpu=lambda args: args.interpret)


if __name__ == "__main__":
    sys.exit(main())
