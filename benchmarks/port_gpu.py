"""The port (``linear_layouts.passes.port.port.port``) on real third-party Triton kernels.

    python benchmarks/port_gpu.py --out benchmarks/results             # GPU (H100/H200, triton 3.6, torch)
    python benchmarks/port_gpu.py --cpu --out benchmarks/results       # any machine, no torch needed
    python benchmarks/port_gpu.py --priced --out benchmarks/results    # the cost model's prices and the advice
    python benchmarks/port_gpu.py --cpu --only liger_rms_norm_fwd,fla_swish_fwd
    python benchmarks/port_gpu.py --cpu --targets sm120,gfx950 --out benchmarks/results   # the other two targets
    python benchmarks/port_gpu.py --merge run1.jsonl run2.jsonl --machine "..." --command "..."   # one summary (a kernel in a later file: its later row)

The kernels and their launches are ``benchmarks/harness/port_corpus.py`` (Triton's tutorials,
Liger-Kernel 0.8.5, flash-linear-attention 0.5.2, carried in ``benchmarks/port_corpus/``).

GPU: for each case, the port for sm90 with the case's warps and stages; the original and the
port run on copies of the same inputs (``check.run_both``: every tensor compared, bit for bit or
within the case's tolerance); then, in ``--rounds`` interleaved rounds, ``triton.testing.do_bench``
(median) of the original, the port, Triton's own translator's Gluon (``triton_to_gluon_translater``
in 3.6, ``triton_to_gluon_translator`` for sm90 in 3.8+; its failures reported, not raised) and
the original a second time (the A/A run: the median of original/original over rounds, and its
spread, max - min, is the noise floor of the ratios beside it).  Writes
``port_gpu_<triton>.md`` (a table: kernel, project, correct?, original us, port/original,
translation/original, A/A; and geomeans) and ``port_gpu_<triton>.jsonl`` (one row a case,
written as each case ends).  A case's failure is its row's text; the run goes on.  Past
``--budget`` seconds (default 420) the remaining cases are only checked, not timed.

CPU (``--cpu``): for each case, the port for sm80, sm90, sm100 and gfx942 with ``check=True``
(the port compiled for the target, its global accesses at least as wide as the original's),
from ``port_corpus.cpu_launch`` (type strings for tensors: no torch).  Writes
``port_cpu_<triton>.md`` and ``.jsonl``: per case and target ``ok``, ``narrower`` or the error.

Priced (``--priced``): for each case, the port for sm90 beside Triton's compile and Triton's
translation, each priced by the cost model (``comparison.compare``), and the advice's findings on
the port.  Writes ``port_priced_<triton>.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback

from harness import port_corpus

CPU_TARGETS = ("sm80", "sm90", "sm100", "gfx942")


def _one_line(error: BaseException) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[-1] if lines else ''}".strip()


def _geomean(values):
    values = [v for v in values if isinstance(v, (int, float)) and v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def _port_arguments(case, kernel, arguments):
    """port()'s keywords: the launch, with a kernel parameter named num_warps / num_stages taken
    out (port() has keywords of those names) and given as port()'s own."""
    import inspect
    names = set(inspect.signature(kernel.fn).parameters)
    launch = dict(arguments)
    warps, stages = case.num_warps, case.num_stages
    if "num_stages" in names:
        stages = launch.pop("num_stages")
    if "num_warps" in names:
        warps = launch.pop("num_warps")
    return warps, stages, launch


# --------------------------------------------------------------------------- CPU mode

def _in_child(mode, case, timeout, targets=None, budget_left=None, rounds=None):
    """One case in a fresh process (a crash or a hang costs that case only): its row."""
    import subprocess
    command = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--only", case.name]
    if targets:
        command += ["--targets", ",".join(targets)]
    if budget_left is not None:
        command += ["--budget", str(budget_left)]
    if rounds is not None:
        command += ["--rounds", str(rounds)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("ROW "):
            return json.loads(line[4:])
    tail = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()][-1:]
    return {"error": f"the case's process ended with status {done.returncode}" + (f": {tail[0][:200]}" if tail else "")}


def cpu_row(case, targets=CPU_TARGETS):
    """The port of one case for each target, checked: ``ok``, ``narrower (...)``, or the error."""
    from linear_layouts.passes.port.port import port
    row = {"kernel": case.name, "project": case.project}
    started = time.time()
    try:
        kernel = case.kernel()
    except Exception as error:          # noqa: BLE001
        kernel, row["load"] = None, _one_line(error)
    for target in targets:
        if kernel is None:
            row[target] = "not loaded: " + row["load"]
            continue
        try:
            warps, stages, launch = _port_arguments(case, kernel, port_corpus.cpu_launch(case))
            made = port(kernel, target, num_warps=warps, num_stages=stages, check=True, details=True, **launch)
            check = made.check
            if check.ok:
                row[target] = "ok"
            elif check.compiled and not check.as_wide:
                row[target] = f"narrower ({check.ported.describe()} vs {check.original.describe()})"
            else:
                row[target] = "check: " + check.summary().replace("\n", "; ")
        except Exception as error:      # noqa: BLE001
            row[target] = _one_line(error)
    row["seconds"] = round(time.time() - started, 1)
    return row


def priced_row(case):
    """One case for sm_90 on the CPU: the modelled cost of Triton's compile, Triton's translation
    and the port, and the advice's findings on the port (where the cost model prices another
    layout of the port's lower)."""
    from linear_layouts.passes.port.comparison import compare
    from linear_layouts.passes.port.port import port
    row = {"kernel": case.name, "project": case.project}
    try:
        kernel = case.kernel()
        warps, stages, launch = _port_arguments(case, kernel, port_corpus.cpu_launch(case))
        made = port(kernel, "sm90", num_warps=warps, num_stages=stages, details=True, **launch)
        original, translation, ported = compare(made, kernel)
        row.update(original=original.cost, translation=translation.cost if translation.compiled else None,
                   port=ported.cost, findings=[f.text() for f in ported.findings])
        if ported.advice_problem:
            row["error"] = f"the advice could not read the port: {ported.advice_problem}"
    except Exception as error:          # noqa: BLE001
        row["error"] = _one_line(error)
    return row


def run_priced(cases, out, version):
    rows = [_in_child("priced", case, 600) for case in cases]
    lines = [f"# The port priced: {len(cases)} kernels for sm_90 (triton {version})", "",
             "`python benchmarks/port_gpu.py --priced`: the cost model's price of each compile (loop-weighted), "
             "and the advice on the port: each layout of the port's it prices lower.", "",
             "| kernel | Triton | Triton's translation | the port | the advice on the port |", "|---|---:|---:|---:|---|"]
    for row in rows:
        cost = {k: f"{row[k]:,.0f}" if isinstance(row.get(k), float) else "-" for k in ("original", "translation", "port")}
        advice = "; ".join(row.get("findings", [])) or row.get("error") or "none"
        lines.append(f"| {row.get('kernel', '?')} | {cost['original']} | {cost['translation']} | {cost['port']} | "
                     f"{advice.replace('|', '/')} |")
    found = sum(bool(row.get("findings")) for row in rows)
    lines += ["", f"the advice finds a cheaper layout in {found} of {len(rows)} ports"]
    path = os.path.join(out, f"port_priced_{version}.md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines[-1:]) + f"\nwrote {path}")
    return 0


def run_cpu(cases, out, version, targets=CPU_TARGETS):
    rows = []
    name = f"port_cpu_{version}" + ("" if tuple(targets) == CPU_TARGETS else "_" + "_".join(targets))
    jsonl = os.path.join(out, name + ".jsonl")
    open(jsonl, "w").close()
    for case in cases:
        row = {"kernel": case.name, "project": case.project, **{t: "" for t in targets}}
        found = _in_child("cpu", case, 600, list(targets))
        if "error" in found:            # a crash: each target alone, to tell which one crashes
            found = {}
            for target in targets:
                alone = _in_child("cpu", case, 300, [target])
                found[target] = alone.get(target, alone.get("error", "?"))
        row.update(found)
        rows.append(row)
        with open(jsonl, "a") as handle:
            handle.write(json.dumps(row) + "\n")
        print(f"{case.name:34s} " + "  ".join(f"{t}: {row[t][:60]}" for t in targets), flush=True)
    lines = [f"# The port on the CPU: {len(cases)} kernels x {len(targets)} targets (triton {version})", "",
             f"`python benchmarks/port_gpu.py --cpu{'' if tuple(targets) == CPU_TARGETS else ' --targets ' + ','.join(targets)}`; Python {platform.python_version()}, {platform.machine()}. "
             "ok: compiles for the target, same arguments, global accesses at least as wide as the original's.", "",
             "| kernel | project | " + " | ".join(targets) + " |", "|---|---|" + "---|" * len(targets)]
    for row in rows:
        lines.append(f"| {row['kernel']} | {row['project']} | " +
                     " | ".join(row[t].replace("|", "\\|") for t in targets) + " |")
    lines += ["", "ok per target: " + ", ".join(f"{t} {sum(r[t] == 'ok' for r in rows)}/{len(rows)}" for t in targets)]
    path = os.path.join(out, name + ".md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n" + lines[-1] + f"\nwrote {path}")
    return 0


# --------------------------------------------------------------------------- GPU mode

def _translation(kernel):
    """Triton's own translator's Gluon source for ``kernel`` (3.6's or 3.8+'s spelling)."""
    try:
        from triton.tools.triton_to_gluon_translator.target import TranslatorTarget
        from triton.tools.triton_to_gluon_translator.translator import convert_triton_to_gluon
        return convert_triton_to_gluon([kernel], target=TranslatorTarget("sm90"))
    except ImportError:
        from triton.tools.triton_to_gluon_translater.translator import convert_triton_to_gluon
        return convert_triton_to_gluon([kernel])


def translation_row(case) -> dict:
    """Whether Triton's translation of the case compiles for sm90 (in a child: under 3.6 it emits
    tcgen05 for a dot on sm90 and LLVM aborts the process)."""
    import triton

    from linear_layouts.passes.port.launch import launch_for
    from linear_layouts.passes.port.module_file import loaded_module
    try:
        from triton.experimental.gluon._runtime import GluonASTSource
    except ImportError:
        from triton.experimental.gluon import GluonASTSource
    kernel = case.kernel()
    warps, stages, launch_arguments = _port_arguments(case, kernel, port_corpus.cpu_launch(case))
    launch = launch_for(kernel, "sm90", warps, stages, arguments=launch_arguments)
    try:
        with loaded_module(_translation(kernel)) as (module, _):
            translated = getattr(module, kernel.fn.__name__)
            triton.compile(GluonASTSource(translated, dict(launch.signature), dict(launch.constexprs), attrs=launch.attrs),
                           target=triton.backends.compiler.GPUTarget("cuda", 90, 32),
                           options={"num_warps": warps, "num_stages": stages})
    except Exception as error:          # noqa: BLE001
        return {"translation": "fails: " + _one_line(error)[:160]}
    return {"translation": "compiles"}


def gpu_row(case, rounds, time_left):
    """One case on the GPU: the port checked against the original, and timed (unless ``time_left`` <= 0)."""
    import torch
    from triton.testing import do_bench

    from linear_layouts.passes.port.check import run_both
    from linear_layouts.passes.port.module_file import loaded_module
    from linear_layouts.passes.port.port import port

    device = "cuda"
    row = {"kernel": case.name, "project": case.project, "correct": "", "original_us": None, "port": None,
           "translation": None, "aa": None, "aa_spread": None, "error": ""}
    contexts = []
    try:
        kernel = case.kernel()
        arguments = case.launch(device)
        warps, stages, launch = _port_arguments(case, kernel, arguments)
        made = port(kernel, "sm90", num_warps=warps, num_stages=stages, details=True, **launch)
        atol, rtol = case.tol if case.tol else (None, None)
        row["correct"] = run_both(kernel, made.source, made.kernel_name, arguments, case.grid, made.launch, atol, rtol)
        context = loaded_module(made.source)
        contexts.append(context)
        ported = getattr(context.__enter__()[0], made.kernel_name)
        options = case.options(kernel)
        timed = {"original": lambda: kernel[case.grid](**arguments, **options),
                 "port": lambda: ported[case.grid](**arguments, num_warps=warps)}
        if any(t.dots for t in made.translations) and options.get("num_stages", 3) > 1:
            # a dot loop's bounds: the original without software pipelining, and the port written
            # without it (pipeline=False), beside the pipelined port
            unpipelined = dict(options, num_stages=1)
            timed["original_unpipelined"] = lambda: kernel[case.grid](**arguments, **unpipelined)
            plain = port(kernel, "sm90", num_warps=warps, num_stages=stages, details=True, pipeline=False, **launch)
            row["pipelined_loops"] = len(made.pipelines.loops)
            context = loaded_module(plain.source)
            contexts.append(context)
            ported_plain = getattr(context.__enter__()[0], plain.kernel_name)
            timed["port_unpipelined"] = lambda: ported_plain[case.grid](**arguments, num_warps=warps)
        verdict = _in_child("translation", case, 180)      # Triton's translation may abort its process
        try:
            if verdict.get("translation") != "compiles":
                raise RuntimeError(verdict.get("translation") or verdict.get("error") or "no answer")
            context = loaded_module(_translation(kernel))
            contexts.append(context)
            translated = getattr(context.__enter__()[0], kernel.fn.__name__)
            translated[case.grid](**case.launch(device), num_warps=warps)       # compiles and runs, or raises
            torch.cuda.synchronize()
            timed["translation"] = lambda: translated[case.grid](**arguments, num_warps=warps)
        except Exception as error:      # noqa: BLE001
            row["translation"] = "fails: " + _one_line(error)[:160]
        if time_left <= 0:
            row["error"] = "not timed (past --budget)"
            return row
        order = list(timed) + ["original_again"]
        times = {name: [] for name in order}
        for r in range(rounds):        # interleaved, each round starting one mode later
            for name in order[r % len(order):] + order[:r % len(order)]:
                fn = timed["original"] if name == "original_again" else timed[name]
                times[name].append(do_bench(fn, warmup=10, rep=40, return_mode="median") * 1000)
        base = times["original"]
        row["original_us"] = round(statistics.median(base), 2)
        row["port"] = round(statistics.median(p / o for p, o in zip(times["port"], base)), 4)
        if times.get("original_unpipelined"):
            row["unpipelined"] = round(statistics.median(p / o for p, o in zip(times["original_unpipelined"], base)), 4)
            row["port_unpipelined"] = round(statistics.median(p / o for p, o in zip(times["port_unpipelined"], base)), 4)
        if times.get("translation"):
            row["translation"] = round(statistics.median(p / o for p, o in zip(times["translation"], base)), 4)
        aa = [a / o for a, o in zip(times["original_again"], base)]
        row["aa"], row["aa_spread"] = round(statistics.median(aa), 4), round(max(aa) - min(aa), 4)
    except Exception as error:          # noqa: BLE001
        row["error"] = _one_line(error)[:300]
        if os.environ.get("PORT_GPU_TRACEBACK"):
            traceback.print_exc()
    finally:
        for context in reversed(contexts):
            try:
                context.__exit__(None, None, None)
            except Exception:           # noqa: BLE001
                pass
    return row


def run_gpu(cases, out, version, rounds, budget):
    import torch
    gpu = torch.cuda.get_device_name()
    started = time.time()
    rows = []
    jsonl = os.path.join(out, f"port_gpu_{version}.jsonl")
    open(jsonl, "w").close()
    for case in cases:
        row = {"kernel": case.name, "project": case.project, "correct": "", "original_us": None, "port": None,
               "translation": None, "aa": None, "aa_spread": None, "error": ""}
        row.update(_in_child("gpu", case, 240, budget_left=budget - (time.time() - started), rounds=rounds))
        rows.append(row)
        with open(jsonl, "a") as handle:
            handle.write(json.dumps(row) + "\n")
        print(f"{case.name:34s} {str(row['correct'])[:40]:40s} orig {row['original_us']} us  port {row['port']}  "
              f"translation {str(row['translation'])[:50]}  A/A {row['aa']}  {row['error'][:120]}", flush=True)

    machine = f"{gpu}, triton {version}, torch {torch.__version__}"
    command = f"python benchmarks/port_gpu.py --rounds {rounds}; {round(time.time() - started)} s"
    write_summary(rows, out, version, machine, command)
    return 0


def write_summary(rows, out, version, machine, command) -> str:
    """``port_gpu_<version>.md`` from the rows (a run's, or several runs' merged: ``--merge``)."""
    def cell(value):
        return f"{value:.3f}" if isinstance(value, float) else (str(value).replace("|", "\\|") if value else "")

    lines = [f"# The port on the GPU: {len(rows)} kernels ({machine})", "",
             f"`{command}`. Times: `triton.testing.do_bench` medians; ratios: the median over rounds of each "
             "round's ratio to the original; A/A: the original timed again (median ratio, and max - min over "
             "rounds).", "",
             "| kernel | project | correct? | original us | port / original | translation / original | A/A (spread) | error |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        aa = f"{row['aa']:.3f} ({row['aa_spread']:.3f})" if row.get("aa") is not None else ""
        lines.append(f"| {row['kernel']} | {row['project']} | {cell(row['correct'])} | {cell(row['original_us'])} | "
                     f"{cell(row['port'])} | {cell(row['translation'])} | {aa} | {cell(row['error'])} |")
    lines += [""] + [f"- {row['kernel']}: the original with num_stages=1 (no software pipelining) runs at "
                     f"{row['unpipelined']:.3f}x its own time"
                     + (f"; the port written without pipelining (pipeline=False) at {row['port_unpipelined']:.3f}x, "
                        f"the port above pipelines {row.get('pipelined_loops', 0)} loop(s)"
                        if row.get("port_unpipelined") else "")
                     for row in rows if row.get("unpipelined")]
    correct = sum(str(r["correct"]).startswith("equal") for r in rows)
    timed = [r["port"] for r in rows if isinstance(r["port"], float)]
    lines += ["", f"correct: {correct}/{len(rows)}; geomean port/original {_geomean(timed):.3f} over {len(timed)} "
                  f"(worst {max(timed, default=float('nan')):.3f}); translation/original "
                  f"{_geomean([r['translation'] for r in rows]):.3f} over "
                  f"{sum(isinstance(r['translation'], float) for r in rows)} it compiles; "
                  f"A/A {_geomean([r['aa'] for r in rows]):.3f}"]
    no_dot = [r["port"] for r in rows if isinstance(r["port"], float) and not r.get("unpipelined")]
    if no_dot:
        lines.append(f"without the dot kernels: geomean port/original {_geomean(no_dot):.3f} "
                     f"over {len(no_dot)} (worst {max(no_dot):.3f}, best {min(no_dot):.3f})")
    else:
        lines.append("without the dot kernels: none timed")
    path = os.path.join(out, f"port_gpu_{version}.md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n" + lines[-1] + f"\nwrote {path}")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--cpu", action="store_true", help="port for sm80/sm90/sm100/gfx942 on the CPU (no torch)")
    parser.add_argument("--priced", action="store_true", help="on the CPU: the three compiles priced by the cost "
                        "model, and the advice on each port (sm90)")
    parser.add_argument("--only", default="", help="comma-separated case names (default: every case)")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds, interleaved (default: %(default)s)")
    parser.add_argument("--budget", type=float, default=420, help="seconds after which cases are checked, not timed")
    parser.add_argument("--targets", default=",".join(CPU_TARGETS),
                        help="with --cpu: the targets (default: %(default)s; sm120 and gfx950 also ported)")
    parser.add_argument("--merge", nargs="+", metavar="JSONL",
                        help="write the summary of these runs' rows (with --machine and --command)")
    parser.add_argument("--machine", default="", help="with --merge: the GPU, Triton and torch the rows come from")
    parser.add_argument("--command", default="", help="with --merge: the commands that made the rows")
    parser.add_argument("--worker", choices=("cpu", "gpu", "translation", "priced"),
                        help=argparse.SUPPRESS)   # one case, in a child process
    args = parser.parse_args(argv)
    cases = port_corpus.CASES
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {c.name for c in cases}
        if unknown:
            parser.error(f"no case {sorted(unknown)[0]!r}")
        cases = [c for c in cases if c.name in wanted]
    if args.merge:
        # a kernel measured again in a later file takes its later row; rows in the corpus's order
        by_kernel = {}
        for path in args.merge:
            for line in open(path):
                if line.strip():
                    row = json.loads(line)
                    if not (by_kernel.get(row["kernel"]) and row.get("error", "").startswith("not timed")):
                        by_kernel[row["kernel"]] = row
        order = [case.name for case in port_corpus.CASES]
        rows = sorted(by_kernel.values(), key=lambda r: order.index(r["kernel"]) if r["kernel"] in order else len(order))
        os.makedirs(args.out, exist_ok=True)
        version = os.path.basename(args.merge[0]).rsplit("_", 1)[-1].rsplit(".", 1)[0]
        with open(os.path.join(args.out, f"port_gpu_{version}.jsonl"), "w") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        write_summary(rows, args.out, version, args.machine, args.command)
        return 0
    if args.worker:
        row = (cpu_row(cases[0], args.targets.split(",")) if args.worker == "cpu"
               else translation_row(cases[0]) if args.worker == "translation"
               else priced_row(cases[0]) if args.worker == "priced"
               else gpu_row(cases[0], max(1, args.rounds), args.budget))
        print("ROW " + json.dumps(row), flush=True)
        return 0
    os.makedirs(args.out, exist_ok=True)
    import triton
    left_out = [c.name for c in cases if not port_corpus.compiles_under(c, triton.__version__)]
    if left_out:            # their Triton constructs are gone from this release (block pointers from 3.9)
        print(f"left out under triton {triton.__version__}, which cannot compile them: {', '.join(left_out)}")
        cases = [c for c in cases if c.name not in left_out]
    if args.cpu:
        return run_cpu(cases, args.out, triton.__version__, tuple(args.targets.split(",")))
    if args.priced:
        return run_priced(cases, args.out, triton.__version__)
    return run_gpu(cases, args.out, triton.__version__, max(1, args.rounds), args.budget)


if __name__ == "__main__":
    sys.exit(main())
