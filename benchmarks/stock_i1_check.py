"""Where stock Triton's lowering of i1 conversions is wrong, checked against the true value.

    python benchmarks/stock_i1_check.py --cases 300 --seed 71 --out benchmarks/results   # on the GPU
    python benchmarks/stock_i1_check.py --cases 20 --dry-run --out /tmp/i1                # CPU: compile only

The GPU fuzz (``fuzz_gpu.py``) compares ours with stock bit for bit; for ``i1`` that hides a
wrong stock.  Here random conversions of the fuzz's generator, made ``i1`` (sm_90), are compiled
with stock Triton and with our island (``ll-lower-conversions``, stock gate off: the plan the
planner picks), launched on inputs of bytes of which half are zero, and each output is compared
with ``x != 0``, the value an ``i1`` load keeps.  Cases are grouped by the path stock's lowering
takes (``lowering.stock_lowering.stock_warp_shuffles``: warp shuffles, or not), which is the
class ``lowering.stock_hazards`` never leaves to Triton for ``i1``.  Writes
``stock_i1_check.md`` to ``--out`` with the GPU and versions; exit 0 iff ours is never wrong.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections import Counter
from dataclasses import replace

from checkout import make_package_importable  # noqa: E402

make_package_importable()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ.setdefault("LINEAR_LAYOUTS_STRICT_CHECK", "1")
os.environ.setdefault("LINEAR_LAYOUTS_STOCK_GATE", "off")

from fuzz_gpu import compile_all  # noqa: E402


def i1_cases(count: int, seed: int):
    """The case stock got wrong in the GPU fuzz (seed 19, case 701: the check must find it), then
    ``count`` fuzz cases for sm_90 with their element type made ``i1``."""
    from linear_layouts.tools.conversion_fuzz import case_at, random_case
    rng = random.Random(f"i1:{seed}")
    return [case_at(19, 701, ("sm_90",))] + [replace(random_case(rng, "sm_90"), element_type="i1")
                                             for _ in range(count)]


def stock_path(case) -> str:
    """How stock Triton lowers the case: 'shuffles' (its warp-shuffle path), or 'other'."""
    from linear_layouts.lowering.stock_lowering import stock_warp_shuffles
    from linear_layouts.passes.layouts import tensor_layout_of
    src, dst = (tensor_layout_of(text, case.shape) for text in (case.src, case.dst))
    return "shuffles" if stock_warp_shuffles(src, dst, 1, "sm_90") is not None else "other"


def check_on_gpu(cases, compiled) -> None:
    """Launch both variants of every compiled case on inputs half zero; record wrong elements."""
    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.guard_barriers import guard_pruning
    for index, (case, result) in enumerate(zip(cases, compiled)):
        numel = 1
        for s in case.shape:
            numel *= s
        gen = torch.Generator(device="cuda").manual_seed(index)
        values = torch.randint(1, 256, (numel,), dtype=torch.int32, device="cuda", generator=gen)
        keep = torch.randint(0, 2, (numel,), dtype=torch.int32, device="cuda", generator=gen)
        x = (values * keep).to(torch.uint8).view(torch.int8)
        truth = (x != 0).to(torch.int8)
        for variant in ("stock", "ours"):
            if not result.get(variant, {}).get("ok"):
                continue
            with guard_pruning():
                kernel = triton.compile(result[variant]["path"], target=GPUTarget("cuda", 90, 32))
            y = torch.full((numel,), -1, dtype=torch.int8, device="cuda")
            kernel[(1, 1, 1)](x, y)
            torch.cuda.synchronize()
            wrong = (y != truth).nonzero().flatten()
            result[variant]["wrong"] = int(wrong.numel())
            result[variant]["examples"] = [(int(i), int(truth[i]), int(y[i])) for i in wrong[:4].tolist()]


def report(cases, compiled, header: list, dry_run: bool) -> tuple[str, int]:
    lines = ["# Stock Triton's i1 conversions against the true value", ""] + header + [""]
    rows = Counter()
    stock_wrong_cases, ours_wrong = [], 0
    for index, (case, result) in enumerate(zip(cases, compiled)):
        path = stock_path(case)
        if not result.get("stock", {}).get("ok"):
            rows[(path, "stock failed to compile")] += 1
            continue
        rows[(path, "compiled")] += 1
        if dry_run:
            continue
        if result["stock"].get("wrong"):
            rows[(path, "stock wrong")] += 1
            stock_wrong_cases.append((index, case, path, result))
        if result.get("ours", {}).get("wrong"):
            rows[(path, "ours wrong")] += 1
            ours_wrong += 1
    lines += ["| stock's path | cases compiled by stock | stock wrong | ours wrong | stock failed to compile |",
              "|---|---|---|---|---|"]
    for path in ("shuffles", "other"):
        lines.append(f"| {path} | {rows[(path, 'compiled')]} | {rows[(path, 'stock wrong')]} | "
                     f"{rows[(path, 'ours wrong')]} | {rows[(path, 'stock failed to compile')]} |")
    if stock_wrong_cases:
        lines += ["", "## Cases stock got wrong (index: shape, warps, path; first (element, true, got))", ""]
        for index, case, path, result in stock_wrong_cases:
            lines.append(f"- {index}: {case.shape}, {case.num_warps} warps, {path}; {result['stock']['wrong']} wrong, "
                         f"e.g. {result['stock']['examples']}")
            lines.append(f"  - src `{case.src}`")
            lines.append(f"  - dst `{case.dst}`")
    return "\n".join(lines) + "\n", ours_wrong


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=71)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--dry-run", action="store_true", help="compile only (no GPU)")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    import triton
    start = time.time()
    cases = i1_cases(args.cases, args.seed)
    compiled = compile_all(cases, 90, args.jobs)
    if not args.dry_run:
        check_on_gpu(cases, compiled)
    gpu = "none (--dry-run: compiled only)"
    if not args.dry_run:
        import torch
        gpu = torch.cuda.get_device_name()
    header = [f"`python benchmarks/stock_i1_check.py --cases {args.cases} --seed {args.seed}"
              f"{' --dry-run' if args.dry_run else ''}`", "",
              f"GPU: {gpu}; triton {triton.__version__}; Python {platform.python_version()}; "
              f"{time.time() - start:.0f} s"]
    text, ours_wrong = report(cases, compiled, header, args.dry_run)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "stock_i1_check.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if ours_wrong else 0


if __name__ == "__main__":
    sys.exit(main())
