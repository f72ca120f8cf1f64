"""Conversion microbenchmarks, in the paper's style: one `ttg.convert_layout` run 1024 times in
a loop inside one kernel, under stock Triton, our lowering ("linear") and the legacy baseline.

    python benchmarks/conversions.py --out benchmarks/results          # on a GPU machine
    python benchmarks/conversions.py --dry-run                          # CPU: build and compile only

Cases come from real kernels: every `ttg.convert_layout` of the sm_90 and sm_80 TTGIR corpus
(test/lit/corpus, compiled from matmul, softmax, attention, reductions, transposes, gather,
int4 unpacking, ...), plus element-width variants of each (8, 16, 32, 64 bits), so that every
case is a (source layout, destination layout, shape, element width, warps) seen in practice.

The kernel (generated TTGIR; the layouts are the case's, verbatim):

    x  = load(X) in a plain blocked layout L, staged through shared memory into the source layout A
    acc = 0 (destination layout B)
    for i in range(1024):
        acc += convert_layout(x + i, A -> B)       # the timed conversion
    store(Y + pid * size, acc staged through shared memory back into L)

The staging (``ttg.local_alloc`` of the value, ``ttg.local_load`` in the other layout) is
lowered by Triton in every mode (the plugin owns local loads only when told to), so the modes
differ in the timed conversion alone.

Data movement does not depend on the element's type, only on its width, so each case moves
integers of the element's width (i8 for fp8, i16 for fp16/bf16, i32 for fp32, i64 for f64/i64)
and the result is exact: acc = 1024 * x + 523776 (mod 2^bits), checked bit for bit against
torch for every mode (outputs are poisoned first).  Each program writes its own slice of Y;
the grid fills the GPU (4 programs per SM).  Times are medians of triton.testing.do_bench.

Writes conversions.json, conversions.md and conversions.png into --out, with the GPU name and
the Triton and torch versions.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

from harness import skeleton  # noqa: E402
from harness.common import geomean, require_package, save_chart  # noqa: E402
from harness.conversion_cases import ITERATIONS, _wrap, corpus_cases, kernel_ttgir  # noqa: E402


MODES = ("stock", "linear", "legacy")


def compile_case(args):
    """Compile one case under one mode (in a worker process); returns (key, mode, result)."""
    index, case, mode, directory = args
    require_package()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget

    path = os.path.join(directory, f"case{index}_{mode}.ttgir")
    with open(path, "w") as f:
        f.write(kernel_ttgir(case))
    result = {"ok": False}
    start = time.perf_counter()
    try:
        import linear_layouts
        from linear_layouts.passes.drop_in import hook

        if mode != "stock":
            linear_layouts.enable(mode)
        try:
            kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
        finally:
            hook.disable()
        from linear_layouts.tools.fuzz.testcases import instruction_classes

        result = {"ok": True, "compile_s": time.perf_counter() - start, "shared_bytes": kernel.metadata.shared,
                  **instruction_classes(kernel.asm["ptx"])}
    except Exception as e:  # the Triton boundary (any exception type): reported per case, never fatal
        result = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]}
    return index, mode, result


# --------------------------------------------------------------------------- running

def run_on_gpu(cases, compiled, directory):
    import torch
    from triton.testing import do_bench

    device = torch.cuda.current_device()
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    grid = sms * 4
    torch_type = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
    results = []
    for index, case in enumerate(cases):
        size = 1
        for s in case.shape:
            size *= s
        dtype = torch_type[case.bits]
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2 ** 30)), min(info.max, 2 ** 30), (size,), dtype=dtype, device="cuda")
        expected = (x.to(torch.int64) * ITERATIONS + sum(range(ITERATIONS)))
        expected = _wrap(expected, case.bits).to(dtype)
        row = {"case": case.name, "src": case.src_resolved, "dst": case.dst_resolved,
               "shape": list(case.shape), "bits": case.bits, "num_warps": case.num_warps}
        for mode in MODES:
            result = dict(compiled.get((index, mode), {"ok": False, "error": "not compiled"}))
            if result.get("ok"):
                try:
                    kernel = load_kernel(index, mode, directory)
                    y = torch.full((grid * size,), -7, dtype=dtype, device="cuda")  # poison
                    kernel[(grid, 1, 1)](x, y)
                    torch.cuda.synchronize()
                    result["exact"] = bool(torch.equal(y.view(grid, size), expected.expand(grid, size)))
                    result["ms"] = do_bench(lambda: kernel[(grid, 1, 1)](x, y), warmup=25, rep=100,
                                            return_mode="median")
                except Exception as e:  # the GPU boundary (Triton, CUDA): reported per case
                    result.update(ok=False, error=f"{type(e).__name__}: {e}"[:300])
            row[mode] = result
        results.append(row)
        print(f"[{index + 1}/{len(cases)}] {case.name}: " + ", ".join(
            f"{m}={row[m].get('ms', float('nan')):.4f}ms{'' if row[m].get('exact', False) else '(!)'}"
            for m in MODES if row[m].get("ok")), flush=True)
    return results, grid


def load_kernel(case_index, mode, directory):
    """The compiled kernel of one case and mode.  The worker processes compiled it already, so
    this is a hit in Triton's on-disk cache (the plugin's own cache entry for plugin modes)."""
    import linear_layouts
    import triton
    from linear_layouts.passes.drop_in import hook
    from triton.backends.compiler import GPUTarget

    path = os.path.join(directory, f"case{case_index}_{mode}.ttgir")
    if mode != "stock":
        linear_layouts.enable(mode)
    try:
        return triton.compile(path, target=GPUTarget("cuda", 90, 32))
    finally:
        hook.disable()


# --------------------------------------------------------------------------- reporting

def write_report(results, out, environment):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "conversions.json"), "w") as f:
        json.dump({"environment": environment, "iterations": ITERATIONS, "cases": results}, f, indent=1)
    ratios_stock = [r["linear"]["ms"] / r["stock"]["ms"] for r in results
                    if r["linear"].get("ms") and r["stock"].get("ms")]
    ratios_legacy = [r["legacy"]["ms"] / r["linear"]["ms"] for r in results
                     if r["linear"].get("ms") and r["legacy"].get("ms")]
    lines = ["# Conversion microbenchmarks: stock Triton vs linear-layouts vs legacy", "",
             f"GPU: {environment.get('gpu')}; triton {environment.get('triton')}; torch {environment.get('torch')}; "
             f"{ITERATIONS} conversions per kernel, medians of `triton.testing.do_bench`.", "",
             "Produced by `python benchmarks/conversions.py --out benchmarks/results` (all modes side by side in one run).", "",
             f"* cases: {len(results)}; bit-exact in every mode run: "
             f"{all(r[m].get('exact', True) for r in results for m in MODES if r[m].get('ok'))}",
             f"* geometric mean time ours / stock: {geomean(ratios_stock):.3f} "
             f"(max {max(ratios_stock, default=float('nan')):.3f})",
             f"* geometric mean speedup ours vs legacy: {geomean(ratios_legacy):.3f}x", "",
             "| case | shape | bits | warps | stock ms | linear ms | legacy ms | linear/stock | exact | stock shfl/ld/st | linear shfl/ld/st |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"]
    for r in results:
        def ms(m):
            return f"{r[m]['ms']:.4f}" if r[m].get("ms") else ("fail" if not r[m].get("ok") else "-")

        def mix(m):
            return f"{r[m].get('shfl', '-')}/{r[m].get('ld_shared', '-')}/{r[m].get('st_shared', '-')}"
        ratio = (f"{r['linear']['ms'] / r['stock']['ms']:.3f}" if r["linear"].get("ms") and r["stock"].get("ms") else "-")
        exact = all(r[m].get("exact", True) for m in MODES if r[m].get("ok"))
        lines.append(f"| {r['case']} | {'x'.join(map(str, r['shape']))} | {r['bits']} | {r['num_warps']} | "
                     f"{ms('stock')} | {ms('linear')} | {ms('legacy')} | {ratio} | {'yes' if exact else 'NO'} | "
                     f"{mix('stock')} | {mix('linear')} |")
    failures = [(r["case"], m, r[m].get("error")) for r in results for m in MODES if not r[m].get("ok")]
    if failures:
        lines += ["", "Failures (compile or run):", ""]
        lines += [f"* {c} [{m}]: {e}" for c, m, e in failures]
    with open(os.path.join(out, "conversions.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [r["case"].split("/")[-1] for r in results if r["linear"].get("ms") and r["stock"].get("ms")]
        fig, ax = plt.subplots(figsize=(max(8, len(names) * 0.3), 4))
        ax.bar(range(len(ratios_stock)), ratios_stock)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=6)
        ax.set_ylabel("time ours / stock")
        ax.set_title(f"convert_layout x{ITERATIONS}: ours / stock Triton ({environment.get('gpu')})")
        fig.tight_layout()
        save_chart(fig, os.path.join(out, "conversions.png"))
    except Exception as e:  # matplotlib (missing, no backend, ...): pictures are a bonus
        print(f"(no plot: {e})")
    print("\n".join(lines[:9]))


def options(parser) -> None:
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases")
    parser.add_argument("--match", default="", help="only the cases whose name contains this text")


def cases(args, env) -> list:
    chosen = corpus_cases()
    if args.match:
        chosen = [c for c in chosen if args.match in c.name]
    if args.limit:
        chosen = chosen[:args.limit]
    print(f"{len(chosen)} cases", flush=True)
    return chosen


def run(args, env, cases) -> dict:
    """Compile every case in every mode (worker processes); then, unless ``--dry-run``, time them."""
    directory = tempfile.mkdtemp(prefix="ll_bench_")
    jobs = [(i, c, m, directory) for i, c in enumerate(cases) for m in MODES]
    compiled = {}
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for index, mode, result in pool.map(compile_case, jobs):
            compiled[(index, mode)] = result
    print(f"compiled {len(jobs)} kernels in {time.perf_counter() - start:.1f}s", flush=True)
    for mode in MODES:
        bad = [(cases[i].name, r.get("error")) for (i, m), r in compiled.items() if m == mode and not r["ok"]]
        print(f"  {mode}: {len(cases) - len(bad)} compiled, {len(bad)} failed" + (f" (first: {bad[0]})" if bad else ""))
    if args.dry_run:
        return {"compiled": compiled}
    results, grid = run_on_gpu(cases, compiled, directory)
    return {"compiled": compiled, "results": results, "grid": grid}


def summary(args, env, cases, ran) -> int:
    """The dry run passes when stock compiles every case; the GPU run writes the reports."""
    if args.dry_run:
        return 0 if all(r["ok"] for (i, m), r in ran["compiled"].items() if m == "stock") else 1
    import torch
    import triton

    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                   "python": sys.version.split()[0], "grid": ran["grid"]}
    write_report(ran["results"], args.out, environment)
    return 0


def main(argv=None) -> int:
    return skeleton.main("conversions", __doc__, argv, options=options, cases=cases, run=run, summary=summary,
                         dry_run="build and compile only (no GPU needed)", jobs=True)


if __name__ == "__main__":
    sys.exit(main())
