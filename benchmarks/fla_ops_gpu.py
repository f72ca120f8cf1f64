"""Whole flash-linear-attention ops on the GPU, stock Triton against ``linear_layouts.enable()``:
do the islands the plugin keeps in FLA's kernels pay for themselves in the whole op?

    python benchmarks/fla_ops_gpu.py --fla PATH --out benchmarks/results     # on a GPU machine

``PATH`` holds flash-linear-attention's ``fla`` package (version 0.5.2 at bc3b101, the commit
``test/lit/corpus/fla`` was compiled from: ``git archive bc3b101 fla LICENSE``); its Python
dependencies beyond torch and triton are ``einops`` and ``packaging``.  Each op of ``OPS`` (the
corpus's shapes: 4 heads, 128-wide keys and values, bf16, batch 2, ``--tokens`` a sequence,
32,768 by default: at 4,096 the ops take 1-2.5 ms, mostly launches, and differ by up to 1.6x
between processes) runs
forward and backward, in a process of its own per mode and round, with its own empty Triton
cache: ``stock`` (Triton alone) and ``ours`` (``enable()`` with its defaults), the two modes
interleaved over ``--rounds`` rounds.  Reported per op: the median time of forward + backward
(``triton.testing.do_bench``, median), ours over stock per round and their median, stock over
stock between rounds (the noise), the plugin's islands in the op's kernels (``linear_layouts.stats()``),
and whether ours computes what stock computes (the forward output and every gradient, bit for
bit, else the largest difference).  Each kernel runs FLA's first autotuning configuration
(``_one_config_each``), so that both modes time the same kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

OPS = ("chunk_gla", "chunk_simple_gla", "parallel_attn", "chunk_rwkv6", "chunk_gated_delta_rule")


def _inputs(op: str, tokens: int):
    """The op's function and its inputs (seeded), every float input requiring a gradient."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    B, T, H, D = 2, tokens, 4, 128
    dev, bf16 = "cuda", torch.bfloat16

    def leaf(*shape, dtype=bf16, scale=1.0):
        return (torch.randn(*shape, device=dev, dtype=torch.float32) * scale).to(dtype).requires_grad_()

    q, k, v = leaf(B, T, H, D), leaf(B, T, H, D), leaf(B, T, H, D)
    if op == "chunk_gla":
        from fla.ops.gla import chunk_gla
        g = F.logsigmoid(torch.randn(B, T, H, D, device=dev)).to(bf16).requires_grad_()
        return (lambda: chunk_gla(q, k, v, g)[0]), [q, k, v, g]
    if op == "chunk_simple_gla":
        from fla.ops.simple_gla import chunk_simple_gla
        g = F.logsigmoid(torch.randn(B, T, H, device=dev)).float().requires_grad_()
        return (lambda: chunk_simple_gla(q, k, v, g)[0]), [q, k, v, g]
    if op == "parallel_attn":
        from fla.ops.attn import parallel_attn
        return (lambda: parallel_attn(q, k, v)), [q, k, v]
    if op == "chunk_rwkv6":
        from fla.ops.rwkv6 import chunk_rwkv6
        w = F.logsigmoid(torch.randn(B, T, H, D, device=dev)).to(bf16).requires_grad_()
        u = leaf(H, D)
        return (lambda: chunk_rwkv6(q, k, v, w, u)[0]), [q, k, v, w, u]
    if op == "chunk_gated_delta_rule":
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
        kn = F.normalize(k.detach().float(), dim=-1).to(bf16).requires_grad_()
        g = F.logsigmoid(torch.randn(B, T, H, device=dev)).float().requires_grad_()
        beta = torch.rand(B, T, H, device=dev).to(bf16).requires_grad_()
        return (lambda: chunk_gated_delta_rule(q, kn, v, g, beta)[0]), [q, kn, v, g, beta]
    raise ValueError(f"unknown op {op}")


def _one_config_each() -> None:
    """Make every autotuner keep the first of its configurations: FLA autotunes each kernel over
    up to 18 configurations, a compile each (through its own ``CachedAutotuner``, a subclass of
    Triton's ``Autotuner``), and a process's pick can differ between runs; with one, both modes
    time the same kernels (FLA's first configuration of each)."""
    from triton.runtime import autotuner

    real = autotuner.Autotuner.__init__

    def first_config(self, fn, arg_names, configs, *args, **kwargs):
        real(self, fn, arg_names, list(configs)[:1], *args, **kwargs)
    autotuner.Autotuner.__init__ = first_config


def child(op: str, mode: str, tokens: int, out_file: str) -> None:
    """One op in one mode in this process: time it, save its results, write a JSON line."""
    import torch
    import triton

    _one_config_each()

    if mode == "ours":
        import linear_layouts
        linear_layouts.enable()
    run, leaves = _inputs(op, tokens)
    out = run()
    do = torch.randn_like(out)

    def forward_backward():
        run().backward(do)

    out.backward(do)                                   # compile and autotune, forward and backward
    torch.cuda.synchronize()
    results = [out.detach().float().cpu()] + [x.grad.detach().float().cpu() for x in leaves]
    ms = triton.testing.do_bench(forward_backward, warmup=25, rep=200, grad_to_none=leaves, return_mode="median")
    row = {"op": op, "mode": mode, "ms": ms}
    if mode == "ours":
        import linear_layouts
        stats = linear_layouts.stats()
        row.update(islands=getattr(stats, "islands", None), kernels_with_islands=getattr(stats, "kernels_with_islands", None),
                   conversions=getattr(stats, "conversions", None))
    torch.save(results, out_file + f".{op}.{mode}.pt")
    with open(out_file, "a") as f:
        f.write(json.dumps(row) + "\n")


def _run_child(op, mode, tokens, fla, out_file, timeout) -> str:
    env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix=f"fla_{op}_{mode}_"),
               PYTHONPATH=os.pathsep.join(filter(None, [fla, os.environ.get("PYTHONPATH")])))
    env.pop("LINEAR_LAYOUTS_STOCK_GATE", None)
    command = [sys.executable, os.path.abspath(__file__), "--child", op, mode, "--tokens", str(tokens),
               "--json", out_file]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    if done.returncode:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return " | ".join(lines[-3:])[:400]
    return ""


def compare(out_file: str, op: str) -> str:
    import torch
    stock = torch.load(out_file + f".{op}.stock.pt")
    ours = torch.load(out_file + f".{op}.ours.pt")
    if all(torch.equal(a, b) for a, b in zip(stock, ours)):
        return "bit-exact"
    worst = max(float((a - b).abs().max()) for a, b in zip(stock, ours))
    return f"differs (largest difference {worst:.3g})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fla", default="", help="the folder holding flash-linear-attention's fla package")
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--tokens", type=int, default=32768,
                        help="tokens a sequence (at 4,096 the ops are launch-bound: a few ms, noise 13-61%%)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=240, help="seconds a child may take")
    parser.add_argument("--out", default="")
    parser.add_argument("--child", nargs=2, metavar=("OP", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--json", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child, args.tokens, args.json)
        return 0
    import torch
    import triton

    began = time.time()
    work = tempfile.mkdtemp(prefix="fla_ops_")
    rows, failures, exact = [], {}, {}
    fla = os.path.abspath(args.fla) if args.fla else ""
    for op in args.ops.split(","):
        for round_ in range(args.rounds):
            out_file = os.path.join(work, f"{op}.r{round_}.jsonl")
            for mode in (("stock", "ours") if round_ % 2 == 0 else ("ours", "stock")):
                why = _run_child(op, mode, args.tokens, fla, out_file, args.timeout)
                if why:
                    failures[(op, mode, round_)] = why
                print(f"{op} {mode} round {round_}: {why or 'ok'}", flush=True)
            if os.path.exists(out_file):
                rows += [dict(json.loads(line), round=round_) for line in open(out_file) if line.strip()]
            if round_ == 0 and not any(k[0] == op and k[2] == 0 for k in failures):
                exact[op] = compare(out_file, op)
        if args.out:      # the rows so far, in case a time limit stops the run
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "fla_ops_gpu.jsonl"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
    lines = [f"# flash-linear-attention's ops, whole: stock against `enable()`", "",
             f"Produced by `python benchmarks/fla_ops_gpu.py {' '.join(argv if argv is not None else sys.argv[1:])}` "
             f"on {torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__} "
             f"({time.time() - began:.0f} s).  What it measures: the docstring of `benchmarks/fla_ops_gpu.py`.", "",
             "| op | stock ms (median of rounds) | ours ms | ours / stock, per round | median | stock / stock (noise) | "
             "islands (kernels with one) | ours against stock |", "|---|---:|---:|---|---:|---:|---|---|"]
    ratios = []
    for op in args.ops.split(","):
        mine = {(r["mode"], r["round"]): r for r in rows if r["op"] == op}
        rounds = [k for k in range(args.rounds) if ("stock", k) in mine and ("ours", k) in mine]
        if not rounds:
            lines.append(f"| {op} | - | - | - | - | - | - | failed: {next((w for k, w in failures.items() if k[0] == op), '?')} |")
            continue
        per_round = [mine[("ours", k)]["ms"] / mine[("stock", k)]["ms"] for k in rounds]
        stock_times = [mine[("stock", k)]["ms"] for k in rounds]
        noise = max(stock_times) / min(stock_times) if len(stock_times) > 1 else float("nan")
        ours_row = mine[("ours", rounds[0])]
        ratios.append(statistics.median(per_round))
        lines.append(f"| {op} | {statistics.median(stock_times):.3f} | "
                     f"{statistics.median(mine[('ours', k)]['ms'] for k in rounds):.3f} | "
                     f"{', '.join(f'{x:.3f}' for x in per_round)} | {statistics.median(per_round):.3f} | {noise:.3f} | "
                     f"{ours_row.get('islands')} ({ours_row.get('kernels_with_islands')}) | {exact.get(op, '-')} |")
    if ratios:
        geomean = statistics.geometric_mean(ratios)
        lines += ["", f"Geometric mean of the per-op medians, ours / stock: **{geomean:.3f}** over {len(ratios)} ops."]
    for (op, mode, round_), why in failures.items():
        lines.append(f"* {op} {mode} round {round_}: {why}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "fla_ops_gpu.md"), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
