"""A Blackwell kernel's own conversions: a tcgen05 matmul for sm_100 with an epilogue
(bias row, row-sum normalization, f16 store), compiled by the installed Triton (3.6 or 3.9) on
the CPU.  Its final TTGIR reads the accumulator from tensor memory (``ttng.tmem_load`` into a
``#ttg.linear`` layout) and converts it for the store; every ``ttg.convert_layout`` of it must be
lowered by us (each island simulated before use, as always), and the kernel with our islands must
compile to a cubin."""

from __future__ import annotations

import os
import re
import tempfile

import pytest

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _matmul(A, B, C, Bias, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    acc = acc + tl.load(Bias + rn)[None, :]
    acc = acc / tl.sum(acc, 1)[:, None]
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def test_tcgen05_matmul_conversions_are_ours_and_compile():
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.lower_conversions import lower_text
    target = GPUTarget("cuda", 100, 32)
    src = triton.compiler.ASTSource(
        _matmul, signature={"A": "*fp16", "B": "*fp16", "C": "*fp16", "Bias": "*fp32", "M": "i32", "N": "i32",
                            "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
        constexprs={"BM": 128, "BN": 128, "BK": 64})
    ttgir = triton.compile(src, target=target, options={"num_warps": 4, "num_stages": 3}).asm["ttgir"]
    assert "ttng.tc_gen5_mma" in ttgir and "ttng.tmem_load" in ttgir
    converts = len(re.findall(r"ttg\.convert_layout", ttgir))
    assert converts >= 2   # 3.6: 2, 3.9: 4 (among them #linear from tmem_load -> the store's blocked)
    lowered, outcomes = lower_text(ttgir, filename="tcgen05_matmul")
    assert len(outcomes) == converts and all(o.lowered for o in outcomes), [o.reason for o in outcomes]
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "ours.ttgir")
        with open(path, "w") as f:
            f.write(lowered)
        compiled = triton.compile(path, target=target)
    assert compiled.asm["cubin"] and "tcgen05.mma" in compiled.asm["ptx"]
