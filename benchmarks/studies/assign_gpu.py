"""GPU suite of ll-assign-layouts: kernels chosen by one rule before measuring, stock vs ours.

    .venv-compat/bin/python benchmarks/studies/assign_gpu.py --select     # CPU, triton 3.6: which candidates qualify
    .venv/bin/python benchmarks/studies/assign_gpu.py --interpret         # CPU: the new kernels vs numpy, tiny shapes
    .venv-compat/bin/python benchmarks/studies/assign_gpu.py --dry        # CPU: every mode compiles each selected kernel
    python benchmarks/studies/assign_gpu.py --budget 480                  # GPU (H100, triton 3.6): measure them
    python benchmarks/studies/assign_gpu.py --budget 480 --resume         # ... go on where the last call stopped
    python benchmarks/studies/assign_gpu.py --out $OUT --resume-from benchmarks/results/assign_gpu.json   # ... from a copy

Exit status: 0 all measured; 1 the assign mode could not run; 2 no GPU (or no --resume-from file);
3 the budget ran out first (rerun with --resume / --resume-from: the rows so far are written).

**Selection** (``--select``, no GPU): every candidate of ``assign_gpu_kernels.candidate_cases()``
(tutorial- and library-style kernels, the loop kernels of examples/gpu_kernels.py and one shape of
each kernel of benchmarks/paper_kernels.py) is compiled for sm_90 by the installed Triton with
the arguments the GPU run launches it with (``paper_kernels.compile_signature``), and is selected
when stock's TTGIR has a ``ttg.convert_layout`` in an ``scf.for``/``scf.while`` body or in the
epilogue (after the last loop, before a ``tt.store``): ``assign_rule``.  The list is written to
``benchmarks/results/assign_gpu_selection.md`` and ``.json`` and committed; the GPU run
measures exactly that list (it refuses to start without it).

**Measurement** (default): per selected kernel, in one process, the modes ``stock``,
``assign`` (``linear_layouts.enable(assign_layouts=True)``), ``linear`` (plain ``enable()``)
and ``stock_again`` (stock timed a second time: the run's noise), each ``--rounds`` times in an
order rotated every round, each compile with an empty Triton cache, one set of input tensors for
all.  Every mode's outputs are compared bit for bit with stock's (stock is also checked against a
numpy reference); ``--reorder-tolerance`` accepts a mode whose outputs differ from stock's but
are within the case's reference tolerance (only for an option that reorders a reduction).
Times are medians of ``triton.testing.do_bench``.  The report gives per kernel ours/stock for
both modes and stock_again/stock, and overall the geometric mean ours/stock, the kernels >= 10%
faster and those slower beyond the noise (ours/stock - 1 above both that kernel's stock-vs-stock
deviation and the run's median deviation).  Writes ``assign_gpu.md`` and ``assign_gpu.json``
into ``--out`` after every kernel, so a call stopped by ``--budget`` (seconds; no kernel is
started that would not finish within it, judged by the slowest kernel so far) keeps its rows
and ``--resume`` goes on from them.  Until ``enable(assign_layouts=True)`` exists the ``assign``
mode fails with a message saying so (the other modes still run) and the script exits 1.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import os
import sys

# Triton's interpreter is chosen when a kernel is decorated: set before triton and the kernels load.
if __name__ == "__main__" and "--interpret" in sys.argv[1:]:
    os.environ["TRITON_INTERPRET"] = "1"

import argparse
import json
import re
import statistics
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness.checkout import geomean, make_package_importable  # noqa: E402

make_package_importable()

import assign_rule  # noqa: E402

REPO = on_path.REPO
RESULTS = os.path.join(REPO, "benchmarks", "results")
SELECTION = os.path.join(RESULTS, "assign_gpu_selection.json")
MODES = ("stock", "assign", "linear", "stock_again")
OURS = ("assign", "linear")
FASTER = 0.90            # ours/stock at or below this: ">= 10% faster"


class ModeUnavailable(RuntimeError):
    """A mode the installed package cannot run yet (enable(assign_layouts=True))."""


# =========================================================================== selection

def case_name(case) -> str:
    return re.sub(r"[^\w.=-]+", "_", case.name).strip("_")


def stock_ttgir(case, target=None, mode: str = "stock") -> str:
    """The TTGIR of ``case`` for sm_90 (no GPU; an empty private cache): stock Triton's."""
    return compile_case(case, target, mode)[0].asm["ttgir"]


def compile_case(case, target=None, mode: str = "stock"):
    """(the compiled kernel, conversions left in it, whether ll-assign-layouts changed it) of
    ``case`` for sm_90 (no GPU; an empty private cache), with our passes in ``mode`` (assign or
    linear, as the GPU run enables them).  Its ``asm["ttgir"]`` is Triton's, before our passes."""
    from assigned_converts import converts_left, stats_snapshot
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import linear_layouts
    from paper_kernels import compile_signature, environment

    signature, constexprs, attrs = compile_signature(case)
    source = ASTSource(fn=case.function, signature=signature, constexprs=constexprs, attrs=attrs)
    saved = triton.knobs.cache.dir
    with tempfile.TemporaryDirectory(prefix="ll_assign_select_") as directory:
        triton.knobs.cache.dir = directory
        try:
            with environment(case.environment):
                if mode in OURS:
                    enable_mode(mode)
                before = stats_snapshot()
                compiled = triton.compile(source, target=target or GPUTarget("cuda", 90, 32),
                                          options={"num_warps": case.num_warps, "num_stages": case.num_stages})
                converts, assigned = converts_left(compiled, before)
        finally:
            linear_layouts.disable()
            triton.knobs.cache.dir = saved
    return compiled, converts, assigned


def dry(cases) -> int:
    """No GPU: compile every selected case in every mode for sm_90 (the installed Triton), count
    its converts, time the compile; 1 if a mode fails to compile a kernel."""
    failures = 0
    for case in cases:
        cells = []
        for mode in ("stock",) + OURS:
            start = time.perf_counter()
            try:
                _, converts, assigned = compile_case(case, mode=mode)
                cells.append(f"{mode} {converts} converts{' (assigned)' if assigned else ''} "
                             f"({time.perf_counter() - start:.1f} s)")
            except Exception as error:
                failures += 1
                cells.append(f"{mode} FAILED {type(error).__name__}: {str(error).splitlines()[0][:150] if str(error) else ''}")
        print(f"{case_name(case)}: " + "; ".join(cells), flush=True)
    print(f"{len(cases)} kernels, {failures} failed compiles")
    return 1 if failures else 0


def select(cases) -> list[dict]:
    rows = []
    for case in cases:
        row = {"name": case_name(case), "kernel": case.kernel, "shape": case.shape,
               "function": case.function.__name__}
        try:
            row.update(assign_rule.describe(stock_ttgir(case)))
        except Exception as error:  # a candidate that does not compile is reported, not selected
            row.update({"selected": False, "error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"})
        rows.append(row)
        print(f"{row['name']}: {'SELECTED' if row['selected'] else 'not selected'} "
              f"({row.get('in_loop', '-')} in loops, {row.get('epilogue', '-')} in the epilogue, "
              f"{row.get('other', '-')} elsewhere){' ' + row['error'] if 'error' in row else ''}", flush=True)
    return rows


def render_selection(rows: list[dict], triton_version: str) -> str:
    chosen = [r for r in rows if r["selected"]]
    lines = ["# ll-assign-layouts GPU suite: the selection", "",
             f"Rule (fixed before measuring): stock Triton's TTGIR for sm_90 has a `ttg.convert_layout` inside an "
             f"`scf.for`/`scf.while` body, or in the epilogue (after the function's last loop, outside loops, "
             f"before a `tt.store`). Compiled without a GPU by triton {triton_version} with the arguments the GPU "
             f"run uses; produced by `python benchmarks/studies/assign_gpu.py --select` (benchmarks/studies/assign_rule.py).", "",
             f"**{len(chosen)} of {len(rows)} candidates selected.**", "",
             "| candidate | kernel function | converts | in loops | in epilogue | elsewhere | selected |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | {r['function']} | - | - | - | - | no (did not compile: {r['error']}) |")
            continue
        lines.append(f"| {r['name']} | {r['function']} | {r['converts']} | {r['in_loop']} | {r['epilogue']} | "
                     f"{r['other']} | {'**yes**' if r['selected'] else 'no'} |")
    return "\n".join(lines) + "\n"


def write_selection(rows: list[dict], out: str) -> None:
    import triton

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "assign_gpu_selection.json"), "w") as f:
        json.dump({"triton": triton.__version__, "target": "cuda:90", "rule": assign_rule.__doc__.strip().splitlines()[0],
                   "selected": [r["name"] for r in rows if r["selected"]], "candidates": rows}, f, indent=1)
    with open(os.path.join(out, "assign_gpu_selection.md"), "w") as f:
        f.write(render_selection(rows, triton.__version__))


def interpret() -> int:
    """Tiny versions of the new candidates in Triton's CPU interpreter against their numpy
    references (``paper_kernels.HostTensor``); 1 on a mismatch."""
    import numpy as np
    import triton
    from assign_gpu_kernels import interpreter_cases
    from paper_kernels import HostTensor, _scalar_index_for_numpy_2

    if not triton.knobs.runtime.interpret:
        print("assign_gpu.py: --interpret needs TRITON_INTERPRET=1 before triton is imported "
              "(run the script directly)", file=sys.stderr)
        return 1
    _scalar_index_for_numpy_2()
    failures = 0
    cases = interpreter_cases()
    for case in cases:
        inputs = case.inputs()
        expected = case.reference(inputs)
        arrays = dict(inputs)
        for name in case.outputs:
            t = case.tensors[name]
            poison = np.nan if np.dtype(t.dtype).kind == "f" else -7
            arrays[name] = np.full(t.shape, poison, t.dtype)
        host = {name: HostTensor(array) for name, array in arrays.items()}
        try:
            args, _ = launch_arguments(case, {**host, **case.scalars, **case.constexprs})
            case.function[case.grid](*args)
            ok, worst = case.check({n: host[n].array for n in case.outputs}, expected)
            message = f"worst error {worst:.3f} of the tolerance"
        except Exception as error:
            ok, message = False, f"{type(error).__name__}: {str(error).splitlines()[-1][:200] if str(error) else ''}"
        failures += not ok
        print(f"{case.name:52} {'ok' if ok else 'WRONG'} ({message})", flush=True)
    print(f"{len(cases) - failures}/{len(cases)} cases match their references in Triton's interpreter")
    return 1 if failures else 0


# =========================================================================== GPU run

def enable_mode(mode: str) -> None:
    import linear_layouts

    if mode == "linear":
        linear_layouts.enable()
    elif mode == "assign":
        try:
            linear_layouts.enable(assign_layouts=True)
        except TypeError as error:     # enable() has no such option yet
            raise ModeUnavailable(f"linear_layouts.enable(assign_layouts=True) is not available yet "
                                  f"(issue 26's ll-assign-layouts): {error}") from None
        except Exception as error:
            if "assign" in str(error):
                raise ModeUnavailable(f"linear_layouts.enable(assign_layouts=True) failed: {error}") from None
            raise


def probe_modes() -> dict:
    """{mode: why it cannot run} for the modes this checkout cannot run."""
    import linear_layouts

    missing = {}
    for mode in OURS:
        try:
            enable_mode(mode)
        except ModeUnavailable as error:
            missing[mode] = str(error)
        finally:
            linear_layouts.disable()
    return missing


def same_bits(a, b) -> bool:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def run_mode(device_case, mode: str, cache_dir: str, stock_outputs: dict | None) -> dict:
    """Compile (empty cache), check and time one mode of one case."""
    import torch
    import triton
    import triton.testing

    import linear_layouts
    from assigned_converts import converts_left, stats_snapshot
    from linear_layouts.passes import hook
    from paper_kernels import environment

    case = device_case.case
    result = {"ok": False}
    hook.forget_jit_kernels()
    saved = triton.knobs.cache.dir
    triton.knobs.cache.dir = cache_dir
    try:
        with environment(case.environment):
            if mode in OURS:
                enable_mode(mode)
            for name in case.outputs:          # poison
                t = device_case.tensors[name]
                t.fill_(float("nan") if t.is_floating_point() else -7)
            torch.cuda.synchronize()
            before = stats_snapshot()
            start = time.perf_counter()
            device_case.launch()
            torch.cuda.synchronize()
            result["first_launch_s"] = time.perf_counter() - start
            if device_case.compiled is not None:
                result["converts"], result["assigned"] = converts_left(device_case.compiled, before)
            outputs = {name: device_case.tensors[name].clone() for name in case.outputs}
            result["reference_ok"] = bool(device_case.check())
            result["worst_error"] = device_case.worst_error
            if stock_outputs is not None:
                result["bit_exact"] = all(same_bits(outputs[n], stock_outputs[n]) for n in case.outputs)
                if not result["bit_exact"]:
                    result["max_abs_diff"] = max(float((outputs[n].double() - stock_outputs[n].double()).abs()
                                                       .nan_to_num(float("inf")).max()) for n in case.outputs)
            times = triton.testing.do_bench(device_case.launch, warmup=25, rep=200, return_mode="all")
            result["ms"] = statistics.median(times)
            result["min_ms"], result["max_ms"] = min(times), max(times)
            result["ok"] = True
            result["_outputs"] = outputs
    except ModeUnavailable as error:
        result["error"], result["unavailable"] = str(error), True
    except Exception as error:  # the GPU boundary: recorded per kernel and mode, never fatal
        result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
    finally:
        linear_layouts.disable()
        triton.knobs.cache.dir = saved
    return result


def combine(results: list[dict]) -> dict:
    """One mode's rounds: ms = median of the rounds' medians; wrong or failed in any round = so."""
    failed = [r for r in results if not r.get("ok")]
    if failed:
        return {k: v for k, v in failed[0].items() if not k.startswith("_")}
    out = {k: v for k, v in results[0].items() if not k.startswith("_")}
    out["round_ms"] = [r["ms"] for r in results]
    out["ms"] = statistics.median(out["round_ms"])
    out["min_ms"] = min(r["min_ms"] for r in results)
    out["max_ms"] = max(r["max_ms"] for r in results)
    out["reference_ok"] = all(r.get("reference_ok") for r in results)
    if any("bit_exact" in r for r in results):
        out["bit_exact"] = all(r.get("bit_exact", False) for r in results)
        diffs = [r["max_abs_diff"] for r in results if "max_abs_diff" in r]
        if diffs:
            out["max_abs_diff"] = max(diffs)
    out["first_launch_s"] = statistics.median(r["first_launch_s"] for r in results)
    return out


def launch_arguments(case, values: dict):
    """(positional args, launch options) of one launch.  A kernel with arguments named like
    launch options (Liger's ``num_stages``/``num_warps`` constexprs) is launched as its library
    launches it: every argument positional, default options (so the case must ask for those)."""
    names = case.function.arg_names
    if {"num_warps", "num_stages"} & set(names):
        if (case.num_warps, case.num_stages) != (4, 3):
            raise ValueError(f"{case.name}: a kernel with a num_warps/num_stages argument runs with Triton's "
                             "default launch options (4 warps, 3 stages)")
        return [values[n] for n in names], {}
    return [values[n] for n in names], {"num_warps": case.num_warps, "num_stages": case.num_stages}


def device_case_for(case):
    """paper_kernels.DeviceCase, launching through ``launch_arguments``."""
    from paper_kernels import DeviceCase

    class SuiteDeviceCase(DeviceCase):
        def launch(self):
            c = self.case
            if c.clear_output_first:
                for name in c.outputs:
                    self.tensors[name].zero_()
            args, options = launch_arguments(c, {**self.tensors, **c.scalars, **c.constexprs})
            self.compiled = c.function[c.grid](*args, **options)
    return SuiteDeviceCase(case)


def run_case(case, rounds: int, cache_root: str, unavailable: dict) -> dict:
    import torch

    device_case = device_case_for(case)
    name = case_name(case)
    runs = {mode: [] for mode in MODES}
    stock_outputs = None
    for number in range(rounds):
        shift = number % len(MODES)
        order = MODES[shift:] + MODES[:shift]
        if stock_outputs is None:       # stock first in the first round: its outputs are the yardstick
            order = ("stock",) + tuple(m for m in order if m != "stock")
        for mode in order:
            if mode in unavailable:
                runs[mode].append({"ok": False, "error": unavailable[mode], "unavailable": True})
                continue
            result = run_mode(device_case, mode, os.path.join(cache_root, name, f"{mode}.{number}"),
                              None if mode == "stock" and stock_outputs is None else stock_outputs)
            if mode == "stock" and stock_outputs is None and result.get("ok"):
                stock_outputs = result["_outputs"]
            result.pop("_outputs", None)
            runs[mode].append(result)
            torch.cuda.empty_cache()
    del device_case
    torch.cuda.empty_cache()
    return {"name": name, "kernel": case.kernel, "shape": case.shape, **{m: combine(r) for m, r in runs.items()}}


# =========================================================================== report

def _ratio(row, a, b="stock"):
    ra, rb = row.get(a, {}), row.get(b, {})
    if ra.get("ok") and rb.get("ok") and ra.get("ms") and rb.get("ms"):
        return ra["ms"] / rb["ms"]
    return None


def nondeterministic(row) -> bool:
    """Stock differs from itself: the same binary run twice (``stock_again``) gave other bits, as
    a kernel that sums partial tiles with atomics (stream-K) does.  Bit-exactness against stock
    means nothing there; such a kernel is judged by the reference's tolerance."""
    again = row.get("stock_again", {})
    return bool(again.get("ok")) and not again.get("bit_exact", True)


def valid(row, mode: str, reorder_tolerance: bool = False) -> bool:
    """The mode ran and its outputs are stock's (bit for bit, or within the reference's
    tolerance where ``reorder_tolerance`` or where stock itself is not deterministic)."""
    r = row.get(mode, {})
    if not r.get("ok"):
        return False
    if mode == "stock":
        return True
    return bool(r.get("bit_exact")) or ((reorder_tolerance or nondeterministic(row)) and bool(r.get("reference_ok")))


def summarize(rows: list[dict], reorder_tolerance: bool = False) -> dict:
    noise = {r["name"]: abs(_ratio(r, "stock_again") - 1) for r in rows if _ratio(r, "stock_again")}
    median_noise = statistics.median(noise.values()) if noise else 0.0
    summary = {"kernels": len(rows), "median_noise": median_noise,
               "max_noise": max(noise.values()) if noise else None}
    for mode in OURS:
        ratios = {r["name"]: _ratio(r, mode) for r in rows if valid(r, mode, reorder_tolerance) and _ratio(r, mode)}
        slower = sorted(name for name, v in ratios.items() if v - 1 > max(noise.get(name, 0.0), median_noise))
        summary[mode] = {
            "measured": len(ratios),
            "geomean": geomean(ratios.values()) if ratios else None,
            "faster_10pct": sorted(name for name, v in ratios.items() if v <= FASTER),
            "slower_beyond_noise": slower,
            "not_bit_exact": sorted(r["name"] for r in rows if r.get(mode, {}).get("ok") and not r[mode].get("bit_exact")
                                    and not nondeterministic(r)),
            "failed": sorted(r["name"] for r in rows if not r.get(mode, {}).get("ok")),
            "unavailable": any(r.get(mode, {}).get("unavailable") for r in rows),
        }
    summary["nondeterministic"] = sorted(r["name"] for r in rows if nondeterministic(r))
    summary["stock_reference_wrong"] = sorted(r["name"] for r in rows
                                              if r.get("stock", {}).get("ok") and not r["stock"].get("reference_ok"))
    return summary


def _f(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def render(rows: list[dict], summary: dict, environment: dict, rounds: int, pending: list[str],
           reorder_tolerance: bool = False) -> str:
    lines = ["# ll-assign-layouts on the GPU: selected kernels, stock vs ours", "",
             f"GPU: {environment.get('gpu', '?')}; triton {environment.get('triton', '?')}; "
             f"torch {environment.get('torch', '?')}. Kernels: the committed selection "
             "(`assign_gpu_selection.md`: stock's TTGIR has a convert in a loop or in the epilogue), all of it, "
             "chosen before measuring. Produced by `python benchmarks/studies/assign_gpu.py` "
             f"({rounds} rounds, modes rotated, each compile with an empty cache; `do_bench` medians).", "",
             f"* run-to-run noise (stock timed twice): median {_f(summary['median_noise'] * 100, 1)}%, "
             f"largest {_f(summary['max_noise'] and summary['max_noise'] * 100, 1)}%"]
    for mode, label in (("assign", "ours = enable(assign_layouts=True)"), ("linear", "plain enable()")):
        s = summary[mode]
        if s["unavailable"]:
            lines.append(f"* {label}: NOT MEASURED: {next(r[mode]['error'] for r in rows if r[mode].get('unavailable'))}")
            continue
        lines += [f"* {label}: geomean time ours/stock {_f(s['geomean'])} over {s['measured']} kernels; "
                  f">= 10% faster: {len(s['faster_10pct'])}"
                  + (f" ({', '.join(s['faster_10pct'])})" if s["faster_10pct"] else "")
                  + f"; slower beyond the noise: {len(s['slower_beyond_noise'])}"
                  + (f" ({', '.join(s['slower_beyond_noise'])})" if s["slower_beyond_noise"] else "")
                  + f"; not bit-exact: {len(s['not_bit_exact'])}"
                  + (f" ({', '.join(s['not_bit_exact'])}{'; within tolerance counted' if reorder_tolerance else ''})"
                     if s["not_bit_exact"] else "")
                  + (f"; failed: {', '.join(s['failed'])}" if s["failed"] else "")]
    if summary.get("nondeterministic"):
        lines.append("* stock differs from itself (the same binary run twice gives other bits: atomics), so these are "
                     "judged by the numpy reference's tolerance, not bit for bit: "
                     + ", ".join(f"{r['name']} (ours within tolerance: "
                                 f"{'yes' if all(r[m].get('reference_ok') for m in OURS) else 'NO'})"
                                 for r in rows if nondeterministic(r)))
    if summary["stock_reference_wrong"]:
        lines.append(f"* stock itself outside the numpy reference's tolerance: {', '.join(summary['stock_reference_wrong'])}")
    if pending:
        lines.append(f"* NOT YET RUN (budget; rerun with --resume): {', '.join(pending)}")
    lines += ["", "| kernel | stock ms | assign ms | linear ms | assign/stock | linear/stock | stock again/stock | "
                  "bit-exact (assign/linear) | converts (stock/assign/linear) |",
              "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        def ms(m):
            return _f(r[m].get("ms"), 4) if r[m].get("ok") else ("n/a" if r[m].get("unavailable") else "fail")

        def exact(m):
            if not r[m].get("ok"):
                return "-"
            if r[m].get("bit_exact"):
                return "yes"
            if nondeterministic(r):
                return f"stock differs from itself; within tolerance: {'yes' if r[m].get('reference_ok') else 'NO'}"
            return f"NO (max diff {_f(r[m].get('max_abs_diff'), 4)})"
        lines.append(f"| {r['name']} | {ms('stock')} | {ms('assign')} | {ms('linear')} | {_f(_ratio(r, 'assign'))} | "
                     f"{_f(_ratio(r, 'linear'))} | {_f(_ratio(r, 'stock_again'))} | {exact('assign')}/{exact('linear')} | "
                     f"{r['stock'].get('converts', '-')}/{r['assign'].get('converts', '-')}/{r['linear'].get('converts', '-')} |")
    failures = [(r["name"], m, r[m]["error"]) for r in rows for m in MODES
                if not r[m].get("ok") and not r[m].get("unavailable")]
    if failures:
        lines += ["", "Failures:", ""] + [f"* {k} [{m}]: {e}" for k, m, e in failures]
    return "\n".join(lines) + "\n"


# =========================================================================== main

def selected_cases(selection_path: str, only: str | None = None):
    from assign_gpu_kernels import candidate_cases

    with open(selection_path) as f:
        selection = json.load(f)
    cases = {case_name(c): c for c in candidate_cases()}
    missing = [n for n in selection["selected"] if n not in cases]
    if missing:
        raise SystemExit(f"assign_gpu: selected kernels no longer among the candidates: {', '.join(missing)} "
                         "(rerun --select and commit the selection)")
    chosen = [cases[n] for n in selection["selected"]]
    if only:
        chosen = [c for c in chosen if re.search(only, case_name(c))]
    return selection, chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", action="store_true", help="no GPU: compile the candidates, apply the rule")
    parser.add_argument("--dry", action="store_true",
                        help="no GPU: compile the selected kernels in every mode for sm_90, count converts")
    parser.add_argument("--interpret", action="store_true",
                        help="no GPU: tiny versions of the new kernels in Triton's interpreter vs their references")
    parser.add_argument("--out", default=RESULTS)
    parser.add_argument("--selection", default=SELECTION, help="the committed selection (JSON) the GPU run measures")
    parser.add_argument("--only", help="regex over selected kernel names (a partial run)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=480.0, help="seconds for this call (default 480)")
    parser.add_argument("--resume", action="store_true", help="keep the rows of --out's assign_gpu.json, run the rest")
    parser.add_argument("--resume-from", metavar="JSON",
                        help="keep the rows of this assign_gpu.json (an earlier call's, e.g. copied back from "
                             "a device's $OUT), run the rest; implies --resume")
    parser.add_argument("--render", action="store_true",
                        help="no GPU: rewrite --out's assign_gpu.md from its assign_gpu.json (after a change to the summary)")
    parser.add_argument("--reorder-tolerance", action="store_true",
                        help="accept outputs within the reference tolerance (an option that reorders reductions)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    started = time.perf_counter()
    import triton

    if args.interpret:
        return interpret()
    if args.select:
        from assign_gpu_kernels import candidate_cases

        rows = select(candidate_cases())
        write_selection(rows, args.out)
        chosen = sum(r["selected"] for r in rows)
        print(f"{chosen} of {len(rows)} candidates selected (triton {triton.__version__}); "
              f"wrote {os.path.join(args.out, 'assign_gpu_selection.md')}")
        return 0 if chosen >= 20 else 1

    if args.render:
        with open(os.path.join(args.out, "assign_gpu.json")) as f:
            saved = json.load(f)
        summary = summarize(saved["kernels"], args.reorder_tolerance)
        with open(os.path.join(args.out, "assign_gpu.md"), "w") as f:
            f.write(render(saved["kernels"], summary, saved["environment"], saved["rounds"], saved["pending"],
                           args.reorder_tolerance))
        return 0
    if args.dry:
        return dry(selected_cases(args.selection, args.only)[1])
    try:
        import torch
    except ImportError:
        print("assign_gpu: torch is not installed: the measurement needs a GPU machine "
              "(--select, --dry and --interpret run without one)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("assign_gpu: no GPU (use --select on a machine without one)", file=sys.stderr)
        return 2
    selection, cases = selected_cases(args.selection, args.only)
    if selection.get("triton") != triton.__version__:
        print(f"assign_gpu: warning: the selection was made by triton {selection.get('triton')}, "
              f"this is {triton.__version__}", file=sys.stderr)
    unavailable = probe_modes()
    for mode, why in unavailable.items():
        print(f"assign_gpu: mode '{mode}' cannot run: {why}", file=sys.stderr)
    json_path = os.path.join(args.out, "assign_gpu.json")
    rows = []
    resume_path = args.resume_from or (json_path if args.resume else None)
    if args.resume_from and not os.path.exists(args.resume_from):
        print(f"assign_gpu: --resume-from {args.resume_from}: no such file", file=sys.stderr)
        return 2
    if resume_path and os.path.exists(resume_path):
        with open(resume_path) as f:
            rows = [r for r in json.load(f)["kernels"] if r["name"] in {case_name(c) for c in cases}]
    done = {r["name"] for r in rows}
    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                   "python": sys.version.split()[0]}
    cache_root = tempfile.mkdtemp(prefix="ll_assign_gpu_cache_")
    slowest = 0.0
    todo = [c for c in cases if case_name(c) not in done]

    def write(pending):
        summary = summarize(rows, args.reorder_tolerance)
        os.makedirs(args.out, exist_ok=True)
        with open(json_path, "w") as f:
            json.dump({"environment": environment, "rounds": args.rounds, "summary": summary, "pending": pending,
                       "kernels": rows}, f, indent=1)
        text = render(rows, summary, environment, args.rounds, pending, args.reorder_tolerance)
        with open(os.path.join(args.out, "assign_gpu.md"), "w") as f:
            f.write(text)
        return text

    for i, case in enumerate(todo):
        elapsed = time.perf_counter() - started
        if slowest and elapsed + 1.25 * slowest > args.budget:
            pending = [case_name(c) for c in todo[i:]]
            print(write(pending))
            print(f"assign_gpu: budget reached after {elapsed:.0f} s; {len(pending)} kernels left: rerun with --resume",
                  file=sys.stderr)
            return 3
        start = time.perf_counter()
        row = run_case(case, args.rounds, cache_root, unavailable)
        slowest = max(slowest, time.perf_counter() - start)
        rows.append(row)
        write([case_name(c) for c in todo[i + 1:]])
        print(f"[{i + 1}/{len(todo)}] {row['name']} ({time.perf_counter() - start:.0f} s): " + ", ".join(
            f"{m}={row[m].get('ms', float('nan')):.4f}ms"
            f"{'' if m == 'stock' or not row[m].get('ok') or row[m].get('bit_exact') else '(differs)'}"
            for m in MODES), flush=True)
    print(write([]))
    return 1 if unavailable else 0


if __name__ == "__main__":
    sys.exit(main())
