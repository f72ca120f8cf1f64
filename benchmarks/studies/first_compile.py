"""A process's first compile, stock Triton and with the plugin: what importing us costs (CPU).

    python benchmarks/studies/first_compile.py                       # softmax, matmul, attention; 5 rounds
    python benchmarks/studies/first_compile.py --kernels matmul --repeats 9

``benchmarks/compile_time.py`` measures compiles in a warm process: Triton and the plugin are
imported, and one compile of every kernel came before.  A user's script pays more on its first
compile: the imports, Triton's first load of its back end, and here ``import linear_layouts`` and
``enable()``.  Each measurement is a fresh process that imports Triton, then (plugin mode only)
imports linear_layouts and calls ``enable()``, then compiles one bundled kernel's TTIR for sm_90
twice (Triton's cache off, the plugin's cache off).  Stock and plugin processes alternate; each
figure is the median over ``--repeats`` processes:

* ``import + enable()``: the plugin's import and ``enable()``, after ``import triton``;
* ``first compile``: the process's first ``triton.compile`` (Triton's lazy loading included);
* ``second compile``: the same kernel again in that process (cold for the plugin: nothing of
  the first compile is remembered, ``forget_kernels``), what ``compile_time.py`` measures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def child(mode: str, path: str, warps: int) -> int:
    """In a fresh process: (import + enable, first compile, second compile) seconds, as JSON."""
    import time
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget

    start = time.perf_counter()
    if mode == "ours":
        import linear_layouts
        linear_layouts.enable()
    imported = time.perf_counter()
    target = GPUTarget("cuda", 90, 32)
    triton.compile(path, target=target, options={"num_warps": warps})
    first = time.perf_counter()
    if mode == "ours":
        from linear_layouts.passes.drop_in.process_memory import forget_kernels
        forget_kernels()
    triton.compile(path, target=target, options={"num_warps": warps})
    second = time.perf_counter()
    print(json.dumps([imported - start, first - imported, second - first]))
    return 0


def measure(mode: str, path: str, warps: int) -> list:
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, path, str(warps)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2], int(argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", default="softmax,matmul,attention", help="bundled kernels, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per mode and kernel")
    parser.add_argument("--out", default="", help="also write the table here (Markdown)")
    args = parser.parse_args(argv)
    import platform

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from linear_layouts.examples.kernels import KERNELS
    wanted = args.kernels.split(",")
    workdir = tempfile.mkdtemp(prefix="ll_first_compile_")
    command = "python benchmarks/studies/first_compile.py " + " ".join(argv)
    lines = ["# A process's first compile: stock Triton and with the plugin", "",
             f"Produced by `{command.strip()}`: triton {triton.__version__}, python {platform.python_version()}, "
             f"{os.cpu_count()} CPUs; TTIR to sm_90 cubin; median of {args.repeats} fresh processes per mode, modes "
             f"alternating (what each column is: the script's docstring).", "",
             "| kernel | mode | import + enable() | first compile | second compile (cold) |",
             "|---|---|---:|---:|---:|"]
    print("\n".join(lines))
    for kernel in KERNELS:
        name = kernel.name.split()[0]
        if name not in wanted:
            continue
        # the kernel's TTIR, from a stock compile of its source (as compile_time.py's ttir_file)
        source = ASTSource(fn=kernel.function, signature=kernel.signature, constexprs=kernel.constexprs)
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                  options={"num_warps": kernel.num_warps, **kernel.options})
        path = os.path.join(workdir, name + ".ttir")
        with open(path, "w") as f:
            f.write(compiled.asm["ttir"])
        times = {"stock": [], "ours": []}
        for _ in range(args.repeats):
            for mode in times:
                times[mode].append(measure(mode, path, kernel.num_warps))
        for mode, rows in times.items():
            median = [statistics.median(r[i] for r in rows) * 1000 for i in range(3)]
            lines.append(f"| {name} | {mode} | {median[0]:.0f} ms | {median[1]:.0f} ms | {median[2]:.0f} ms |")
            print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
