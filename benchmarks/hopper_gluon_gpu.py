"""Hopper-class Gluon kernels (TMA, mbarrier, wgmma, persistent loops) in every mode, side by side,
with the timing method's own noise measured in the same run.

    python benchmarks/hopper_gluon_gpu.py --out benchmarks/results      # GPU (H100/H200): check and time
    python benchmarks/hopper_gluon_gpu.py --dry                         # CPU: compile every mode for its target

The kernels are ``test/support/hopper_gluon_kernels.py`` (written for this check, none tuned on):
each has an expert form (every layout spelled out) and an automatic form (one rule: every layout
the hardware does not force is ``gl.AutoLayout()``).  The modes, each compiled in this process
with ``TRITON_ALWAYS_COMPILE=1`` (no binary of one mode reaches another):

* ``expert``: as written, plugin off;
* ``enable``: as written, ``linear_layouts.enable()``;
* ``advice``: as written, ``linear_layouts.enable(apply_advice=True)``;
* ``auto_ours``: the automatic form, ``linear_layouts.enable(resolve_auto_layouts=True)``;
* ``auto_triton``: the automatic form, plugin off (Gluon's own resolution; its error where it fails).

On the GPU, every mode's output is compared with the expert's (bit for bit; the modes change only
where data sits between the same arithmetic).  Then ``--rounds`` rounds: in each, every mode and
``expert_again`` (the expert's very binary, timed as if it were another mode: the A/A run) are
timed with ``triton.testing.do_bench_cudagraph`` (median), in an order that rotates from round to
round.  A mode's ratio is the median over rounds of its time over the expert's in the same round;
the A/A ratio's spread over rounds is the noise every other ratio is read against.  Writes
``hopper_gluon_gpu.md`` and ``.json`` to ``--out``; exit status 1 when a mode that compiled
gives a different output, or the expert fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
import warnings

os.environ.setdefault("TRITON_ALWAYS_COMPILE", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import triton  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.passes.plugin_stats import reset_stats  # noqa: E402
from support import hopper_gluon_kernels as kernels  # noqa: E402

MODES = {
    "expert": (False, None),
    "enable": (False, {}),
    "advice": (False, {"apply_advice": True}),
    "auto_ours": (True, {"resolve_auto_layouts": True}),
    "auto_triton": (True, None),
}
PTX_COUNTS = {"st.global.v4": r"st\.global\.v4", "st.global (scalar)": r"st\.global\.b16",
              "ld.shared.v4": r"ld\.shared\.v4", "ld.shared.b16": r"ld\.shared\.b16",
              "ldmatrix": r"ldmatrix", "stmatrix": r"stmatrix"}


def compile_mode(name: str, mode: str, target=None):
    """(CompiledKernel or None, error or "", plugin's fallback reasons).  ``target``: the GPU's
    own (a cubin for sm_80 does not load on sm_90); default, the kernel's."""
    auto, options = MODES[mode]
    reset_stats()
    if options is not None:
        linear_layouts.enable(**options)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return triton.compile(kernels.source(name, auto), target=target or kernels.target(name)), "", \
                [f.reason for f in linear_layouts.stats().fallbacks] if options is not None else []
    except Exception as error:  # a mode that does not compile is a row of the table
        lines = [line for line in str(error).splitlines() if "error:" in line] or str(error).splitlines() or [""]
        return None, lines[0].strip()[:160], []
    finally:
        if options is not None:
            linear_layouts.disable()


# --------------------------------------------------------------------------- launches (GPU)

def problem(name: str, torch):
    """(grid, args, output tensor) of one launch of kernel ``name`` on fixed random inputs."""
    from triton.experimental.gluon.language import NVMMASharedLayout
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    import triton.experimental.gluon.language as gl
    g = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, device="cuda", generator=g, dtype=torch.float16)

    def desc(t, block):
        return TensorDescriptor(t, list(t.shape), list(t.stride()), list(block),
                                NVMMASharedLayout.get_default_for(list(block), gl.float16))

    if name == "pipelined_matmul":
        M = N = K = 4096
        a, b, c = randn(M, K), randn(K, N), torch.empty(M, N, device="cuda", dtype=torch.float16)
        return (M // 64, N // 128, 1), [desc(a, (64, 64)), desc(b, (64, 128)), c, K, N], c
    if name == "transpose_epilogue":
        M = N = 4096
        K = 256
        a, b = randn(M, K), randn(K, N)
        c = torch.empty(N, M, device="cuda", dtype=torch.float16)
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        return (sms, 1, 1), [desc(a, (64, 64)), desc(b, (64, 64)), desc(c, (64, 64)), M, N, K], c
    if name == "wgmma_epilogue":
        # one 64x64 tile; launched on many programs (each computes the same tile) so that the
        # timing is of the GPU's work, not of the launch
        a, b = randn(64, 64), randn(64, 64)
        bias = torch.randn(64, device="cuda", generator=g)
        c = torch.empty(64, 64, device="cuda", dtype=torch.float16)
        return (4096, 1, 1), [a, b, bias, c], c
    if name == "mma_v2_epilogue":
        a, b = randn(64, 32), randn(32, 64)
        c = torch.empty(64, 64, device="cuda", dtype=torch.float16)
        return (4096, 1, 1), [a, b, c], c
    raise KeyError(name)


def run_gpu(rounds: int) -> dict:
    import torch
    results = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__, "rounds": rounds,
               "kernels": {}}
    gpu = triton.runtime.driver.active.get_current_target()
    for name in kernels.KERNELS:
        row = results["kernels"][name] = {"modes": {}}
        grid, args, out = problem(name, torch)
        launches = {}
        expected = None
        for mode in MODES:
            compiled, error, fallbacks = compile_mode(name, mode, gpu)
            entry = row["modes"][mode] = {"error": error, "fallbacks": fallbacks}
            if compiled is None:
                continue
            entry["ptx"] = {k: len(re.findall(p, compiled.asm["ptx"])) for k, p in PTX_COUNTS.items()}
            launch = (lambda k=compiled: k[grid](*args))
            out.zero_()
            launch()
            torch.cuda.synchronize()
            if expected is None:
                expected = out.clone()
            entry["bit_exact"] = bool(torch.equal(out, expected))
            entry["max_abs_diff"] = float((out.float() - expected.float()).abs().max())
            launches[mode] = launch
        if "expert" in launches:
            launches["expert_again"] = launches["expert"]
        times: dict[str, list[float]] = {m: [] for m in launches}
        order = list(launches)
        for r in range(rounds):
            shift = r % len(order)
            for mode in order[shift:] + order[:shift]:
                times[mode].append(triton.testing.do_bench_cudagraph(launches[mode], rep=40, return_mode="median"))
        for mode, series in times.items():
            ratios = [t / e for t, e in zip(series, times["expert"])]
            row["modes"].setdefault(mode, {})
            row["modes"][mode].update({"ms": series, "ratio": statistics.median(ratios),
                                       "ratio_range": [min(ratios), max(ratios)]})
    return results


def table(results: dict) -> str:
    lines = [f"# Hopper-class Gluon kernels: every mode against the expert's layouts",
             "",
             f"{results.get('device', 'CPU (compile only)')}, triton {results['triton']}; "
             f"{results.get('rounds', 0)} rounds, modes rotated; "
             "`python benchmarks/hopper_gluon_gpu.py --out benchmarks/results`.",
             "",
             "A ratio is the median over rounds of the mode's time over the expert's in the same round; "
             "`expert_again` is the expert's own binary timed as another mode (the A/A run): its spread is the noise.",
             "",
             "| kernel | mode | compiles | bit-exact | x expert (median) | range over rounds | PTX accesses | note |",
             "|---|---|---|---|---|---|---|---|"]
    for name, row in results["kernels"].items():
        for mode, entry in row["modes"].items():
            ok = "no" if entry.get("error") else "yes"
            ratio = f"{entry['ratio']:.3f}" if "ratio" in entry else ""
            spread = "{:.3f}-{:.3f}".format(*entry["ratio_range"]) if "ratio_range" in entry else ""
            ptx = ", ".join(f"{k} {v}" for k, v in entry.get("ptx", {}).items() if v)
            note = entry.get("error") or "; ".join(entry.get("fallbacks", []))[:120]
            exact = {True: "yes", False: "NO"}.get(entry.get("bit_exact"), "")
            lines.append(f"| {name} | {mode} | {ok if mode != 'expert_again' else ''} | {exact} | {ratio} | {spread} "
                         f"| {ptx} | {note} |")
    return "\n".join(lines) + "\n"


def run_dry() -> dict:
    results = {"triton": triton.__version__, "kernels": {}}
    for name in kernels.KERNELS:
        row = results["kernels"][name] = {"modes": {}}
        for mode in MODES:
            compiled, error, fallbacks = compile_mode(name, mode)
            entry = row["modes"][mode] = {"error": error, "fallbacks": fallbacks}
            if compiled is not None:
                entry["ptx"] = {k: len(re.findall(p, compiled.asm["ptx"])) for k, p in PTX_COUNTS.items()}
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry", action="store_true", help="no GPU: compile every mode and print the table")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (modes rotated)")
    parser.add_argument("--out", default="", help="folder to write hopper_gluon_gpu[_dry].md and .json to")
    args = parser.parse_args(argv)
    start = time.time()
    results = run_dry() if args.dry else run_gpu(args.rounds)
    results["seconds"] = round(time.time() - start, 1)
    text = table(results)
    print(text)
    if args.out:
        stem = os.path.join(args.out, "hopper_gluon_gpu" + ("_dry_" + triton.__version__ if args.dry else ""))
        with open(stem + ".md", "w") as f:
            f.write(text)
        with open(stem + ".json", "w") as f:
            json.dump(results, f, indent=1)
    bad = [(n, m) for n, row in results["kernels"].items() for m, e in row["modes"].items()
           if e.get("bit_exact") is False or (m == "expert" and e.get("error"))]
    for name, mode in bad:
        print(f"hopper_gluon_gpu: {name} {mode}: differs from the expert or failed", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
