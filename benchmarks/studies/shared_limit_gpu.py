"""What ``MAX_SHARED_ACCESSES_PER_THREAD`` gives up at run time: our island against stock Triton's
lowering, on a GPU, for the conversions the limit hands back to Triton.

    python benchmarks/studies/shared_limit_gpu.py                 # an H100/H200, triton 3.6-3.9, torch
    python benchmarks/studies/shared_limit_gpu.py --seeds 1,2,3,4 # 5 cases (3.9), 16 (3.6)
    python benchmarks/studies/shared_limit_gpu.py --dry-run       # CPU: pick the cases and compile only

The limit (``passes/lower_conversions.py``) leaves to Triton, on NVIDIA from triton 3.9 on, every
conversion whose shared-memory island would make more than that many accesses a thread, because
LLVM's O3 was many times slower on one such island (docs/compile-time.md, the SLP section); it
hands back others of the same size whose O3 is fast, so what it can cost is their run time.  This
measures that cost: the sm_90 cases of ``benchmarks/compile_time.py fuzz`` (seeds ``--seeds``)
over the limit, each kernel (load X, convert, store Y; ``tools.testcases.single_convert_ttgir``)
compiled twice, stock and with our island (``enable()``, stock gate off, the limit lifted), run on
random bits (Y poisoned first; Y must equal X bit for bit) and timed with
``triton.testing.do_bench`` (median), the grid filling the GPU.  Prints one line per case,
ours / stock, and the geometric mean.  Under 3.6 the limit does not apply, so ``ours`` there is
exactly what the plugin runs; under 3.9 it is what it would run without the limit.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

TORCH_TYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8"}
INTEGER_VIEWS = {"f32": "int32", "f16": "int16", "bf16": "int16", "i8": "int8"}
ELEMENT_BITS = {"f32": 32, "f16": 16, "bf16": 16, "i8": 8}


def cases_over_the_limit(seeds: list[int], per_target: int) -> list[dict]:
    """The compile-time fuzz's sm_90 cases whose planned island is over the limit."""
    from harness import compile_time_fuzz as fuzz
    from linear_layouts.lowering.planner import plan_conversion
    from linear_layouts.lowering.plan import SharedAccess
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    from linear_layouts.passes.lower_conversions import MAX_ELEMENTS_PER_THREAD, MAX_SHARED_ACCESSES_PER_THREAD
    chosen = []
    for seed in seeds:
        for index in range(per_target * len(fuzz.TARGETS)):
            case = fuzz.drawn_case(seed, per_target, index)
            if case["target"] != "sm_90" or case["element"] not in TORCH_TYPES:
                continue
            shape = tuple(case["shape"])
            if max(fuzz.registers_per_thread(case[end], shape) for end in ("src", "dst")) > MAX_ELEMENTS_PER_THREAD:
                continue      # left to Triton by the other limit: no island to compare
            plan = plan_conversion(tensor_layout_of(case["src"], shape), tensor_layout_of(case["dst"], shape),
                                   ELEMENT_BITS[case["element"]], target_named("sm_90"))
            accesses = sum(isinstance(op, SharedAccess) for op in plan.shared.ops) \
                if plan and plan.shared is not None else 0
            if accesses > MAX_SHARED_ACCESSES_PER_THREAD:
                chosen.append({**case, "seed": seed, "index": index, "accesses": accesses})
    return chosen


def stock_compiles(case: dict, directory: str) -> str:
    """"" where stock Triton compiles ``case``, else why not.  In a child process: on some of
    these layouts Triton 3.6 aborts (an assertion in ``ensureLayoutNotLargerThan``), which would
    end this run."""
    from harness import compile_time_fuzz as fuzz
    path = os.path.join(directory, f"seed{case['seed']}_case{case['index']}_probe.ttgir")
    with open(path, "w") as f:
        f.write(fuzz.case_text(case))
    code = ("import sys, triton; from triton.backends.compiler import GPUTarget; "
            "triton.compile(sys.argv[1], target=GPUTarget('cuda', 90, 32))")
    child = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "TRITON_ALWAYS_COMPILE": "1"})
    if child.returncode == 0:
        return ""
    lines = [line for line in child.stderr.splitlines() if line.strip()]
    return f"exit status {child.returncode}: {lines[-1] if lines else 'no message'}"


def compile_case(case: dict, mode: str, directory: str):
    """The compiled kernel of ``case``: ``stock``, or ``ours`` (the plugin, stock gate off,
    the shared-access limit lifted)."""
    import triton
    from triton.backends.compiler import GPUTarget

    import linear_layouts
    from linear_layouts.passes import lower_conversions
    from harness import compile_time_fuzz as fuzz
    path = os.path.join(directory, f"seed{case['seed']}_case{case['index']}_{mode}.ttgir")
    with open(path, "w") as f:
        f.write(fuzz.case_text(case))
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    if mode == "stock":
        return triton.compile(path, target=GPUTarget("cuda", 90, 32))
    os.environ["LINEAR_LAYOUTS_STOCK_GATE"] = "off"
    lifted, lower_conversions.SHARED_ACCESS_LIMIT_SINCE = lower_conversions.SHARED_ACCESS_LIMIT_SINCE, (99, 0)
    islands_before = linear_layouts.stats().islands
    try:
        with linear_layouts.enabled():
            kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
    finally:
        lower_conversions.SHARED_ACCESS_LIMIT_SINCE = lifted
        os.environ.pop("LINEAR_LAYOUTS_STOCK_GATE", None)
    if linear_layouts.stats().islands == islands_before:
        raise RuntimeError("the plugin left this conversion to Triton: no island to compare")
    return kernel


def run(case: dict, kernels: dict) -> dict:
    import torch
    from triton.testing import do_bench
    numel = math.prod(case["shape"])
    view = getattr(torch, INTEGER_VIEWS[case["element"]])
    info = torch.iinfo(view)
    bits = torch.randint(info.min, info.max, (numel,), dtype=view, device="cuda")
    x = bits.view(getattr(torch, TORCH_TYPES[case["element"]]))
    grid = torch.cuda.get_device_properties(0).multi_processor_count * 4   # every program converts X into Y
    out = {}
    for mode, kernel in kernels.items():
        y = torch.full_like(bits, -1).view(x.dtype)                        # poisoned
        kernel[(1, 1, 1)](x, y)
        torch.cuda.synchronize()
        exact = torch.equal(y.view(view), bits)
        ms = do_bench(lambda: kernel[(grid, 1, 1)](x, y), warmup=25, rep=100, return_mode="median")
        out[mode] = (ms, exact)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="1,2", help="fuzz seeds (1,2: 3 cases under 3.9's draws, 6 under 3.6's, which add dense layouts)")
    parser.add_argument("--cases", type=int, default=8, help="compile_time_fuzz's --cases (per target)")
    parser.add_argument("--dry-run", action="store_true", help="pick the cases and compile them; no GPU")
    args = parser.parse_args(argv)
    import triton
    cases = cases_over_the_limit([int(s) for s in args.seeds.split(",")], args.cases)
    print(f"triton {triton.__version__}: {len(cases)} fuzz cases over the limit (seeds {args.seeds})", flush=True)
    directory = tempfile.mkdtemp(prefix="ll_shared_limit_")
    ratios, failures = [], 0
    for case in cases:
        name = (f"seed {case['seed']} case {case['index']}: {case['kind']} {case['element']} "
                f"{'x'.join(map(str, case['shape']))}, {case['num_warps']} warps, {case['accesses']} accesses")
        kernels = {}
        why = stock_compiles(case, directory)
        if why:
            print(f"{name}: stock cannot compile it ({why}): nothing to compare", flush=True)
            continue
        for mode in ("stock", "ours"):
            try:
                kernels[mode] = compile_case(case, mode, directory)
            except Exception as error:  # the Triton boundary: one case's failure is reported, not fatal
                print(f"{name}: {mode} failed to compile: {type(error).__name__}: {str(error).splitlines()[:1]}",
                      flush=True)
                failures += mode == "ours"    # where stock cannot compile it, there is nothing to compare
                break
        if len(kernels) < 2:
            continue
        if args.dry_run:
            print(f"{name}: compiled", flush=True)
            continue
        times = run(case, kernels)
        (stock_ms, stock_exact), (ours_ms, ours_exact) = times["stock"], times["ours"]
        failures += not (stock_exact and ours_exact)
        ratios.append(ours_ms / stock_ms)
        print(f"{name}: stock {stock_ms * 1000:.1f} us{'' if stock_exact else ' (NOT EXACT)'}, "
              f"ours {ours_ms * 1000:.1f} us{'' if ours_exact else ' (NOT EXACT)'}, ours / stock {ratios[-1]:.3f}",
              flush=True)
    if ratios:
        print(f"geometric mean ours / stock over {len(ratios)} cases: "
              f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
