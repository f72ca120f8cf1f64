"""Four Gluon kernels of our own written with automatic layouts, resolved by us and by Triton,
against an expert's layouts and a newcomer's: on the GPU.  Run through
``gluon_forms_gpu.py`` (the Gluon harness; this is its ``kernels`` suite):

    python benchmarks/gluon_forms_gpu.py kernels --out benchmarks/results   # H100/H200: times
    python benchmarks/gluon_forms_gpu.py kernels --dry                      # CPU: compile every form for sm_90 (printed)
    python benchmarks/gluon_forms_gpu.py kernels --dry --out benchmarks/results   # ... and written, the committed file

The kernels and their three forms (one rule, stated in ``gluon_auto_kernels.py`` before
measuring): copy, transpose, column sum, row softmax.  Modes, each in its own process with an
empty Triton cache, alternated for ``--rounds`` rounds (``mode_rounds``):

* ``expert``: the expert form, stock Triton;
* ``auto_ours``: the auto form with ``linear_layouts.enable(resolve_auto_layouts=True)``
  (``ll-resolve-auto-layouts``, then our lowering of the conversions it leaves);
* ``auto_triton``: the auto form, stock Triton (its own resolution; where it rejects the
  kernel, the error is recorded);
* ``newcomer``: the newcomer form (one element per thread), stock Triton;
* ``newcomer_advised``: the newcomer form with the report's layout advice applied
  (``linear_layouts.enable(apply_advice=True)``: ``ll-apply-advice``); the summary says how much
  of the newcomer-to-expert gap it recovers (``gluon_forms.gap_recovery``).

Per kernel: medians over rounds of ``do_bench`` medians, each mode over ``expert``, whether the
outputs are bit-identical to the expert's, and equal to torch's reference (the copy, the
transpose and the column sum: exact, the inputs are small integers) or within ``atol=1e-6,
rtol=1e-5`` of it (the softmax), and whether our resolution fell back to Triton's.  ``--dry`` compiles each form for sm_90 on the CPU and
reports what compiles (and what stock's resolution rejects), nothing timed; it prints its table
and writes ``gluon_auto_dry_<triton>.md`` only where ``--out`` says (the committed one is a result:
a dry run to look at what compiles must not rewrite it).  The GPU run writes to ``--out``, by
default ``benchmarks/results``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import warnings

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from harness.common import require_package, publish, scratch_directory
from harness.gluon_forms import gap_recovery
from harness.gluon_modes import FORM_OF, MODES, enable_for

COPY_N = 64 * 1024 * 1024
M, N = 8192, 8192
SOFTMAX_M = 8192


def _first_line(error: BaseException, stderr: str = "") -> str:
    """Triton's first diagnostic (MLIR prints them on fd 2), else the exception's first line."""
    text = stderr + "\n" + str(error)
    lines = [line.split("error: ", 1)[1].strip() for line in text.splitlines() if "error: " in line] or \
        [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    return lines[0][:160].replace("|", "/")


# --------------------------------------------------------------------------- the GPU child

def _inputs(case, torch):
    """(arguments, output tensor, grid) of one case; inputs small integers as floats."""
    def ints(*shape):
        return torch.randint(-8, 8, shape, device="cuda", dtype=torch.int32).to(torch.float32)
    if case.name == "copy":
        x, y = ints(COPY_N), torch.empty(COPY_N, device="cuda")
        return (x, y), y, (COPY_N // case.constexprs["BLOCK"],)
    if case.name == "transpose":
        x, y = ints(M, N), torch.empty(N, M, device="cuda")
        return (x, y, M, N), y, (M // case.constexprs["BM"], N // case.constexprs["BN"])
    if case.name == "column_sum":
        x, y = ints(M, N), torch.empty(N, device="cuda")
        return (x, y, M, N), y, (N // case.constexprs["BN"],)
    x, y = ints(SOFTMAX_M, case.constexprs["N"]) / 8, torch.empty(SOFTMAX_M, case.constexprs["N"], device="cuda")
    return (x, y), y, (SOFTMAX_M // case.constexprs["BM"],)


def child(mode: str, out_path: str) -> None:
    """Compile and time every case in one mode; write times, outputs' digests and errors."""
    require_package()
    import torch
    import triton

    import linear_layouts
    from harness.gluon_auto_kernels import WARPS, cases
    from linear_layouts.passes.ir.diagnostics import CapturedStderr
    enable_for(mode)
    torch.manual_seed(0)
    results = {}
    for case in cases():
        args, out, grid = _inputs(case, torch)
        constexprs = {**case.constexprs, **case.layouts[FORM_OF[mode]]}
        before = len(linear_layouts.stats().fallbacks)

        def launch():
            return case.kernel[grid](*args, **constexprs, num_warps=WARPS)
        try:
            with warnings.catch_warnings(), CapturedStderr() as stderr:
                warnings.simplefilter("ignore")
                launch()
            torch.cuda.synchronize()
        except Exception as error:  # stock's resolution rejects the auto form: recorded
            results[case.name] = {"error": _first_line(error, stderr.text)}
            continue
        fell_back = len(linear_layouts.stats().fallbacks) > before
        expected = _reference(case.name, args[0], torch)
        ms = triton.testing.do_bench(launch, warmup=25, rep=100)
        results[case.name] = {"ms": ms, "digest": _digest(out, torch), "fell_back": fell_back,
                              "equal_reference": bool(torch.equal(out, expected)),
                              "close_reference": bool(torch.allclose(out, expected, atol=1e-6, rtol=1e-5))}
    with open(out_path, "w") as f:
        json.dump(results, f)


def _reference(name: str, x, torch):
    """What the kernel computes, by torch (exact for the copy, transpose and column sum: the
    inputs are small integers)."""
    if name == "copy":
        return x
    if name == "transpose":
        return x.t().contiguous()
    if name == "column_sum":
        return x.sum(dim=0)
    return torch.softmax(x, dim=1)


def _digest(out, torch) -> int:
    bits = out.view(torch.int32).to(torch.int64).flatten()
    return int(bits.sum().item() * 1_000_003 + (bits * torch.arange(bits.numel(), device=bits.device)).sum().item())


# --------------------------------------------------------------------------- the summary

def summarize(runs: dict) -> list[dict]:
    """Per kernel: medians per mode, errors, and per mode whether its output is bit-identical
    to the expert's and equal (or close) to torch's reference."""
    rows = []
    for name in runs["expert"][0]:
        row = {"name": name, "ms": {}, "error": {}, "exact": {}, "close": {}, "reference": {}, "fell_back": False}
        for mode in MODES:
            first = runs[mode][0].get(name, {})
            if "error" in first:
                row["error"][mode] = first["error"]
                continue
            row["ms"][mode] = statistics.median(r[name]["ms"] for r in runs[mode])
            row["exact"][mode] = all(r[name]["digest"] == runs["expert"][0][name]["digest"] for r in runs[mode])
            row["close"][mode] = all(r[name]["close_reference"] for r in runs[mode])
            row["reference"][mode] = all(r[name]["equal_reference"] for r in runs[mode])
            row["fell_back"] |= mode in ("auto_ours", "newcomer_advised") and first.get("fell_back", False)
        rows.append(row)
    return rows


def render(rows: list[dict], rounds: int, device: str, versions: str) -> str:
    geo = lambda xs: statistics.geometric_mean(xs) if xs else float("nan")   # noqa: E731
    ratio = lambda r, m: r["ms"][m] / r["ms"]["expert"] if m in r["ms"] and "expert" in r["ms"] else None  # noqa: E731
    ours = [ratio(r, "auto_ours") for r in rows if ratio(r, "auto_ours") is not None]
    both = [(ratio(r, "auto_ours"), ratio(r, "auto_triton")) for r in rows
            if ratio(r, "auto_ours") is not None and ratio(r, "auto_triton") is not None]
    pairs = [(ratio(r, "newcomer"), ratio(r, "newcomer_advised")) for r in rows
             if ratio(r, "newcomer") is not None and ratio(r, "newcomer_advised") is not None]
    lines = ["# Gluon's automatic layouts on the GPU: ours, Triton's, an expert's, a newcomer's", "",
             f"- {device}; {versions}",
             f"- command: `python benchmarks/gluon_forms_gpu.py kernels --rounds {rounds}`; forms made by the rule in "
             "`benchmarks/harness/gluon_auto_kernels.py` before measuring; medians over rounds of `do_bench` medians; "
             "each mode in its own process with an empty Triton cache",
             f"- auto with ours / expert: geomean **{geo(ours):.3f}**, worst **{max(ours, default=float('nan')):.3f}** "
             f"over {len(ours)} kernels",
             f"- Triton's resolution compiles {len(both)} of {len(rows)} auto forms"
             + (f"; ours / Triton's geomean **{geo([a / b for a, b in both]):.3f}**, "
                f">= 10% faster on {sum(a <= 0.9 * b for a, b in both)}" if both else ""),
             f"- outputs: ours bit-identical to the expert's on {sum(bool(r['exact'].get('auto_ours')) for r in rows)}"
             f"/{len(rows)}; every mode that compiles equal to or within tolerance of torch's reference: "
             f"**{'yes' if all(all(r['close'].values()) for r in rows) else 'NO'}**",
             f"- newcomer / expert geomean **{geo([ratio(r, 'newcomer') for r in rows if ratio(r, 'newcomer')]):.3f}**",
             f"- newcomer with the advice applied / expert geomean **{geo([p[1] for p in pairs]):.3f}**; gap recovered "
             f"**{gap_recovery([p[0] for p in pairs], [p[1] for p in pairs]):.2f}** (goal >= 0.90; "
             "(newcomer - advised) / (newcomer - expert), geomeans over the kernels both compile)",
             "", "| kernel | expert ms | auto ours ms | auto Triton ms | newcomer ms | advised ms | ours/expert | "
             "Triton/expert | newcomer/expert | advised/expert | ours = expert bit for bit / vs torch | notes |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        cell = lambda m: f"{r['ms'][m]:.4f}" if m in r["ms"] else "fails"   # noqa: E731
        rat = lambda m: f"{ratio(r, m):.3f}" if ratio(r, m) is not None else "-"   # noqa: E731
        exact = ("yes" if r["exact"].get("auto_ours") else "no") + " / " + (
            "equal" if r["reference"].get("auto_ours") else "close" if r["close"].get("auto_ours") else "NOT close")
        notes = "; ".join(f"{m}: {e}" for m, e in r["error"].items()) + ("; ours fell back to Triton's" if r["fell_back"] else "")
        if "newcomer_advised" in r["exact"] and not r["close"].get("newcomer_advised"):
            notes += "; advised: NOT close to torch's"
        lines.append(f"| {r['name']} | {cell('expert')} | {cell('auto_ours')} | {cell('auto_triton')} | "
                     f"{cell('newcomer')} | {cell('newcomer_advised')} | {rat('auto_ours')} | {rat('auto_triton')} | "
                     f"{rat('newcomer')} | {rat('newcomer_advised')} | {exact} | {notes} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the CPU dry run

def dry() -> list[dict]:
    """Compile every mode's form of every case for sm_90 on the CPU (no launch)."""
    require_package()
    from triton.experimental.gluon._runtime import GluonASTSource

    import linear_layouts
    from harness.gluon_auto_kernels import cases
    from harness.quiet_compile import compile_for_sm90
    os.environ.setdefault("TRITON_CACHE_DIR", scratch_directory("ll_gluon_auto_dry_"))
    rows = []
    for case in cases():
        aligned = {(i,): [["tt.divisibility", 16]] for i in range(len(case.signature))}
        row = {"name": case.name}
        for mode in MODES:
            enable_for(mode)
            before = len(linear_layouts.stats().fallbacks)
            advised_before = linear_layouts.stats().advice_applied
            source = GluonASTSource(case.kernel, case.signature, {**case.constexprs, **case.layouts[FORM_OF[mode]]},
                                    attrs=aligned)
            result = compile_for_sm90(source)
            if result.error is not None:
                row[mode] = "fails: " + _first_line(result.error, result.stderr)
            else:
                ptx = result.compiled.asm["ptx"]
                fell_back = len(linear_layouts.stats().fallbacks) > before
                unchanged = mode == "newcomer_advised" and linear_layouts.stats().advice_applied == advised_before
                row[mode] = ("compiles" + (" (ours fell back to Triton's)" if fell_back else "")
                             + (" (the advice changed nothing)" if unchanged else "")
                             + f"; 128-bit loads {ptx.count('ld.global.v4')}, stores {ptx.count('st.global.v4')}")
        linear_layouts.disable()
        rows.append(row)
    return rows


def render_dry(rows: list[dict], versions: str) -> str:
    lines = ["# Gluon's automatic layouts: what compiles (CPU, sm_90, no timing)", "", f"- {versions}",
             "- command: `python benchmarks/gluon_forms_gpu.py kernels --dry --out benchmarks/results`", "",
             "| kernel | " + " | ".join(MODES) + " |", "|---|" + "---|" * len(MODES)]
    lines += [f"| {r['name']} | " + " | ".join(r[m] for m in MODES) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _result_path(folder, name: str) -> str:
    """``folder/name``, the folder made; "" (print only) where no folder was given."""
    if not folder:
        return ""
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, name)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gluon_forms_gpu.py kernels", description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="the folder to write the result into (the GPU run's default: benchmarks/results; "
                                      "--dry writes only where --out says)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dry", action="store_true", help="compile every form for sm_90 on the CPU, no timing")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    import triton
    if args.dry:
        rows = dry()
        text = render_dry(rows, f"triton {triton.__version__}")
        publish(text.rstrip("\n"), _result_path(args.out, f"gluon_auto_dry_{triton.__version__}.md"))
        return 0 if all(r[m].startswith("compiles") and "fell back" not in r[m] for r in rows
                        for m in ("auto_ours", "newcomer_advised")) else 1
    import torch
    from harness.mode_rounds import run_mode_rounds
    runs = run_mode_rounds(__file__, MODES, args.rounds, "ll_gluon_auto_")
    rows = summarize(runs)
    text = render(rows, args.rounds, torch.cuda.get_device_name(), f"triton {triton.__version__}, torch {torch.__version__}")
    publish(text.rstrip("\n"), _result_path(args.out or os.path.join(BENCHMARKS, "results"), "gluon_auto_gpu.md"))
    return 0 if all(all(r["close"].values()) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
