"""Convert before a reduction, on the GPU: row reductions whose warps split the reduced axis.

    python benchmarks/studies/assign_reduce_gpu.py --out benchmarks/results        # H100/H200

``ll-assign-layouts`` offers a reduction the layout with its warps moved off the reduced axis
(``passes/assign/layout_seeds.py``) and converts the input to it where the model says the cross-warp
stage costs more than the conversion.  This measures that choice.  The configurations are fixed
here, before measuring: row maxima (f32, order-free) and i32 row sums of an M x N matrix,
``BLOCK_M`` rows per program, the whole row in one tile (``BLOCK_N = N``), 4 and 8 warps; with
few rows per program Triton's layout puts the warps along the row, so every row ends in a
cross-warp stage.

Modes, each in its own process with its own empty Triton cache, alternated for ``--rounds``
rounds (the order rotating each round, `benchmarks/harness/mode_rounds.py`): ``stock`` (Triton alone) and ``ours``
(``enable(assign_layouts=True)``).  Per configuration: the median of ``do_bench`` medians, the
outputs bit-identical to stock's, whether the assignment changed the kernel (conversions in its
TTGIR), and stock against itself (its first round against its last) as the noise.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import statistics
import sys

CONFIGS = [(op, block_m, n, warps)
           for op in ("max_f32", "sum_i32")
           for block_m in (2, 8)
           for n in (1024, 4096)
           for warps in (4, 8)]
ROWS = 16384


def row_reduce_kernel():
    """The kernel every configuration runs (Triton imported only when asked for)."""
    import triton
    import triton.language as tl

    @triton.jit
    def row_reduce(X, Y, N: tl.constexpr, BLOCK_M: tl.constexpr, IS_MAX: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, N)
        x = tl.load(X + rows[:, None] * N + cols[None, :])
        if IS_MAX:
            r = tl.max(x, axis=1)
        else:
            r = tl.sum(x, axis=1)
        tl.store(Y + rows, r)

    return row_reduce


def dry(out_dir: str) -> int:
    """No GPU: compile every configuration for sm_90 with the installed Triton and say what the
    default assignment would do to stock's TTGIR (``assign_reduce_dry.md``)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from harness.checkout import make_package_importable
    make_package_importable()
    import triton
    from triton.backends.compiler import GPUTarget
    from linear_layouts.passes.assign.assign_layouts import assign_module
    from linear_layouts.passes.ir.snapshot import parse_module

    kernel = row_reduce_kernel()
    lines = ["# Row reductions: what the default `ll-assign-layouts` does to stock's TTGIR (no GPU)", "",
             f"triton {triton.__version__}, sm_90; `python benchmarks/studies/assign_reduce_gpu.py --dry`; the configurations "
             "of `assign_reduce_gpu.md`.", "",
             "| kernel | changed | modelled cost before -> after | DRAM floor | why kept |", "|---|---|---|---:|---|"]
    changed = 0
    for op, block_m, n, warps in CONFIGS:
        pointer = "*fp32" if op == "max_f32" else "*i32"
        source = triton.compiler.ASTSource(
            fn=kernel, signature={"X": pointer, "Y": pointer, "N": "constexpr", "BLOCK_M": "constexpr",
                                  "IS_MAX": "constexpr"},
            constexprs={"N": n, "BLOCK_M": block_m, "IS_MAX": op == "max_f32"})
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        f = assign_module(parse_module(compiled.asm["ttgir"]), "sm_90", apply=False).functions[0]
        changed += f.accepted
        after = f"{f.cost_after:.1f}" if f.accepted else "(kept)"
        lines.append(f"| {op} BLOCK_M={block_m} N={n} warps={warps} | {'yes' if f.accepted else 'no'} | "
                     f"{f.cost_before:.1f} -> {after} | {f.dram_floor:.1f} | {f.reason} |")
    lines[2:2] = [f"The default assignment changes **{changed}** of {len(CONFIGS)}.", ""]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "assign_reduce_dry.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def child(mode: str, out_path: str) -> None:
    """Compile and time every configuration in one mode; write times and output checksums."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from harness.checkout import make_package_importable
    make_package_importable()
    import torch
    import triton

    import linear_layouts
    from assigned_converts import converts_left, stats_snapshot

    row_reduce = row_reduce_kernel()
    if mode == "ours":
        linear_layouts.enable(assign_layouts=True)
    torch.manual_seed(0)
    results = {}
    for op, block_m, n, warps in CONFIGS:
        if op == "max_f32":
            x = torch.randn(ROWS, n, device="cuda", dtype=torch.float32)
            y = torch.empty(ROWS, device="cuda", dtype=torch.float32)
        else:
            x = torch.randint(-1000, 1000, (ROWS, n), device="cuda", dtype=torch.int32)
            y = torch.empty(ROWS, device="cuda", dtype=torch.int32)
        grid = (ROWS // block_m,)
        before = stats_snapshot()
        kernel = row_reduce[grid](x, y, N=n, BLOCK_M=block_m, IS_MAX=(op == "max_f32"), num_warps=warps)
        torch.cuda.synchronize()
        converts, assigned = converts_left(kernel, before)
        checksum = y.view(torch.int32).to(torch.int64).sum().item() * 1_000_003 + \
            (y.view(torch.int32).to(torch.int64) * torch.arange(ROWS, device="cuda")).sum().item()
        ms = triton.testing.do_bench(lambda: row_reduce[grid](x, y, N=n, BLOCK_M=block_m, IS_MAX=(op == "max_f32"),
                                                              num_warps=warps), warmup=25, rep=100)
        results[f"{op} BLOCK_M={block_m} N={n} warps={warps}"] = {"ms": ms, "checksum": checksum, "converts": converts,
                                                                "assigned": assigned}
    with open(out_path, "w") as f:
        json.dump(results, f)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dry", action="store_true", help="no GPU: what the assignment does to each configuration")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dry:
        return dry(args.out)
    if args.child:
        child(*args.child)
        return 0
    import torch
    import triton
    from harness.mode_rounds import run_mode_rounds
    runs = run_mode_rounds(__file__, ("stock", "ours"), args.rounds, "ll_assign_reduce_")
    rows, ratios, noise = [], [], []
    for name in runs["stock"][0]:
        stock = statistics.median(r[name]["ms"] for r in runs["stock"])
        ours = statistics.median(r[name]["ms"] for r in runs["ours"])
        exact = all(r[name]["checksum"] == runs["stock"][0][name]["checksum"] for r in runs["stock"] + runs["ours"])
        again = runs["stock"][-1][name]["ms"] / runs["stock"][0][name]["ms"]
        changed = runs["ours"][0][name].get("assigned", False)
        ratios.append(ours / stock)
        noise.append(abs(again - 1))
        rows.append((name, stock, ours, ours / stock, again, exact, runs["stock"][0][name]["converts"],
                     runs["ours"][0][name]["converts"], changed))
    changed = [r for r in rows if r[8]]
    geo = lambda xs: (statistics.geometric_mean(xs) if xs else float("nan"))   # noqa: E731
    lines = ["# Convert before a reduction: row reductions on the GPU, stock vs ll-assign-layouts", "",
             f"- {torch.cuda.get_device_name()}; triton {triton.__version__}, torch {torch.__version__}",
             f"- command: `python benchmarks/studies/assign_reduce_gpu.py --rounds {args.rounds}`; {ROWS} rows; "
             "configurations fixed in the script before measuring; medians over rounds of `do_bench` medians",
             f"- the assignment changed **{len(changed)}** of {len(rows)} kernels; ours/stock geomean over those: "
             f"**{geo([r[3] for r in changed]):.3f}** (best {min((r[3] for r in changed), default=float('nan')):.3f}, "
             f"worst {max((r[3] for r in changed), default=float('nan')):.3f}); over all: {geo(ratios):.3f}",
             f"- noise (stock's last round / its first): median {statistics.median(noise):.1%}, largest {max(noise):.1%}",
             f"- bit-identical to stock: **{sum(r[5] for r in rows)}/{len(rows)}**", "",
             "| kernel | stock ms | ours ms | ours/stock | stock again | bit-exact | converts stock/ours |",
             "|---|---:|---:|---:|---:|---|---|"]
    for name, stock, ours, ratio, again, exact, c_stock, c_ours, _ in rows:
        lines.append(f"| {name} | {stock:.4f} | {ours:.4f} | {ratio:.3f} | {again:.3f} | {'yes' if exact else 'NO'} | "
                     f"{c_stock}/{c_ours} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "assign_reduce_gpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r[5] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
