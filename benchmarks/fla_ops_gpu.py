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
(``harness.op_rounds.one_config_each``; ``--warps N``: the first with N warps), so that both modes time the same
kernels.

    python benchmarks/fla_ops_gpu.py --fla PATH --ops chunk_gla --per-kernel --keep-ir DIR

``--per-kernel`` also times every kernel of the op on its own (``torch.profiler``, the GPU time a
forward + backward spends in each kernel, over ``--profile-steps`` steps) and writes a table of
kernels, stock against ours: which kernels an op's difference comes from.  ``--keep-ir DIR``
archives each mode's compiled kernels (TTGIR, LLVM IR, PTX) of the first round as
``DIR/<op>.<mode>.tar.gz``, to read offline which conversions a kernel has and how each mode lowered
them.  ``--text`` adds the mode ``text``: ``enable()`` with every island spliced as text, none
built in Triton's module (``LINEAR_LAYOUTS_IN_PLACE=0``, ``passes/drop_in/in_place.py``; the default
builds one-round shared-memory islands in place).  ``--in-place`` adds the mode ``in_place``,
``LINEAR_LAYOUTS_IN_PLACE=1`` (the default's route; the runs made while the text route was the
default used it).
``--variants NAME=KEY,KEY;NAME=...`` adds modes: ``enable()`` with those conversions
(``lowering.choosing.measured_choices.conversion_key``, 24 hex digits) left to Triton
(``candidate_for=KEY:stock``), or given our candidate ``RANK`` where written ``KEY:RANK``, every
other conversion as the default plans it.  Kernels are
independent, so a variant that moves one conversion in each of several kernels answers for each
of those kernels at once in the per-kernel table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from harness.op_rounds import mode_options, modes_of, rows_writer
from harness.op_rounds import (ROUTES, closing, enable_route, one_config_each, op_table, publish, run_child, run_rounds,
                               time_forward_backward)

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


def _enable_mode(mode: str, variants: dict) -> None:
    """``ours``: ``enable()`` with its defaults; ``in_place`` / ``text``: the same with the
    shared-memory islands built in Triton's module / every island spliced as text
    (``passes.drop_in.in_place``); a variant's name: ``enable()`` with that variant's conversions left to
    Triton; ``stock``: nothing."""
    if enable_route(mode):
        return
    import linear_layouts
    from linear_layouts.tools.report.final_code import lower_pipeline
    linear_layouts.enable(pipeline=lower_pipeline(",".join(key if ":" in key else f"{key}:stock"
                                                           for key in variants[mode])))


def parse_variants(text: str) -> dict:
    """``"a=KEY,KEY;b=KEY"`` -> ``{"a": [KEY, KEY], "b": [KEY]}``."""
    variants = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, keys = part.partition("=")
        if not name or name in ("stock", "ours", *ROUTES) or not keys:
            raise SystemExit(f"--variants: {part!r} is not NAME=KEY,KEY (NAME other than stock and ours)")
        variants[name.strip()] = [k.strip() for k in keys.split(",") if k.strip()]
    return variants


def kernel_times(step, leaves, steps: int) -> dict:
    """GPU microseconds each kernel takes in one call of ``step`` (mean over ``steps`` calls),
    by kernel name, from ``torch.profiler``'s CUDA activity."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            for x in leaves:
                x.grad = None
            step()
        torch.cuda.synchronize()
    times = {}
    for event in prof.key_averages():
        total = getattr(event, "self_device_time_total", None)
        if total is None:
            total = getattr(event, "self_cuda_time_total", 0)
        if total:
            times[event.key] = times.get(event.key, 0.0) + total / steps
    return times


def child(op: str, mode: str, tokens: int, out_file: str, variants: dict, profile_steps: int,
          warps: int = 0) -> None:
    """One op in one mode in this process: time it, save its results, write a JSON line."""
    one_config_each(warps)
    _enable_mode(mode, variants)
    run, leaves = _inputs(op, tokens)
    extra = (lambda step: {"kernels": kernel_times(step, leaves, profile_steps)}) if profile_steps else None
    time_forward_backward(op, mode, run, leaves, out_file, extra=extra)


def _run_child(op, mode, tokens, fla, out_file, timeout, child_args=(), keep_ir="") -> str:
    command = [sys.executable, os.path.abspath(__file__), "--child", op, mode, "--tokens", str(tokens),
               "--json", out_file, *child_args]
    pythonpath = os.pathsep.join(filter(None, [fla, os.environ.get("PYTHONPATH")]))
    keep = (lambda cache: _keep_ir(cache, os.path.join(keep_ir, f"{op}.{mode}"))) if keep_ir else None
    return run_child(command, timeout, f"fla_{op}_{mode}_", {"PYTHONPATH": pythonpath}, keep)


def _keep_ir(cache: str, into: str) -> None:
    """Write the compiled kernels' TTGIR, LLVM IR and PTX under ``cache`` (Triton's cache of one
    child, the plugin's sub-directory included) into the archive ``into.tar.gz``, one file."""
    import tarfile

    os.makedirs(os.path.dirname(into) or ".", exist_ok=True)
    with tarfile.open(into + ".tar.gz", "w:gz") as archive:
        for folder, _, names in os.walk(cache):
            for name in sorted(names):
                if name.endswith((".ttgir", ".llir", ".ptx")):
                    archive.add(os.path.join(folder, name), arcname=name)


def kernel_table(op: str, rows: list, modes: list) -> list[str]:
    """Markdown: each kernel's GPU time a step under each mode (median over rounds), and each
    mode's time over stock's; kernels by stock's time, largest first."""
    per_mode = {}
    for mode in modes:
        runs = [r["kernels"] for r in rows if r["op"] == op and r["mode"] == mode and r.get("kernels")]
        names = set().union(*runs) if runs else set()
        per_mode[mode] = {n: statistics.median(run.get(n, 0.0) for run in runs) for n in names}
    stock = per_mode.get("stock", {})
    names = sorted(set().union(*per_mode.values()), key=lambda n: -stock.get(n, 0.0))
    others = [m for m in modes if m != "stock"]
    lines = [f"### {op}: GPU time a forward + backward step, by kernel (µs, median over rounds)", "",
             "| kernel | stock | " + " | ".join(others) + " | " + " | ".join(f"{m} / stock" for m in others) + " |",
             "|---|" + "---:|" * (1 + 2 * len(others))]
    for name in names + ["(all)"]:
        times = {m: (sum(per_mode[m].values()) if name == "(all)" else per_mode[m].get(name, 0.0)) for m in modes}
        base = times.get("stock", 0.0)
        ratios = [f"{times[m] / base:.3f}" if base else "-" for m in others]
        lines.append(f"| `{name[:70]}` | {base:.1f} | " + " | ".join(f"{times[m]:.1f}" for m in others) +
                     " | " + " | ".join(ratios) + " |")
    return lines + [""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fla", default="", help="the folder holding flash-linear-attention's fla package")
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--tokens", type=int, default=32768,
                        help="tokens a sequence (at 4,096 the ops are launch-bound: a few ms, noise 13-61%%)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=240, help="seconds a child may take")
    parser.add_argument("--out", default="")
    parser.add_argument("--per-kernel", action="store_true", help="also time every kernel of the op (torch.profiler)")
    parser.add_argument("--profile-steps", type=int, default=20, help="steps the per-kernel profile averages")
    parser.add_argument("--keep-ir", default="", help="copy the first round's compiled kernels here, per op and mode")
    parser.add_argument("--variants", default="",
                        help="NAME=KEY,KEY:RANK;...: enable() with those conversions left to Triton (KEY:RANK: ours)")
    mode_options(parser, "fla_ops_gpu")
    parser.add_argument("--warps", type=int, default=0,
                        help="each kernel's first configuration with this many warps (default: its first)")
    args = parser.parse_args(argv)
    variants = parse_variants(args.variants)
    steps = args.profile_steps if args.per_kernel else 0
    child_args = ["--profile-steps", str(steps), "--variants", args.variants, "--warps", str(args.warps)]
    if args.child:
        child(*args.child, args.tokens, args.json, variants, args.profile_steps, args.warps)
        return 0
    modes = [*modes_of(args), *variants]
    import torch
    import triton

    began = time.time()
    work = tempfile.mkdtemp(prefix="fla_ops_")
    fla = os.path.abspath(args.fla) if args.fla else ""

    def start(op, mode, round_, out_file):
        return _run_child(op, mode, args.tokens, fla, out_file, args.timeout, child_args,
                          args.keep_ir if round_ == 0 else "")

    rows, failures, exact = run_rounds(args.ops.split(","), modes, args.rounds, start, work, rows_writer(args.out, args.name))
    lines = [f"# flash-linear-attention's ops, whole: stock against `enable()`", "",
             f"Produced by `python benchmarks/fla_ops_gpu.py {' '.join(argv if argv is not None else sys.argv[1:])}` "
             f"on {torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__} "
             f"({time.time() - began:.0f} s).  What it measures: the docstring of `benchmarks/fla_ops_gpu.py`.", ""]
    table, ratios = op_table(args.ops.split(","), rows, failures, exact, modes, args.rounds)
    lines += table
    if variants:
        lines += ["", "Variants (``enable()`` with these conversions left to Triton, or given the candidate named):", ""]
        lines += [f"* {name}: {', '.join(keys)}" for name, keys in variants.items()]
    if args.per_kernel:
        lines.append("")
        for op in args.ops.split(","):
            lines += kernel_table(op, rows, modes)
    lines += closing(ratios, failures)
    text = "\n".join(lines) + "\n"
    publish(text, args.out, args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
