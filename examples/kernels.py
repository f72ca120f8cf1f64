"""Kernels for `make demo`: what Triton users write, with the parameters they compile with.

Each entry of ``KERNELS`` is a ``BundledKernel``: a ``@triton.jit`` function, its argument
types (``signature``), its compile-time constants (``constexprs``) and its launch options
(``num_warps``).  ``ll-demo`` compiles each one for sm_90 and gfx942 without a GPU and reports
every ``ttg.convert_layout`` Triton's layout passes left in it.

Plain Triton as in tutorials and libraries (nothing here knows about linear layouts); the lit
corpus (``tools/corpus/gen_corpus.py``) compiles these and the kernels below the bundle's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import triton
import triton.language as tl


@dataclass(frozen=True)
class BundledKernel:
    name: str                 # short name shown in the demo's table
    function: object          # the @triton.jit function
    signature: dict           # argument name -> Triton type ("*fp16", "i32", ...)
    constexprs: dict          # tl.constexpr argument name -> value
    num_warps: int = 4
    description: str = ""
    options: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- row-wise kernels

@triton.jit
def softmax(X, Y, N: tl.constexpr, ROWS: tl.constexpr):
    """Softmax over each row of a (rows x N) fp32 matrix, ROWS rows per program."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    x = tl.load(X + rows[:, None] * N + cols[None, :])
    z = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(z)
    tl.store(Y + rows[:, None] * N + cols[None, :], e / tl.sum(e, axis=1)[:, None])


@triton.jit
def layer_norm(X, Y, W, B, N: tl.constexpr, eps: tl.constexpr):
    """Layer norm of one fp16 row per program, statistics in fp32."""
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(X + row * N + cols).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N
    y = xc / tl.sqrt(var + eps) * tl.load(W + cols) + tl.load(B + cols)
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty))


@triton.jit
def column_sum(X, Y, M: tl.constexpr, N: tl.constexpr):
    """Sum over the rows of an (M x N) fp32 tile: one result per column."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    tl.store(Y + rn, tl.sum(x, axis=0))


@triton.jit
def rotary_embedding(X, COS, SIN, Y, D: tl.constexpr):
    """Rotary position embedding (GPT-J style, interleaved pairs) of one row of D features:
    (x[2i], x[2i+1]) is rotated by the angle whose cos/sin are COS[i], SIN[i]."""
    row = tl.program_id(0)
    x = tl.load(X + row * D + tl.arange(0, D))
    x_even, x_odd = tl.split(tl.reshape(x, (D // 2, 2)))
    cos = tl.load(COS + row * (D // 2) + tl.arange(0, D // 2))
    sin = tl.load(SIN + row * (D // 2) + tl.arange(0, D // 2))
    y = tl.join(x_even * cos - x_odd * sin, x_even * sin + x_odd * cos)
    tl.store(Y + row * D + tl.arange(0, D), tl.reshape(y, (D,)))


# --------------------------------------------------------------------------- matrix kernels

@triton.jit
def matmul(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    """C = A @ B with an ACC accumulator (fp32 for fp16); the epilogue stores the mma tile as C's type."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty))


@triton.jit
def attention_forward(Q, K, V, O, SEQ: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Flash-attention forward for one head: online softmax over BN-key blocks."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(Q + rm[:, None] * D + rd[None, :])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, SEQ, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(K + rn[None, :] * D + rd[:, None])
        v = tl.load(V + rn[:, None] * D + rd[None, :])
        s = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(O + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty))


@triton.jit
def transpose(X, Y, M: tl.constexpr, N: tl.constexpr):
    """Y = X^T for an (M x N) tile: coalesced loads of rows, coalesced stores of columns."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    tl.store(Y + rn[:, None] * M + rm[None, :], tl.trans(x))


@triton.jit
def int4_weight_matmul(A, Wq, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """A @ W where W is int4, two weights per byte along K (a weight-only quantized matmul)."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    rk_packed = tl.arange(0, K // 2)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    packed = tl.load(Wq + rk_packed[:, None] * N + rn[None, :])
    low = (packed << 4) >> 4                 # sign-extended low nibble
    high = packed >> 4                       # sign-extended high nibble
    w = tl.join(low, high)                   # (K/2, N, 2)
    w = tl.permute(w, (0, 2, 1))             # (K/2, 2, N)
    w = tl.reshape(w, (K, N)).to(tl.float16)  # rows 2k and 2k+1 come from byte k
    tl.store(C + rm[:, None] * N + rn[None, :], tl.dot(a, w))


# --------------------------------------------------------------------------- more, for the lit corpus
# (``tools/corpus/gen_corpus.py`` compiles these and the kernels above into ``test/lit/corpus``.)

@triton.jit
def matmul_int8(A, B, C, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One (BM x BK) @ (BK x BN) int8 tile product with an int32 result."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * BN + rn[None, :])
    tl.store(C + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@triton.jit
def reduce_2d(X, Y, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, USE_MAX: tl.constexpr):
    """Sum (or max) of an (M x N) tile along AXIS."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    if USE_MAX:
        r = tl.max(x, axis=AXIS)
    else:
        r = tl.sum(x, axis=AXIS)
    if AXIS == 0:
        tl.store(Y + rn, r)
    else:
        tl.store(Y + rm, r)


@triton.jit
def permute_3d(X, Y, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    """Y = X permuted (A, B, C) -> (C, A, B)."""
    ra = tl.arange(0, A)[:, None, None]
    rb = tl.arange(0, B)[None, :, None]
    rc = tl.arange(0, C)[None, None, :]
    x = tl.load(X + ra * B * C + rb * C + rc)
    y = tl.permute(x, (2, 0, 1))  # shape (C, A, B)
    rc2 = tl.arange(0, C)[:, None, None]
    ra2 = tl.arange(0, A)[None, :, None]
    rb2 = tl.arange(0, B)[None, None, :]
    tl.store(Y + rc2 * A * B + ra2 * B + rb2, y)


@triton.jit
def gather_rows(X, I, Y, M: tl.constexpr, N: tl.constexpr):
    """Y[m, n] = X[I[m, n], n] (``tl.gather`` along dim 0)."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    idx = tl.load(I + rm[:, None] * N + rn[None, :])
    tl.store(Y + rm[:, None] * N + rn[None, :], tl.gather(x, idx, axis=0))


@triton.jit
def split_interleave(X, Y, N: tl.constexpr):
    """Swap the two elements of every pair: split, then join in the other order."""
    r = tl.arange(0, N)
    x = tl.load(X + r)
    a, b = tl.split(tl.reshape(x, (N // 2, 2)))
    tl.store(Y + tl.arange(0, N), tl.reshape(tl.join(b, a), (N,)))


# --------------------------------------------------------------------------- the bundle

KERNELS: list[BundledKernel] = [
    BundledKernel("softmax", softmax, {"X": "*fp32", "Y": "*fp32"}, {"N": 1024, "ROWS": 4},
                  description="row softmax, 4 rows x 1024 columns per program"),
    BundledKernel("layer_norm", layer_norm, {"X": "*fp16", "Y": "*fp16", "W": "*fp32", "B": "*fp32"},
                  {"N": 512, "eps": 1e-5}, description="layer norm of a 512-wide fp16 row"),
    BundledKernel("rotary", rotary_embedding, {"X": "*fp32", "COS": "*fp32", "SIN": "*fp32", "Y": "*fp32"},
                  {"D": 256}, num_warps=1, description="rotary embedding of 256 features, interleaved pairs"),
    BundledKernel("matmul", matmul, {"A": "*fp16", "B": "*fp16", "C": "*fp16"},
                  {"M": 256, "N": 256, "K": 256, "BM": 64, "BN": 64, "BK": 32, "ACC": tl.float32},
                  description="fp16 matmul, 64x64x32 tiles, mma accumulator stored as fp16"),
    BundledKernel("attention", attention_forward, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16"},
                  {"SEQ": 256, "D": 64, "BM": 64, "BN": 64}, description="flash-attention forward, head dim 64"),
    BundledKernel("transpose", transpose, {"X": "*fp32", "Y": "*fp32"}, {"M": 64, "N": 64},
                  description="64x64 fp32 transpose"),
    BundledKernel("int4_matmul", int4_weight_matmul, {"A": "*fp16", "Wq": "*i8", "C": "*fp32"},
                  {"M": 64, "N": 64, "K": 64}, description="int4 weights unpacked with join/permute/reshape"),
    BundledKernel("column_sum", column_sum, {"X": "*fp32", "Y": "*fp32"}, {"M": 64, "N": 128},
                  description="sum over rows of a 64x128 fp32 tile"),
]
