"""What the emitted-code simulator costs at compile time (CPU only, no GPU needed).

    python benchmarks/studies/verify_cost.py --out benchmarks/results      # under the triton to measure

Compiles every bundled kernel (``examples/kernels.py``) from source to cubin for sm_90, three
ways, side by side in one process: stock Triton, ours with ``verify="plan"`` (the plan verifier
only), and ours with ``verify="emitted"`` (the default: every island executed by
``lowering.sim.island_sim`` before it is used).  Each compile starts from an empty cache
(``TRITON_ALWAYS_COMPILE=1``); the figure is the median of ``--repeats`` runs.  Writes
``verify_cost.md``.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import os
import platform
import statistics
import sys
import time

from harness.checkout import geomean, make_package_importable  # noqa: E402

make_package_importable()
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import linear_layouts
    from linear_layouts.examples.kernels import KERNELS

    target = GPUTarget("cuda", 90, 32)
    modes = {"stock": None, "verify=plan": "plan", "verify=emitted": "emitted"}
    rows = []
    for kernel in KERNELS:
        source = ASTSource(fn=kernel.function, signature=kernel.signature, constexprs=kernel.constexprs)
        options = {"num_warps": kernel.num_warps, **kernel.options}
        times = {m: [] for m in modes}
        for _ in range(args.repeats):
            for mode, verify in modes.items():  # interleaved: drift hits every mode alike
                if verify is not None:
                    linear_layouts.enable(verify=verify)
                start = time.perf_counter()
                triton.compile(source, target=target, options=options)
                times[mode].append(time.perf_counter() - start)
                linear_layouts.disable()
        medians = {m: statistics.median(t) for m, t in times.items()}
        rows.append((kernel.name, medians))
        print(f"{kernel.name}: " + ", ".join(f"{m} {v * 1000:.0f} ms" for m, v in medians.items()), flush=True)

    lines = ["# Compile-time cost of the emitted-code simulator", "",
             f"- triton {triton.__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs, "
             f"sm_90 cubin from source, median of {args.repeats} cold compiles per mode, modes interleaved", "",
             "| kernel | stock | verify=plan | verify=emitted | plan / stock | emitted / stock | emitted / plan |",
             "|---|---|---|---|---|---|---|"]
    for name, m in rows:
        lines.append(f"| {name} | {m['stock'] * 1000:.0f} ms | {m['verify=plan'] * 1000:.0f} ms | "
                     f"{m['verify=emitted'] * 1000:.0f} ms | {m['verify=plan'] / m['stock']:.3f} | "
                     f"{m['verify=emitted'] / m['stock']:.3f} | {m['verify=emitted'] / m['verify=plan']:.3f} |")
    plan_ratio = geomean([m["verify=plan"] / m["stock"] for _, m in rows])
    emitted_ratio = geomean([m["verify=emitted"] / m["stock"] for _, m in rows])
    simulator = geomean([m["verify=emitted"] / m["verify=plan"] for _, m in rows])
    lines += ["", f"Geometric means: verify=plan / stock **{plan_ratio:.3f}**, verify=emitted / stock "
                  f"**{emitted_ratio:.3f}**, the simulator alone (emitted / plan) **{simulator:.3f}**."]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "verify_cost.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(lines[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
