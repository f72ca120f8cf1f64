"""One case of the GPU fuzz, stock and ours, each checked against the value it must produce.

    python benchmarks/studies/fuzz_case.py --seed 19 --index 701            # on the GPU

``fuzz_gpu.py`` compares ours with stock bit for bit; for ``i1`` the loaded value is
``x != 0`` (one bit kept), which that script does not check.  This one does, for both.
"""
from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import os
import sys
import tempfile

from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()
os.environ.setdefault("LINEAR_LAYOUTS_STOCK_GATE", "off")
os.environ.setdefault("LINEAR_LAYOUTS_STRICT_CHECK", "1")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--index", type=int, required=True)
    args = parser.parse_args(argv)
    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.barriers.guard_barriers import guard_pruning
    from linear_layouts.passes.lower_conversions import lower_text
    from linear_layouts.tools.conversion_fuzz import case_at
    from linear_layouts.tools.testcases import single_convert_ttgir
    case = case_at(args.seed, args.index, ("sm_90",))
    text = single_convert_ttgir(case.shape, case.element_type, case.src, case.dst, case.num_warps, "sm_90", name="k")
    numel = 1
    for s in case.shape:
        numel *= s
    torch.manual_seed(args.index)
    x = torch.randint(-128, 127, (numel,), dtype=torch.int8, device="cuda")
    expected = (x != 0).to(torch.int8) if case.element_type == "i1" else x
    directory = tempfile.mkdtemp()
    for variant in ("stock", "ours"):
        module_text = text if variant == "stock" else lower_text(text, filename="case")[0]
        path = os.path.join(directory, f"{variant}.ttgir")
        with open(path, "w") as f:
            f.write(module_text)
        with guard_pruning():
            kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
        y = torch.full((numel,), -1, dtype=torch.int8, device="cuda")
        kernel[(1, 1, 1)](x, y)
        torch.cuda.synchronize()
        wrong = (y != expected).nonzero().flatten().tolist()
        print(f"{variant}: {len(wrong)} wrong of {numel}; first: {wrong[:8]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
