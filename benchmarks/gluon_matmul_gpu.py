"""A Gluon matmul as an expert writes it for Ampere-style tensor cores, with and without the plugin.

The kernel: fp16 tiles loaded from global memory in a 16-byte ``BlockedLayout``, converted
(``gl.convert_layout``) to ``mma_v2``'s dot-operand layouts, multiplied with an fp32
accumulator, the result converted back to the blocked layout and stored.  The two conversions in
the loop are the ones ``enable()`` lowers; stock Triton goes through shared memory with
``ldmatrix``.  Modes, each in a process of its own with an empty Triton cache, alternated over
rounds (``harness/mode_rounds.py``):

* ``stock``: Triton alone;
* ``ours``: ``linear_layouts.enable()`` as shipped;
* ``ours_asm``: the same, shared-memory accesses as inline PTX (``LINEAR_LAYOUTS_SHARED_ACCESS=asm``),
  the form islands had before they were plain LLVM loads and stores.

Outputs are compared with stock's bit for bit; times are medians of ``triton.testing.do_bench``.

    python benchmarks/gluon_matmul_gpu.py --rounds 3 --out benchmarks/results   # GPU
    python benchmarks/gluon_matmul_gpu.py --dry-run                             # CPU: compiles, islands

``--per-conversion`` also times ours with each conversion in turn left to stock and writes
``gluon_matmul_choice.json`` (in-kernel rows, kernel_choice.json's format), from which
``plan_choice.py --write-choices`` takes the measured table's entries for these conversions.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

from harness import skeleton
from harness.common import publish, require_package

MODES = ("stock", "ours", "ours_asm")
# --per-conversion: ours with one of the kernel's conversions left to stock Triton (candidate_for=KEY:stock),
# to see which island costs what (as kernel_choice.py does for the suite's kernels)
PER_CONVERSION = ("ours_a_stock", "ours_b_stock", "ours_c_stock")
SHAPES = ((1024, 1024, 1024), (4096, 4096, 4096))
BLOCK_M, BLOCK_N, BLOCK_K, WARPS = 128, 128, 32, 4


def matmul_kernel():
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import mma_v2

    @gluon.jit
    def kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr):
        blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
        mma: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[gl.num_warps(), 1],
                                                      instr_shape=[16, 8])
        a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=8)
        b_layout: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=mma, k_width=8)
        pid_m, pid_n = gl.program_id(0), gl.program_id(1)
        rm = pid_m * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, blocked))
        rn = pid_n * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, blocked))
        rk_a = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
        rk_b = gl.arange(0, BK, layout=gl.SliceLayout(1, blocked))
        a_ptrs = a_ptr + rm[:, None] * K + rk_a[None, :]
        b_ptrs = b_ptr + rk_b[:, None] * N + rn[None, :]
        acc = gl.zeros([BM, BN], gl.float32, layout=mma)
        for _ in range(0, K, BK):
            a = gl.convert_layout(gl.load(a_ptrs), a_layout)
            b = gl.convert_layout(gl.load(b_ptrs), b_layout)
            acc = mma_v2(a, b, acc)
            a_ptrs += BK
            b_ptrs += BK * N
        c = gl.convert_layout(acc.to(gl.float16), blocked)
        gl.store(c_ptr + rm[:, None] * N + rn[None, :], c)

    return kernel


def conversion_keys() -> dict[str, str]:
    """The kernel's three conversions by name (a, b: the operands; c: the result), as
    ``lowering.choosing.measured_choices.conversion_key`` names them for sm_90."""
    from linear_layouts.lowering.choosing.measured_choices import conversion_key
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    return {name: conversion_key(tensor_layout_of(src, shape), tensor_layout_of(dst, shape), 16, "sm_90")
            for name, (src, dst, shape) in _conversions().items()}


def _conversions() -> dict:
    """name -> (source encoding, destination encoding, shape) of the kernel's three conversions."""
    blocked = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    mma = f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [{WARPS}, 1], instrShape = [16, 8]}}>"
    return {"a": (blocked, f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 8}}>", (BLOCK_M, BLOCK_K)),
            "b": (blocked, f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = 8}}>", (BLOCK_K, BLOCK_N)),
            "c": (mma, blocked, (BLOCK_M, BLOCK_N))}


def _turn_on(mode: str) -> None:
    if mode == "ours_asm":
        os.environ["LINEAR_LAYOUTS_SHARED_ACCESS"] = "asm"
    if mode == "stock":
        return
    import linear_layouts
    if mode in PER_CONVERSION:
        key = conversion_keys()[mode.split("_")[1]]
        linear_layouts.enable(pipeline=f"ll-lower-conversions{{candidate_for={key}:stock}}")
    else:
        linear_layouts.enable()


def child(mode: str, path: str) -> int:
    """One mode: every shape launched, checked and timed; JSON to ``path``."""
    import hashlib

    import torch
    import triton

    _turn_on(mode)
    import linear_layouts
    kernel = matmul_kernel()
    results = {}
    for m, n, k in SHAPES:
        generator = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn((m, k), device="cuda", dtype=torch.float16, generator=generator)
        b = torch.randn((k, n), device="cuda", dtype=torch.float16, generator=generator)
        c = torch.empty((m, n), device="cuda", dtype=torch.float16)
        grid = (m // BLOCK_M, n // BLOCK_N)

        def launch():
            kernel[grid](a, b, c, m, n, k, BLOCK_M, BLOCK_N, BLOCK_K, num_warps=WARPS)
        launch()
        torch.cuda.synchronize()
        digest = hashlib.sha256(c.cpu().numpy().tobytes()).hexdigest()[:16]
        ms = triton.testing.do_bench(launch, warmup=50, rep=300)
        results[f"{m}x{n}x{k}"] = {"ms": ms, "digest": digest}
    results["islands"] = linear_layouts.stats().islands if mode != "stock" else 0
    with open(path, "w") as f:
        json.dump(results, f)
    return 0


def dry() -> str:
    """Compile the kernel for sm_90 in each mode (CPU): its conversions and our islands."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    os.environ["TRITON_ALWAYS_COMPILE"] = "1"     # one process compiles the kernel once per mode
    lines = ["| mode | compiles | islands | ld.shared / st.shared / ldmatrix in the PTX |", "|---|---|---|---|"]
    for mode in MODES + PER_CONVERSION:
        _turn_on(mode)
        import linear_layouts
        before = linear_layouts.stats().islands
        source = GluonASTSource(matmul_kernel(), {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32",
                                                  "N": "i32", "K": "i32"},
                                {"BM": BLOCK_M, "BN": BLOCK_N, "BK": BLOCK_K},
                                attrs={(i,): [["tt.divisibility", 16]] for i in range(6)})
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": WARPS})
        ptx = compiled.asm["ptx"]
        counts = " / ".join(str(ptx.count(word)) for word in ("ld.shared", "st.shared", "ldmatrix"))
        lines.append(f"| {mode} | yes | {linear_layouts.stats().islands - before} | {counts} |")
        linear_layouts.disable()
        os.environ.pop("LINEAR_LAYOUTS_SHARED_ACCESS", None)
    return "\n".join(lines)


def choice_rows(runs: dict) -> dict:
    """The per-conversion runs as in-kernel rows of kernel_choice.json's format (``kernel/...``:
    the kernel's time with the planner's pick for that conversion, and with that conversion
    left to stock, the others ours), which ``plan_choice.py --write-choices`` turns into entries
    of the measured table (``lowering/choosing/measured_choices.json``)."""
    import torch
    import triton
    from linear_layouts.lowering.choosing.lowering_choice import instruction_mix
    from linear_layouts.lowering.planner import plan_conversion
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.ir.layouts import tensor_layout_of

    rows = []
    for name, (src, dst, shape) in _conversions().items():
        pick = plan_conversion(tensor_layout_of(src, shape), tensor_layout_of(dst, shape), 16, target_named("sm_90"))
        for m, n, k in SHAPES:
            key = f"{m}x{n}x{k}"
            ours = [r[key]["ms"] for r in runs["ours"]]
            left = [r[key]["ms"] for r in runs[f"ours_{name}_stock"]]
            rows.append({"case": f"kernel/gluon_matmul_{key}/{name}", "src": src, "dst": dst, "shape": list(shape),
                         "bits": 16, "num_warps": WARPS,
                         "candidates": [{"instructions": instruction_mix(pick), "ms": statistics.median(ours),
                                         "round_ms": ours}],
                         "stock": {"ms": statistics.median(left), "round_ms": left},
                         "noise": max(ours) / min(ours) - 1})
    return {"environment": {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
                            "torch": torch.__version__}, "cases": rows}


def summary(runs: dict, rounds: int) -> str:
    import torch
    import triton

    lines = ["# A Gluon mma_v2 matmul as written: stock Triton, the plugin, the plugin's inline-PTX form", "",
             f"- {torch.cuda.get_device_name()}; triton {triton.__version__}, torch {torch.__version__}",
             f"- command: `python benchmarks/gluon_matmul_gpu.py --rounds {rounds}"
             + (" --per-conversion" if any(mode in PER_CONVERSION for mode in runs) else "") + "`;"
             + f" tiles {BLOCK_M}x{BLOCK_N}x{BLOCK_K}, "
             f"{WARPS} warps, fp16 in, fp32 accumulate; each mode in its own process, {rounds} rounds, order rotated; "
             "median of `do_bench` medians", "",
             "| shape | stock ms | ours / stock | ours_asm / stock | outputs |", "|---|---:|---|---|---|"]
    extra = [mode for mode in runs if mode in PER_CONVERSION]
    if extra:
        lines[-2] = lines[-2].replace(" | outputs |", "".join(f" | {mode} / stock" for mode in extra) + " | outputs |")
        lines[-1] = lines[-1].replace("|---|", "|---" * (len(extra) + 1) + "|", 1)
    for m, n, k in SHAPES:
        key = f"{m}x{n}x{k}"
        ms = {mode: statistics.median(r[key]["ms"] for r in runs[mode]) for mode in runs}
        digests = {mode: {r[key]["digest"] for r in runs[mode]} for mode in runs}
        same = all(digests[mode] == digests["stock"] for mode in runs)
        lines.append(f"| {key} | {ms['stock']:.4f} | {ms['ours'] / ms['stock']:.3f} | {ms['ours_asm'] / ms['stock']:.3f} "
                     + "".join(f"| {ms[mode] / ms['stock']:.3f} " for mode in extra)
                     + f"| {'bit-exact' if same else 'DIFFER: ' + str(digests)} |")
    lines.append("")
    lines.append(f"- islands per process: ours {runs['ours'][0]['islands']}, ours_asm {runs['ours_asm'][0]['islands']}")
    return "\n".join(lines) + "\n"


def options(parser) -> None:
    parser.add_argument("--per-conversion", action="store_true",
                        help="also time ours with each conversion in turn left to stock Triton")


def cases(args, env) -> tuple:
    """The modes, each run in a process of its own."""
    return MODES + (PER_CONVERSION if args.per_conversion else ())


def run(args, env, modes) -> dict | str:
    """The dry run's table (compiled here, every mode in turn); else every mode's rounds."""
    if args.dry_run:
        return dry()
    from harness.mode_rounds import run_mode_rounds
    return run_mode_rounds(os.path.abspath(__file__), modes, args.rounds, "ll_gluon_matmul_")


def write_summary(args, env, modes, runs) -> int:
    if args.dry_run:
        print(runs)
        return 0
    text = summary(runs, args.rounds)
    publish(text, os.path.join(args.out, "gluon_matmul_gpu.md") if args.out else "")
    if args.per_conversion and args.out:
        with open(os.path.join(args.out, "gluon_matmul_choice.json"), "w") as f:
            json.dump(choice_rows(runs), f, indent=1)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:           # one mode's process (harness/mode_rounds.py): --child MODE JSON
        require_package()
        return child(*argv[1:3])
    return skeleton.main("gluon_matmul_gpu", __doc__, argv, options=options, cases=cases, run=run,
                         summary=write_summary, dry_run="compile for sm_90 in each mode (CPU), no timing",
                         rounds=3, out_default="", out_help="write the report here too (default: print it only)")


if __name__ == "__main__":
    sys.exit(main())
