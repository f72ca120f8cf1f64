"""Kernel suite: real Triton kernels under stock Triton, our layout engine ("linear") and the
legacy baseline, side by side in one run; plus compile time with and without the plugin.

    python benchmarks/kernels.py --out benchmarks/results      # on a GPU machine (H100/H200)

For every kernel and mode: the output is checked against torch (outputs poisoned first), the
runtime is the median of ``triton.testing.do_bench``, and the compile time is the first launch
with an empty Triton cache (compile + one run).  Writes kernels.json, kernels.md and kernels.png
into --out with the GPU name and the Triton and torch versions.

The kernels live in the examples package (``examples/gpu_kernels.py``): written the way
tutorials and libraries write them, nothing in them knows about linear layouts; their
convert_layout ops are whatever Triton's layout passes leave in them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

import triton

from harness.common import geomean, require_package, save_chart  # noqa: E402

require_package()

from linear_layouts.examples.gpu_kernels import (attention_fwd_kernel, column_sum_kernel,  # noqa: E402
                                                 cross_entropy_kernel, embedding_kernel, int4_matmul_kernel,
                                                 layer_norm_bwd_kernel, layer_norm_fwd_kernel, matmul_kernel,
                                                 rms_norm_kernel, row_max_kernel, softmax_kernel, transpose_kernel)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# "stock_again": stock Triton timed a second time, after the other modes: the run-to-run noise
# that any ours / stock ratio must be read against.
MODES = ("stock", "linear", "legacy", "stock_again")


# =========================================================================== cases

@dataclass
class Bench:
    """One kernel run: ``setup()`` makes inputs and returns (launch, check) closures."""

    name: str
    setup: Callable


def _cases():
    import torch

    dev = "cuda"
    torch.manual_seed(0)

    def softmax():
        x = torch.randn(4096, 1024, device=dev)
        y = torch.empty_like(x)
        return (lambda: softmax_kernel[(4096,)](x, y, 1024, 1024, num_warps=4),
                lambda: torch.allclose(y, torch.softmax(x, 1), atol=1e-5), y)

    def layer_norm_fwd():
        x = torch.randn(4096, 2048, device=dev, dtype=torch.float16)
        w, b = torch.randn(2048, device=dev, dtype=torch.float16), torch.randn(2048, device=dev, dtype=torch.float16)
        y = torch.empty_like(x)
        ref = torch.nn.functional.layer_norm(x.float(), (2048,), w.float(), b.float(), 1e-5).half()
        return (lambda: layer_norm_fwd_kernel[(4096,)](x, y, w, b, 2048, 1e-5, 2048, num_warps=8),
                lambda: torch.allclose(y.float(), ref.float(), atol=2e-2, rtol=1e-2), y)

    def layer_norm_bwd():
        x = torch.randn(4096, 2048, device=dev, dtype=torch.float16)
        dy = torch.randn_like(x)
        w = torch.randn(2048, device=dev, dtype=torch.float16)
        xf = x.float().requires_grad_()
        out = torch.nn.functional.layer_norm(xf, (2048,), w.float(), None, 1e-5)
        out.backward(dy.float())
        mean = x.float().mean(1)
        rstd = 1 / torch.sqrt(x.float().var(1, unbiased=False) + 1e-5)
        dx = torch.empty_like(x)
        return (lambda: layer_norm_bwd_kernel[(4096,)](x, dy, w, mean, rstd, dx, 2048, 2048, num_warps=8),
                lambda: torch.allclose(dx.float(), xf.grad, atol=5e-2, rtol=2e-2), dx)

    def rms_norm():
        x = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
        w = torch.randn(4096, device=dev, dtype=torch.float16)
        y = torch.empty_like(x)
        ref = (x.float() * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-6) * w.float()).half()
        return (lambda: rms_norm_kernel[(4096,)](x, y, w, 4096, 1e-6, 4096, num_warps=8),
                lambda: torch.allclose(y.float(), ref.float(), atol=2e-2, rtol=1e-2), y)

    def matmul_fp16():
        M = N = K = 4096
        a = torch.randn(M, K, device=dev, dtype=torch.float16)
        b = torch.randn(K, N, device=dev, dtype=torch.float16)
        c = torch.empty(M, N, device=dev, dtype=torch.float16)
        return (lambda: matmul_kernel[(M // 128, N // 128)](a, b, c, M, N, K, 128, 128, 64, num_warps=8, num_stages=3),
                lambda: torch.allclose(c.float(), (a.float() @ b.float()), atol=1.0, rtol=2e-2), c)

    def matmul_fp8():
        M = N = K = 4096
        a = (torch.randn(M, K, device=dev) * 0.5).to(torch.float8_e4m3fn)
        b = (torch.randn(K, N, device=dev) * 0.5).to(torch.float8_e4m3fn)
        c = torch.empty(M, N, device=dev, dtype=torch.float16)
        ref = a.float() @ b.float()
        return (lambda: matmul_kernel[(M // 128, N // 128)](a, b, c, M, N, K, 128, 128, 128, num_warps=8, num_stages=3),
                lambda: torch.allclose(c.float(), ref, atol=1.0, rtol=2e-2), c)

    def int4_matmul():
        M, N, K = 2048, 4096, 4096
        a = torch.randn(M, K, device=dev, dtype=torch.float16)
        q = torch.randint(0, 16, (K, N), device=dev, dtype=torch.int32)
        packed = (q[0::2] | (q[1::2] << 4)).to(torch.uint8).view(torch.int8)
        scale = (torch.rand(N, device=dev) * 0.02 + 0.01).half()
        c = torch.empty(M, N, device=dev, dtype=torch.float16)
        ref = (a.float() @ (q - 8).float()) * scale.float()
        return (lambda: int4_matmul_kernel[(M // 128, N // 128)](a, packed, scale, c, M, N, K, 128, 128, 64,
                                                                 num_warps=8, num_stages=3),
                lambda: torch.allclose(c.float(), ref, atol=0.5, rtol=2e-2), c)

    def attention():
        H, SEQ, D = 32, 2048, 64
        q = torch.randn(H, SEQ, D, device=dev, dtype=torch.float16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        o = torch.empty_like(q)
        ref = torch.softmax((q.float() @ k.float().transpose(1, 2)) * D ** -0.5, -1) @ v.float()
        return (lambda: attention_fwd_kernel[(SEQ // 128, H)](q, k, v, o, SEQ, D ** -0.5, D, 128, 64, num_warps=8),
                lambda: torch.allclose(o.float(), ref, atol=2e-2, rtol=2e-2), o)

    def cross_entropy():
        logits = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
        target = torch.randint(0, 8192, (8192,), device=dev)
        loss = torch.empty(8192, device=dev)
        ref = torch.nn.functional.cross_entropy(logits.float(), target, reduction="none")
        return (lambda: cross_entropy_kernel[(8192,)](logits, target, loss, 8192, 8192, num_warps=16),
                lambda: torch.allclose(loss, ref, atol=1e-3, rtol=1e-3), loss)

    def transpose():
        x = torch.randn(8192, 8192, device=dev)
        y = torch.empty_like(x)
        return (lambda: transpose_kernel[(8192 // 64, 8192 // 64)](x, y, 8192, 8192, 64, 64, num_warps=4),
                lambda: torch.equal(y, x.t()), y)

    def embedding():
        table = torch.randn(50000, 1024, device=dev, dtype=torch.float16)
        ids = torch.randint(0, 50000, (16384,), device=dev, dtype=torch.int32)
        out = torch.empty(16384, 1024, device=dev, dtype=torch.float16)
        return (lambda: embedding_kernel[(16384 // 16,)](ids, table, out, 1024, 16, num_warps=4),
                lambda: torch.equal(out, table[ids.long()]), out)

    def column_sum():
        x = torch.randn(8192, 8192, device=dev)
        y = torch.empty(8192, device=dev)
        return (lambda: column_sum_kernel[(8192 // 128,)](x, y, 8192, 8192, 64, 128, num_warps=4),
                lambda: torch.allclose(y, x.sum(0), atol=1e-2, rtol=1e-4), y)

    def row_max():
        x = torch.randn(16384, 1024, device=dev)
        y = torch.empty(16384, device=dev)
        return (lambda: row_max_kernel[(16384 // 16,)](x, y, 1024, 16, num_warps=4),
                lambda: torch.equal(y, x.max(1).values), y)

    return [Bench(f.__name__, f) for f in (softmax, layer_norm_fwd, layer_norm_bwd, rms_norm, matmul_fp16,
                                           matmul_fp8, int4_matmul, attention, cross_entropy, transpose,
                                           embedding, column_sum, row_max)]


# =========================================================================== running

def run_mode(bench: Bench, mode: str, cache_root: str, only: str | None = None, label: str | None = None,
             pipeline: str | None = None, prepared: tuple | None = None) -> dict:
    """Compile (empty cache) and time ``bench`` in ``mode`` ("stock", "linear", "legacy";
    ``only``: the lowerings the plugin owns, as in ``enable(only=...)``; ``pipeline``: a whole
    plugin pipeline instead; ``label``: the cache sub-directory, default the mode).

    ``prepared``: ``bench.setup()``'s (launch, check, output), made once and shared by every
    mode of a kernel.  Inputs allocated afresh for each mode land at other addresses, and a
    memory-bound kernel's time depends on where its data sits: on an H100 the same binary timed
    in two modes differed by 4% (softmax, layer norm) until the modes shared their tensors."""
    import torch
    import triton.testing

    import linear_layouts
    from linear_layouts.passes.drop_in import hook

    result = {"ok": False}
    hook.forget_jit_kernels()   # no kernel object kept in memory from an earlier run: compile or load anew
    saved_dir = triton.knobs.cache.dir
    triton.knobs.cache.dir = os.path.join(cache_root, bench.name, label or mode)  # empty: measure compilation
    try:
        if mode in ("linear", "legacy"):
            linear_layouts.enable(mode, only=only, pipeline=pipeline)
        launch, check, output = prepared if prepared is not None else bench.setup()
        islands_before = hook.stats().kernels_with_islands
        output.fill_(float("nan") if output.is_floating_point() else -7)  # poison
        torch.cuda.synchronize()
        start = time.perf_counter()
        launch()
        torch.cuda.synchronize()
        result["first_launch_s"] = time.perf_counter() - start
        # Kernels this compile gave islands: 0 means the plugin handed Triton's own module back
        # (no conversion we lower), so the binary is stock's and any time difference is noise.
        result["kernels_with_islands"] = hook.stats().kernels_with_islands - islands_before
        result["correct"] = bool(check())
        # Every repeat's time: the median is the figure we compare, min and max show the spread
        # (the bars of benchmarks/paper_kernels.py's plot).
        times = triton.testing.do_bench(launch, warmup=25, rep=200, return_mode="all")
        result["ms"] = statistics.median(times)
        result["min_ms"], result["max_ms"] = min(times), max(times)
        if mode in ("linear", "legacy"):
            result["plugin"] = hook.stats().summary()   # since the caller's last hook.reset_stats()
        result["ok"] = True
    except Exception as e:  # the GPU boundary (Triton, CUDA, torch): recorded per kernel, never fatal
        result["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    finally:
        hook.disable()
        triton.knobs.cache.dir = saved_dir
    return result


def run_rounds(run_one: Callable[[str, int], dict], modes, rounds: int) -> dict:
    """``{mode: result}``: every mode run ``rounds`` times (``run_one(mode, round)``), in an
    order rotated each round (stock, linear, legacy, stock_again; then linear, legacy,
    stock_again, stock; ...), so that no mode always runs first or last: a GPU warming up or
    throttling over a run would otherwise favour one mode.  Callers compile every round afresh
    (``round_label``): on an H100 one compile of a memory-bound kernel kept a 4% offset over
    another compile of the same cubin for a whole run, so one compile per mode is one sample,
    not a measurement.  See ``combine_rounds``."""
    modes = tuple(modes)
    runs = {mode: [] for mode in modes}
    for number in range(rounds):
        shift = number % len(modes)
        for mode in modes[shift:] + modes[:shift]:
            runs[mode].append(run_one(mode, number))
    return {mode: combine_rounds(results) for mode, results in runs.items()}


def round_label(mode: str, number: int) -> str:
    """The cache sub-directory of one round of a mode: a fresh compile every round."""
    return f"{mode}.{number}"


def combine_rounds(results: list[dict]) -> dict:
    """One mode's rounds as one result: the first round's record (plugin counts; compile time
    ``first_launch_s``, the median over rounds), ``ms`` the median of the rounds' medians, ``min_ms``/``max_ms`` over every repeat
    of every round, ``round_ms`` each round's median; wrong in any round = wrong, failed in any
    = that failure."""
    failed = [r for r in results if not r.get("ok")]
    if failed:
        return dict(failed[0])
    combined = dict(results[0])
    combined["round_ms"] = [r["ms"] for r in results]
    combined["ms"] = statistics.median(combined["round_ms"])
    combined["min_ms"] = min(r["min_ms"] for r in results)
    combined["max_ms"] = max(r["max_ms"] for r in results)
    combined["correct"] = all(r.get("correct") for r in results)
    combined["first_launch_s"] = statistics.median(r["first_launch_s"] for r in results)
    return combined


def write_report(rows, environment, out, rounds: int = 1):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "kernels.json"), "w") as f:
        json.dump({"environment": environment, "kernels": rows}, f, indent=1)

    def ratio(r, a, b, key="ms"):
        if r[a].get(key) and r[b].get(key):
            return r[a][key] / r[b][key]
        return None
    vs_stock = [ratio(r, "linear", "stock") for r in rows]
    noise = [ratio(r, "stock_again", "stock") for r in rows]
    # Over 1.03 beyond the noise: ours / stock above 1.03 by more than stock's own spread.
    stock_binary = {r["kernel"] for r in rows if r["linear"].get("kernels_with_islands") == 0}
    beyond = [r["kernel"] for r, v, n in zip(rows, vs_stock, noise)
              if v and n and v > 1.03 * max(n, 1 / n) and r["kernel"] not in stock_binary]
    vs_legacy = [ratio(r, "legacy", "linear") for r in rows]
    compile_overhead = [ratio(r, "linear", "stock", "first_launch_s") for r in rows]
    lines = ["# Kernel suite: stock Triton vs linear-layouts vs legacy", "",
             f"GPU: {environment['gpu']}; triton {environment['triton']}; torch {environment['torch']}. "
             f"Runtimes: the median over {rounds} rounds (modes in a rotated order, each mode compiled afresh "
             "every round, one set of tensors for all) of `triton.testing.do_bench` medians; compile time: "
             "the median of the first launches (empty Triton cache: compile + one run).", "",
             f"Produced by `python benchmarks/kernels.py --out benchmarks/results --rounds {rounds}` "
             "(all modes in one run).", "",
             f"* geometric mean time ours / stock: {geomean(vs_stock):.3f} "
             f"(worst {max([v for v in vs_stock if v] or [float('nan')]):.3f})",
             f"* geometric mean speedup ours vs legacy: {geomean(vs_legacy):.3f}x",
             f"* run-to-run noise (stock timed twice): largest deviation "
             f"{max([abs(n - 1) for n in noise if n] or [float('nan')]) * 100:.1f}%, median "
             f"{sorted(abs(n - 1) for n in noise if n)[len([n for n in noise if n]) // 2] * 100 if any(noise) else float('nan'):.1f}%",
             f"* kernels above 1.03 beyond that noise: {', '.join(beyond) if beyond else 'none'}"
             + (f" (not counting {', '.join(sorted(stock_binary))}: no island, so stock's own binary)"
                if stock_binary else ""),
             f"* median compile-time ratio ours / stock: "
             f"{sorted(v for v in compile_overhead if v)[len([v for v in compile_overhead if v]) // 2] if any(compile_overhead) else float('nan'):.3f}",
             "", "| kernel | stock ms | linear ms | legacy ms | linear/stock | stock again/stock | correct (s/l/g) | compile s stock | compile s linear |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r, v, n in zip(rows, vs_stock, noise):
        def ms(m):
            return f"{r[m]['ms']:.4f}" if r[m].get("ms") else "fail"

        def ok(m):
            return "yes" if r[m].get("correct") else ("no" if r[m].get("ok") else "-")
        lines.append(f"| {r['kernel']}{' (stock binary)' if r['kernel'] in stock_binary else ''} | {ms('stock')} | {ms('linear')} | {ms('legacy')} | "
                     f"{(f'{v:.3f}' if v else '-')} | {(f'{n:.3f}' if n else '-')} | "
                     f"{ok('stock')}/{ok('linear')}/{ok('legacy')} | "
                     f"{r['stock'].get('first_launch_s', float('nan')):.2f} | {r['linear'].get('first_launch_s', float('nan')):.2f} |")
    failures = [(r["kernel"], m, r[m]["error"]) for r in rows for m in MODES if not r[m].get("ok")]
    if failures:
        lines += ["", "Failures:", ""] + [f"* {k} [{m}]: {e}" for k, m, e in failures]
    with open(os.path.join(out, "kernels.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 4))
        names = [r["kernel"] for r in rows]
        ax.bar(range(len(rows)), [v or 0 for v in vs_stock])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(rows)), names, rotation=60, fontsize=7)
        ax.set_ylabel("time ours / stock")
        ax.set_title(f"kernel suite ({environment['gpu']}, triton {environment['triton']})")
        fig.tight_layout()
        save_chart(fig, os.path.join(out, "kernels.png"))
    except Exception as e:  # matplotlib (missing, no backend, ...): the plot is a bonus
        print(f"(no plot: {e})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--only", help="comma-separated kernel names")
    parser.add_argument("--rounds", type=int, default=5, help="times each mode is timed, order rotated (default 5)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import torch

    benches = _cases()
    if args.only:
        wanted = set(args.only.split(","))
        benches = [b for b in benches if b.name in wanted]
    cache_root = tempfile.mkdtemp(prefix="ll_kernels_cache_")
    rows = []
    for i, bench in enumerate(benches):
        prepared = bench.setup()      # one set of tensors for every mode (see run_mode)

        def run_one(mode: str, number: int) -> dict:
            return run_mode(bench, mode, cache_root, label=round_label(mode, number), prepared=prepared)
        row = {"kernel": bench.name, **run_rounds(run_one, MODES, args.rounds)}
        rows.append(row)
        del prepared
        torch.cuda.empty_cache()
        print(f"[{i + 1}/{len(benches)}] {bench.name}: " + ", ".join(
            f"{m}={row[m].get('ms', float('nan')):.4f}ms{'' if row[m].get('correct') else '(!)'}" for m in MODES),
            flush=True)
    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                   "python": sys.version.split()[0]}
    write_report(rows, environment, args.out, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
