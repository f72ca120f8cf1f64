"""Gluon kernels of our own, written the way Triton's tutorials are (an expert's layouts, a host
launcher, a pytest test with its parametrizations), for ``gluon_forms_gpu.py``: they go through
the same rule (``gluon_forms.py``) as the tutorials and run where the tutorials are not carried.

* ``copy_kernel``: a 1-D copy, 4 consecutive fp32 per thread (16-byte accesses);
* ``transpose_kernel``: a tile transpose, loaded with a layout coalesced along the input's rows,
  converted, stored with one coalesced along the output's rows (the case where one element per
  thread was measured 5.9x slower).
"""

import pytest
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def copy_kernel(in_ptr, out_ptr, xnumel, XBLOCK: gl.constexpr, layout: gl.constexpr):
    offsets = gl.program_id(0) * XBLOCK + gl.arange(0, XBLOCK, layout=layout)
    mask = offsets < xnumel
    gl.store(out_ptr + offsets, gl.load(in_ptr + offsets, mask=mask), mask=mask)


def copy(input, output, XBLOCK=4096, num_warps=4):
    layout = gl.BlockedLayout([4], [32], [num_warps], [0])
    grid = (triton.cdiv(input.numel(), XBLOCK), )
    copy_kernel[grid](input, output, input.numel(), XBLOCK, layout, num_warps=num_warps)


@pytest.mark.parametrize("xnumel", [1000, 4096 * 3])
def test_copy(xnumel):
    input = torch.randn(xnumel, device="cuda")
    output = torch.empty_like(input)
    copy(input, output)
    torch.testing.assert_close(input, output, atol=0, rtol=0)


@gluon.jit
def transpose_kernel(in_ptr, out_ptr, M, N, BM: gl.constexpr, BN: gl.constexpr):
    # rows of the input are contiguous: lanes along dim 1, 4 elements each
    in_layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    # rows of the output (columns here) are contiguous: lanes along dim 0
    out_layout: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
    pm = gl.program_id(0) * BM
    pn = gl.program_id(1) * BN
    r = pm + gl.arange(0, BM, layout=gl.SliceLayout(1, in_layout))
    c = pn + gl.arange(0, BN, layout=gl.SliceLayout(0, in_layout))
    x = gl.load(in_ptr + r[:, None] * N + c[None, :])
    x = gl.convert_layout(x, out_layout)
    ro = pm + gl.arange(0, BM, layout=gl.SliceLayout(1, out_layout))
    co = pn + gl.arange(0, BN, layout=gl.SliceLayout(0, out_layout))
    gl.store(out_ptr + co[None, :] * M + ro[:, None], x)


def transpose(input, output, BM=64, BN=64):
    M, N = input.shape
    transpose_kernel[(M // BM, N // BN)](input, output, M, N, BM, BN, num_warps=4)


@pytest.mark.parametrize("M, N", [(256, 512)])
def test_transpose(M, N):
    input = torch.randn(M, N, device="cuda")
    output = torch.empty(N, M, device="cuda")
    transpose(input, output)
    torch.testing.assert_close(input.T, output, atol=0, rtol=0)
