"""What the plugin adds to Triton's compile time (CPU only, no GPU needed).

    python benchmarks/compile_time.py --out benchmarks/results      # under the triton to measure
    python benchmarks/compile_time.py corpus --repeats 3 --out benchmarks/results   # Liger-Kernel's 120
    python benchmarks/compile_time.py fuzz --seed 1 --out benchmarks/results        # large random conversions
    python benchmarks/compile_time.py prune --reference OLD_guard_barriers.py       # the guard pruning alone

``corpus`` measures the TTGIR files of a third-party library instead, stock / ours cold / warm
(``harness/compile_time_corpus.py``, whose docstring says how; ``corpus --help`` its options);
``fuzz`` random conversions with 256 to 4,096 registers a thread, each mode in a fresh process
under a time limit (``harness/compile_time_fuzz.py``; ``fuzz --help``); ``prune`` the guard-barrier
pruning alone on the LLVM IR of the FLA and Liger-Kernel corpora (``harness/compile_time_pruning.py``).
Without any of them:

Every bundled kernel (``examples/kernels.py``) plus one without any ``ttg.convert_layout``
(``vector_add``) is compiled from its TTIR to an sm_90 cubin, side by side in one process,
three ways:

* ``stock``: Triton alone;
* ``ours, cold``: ``linear_layouts.enable()`` with nothing remembered
  (``LINEAR_LAYOUTS_CACHE=off``, and every in-process cache keyed by the kernel emptied before
  the compile, ``passes.drop_in.process_memory.forget_kernels``): every conversion planned, emitted and
  simulated, as in the first compile of the kernel;
* ``ours, warm``: the same after one compile of the kernel, as for every autotuning config
  after the first and every recompile: plans and the simulator's verdicts come from
  ``passes.islands.verified_islands`` (its disk directory is a fresh temporary one here).

Each compile starts from an empty Triton cache (``TRITON_ALWAYS_COMPILE=1``), modes are
interleaved so that drift hits every mode alike, and each figure is the median of
``--repeats`` compiles.  Writes ``compile_time_<triton version>.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

from harness.common import geomean, require_package  # noqa: E402

require_package()
from harness import compile_time_corpus  # noqa: E402
from harness.compile_time_corpus import PhaseClock, PluginClock, cpu_seconds  # noqa: E402
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def vector_add(X, Y, Z, N: tl.constexpr):
    """A kernel with no layout conversion: what the plugin must cost nothing on."""
    offsets = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(Z + offsets, tl.load(X + offsets) + tl.load(Y + offsets))


def kernels():
    from linear_layouts.examples.kernels import KERNELS, BundledKernel

    no_convert = BundledKernel("vector_add (no convert)", vector_add, {"X": "*fp32", "Y": "*fp32", "Z": "*fp32"},
                               {"N": 1024}, description="z = x + y")
    return list(KERNELS) + [no_convert]


def ttir_file(kernel, target, directory: str) -> str:
    """The kernel's TTIR (from a stock compile of its source), as a file Triton compiles."""
    from triton.compiler import ASTSource

    source = ASTSource(fn=kernel.function, signature=kernel.signature, constexprs=kernel.constexprs)
    compiled = triton.compile(source, target=target, options={"num_warps": kernel.num_warps, **kernel.options})
    path = os.path.join(directory, kernel.name.split()[0] + ".ttir")
    with open(path, "w") as f:
        f.write(compiled.asm["ttir"])
    return path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["corpus"]:
        return compile_time_corpus.main(argv[1:])
    if argv[:1] == ["fuzz"]:   # random large-register conversions, each mode in a fresh process
        from harness import compile_time_fuzz
        return compile_time_fuzz.main(argv[1:])
    if argv[:1] == ["prune"]:  # prune_guard_barriers alone on real kernels' LLVM IR
        from harness import compile_time_pruning
        return compile_time_pruning.main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    from triton.backends.compiler import GPUTarget

    import linear_layouts
    from linear_layouts.passes.islands import verified_islands
    from linear_layouts.passes.drop_in.process_memory import forget_kernels

    target = GPUTarget("cuda", 90, 32)
    workdir = tempfile.mkdtemp(prefix="ll_compile_time_")
    os.environ[verified_islands.CACHE_DIR_VARIABLE] = os.path.join(workdir, "verified")
    rows = []
    for kernel in kernels():
        path = ttir_file(kernel, target, workdir)
        options = {"num_warps": kernel.num_warps, **kernel.options}

        def compile_once():
            """(wall, CPU, the plugin's own, its phases) seconds of one compile: CPU time is this
            process's and its children's (ptxas) user and system time, steadier than the wall clock
            on a shared host; the plugin's own work is timed inside the compile (compile_time_corpus),
            and so is each of its phases (PhaseClock)."""
            with PluginClock() as plugin, PhaseClock() as phases:
                start, cpu_start = time.perf_counter(), cpu_seconds()
                triton.compile(path, target=target, options=options)
                wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
            return wall, cpu, plugin.seconds, dict(phases.seconds)

        times = {"stock": [], "cold": [], "warm": [], "assign": []}
        linear_layouts.enable()
        compile_once()                              # the warm mode's first compile
        linear_layouts.disable()
        for _ in range(args.repeats):
            times["stock"].append(compile_once())
            os.environ[verified_islands.CACHE_SWITCH] = "off"
            linear_layouts.enable()
            forget_kernels()                        # cold: as the first compile of the kernel
            times["cold"].append(compile_once())
            os.environ[verified_islands.CACHE_SWITCH] = "on"
            times["warm"].append(compile_once())
            os.environ[verified_islands.CACHE_SWITCH] = "off"
            linear_layouts.enable(assign_layouts=True)
            forget_kernels()
            times["assign"].append(compile_once())
            os.environ[verified_islands.CACHE_SWITCH] = "on"
            linear_layouts.disable()
        medians = {m: statistics.median(t[0] for t in runs) for m, runs in times.items()}
        cpu = {m: statistics.median(t[1] for t in runs) for m, runs in times.items()}
        plugin = {m: statistics.median(t[2] for t in runs) for m, runs in times.items()}
        phases = {phase: statistics.median(t[3][phase] for t in times["cold"]) for phase in PhaseClock.PHASES}
        rows.append((kernel.name, medians, cpu, plugin, phases))
        print(f"{kernel.name}: " + ", ".join(f"{m} {v * 1000:.1f} ms" for m, v in medians.items()), flush=True)

    lines = ["# Compile time: stock Triton and the plugin", "",
             f"- triton {triton.__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs; "
             f"TTIR to sm_90 cubin; median of {args.repeats} compiles per mode, modes interleaved, Triton's "
             "cache off (`TRITON_ALWAYS_COMPILE=1`)",
             "- `cold`: nothing remembered (`LINEAR_LAYOUTS_CACHE=off`, in-process caches keyed by the kernel "
             "emptied before each compile: the first compile of a kernel); `warm`: plans and simulator verdicts "
             "remembered from an earlier compile (`passes/islands/verified_islands.py`)",
             f"- command: `python benchmarks/compile_time.py --out {args.out} --repeats {args.repeats}`", "",
             "- `assign`: cold, with `enable(assign_layouts=True)` (`ll-assign-layouts` first: graph, "
             "cost model, integer program, rewrite)", "",
             "| kernel | stock | ours, cold | ours, warm | assign, cold | cold / stock | warm / stock "
             "| assign / stock | CPU: cold / stock | CPU: assign / stock | plugin's own: cold | assign |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, m, c, own, _ in rows:
        lines.append(f"| {name} | {m['stock'] * 1000:.1f} ms | {m['cold'] * 1000:.1f} ms | {m['warm'] * 1000:.1f} ms "
                     f"| {m['assign'] * 1000:.1f} ms | {m['cold'] / m['stock']:.3f} | {m['warm'] / m['stock']:.3f} "
                     f"| {m['assign'] / m['stock']:.3f} | {c['cold'] / c['stock']:.3f} | {c['assign'] / c['stock']:.3f} "
                     f"| {own['cold'] * 1000:.1f} ms | {own['assign'] * 1000:.1f} ms |")

    def overhead(table: int, label: str) -> str:
        ratios = {mode: [r[table][mode] / r[table]["stock"] for r in rows] for mode in ("cold", "warm", "assign")}
        return (f"{label}, median over kernels: cold **{(statistics.median(ratios['cold']) - 1) * 100:+.1f}%**, warm "
                f"**{(statistics.median(ratios['warm']) - 1) * 100:+.1f}%**, assign (cold) "
                f"**{(statistics.median(ratios['assign']) - 1) * 100:+.1f}%** "
                f"(worst {(max(ratios['assign']) - 1) * 100:+.1f}%); geometric means: cold {geomean(ratios['cold']):.3f}, "
                f"warm {geomean(ratios['warm']):.3f}, assign {geomean(ratios['assign']):.3f}.")
    own = {mode: [r[3][mode] / r[1]["stock"] for r in rows] for mode in ("cold", "assign")}
    lines += ["", overhead(1, "Overhead (wall time)"), "", overhead(2, "Overhead (CPU time, ptxas included)"), "",
              f"The plugin's own work (its passes and guard pruning, timed inside the compile: no difference of "
              f"two noisy totals), as a share of stock's compile, median over kernels: cold "
              f"**{statistics.median(own['cold']) * 100:.1f}%**, assign **{statistics.median(own['assign']) * 100:.1f}%** "
              f"(most {max(own['assign']) * 100:.1f}%). vector_add, where the plugin does nothing, shows the "
              f"host's noise: cold / stock {rows[-1][1]['cold'] / rows[-1][1]['stock']:.3f}."]
    # Where the plugin's own time goes, cold.  The fixed part (snapshot, re-parse, guard pruning)
    # is paid by every kernel with an island whatever its conversions: a floor for the overhead
    # of this design (passes in Python that splice LLVM-dialect text into Triton's module).
    names = list(PhaseClock.PHASES)
    fixed = ("snapshot", "re-parse", "prune guards")
    lines += ["", "Where the plugin's own time goes (cold, median ms per phase; `fixed` = snapshot + re-parse + "
              "prune guards, paid by every kernel with an island, as a share of stock's compile):", "",
              "| kernel | " + " | ".join(names) + " | fixed / stock |", "|---|" + "---|" * (len(names) + 1)]
    with_islands = []
    for name, m, _, _, phases in rows:
        share = sum(phases[p] for p in fixed) / m["stock"]
        if phases["re-parse"] > 0:
            with_islands.append(share)
        lines.append(f"| {name} | " + " | ".join(f"{phases[p] * 1000:.1f}" for p in names) + f" | {share * 100:.1f}% |")
    if with_islands:
        lines += ["", f"On the kernels with an island the fixed part alone is {min(with_islands) * 100:.1f}% to "
                  f"{max(with_islands) * 100:.1f}% of stock's compile (median {statistics.median(with_islands) * 100:.1f}%)."]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"compile_time_{triton.__version__}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(lines[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
