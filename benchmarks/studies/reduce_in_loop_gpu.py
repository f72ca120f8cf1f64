"""Does the cost model's convert-before-reduce trade hold where DRAM is not the bound?

    python benchmarks/studies/reduce_in_loop_gpu.py --dry              # no GPU: what the model predicts
    python benchmarks/studies/reduce_in_loop_gpu.py --out benchmarks/results   # H100/H200

``ll-assign-layouts`` may convert a reduction's input to a layout whose warps do not split the
reduced axis (no cross-warp stage) when its model says the conversion costs less than the
cross-warp stage it saves.  On row reductions that read their rows from DRAM once
(``assign_reduce_gpu.py``) and on argmax (``assign_gpu.py``) the GPU did not show the modelled
gain: those kernels wait on memory, and the DRAM floor now keeps them.  This benchmark asks the
question the floor cannot answer: where memory is *not* the bound, is the trade the model makes
right?  Every program of the kernel below reads the same four tiles (at most 64 KiB: they stay in
L2), one per iteration of a loop of ``ITERS`` iterations, reduces each along its rows and
accumulates; the conversion, if the assignment adds one, runs inside the loop.

The configurations are fixed here, before measuring: row maxima (f32), i32 row sums and argmax
(f32 values with their indices, a two-operand reduction with a compare-and-select combiner);
``BLOCK_M`` rows of ``N`` per tile; 4 and 8 warps.  Modes, each in a process of its own with an
empty Triton cache, alternated for ``--rounds`` rounds: ``stock``; ``ours``
(``enable(assign_layouts=True)``, the default: DRAM floor on) and ``nofloor``
(``ll-assign-layouts{dram_floor=false}``: the model's trade alone).  Per configuration: the model's
predicted ratio (its cost after / before; 1 where it keeps stock's layouts), the measured
ratio, outputs bit-identical to stock's (every operation is order-free), and stock against
itself as the noise.  The report's verdict is about the model: does a predicted gain show up?
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import statistics
import sys

OPS = ("max_f32", "sum_i32", "argmax_f32")
CONFIGS = [(op, block_m, n, warps)
           for op in OPS
           for block_m in (2, 8)
           for n in (512, 2048)
           for warps in (4, 8)]
# A second set, fixed before it was measured (2026-11-25), after the model was fitted to the
# first (redux, the cross-warp stage, the busiest pipe): the same reductions on other shapes.
# ``--set heldout`` measures it, with a fourth mode: the summed cost instead of the busiest pipe.
HELDOUT_CONFIGS = [(op, block_m, n, warps)
                   for op in OPS
                   for block_m in (4, 16)
                   for n in (256, 1024)
                   for warps in (4, 8)]
# A third set, fixed before it was measured (2026-11-25, after the solver minimised the busiest
# pipe and the DRAM floor learned L2's rate for grid-shared tiles): tiles of 4096 elements in
# shapes neither set has, on 2 and 16 warps, which neither set has.  ``--set heldout2``.
HELDOUT2_CONFIGS = [(op, block_m, n, warps)
                    for op in OPS
                    for block_m, n in ((32, 128), (64, 64), (128, 32))
                    for warps in (2, 16)]
SETS = {"first": CONFIGS, "heldout": HELDOUT_CONFIGS, "heldout2": HELDOUT2_CONFIGS}
ITERS = 1024          # loop iterations per program (the loop, not the launch, is what is timed)
TILES = 4             # distinct tiles the loop cycles through (all L2-resident)
PROGRAMS = 132 * 8    # eight programs per H100 SM
MODES = ("stock", "ours", "nofloor")
HELDOUT_MODES = MODES + ("nopipes",)
NO_FLOOR_PIPELINE = "ll-assign-layouts{dram_floor=false},ll-lower-conversions"
NO_PIPES_PIPELINE = "ll-assign-layouts{dram_floor=false pipes=false},ll-lower-conversions"
SET_VARIABLE = "LL_REDUCE_IN_LOOP_SET"      # tells the children which set to run


def current_set() -> str:
    return os.environ.get(SET_VARIABLE, "first")


def name_of(op: str, block_m: int, n: int, warps: int) -> str:
    return f"{op} BLOCK_M={block_m} N={n} warps={warps}"


def loop_reduce_kernel():
    """The kernel every configuration runs (Triton imported only when asked for)."""
    import triton
    import triton.language as tl

    @triton.jit
    def loop_reduce(X, Y, ITERS: tl.constexpr, N: tl.constexpr, BLOCK_M: tl.constexpr, OP: tl.constexpr):
        rows = tl.arange(0, BLOCK_M)
        cols = tl.arange(0, N)
        if OP == 1:
            acc = tl.zeros((BLOCK_M,), tl.int32)
        else:
            acc = tl.full((BLOCK_M,), -float("inf"), tl.float32)
        best_i = tl.zeros((BLOCK_M,), tl.int32)
        for i in range(ITERS):
            tile = X + (i % 4) * BLOCK_M * N
            x = tl.load(tile + rows[:, None] * N + cols[None, :])
            if OP == 0:
                acc = tl.maximum(acc, tl.max(x, axis=1))
            elif OP == 1:
                acc += tl.sum(x, axis=1)
            else:
                v, j = tl.max(x, axis=1, return_indices=True, return_indices_tie_break_left=True)
                better = v > acc
                best_i = tl.where(better, j + i, best_i)
                acc = tl.where(better, v, acc)
        out = Y + tl.program_id(0) * BLOCK_M + rows
        if OP == 2:
            tl.store(out, best_i)
        else:
            tl.store(out, acc)

    return loop_reduce


def _source(kernel, op: str, block_m: int, n: int):
    import triton
    pointer = "*i32" if op == "sum_i32" else "*fp32"
    return triton.compiler.ASTSource(
        fn=kernel, signature={"X": pointer, "Y": "*i32" if op == "argmax_f32" else pointer, "ITERS": "constexpr",
                              "N": "constexpr", "BLOCK_M": "constexpr", "OP": "constexpr"},
        constexprs={"ITERS": ITERS, "N": n, "BLOCK_M": block_m, "OP": OPS.index(op)},
        # what a launch specializes to: torch's allocations are 16-byte aligned
        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})


def predictions() -> dict[str, dict]:
    """No GPU: compile every configuration for sm_90 with the installed Triton and read what
    ``ll-assign-layouts`` models, with the DRAM floor and without.  The pointers are declared
    16-byte aligned, as a launch specializes them (without it the loads are not vectorized and
    the model sees another kernel); the GPU run models the TTGIR of the kernel it launched.)"""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from harness.checkout import make_package_importable
    make_package_importable()
    import triton
    from triton.backends.compiler import GPUTarget
    kernel = loop_reduce_kernel()
    out = {}
    for op, block_m, n, warps in SETS[current_set()]:
        compiled = triton.compile(_source(kernel, op, block_m, n), target=GPUTarget("cuda", 90, 32),
                                  options={"num_warps": warps})
        out[name_of(op, block_m, n, warps)] = model_of(compiled.asm["ttgir"])
    return out


def model_of(ttgir: str) -> dict:
    """What ``ll-assign-layouts`` models for one kernel's stock TTGIR, with the DRAM floor
    (``ours``) and without (``nofloor``)."""
    from linear_layouts.passes.assign.assign_layouts import assign_module
    from linear_layouts.passes.ir.snapshot import parse_module

    row = {}
    for label, floor, pipes in (("ours", True, True), ("nofloor", False, True), ("nopipes", False, False)):
        f = assign_module(parse_module(ttgir), "sm_90", apply=False, dram_floor=floor, pipes=pipes).functions[0]
        row[label] = {"accepted": f.accepted, "cost_before": f.cost_before, "cost_after": f.cost_after,
                      "time_before": f.time_before, "time_after": f.time_after, "bound": f.bound_before,
                      "dram_floor": f.dram_floor, "reason": f.reason, "converts": [f.converts_before, f.converts_after]}
    return row


def predicted_ratio(model: dict) -> float:
    """The model's time after / before (its cost ratio in runs that predate modelled time), 1
    where it keeps stock."""
    if not model["accepted"]:
        return 1.0
    if model.get("time_before"):
        return model["time_after"] / model["time_before"]
    return model["cost_after"] / model["cost_before"] if model["cost_before"] else 1.0


def dry(out_dir: str) -> int:
    import triton
    model = predictions()
    lines = ["# Reductions in a loop, L2-resident tiles: what `ll-assign-layouts` predicts (no GPU)", "",
             f"triton {triton.__version__}, sm_90; `python benchmarks/studies/reduce_in_loop_gpu.py --dry`.", "",
             "| kernel | default: changed | no floor: changed | modelled cost before -> after | predicted ratio | DRAM floor |",
             "|---|---|---|---|---:|---:|"]
    for name, row in model.items():
        nf = row["nofloor"]
        lines.append(f"| {name} | {'yes' if row['ours']['accepted'] else 'no'} | {'yes' if nf['accepted'] else 'no'} | "
                     f"{nf['cost_before']:.1f} -> {nf['cost_after']:.1f} | {predicted_ratio(nf):.3f} | "
                     f"{row['ours']['dram_floor']:.1f} |")
    os.makedirs(out_dir, exist_ok=True)
    name = "reduce_in_loop_dry.md" if current_set() == "first" else f"reduce_in_loop_{current_set()}_dry.md"
    with open(os.path.join(out_dir, name), "w") as f:
        f.write("\n".join(lines) + "\n")
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

    kernel = loop_reduce_kernel()
    if mode == "ours":
        linear_layouts.enable(assign_layouts=True)
    elif mode == "nofloor":
        linear_layouts.enable(pipeline=NO_FLOOR_PIPELINE)
    elif mode == "nopipes":
        linear_layouts.enable(pipeline=NO_PIPES_PIPELINE)
    torch.manual_seed(0)
    results = {}
    for op, block_m, n, warps in SETS[current_set()]:
        if op == "sum_i32":
            x = torch.randint(-1000, 1000, (TILES * block_m, n), device="cuda", dtype=torch.int32)
        else:
            x = torch.randn(TILES * block_m, n, device="cuda", dtype=torch.float32)
        y = torch.empty(PROGRAMS * block_m, device="cuda", dtype=torch.int32 if op != "max_f32" else torch.float32)
        launch = lambda: kernel[(PROGRAMS,)](x, y, ITERS=ITERS, N=n, BLOCK_M=block_m, OP=OPS.index(op),  # noqa: E731
                                             num_warps=warps)
        before = stats_snapshot()
        compiled = launch()
        torch.cuda.synchronize()
        converts, assigned = converts_left(compiled, before)
        model = model_of(compiled.asm["ttgir"]) if mode == "stock" else None
        bits = y.view(torch.int32).to(torch.int64)
        checksum = bits.sum().item() * 1_000_003 + (bits * torch.arange(bits.numel(), device="cuda")).sum().item()
        ms = triton.testing.do_bench(launch, warmup=25, rep=100)
        results[name_of(op, block_m, n, warps)] = {"ms": ms, "checksum": checksum, "converts": converts,
                                                  "assigned": assigned, "model": model}
    with open(out_path, "w") as f:
        json.dump(results, f)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dry", action="store_true", help="no GPU: what the model predicts for each configuration")
    parser.add_argument("--set", choices=sorted(SETS), default="first",
                        help="the configurations: the first 24, or the 24 fixed after the model was fitted to them")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.child:
        os.environ[SET_VARIABLE] = args.set
    if args.dry:
        return dry(args.out)
    if args.child:
        child(*args.child)
        return 0
    import torch
    import triton
    from harness.mode_rounds import run_mode_rounds
    modes = MODES if args.set == "first" else HELDOUT_MODES
    runs = run_mode_rounds(__file__, modes, args.rounds, "ll_reduce_in_loop_")
    rows = []
    for name in runs["stock"][0]:
        stock = statistics.median(r[name]["ms"] for r in runs["stock"])
        row = {"name": name, "stock": stock, "noise": runs["stock"][-1][name]["ms"] / runs["stock"][0][name]["ms"],
               "model": runs["stock"][0][name]["model"]}   # the model on the TTGIR of the kernel launched
        for mode in modes[1:]:
            row[mode] = statistics.median(r[name]["ms"] for r in runs[mode]) / stock
            row[mode + "_changed"] = runs[mode][0][name]["assigned"]
            row[mode + "_converts"] = runs[mode][0][name]["converts"]
        row["stock_converts"] = runs["stock"][0][name]["converts"]
        row["exact"] = all(r[name]["checksum"] == runs["stock"][0][name]["checksum"]
                           for mode in modes for r in runs[mode])
        rows.append(row)
    with open(os.path.join(args.out, stem_of(args.set) + ".json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "triton": triton.__version__, "rows": rows}, f, indent=1)
    write_report(rows, torch.cuda.get_device_name(), triton.__version__, torch.__version__, args)
    return 0 if all(r["exact"] for r in rows) else 1


def stem_of(config_set: str) -> str:
    return "reduce_in_loop_gpu" if config_set == "first" else f"reduce_in_loop_{config_set}_gpu"


def write_report(rows: list[dict], device: str, triton_version: str, torch_version: str, args) -> None:
    geo = lambda xs: statistics.geometric_mean(xs) if xs else float("nan")   # noqa: E731
    noise = max(abs(r["noise"] - 1) for r in rows)
    changed = [r for r in rows if r["nofloor_changed"]]
    predicted = [predicted_ratio(r["model"]["nofloor"]) for r in changed]
    measured = [r["nofloor"] for r in changed]
    agree = sum((p < 1) == (m < 1 - noise) for p, m in zip(predicted, measured))
    lines = ["# Reductions in a loop, L2-resident tiles: the model's convert-before-reduce trade on the GPU", "",
             f"- {device}; triton {triton_version}, torch {torch_version}",
             f"- command: `python benchmarks/studies/reduce_in_loop_gpu.py --rounds {args.rounds}"
             f"{'' if getattr(args, 'set', 'first') == 'first' else ' --set ' + args.set}`; {PROGRAMS} programs, "
             f"{ITERS} iterations over {TILES} tiles; configurations fixed in the script before measuring; medians over "
             "rounds of `do_bench` medians",
             f"- noise (stock's last round / its first): largest {noise:.1%}",
             f"- without the DRAM floor the assignment changed **{len(changed)}** of {len(rows)}: predicted ratio "
             f"geomean {geo(predicted):.3f}, measured **{geo(measured):.3f}**; a predicted gain measured beyond the "
             f"noise in {agree} of {len(changed)}",
             f"- with the floor (the default) it changed {sum(r['ours_changed'] for r in rows)}"
             + (f"; measured geomean over those {geo([r['ours'] for r in rows if r['ours_changed']]):.3f}"
                if any(r['ours_changed'] for r in rows) else ""),
             *([f"- with the summed cost instead of the busiest pipe (no floor) it changed "
                f"{sum(r['nopipes_changed'] for r in rows)}: predicted geomean "
                f"{geo([predicted_ratio(r['model']['nopipes']) for r in rows if r['nopipes_changed']]):.3f}, "
                f"measured **{geo([r['nopipes'] for r in rows if r['nopipes_changed']]):.3f}**"]
               if "nopipes" in rows[0] else []),
             f"- bit-identical to stock: **{sum(r['exact'] for r in rows)}/{len(rows)}**", "",
             "| kernel | stock ms | no floor: predicted | no floor: measured | default: measured | stock again | "
             "bit-exact | converts stock/no floor/default |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        p = predicted_ratio(r["model"]["nofloor"]) if r["nofloor_changed"] else 1.0
        lines.append(f"| {r['name']} | {r['stock']:.4f} | {p:.3f} | {r['nofloor']:.3f} | {r['ours']:.3f} | "
                     f"{r['noise']:.3f} | {'yes' if r['exact'] else 'NO'} | {r['stock_converts']}/"
                     f"{r['nofloor_converts']}/{r['ours_converts']} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem_of(getattr(args, "set", "first")) + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
