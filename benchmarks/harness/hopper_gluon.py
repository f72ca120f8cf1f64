"""Hopper-class Gluon kernels (TMA, mbarrier, wgmma, persistent loops) in every mode, side by side,
with the timing method's own noise measured in the same run.

    python benchmarks/peer_gluon_gpu.py hopper --out benchmarks/results   # GPU (H100/H200): check and time
    python benchmarks/peer_gluon_gpu.py hopper --dry                      # CPU: compile every mode for its target

The kernels: our own four, ``benchmarks/harness/hopper_kernels.py`` (written for this check, none
tuned on), each with an expert form (every layout spelled out) and an automatic form (one rule:
every layout the hardware does not force is ``gl.AutoLayout()``); and ``harness/hopper_cases.py``'s:
Triton's Hopper Gluon tutorials of v3.6.0 (TMA, wgmma, persistent, warp-specialized) and the Hopper
Gluon kernels of FlagDNN, LMDeploy and gpt-oss-gluon, each launched as its project launches it,
their automatic form made by that module's stated AST rule.  Their sources are carried, not
committed: ``python benchmarks/harness/carry_gluon_tutorials.py --from-git <triton .git>`` and
``python benchmarks/harness/carry_hopper_sources.py --mirrors <dir>`` write them to ``.peer-tests/``
(name ``.peer-tests`` in the device tool's ``carry``); a case whose source is not carried is a row
saying so.  The modes, each compiled in this process with ``TRITON_ALWAYS_COMPILE=1`` (no binary of
one mode reaches another):

* ``expert``: as written, plugin off;
* ``enable``: as written, ``linear_layouts.enable()``;
* ``advice``: as written, ``linear_layouts.enable(apply_advice=True)``;
* ``auto_ours``: the automatic form, ``linear_layouts.enable(resolve_auto_layouts=True)``;
* ``auto_triton``: the automatic form, plugin off (Gluon's own resolution; its error where it fails).

On the GPU, every mode's output is compared with the expert's (bit for bit; the modes change only
where data sits between the same arithmetic; a case with a ``tolerance`` - an attention whose
row sums may add in another order - also passes within it).  Then ``--rounds`` rounds: in each, every mode and
``expert_again`` (the expert's very binary, timed as if it were another mode: the A/A run) are
timed with ``triton.testing.do_bench_cudagraph`` (median), in an order that rotates from round to
round.  A mode's ratio is the median over rounds of its time over the expert's in the same round;
the A/A ratio's spread over rounds is the noise every other ratio is read against.  Writes
``hopper_gluon_gpu.md`` and ``.json.gz`` to ``--out``; exit status 1 when a mode that compiled
gives a different output, or the expert fails.

``--only NAME ...`` runs the kernels whose name contains one of the NAMEs (``ours`` for our own
four); ``--merge`` adds the run's kernels to the ``.json.gz`` already at ``--out`` (and rewrites the
``.md`` from the union): the device tool's ten-minute commands can then run the set in parts.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import statistics
import sys
import time
import warnings

os.environ.setdefault("TRITON_ALWAYS_COMPILE", "1")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))    # benchmarks/

from harness.common import require_package  # noqa: E402

require_package()

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in.plugin_stats import reset_stats  # noqa: E402

from harness import hopper_cases  # noqa: E402
from harness import hopper_kernels as kernels  # noqa: E402
from harness.peer_gluon_forms import front_end_rejects  # noqa: E402

MODES = {
    "expert": (False, None),
    "enable": (False, {}),
    "advice": (False, {"apply_advice": True}),
    "auto_ours": (True, {"resolve_auto_layouts": True}),
    "auto_triton": (True, None),
}
SM90 = GPUTarget("cuda", 90, 32)
PTX_COUNTS = {"st.global.v4": r"st\.global\.v4", "st.global (scalar)": r"st\.global\.b16",
              "ld.shared.v4": r"ld\.shared\.v4", "ld.shared.b16": r"ld\.shared\.b16",
              "ldmatrix": r"ldmatrix", "stmatrix": r"stmatrix"}


def _compile(mode: str, build, target):
    """(CompiledKernel or None, error or "", plugin's fallback reasons, the exception or None);
    ``build()`` -> (source, compile options or None), made with the plugin already as ``mode`` has it
    (a case's source is loaded inside, so its loading errors are the mode's)."""
    _auto, options = MODES[mode]
    reset_stats()
    if options is not None:
        linear_layouts.enable(**options)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            src, compile_options = build()
            return triton.compile(src, target=target, options=compile_options), "", \
                [f.reason for f in linear_layouts.stats().fallbacks] if options is not None else [], None
    except Exception as error:  # a mode that does not compile is a row of the table
        text = [line.strip() for line in str(error).splitlines() if line.strip()] or [""]
        # MLIR's own "error:" line; else a front-end error's cause (its last line, after the source excerpt)
        line = next((t for t in text if "error:" in t), text[-1] if front_end_rejects(error) else text[0])
        return None, f"{type(error).__name__}: {line}"[:240], [], error
    finally:
        if options is not None:
            linear_layouts.disable()


def compile_mode(name: str, mode: str, target=None):
    """(CompiledKernel or None, error or "", plugin's fallback reasons) of our kernel ``name``.
    ``target``: the GPU's own (a cubin for sm_80 does not load on sm_90); default, the kernel's."""
    auto = MODES[mode][0]
    compiled, error, fallbacks, _ = _compile(mode, lambda: (kernels.source(name, auto), None),
                                             target or kernels.target(name))
    return compiled, error, fallbacks


def compile_case(case, mode: str, target=None):
    """(CompiledKernel or None, error or "", fallback reasons, {"replaced", "arange"}) of a
    ``hopper_cases`` case in ``mode``; the automatic form by the arange rule (CoalescedLayout
    aranges, AutoLayout ones only where Gluon's front end rejects those)."""
    auto = MODES[mode][0]
    facts = {}

    def attempt(arange):
        def build():
            src, options, facts["replaced"] = hopper_cases.source(case, auto, arange)
            return src, options
        facts["arange"] = arange
        return _compile(mode, build, target or SM90)

    compiled, error, fallbacks, exception = attempt("coalesced")
    if auto and front_end_rejects(exception):
        compiled, error, fallbacks, exception = attempt("auto")
    if not auto:
        facts.pop("arange", None)
    return compiled, error, fallbacks, facts


def selected(only=None):
    """[(row name, our kernel name or a case)]: our four, then the cases, filtered by ``only``."""
    rows = [(name, name) for name in kernels.KERNELS] + [(case.name, case) for case in hopper_cases.cases()]
    if only:
        rows = [(n, k) for n, k in rows if any(o in n or (o == "ours" and isinstance(k, str)) for o in only)]
    return rows


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
    if name in ("wgmma_epilogue", "wgmma_direct_epilogue"):
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


def launch_of(row, compiled, torch, sms):
    """(grid, runtime arguments, [tensors written]) of one launch of ``row`` (our kernel's name or
    a case) on fixed random inputs."""
    if isinstance(row, str):
        grid, args, out = problem(row, torch)
        return grid, args, [out]
    grid, values, outs = row.inputs(torch, sms)
    return grid, hopper_cases.runtime_args(row, compiled.src.fn.arg_names, values), outs


def _entry(compiled, error, fallbacks, facts=None) -> dict:
    entry = {"error": error, "fallbacks": fallbacks, **(facts or {})}
    if compiled is not None:
        entry["ptx"] = {k: len(re.findall(p, compiled.asm["ptx"])) for k, p in PTX_COUNTS.items()}
    return entry


def _compile_row(row, mode, target=None):
    if isinstance(row, str):
        compiled, error, fallbacks = compile_mode(row, mode, target)
        return compiled, _entry(compiled, error, fallbacks)
    compiled, error, fallbacks, facts = compile_case(row, mode, target)
    return compiled, _entry(compiled, error, fallbacks, facts)


def _about(row) -> dict:
    if isinstance(row, str):
        return {"project": "ours", "source": "benchmarks/harness/hopper_kernels.py"}
    return {"project": row.project, "source": os.path.relpath(row.file, os.path.join(HERE, "..")),
            "kernel": row.kernel, "shapes": row.shapes, "tolerance": row.tolerance}


def run_gpu(rounds: int, only=None) -> dict:
    import torch
    results = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__, "rounds": rounds,
               "kernels": {}}
    gpu = triton.runtime.driver.active.get_current_target()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for name, row in selected(only):
        entry_row = results["kernels"][name] = {**_about(row), "modes": {}}
        why = None if isinstance(row, str) else row.why_not_available()
        if isinstance(row, str) and kernels.target(row).arch > gpu.arch:
            why = f"written for sm_{kernels.target(row).arch}; this GPU is sm_{gpu.arch}"
        if why:
            entry_row["skipped"] = why
            continue
        launches = {}
        expected = None
        inputs = None
        tolerance = None if isinstance(row, str) else row.tolerance
        for mode in MODES:
            compiled, entry = _compile_row(row, mode, gpu)
            entry_row["modes"][mode] = entry
            if compiled is None:
                continue
            if inputs is None:
                inputs = launch_of(row, compiled, torch, sms)
            grid, args, outs = inputs
            launch = (lambda k=compiled, grid=grid, args=args: k[grid](*args))
            for out in outs:
                out.zero_()
            try:
                launch()
                torch.cuda.synchronize()
            except Exception as error:  # a launch that fails is a row too
                entry["error"] = f"launch: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
                continue
            if expected is None:
                expected = [out.clone() for out in outs]
            entry["bit_exact"] = all(bool(torch.equal(o, e)) for o, e in zip(outs, expected))
            entry["max_abs_diff"] = max(float((o.float() - e.float()).abs().max()) for o, e in zip(outs, expected))
            if tolerance is not None:
                entry["within_tolerance"] = entry["max_abs_diff"] <= tolerance
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
            if "expert" not in times:
                break
            ratios = [t / e for t, e in zip(series, times["expert"])]
            entry_row["modes"].setdefault(mode, {})
            entry_row["modes"][mode].update({"ms": series, "ratio": statistics.median(ratios),
                                             "ratio_range": [min(ratios), max(ratios)]})
        del launches, inputs, expected
        torch.cuda.empty_cache()
    return results


def _note(entry: dict) -> str:
    parts = []
    if entry.get("error"):
        parts.append(entry["error"])
    if "replaced" in entry and "arange" in entry:
        parts.append(f"rule replaced {entry['replaced']}, aranges {entry['arange']}")
    if entry.get("fallbacks"):
        parts.append("; ".join(entry["fallbacks"])[:120])
    if "within_tolerance" in entry and not entry.get("bit_exact"):
        parts.append("within tolerance" if entry["within_tolerance"] else "OUTSIDE tolerance")
    return "; ".join(parts).replace("|", "\\|")


def table(results: dict) -> str:
    lines = [f"# Hopper-class Gluon kernels: every mode against the expert's layouts",
             "",
             f"{results.get('device', 'CPU (compile only, sm_90)')}, triton {results['triton']}; "
             f"{results.get('rounds', 0)} rounds, modes rotated; "
             "`python benchmarks/peer_gluon_gpu.py hopper --out benchmarks/results`"
             + (" --dry" if "device" not in results else "") + ".",
             "",
             "A ratio is the median over rounds of the mode's time over the expert's in the same round; "
             "`expert_again` is the expert's own binary timed as another mode (the A/A run): its spread is the noise. "
             "`rule replaced N`: how many layout calls the automatic form's rule replaced (0: the automatic form "
             "is the kernel as written).",
             "",
             "| kernel | mode | compiles | bit-exact | x expert (median) | range over rounds | PTX accesses | note |",
             "|---|---|---|---|---|---|---|---|"]
    for name, row in results["kernels"].items():
        if row.get("skipped"):
            lines.append(f"| {name} | | | | | | | not run: {row['skipped']} |")
        for mode, entry in row["modes"].items():
            ok = "no" if entry.get("error") else "yes"
            ratio = f"{entry['ratio']:.3f}" if "ratio" in entry else ""
            spread = "{:.3f}-{:.3f}".format(*entry["ratio_range"]) if "ratio_range" in entry else ""
            ptx = ", ".join(f"{k} {v}" for k, v in entry.get("ptx", {}).items() if v)
            exact = {True: "yes", False: "NO"}.get(entry.get("bit_exact"), "")
            lines.append(f"| {name} | {mode} | {ok if mode != 'expert_again' else ''} | {exact} | {ratio} | {spread} "
                         f"| {ptx} | {_note(entry)} |")
    lines += summary(results)
    cases = [(n, r) for n, r in results["kernels"].items() if r.get("project") not in (None, "ours")]
    if cases:
        lines += ["", "## The kernels of others", "",
                  "Sources carried as pinned (`harness/carry_gluon_tutorials.py`: triton v3.6.0 `4b184ccc`, MIT; "
                  "`harness/carry_hopper_sources.py`: the MANIFEST of each project's repository, commit and license).",
                  "", "| kernel | source | launch |", "|---|---|---|"]
        lines += [f"| {n} | `{r['source']}` | {r.get('shapes', '')} |" for n, r in cases]
    return "\n".join(lines) + "\n"


def summary(results: dict) -> list[str]:
    """Per mode: how many kernels were timed, the geometric mean of their ratios, the worst one;
    the A/A row (``expert_again``) first, since every other ratio is read against its spread."""
    timed = {mode: [(n, row["modes"][mode]) for n, row in results["kernels"].items()
                    if "ratio" in row.get("modes", {}).get(mode, {})] for mode in ("expert_again", *MODES)}
    timed = {mode: rows for mode, rows in timed.items() if rows and mode != "expert"}
    if not timed:
        return []
    lines = ["", "## Summary", "",
             "| mode | kernels timed | geomean x expert | worst (kernel) | worst end of a range over rounds |",
             "|---|---|---|---|---|"]
    for mode, rows in timed.items():
        geomean = math.exp(sum(math.log(e["ratio"]) for _, e in rows) / len(rows))
        worst_name, worst = max(rows, key=lambda item: item[1]["ratio"])
        top = max(e["ratio_range"][1] for _, e in rows)
        lines.append(f"| {mode} | {len(rows)} | {geomean:.3f} | {worst['ratio']:.3f} ({worst_name}) | {top:.3f} |")
    return lines


def run_dry(only=None) -> dict:
    results = {"triton": triton.__version__, "kernels": {}}
    for name, row in selected(only):
        entry_row = results["kernels"][name] = {**_about(row), "modes": {}}
        why = None if isinstance(row, str) else row.why_not_available()
        if why:
            entry_row["skipped"] = why
            continue
        for mode in MODES:
            _compiled, entry_row["modes"][mode] = _compile_row(row, mode)
            print(f"hopper_gluon_gpu: {name} {mode}: {'compiles' if not entry_row['modes'][mode]['error'] else 'fails'}",
                  file=sys.stderr, flush=True)
    return results


def read_results(path: str) -> dict:
    """A results file this script wrote (``.json.gz``; a plain ``.json`` read too)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="peer_gluon_gpu.py hopper", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry", action="store_true", help="no GPU: compile every mode for sm_90 and print the table")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (modes rotated)")
    parser.add_argument("--out", default="", help="folder to write hopper_gluon_gpu[_dry_<triton>].md and .json.gz to")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="kernels whose name contains a NAME ('ours': our four)")
    parser.add_argument("--merge", action="store_true", help="add to the .json.gz already at --out instead of replacing it")
    parser.add_argument("--table", metavar="JSON_GZ", help="no run: print the table of a results file written before")
    args = parser.parse_args(argv)
    if args.table:
        print(table(read_results(args.table)), end="")
        return 0
    start = time.time()
    results = run_dry(args.only) if args.dry else run_gpu(args.rounds, args.only)
    results["seconds"] = round(time.time() - start, 1)
    stem = os.path.join(args.out, "hopper_gluon_gpu" + ("_dry_" + triton.__version__ if args.dry else "")) \
        if args.out else ""
    if stem and args.merge and os.path.exists(stem + ".json.gz"):
        previous = read_results(stem + ".json.gz")
        results["kernels"] = {**previous.get("kernels", {}), **results["kernels"]}
        results["seconds"] = round(previous.get("seconds", 0) + results["seconds"], 1)
    text = table(results)
    print(text)
    if stem:
        with open(stem + ".md", "w") as f:
            f.write(text)
        with gzip.open(stem + ".json.gz", "wt") as f:
            json.dump(results, f, separators=(",", ":"))
    bad = [(n, m) for n, row in results["kernels"].items() for m, e in row["modes"].items()
           if (e.get("bit_exact") is False and not e.get("within_tolerance")) or (m == "expert" and e.get("error"))]
    for name, mode in bad:
        print(f"hopper_gluon_gpu: {name} {mode}: differs from the expert or failed", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
