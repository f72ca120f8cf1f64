"""Load a vector in the layout its broadcast needs, or load it coalesced and convert: on the GPU.

    python benchmarks/studies/broadcast_load_gpu.py --out benchmarks/results        # H100/H200

A kernel that scales every row of a tile by a vector (``x * w[None, :]``: an RMS norm's
weights, a GEMV's input vector) loads the vector with a 1-D layout of its own and Triton
converts it to the slice of the tile's layout that ``w[None, :]`` needs, on every iteration of
the loop, through shared memory with two barriers.  The alternative is to load the vector in
that slice layout directly: lanes of different warps then load the same addresses (the tile's
rows are split over warps), but no conversion is left.  Stock Triton makes the second kernel
when the vector is loaded as a ``[1, BLOCK]`` tile (``DIRECT=True`` below), so both kernels can
be timed with Triton alone; ``ll-assign-layouts{memory_ops=true}`` may make the second from
the first (mode ``ours``; ``ours_margin0`` takes any modelled gain).  The configurations are fixed here before measuring.

Modes, each in its own process with its own empty Triton cache, alternated for ``--rounds``
rounds: ``convert`` (stock Triton, the 1-D load), ``direct`` (stock Triton, the ``[1, BLOCK]``
load), ``ours`` and ``ours_margin0`` (the 1-D kernel with ``ll-assign-layouts{memory_ops=true}``,
with its default margin and with ``margin=0``, and our lowering).
Per configuration: medians over rounds of ``do_bench`` medians, the conversions left in each
kernel's TTGIR, outputs bit-identical across modes, and ``convert`` against itself (its last
round over its first) as the noise.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import statistics
import sys

# (kernel, rows per program or BN, BLOCK or BK, warps)
CONFIGS = ([("row_scale", r, block, warps) for r, block, warps in
            ((4, 1024, 8), (4, 1024, 4), (2, 2048, 8), (8, 512, 4), (16, 256, 4))]
           + [("gemv", bn, bk, warps) for bn, bk, warps in
              ((64, 128, 4), (32, 256, 4), (128, 64, 8), (16, 512, 4))])
M, N = 8192, 4096          # row_scale: an M x N f16 matrix
GEMV_N, GEMV_K = 8192, 8192
MODES = ("convert", "direct", "ours", "ours_margin0")
PIPELINES = {"ours": "ll-assign-layouts{memory_ops=true},ll-lower-conversions",
             "ours_margin0": "ll-assign-layouts{memory_ops=true margin=0},ll-lower-conversions"}


def child(mode: str, out_path: str) -> None:
    """Compile and time every configuration in one mode; write times, converts and checksums."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from harness.checkout import make_package_importable
    make_package_importable()
    import torch
    import triton
    import triton.language as tl

    import linear_layouts
    from assigned_converts import converts_left, stats_snapshot

    @triton.jit
    def row_scale(X, W, Y, N, R: tl.constexpr, BLOCK: tl.constexpr, DIRECT: tl.constexpr):
        rows = tl.program_id(0) * R + tl.arange(0, R)
        base = rows.to(tl.int64)[:, None] * N
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(X + base + cols[None, :]).to(tl.float32)
            if DIRECT:
                y = x * tl.load(W + cols[None, :]).to(tl.float32)
            else:
                y = x * tl.load(W + cols).to(tl.float32)[None, :]
            tl.store(Y + base + cols[None, :], y.to(tl.float16))

    @triton.jit
    def gemv(W, X, Y, K, BN: tl.constexpr, BK: tl.constexpr, DIRECT: tl.constexpr):
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BN, BK), dtype=tl.float32)
        for k in range(0, K, BK):
            w = tl.load(W + rn[:, None] * K + (k + rk)[None, :]).to(tl.float32)
            if DIRECT:
                acc += w * tl.load(X + (k + rk)[None, :]).to(tl.float32)
            else:
                acc += w * tl.load(X + k + rk).to(tl.float32)[None, :]
        tl.store(Y + rn, tl.sum(acc, axis=1))

    if mode in PIPELINES:
        linear_layouts.enable(pipeline=PIPELINES[mode])
    direct = mode == "direct"
    torch.manual_seed(0)
    results = {}
    for kernel_name, a, b, warps in CONFIGS:
        if kernel_name == "row_scale":
            x = torch.randn(M, N, device="cuda", dtype=torch.float16)
            w = torch.randn(N, device="cuda", dtype=torch.float16)
            y = torch.empty(M, N, device="cuda", dtype=torch.float16)
            launch = lambda: row_scale[(M // a,)](x, w, y, N, R=a, BLOCK=b, DIRECT=direct,  # noqa: E731
                                                 num_warps=warps, num_stages=1)
            name = f"row_scale R={a} BLOCK={b} warps={warps}"
        else:
            wm = torch.randn(GEMV_N, GEMV_K, device="cuda", dtype=torch.float16)
            xv = torch.randn(GEMV_K, device="cuda", dtype=torch.float16)
            y = torch.empty(GEMV_N, device="cuda", dtype=torch.float32)
            launch = lambda: gemv[(GEMV_N // a,)](wm, xv, y, GEMV_K, BN=a, BK=b, DIRECT=direct,  # noqa: E731
                                                 num_warps=warps, num_stages=3)
            name = f"gemv BN={a} BK={b} warps={warps}"
        before = stats_snapshot()
        compiled = launch()
        torch.cuda.synchronize()
        converts, assigned = converts_left(compiled, before)
        bits = y.view(torch.int16 if y.dtype == torch.float16 else torch.int32).to(torch.int64).flatten()
        checksum = bits.sum().item() * 1_000_003 + (bits * torch.arange(bits.numel(), device="cuda")).sum().item()
        ms = triton.testing.do_bench(launch, warmup=25, rep=100)
        results[name] = {"ms": ms, "checksum": checksum, "converts": converts, "assigned": assigned}
    with open(out_path, "w") as f:
        json.dump(results, f)


def summarize(runs: dict) -> list[tuple]:
    """Per configuration: (name, medians per mode, ratios to convert, noise, bit-exact, converts)."""
    rows = []
    for name in runs["convert"][0]:
        ms = {m: statistics.median(r[name]["ms"] for r in runs[m]) for m in MODES}
        exact = len({r[name]["checksum"] for m in MODES for r in runs[m]}) == 1
        noise = runs["convert"][-1][name]["ms"] / runs["convert"][0][name]["ms"]
        converts = {m: runs[m][0][name]["converts"] for m in MODES}
        rows.append((name, ms, {m: ms[m] / ms["convert"] for m in MODES}, noise, exact, converts))
    return rows


def render(rows: list[tuple], rounds: int, device: str, versions: str) -> str:
    geo = lambda xs: statistics.geometric_mean(xs) if xs else float("nan")   # noqa: E731
    lines = ["# A broadcast vector: loaded in its consumer's layout, or loaded coalesced and converted", "",
             f"- {device}; {versions}",
             f"- command: `python benchmarks/studies/broadcast_load_gpu.py --rounds {rounds}`; configurations fixed in "
             "the script before measuring; medians over rounds of `do_bench` medians; each mode in its own process",
             f"- direct/convert geomean **{geo([r[2]['direct'] for r in rows]):.3f}**, "
             f"ours/convert **{geo([r[2]['ours'] for r in rows]):.3f}**, "
             f"ours_margin0/convert **{geo([r[2]['ours_margin0'] for r in rows]):.3f}**",
             f"- noise (convert's last round / its first): largest {max(abs(r[3] - 1) for r in rows):.1%}",
             f"- bit-identical across the modes: **{sum(r[4] for r in rows)}/{len(rows)}**", "",
             "| kernel | convert ms | direct ms | ours ms | ours_margin0 ms | direct/convert | ours/convert | "
             "ours_margin0/convert | convert again | converts (" + "/".join(MODES) + ") | bit-exact |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for name, ms, ratio, noise, exact, converts in rows:
        lines.append(f"| {name} | " + " | ".join(f"{ms[m]:.4f}" for m in MODES) + " | "
                     + " | ".join(f"{ratio[m]:.3f}" for m in MODES[1:]) + f" | {noise:.3f} | "
                     + "/".join(str(converts[m]) for m in MODES) + f" | {'yes' if exact else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    import torch
    import triton
    from harness.mode_rounds import run_mode_rounds
    runs = run_mode_rounds(__file__, MODES, args.rounds, "ll_broadcast_load_")
    rows = summarize(runs)
    text = render(rows, args.rounds, torch.cuda.get_device_name(),
                  f"triton {triton.__version__}, torch {torch.__version__}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "broadcast_load_gpu.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "broadcast_load_gpu.json"), "w") as f:
        json.dump(runs, f)
    print(text)
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
