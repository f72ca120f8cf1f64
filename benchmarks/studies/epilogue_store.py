"""Does a matmul's epilogue gain from converting the accumulator before its store?  The GPU and
the advice's model, side by side.

A Hopper matmul's accumulator (``NVMMADistributedLayout`` v3) holds two neighbouring columns per
thread, four threads to a row: stored as it is, one warp's ``st.global.b32`` touches 8 rows of 16
bytes (8 half-used 32-byte sectors).  Converting it first to a row-contiguous blocked layout
(``[1, 8]`` per thread) stores 16 bytes a thread, at the price of a round trip through shared
memory.  The advice (``passes.advice``) prices the whole kernel with the model
``ll-resolve-auto-layouts`` minimizes; its epilogue-store finding (``passes/advice/epilogue_edit.py``)
advises the direct form to convert, with the bias, the ReLU and the store's indices laid out by
that resolution (the "advice findings" column; ``ll-apply-advice`` makes the converted form's
16-byte stores of it).
This study times both epilogues on real tiles, each program its own (the Hopper benchmark's
one-tile kernels are launched on many programs that all write one tile, which makes uncoalesced
stores collide in L2 and is no fair judge), and prints the model's price of each beside the GPU's
median, with an A/A row (the direct kernel's binary timed twice) for the timing's own noise.

    python benchmarks/studies/epilogue_store.py --dry          # CPU: the model's prices only
    python benchmarks/studies/epilogue_store.py --rounds 5 --out benchmarks/results   # GPU

The kernel: a TMA + mbarrier + ``warpgroup_mma`` matmul with a pipelined K loop (64x128 tiles,
64-deep K steps, 3 stages), a bias and a ReLU in the epilogue, fp16 out.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait

SM90 = GPUTarget("cuda", 90, 32)
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared       # 3.7+ / 3.6

BM, BN, BK, STAGES = 64, 128, 64, 3
SHAPES = ((8192, 8192, 64), (8192, 8192, 256), (8192, 8192, 1024), (4096, 4096, 4096))
EPILOGUES = ("direct", "converted")


@gluon.jit
def matmul_epilogue(a_desc, b_desc, c_ptr, bias_ptr, K, N_TOTAL, CONVERT: gl.constexpr, STAGES: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_s = gl.allocate_shared_memory(a_desc.dtype, [STAGES, BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [STAGES, BK, BN], b_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    num_k = K // BK
    for i in gl.static_range(STAGES - 1):
        if i < num_k:
            mbarrier.expect(bars.index(i), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            _tma_load(a_desc, [off_m, i * BK], bars.index(i), a_s.index(i))
            _tma_load(b_desc, [i * BK, off_n], bars.index(i), b_s.index(i))
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, acc_layout)
    for k in range(num_k):
        s = k % STAGES
        mbarrier.wait(bars.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_s.index(s), b_s.index(s), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
        nk = k + STAGES - 1
        if nk < num_k:
            ns = nk % STAGES
            mbarrier.expect(bars.index(ns), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            _tma_load(a_desc, [off_m, nk * BK], bars.index(ns), a_s.index(ns))
            _tma_load(b_desc, [nk * BK, off_n], bars.index(ns), b_s.index(ns))
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(i))
    if CONVERT:
        out_layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    else:
        out_layout: gl.constexpr = acc_layout
    y = gl.convert_layout(acc.to(gl.float16), out_layout)   # a no-op where out_layout is acc_layout
    rows = off_m + gl.arange(0, BM, gl.SliceLayout(1, out_layout))
    cols = off_n + gl.arange(0, BN, gl.SliceLayout(0, out_layout))
    bias = gl.load(bias_ptr + cols).to(gl.float16)
    y = gl.maximum(y + bias[None, :], 0.0)
    gl.store(c_ptr + rows[:, None] * N_TOTAL + cols[None, :], y)


def _descriptor(shape) -> str:
    layout = gl.NVMMASharedLayout.get_default_for(list(shape), gl.float16)
    return f"tensordesc<fp16[{','.join(map(str, shape))}],{layout!r}>"


def source(epilogue: str) -> GluonASTSource:
    signature = {"a_desc": _descriptor((BM, BK)), "b_desc": _descriptor((BK, BN)), "c_ptr": "*fp16",
                 "bias_ptr": "*fp32", "K": "i32", "N_TOTAL": "i32"}
    constexprs = {"CONVERT": epilogue == "converted", "STAGES": STAGES}
    aligned = {(matmul_epilogue.arg_names.index(name),): [["tt.divisibility", 16]]     # as torch's tensors are
               for name, kind in signature.items() if kind.startswith("*") or kind == "i32"}
    return GluonASTSource(matmul_epilogue, signature, constexprs, attrs=aligned)


# --------------------------------------------------------------------------- the model (CPU)

def modelled(epilogue: str) -> dict:
    """The model's whole-kernel price of one epilogue's TTGIR for sm_90, its store instructions
    in the PTX, and the advice's findings on it."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.gluon.kernel_price import kernel_price
    from linear_layouts.passes.advice.layout_advice import advise
    from linear_layouts.passes.ir.snapshot import parse_module
    import re
    compiled = triton.compile(source(epilogue), target=SM90)
    ttgir = compiled.asm["ttgir"]
    price = kernel_price(parse_module(ttgir, "<matmul_epilogue>"), target_named("sm_90"))
    stores = {kind: len(re.findall(rf"\bst\.global{kind}\.[bfu]\d+", compiled.asm["ptx"])) for kind in ("", ".v2", ".v4")}
    findings = [f"{f.kind}: {f.gain:.3f}x" for f in advise(ttgir, "sm_90")]
    return {"price": price.cost, "stores": stores, "findings": findings}


def advised_kernel():
    """The direct form compiled with the advice applied (``enable(apply_advice=True)``)."""
    import linear_layouts
    linear_layouts.enable(apply_advice=True)
    try:
        return triton.compile(source("direct"), target=SM90)
    finally:
        linear_layouts.disable()


# --------------------------------------------------------------------------- the GPU

def timed(rounds: int) -> dict:
    """{shape: {mode: [median ms of each round]}}, modes rotated from round to round; the direct
    binary is timed twice (``direct_again``) for the A/A row."""
    import torch
    from triton.experimental.gluon.language import NVMMASharedLayout
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    results = {}
    kernels = {e: triton.compile(source(e)) for e in EPILOGUES}
    kernels["advised"] = advised_kernel()
    for M, N, K in SHAPES:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(M, K, device="cuda", generator=g, dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", generator=g, dtype=torch.float16)
        bias = torch.randn(N, device="cuda", generator=g)

        def desc(t, block):
            return TensorDescriptor(t, list(t.shape), list(t.stride()), list(block),
                                    NVMMASharedLayout.get_default_for(list(block), gl.float16))
        outs = {e: torch.empty(M, N, device="cuda", dtype=torch.float16) for e in kernels}
        grid = (M // BM, N // BN, 1)

        def launch(epilogue):
            kernel, c = kernels[epilogue], outs[epilogue]
            return lambda: kernel[grid](desc(a, (BM, BK)), desc(b, (BK, BN)), c, bias, K, N)
        launches = {"direct": launch("direct"), "converted": launch("converted"), "advised": launch("advised"),
                    "direct_again": launch("direct")}
        for run in launches.values():
            run()
        torch.cuda.synchronize()
        for other in ("converted", "advised"):
            assert torch.equal(outs["direct"], outs[other]), f"{M}x{N}x{K}: {other} differs from direct"
        modes = tuple(launches)
        times = {m: [] for m in modes}
        for round_ in range(rounds):
            shift = round_ % len(modes)
            for mode in modes[shift:] + modes[:shift]:
                times[mode].append(triton.testing.do_bench_cudagraph(launches[mode], rep=40, return_mode="median"))
        results[f"{M}x{N}x{K}"] = times
    return results


def report(model: dict, times: dict, environment: dict) -> str:
    lines = ["# A matmul's epilogue: stored from the accumulator, or converted first", "",
             f"Produced by `python benchmarks/studies/epilogue_store.py {environment['args']}` "
             f"({environment['gpu']}, triton {environment['triton']}); medians of {environment['rounds']} rounds.", "",
             "## The model (whole kernel, sm_90)", "",
             "| epilogue | modelled price | st.global / .v2 / .v4 in the PTX | advice findings |",
             "| --- | ---: | --- | --- |"]
    for e in EPILOGUES:
        m = model[e]
        s = m["stores"]
        lines.append(f"| {e} | {m['price']:.1f} | {s['']} / {s['.v2']} / {s['.v4']} | {'; '.join(m['findings']) or 'none'} |")
    ratio = model["converted"]["price"] / model["direct"]["price"]
    lines += ["", f"The model's converted / direct: **{ratio:.3f}**.", ""]
    if times:
        lines += ["## The GPU", "", "`advised`: the direct form compiled with `enable(apply_advice=True)`.", "",
                  "| M x N x K | direct ms | converted ms | converted / direct | advised / direct | "
                  "A/A (direct again / direct) |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for shape, t in times.items():
            med = {m: statistics.median(v) for m, v in t.items()}
            lines.append(f"| {shape} | {med['direct']:.4f} | {med['converted']:.4f} | "
                         f"{med['converted'] / med['direct']:.3f} | {med['advised'] / med['direct']:.3f} | "
                         f"{med['direct_again'] / med['direct']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry", action="store_true", help="the model's prices only (no GPU)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="", help="write epilogue_store.md and .json.gz there")
    args = parser.parse_args(argv)
    model = {e: modelled(e) for e in EPILOGUES}
    times, environment = {}, {"gpu": "no GPU (--dry)", "triton": triton.__version__, "rounds": 0,
                              "args": " ".join(argv if argv is not None else sys.argv[1:])}
    if not args.dry:
        import torch
        times = timed(args.rounds)
        environment.update(gpu=torch.cuda.get_device_name(), rounds=args.rounds)
    text = report(model, times, environment)
    print(text)
    if args.out:
        with open(os.path.join(args.out, "epilogue_store.md"), "w") as f:
            f.write(text)
        with gzip.open(os.path.join(args.out, "epilogue_store.json.gz"), "wt") as f:
            json.dump({"environment": environment, "model": model, "times": times}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
