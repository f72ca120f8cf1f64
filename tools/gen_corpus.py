"""Generate the TTGIR corpus of test/lit/corpus/ from real kernels compiled by Triton.

    python -m linear_layouts.tools.gen_corpus            # rewrite test/lit/corpus/
    python -m linear_layouts.tools.gen_corpus --check    # list what would be generated

Each kernel below is compiled for cuda:80, cuda:90 and hip:gfx942 with
``triton.compile(ASTSource(...), target=GPUTarget(...))`` (no GPU needed) and its ``ttgir``
stage is written to ``test/lit/corpus/<target>/<kernel>.ttgir``.  The files are committed (made
with the Triton version named in ``test/lit/corpus/VERSION``) and regenerated when Triton
changes.  Locations keep line numbers but name this file relative to the repository.

The kernels cover what produces interesting layout conversions: matmul (1 to 8 warps, fp16,
int8, fp64), softmax, layer norm, attention forward, sum and max along each axis, transposes,
gather, int4-weight unpacking (join / permute / reshape), 8-bit and 64-bit element types.
"""

from __future__ import annotations

import argparse
import os
import sys

import triton
import triton.language as tl
from triton.compiler import ASTSource

from ..lowering.target import GFX942, SM80, SM90

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "test", "lit", "corpus")
TARGETS = {"cuda80": SM80, "cuda90": SM90, "gfx942": GFX942}  # corpus folder -> target


# --------------------------------------------------------------------------- kernels

@triton.jit
def matmul(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
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
def matmul_int8(A, B, C, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * BN + rn[None, :])
    tl.store(C + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@triton.jit
def softmax(X, Y, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    x = tl.load(X + rows[:, None] * N + cols[None, :])
    z = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(z)
    tl.store(Y + rows[:, None] * N + cols[None, :], e / tl.sum(e, axis=1)[:, None])


@triton.jit
def layer_norm(X, Y, W, B, N: tl.constexpr, eps: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(X + row * N + cols).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N
    y = xc / tl.sqrt(var + eps) * tl.load(W + cols) + tl.load(B + cols)
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty))


@triton.jit
def attention_fwd(Q, K, V, O, SEQ: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
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
def reduce_2d(X, Y, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, USE_MAX: tl.constexpr):
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
def transpose_2d(X, Y, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    tl.store(Y + rn[:, None] * M + rm[None, :], tl.trans(x))


@triton.jit
def permute_3d(X, Y, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
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
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    idx = tl.load(I + rm[:, None] * N + rn[None, :])
    tl.store(Y + rm[:, None] * N + rn[None, :], tl.gather(x, idx, axis=0))


@triton.jit
def int4_unpack_matmul(A, Wq, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # Wq holds two 4-bit weights per byte along K: unpack with shifts, join the halves into a
    # trailing dim of 2, move it next to K and merge it into K with a reshape.
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    rkh = tl.arange(0, K // 2)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    packed = tl.load(Wq + rkh[:, None] * N + rn[None, :])
    lo = (packed << 4) >> 4
    hi = packed >> 4
    w = tl.join(lo, hi)                      # (K/2, N, 2)
    w = tl.permute(w, (0, 2, 1))             # (K/2, 2, N)
    w = tl.reshape(w, (K, N)).to(tl.float16)
    tl.store(C + rm[:, None] * N + rn[None, :], tl.dot(a, w))


@triton.jit
def split_interleave(X, Y, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(X + r)
    a, b = tl.split(tl.reshape(x, (N // 2, 2)))
    tl.store(Y + tl.arange(0, N), tl.reshape(tl.join(b, a), (N,)))


# --------------------------------------------------------------------------- the corpus

def _cases():
    """(file stem, kernel, signature, constexprs, options) for every corpus file."""
    mm = {"A": "*fp16", "B": "*fp16", "C": "*fp16"}
    mm_ce = {"M": 256, "N": 256, "K": 256, "BM": 64, "BN": 64, "BK": 32, "ACC": tl.float32}
    for warps in (1, 2, 4, 8):
        yield f"matmul_w{warps}", matmul, mm, mm_ce, {"num_warps": warps}
    yield "matmul_fp64", matmul, {"A": "*fp64", "B": "*fp64", "C": "*fp64"}, \
        {"M": 64, "N": 64, "K": 64, "BM": 32, "BN": 32, "BK": 16, "ACC": tl.float64}, {"num_warps": 4}
    yield "matmul_int8", matmul_int8, {"A": "*i8", "B": "*i8", "C": "*i32"}, \
        {"K": 64, "BM": 64, "BN": 64, "BK": 64}, {"num_warps": 4}
    yield "softmax", softmax, {"X": "*fp32", "Y": "*fp32"}, {"N": 1024, "ROWS": 4}, {"num_warps": 4}
    yield "layer_norm", layer_norm, {"X": "*fp16", "Y": "*fp16", "W": "*fp32", "B": "*fp32"}, \
        {"N": 512, "eps": 1e-5}, {"num_warps": 4}
    yield "attention_fwd", attention_fwd, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16"}, \
        {"SEQ": 256, "D": 64, "BM": 64, "BN": 64}, {"num_warps": 4}
    for axis in (0, 1):
        for use_max, op in ((False, "sum"), (True, "max")):
            yield f"{op}_axis{axis}", reduce_2d, {"X": "*fp32", "Y": "*fp32"}, \
                {"M": 64, "N": 128, "AXIS": axis, "USE_MAX": use_max}, {"num_warps": 4}
    yield "sum_axis1_i64", reduce_2d, {"X": "*i64", "Y": "*i64"}, \
        {"M": 32, "N": 64, "AXIS": 1, "USE_MAX": False}, {"num_warps": 4}
    yield "max_axis0_i8", reduce_2d, {"X": "*i8", "Y": "*i8"}, \
        {"M": 64, "N": 64, "AXIS": 0, "USE_MAX": True}, {"num_warps": 2}
    for dtype, bits in (("*fp32", 32), ("*fp16", 16), ("*i8", 8), ("*fp64", 64)):
        yield f"transpose_{bits}bit", transpose_2d, {"X": dtype, "Y": dtype}, {"M": 64, "N": 64}, {"num_warps": 4}
    yield "transpose_1warp", transpose_2d, {"X": "*fp32", "Y": "*fp32"}, {"M": 32, "N": 32}, {"num_warps": 1}
    yield "permute_3d", permute_3d, {"X": "*fp32", "Y": "*fp32"}, {"A": 8, "B": 16, "C": 32}, {"num_warps": 4}
    yield "gather", gather_rows, {"X": "*fp32", "I": "*i32", "Y": "*fp32"}, {"M": 64, "N": 32}, {"num_warps": 4}
    yield "int4_unpack_matmul", int4_unpack_matmul, {"A": "*fp16", "Wq": "*i8", "C": "*fp32"}, \
        {"M": 64, "N": 64, "K": 64}, {"num_warps": 4}
    yield "split_interleave", split_interleave, {"X": "*fp32", "Y": "*fp32"}, {"N": 256}, {"num_warps": 2}


def compile_ttgir(kernel, signature, constexprs, options, target) -> str:
    signature = dict(signature)
    for name in constexprs:
        signature[name] = "constexpr"
    source = ASTSource(kernel, signature, constexprs=constexprs)
    return triton.compile(source, target=target.gpu_target(), options=options).asm["ttgir"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the files without compiling")
    parser.add_argument("--out", default=CORPUS, help="corpus directory (default: test/lit/corpus)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    count = 0
    for target_name, target in TARGETS.items():
        os.makedirs(os.path.join(args.out, target_name), exist_ok=True)
        for stem, kernel, signature, constexprs, options in _cases():
            path = os.path.join(args.out, target_name, stem + ".ttgir")
            if args.check:
                print(path)
                continue
            text = compile_ttgir(kernel, signature, constexprs, options, target)
            text = text.replace(os.path.abspath(__file__), "tools/gen_corpus.py")
            with open(path, "w") as f:
                f.write(text)
            count += 1
    if not args.check:
        with open(os.path.join(args.out, "VERSION"), "w") as f:
            f.write(f"triton {triton.__version__}\n")
        print(f"wrote {count} files under {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
