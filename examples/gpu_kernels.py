"""GPU-sized kernels for the kernel suite (``benchmarks/kernels.py``): the row-wise,
normalisation, matmul, attention, reduction and gather kernels of tutorials and libraries,
with masks, runtime sizes and loops over blocks as they run on real inputs (``matmul_kernel``
is ``kernels.matmul`` with the matrix sizes given at launch, as libraries write it, instead of
compiled in).  Nothing here knows about linear layouts: their ``ttg.convert_layout`` ops are
whatever Triton's layout passes leave in them.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(X, Y, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(Y + row * N + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, N: tl.constexpr, eps: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    rstd = 1 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps)
    y = xc * rstd * tl.load(W + cols).to(tl.float32) + tl.load(B + cols).to(tl.float32)
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty))


@triton.jit
def layer_norm_bwd_kernel(X, DY, W, MEAN, RSTD, DX, N: tl.constexpr, BLOCK: tl.constexpr):
    """dx of layer norm, given the forward's mean and rstd per row."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols).to(tl.float32)
    dy = tl.load(DY + row * N + cols).to(tl.float32)
    w = tl.load(W + cols).to(tl.float32)
    mean = tl.load(MEAN + row)
    rstd = tl.load(RSTD + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + row * N + cols, dx.to(DX.dtype.element_ty))


@triton.jit
def rms_norm_kernel(X, Y, W, N: tl.constexpr, eps: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(Y + row * N + cols, (x * rstd * tl.load(W + cols).to(tl.float32)).to(Y.dtype.element_ty))


@triton.jit
def matmul_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty))


@triton.jit
def int4_matmul_kernel(A, Wq, S, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ dequant(W): W is int4 packed two per byte along K (low nibble = even k), values
    offset by 8, one fp16 scale per output column."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rkh = tl.arange(0, BK // 2)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        packed = tl.load(Wq + (k // 2 + rkh)[:, None] * N + rn[None, :])
        low = (packed & 0xF).to(tl.int8) - 8
        high = ((packed >> 4) & 0xF).to(tl.int8) - 8
        w = tl.join(low, high)                      # (BK/2, BN, 2)
        w = tl.permute(w, (0, 2, 1))                # (BK/2, 2, BN): k = 2*i + j
        w = tl.reshape(w, (BK, BN)).to(tl.float16)
        acc += tl.dot(a, w)
    scale = tl.load(S + rn).to(tl.float32)
    tl.store(C + rm[:, None] * N + rn[None, :], (acc * scale[None, :]).to(C.dtype.element_ty))


@triton.jit
def attention_fwd_kernel(Q, K, V, O, SEQ, sm_scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """One head, no mask: O = softmax(Q K^T * scale) V, online softmax over key blocks."""
    head = tl.program_id(1)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    base = head * SEQ * D
    q = tl.load(Q + base + rm[:, None] * D + rd[None, :])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, SEQ, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(K + base + rn[None, :] * D + rd[:, None])
        s = tl.dot(q, k) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + base + rn[:, None] * D + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(O + base + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty))


@triton.jit
def cross_entropy_kernel(LOGITS, TARGET, LOSS, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(LOGITS + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    t = tl.load(TARGET + row)
    xt = tl.load(LOGITS + row * N + t).to(tl.float32)
    tl.store(LOSS + row, lse - xt)


@triton.jit
def transpose_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    tl.store(Y + rn[None, :] * M + rm[:, None], x)


@triton.jit
def embedding_kernel(IDS, TABLE, OUT, D: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    ids = tl.load(IDS + rows)
    cols = tl.arange(0, D)
    vals = tl.load(TABLE + ids[:, None] * D + cols[None, :])
    tl.store(OUT + rows[:, None] * D + cols[None, :], vals)


@triton.jit
def column_sum_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BN,), tl.float32)
    for start in range(0, M, BM):
        rm = start + tl.arange(0, BM)
        acc += tl.sum(tl.load(X + rm[:, None] * N + rn[None, :]), axis=0)
    tl.store(Y + rn, acc)


@triton.jit
def row_max_kernel(X, Y, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    tl.store(Y + rows, tl.max(tl.load(X + rows[:, None] * N + cols[None, :]), axis=1))
