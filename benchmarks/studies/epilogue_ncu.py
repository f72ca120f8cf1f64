"""Launch matmul fp16 once with stock Triton and once with our lowering, for Nsight Compute:

    ncu --kernel-name matmul_kernel --metrics <...> python benchmarks/studies/epilogue_ncu.py

(first profiled launch: stock; second: ours).  See benchmarks/studies/epilogue_probe.py for why.
"""

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import os

from harness.checkout import make_package_importable

make_package_importable()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import torch  # noqa: E402

import kernels  # noqa: E402
import linear_layouts  # noqa: E402

bench = next(b for b in kernels._cases() if b.name == "matmul_fp16")
launch, check, _ = bench.setup()
launch()
torch.cuda.synchronize()
with linear_layouts.enabled():
    launch, check, _ = bench.setup()
    launch()
    torch.cuda.synchronize()
    assert check()
