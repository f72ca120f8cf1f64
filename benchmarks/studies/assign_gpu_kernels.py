"""Candidate kernels of the ll-assign-layouts GPU suite (benchmarks/studies/assign_gpu.py).

Kernels written the way Triton's tutorials and the public kernel libraries write them (nothing
in them knows about linear layouts), each at a GPU-sized shape, as ``paper_kernels.PaperCase``
objects (tensor arguments made by numpy, a numpy reference, launch options), plus the loop
kernels of ``examples/gpu_kernels.py`` and the cases of ``benchmarks/paper_kernels.py``.
Which of them the suite measures is decided by the selection rule (``assign_rule``), on stock
Triton's TTGIR, before anything is timed: see ``assign_gpu.py --select``.

* ``matmul_epilogue``: the matmul tutorial (grouped tile order, masked K loop) with a library
  epilogue: bias + ReLU, per-row scale (a dequant of activations), or none with fp32 output;
* ``linear_bias``: a linear layer, x @ W^T + b, W stored [N, K] as torch stores it;
* ``bmm``: batched matmul (one batch per program_id(2));
* ``w8a8_matmul``: int8 x int8 -> int32 accumulator, per-row and per-column scales, fp16 out;
* ``persistent_matmul``: one program per SM looping over output tiles (the tutorial's
  persistent matmul without TMA): the store sits inside the tile loop;
* ``gemv``: matrix-vector product (decode): a loop over K with a 2-D accumulator reduced at the end;
* ``layer_norm_looped``: the layer-norm tutorial's forward (loops over column blocks, mean and
  rstd saved), and ``layer_norm_dwdb``: its backward's dW/dB kernel (a loop over row blocks,
  column sums at the end);
* ``softmax_online``: a row softmax over column blocks (online max/sum, then a second pass);
* ``cross_entropy_online``: row cross entropy over vocabulary blocks (online logsumexp);
* ``argmax_rows``: per-row argmax over column blocks, several rows per program;
* ``rms_norm_rows``: RMS norm of several rows per program, looped over column blocks;
* ``fused_add_rms_norm``: residual add + RMS norm (the residual stored), several rows per program;
* ``rotary``: rotary position embedding (GPT-NeoX halves) over heads;
* ``swiglu``: silu(gate) * up over column blocks;
* ``seq_mean_pool``: mean over the sequence of [B, S, D] (a loop over sequence blocks);
* ``liger_neighborhood_attention_qk`` / ``_av``: two kernels of the third-party library of the
  corpus (Liger-Kernel 0.8.5, BSD-2-Clause), copied verbatim into ``thirdparty_liger.py``.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import os
import sys

import numpy as np
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()
from paper_kernels import PaperCase, Tensor, _normal, _strides  # noqa: E402


# =========================================================================== kernels

@triton.jit
def _grouped(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    return pid_m, pid_n


@triton.jit
def matmul_epilogue_kernel(A, B, C, BIAS, SCALE, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                           stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           GROUP_M: tl.constexpr, EPILOGUE: tl.constexpr):
    pid_m, pid_n = _grouped(tl.program_id(0), M, N, BM, BN, GROUP_M)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    if EPILOGUE == "bias_relu":
        acc = tl.maximum(acc + tl.load(BIAS + rn).to(tl.float32)[None, :], 0.0)
    elif EPILOGUE == "row_scale":
        acc = acc * tl.load(SCALE + rm)[:, None]
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    mask = (cm[:, None] < M) & (cn[None, :] < N)
    tl.store(C + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(C.dtype.element_ty), mask=mask)


@triton.jit
def linear_bias_kernel(X, W, BIAS, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       GROUP_M: tl.constexpr):
    """Y = X @ W^T + b with W of shape [N, K] (torch.nn.Linear's weight)."""
    pid_m, pid_n = _grouped(tl.program_id(0), M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(X + rm[:, None] * K + (k + rk)[None, :])
        w = tl.load(W + rn[None, :] * K + (k + rk)[:, None])       # W^T block: [BK, BN]
        acc = tl.dot(x, w, acc)
    acc += tl.load(BIAS + rn).to(tl.float32)[None, :]
    tl.store(Y + rm[:, None] * N + rn[None, :], acc.to(Y.dtype.element_ty))


@triton.jit
def bmm_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    batch = tl.program_id(2)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    A += batch * M * K
    B += batch * K * N
    C += batch * M * N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(A + rm[:, None] * K + (k + rk)[None, :]), tl.load(B + (k + rk)[:, None] * N + rn[None, :]),
                     acc)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty))


@triton.jit
def w8a8_matmul_kernel(A, B, SA, SB, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       GROUP_M: tl.constexpr):
    """int8 activations (per-row scale) times int8 weights (per-column scale), fp16 out."""
    pid_m, pid_n = _grouped(tl.program_id(0), M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(A + rm[:, None] * K + (k + rk)[None, :]), tl.load(B + (k + rk)[:, None] * N + rn[None, :]),
                     acc, out_dtype=tl.int32)
    out = acc.to(tl.float32) * tl.load(SA + rm)[:, None] * tl.load(SB + rn)[None, :]
    tl.store(C + rm[:, None] * N + rn[None, :], out.to(C.dtype.element_ty))


@triton.jit
def persistent_matmul_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    rk = tl.arange(0, BK)
    for tile in range(tl.program_id(0), tiles, NUM_SMS):
        pid_m, pid_n = _grouped(tile, M, N, BM, BN, GROUP_M)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(tl.load(A + rm[:, None] * K + (k + rk)[None, :]),
                         tl.load(B + (k + rk)[:, None] * N + rn[None, :]), acc)
        tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty))


@triton.jit
def gemv_kernel(W, X, Y, N, K, BN: tl.constexpr, BK: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BN, BK), dtype=tl.float32)
    for k in range(0, K, BK):
        w = tl.load(W + rn[:, None] * K + (k + rk)[None, :]).to(tl.float32)
        x = tl.load(X + k + rk).to(tl.float32)
        acc += w * x[None, :]
    tl.store(Y + rn, tl.sum(acc, axis=1).to(Y.dtype.element_ty))


@triton.jit
def layer_norm_looped_kernel(X, Y, W, B, MEAN, RSTD, stride, N, eps, BLOCK: tl.constexpr):
    """Triton's layer-norm tutorial, forward (_layer_norm_fwd_fused)."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(MEAN + row, mean)
    tl.store(RSTD + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_dwdb_kernel(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Triton's layer-norm tutorial, backward (_layer_norm_bwd_dwdb): sum the partial dW/dB rows."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


@triton.jit
def softmax_online_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    X += row * N
    Y += row * N
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        tl.store(Y + cols, (tl.exp(x - row_max) / total).to(Y.dtype.element_ty), mask=cols < N)


@triton.jit
def cross_entropy_online_kernel(LOGITS, TARGET, LOSS, ROWS, V, R: tl.constexpr, BLOCK: tl.constexpr):
    """R rows per program, online logsumexp over vocabulary blocks, loss = lse - x[target]."""
    rows = tl.program_id(0) * R + tl.arange(0, R)
    base = LOGITS + rows.to(tl.int64)[:, None] * V
    m = tl.full((R,), -float("inf"), tl.float32)
    s = tl.zeros((R,), tl.float32)
    for off in range(0, V, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols[None, :], mask=cols[None, :] < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m = m_new
    t = tl.load(TARGET + rows)
    xt = tl.load(LOGITS + rows.to(tl.int64) * V + t).to(tl.float32)
    tl.store(LOSS + rows, m + tl.log(s) - xt)


@triton.jit
def argmax_rows_kernel(X, IDX, N, R: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    best = tl.full((R,), -float("inf"), tl.float32)
    best_i = tl.zeros((R,), tl.int32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + rows[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=-float("inf"))
        v, i = tl.max(x.to(tl.float32), axis=1, return_indices=True, return_indices_tie_break_left=True)
        better = v > best
        best_i = tl.where(better, i + off, best_i)
        best = tl.where(better, v, best)
    tl.store(IDX + rows, best_i)


@triton.jit
def rms_norm_rows_kernel(X, Y, W, N, eps, R: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    base = rows.to(tl.int64)[:, None] * N
    acc = tl.zeros((R, BLOCK), tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + base + cols[None, :], mask=cols[None, :] < N, other=0.).to(tl.float32)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols[None, :] < N
        x = tl.load(X + base + cols[None, :], mask=mask, other=0.).to(tl.float32)
        w = tl.load(W + cols, mask=cols < N, other=0.).to(tl.float32)
        tl.store(Y + base + cols[None, :], (x * rstd[:, None] * w[None, :]).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def fused_add_rms_norm_kernel(X, RES, RES_OUT, Y, W, N: tl.constexpr, eps, R: tl.constexpr):
    """h = x + res (stored as the next residual), y = rms_norm(h) * w; R rows of N per program."""
    rows = tl.program_id(0) * R + tl.arange(0, R)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    h = tl.load(X + offs).to(tl.float32) + tl.load(RES + offs).to(tl.float32)
    tl.store(RES_OUT + offs, h.to(RES_OUT.dtype.element_ty))
    rstd = 1 / tl.sqrt(tl.sum(h * h, axis=1) / N + eps)
    tl.store(Y + offs, (h * rstd[:, None] * tl.load(W + cols).to(tl.float32)[None, :]).to(Y.dtype.element_ty))


@triton.jit
def rotary_kernel(X, COS, SIN, OUT, S, H, HALF: tl.constexpr, BH: tl.constexpr):
    """GPT-NeoX rotary embedding of x[token, head, 2*HALF]: heads in blocks of BH."""
    token = tl.program_id(0)
    pos = token % S
    d = tl.arange(0, HALF)
    c = tl.load(COS + pos * HALF + d)[None, :]
    s = tl.load(SIN + pos * HALF + d)[None, :]
    for h0 in range(0, H, BH):
        heads = h0 + tl.arange(0, BH)
        base = (token * H + heads)[:, None] * (2 * HALF)
        mask = heads[:, None] < H
        x1 = tl.load(X + base + d[None, :], mask=mask, other=0.).to(tl.float32)
        x2 = tl.load(X + base + HALF + d[None, :], mask=mask, other=0.).to(tl.float32)
        tl.store(OUT + base + d[None, :], (x1 * c - x2 * s).to(OUT.dtype.element_ty), mask=mask)
        tl.store(OUT + base + HALF + d[None, :], (x2 * c + x1 * s).to(OUT.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_kernel(G, U, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        g = tl.load(G + row * N + cols, mask=mask, other=0.).to(tl.float32)
        u = tl.load(U + row * N + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + row * N + cols, (g * tl.sigmoid(g) * u).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def seq_mean_pool_kernel(X, OUT, S, D, BS: tl.constexpr, BD: tl.constexpr):
    """OUT[b, d] = mean over s of X[b, s, d]."""
    b = tl.program_id(1)
    rd = tl.program_id(0) * BD + tl.arange(0, BD)
    acc = tl.zeros((BS, BD), tl.float32)
    for s0 in range(0, S, BS):
        rs = s0 + tl.arange(0, BS)
        acc += tl.load(X + (b * S + rs)[:, None] * D + rd[None, :], mask=rs[:, None] < S, other=0.).to(tl.float32)
    tl.store(OUT + b * D + rd, (tl.sum(acc, axis=0) / S).to(OUT.dtype.element_ty))


# =========================================================================== cases

def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _mm(a, b):
    return _f32(a) @ _f32(b)


def matmul_epilogue_case(M, N, K, epilogue, out_dtype="float16", BM=128, BN=128, BK=64, warps=8, stages=3):
    def reference(x):
        acc = _mm(x["A"], x["B"])
        if epilogue == "bias_relu":
            acc = np.maximum(acc + _f32(x["BIAS"])[None, :], 0)
        elif epilogue == "row_scale":
            acc = acc * _f32(x["SCALE"])[:, None]
        return {"C": acc}
    (sam, sak), (sbk, sbn), (scm, scn) = _strides((M, K)), _strides((K, N)), _strides((M, N))
    return PaperCase(
        f"matmul_{epilogue}", f"M={M} N={N} K={K} {out_dtype}", matmul_epilogue_kernel,
        (triton.cdiv(M, BM) * triton.cdiv(N, BN),),
        {"A": Tensor((M, K), "float16", _normal((M, K))), "B": Tensor((K, N), "float16", _normal((K, N))),
         "C": Tensor((M, N), out_dtype), "BIAS": Tensor((N,), "float16", _normal((N,))),
         "SCALE": Tensor((M,), "float32", lambda rng: rng.uniform(0.5, 1.5, M).astype(np.float32))},
        {"M": M, "N": N, "K": K, "stride_am": sam, "stride_ak": sak, "stride_bk": sbk, "stride_bn": sbn,
         "stride_cm": scm, "stride_cn": scn},
        {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": 8, "EPILOGUE": epilogue}, reference,
        atol=0.5, rtol=2e-2, num_warps=warps, num_stages=stages)


def linear_bias_case(M, N, K, BM=128, BN=128, BK=64):
    return PaperCase(
        "linear_bias", f"M={M} N={N} K={K}", linear_bias_kernel, (triton.cdiv(M, BM) * triton.cdiv(N, BN),),
        {"X": Tensor((M, K), "float16", _normal((M, K))), "W": Tensor((N, K), "float16", _normal((N, K), scale=0.1)),
         "BIAS": Tensor((N,), "float16", _normal((N,))), "Y": Tensor((M, N), "float16")},
        {"M": M, "N": N, "K": K}, {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": 8},
        lambda x: {"Y": _mm(x["X"], _f32(x["W"]).T) + _f32(x["BIAS"])[None, :]},
        atol=0.1, rtol=2e-2, num_warps=8, num_stages=3)


def bmm_case(batch, M, N, K, BM=128, BN=128, BK=64):
    return PaperCase(
        "bmm", f"B={batch} M={M} N={N} K={K}", bmm_kernel, (M // BM, N // BN, batch),
        {"A": Tensor((batch, M, K), "float16", _normal((batch, M, K))),
         "B": Tensor((batch, K, N), "float16", _normal((batch, K, N))), "C": Tensor((batch, M, N), "float16")},
        {"M": M, "N": N, "K": K}, {"BM": BM, "BN": BN, "BK": BK},
        lambda x: {"C": np.matmul(_f32(x["A"]), _f32(x["B"]))}, atol=0.5, rtol=2e-2, num_warps=8, num_stages=3)


def w8a8_case(M, N, K, BM=128, BN=128, BK=128):
    def ints(shape):
        return lambda rng: rng.integers(-127, 128, shape, dtype=np.int64).astype(np.int8)

    def reference(x):
        # exact in float64 (|sum| <= 127 * 128 * K < 2**53) and through BLAS: an int64 matmul of
        # 4096^3 in NumPy has no BLAS and ran for minutes
        acc = x["A"].astype(np.float64) @ x["B"].astype(np.float64)
        return {"C": acc.astype(np.float64) * x["SA"][:, None] * x["SB"][None, :]}
    return PaperCase(
        "w8a8_matmul", f"M={M} N={N} K={K}", w8a8_matmul_kernel, (triton.cdiv(M, BM) * triton.cdiv(N, BN),),
        {"A": Tensor((M, K), "int8", ints((M, K))), "B": Tensor((K, N), "int8", ints((K, N))),
         "SA": Tensor((M,), "float32", lambda rng: rng.uniform(1e-4, 2e-4, M).astype(np.float32)),
         "SB": Tensor((N,), "float32", lambda rng: rng.uniform(1e-4, 2e-4, N).astype(np.float32)),
         "C": Tensor((M, N), "float16")},
        {"M": M, "N": N, "K": K}, {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": 8}, reference,
        atol=1e-3, rtol=1e-2, num_warps=8, num_stages=3)


def persistent_matmul_case(M, N, K, sms=132, BM=128, BN=128, BK=64):
    return PaperCase(
        "persistent_matmul", f"M={M} N={N} K={K}", persistent_matmul_kernel, (sms,),
        {"A": Tensor((M, K), "float16", _normal((M, K))), "B": Tensor((K, N), "float16", _normal((K, N))),
         "C": Tensor((M, N), "float16")},
        {"M": M, "N": N, "K": K}, {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": 8, "NUM_SMS": sms},
        lambda x: {"C": _mm(x["A"], x["B"])}, atol=0.5, rtol=2e-2, num_warps=8, num_stages=3)


def gemv_case(N, K, BN=64, BK=128):
    return PaperCase(
        "gemv", f"N={N} K={K}", gemv_kernel, (N // BN,),
        {"W": Tensor((N, K), "float16", _normal((N, K))), "X": Tensor((K,), "float16", _normal((K,))),
         "Y": Tensor((N,), "float32")},
        {"N": N, "K": K}, {"BN": BN, "BK": BK}, lambda x: {"Y": _f32(x["W"]).astype(np.float64) @ _f32(x["X"])},
        atol=1e-2, rtol=1e-3, num_warps=4, num_stages=3)


def layer_norm_looped_case(M, N, BLOCK=1024):
    def reference(x):
        v = _f32(x["X"]).astype(np.float64)
        mean = v.mean(1)
        rstd = 1 / np.sqrt(v.var(1) + 1e-5)
        return {"Y": (v - mean[:, None]) * rstd[:, None] * x["W"][None, :] + x["B"][None, :], "MEAN": mean, "RSTD": rstd}
    return PaperCase(
        "layer_norm_looped", f"M={M} N={N}", layer_norm_looped_kernel, (M,),
        {"X": Tensor((M, N), "float16", _normal((M, N))), "Y": Tensor((M, N), "float16"),
         "W": Tensor((N,), "float32", _normal((N,), "float32")), "B": Tensor((N,), "float32", _normal((N,), "float32")),
         "MEAN": Tensor((M,), "float32"), "RSTD": Tensor((M,), "float32")},
        {"stride": N, "N": N, "eps": 1e-5}, {"BLOCK": BLOCK}, reference, atol=2e-2, rtol=1e-2, num_warps=8, num_stages=1)


def layer_norm_dwdb_case(M, N, BLOCK_M=32, BLOCK_N=128):
    return PaperCase(
        "layer_norm_dwdb", f"M={M} N={N}", layer_norm_dwdb_kernel, (triton.cdiv(N, BLOCK_N),),
        {"DW": Tensor((M, N), "float32", _normal((M, N), "float32")), "DB": Tensor((M, N), "float32", _normal((M, N), "float32")),
         "FINAL_DW": Tensor((N,), "float32"), "FINAL_DB": Tensor((N,), "float32")},
        {"M": M, "N": N}, {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N},
        lambda x: {"FINAL_DW": x["DW"].astype(np.float64).sum(0), "FINAL_DB": x["DB"].astype(np.float64).sum(0)},
        atol=1e-2, rtol=1e-4, num_warps=4, num_stages=2)


def softmax_online_case(M, N, BLOCK=2048):
    def reference(x):
        v = _f32(x["X"]).astype(np.float64)
        e = np.exp(v - v.max(1, keepdims=True))
        return {"Y": e / e.sum(1, keepdims=True)}
    return PaperCase(
        "softmax_online", f"M={M} N={N}", softmax_online_kernel, (M,),
        {"X": Tensor((M, N), "float16", _normal((M, N))), "Y": Tensor((M, N), "float16")},
        {"N": N}, {"BLOCK": BLOCK}, reference, atol=1e-3, rtol=1e-2, num_warps=8, num_stages=1)


def cross_entropy_online_case(rows, V, R=4, BLOCK=1024):
    def reference(x):
        v = _f32(x["LOGITS"]).astype(np.float64)
        m = v.max(1)
        lse = m + np.log(np.exp(v - m[:, None]).sum(1))
        return {"LOSS": lse - v[np.arange(rows), x["TARGET"]]}
    return PaperCase(
        "cross_entropy_online", f"rows={rows} V={V}", cross_entropy_online_kernel, (rows // R,),
        {"LOGITS": Tensor((rows, V), "float16", _normal((rows, V), scale=2.0)),
         "TARGET": Tensor((rows,), "int32", lambda rng: rng.integers(0, V, rows).astype(np.int32)),
         "LOSS": Tensor((rows,), "float32")},
        {"ROWS": rows, "V": V}, {"R": R, "BLOCK": BLOCK}, reference, atol=1e-3, rtol=1e-3, num_warps=8, num_stages=1)


def argmax_rows_case(M, N, R=8, BLOCK=512):
    return PaperCase(
        "argmax_rows", f"M={M} N={N}", argmax_rows_kernel, (M // R,),
        {"X": Tensor((M, N), "float32", _normal((M, N), "float32")), "IDX": Tensor((M,), "int32")},
        {"N": N}, {"R": R, "BLOCK": BLOCK}, lambda x: {"IDX": x["X"].argmax(1)}, atol=0.5, rtol=0,
        num_warps=4, num_stages=1)


def rms_norm_rows_case(M, N, R=4, BLOCK=1024):
    def reference(x):
        v = _f32(x["X"]).astype(np.float64)
        return {"Y": v / np.sqrt((v * v).mean(1, keepdims=True) + 1e-6) * _f32(x["W"])[None, :]}
    return PaperCase(
        "rms_norm_rows", f"M={M} N={N}", rms_norm_rows_kernel, (M // R,),
        {"X": Tensor((M, N), "float16", _normal((M, N))), "Y": Tensor((M, N), "float16"),
         "W": Tensor((N,), "float16", _normal((N,)))},
        {"N": N, "eps": 1e-6}, {"R": R, "BLOCK": BLOCK}, reference, atol=2e-2, rtol=1e-2, num_warps=8, num_stages=1)


def fused_add_rms_norm_case(M, N, R=4):
    def reference(x):
        h = _f32(x["X"]).astype(np.float64) + _f32(x["RES"])
        return {"Y": h / np.sqrt((h * h).mean(1, keepdims=True) + 1e-6) * _f32(x["W"])[None, :], "RES_OUT": h}
    case = PaperCase(
        "fused_add_rms_norm", f"M={M} N={N}", fused_add_rms_norm_kernel, (M // R,),
        {"X": Tensor((M, N), "float16", _normal((M, N))), "RES": Tensor((M, N), "float16", _normal((M, N))),
         "RES_OUT": Tensor((M, N), "float16"), "Y": Tensor((M, N), "float16"),
         "W": Tensor((N,), "float16", _normal((N,)))},
        {"eps": 1e-6}, {"N": N, "R": R}, reference, atol=2e-2, rtol=1e-2, num_warps=8, num_stages=1)
    return case


def rotary_case(tokens, S, H, HALF=64, BH=8):
    def reference(x):
        v = _f32(x["X"]).astype(np.float64).reshape(tokens, H, 2 * HALF)
        pos = np.arange(tokens) % S
        c, s = _f32(x["COS"])[pos][:, None, :], _f32(x["SIN"])[pos][:, None, :]
        x1, x2 = v[..., :HALF], v[..., HALF:]
        return {"OUT": np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1).reshape(tokens, H * 2 * HALF)}
    angles = lambda rng: (np.arange(S)[:, None] * (10000.0 ** (-np.arange(HALF) / HALF))[None, :])  # noqa: E731
    return PaperCase(
        "rotary", f"tokens={tokens} H={H} D={2 * HALF}", rotary_kernel, (tokens,),
        {"X": Tensor((tokens, H * 2 * HALF), "float16", _normal((tokens, H * 2 * HALF))),
         "COS": Tensor((S, HALF), "float32", lambda rng: np.cos(angles(rng)).astype(np.float32)),
         "SIN": Tensor((S, HALF), "float32", lambda rng: np.sin(angles(rng)).astype(np.float32)),
         "OUT": Tensor((tokens, H * 2 * HALF), "float16")},
        {"S": S, "H": H}, {"HALF": HALF, "BH": BH}, reference, atol=2e-2, rtol=1e-2, num_warps=4, num_stages=1)


def swiglu_case(M, N, BLOCK=1024):
    def reference(x):
        g = _f32(x["G"]).astype(np.float64)
        return {"Y": g / (1 + np.exp(-g)) * _f32(x["U"])}
    return PaperCase(
        "swiglu", f"M={M} N={N}", swiglu_kernel, (M,),
        {"G": Tensor((M, N), "float16", _normal((M, N))), "U": Tensor((M, N), "float16", _normal((M, N))),
         "Y": Tensor((M, N), "float16")},
        {"N": N}, {"BLOCK": BLOCK}, reference, atol=2e-2, rtol=1e-2, num_warps=4, num_stages=1)


def seq_mean_pool_case(B, S, D, BS=32, BD=128):
    return PaperCase(
        "seq_mean_pool", f"B={B} S={S} D={D}", seq_mean_pool_kernel, (D // BD, B),
        {"X": Tensor((B, S, D), "float16", _normal((B, S, D))), "OUT": Tensor((B, D), "float32")},
        {"S": S, "D": D}, {"BS": BS, "BD": BD}, lambda x: {"OUT": _f32(x["X"]).astype(np.float64).mean(1)},
        atol=1e-3, rtol=1e-3, num_warps=4, num_stages=2)


# --------------------------------------------------------------------------- examples/gpu_kernels.py

def example_cases() -> list:
    """The loop kernels of the kernel suite (examples/gpu_kernels.py) at its shapes."""
    from linear_layouts.examples.gpu_kernels import attention_fwd_kernel, column_sum_kernel, int4_matmul_kernel, matmul_kernel

    M = N = K = 4096
    cases = [PaperCase(
        "example_matmul", f"M={M} N={N} K={K}", matmul_kernel, (M // 128, N // 128),
        {"A": Tensor((M, K), "float16", _normal((M, K))), "B": Tensor((K, N), "float16", _normal((K, N))),
         "C": Tensor((M, N), "float16")}, {"M": M, "N": N, "K": K}, {"BM": 128, "BN": 128, "BK": 64},
        lambda x: {"C": _mm(x["A"], x["B"])}, atol=1.0, rtol=2e-2, num_warps=8, num_stages=3)]

    def int4_reference(x):
        q = x["Wq"].view(np.uint8)
        w = np.empty((q.shape[0] * 2, q.shape[1]), np.float32)
        w[0::2], w[1::2] = (q & 0xF).astype(np.float32) - 8, (q >> 4).astype(np.float32) - 8
        return {"C": _mm(x["A"], w) * _f32(x["S"])[None, :]}
    M4, N4, K4 = 2048, 4096, 4096
    cases.append(PaperCase(
        "example_int4_matmul", f"M={M4} N={N4} K={K4}", int4_matmul_kernel, (M4 // 128, N4 // 128),
        {"A": Tensor((M4, K4), "float16", _normal((M4, K4))),
         "Wq": Tensor((K4 // 2, N4), "int8", lambda rng: rng.integers(-128, 128, (K4 // 2, N4)).astype(np.int8)),
         "S": Tensor((N4,), "float16", lambda rng: rng.uniform(0.01, 0.03, N4).astype(np.float16)),
         "C": Tensor((M4, N4), "float16")}, {"M": M4, "N": N4, "K": K4}, {"BM": 128, "BN": 128, "BK": 64},
        int4_reference, atol=0.5, rtol=2e-2, num_warps=8, num_stages=3))

    H, SEQ, D = 32, 2048, 64

    def attention_reference(x):
        q, k, v = (_f32(x[n]) for n in "QKV")
        s = np.matmul(q, k.transpose(0, 2, 1)) * D ** -0.5
        p = np.exp(s - s.max(-1, keepdims=True))
        return {"O": np.matmul(p / p.sum(-1, keepdims=True), v)}
    cases.append(PaperCase(
        "example_attention", f"H={H} SEQ={SEQ} D={D}", attention_fwd_kernel, (SEQ // 128, H),
        {n: Tensor((H, SEQ, D), "float16", _normal((H, SEQ, D))) for n in "QKV"} | {"O": Tensor((H, SEQ, D), "float16")},
        {"SEQ": SEQ, "sm_scale": D ** -0.5}, {"D": D, "BM": 128, "BN": 64}, attention_reference,
        atol=2e-2, rtol=2e-2, num_warps=8, num_stages=1))
    cases.append(PaperCase(
        "example_column_sum", "M=8192 N=8192", column_sum_kernel, (8192 // 128,),
        {"X": Tensor((8192, 8192), "float32", _normal((8192, 8192), "float32")), "Y": Tensor((8192,), "float32")},
        {"M": 8192, "N": 8192}, {"BM": 64, "BN": 128}, lambda x: {"Y": x["X"].astype(np.float64).sum(0)},
        atol=1e-2, rtol=1e-4, num_warps=4, num_stages=1))
    return cases


# --------------------------------------------------------------------------- Liger-Kernel (third party)

class InfCase(PaperCase):
    """A case whose outputs hold -inf on purpose (masked attention scores): equal infinities match."""

    def check(self, outputs: dict, expected: dict) -> tuple:
        fixed_out, fixed_exp = {}, {}
        for name in self.outputs:
            got = np.asarray(outputs[name], dtype=np.float64)
            want = np.asarray(expected[name], dtype=np.float64)
            same_inf = np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
            fixed_out[name], fixed_exp[name] = np.where(same_inf, 0.0, got), np.where(same_inf, 0.0, want)
        return PaperCase.check(self, fixed_out, fixed_exp)


def liger_neighborhood_attention_cases(B=4, H=16, S=1024, D=64, kernel_size=7) -> list:
    """Liger-Kernel's fused neighborhood attention, its two forward kernels (benchmarks/
    thirdparty_liger.py, verbatim) launched as ``fused_neighborhood_attention_forward`` launches
    them: BLOCK_SIZE_M = N = min(64, S), BLOCK_SIZE_K = max(16, D), num_stages = 4 (S >= 512) and
    num_warps = 4 (calculate_settings(S)) as the kernels' constexpr arguments, default launch
    options (4 warps, 3 stages)."""
    from thirdparty_liger import _fused_neighborhood_attention_av_kernel, _fused_neighborhood_attention_qk_kernel

    scale = 1.0 / np.sqrt(D)
    q_strides, qk_strides = _strides((B, H, S, D)), _strides((B, H, S, S))
    blocks = {"BLOCK_SIZE_M": min(64, S), "BLOCK_SIZE_N": min(64, S), "BLOCK_SIZE_K": max(16, D), "num_stages": 4,
              "num_warps": 4}
    half = kernel_size // 2
    rows, cols = np.arange(S)[:, None], np.arange(S)[None, :]
    mask = ((cols >= np.maximum(0, rows - half)) & (cols < np.minimum(S, rows + half + 1))).astype(np.float32)

    def qk_reference(x):
        s = np.matmul(_f32(x["Q_ptr"]), _f32(x["K_ptr"]).transpose(0, 1, 3, 2)) * np.float32(scale)
        return {"QK_ptr": np.where(x["mask_ptr"] > 0, s, -np.inf)}
    qk = InfCase(
        "liger_neighborhood_attention_qk", f"B={B} H={H} S={S} D={D}", _fused_neighborhood_attention_qk_kernel,
        (B * H, triton.cdiv(S, blocks["BLOCK_SIZE_M"]), triton.cdiv(S, blocks["BLOCK_SIZE_N"])),
        {"Q_ptr": Tensor((B, H, S, D), "float16", _normal((B, H, S, D))),
         "K_ptr": Tensor((B, H, S, D), "float16", _normal((B, H, S, D))),
         "QK_ptr": Tensor((B, H, S, S), "float16"), "mask_ptr": Tensor((S, S), "float32", lambda rng: mask)},
        dict(zip(["q_batch_stride", "q_head_stride", "q_seq_stride", "q_dim_stride"], q_strides))
        | dict(zip(["k_batch_stride", "k_head_stride", "k_seq_stride", "k_dim_stride"], q_strides))
        | dict(zip(["qk_batch_stride", "qk_head_stride", "qk_seq_stride", "qk_seq2_stride"], qk_strides)),
        {"batch_size": B, "num_heads": H, "seq_len": S, "head_dim": D, "scale": float(scale),
         "kernel_size": kernel_size, "dilation": 1, **blocks},
        qk_reference, atol=2e-2, rtol=2e-2, num_warps=4, num_stages=3)

    def attention_weights(rng):
        s = rng.standard_normal((B, H, S, S), dtype=np.float32)
        s = np.where(mask > 0, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)).astype(np.float16)
    av = PaperCase(
        "liger_neighborhood_attention_av", f"B={B} H={H} S={S} D={D}", _fused_neighborhood_attention_av_kernel,
        (B * H, triton.cdiv(S, blocks["BLOCK_SIZE_M"]), triton.cdiv(D, blocks["BLOCK_SIZE_N"])),
        {"Attn_ptr": Tensor((B, H, S, S), "float16", attention_weights),
         "V_ptr": Tensor((B, H, S, D), "float16", _normal((B, H, S, D))), "Out_ptr": Tensor((B, H, S, D), "float16")},
        dict(zip(["attn_batch_stride", "attn_head_stride", "attn_seq_stride", "attn_seq2_stride"], qk_strides))
        | dict(zip(["v_batch_stride", "v_head_stride", "v_seq_stride", "v_dim_stride"], q_strides))
        | dict(zip(["out_batch_stride", "out_head_stride", "out_seq_stride", "out_dim_stride"], q_strides)),
        {"batch_size": B, "num_heads": H, "seq_len": S, "head_dim": D, **blocks},
        lambda x: {"Out_ptr": np.matmul(_f32(x["Attn_ptr"]), _f32(x["V_ptr"]))},
        atol=2e-2, rtol=2e-2, num_warps=4, num_stages=3)
    return [qk, av]


def candidate_cases() -> list:
    """Every candidate, in a fixed order (the selection rule picks among them)."""
    import paper_kernels

    paper = paper_kernels.paper_cases()
    # one case per paper kernel's shape group (the GPU suite is not the paper's shape sweep)
    picked = [paper[1], paper[0], paper[3], paper[6], paper[9], paper[16], paper[-3], paper[-2]]
    return [
        matmul_epilogue_case(4096, 4096, 4096, "bias_relu"),
        matmul_epilogue_case(4096, 4096, 4096, "row_scale"),
        matmul_epilogue_case(4096, 4096, 2048, "none", out_dtype="float32", BM=128, BN=64, BK=64, warps=4, stages=4),
        linear_bias_case(4096, 4096, 4096),
        bmm_case(16, 1024, 1024, 1024),
        w8a8_case(4096, 4096, 4096),
        persistent_matmul_case(4096, 4096, 4096),
        gemv_case(8192, 8192),
        layer_norm_looped_case(4096, 8192),
        layer_norm_dwdb_case(2048, 8192),
        softmax_online_case(4096, 8192),
        cross_entropy_online_case(4096, 32768),
        argmax_rows_case(8192, 4096),
        rms_norm_rows_case(8192, 4096),
        fused_add_rms_norm_case(8192, 2048),
        rotary_case(8192, 2048, 32),
        swiglu_case(8192, 8192),
        seq_mean_pool_case(16, 4096, 4096),
        *example_cases(),
        *picked,
        *liger_neighborhood_attention_cases(),
    ]


def interpreter_cases() -> list:
    """Tiny versions of the new candidates (ragged sizes where the kernel masks), for Triton's
    CPU interpreter (``assign_gpu.py --interpret``): checks the kernels and their references."""
    return [
        matmul_epilogue_case(80, 64, 48, "bias_relu", BM=32, BN=32, BK=16, warps=4),
        matmul_epilogue_case(64, 96, 40, "row_scale", BM=32, BN=32, BK=16, warps=4),
        matmul_epilogue_case(64, 64, 32, "none", out_dtype="float32", BM=32, BN=32, BK=16, warps=4),
        linear_bias_case(64, 64, 64, BM=32, BN=32, BK=16),
        bmm_case(2, 32, 32, 32, BM=16, BN=16, BK=16),
        w8a8_case(64, 64, 64, BM=32, BN=32, BK=32),
        persistent_matmul_case(64, 96, 32, sms=4, BM=32, BN=32, BK=16),
        gemv_case(128, 256, BN=32, BK=64),
        layer_norm_looped_case(4, 300, BLOCK=128),
        layer_norm_dwdb_case(50, 200, BLOCK_M=16, BLOCK_N=64),
        softmax_online_case(4, 300, BLOCK=128),
        cross_entropy_online_case(8, 300, R=4, BLOCK=128),
        argmax_rows_case(16, 300, R=8, BLOCK=128),
        rms_norm_rows_case(8, 300, R=4, BLOCK=128),
        fused_add_rms_norm_case(8, 64, R=4),
        rotary_case(6, 4, 5, HALF=8, BH=4),
        swiglu_case(4, 300, BLOCK=128),
        seq_mean_pool_case(2, 70, 256, BS=32, BD=128),
        *liger_neighborhood_attention_cases(B=1, H=2, S=100, D=16),
    ]
