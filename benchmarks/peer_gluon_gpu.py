"""Gluon kernels of other projects as written, with the plugin, its advice, automatic.

Each is compiled, its outputs compared with stock's and timed, in every mode below.

    python benchmarks/harness/carry_peer_gluon.py --check                          # the sources are carried
    python benchmarks/peer_gluon_gpu.py --rounds 3 --out benchmarks/results         # GPU (H100): run, compare, time
    python benchmarks/peer_gluon_gpu.py --tests-only --out benchmarks/results       # GPU: FLA's own test, stock and plugin
    python benchmarks/peer_gluon_gpu.py --dry                                       # CPU: compile every mode for sm_90
                                                                                    # (printed; --out writes the committed file)
    python benchmarks/peer_gluon_gpu.py hopper --out benchmarks/results             # Hopper-class Gluon kernels (ours,
                                                                                    # Triton's tutorials, other projects'),
                                                                                    # every mode in one process with an
                                                                                    # A/A run (harness/hopper_gluon.py;
                                                                                    # hopper --dry: CPU)

The kernels: the selection rule and launches in ``harness/peer_gluon_cases.py`` (6 kernels of
flash-linear-attention and triton-viz, carried in ``.peer-tests/`` by
``harness/carry_peer_gluon.py``, not committed).  The modes, each in a process of its own with a
Triton cache of its own (``--child``):

* ``stock``: the kernel as written, plugin off;
* ``enable``: as written, ``linear_layouts.enable()``;
* ``advice``: as written, ``linear_layouts.enable(apply_advice=True)``;
* ``auto_ours``: the automatic form (the rule in ``harness/peer_gluon_forms.py``, stated before
  measuring), ``linear_layouts.enable(resolve_auto_layouts=True)``: our resolution;
* ``auto_triton`` (``--dry`` only): the automatic form, plugin off: Gluon's own resolution.

GPU: ``--rounds`` rounds, the modes' order rotating from round to round; each mode's cache is
empty in its first round (its compiles and the plugin's counts are that round's) and kept after.
In the first round every case's outputs are compared with stock's: bit for bit, else within the
project's own test tolerance (``peer_gluon_cases.project_tolerance_ok``).  Times:
``triton.testing.do_bench_cudagraph`` (a CUDA graph of the launch: a kernel of a few
microseconds is timed, not Python's launch), median of the rounds, each mode over stock.
Then (unless ``--no-tests``) FLA's own ``tests/ops/test_attnres.py`` with its Gluon backend on
(``FLA_ATTNRES_GLUON=1``), stock and with ``LINEAR_LAYOUTS=1`` (the start-up hook turns the
plugin on in every process; ``peer_tests/peer_pytest_plugin.py`` records each process's counts),
through pytest-xdist (``--test-workers``).  triton-viz's tests run its kernels in triton-viz's CPU
simulator (and need ``triton_viz``): not run.  Writes ``peer_gluon_gpu.md`` and ``.json`` to
``--out``.  Exit status 1 when a stock run fails, ``enable`` or ``advice`` fails on a kernel stock
runs, any mode's output is outside the project's tolerance, a test of FLA fails only with the
plugin, or a process of the plugin's test run had it off.  The automatic form not compiling (with
ours or at all) is reported in the table, not in the exit status: it is a finding about the
resolution, not a regression of a kernel as written.

``--dry``: no GPU, no torch; every kernel in every mode compiled for sm_90, each mode in its own
process with an empty cache: what compiles, what falls back (the plugin's fallback records), the
plugin's conversions and islands, whether the advice changed the kernel, and for the automatic
form which aranges the front end took and whether ours resolved it (else our pass's reason);
prints the table, writes ``peer_gluon_dry_<triton version>.md`` only where ``--out`` says.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

from harness import peer_gluon_cases as cases_module  # noqa: E402
from harness import skeleton  # noqa: E402
from harness.carry_peer_gluon import source_named, why_not_carried  # noqa: E402
from harness.common import publish, require_package, scratch_directory  # noqa: E402
from harness.peer_gluon_forms import by_the_arange_rule, install_api_shims, load_kernels  # noqa: E402
from harness.quiet_compile import access_text, compile_for_sm90, first_line, launch_quietly  # noqa: E402

MODES = ("stock", "enable", "advice", "auto_ours")
DRY_MODES = MODES + ("auto_triton",)
FORM_OF = {"stock": "as_written", "enable": "as_written", "advice": "as_written", "auto_ours": "auto",
           "auto_triton": "auto"}
TITLES = {"stock": "as written, stock", "enable": "enable()", "advice": "enable(apply_advice=True)",
          "auto_ours": "auto form, ours", "auto_triton": "auto form, Triton's resolution"}
QUICK_TESTS = "B1-T1000"          # FLA test ids with one batch of 1000 tokens: 5 of the 15 cases
BENCHMARKS = os.path.dirname(os.path.abspath(__file__))


def enable_mode(mode: str) -> None:
    import linear_layouts
    if mode == "enable":
        linear_layouts.enable()
    elif mode == "advice":
        linear_layouts.enable(apply_advice=True)
    elif mode == "auto_ours":
        linear_layouts.enable(resolve_auto_layouts=True)
    else:
        linear_layouts.disable()


def selected_cases(names=None):
    """The cases whose project is carried as pinned, and why the others are not run."""
    chosen, missing = [], {}
    for case in cases_module.cases():
        why = why_not_carried(case.project)
        if why:
            missing[case.project] = why
        elif not names or any(n in case.name for n in names):
            chosen.append(case)
    return chosen, sorted(missing.values())


class OurResolution:
    """Why our resolution of automatic layouts gave a kernel back to Triton's: the plugin records a
    fallback only where Triton's resolution then compiles it, and where that fails too, only
    Triton's error reaches the caller.  This watches the plugin's resolution step
    (``passes.drop_in.layout_stages._resolve_auto_layouts``) and keeps the first line of each error it
    raises (the harness's instrument; the plugin's behaviour is unchanged)."""

    def __init__(self):
        self.reasons: list[str] = []
        from linear_layouts.passes.drop_in import layout_stages
        original = getattr(layout_stages, "_resolve_auto_layouts", None)
        if original is None:
            return

        def watched(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            except Exception as error:
                line = (str(error).strip() or type(error).__name__).splitlines()[0]
                self.reasons.append(_carried_locations(line)[:300])
                raise
        layout_stages._resolve_auto_layouts = watched


def _carried_locations(text: str) -> str:
    """A loaded form's ``/tmp/.../ll_peer_gluon_*.py:56:54`` as the carried file's ``gluon.py:216``."""
    from harness.peer_gluon_forms import original_location
    return re.sub(r"(\S*ll_peer_gluon_\S+?\.py):(\d+):\d+",
                  lambda m: original_location(m.group(1), int(m.group(2))), text)


def stats_now() -> dict:
    import linear_layouts
    s = linear_layouts.stats()
    return {"kernels": s.kernels, "conversions": s.conversions, "islands": s.islands,
            "resolved": s.auto_layouts_resolved, "advised": s.advice_applied,
            "fallbacks": [f"{f.kernel}: {f.stage}: {f.reason}" for f in s.fallbacks]}


def stats_delta(before: dict, after: dict) -> dict:
    delta = {k: after[k] - before[k] for k in before if k != "fallbacks"}
    delta["fallbacks"] = after["fallbacks"][len(before["fallbacks"]):]
    return delta


def _arange_record(form: str, arange: str, rejected) -> dict:
    """A row's start: the automatic form's aranges, and the front end's rejection of coalesced ones."""
    if form != "auto":
        return {}
    rejection = {} if rejected is None else {"front_end_rejects_coalesced": first_line(rejected)}
    return dict({"arange": arange}, **rejection)


# --------------------------------------------------------------------------- the CPU dry run

def dry_compile(case, mode: str, ours: OurResolution) -> dict:
    """Compile one case in one mode for sm_90 (the plugin as ``mode`` has it)."""
    from triton.experimental.gluon._runtime import GluonASTSource

    form = FORM_OF[mode]

    def attempt(arange: str, rejected) -> tuple[dict, BaseException | None]:
        record = _arange_record(form, arange, rejected)
        try:
            module = load_kernels(case.file, form, arange)
            signature, constexprs, attrs = cases_module.compile_spec(case, form, arange)
        except Exception as error:
            return {"status": "fails", "error": f"does not load: {type(error).__name__}: {first_line(error)}"}, None
        before, reasons = stats_now(), len(ours.reasons)
        source = GluonASTSource(getattr(module, case.kernel), signature, constexprs, attrs=attrs)
        result = compile_for_sm90(source, {"num_warps": case.num_warps, **case.options})
        record.update(stats_delta(before, stats_now()), ours=ours.reasons[reasons:])
        if result.error is not None:
            record.update(status="fails", error=_carried_locations(first_line(result.error, result.stderr)))
            return record, result.error
        record.update(status="compiles", access=access_text(result.compiled.asm["ptx"]))
        return record, None
    return by_the_arange_rule(form, attempt)


def dry_child(mode: str, out: str, names=None) -> int:
    require_package()
    import linear_layouts  # noqa: F401
    install_api_shims()
    ours = OurResolution()
    enable_mode(mode)
    chosen, _ = selected_cases(names)
    rows = {}
    for case in chosen:
        rows[case.name] = dry_compile(case, mode, ours)
        # the front end's choice of aranges is kept across modes: record it with the row
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)
    return 0


def _dry_cell(mode: str, r: dict) -> str:
    if not r:
        return "not run"
    if r["status"] != "compiles":
        text = f"fails: {r['error']}"
        if r.get("ours"):
            text += f" (ours gave it back: {r['ours'][0]})"
        return text.replace("|", "/")
    notes = []
    if mode in ("enable", "advice", "auto_ours"):
        notes.append(("through our pipeline" if r.get("kernels") else "NOT through our pipeline")
                     + f", {r['islands']} of {r['conversions']} conversions as our islands")
        notes += [f"fell back: {f.split(': ', 1)[1]}" for f in r["fallbacks"]]
    if mode == "advice" and not r["advised"]:
        notes.append("the advice changed nothing")
    if mode == "auto_ours":
        notes.append("resolved by ours" if r["resolved"] else
                     "not resolved by ours" + (f": {r['ours'][0]}" if r.get("ours") else ""))
    if mode in ("auto_ours", "auto_triton"):
        notes.append(f"aranges {'CoalescedLayout' if r['arange'] == 'coalesced' else 'AutoLayout'}")
    return ("compiles; " + "; ".join(notes + [r["access"]])).replace("|", "/")


def render_dry(rows: dict, missing: list, version: str, command: str) -> str:
    lines = ["# Gluon kernels of other projects: what compiles in each mode (CPU, sm_90, no timing)", "",
             f"- triton {version}; kernels by the rule in `benchmarks/harness/peer_gluon_cases.py`, the automatic form "
             "by the rule in `benchmarks/harness/peer_gluon_forms.py` (stated before measuring); each mode in its own "
             "process with an empty Triton cache",
             f"- command: `{command}`",
             "- sources: " + ", ".join(f"{s.project} = {s.repo} {s.commit[:10]} ({s.license})"
                                       for s in (source_named("fla"), source_named("triton-viz")))]
    lines += [f"- **{m}**: not compiled" for m in missing]
    front = {name: r["auto_ours"].get("front_end_rejects_coalesced") for name, r in rows.items()
             if r.get("auto_ours", {}).get("front_end_rejects_coalesced")}
    if front:
        lines.append("- the front end rejects `CoalescedLayout` aranges (so the automatic form has `AutoLayout` ones) in: "
                     + "; ".join(f"{n} ({why})" for n, why in front.items()).replace("|", "/"))
    lines += ["", "| kernel | " + " | ".join(TITLES[m] for m in DRY_MODES) + " |",
              "|---|" + "---|" * len(DRY_MODES)]
    lines += [f"| {name} | " + " | ".join(_dry_cell(m, r.get(m, {})) for m in DRY_MODES) + " |"
              for name, r in rows.items()]
    return "\n".join(lines) + "\n"


def dry_run(chosen: list, names=None) -> dict:
    work = scratch_directory("ll_peer_gluon_dry_")
    rows = {c.name: {} for c in chosen}
    for mode in DRY_MODES:
        out = os.path.join(work, f"{mode}.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS")}
        env["TRITON_CACHE_DIR"] = os.path.join(work, f"cache-{mode}")
        argv = [sys.executable, os.path.abspath(__file__), "--dry-child", mode, out] + (["--only", *names] if names else [])
        done = subprocess.run(argv, env=env)
        if done.returncode != 0 or not os.path.exists(out):
            for name in rows:
                rows[name][mode] = {"status": "fails", "error": f"the {mode} process ended with status {done.returncode}"}
            continue
        with open(out) as f:
            for name, record in json.load(f).items():
                rows[name][mode] = record
    return rows


# --------------------------------------------------------------------------- the GPU run

def _same_bits(torch, a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.contiguous().view(torch.uint8),
                                                                    b.contiguous().view(torch.uint8))


def _time(triton, fn) -> float:
    try:
        return triton.testing.do_bench_cudagraph(fn, rep=100, return_mode="median")
    except Exception:          # a launch a graph cannot capture: timed as launched
        return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def _first_launch(case, form: str, arange: str, rejected, torch, ours: OurResolution):
    """((the row so far, (the launch, its outputs) or None where it failed), the error or None):
    one attempt of :func:`harness.peer_gluon_forms.by_the_arange_rule`."""
    record = _arange_record(form, arange, rejected)
    try:
        module = load_kernels(case.file, form, arange)
        args, outputs = cases_module.launch_arguments(case, torch, form, arange)
    except Exception as error:
        return ({"error": f"does not load: {type(error).__name__}: {first_line(error)}"}, None), None
    kernel = getattr(module, case.kernel)

    def launch(kernel=kernel, args=args):
        kernel[case.grid](*args, num_warps=case.num_warps, **case.options)
    before, reasons = stats_now(), len(ours.reasons)
    result = launch_quietly(launch, torch)
    record.update(stats_delta(before, stats_now()), ours=ours.reasons[reasons:])
    if result.error is not None:
        record["error"] = _carried_locations(first_line(result.error, result.stderr))
        # without its traceback, whose frames would keep this attempt's tensors through the next
        return (record, None), result.error.with_traceback(None)
    return (record, (launch, outputs)), None


def run_case(case, mode: str, round_: int, work: str, torch, triton, ours: OurResolution) -> dict:
    form = FORM_OF[mode]
    record, launched = by_the_arange_rule(
        form, lambda arange, rejected: _first_launch(case, form, arange, rejected, torch, ours))
    if launched is None:
        return record
    launch, outputs = launched
    if round_ == 0:
        stock_file = os.path.join(work, f"stock-{case.name.replace('/', '-')}.pt")
        if mode == "stock":
            torch.save({k: v.cpu() for k, v in outputs.items()}, stock_file)
        elif os.path.exists(stock_file):
            stock = torch.load(stock_file)
            record["bit_exact"] = all(_same_bits(torch, outputs[k].cpu(), stock[k]) for k in stock)
            if not record["bit_exact"]:
                checks = {k: cases_module.project_tolerance_ok(case, torch, outputs[k].cpu(), stock[k]) for k in stock
                          if not _same_bits(torch, outputs[k].cpu(), stock[k])}
                record["within_tolerance"] = all(ok for ok, _ in checks.values())
                record["differences"] = {k: measure for k, (_, measure) in checks.items()}
    record["ms"] = _time(triton, launch)
    del launched, launch, outputs
    torch.cuda.empty_cache()
    return record


def gpu_child(mode: str, round_: int, out: str, work: str, names=None) -> int:
    require_package()
    import torch
    import triton

    import linear_layouts  # noqa: F401
    install_api_shims()
    ours = OurResolution()
    enable_mode(mode)
    chosen, _ = selected_cases(names)
    rows = {}
    for case in chosen:
        print(f"[peer_gluon] round {round_} {mode} {case.name}", flush=True)
        rows[case.name] = run_case(case, mode, round_, work, torch, triton, ours)
        with open(out, "w") as f:          # after every case: a crash later keeps the cases before it
            json.dump(rows, f, indent=1)
    return 0


def run_rounds(rounds: int, names=None, child_timeout: int = 300) -> tuple[dict, list]:
    """{case: {mode: {"rounds": [the child's record of each round]}}}."""
    work = scratch_directory("ll_peer_gluon_")
    chosen, missing = selected_cases(names)
    rows = {c.name: {m: {"rounds": []} for m in MODES} for c in chosen}
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS")}
    for round_ in range(rounds):
        shift = round_ % len(MODES)
        for mode in MODES[shift:] + MODES[:shift]:
            out = os.path.join(work, f"{mode}{round_}.json")
            argv = [sys.executable, os.path.abspath(__file__), "--child", mode, str(round_), out, work]
            try:
                status = subprocess.run(argv + (["--only", *names] if names else []), timeout=child_timeout,
                                        env=dict(env, TRITON_CACHE_DIR=os.path.join(work, f"cache-{mode}"))).returncode
            except subprocess.TimeoutExpired:
                status = f"ended after {child_timeout} s"
            records = {}
            if os.path.exists(out):
                with open(out) as f:
                    records = json.load(f)
            for name in rows:
                rows[name][mode]["rounds"].append(records.get(name, {"error": f"not reached: process status {status}"}))
    for modes in rows.values():
        for record in modes.values():
            first = record["rounds"][0]
            record.update({k: v for k, v in first.items() if k != "ms"})
            times = [r["ms"] for r in record["rounds"] if "ms" in r]
            if times and len(times) == len(record["rounds"]):
                record["median_ms"] = statistics.median(times)
    return rows, missing


def run_project_tests(quick: bool, workers: int, timeout: int, modes=("stock", "plugin")) -> dict:
    """FLA's tests/ops/test_attnres.py with its Gluon backend, stock and with LINEAR_LAYOUTS=1."""
    from triton_language_tests import outcomes_from_reports, read_mode_records, sum_stats
    folder = source_named("fla").folder
    results = {}
    for mode in modes:
        records = scratch_directory(f"ll_peer_gluon_tests_{mode}_")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS")}
        env.update(FLA_ATTNRES_GLUON="1", LL_PEER_MODE=mode, LL_PEER_OUT=records, PYTHONDONTWRITEBYTECODE="1",
                   TRITON_CACHE_DIR=os.path.join(records, "cache"),
                   PYTHONPATH=os.pathsep.join([os.path.join(BENCHMARKS, "peer_tests"), folder]
                                              + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]))
        if mode == "plugin":
            env["LINEAR_LAYOUTS"] = "1"
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "peer_pytest_plugin",
                "-o", "log_cli=false", "tests/ops/test_attnres.py"]
        argv += ["-n", str(workers)] if workers > 1 else []
        argv += ["-k", QUICK_TESTS] if quick else []
        start = time.time()
        try:
            done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
            status, tail = done.returncode, (done.stdout + done.stderr)[-3000:]
        except subprocess.TimeoutExpired as expired:
            status, tail = "timeout", str(expired.stdout or "")[-3000:]
        rec = read_mode_records(records)
        outcomes = outcomes_from_reports(rec["reports"])
        counts: dict = {}
        for outcome in outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        results[mode] = {"status": status, "seconds": round(time.time() - start, 1), "counts": counts,
                         "failed": sorted(n for n, o in outcomes.items() if o not in ("passed", "skipped")),
                         "stats": sum_stats(rec["stats"]), "active": [p.get("active") for p in rec["processes"]],
                         "tail": tail if status not in (0,) else ""}
    return results


def _ratio(row: dict, mode: str):
    ms, base = row[mode].get("median_ms"), row["stock"].get("median_ms")
    return ms / base if ms and base else None


def _gpu_cell(row: dict, mode: str) -> str:
    r = row[mode]
    if "error" in r:
        text = "fails: " + r["error"]
        return (text + (f" (ours gave it back: {r['ours'][0]})" if r.get("ours") else "")).replace("|", "/")
    ratio = _ratio(row, mode)
    notes = []
    if mode != "stock":
        if r.get("bit_exact"):
            notes.append("bit-exact")
        elif "bit_exact" not in r:
            notes.append("not compared: no stock output")
        else:
            diffs = "; ".join(f"{k} {v}" for k, v in r.get("differences", {}).items())
            notes.append(("within the project's tolerance" if r.get("within_tolerance") else "OUTSIDE the tolerance")
                         + f" ({diffs})")
        notes.append(("" if r.get("kernels") or mode == "stock" else "NOT through our pipeline, ")
                     + f"{r.get('islands', 0)} of {r.get('conversions', 0)} conversions ours")
        notes += [f"fell back: {f.split(': ', 1)[1]}" for f in r.get("fallbacks", [])]
    if mode == "advice" and not r.get("advised"):
        notes.append("advice changed nothing")
    if mode == "auto_ours":
        notes.append("resolved by ours" if r.get("resolved") else
                     "NOT resolved by ours" + (f": {r['ours'][0]}" if r.get("ours") else ""))
        notes.append(f"aranges {'Coalesced' if r.get('arange') == 'coalesced' else 'Auto'}")
    head = f"{ratio:.3f}" if ratio is not None else ("-" if mode != "stock" else "?")
    return (head + (f" ({'; '.join(notes)})" if notes else "")).replace("|", "/")


def render_gpu(rows: dict, missing: list, tests: dict | None, device: str, versions: str, command: str,
               rounds: int) -> str:
    lines = ["# Gluon kernels of other projects on the GPU: as written, with the plugin, with its advice, automatic", "",
             f"- {device}; {versions}",
             f"- command: `{command}`; kernels and launches by the rule in `benchmarks/harness/peer_gluon_cases.py`, "
             "the automatic form by the rule in `benchmarks/harness/peer_gluon_forms.py` (both stated before measuring); "
             f"each mode in its own process and Triton cache, {rounds} rounds with the order rotating, median of "
             "`do_bench_cudagraph` times; outputs compared with stock's bit for bit, else within the project's own "
             "test tolerance (FLA: RMS error ratio < 0.005; triton-viz: exact)",
             "- sources: " + ", ".join(f"{s.project} = {s.repo} {s.commit[:10]} ({s.license})"
                                       for s in (source_named("fla"), source_named("triton-viz")))]
    lines += [f"- **{m}**: not run" for m in missing]
    for mode in MODES[1:]:
        ratios = [_ratio(r, mode) for r in rows.values() if _ratio(r, mode)]
        if ratios:
            lines.append(f"- {TITLES[mode]} / stock: geomean **{statistics.geometric_mean(ratios):.3f}**, "
                         f"worst {max(ratios):.3f}, over {len(ratios)} of {len(rows)} kernels")
    if rows:
        lines += ["", "| kernel | stock ms | " + " | ".join(f"{TITLES[m]} / stock" for m in MODES[1:]) + " |",
                  "|---|---:|" + "---|" * (len(MODES) - 1)]
    for name, row in rows.items():
        stock = row["stock"]
        ms = f"{stock['median_ms']:.4f}" if "median_ms" in stock else "fails: " + stock.get("error", "?")
        lines.append(f"| {name} | {ms} | " + " | ".join(_gpu_cell(row, m) for m in MODES[1:]) + " |")
    if tests is not None:
        lines += ["", "## FLA's own test (`tests/ops/test_attnres.py`, `FLA_ATTNRES_GLUON=1`)", "",
                  "| mode | outcomes | seconds | processes with the plugin on | plugin counts (kernels, conversions, islands, "
                  "fallbacks) | not passed |",
                  "|---|---|---:|---|---|---|"]
        for mode, t in tests.items():
            s = t["stats"]
            lines.append(f"| {mode}{' (LINEAR_LAYOUTS=1)' if mode == 'plugin' else ''} | "
                         + ", ".join(f"{k} {v}" for k, v in sorted(t["counts"].items())) + f" | {t['seconds']} | "
                         f"{sum(map(bool, t.get('active', [])))} of {len(t.get('active', []))} | {s['kernels']}, {s['conversions']}, {s['islands']}, {s['fallbacks']} | "
                         + (", ".join(t["failed"][:5]) or "-") + " |")
        lines.append("")
        lines.append("triton-viz's tests run its kernels in triton-viz's CPU simulator, not compiled (and need "
                     "`triton_viz`): not run; its kernels' outputs are compared exactly in the kernel table of `peer_gluon_gpu.md` (its tests' `atol=0`).")
    return "\n".join(lines) + "\n"


def _bad(rows: dict, tests) -> list[str]:
    bad = []
    for name, row in rows.items():
        if "error" in row["stock"]:
            bad.append(f"{name}: stock fails")
            continue
        for mode in MODES[1:]:
            r = row[mode]
            if "error" in r and not (mode == "auto_ours"):
                bad.append(f"{name}: {mode} fails")
            elif "bit_exact" in r and not r["bit_exact"] and not r.get("within_tolerance"):
                bad.append(f"{name}: {mode} outside the tolerance")
    if tests and "plugin" in tests and "stock" in tests:
        worse = set(tests["plugin"]["failed"]) - set(tests["stock"]["failed"])
        bad += [f"FLA test fails with the plugin only: {n}" for n in sorted(worse)]
    if tests and "plugin" in tests and not all(tests["plugin"].get("active") or [False]):
        bad.append("FLA test: the plugin was not on in every process")
    return bad


def gpu_run(args, argv) -> int:
    import torch
    import triton
    command = "python benchmarks/peer_gluon_gpu.py " + " ".join(argv)
    rows, missing = ({}, []) if args.tests_only else run_rounds(args.rounds, args.only)
    tests = None
    if not args.no_tests and why_not_carried("fla") is None:
        tests = run_project_tests(args.quick, args.test_workers, args.test_timeout, tuple(args.test_modes))
    versions = f"triton {triton.__version__}, torch {torch.__version__}"
    text = render_gpu(rows, missing, tests, torch.cuda.get_device_name(), versions, command.strip(), args.rounds)
    os.makedirs(args.out, exist_ok=True)
    stem = "peer_gluon_tests" if args.tests_only else "peer_gluon_gpu"
    with open(os.path.join(args.out, f"{stem}.json"), "w") as f:
        json.dump({"rows": rows, "tests": tests, "versions": versions, "missing": missing}, f, indent=1)
    publish(text.rstrip("\n"), os.path.join(args.out, f"{stem}.md"))
    bad = _bad(rows, tests)
    for b in bad:
        print(f"peer_gluon_gpu: {b}", file=sys.stderr)
    return 1 if bad else 0


# --------------------------------------------------------------------------- the skeleton's four parts

def options(parser) -> None:
    parser.add_argument("--only", nargs="*", metavar="NAME", help="cases whose name contains one of these")
    parser.add_argument("--quick", action="store_true", help=f"FLA's test: only the cases matching -k {QUICK_TESTS}")
    parser.add_argument("--no-tests", action="store_true", help="skip FLA's own test")
    parser.add_argument("--tests-only", action="store_true", help="only FLA's own test (stock and plugin)")
    parser.add_argument("--test-workers", type=int, default=4, help="pytest-xdist workers for FLA's test")
    parser.add_argument("--test-timeout", type=int, default=300, help="seconds for each of FLA's test runs")
    parser.add_argument("--test-modes", nargs="+", choices=("stock", "plugin"), default=["stock", "plugin"],
                        help="FLA's test: stock (plugin off) and/or plugin (LINEAR_LAYOUTS=1)")


def chosen_cases(args, env) -> tuple[list, list]:
    """The dry run's cases and why the others are not compiled; the GPU run's processes choose
    theirs from ``--only`` themselves (each a ``--child``)."""
    return selected_cases(args.only) if env.dry_run else ([], [])


def run(args, env, chosen) -> dict | int:
    """The dry run's rows; the GPU run measures and writes its report itself (its exit status)."""
    if not env.dry_run:
        return gpu_run(args, args.argv)
    return dry_run(chosen[0], args.only)


def summary(args, env, chosen, rows) -> int:
    if not env.dry_run:
        return rows
    missing = chosen[1]
    if not rows:
        print(f"peer_gluon_gpu: nothing to compile ({'; '.join(missing) or 'no case matches'})", file=sys.stderr)
        return 1
    version = env.header["triton"]
    command = "python benchmarks/peer_gluon_gpu.py --dry" + (" --out benchmarks/results" if args.out else "")
    text = render_dry(rows, missing, version, command)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    publish(text.rstrip("\n"), os.path.join(args.out, f"peer_gluon_dry_{version}.md") if args.out else "")
    return 0 if all(r.get("stock", {}).get("status") == "compiles" for r in rows.values()) else 1


def child_main(argv: list) -> int:
    """One mode's process, started by :func:`run_rounds` (``--child MODE ROUND JSON WORK``) or
    :func:`dry_run` (``--dry-child MODE JSON``), each with the parent's ``--only``."""
    parser = argparse.ArgumentParser(prog="peer_gluon_gpu.py")
    parser.add_argument("--child", nargs=4, metavar=("MODE", "ROUND", "JSON", "WORK"))
    parser.add_argument("--dry-child", nargs=2, metavar=("MODE", "JSON"))
    parser.add_argument("--only", nargs="*", metavar="NAME")
    args = parser.parse_args(argv)
    if args.child:
        mode, round_, out, work = args.child
        return gpu_child(mode, int(round_), out, work, args.only)
    return dry_child(*args.dry_child, names=args.only)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--child"], ["--dry-child"]):
        return child_main(argv)
    if argv[:1] == ["hopper"]:    # Hopper-class Gluon kernels, every mode in this process (the A/A run)
        from harness import hopper_gluon
        return hopper_gluon.main(argv[1:])
    return skeleton.main("peer_gluon_gpu", __doc__, argv, options=options, cases=chosen_cases, run=run,
                         summary=summary, dry_run="compile every mode for sm_90 on the CPU, no timing",
                         rounds=3, dry_run_prints=True,
                         out_help="the folder to write into (GPU default: benchmarks/results; --dry: only where given)")


if __name__ == "__main__":
    sys.exit(main())
