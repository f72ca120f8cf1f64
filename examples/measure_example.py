"""A GPU program of six kernels for ``python -m linear_layouts report --measure`` (the README's
report section): softmax, layer norm, a matmul (K loop), an attention tile (online softmax over
key blocks), a transpose and a column sum (a loop of reductions), launched the ordinary way,
``kernel[grid](...)`` on torch tensors.  It checks its own results against torch, so a wrong
lowering fails the program, not only the timing::

    python -m linear_layouts report --measure -o report/ examples/measure_example.py

Without a GPU it raises at the first launch, as any Triton program does (the report still lists
what compiled; ``examples/report_example.py`` compiles without a GPU).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_kernels import (attention_fwd_kernel, column_sum_kernel, layer_norm_fwd_kernel,  # noqa: E402
                         matmul_kernel, softmax_kernel, transpose_kernel)


def main() -> None:
    torch.manual_seed(0)
    dev = "cuda"
    rows, n = 4096, 1024
    x = torch.randn(rows, n, device=dev, dtype=torch.float32)
    y = torch.empty_like(x)
    softmax_kernel[(rows,)](x, y, N=n, BLOCK=n)
    torch.testing.assert_close(y, torch.softmax(x, dim=1))

    h = torch.randn(rows, n, device=dev, dtype=torch.float16)
    w, b = torch.randn(n, device=dev, dtype=torch.float16), torch.randn(n, device=dev, dtype=torch.float16)
    out = torch.empty_like(h)
    layer_norm_fwd_kernel[(rows,)](h, out, w, b, N=n, eps=1e-5, BLOCK=n)
    torch.testing.assert_close(out, torch.nn.functional.layer_norm(h.float(), (n,), w.float(), b.float(), 1e-5).half(),
                               atol=2e-2, rtol=2e-2)

    m = k = 2048
    a, bm = torch.randn(m, k, device=dev, dtype=torch.float16), torch.randn(k, m, device=dev, dtype=torch.float16)
    c = torch.empty(m, m, device=dev, dtype=torch.float16)
    matmul_kernel[(m // 128, m // 128)](a, bm, c, m, m, k, BM=128, BN=128, BK=64)
    torch.testing.assert_close(c, a @ bm, atol=1.0, rtol=2e-2)

    heads, seq, d = 16, 1024, 64
    q, kk, v = (torch.randn(heads, seq, d, device=dev, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    attention_fwd_kernel[(seq // 128, heads)](q, kk, v, o, seq, d ** -0.5, D=d, BM=128, BN=64)
    expected = torch.softmax((q.float() @ kk.float().transpose(1, 2)) * d ** -0.5, dim=-1) @ v.float()
    torch.testing.assert_close(o.float(), expected, atol=2e-2, rtol=2e-2)

    t = torch.empty(n, rows, device=dev, dtype=torch.float32)
    transpose_kernel[(rows // 64, n // 64)](x, t, rows, n, BM=64, BN=64)
    torch.testing.assert_close(t, x.t())

    sums = torch.empty(n, device=dev, dtype=torch.float32)
    column_sum_kernel[(n // 64,)](x, sums, rows, n, BM=64, BN=64)
    torch.testing.assert_close(sums, x.sum(dim=0), atol=1e-2, rtol=1e-3)
    print("6 kernels launched and checked")


if __name__ == "__main__":
    main()
