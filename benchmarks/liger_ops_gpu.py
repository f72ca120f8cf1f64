"""Whole Liger-Kernel ops on the GPU, stock Triton against ``linear_layouts.enable()``: do the
islands the plugin keeps in Liger's kernels pay for themselves in the whole op?

    python3 -m pip install --no-deps -q build/fla_carry/wheels/liger_kernel-0.8.5-py3-none-any.whl \\
        build/fla_carry/wheels/packaging-*.whl                       # on the GPU machine (no network)
    python benchmarks/liger_ops_gpu.py --rounds 2 --text --out benchmarks/results
    python benchmarks/liger_ops_gpu.py --ops rope,llama4_rope,neighborhood_attention --rounds 3
    python benchmarks/liger_ops_gpu.py --list         # the ops, their Liger symbols and shapes (CPU)

Liger comes from its wheel on PyPI, ``liger-kernel==0.8.5``, the version ``test/lit/corpus/liger_kernel``
was compiled from (``SOURCES.md`` there; ``tools/corpus/gen_corpus_thirdparty.py`` calls the same kernels):
``python3 -m pip download --no-deps liger-kernel==0.8.5 -d build/fla_carry/wheels``.  The wheel
declares torch and triton only, but ``liger_kernel/ops/utils.py``, which every op imports, imports
``packaging`` at module level: install that wheel too where it is missing.  The ops are taken from
Liger's modules (``liger_kernel.ops.<module>``: the default Triton implementation, none of the
implementations ``liger_kernel.ops`` may swap in), and the two ops that go through Liger's dispatcher
(``jsd``, ``fused_linear_cross_entropy``) are asked for ``nvidia-triton`` by name.

Each op of ``OPS`` (``--list`` prints its autograd Function and shapes: LLM sizes, hidden 4096,
4,096 to 65,536 tokens, vocabularies of 32,000 and 128,256, bf16 where Liger takes it, sizes chosen
so that forward + backward takes about a millisecond or more rather than a few launches) runs
forward and backward, in a process of its own per mode and round, with its own empty Triton
cache: ``stock`` (Triton alone) and ``ours`` (``enable()`` with its defaults), the modes interleaved
over ``--rounds`` rounds, reversed on odd rounds.  Inputs are drawn after ``torch.manual_seed(0)``;
the gradient fed back is ``torch.randn_like`` of each output, or 1 for a scalar loss (as in
training: Liger's losses skip their scaling kernel then).  Reported per op: the median time of
forward + backward (``triton.testing.do_bench``, median), ours over stock per round and their
median, stock over stock between rounds (the noise), the plugin's islands in the op's kernels
(``linear_layouts.stats()``), and whether ours computes what stock computes (the outputs and every
gradient of the first call, bit for bit, else the largest difference; with two rounds or more also
stock's second round against its first, as some of Liger's kernels or torch's own may not repeat
bit for bit); the geometric mean of the per-op medians, and every failure.  Autotuned kernels (DyT's)
run their first configuration (``harness.op_rounds.one_config_each``) so that both modes time the
same kernels; cuDNN (multi-token attention's convolution) is made deterministic.

Several of Liger's ops write into their inputs' storage, as they do in a model where those are
activations nothing else reads: the cross-entropy losses put the gradient in the logits, the rope
ops rotate q and k (and, backward, the incoming gradient) in place, SwiGLU's and GeGLU's backward
write the gradients into the saved inputs.  The calls ``do_bench`` times after the first therefore
see other values than the first (which the exactness check uses); the kernels and sizes are the
same.  RMSNorm and PolyNorm run with ``in_place=False`` so that the gradient fed back stays as drawn.

``--text`` adds the mode ``text``: ``enable()`` with every island spliced as text, none built in
Triton's module (``LINEAR_LAYOUTS_IN_PLACE=0``, ``passes/drop_in/in_place.py``); ``--in-place`` adds the
mode ``in_place``, ``LINEAR_LAYOUTS_IN_PLACE=1``.  ``--out DIR`` writes ``DIR/<--name>.md`` and the
rows as ``DIR/<--name>.jsonl`` (rewritten after every op, in case a time limit stops the run).

Liger's ops whose kernels hold a ``ttg.convert_layout`` in the corpus are all here: block RMSNorm
(its forward and backward), rope, Qwen2-VL's mrope, Llama 4's rope, neighborhood attention (QK, AV
and the four backward kernels) and mHC's fused matmul + norm.  Left out: vocab-parallel cross
entropy (needs a tensor-parallel process group), fused MoE (autotuned GEMMs over routing metadata),
GRPO loss, AttnRes, modulated RMSNorm, the fused linear JSD / KL / CE+TVD losses, MLP and tiled MLP
(their Triton parts are the SwiGLU / GeGLU / loss kernels timed here).  No op of the list is
missing from 0.8.5.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from harness.op_rounds import mode_options, modes_of, rows_writer
from harness.op_rounds import (closing, enable_route, one_config_each, op_table, publish, run_child, run_rounds,
                               time_forward_backward)

# op -> (Liger's autograd Function, liger_kernel.ops.<module>.<name>; the shapes, dtype last)
OPS_AND_SHAPES = {
    "rms_norm": ("rms_norm.LigerRMSNormFunction", dict(tokens=65536, hidden=4096, dtype="bf16")),
    "block_rms_norm": ("rms_norm.LigerRMSNormFunction (its block kernels: hidden <= 256, >= 32768 rows)",
                       dict(tokens=2097152, hidden=256, dtype="bf16")),
    "fused_add_rms_norm": ("fused_add_rms_norm.LigerFusedAddRMSNormFunction", dict(tokens=65536, hidden=4096, dtype="bf16")),
    "layer_norm": ("layer_norm.LigerLayerNormFunction", dict(tokens=65536, hidden=4096, dtype="bf16")),
    "poly_norm": ("poly_norm.LigerPolyNormFunction", dict(tokens=65536, hidden=4096, dtype="bf16")),
    "group_norm": ("group_norm.LigerGroupNormFunction", dict(batch=128, channels=256, groups=32, hidden=4096, dtype="fp32")),
    "dyt": ("dyt.LigerDyTFunction", dict(tokens=65536, hidden=4096, dtype="bf16")),
    "swiglu": ("swiglu.LigerSiLUMulFunction", dict(tokens=16384, intermediate=14336, dtype="bf16")),
    "geglu": ("geglu.LigerGELUMulFunction", dict(tokens=16384, intermediate=14336, dtype="bf16")),
    "relu_squared": ("relu_squared.LigerReLUSquaredFunction", dict(tokens=16384, intermediate=14336, dtype="bf16")),
    "softmax": ("softmax.LigerSoftmaxFunction", dict(rows=65536, cols=4096, dtype="bf16")),
    "sparsemax": ("sparsemax.LigerSparsemaxFunction", dict(rows=16384, cols=4096, dtype="bf16")),
    "cross_entropy": ("cross_entropy.LigerCrossEntropyFunction", dict(tokens=8192, vocab=128256, dtype="bf16")),
    "fused_linear_cross_entropy": ("fused_linear_cross_entropy.LigerFusedLinearCrossEntropyFunction",
                                   dict(tokens=4096, hidden=4096, vocab=32000, dtype="bf16")),
    "kl_div": ("kl_div.LigerKLDivLossFunction", dict(tokens=8192, vocab=128256, dtype="bf16")),
    "jsd": ("jsd.LigerJSDFunction", dict(tokens=4096, vocab=128256, dtype="bf16")),
    "tvd": ("tvd.LigerTVDLossFunction", dict(tokens=4096, vocab=128256, dtype="bf16")),
    "rope": ("rope.LigerRopeFunction", dict(batch=8, seq=8192, q_heads=32, kv_heads=8, head_dim=128, dtype="bf16")),
    "qwen2vl_mrope": ("qwen2vl_mrope.LigerQwen2VLMRopeFunction",
                      dict(batch=8, seq=8192, q_heads=32, kv_heads=8, head_dim=128, dtype="bf16")),
    "llama4_rope": ("llama4_rope.LigerLlama4RopeFunction",
                    dict(batch=8, seq=8192, q_heads=32, kv_heads=8, head_dim=128, dtype="bf16")),
    "neighborhood_attention": ("fused_neighborhood_attention.LigerFusedNeighborhoodAttentionFunction",
                               dict(batch=2, heads=8, seq=4096, head_dim=64, kernel_size=7, dtype="bf16")),
    "mhc": ("mhc.LigerMHCCoeffsFunction + LigerMHCPreFunction + LigerMHCPostResFunction (identity layer)",
            dict(tokens=8192, streams=4, hidden=4096, dtype="bf16")),
    "multi_token_attention": ("multi_token_attention.LigerMultiTokenAttentionFunction",
                              dict(batch=2, heads=8, seq=2048, kernel=3, dtype="bf16")),
}
OPS = tuple(OPS_AND_SHAPES)


def shape_text(op: str) -> str:
    return ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{v}" for k, v in OPS_AND_SHAPES[op][1].items())


def _inputs(op: str):
    """The op's function (its output, or the tuple of its differentiable outputs) and its leaves
    (seeded), every float input requiring a gradient."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    s = OPS_AND_SHAPES[op][1]
    dev = "cuda"
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[s["dtype"]]

    def leaf(*shape, dtype=dtype, scale=1.0, shift=0.0):
        return (torch.randn(*shape, device=dev, dtype=torch.float32) * scale + shift).to(dtype).requires_grad_()

    def log_probs(*shape):
        return torch.log_softmax(torch.randn(*shape, device=dev, dtype=torch.float32), dim=-1).to(dtype).requires_grad_()

    def labels(n, vocab):
        return torch.randint(0, vocab, (n,), device=dev, dtype=torch.long)

    if op in ("rms_norm", "block_rms_norm"):
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        x, w = leaf(s["tokens"], s["hidden"]), leaf(s["hidden"], scale=0.1, shift=1.0)
        return (lambda: LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False)), [x, w]
    if op == "fused_add_rms_norm":
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
        x, r, w = leaf(s["tokens"], s["hidden"]), leaf(s["tokens"], s["hidden"]), leaf(s["hidden"], scale=0.1, shift=1.0)
        return (lambda: LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)), [x, r, w]
    if op == "layer_norm":
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        x, w, b = leaf(s["tokens"], s["hidden"]), leaf(s["hidden"], scale=0.1, shift=1.0), leaf(s["hidden"], scale=0.1)
        return (lambda: LigerLayerNormFunction.apply(x, w, b, 1e-6)), [x, w, b]
    if op == "poly_norm":
        from liger_kernel.ops.poly_norm import LigerPolyNormFunction
        x = leaf(s["tokens"], s["hidden"])
        w = torch.full((3,), 1.0 / 3.0, device=dev).requires_grad_()
        b = torch.tensor([1.0], device=dev).requires_grad_()
        return (lambda: LigerPolyNormFunction.apply(x, w, b, 1e-6, False)), [x, w, b]
    if op == "group_norm":
        from liger_kernel.ops.group_norm import LigerGroupNormFunction
        x = leaf(s["batch"], s["channels"], s["hidden"])
        w, b = leaf(s["channels"], scale=0.1, shift=1.0), leaf(s["channels"], scale=0.1)
        return (lambda: LigerGroupNormFunction.apply(x, w, b, s["channels"], s["groups"], 1e-6)), [x, w, b]
    if op == "dyt":
        from liger_kernel.ops.dyt import LigerDyTFunction
        x = leaf(s["tokens"], s["hidden"])
        alpha = torch.full((1,), 0.5, device=dev, dtype=dtype).requires_grad_()
        gamma, beta = leaf(s["hidden"], scale=0.1, shift=1.0), leaf(s["hidden"], scale=0.1)
        return (lambda: LigerDyTFunction.apply(x, alpha, gamma, beta)), [x, alpha, gamma, beta]
    if op in ("swiglu", "geglu"):
        if op == "swiglu":
            from liger_kernel.ops.swiglu import LigerSiLUMulFunction as Function
        else:
            from liger_kernel.ops.geglu import LigerGELUMulFunction as Function
        a, b = leaf(s["tokens"], s["intermediate"]), leaf(s["tokens"], s["intermediate"])
        return (lambda: Function.apply(a, b)), [a, b]
    if op == "relu_squared":
        from liger_kernel.ops.relu_squared import LigerReLUSquaredFunction
        x = leaf(s["tokens"], s["intermediate"])
        return (lambda: LigerReLUSquaredFunction.apply(x)), [x]
    if op == "softmax":
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        x = leaf(s["rows"], s["cols"])
        return (lambda: LigerSoftmaxFunction.apply(x)), [x]
    if op == "sparsemax":
        from liger_kernel.ops.sparsemax import LigerSparsemaxFunction
        x = leaf(s["rows"], s["cols"])
        return (lambda: LigerSparsemaxFunction.apply(x, -1)), [x]
    if op == "cross_entropy":
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
        logits, target = leaf(s["tokens"], s["vocab"]), labels(s["tokens"], s["vocab"])
        return (lambda: LigerCrossEntropyFunction.apply(logits, target, None)[0]), [logits]
    if op == "fused_linear_cross_entropy":
        from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction as FLCE
        x, w = leaf(s["tokens"], s["hidden"]), leaf(s["vocab"], s["hidden"], scale=0.02)
        target = labels(s["tokens"], s["vocab"])
        # the arguments up to ce_impl by position (Function.apply takes no keywords)
        return (lambda: FLCE.apply(x, w, target, None, None, -100, 0.0, 0.0, "mean", None, False, None, False,
                                   False, False, "nvidia-triton")[0]), [x, w]
    if op == "kl_div":
        from liger_kernel.ops.kl_div import LigerKLDivLossFunction
        y_pred = log_probs(s["tokens"], s["vocab"])
        y_true = torch.softmax(torch.randn(s["tokens"], s["vocab"], device=dev), dim=-1).to(dtype)
        return (lambda: LigerKLDivLossFunction.apply(y_pred, y_true, "batchmean", False, 1e-10)), [y_pred]
    if op == "jsd":
        from liger_kernel.ops.jsd import LigerJSDFunction
        student = log_probs(s["tokens"], s["vocab"])
        teacher = torch.log_softmax(torch.randn(s["tokens"], s["vocab"], device=dev), dim=-1).to(dtype)
        return (lambda: LigerJSDFunction.apply(student, teacher, None, 0.5, -100, "nvidia-triton")), [student]
    if op == "tvd":
        from liger_kernel.ops.tvd import LigerTVDLossFunction
        p = torch.softmax(torch.randn(s["tokens"], s["vocab"], device=dev), dim=-1).to(dtype).requires_grad_()
        q = torch.softmax(torch.randn(s["tokens"], s["vocab"], device=dev), dim=-1).to(dtype)
        return (lambda: LigerTVDLossFunction.apply(p, q, None, "batchmean", -100)), [p]
    if op in ("rope", "qwen2vl_mrope", "llama4_rope"):
        B, T, D = s["batch"], s["seq"], s["head_dim"]
        # laid out as a model has them: (batch, seq, heads, head_dim), passed as (batch, heads, seq, head_dim)
        q, k = leaf(B, T, s["q_heads"], D), leaf(B, T, s["kv_heads"], D)
        angles = torch.arange(T, device=dev, dtype=torch.float32)[:, None] * \
            (10000.0 ** (-torch.arange(0, D, 2, device=dev, dtype=torch.float32) / D))[None, :]
        if op == "llama4_rope":
            from liger_kernel.ops.llama4_rope import LigerLlama4RopeFunction
            freqs = torch.polar(torch.ones_like(angles), angles)             # (seq, head_dim / 2), complex64
            return (lambda: LigerLlama4RopeFunction.apply(q, k, freqs)), [q, k]
        emb = torch.cat([angles, angles], dim=-1)                            # (seq, head_dim)
        if op == "rope":
            from liger_kernel.ops.rope import LigerRopeFunction
            cos, sin = emb.cos()[None].to(dtype), emb.sin()[None].to(dtype)  # (1, seq, head_dim)
            return (lambda: LigerRopeFunction.apply(q.transpose(1, 2), k.transpose(1, 2), cos, sin)), [q, k]
        from liger_kernel.ops.qwen2vl_mrope import LigerQwen2VLMRopeFunction
        cos = emb.cos()[None, None].expand(3, B, T, D).to(dtype).contiguous()   # (3, batch, seq, head_dim)
        sin = emb.sin()[None, None].expand(3, B, T, D).to(dtype).contiguous()
        section = [16, 24, 24]                                              # Qwen2-VL's, summing to head_dim / 2
        return (lambda: LigerQwen2VLMRopeFunction.apply(q.transpose(1, 2), k.transpose(1, 2), cos, sin, section)), [q, k]
    if op == "neighborhood_attention":
        from liger_kernel.ops.fused_neighborhood_attention import LigerFusedNeighborhoodAttentionFunction as NA
        shape = (s["batch"], s["heads"], s["seq"], s["head_dim"])
        q, k, v = leaf(*shape), leaf(*shape), leaf(*shape)
        return (lambda: NA.apply(q, k, v, s["kernel_size"], 1, None)), [q, k, v]
    if op == "mhc":
        from liger_kernel.ops.mhc import LigerMHCCoeffsFunction, LigerMHCPostResFunction, LigerMHCPreFunction
        n, hc, c = s["tokens"], s["streams"], s["hidden"]
        m = hc * hc + 2 * hc
        x = leaf(n, hc, c)
        phi = leaf(hc * c, m, scale=0.02)
        b = torch.zeros(m, device=dev).requires_grad_()
        alphas = [torch.tensor(1.0, device=dev).requires_grad_() for _ in range(3)]

        def mhc():       # LigerMHC's forward (liger_kernel/transformers/mhc.py) around an identity layer
            h_pre, h_post, h_res = LigerMHCCoeffsFunction.apply(x, phi, b, *alphas, False, 20, 1e-6, 0.0, 1e-6, 2.0)
            x_in = LigerMHCPreFunction.apply(x, h_pre)
            return LigerMHCPostResFunction.apply(x, x_in, h_post, h_res)
        return mhc, [x, phi, b, *alphas]
    if op == "multi_token_attention":
        from liger_kernel.ops.multi_token_attention import LigerMultiTokenAttentionFunction
        scores = leaf(s["batch"], s["heads"], s["seq"], s["seq"])
        weight = leaf(s["heads"], s["heads"], s["kernel"], s["kernel"], scale=0.1)
        return (lambda: LigerMultiTokenAttentionFunction.apply(scores, weight, None, 1, s["kernel"] // 2)), [scores, weight]
    raise ValueError(f"unknown op {op}")


def _grad_like(out):
    """What is fed back: 1 for a scalar loss (as in training), else a random tensor like the output."""
    import torch
    return torch.ones_like(out) if out.dim() == 0 else torch.randn_like(out)


def child(op: str, mode: str, out_file: str) -> None:
    """One op in one mode in this process: time it, save its results, write a JSON line."""
    import torch

    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    one_config_each()
    if not enable_route(mode):
        raise SystemExit(f"unknown mode {mode}")
    run, leaves = _inputs(op)
    time_forward_backward(op, mode, run, leaves, out_file, grad_like=_grad_like)


def report(command: str, header: str, ops: list, modes: list, rounds: int, rows: list, failures: dict,
           exact: dict) -> str:
    """The markdown report: ``command`` as run, ``header`` (the GPU, versions, seconds), the table,
    the geometric mean and the failures."""
    lines = ["# Liger-Kernel's ops, whole: stock against `enable()`", "",
             f"Produced by `python benchmarks/liger_ops_gpu.py {command}` on {header}.  "
             "What it measures: the docstring of `benchmarks/liger_ops_gpu.py`; the shapes: its `--list`.", ""]
    table, ratios = op_table(ops, rows, failures, exact, modes, rounds)
    return "\n".join(lines + table + closing(ratios, failures)) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", default=",".join(OPS), help="a comma list of ops (--list shows them)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=300, help="seconds a child may take")
    parser.add_argument("--out", default="", help="folder for <name>.md and <name>.jsonl (default: print only)")
    mode_options(parser, "liger_ops_gpu")
    parser.add_argument("--list", action="store_true", help="print the ops, their Liger symbols and shapes, and exit")
    args = parser.parse_args(argv)
    ops = [op for op in args.ops.split(",") if op]
    unknown = [op for op in ops if op not in OPS_AND_SHAPES]
    if unknown:
        parser.error(f"--ops: no such op {', '.join(unknown)} (--list shows them)")
    if args.list:
        for op in ops:
            print(f"{op:28} liger_kernel.ops.{OPS_AND_SHAPES[op][0]}\n{'':28} {shape_text(op)}")
        return 0
    if args.child:
        child(*args.child, args.json)
        return 0
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    import importlib.util
    from importlib.metadata import version
    if importlib.util.find_spec("liger_kernel") is None:
        print("liger_ops_gpu: liger_kernel is not installed: python3 -m pip download --no-deps liger-kernel==0.8.5 "
              "(no network: its wheel, and packaging's, with pip install --no-deps)", file=sys.stderr)
        return 2
    modes = modes_of(args)
    import torch
    import triton

    began = time.time()
    work = tempfile.mkdtemp(prefix="liger_ops_")

    def start(op, mode, round_, out_file):
        command = [sys.executable, os.path.abspath(__file__), "--child", op, mode, "--json", out_file]
        return run_child(command, args.timeout, f"liger_{op}_{mode}_")

    rows, failures, exact = run_rounds(ops, modes, args.rounds, start, work, rows_writer(args.out, args.name), stock_twice=True)
    header = (f"{torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__}, "
              f"liger-kernel {version('liger-kernel')} ({time.time() - began:.0f} s)")
    command = " ".join(argv if argv is not None else sys.argv[1:])
    text = report(command, header, ops, modes, args.rounds, rows, failures, exact)
    publish(text, args.out, args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
