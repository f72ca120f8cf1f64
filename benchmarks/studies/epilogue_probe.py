"""Probe: where do matmul fp16 and attention lose ~8% against stock Triton?

Both kernels have one epilogue conversion (mma -> blocked) that we lower through shared memory
with fewer instructions than stock (SASS: 16 STS.64 + 8 LDSM vs 32 STS + 32 LDS), yet run ~8%
slower on an H200.  This times each kernel under pipelines that own more or fewer of its
conversions, side by side in one run:

    python benchmarks/studies/epilogue_probe.py --out benchmarks/results

* stock: no plugin;
* ours: ``ll-lower-conversions`` (everything);
* ours-no-shared: ``ll-lower-conversions{only=noop,rename,shuffle}`` (the epilogue left to Triton);
* legacy: ``ll-lower-conversions{mode=legacy}``.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import sys

from harness.checkout import make_package_importable

VARIANTS = {
    "stock": None,
    "ours": "ll-lower-conversions",
    "ours-no-shared": "ll-lower-conversions{only=noop,rename,shuffle}",
    "legacy": "ll-lower-conversions{mode=legacy}",
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    args = parser.parse_args(argv)
    make_package_importable()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import torch
    import triton
    import triton.testing

    import kernels
    import linear_layouts

    benches = [b for b in kernels._cases() if b.name in ("matmul_fp16", "attention")]
    rows = []
    for bench in benches:
        row = {"kernel": bench.name}
        for name, pipeline in VARIANTS.items():
            if pipeline is not None:
                linear_layouts.enable(pipeline=pipeline)
            try:
                launch, check, _ = bench.setup()
                launch()
                torch.cuda.synchronize()
                row[name] = {"correct": bool(check()),
                             "ms": triton.testing.do_bench(launch, warmup=50, rep=400, return_mode="median")}
            finally:
                linear_layouts.disable()
        rows.append(row)
        print(bench.name, {k: round(v["ms"], 4) for k, v in row.items() if isinstance(v, dict)}, flush=True)
    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "epilogue_probe.json"), "w") as f:
        json.dump({"environment": environment, "variants": VARIANTS, "kernels": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
