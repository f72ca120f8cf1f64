"""Plan choice inside real kernels: every verified candidate of a kernel's conversion, and stock
Triton, timed in the kernel itself rather than in a loop of its own.

    python benchmarks/kernel_choice.py --out benchmarks/results      # on a GPU machine

``plan_choice.py`` times a conversion alone, 1024 times in a loop; inside a kernel the same
conversion sits between loads, reductions and arithmetic, and the fastest lowering can differ
(``column_sum``'s accumulator conversion: our shuffles beat stock's shared memory by 31% alone,
and lose 5% inside the kernel).  For every kernel of ``benchmarks/kernels.py`` with
conversions, each distinct conversion is timed in the kernel with each of its verified
candidates and left to Triton, one conversion at a time: ``candidate_for=KEY:K`` (or
``KEY:stock``) moves that conversion only, every other one planned as the plugin does by
default.  Each row carries the kernel's own noise (stock timed twice) in ``noise``.

    python benchmarks/kernel_choice.py --paper template_attention    # the paper kernels' cases too

``--paper KERNELS`` adds every case of those kernels of ``benchmarks/paper_kernels.py`` (each
shape its own kernel, under its own environment: ``DISABLE_MMA_V3`` for the mma v2 gemm); with
``--only`` unset and ``--paper`` given, only the paper cases run.

Writes kernel_choice.json in plan_choice.json's row format (a row per conversion, its candidates'
times and instruction mixes, stock's time), which ``plan_choice.py --write-choices`` reads like
its own: list it last in ``--from``, and its rows decide their conversions by the in-kernel rule
(``plan_choice._kernel_verdict``: all kernels that have the conversion judged together, an
option must gain beyond the noise somewhere and lose nowhere, stock preferred within the
noise), replacing the isolated entry for that conversion.  And kernel_choice.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings

from harness.common import require_package  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def conversions_of(kernel_text: str, name: str):
    """The distinct conversions of a kernel's TTGIR, as Cases (one per (src, dst, shape, bits))."""
    from harness.conversion_cases import converts_in

    distinct = {}
    for _, case in converts_in(kernel_text, name):
        distinct.setdefault(case.key, case)
    return list(distinct.values())


def launched_ttgir(bench) -> str:
    """The TTGIR of the kernel ``bench`` launches (compiled by stock Triton)."""
    import gc

    from linear_layouts.passes.drop_in.hook import forget_jit_kernels
    from triton.runtime.jit import JITFunction

    forget_jit_kernels()
    launch, _, _ = bench.setup()
    launch()
    texts = []
    with warnings.catch_warnings():  # isinstance() on some torch objects warns about deprecations
        warnings.simplefilter("ignore")
        jit_functions = [obj for obj in gc.get_objects() if isinstance(obj, JITFunction)]
    for obj in jit_functions:
        for cache in (getattr(obj, "device_caches", None) or {}).values():
            texts += [kernel.asm["ttgir"] for kernel in cache[0].values()]   # (kernel cache, ...)
    if len(texts) != 1:
        raise RuntimeError(f"{bench.name}: expected one compiled kernel, found {len(texts)}")
    return texts[0]


def time_conversions(bench, found: list, cache_root: str, rounds: int) -> list[dict]:
    """A row per distinct conversion of the kernel (those with a verified candidate): every
    candidate and "left to Triton", timed in the kernel, the other conversions as the plugin
    plans them by default (``candidate_for``)."""
    import torch
    from kernels import round_label, run_mode, run_rounds
    from plan_choice import installed_release, layouts_of, verified_candidates

    from linear_layouts.lowering.choosing.measured_choices import conversion_key

    rows, keys = [], []
    for case in found:
        candidates = verified_candidates(case)
        if not candidates:
            continue
        row = {"case": f"kernel/{bench.name}:{'x'.join(map(str, case.shape))}:i{case.bits}",
               "src": case.src_resolved, "dst": case.dst_resolved, "shape": list(case.shape), "bits": case.bits,
               "num_warps": case.num_warps, "candidates": candidates}
        src, dst = layouts_of(row, installed_release())
        keys.append(conversion_key(src, dst, case.bits, "sm_90"))
        rows.append(row)
    prepared = bench.setup()

    def run_one(mode: str, number: int) -> dict:
        label = round_label(mode, number)
        if mode in ("stock", "stock_again"):
            return run_mode(bench, "stock", cache_root, label=label, prepared=prepared)
        n, rank = mode[1:].split(".")
        return run_mode(bench, "linear", cache_root, label=label, prepared=prepared,
                        pipeline=f"ll-lower-conversions{{candidate_for={keys[int(n)]}:{rank}}}")
    modes = ["stock", "stock_again"]
    for n, row in enumerate(rows):
        modes += [f"c{n}.stock"] + [f"c{n}.{rank}" for rank in range(len(row["candidates"]))]
    results = run_rounds(run_one, modes, rounds)
    stock, again = results["stock"].get("ms"), results["stock_again"].get("ms")
    for n, row in enumerate(rows):
        row["stock"], row["stock_again"], row["kernel_stock"] = results[f"c{n}.stock"], results["stock_again"], \
            results["stock"]
        row["noise"] = abs(again / stock - 1) if stock and again else None
        for rank in range(len(row["candidates"])):
            row["candidates"][rank] = {**row["candidates"][rank], **results[f"c{n}.{rank}"]}
        print(row["case"], row["stock"].get("ms"), [c.get("ms") for c in row["candidates"]], flush=True)
    del prepared
    torch.cuda.empty_cache()
    return rows


def benches(wanted: set, paper: set, parser):
    """(bench, environment variables) for every kernel to measure: the kernel suite's (those
    named in ``wanted``; all of them when neither set names any) and every case of the paper
    kernels named in ``paper`` (each shape a bench of its own, made when it is reached: its
    tensors live on the GPU only while it is measured)."""
    from kernels import _cases
    from paper_kernels import DeviceCase, paper_cases
    import torch

    suite = _cases()
    unknown = wanted - {bench.name for bench in suite}
    if unknown:
        parser.error(f"--only: unknown kernel {sorted(unknown)[0]!r}")
    if wanted or not paper:
        for bench in suite:
            if not wanted or bench.name in wanted:
                yield bench, {}
    if paper:
        cases = paper_cases(torch.cuda.get_device_properties(0).multi_processor_count)
        unknown = paper - {case.kernel for case in cases}
        if unknown:
            parser.error(f"--paper: unknown kernel {sorted(unknown)[0]!r}")
        for case in cases:
            if case.kernel in paper:
                yield DeviceCase(case).bench(), case.environment


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument("--rounds", type=int, default=5, help="times each mode is timed, order rotated (default 5)")
    parser.add_argument("--paper", default="", help="comma-separated kernels of benchmarks/paper_kernels.py "
                                                    "(int4_gemm, mma_v2_gemm, streamk_gemm, layer_norm, template_attention)")
    parser.add_argument("--stem", default="kernel_choice", help="file names of the results (default kernel_choice)")
    args = parser.parse_args(argv)
    require_package()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import torch
    import triton
    from paper_kernels import environment

    wanted = set(filter(None, args.only.split(",")))
    paper = set(filter(None, args.paper.split(",")))
    cache_root = tempfile.mkdtemp(prefix="ll_kernel_choice_")
    rows, skipped = [], []
    for bench, variables in benches(wanted, paper, parser):
        with environment(variables):
            found = conversions_of(launched_ttgir(bench), bench.name)
            if not found:
                skipped.append((bench.name, "0 distinct conversions"))
                continue
            measured = time_conversions(bench, found, cache_root, args.rounds)
        if not measured:
            skipped.append((bench.name, "no verified candidate"))
        rows += measured

    machine = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, args.stem + ".json"), "w") as f:
        json.dump({"environment": machine, "cases": rows, "skipped": skipped}, f, indent=1)
    lines = ["# Plan choice inside real kernels", "",
             f"GPU: {machine['gpu']}; triton {machine['triton']}; torch {machine['torch']}; "
             f"the median over {args.rounds} rounds (modes in a rotated order, one set of tensors for all) of "
             "`triton.testing.do_bench` medians, each kernel compiled with an empty cache.", "",
             f"Produced by `python benchmarks/kernel_choice.py {' '.join(argv)}`.", "",
             "One row per distinct conversion of a kernel, the kernel's other conversions planned as by default; "
             "\"stock\" is that conversion left to Triton, \"stock again\" the whole kernel's stock timed twice.", "",
             "| kernel | stock ms | stock again | candidates (method: ms) | model's pick / fastest | fastest | all correct |",
             "|---|---:|---:|---|---:|---|---|"]
    for row in rows:
        times = [c.get("ms") for c in row["candidates"]]
        stock = row["stock"].get("ms")
        options = [(t, str(k)) for k, t in enumerate(times) if t] + ([(stock, "stock")] if stock else [])
        fastest = min(options)
        correct = all(r.get("correct") for r in [row["stock"], row["stock_again"]] + row["candidates"])
        cands = ", ".join(f"{c['method']}: {c.get('ms', float('nan')):.4f}" for c in row["candidates"])
        kernel_stock = row.get("kernel_stock", row["stock"]).get("ms")
        lines.append(f"| {row['case']} | {stock:.4f} | {row['stock_again'].get('ms', float('nan')) / kernel_stock:.3f} | "
                     f"{cands} | {times[0] / fastest[0]:.3f} | {fastest[1]} | {correct} |")
    lines += ["", "Kernels not measured here: " + "; ".join(f"{n} ({why})" for n, why in skipped)]
    with open(os.path.join(args.out, args.stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
