"""A Gluon matmul as an expert writes it for Ampere-style tensor cores, with and without the plugin.

The kernel: fp16 tiles loaded from global memory in a 16-byte ``BlockedLayout``, converted
(``gl.convert_layout``) to ``mma_v2``'s dot-operand layouts, multiplied with an fp32
accumulator, the result converted back to the blocked layout and stored.  The two conversions in
the loop are the ones ``enable()`` lowers; stock Triton goes through shared memory with
``ldmatrix``.  Modes, each in a process of its own with an empty Triton cache, alternated over
rounds (``harness/mode_rounds.py``):

* ``stock``: Triton alone;
* ``ours``: ``linear_layouts.enable()`` as shipped;
* ``ours_asm``: the same, shared-memory accesses as inline PTX (``emit_nvidia.SHARED_ACCESS_FORM = "asm"``),
  the form islands had before they were plain LLVM loads and stores;
* ``ours_in_place`` (``--in-place``): ``enable()`` with its one-round shared-memory plans built in
  Triton's module (``LINEAR_LAYOUTS_IN_PLACE=1``, ``passes/drop_in/in_place.py``: the default's route);
* ``ours_text`` (``--text``): ``enable()`` with every island spliced as text (``LINEAR_LAYOUTS_IN_PLACE=0``).

Outputs are compared with stock's bit for bit; times are medians of ``triton.testing.do_bench``.

    python benchmarks/gluon_forms_gpu.py matmul --rounds 3 --out benchmarks/results   # GPU
    python benchmarks/gluon_forms_gpu.py matmul --dry-run                             # CPU: compiles, islands

``--auto`` also times the kernel's automatic form (``harness/gluon_matmul_kernel.py`` through
``harness.peer_gluon_forms``' rule: its blocked and slice layouts become ``AutoLayout``, its
aranges ``CoalescedLayout`` where the front end takes them and ``AutoLayout`` where not), with its
layouts resolved by ours (``auto_ours``: ``enable()``) and by Triton's own resolution
(``auto_triton``), against the kernel as written under stock Triton: the expert's layouts.  A
mode that does not compile is reported with its error; the report is
``gluon_matmul_auto_gpu.md``.

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
# to see which island costs what (as ``plan_choice.py kernels`` does for the suite's kernels)
PER_CONVERSION = ("ours_a_stock", "ours_b_stock", "ours_c_stock")
SHAPES = ((1024, 1024, 1024), (4096, 4096, 4096))
BLOCK_M, BLOCK_N, BLOCK_K, WARPS = 128, 128, 32, 4


KERNEL_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon_matmul_kernel.py")
# the automatic form (``--auto``): ours resolves its layouts (``enable()``), or Triton's own resolution does
AUTO_MODES = ("auto_ours", "auto_triton")
IN_PLACE_MODES = ("ours_in_place",)
TEXT_MODES = ("ours_text",)
# what a mode sets in the environment before the plugin is on (the setting in_place; in Triton's
# cache key); ``ours_asm`` sets the study switch ``emit_nvidia.SHARED_ACCESS_FORM`` (in the key too)
MODE_ENVIRONMENT = {"ours_in_place": ("LINEAR_LAYOUTS_IN_PLACE", "1"), "ours_text": ("LINEAR_LAYOUTS_IN_PLACE", "0")}


def matmul_kernel(form: str = "as_written", arange: str = "coalesced"):
    """The kernel (``harness/gluon_matmul_kernel.py``) as written, or in the automatic form with
    ``arange``'s layout (``harness.peer_gluon_forms``)."""
    from harness.peer_gluon_forms import load_kernels
    return load_kernels(KERNEL_FILE, form, arange).matmul


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
    for variable, _ in MODE_ENVIRONMENT.values():
        os.environ.pop(variable, None)
    if mode in MODE_ENVIRONMENT:
        variable, value = MODE_ENVIRONMENT[mode]
        os.environ[variable] = value
    from linear_layouts.lowering.emit import emit_nvidia
    emit_nvidia.SHARED_ACCESS_FORM = "asm" if mode == "ours_asm" else "llvm"
    if mode in ("stock", "auto_triton"):
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
    results = {}
    try:
        kernel, results["arange"] = _kernel_for(mode)
    except Exception as error:          # the automatic form under a resolution that fails: say so
        results["failed"] = str(error).strip().splitlines()[-1][:300]
        with open(path, "w") as f:
            json.dump(results, f)
        return 0
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
        error = (c.float() - a.float() @ b.float()).abs().max().item()     # against an fp32 matmul
        ms = triton.testing.do_bench(launch, warmup=50, rep=300)
        results[f"{m}x{n}x{k}"] = {"ms": ms, "digest": digest, "max_error": error}
    plugin_on = mode not in ("stock", "auto_triton")
    results["islands"] = linear_layouts.stats().islands if plugin_on else 0
    results["resolved_by_ours"] = linear_layouts.stats().auto_layouts_resolved if plugin_on else 0
    with open(path, "w") as f:
        json.dump(results, f)
    return 0


def _kernel_for(mode: str):
    """(the kernel, the aranges' layout) for ``mode``: the automatic form's by the rule for other
    projects' kernels (``harness.peer_gluon_forms.by_the_arange_rule``), tried by compiling for a
    small launch."""
    if mode not in AUTO_MODES:
        return matmul_kernel(), ""
    import torch

    from harness.peer_gluon_forms import by_the_arange_rule
    m, n, k = BLOCK_M, BLOCK_N, BLOCK_K
    a = torch.zeros((m, k), device="cuda", dtype=torch.float16)
    b = torch.zeros((k, n), device="cuda", dtype=torch.float16)
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)

    def attempt(arange: str, rejected):
        kernel = matmul_kernel("auto", arange)
        try:
            kernel[(1, 1)](a, b, c, m, n, k, BLOCK_M, BLOCK_N, BLOCK_K, num_warps=WARPS)
        except Exception as error:      # the rule retries the front end's rejection; any other is raised
            return error, error
        return (kernel, arange), None
    outcome = by_the_arange_rule("auto", attempt)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _compile_for_sm90(form: str, arange: str):
    """((the compiled kernel, or the error it failed with; ``arange``), the error or None): one
    attempt of ``harness.peer_gluon_forms.by_the_arange_rule`` on the CPU."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    source = GluonASTSource(matmul_kernel(form, arange),
                            {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                             "K": "i32"}, {"BM": BLOCK_M, "BN": BLOCK_N, "BK": BLOCK_K},
                            attrs={(i,): [["tt.divisibility", 16]] for i in range(6)})
    try:
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": WARPS})
    except Exception as error:      # the rule retries the front end's rejection; any other is raised
        return (error, arange), error
    return (compiled, arange), None


def dry() -> str:
    """Compile the kernel for sm_90 in each mode (CPU): its conversions, our islands, and the
    accesses of its final code (global loads by width, shared accesses, ``ldmatrix``)."""
    import re

    from harness.peer_gluon_forms import by_the_arange_rule

    os.environ["TRITON_ALWAYS_COMPILE"] = "1"     # one process compiles the kernel once per mode
    words = (r"ld\.global\.v4", r"ld\.global\.(?:v2\.)?b32", r"ld\.global\.b16", r"ld\.shared",
             r"st\.shared", "ldmatrix", r"bar\.sync")
    lines = ["| mode | aranges | islands | ld.global.v4 / .b32 or .v2.b32 / .b16 | ld.shared / st.shared / "
             "ldmatrix / bar.sync |", "|---|---|---|---|---|"]
    for mode in MODES + IN_PLACE_MODES + TEXT_MODES + PER_CONVERSION + AUTO_MODES:
        _turn_on(mode)
        import linear_layouts
        before = linear_layouts.stats().islands
        form = "auto" if mode in AUTO_MODES else "as_written"
        compiled, arange = by_the_arange_rule(form, lambda arange, rejected: _compile_for_sm90(form, arange))
        if isinstance(compiled, Exception):
            raise compiled
        counts = [len(re.findall(word, compiled.asm["ptx"])) for word in words]
        lines.append(f"| {mode} | {arange if form == 'auto' else '-'} | {linear_layouts.stats().islands - before} | "
                     f"{' / '.join(map(str, counts[:3]))} | {' / '.join(map(str, counts[3:]))} |")
        linear_layouts.disable()
    _turn_on("stock")
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


def environment_prefix() -> str:
    """The plugin's variables set for this run that change what it emits, as a command's prefix
    (``LINEAR_LAYOUTS_ROUND_SCRATCH=0 ``), "" when none is."""
    names = ("LINEAR_LAYOUTS_ROUND_SCRATCH", "LINEAR_LAYOUTS_STOCK_GATE", "LINEAR_LAYOUTS_IN_PLACE")
    return "".join(f"{name}={os.environ[name]} " for name in names if os.environ.get(name))


def summary(runs: dict, rounds: int) -> str:
    import torch
    import triton

    timed = [mode for mode in runs if mode != "stock" and not any("failed" in r for r in runs[mode])]
    failed = {mode: runs[mode][0]["failed"] for mode in runs if any("failed" in r for r in runs[mode])}
    flags = "".join(f" {flag}" for flag, modes in (("--per-conversion", PER_CONVERSION), ("--auto", AUTO_MODES),
                                                   ("--in-place", IN_PLACE_MODES), ("--text", TEXT_MODES))
                    if any(mode in modes for mode in runs))
    lines = ["# A Gluon mma_v2 matmul: stock Triton, the plugin, the plugin's inline-PTX form"
             + (", the automatic form" if any(mode in AUTO_MODES for mode in runs) else ""), "",
             f"- {torch.cuda.get_device_name()}; triton {triton.__version__}, torch {torch.__version__}",
             f"- command: `{environment_prefix()}python benchmarks/gluon_forms_gpu.py matmul --rounds {rounds}{flags}`; tiles "
             f"{BLOCK_M}x{BLOCK_N}x{BLOCK_K}, {WARPS} warps, fp16 in, fp32 accumulate; each mode in its own process, "
             f"{rounds} rounds, order rotated; median of `do_bench` medians; `stock` is the kernel as written "
             "under Triton alone (the expert's layouts)", "",
             "| shape | stock ms |" + "".join(f" {mode} / stock |" for mode in timed) + " outputs |",
             "|---|---:|" + "---:|" * len(timed) + "---|"]
    for m, n, k in SHAPES:
        key = f"{m}x{n}x{k}"
        ms = {mode: statistics.median(r[key]["ms"] for r in runs[mode]) for mode in ["stock"] + timed}
        digests = {mode: {r[key]["digest"] for r in runs[mode]} for mode in ["stock"] + timed}
        differ = [mode for mode in timed if digests[mode] != digests["stock"]]
        errors = {mode: max(r[key]["max_error"] for r in runs[mode]) for mode in ["stock"] + differ}
        outputs = "bit-exact" if not differ else (
            f"bit-exact but {', '.join(differ)}; max error against an fp32 matmul: "
            + ", ".join(f"{mode} {errors[mode]:.3g}" for mode in errors))
        lines.append(f"| {key} | {ms['stock']:.4f} |" + "".join(f" {ms[mode] / ms['stock']:.3f} |" for mode in timed)
                     + f" {outputs} |")
    lines.append("")
    lines.append("- islands per process: " + ", ".join(f"{mode} {runs[mode][0]['islands']}" for mode in timed))
    for mode in timed:
        if mode in AUTO_MODES:
            lines.append(f"- {mode}: aranges `{runs[mode][0]['arange']}`"
                         + (f"; automatic layouts resolved by ours: {runs[mode][0]['resolved_by_ours']} kernel(s)"
                            if mode == "auto_ours" else "; Triton's own resolution"))
    for mode, why in failed.items():
        lines.append(f"- {mode}: does not compile: `{why}`")
    return "\n".join(lines) + "\n"


def options(parser) -> None:
    parser.add_argument("--per-conversion", action="store_true",
                        help="also time ours with each conversion in turn left to stock Triton")
    parser.add_argument("--in-place", action="store_true",
                        help="also time ours with its one-round shared-memory plans built in Triton's module")
    parser.add_argument("--text", action="store_true", help="also time ours with every island spliced as text")
    parser.add_argument("--auto", action="store_true",
                        help="also time the kernel's automatic form, resolved by ours and by Triton")


def cases(args, env) -> tuple:
    """The modes, each run in a process of its own."""
    return (MODES + (IN_PLACE_MODES if args.in_place else ()) + (TEXT_MODES if args.text else ())
            + (PER_CONVERSION if args.per_conversion else ())
            + (AUTO_MODES if args.auto else ()))


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
    name = ("gluon_matmul_auto_gpu.md" if args.auto else
            "gluon_matmul_in_place_gpu.md" if args.in_place else "gluon_matmul_gpu.md")
    publish(text, os.path.join(args.out, name) if args.out else "")
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
                         rounds=3, out_default="", out_help="write the report here too (default: print it only)",
                         prog="gluon_forms_gpu.py matmul")


if __name__ == "__main__":
    sys.exit(main())
