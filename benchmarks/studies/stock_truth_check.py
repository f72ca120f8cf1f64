"""Where stock Triton's lowering of byte-sized conversions is wrong, against the true value.

    python benchmarks/studies/stock_truth_check.py --element i1 --cases 500 --seed 71 --out benchmarks/results   # GPU
    python benchmarks/studies/stock_truth_check.py --element i8 --cases 20 --dry-run --out /tmp/i8             # CPU

The GPU fuzz (``fuzz_gpu.py``) compares ours with stock bit for bit; for ``i1`` that hides a
wrong stock.  Here random conversions of the fuzz's generator, made ``i1`` or ``i8`` (sm_90), are
compiled with stock Triton and with our island (``ll-lower-conversions``, stock gate off: the
plan the planner picks), launched on inputs of bytes of which half are zero, and each output is
compared with the value it must hold (``x != 0`` for ``i1``, ``x`` for ``i8``).  Cases are grouped
by the path stock's lowering takes (``lowering.choosing.stock_lowering.stock_warp_shuffles``: warp
shuffles, or not) and by ``lowering.choosing.stock_hazards.stock_hazard``'s verdict; ``--shuffles-only``
draws only cases stock lowers by warp shuffles.  Writes ``stock_<element>_check_seed<seed>.md``
to ``--out`` with the GPU and versions; exit 0 iff ours is never wrong.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from dataclasses import replace

from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ.setdefault("LINEAR_LAYOUTS_STRICT_CHECK", "1")
os.environ.setdefault("LINEAR_LAYOUTS_STOCK_GATE", "off")

from fuzz_gpu import compile_all  # noqa: E402


def byte_cases(count: int, seed: int, element: str, shuffles_only: bool):
    """The case stock got wrong in the GPU fuzz (seed 19, case 701: the check must find it), then
    ``count`` fuzz cases for sm_90 with their element type made ``element``."""
    from linear_layouts.tools.conversion_fuzz import case_at, random_case
    rng = random.Random(f"{element}:{seed}")
    cases = [replace(case_at(19, 701, ("sm_90",)), element_type=element)]
    while len(cases) < count + 1:
        case = replace(random_case(rng, "sm_90"), element_type=element)
        if not shuffles_only or stock_path(case) == "shuffles":
            cases.append(case)
    return cases


def stock_path(case) -> str:
    """How stock Triton lowers the case: 'shuffles' (its warp-shuffle path), or 'other'."""
    from linear_layouts.lowering.choosing.stock_lowering import stock_warp_shuffles
    src, dst = _layouts(case)
    return "shuffles" if stock_warp_shuffles(src, dst, 8, "sm_90") is not None else "other"


def _layouts(case):
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    return tuple(tensor_layout_of(text, case.shape) for text in (case.src, case.dst))


def hazard_of(case) -> str:
    """``stock_hazard``'s verdict on the case: 'hazard' (never left to Triton) or 'none'."""
    from linear_layouts.lowering.choosing.stock_hazards import stock_hazard
    from linear_layouts.lowering.target import target_named
    src, dst = _layouts(case)
    bits = 1 if case.element_type == "i1" else 8
    return "hazard" if stock_hazard(src, dst, bits, target_named("sm_90")) else "none"


def check_on_gpu(cases, compiled) -> None:
    """Launch both variants of every compiled case on inputs half zero; record wrong elements."""
    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.barriers.guard_barriers import guard_pruning
    for index, (case, result) in enumerate(zip(cases, compiled)):
        numel = 1
        for s in case.shape:
            numel *= s
        gen = torch.Generator(device="cuda").manual_seed(index)
        values = torch.randint(1, 256, (numel,), dtype=torch.int32, device="cuda", generator=gen)
        keep = torch.randint(0, 2, (numel,), dtype=torch.int32, device="cuda", generator=gen)
        x = (values * keep).to(torch.uint8).view(torch.int8)
        truth = (x != 0).to(torch.int8) if case.element_type == "i1" else x
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
    element = cases[0].element_type
    lines = [f"# Stock Triton's {element} conversions against the true value", ""] + header + [""]
    rows = Counter()
    stock_wrong_cases, ours_wrong = [], 0
    for index, (case, result) in enumerate(zip(cases, compiled)):
        path = f"{stock_path(case)}, {hazard_of(case)}"
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
    lines += ["| stock's path, stock_hazard | cases compiled by stock | stock wrong | ours wrong | "
              "stock failed to compile |", "|---|---|---|---|---|"]
    for path in (f"{p}, {h}" for p in ("shuffles", "other") for h in ("hazard", "none")):
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


def report_again(path: str, out: str) -> int:
    """The report of a GPU run, from its JSON, grouped by today's ``stock_hazard``."""
    from linear_layouts.tools.conversion_fuzz import FuzzCase
    with open(path) as f:
        rows = json.load(f)
    cases = [FuzzCase(tuple(r["shape"]), r["element"], r["src"], r["dst"], r["warps"], "sm_90", "") for r in rows]
    compiled = [{"stock": {"ok": r["stock_wrong"] is not None, "wrong": r["stock_wrong"], "examples": []},
                 "ours": {"ok": r["ours_wrong"] is not None, "wrong": r["ours_wrong"]}} for r in rows]
    name = os.path.basename(path)[:-5] + ".md"
    header = [f"`python benchmarks/studies/stock_truth_check.py --from-json {name[:-3]}.json`: the GPU run's per-case "
              "results, grouped by today's stock_hazard"]
    earlier = os.path.join(out, name)
    if os.path.exists(earlier):   # the run's own command and machine
        with open(earlier) as f:
            header += ["", "The run:"] + [line for line in f.read().splitlines() if line.startswith(("`", "GPU:"))]
    text, ours_wrong = report(cases, compiled, header, dry_run=False)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "w") as f:
        f.write(text)
    print(text)
    return 1 if ours_wrong else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--element", choices=("i1", "i8"), default="i1")
    parser.add_argument("--shuffles-only", action="store_true", help="only cases stock lowers by warp shuffles")
    parser.add_argument("--seed", type=int, default=71)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--json", action="store_true", help="also write every case's result as JSON")
    parser.add_argument("--from-json", metavar="FILE", help="report again from a run's JSON (CPU; the grouping "
                        "by today's stock_hazard)")
    parser.add_argument("--dry-run", action="store_true", help="compile only (no GPU)")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    if args.from_json:
        return report_again(args.from_json, args.out)
    import triton
    start = time.time()
    cases = byte_cases(args.cases, args.seed, args.element, args.shuffles_only)
    compiled = compile_all(cases, 90, args.jobs)
    if not args.dry_run:
        check_on_gpu(cases, compiled)
    gpu = "none (--dry-run: compiled only)"
    if not args.dry_run:
        import torch
        gpu = torch.cuda.get_device_name()
    flags = (" --shuffles-only" if args.shuffles_only else "") + (" --dry-run" if args.dry_run else "")
    header = [f"`python benchmarks/studies/stock_truth_check.py --element {args.element} --cases {args.cases} "
              f"--seed {args.seed}{flags}`", "",
              f"GPU: {gpu}; triton {triton.__version__}; Python {platform.python_version()}; "
              f"{time.time() - start:.0f} s"]
    text, ours_wrong = report(cases, compiled, header, args.dry_run)
    os.makedirs(args.out, exist_ok=True)
    name = f"stock_{args.element}_check_seed{args.seed}{'_shuffles' if args.shuffles_only else ''}.md"
    with open(os.path.join(args.out, name), "w") as f:
        f.write(text)
    if args.json:
        rows = [{"shape": list(c.shape), "src": c.src, "dst": c.dst, "warps": c.num_warps, "element": c.element_type,
                 "stock_wrong": r.get("stock", {}).get("wrong"), "ours_wrong": r.get("ours", {}).get("wrong")}
                for c, r in zip(cases, compiled)]
        with open(os.path.join(args.out, name[:-3] + ".json"), "w") as f:
            json.dump(rows, f)
    print(text)
    return 1 if ours_wrong else 0


if __name__ == "__main__":
    sys.exit(main())
