"""Triton's Gluon tutorials in three forms - the expert's layouts, automatic layouts, a newcomer's -
compiled and timed side by side.

    python benchmarks/gluon_forms_gpu.py --out benchmarks/results     # GPU (H100): run, check, time
    python benchmarks/gluon_forms_gpu.py --dry-run                    # CPU: compile every form for sm_90 (printed;
                                                                      # --out benchmarks/results writes the committed file)
    python benchmarks/gluon_forms_gpu.py kernels --rounds 3           # four kernels of our own, each mode
                                                                      # in its own process (harness/gluon_auto_suite.py)
    python benchmarks/gluon_forms_gpu.py matmul --rounds 3            # an expert's mma_v2 matmul: stock, ours,
                                                                      # ours with inline-PTX shared accesses
                                                                      # (harness/gluon_matmul.py; matmul --dry-run: CPU)

The kernels: the selection rule in ``gluon_forms_cases.py`` (8 kernels of the tutorials of triton
3.6.0, carried in ``.peer-tests/triton/python/tutorials/gluon/``, checked against MANIFEST in ``harness/carry_gluon_tutorials.py``,
plus 2 of our own in ``gluon_forms_builtin.py``).  The forms: the AST rule in ``gluon_forms.py``,
applied to the whole file (kernels and host code).  Modes:

* ``expert``: the file as written, stock Triton;
* ``auto_ours``: the auto form with ``linear_layouts.enable(resolve_auto_layouts=True)``;
* ``auto_triton``: the auto form, stock Triton (Gluon's own resolution; its error where it fails);
* ``newcomer``: the newcomer form (one element per thread), stock Triton;
* ``newcomer_advised``: the newcomer form with the report's layout advice applied
  (``linear_layouts.enable(apply_advice=True)``: ``ll-apply-advice``); the summary gives the
  share of the newcomer-to-expert gap it recovers (``gluon_forms.gap_recovery``).

GPU: per kernel, every mode in one process (a fresh module per mode, so no kernel is shared): the
file's own test function over all its parametrizations (its own check, ``atol=0`` in every
selected test), then the tutorial's benchmark launch, its output compared bit for bit with the
expert's, and ``triton.testing.do_bench`` over ``--rounds`` rounds with the modes alternated
(median of the rounds' medians).  Writes ``gluon_forms_gpu.md`` (and ``.json``) to ``--out``.
Exit status 1 when an expert form fails, or an auto form with ours fails, falls back, or differs.
The dry run's exit status is 1 when an expert form fails to compile (a tutorial's only under
3.6.0, their release: 3.9 removed ``async_copy_global_to_shared`` and ``get_tmem_reg_layout``).

``--dry-run``: no GPU, no torch; each form's kernels only (``gluon_forms.load_form(...,
kernels_only=True)``) compiled for sm_90 with the launch written out in ``compile_args``; prints
its table, and writes ``gluon_forms_dry_<triton version>.md`` only where ``--out`` says (a dry run
must not rewrite the committed result).  Tutorials not carried: only the built-in kernels, said so.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

from harness import gluon_forms  # noqa: E402
from harness import skeleton  # noqa: E402
from harness.carry_gluon_tutorials import check_tutorials  # noqa: E402
from harness.common import require_package, publish, scratch_directory  # noqa: E402
from harness.gluon_forms_cases import TUTORIALS_DIR, Descriptor, Layout, cases  # noqa: E402
from harness.gluon_modes import FORM_OF, MODES, enable_for  # noqa: E402
from harness.quiet_compile import access_text, compile_for_sm90, first_line, launch_quietly  # noqa: E402

def selected_cases(names=None):
    """The cases to run and, when the tutorials cannot be used, why (then built-in ones only)."""
    why = check_tutorials()
    chosen = [c for c in cases() if c.builtin or why is None]
    if names:
        chosen = [c for c in chosen if any(n in c.name for n in names)]
    return chosen, why


def _layout_value(expression: str, form: str, num_warps: int):
    from triton.experimental.gluon import language as gl
    return eval(gluon_forms.form_expression(expression, form), {"gl": gl, "num_warps": num_warps})  # noqa: S307


def _fallbacks() -> int:
    import linear_layouts
    return len(linear_layouts.stats().fallbacks)


def _advised() -> int:
    """Kernels the layout advice changed (so far, in this process)."""
    import linear_layouts
    return linear_layouts.stats().advice_applied


def _resolved() -> int:
    """Kernels whose automatic layouts ours resolved (so far, in this process)."""
    import linear_layouts
    return linear_layouts.stats().auto_layouts_resolved


# --------------------------------------------------------------------------- the CPU dry run

def _compile_spec(case, form: str):
    """(signature, constexprs, attrs) of ``case.compile_args`` in ``form``."""
    from triton.experimental.gluon import language as gl
    signature, constexprs, attrs = {}, {}, {}
    for index, (name, value) in enumerate(case.compile_args.items()):
        if value == "*fp32":
            signature[name] = value
            attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, Descriptor):
            layout = gl.NVMMASharedLayout.get_default_for(list(value.block_shape), gl.float32)
            signature[name] = f"tensordesc<fp32[{','.join(map(str, value.block_shape))}],{layout!r}>"
        elif isinstance(value, Layout):
            signature[name], constexprs[name] = "constexpr", _layout_value(value.expression, form, case.num_warps)
        elif isinstance(value, int) and name.isupper() or name.startswith("num_"):
            signature[name], constexprs[name] = "constexpr", value
        elif value == 1:                                   # the JIT specializes an integer 1 to a constant
            signature[name], constexprs[name] = "constexpr", 1
        else:
            signature[name] = "i32" if value < 2**31 else "i64"
            if value % 16 == 0:
                attrs[(index,)] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


def dry_compile(case, mode: str) -> str:
    """Compile one mode's form of one case for sm_90: 'compiles; ...' or 'fails: <error>'."""
    from triton.experimental.gluon._runtime import GluonASTSource

    form = FORM_OF[mode]
    try:
        module = gluon_forms.load_form(case.file, form, kernels_only=True)
        signature, constexprs, attrs = _compile_spec(case, form)
    except gluon_forms.FormError as error:
        return f"no {form} form: {error}"
    except Exception as error:        # the carried tutorials are 3.6's: a later release may lack a name
        return f"does not load: {type(error).__name__}: {first_line(error)}"
    enable_for(mode)
    before, resolved_before, advised_before = _fallbacks(), _resolved(), _advised()
    source = GluonASTSource(getattr(module, case.kernel), signature, constexprs, attrs=attrs)
    try:
        result = compile_for_sm90(source, {"num_warps": case.num_warps, **case.options})
    finally:
        enable_for("expert")
    if result.error is not None:
        if os.environ.get("LL_GLUON_FORMS_DEBUG"):
            print(result.stderr or "(no stderr)", file=sys.stderr)
        return "fails: " + first_line(result.error, result.stderr)
    ptx = result.compiled.asm["ptx"]
    fell_back = _fallbacks() > before
    if mode == "auto_ours" and not fell_back and _resolved() == resolved_before:
        fell_back = True                   # compiled, but not through ours
    unchanged = mode == "newcomer_advised" and _advised() == advised_before
    return ("compiles" + (" (ours fell back to Triton's)" if fell_back else "")
            + (" (the advice changed nothing)" if unchanged else "") + "; " + access_text(ptx))


def dry_run(chosen: list) -> list[dict]:
    require_package()
    # an empty cache: a kernel served from the cache would not say whether ours resolved it
    os.environ["TRITON_CACHE_DIR"] = scratch_directory("ll_gluon_forms_dry_")
    return [{"name": c.name, **{mode: dry_compile(c, mode) for mode in MODES}} for c in chosen]


def render_dry(rows: list[dict], why: str | None, version: str) -> str:
    lines = ["# Gluon tutorials in three forms: what compiles (CPU, sm_90, no timing)", "",
             f"- triton {version}; forms by the rule in `benchmarks/harness/gluon_forms.py`, kernels by the rule in "
             "`benchmarks/harness/gluon_forms_cases.py`",
             "- command: `python benchmarks/gluon_forms_gpu.py --dry-run --out benchmarks/results`"]
    if why:
        lines.append(f"- **{why}**: built-in kernels only")
    lines += ["", "| kernel | expert | auto, ours | auto, Triton's resolution | newcomer | newcomer, advice applied |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {r['name']} | " + " | ".join(r[m] for m in MODES) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the GPU run

def _run_tests(module, case, text: str) -> dict:
    params = gluon_forms.test_parameters(text, case.test)
    passed, failures = 0, []
    for p in params:
        try:
            getattr(module, case.test)(**p)
            passed += 1
        except Exception as error:
            failures.append(f"{p}: {first_line(error)}")
    return {"passed": passed, "total": len(params), "first_failure": failures[0] if failures else None}


def run_case(case, rounds: int, torch, triton, tests: bool = True) -> dict:
    """Every mode of one case: tests, output against the expert's, times."""
    with open(case.file) as f:
        text = f.read()
    torch.manual_seed(0)
    tensors = case.tensors(torch)
    out = tensors["out"]
    row = {"name": case.name, "modes": {}}
    launches, expert_out = {}, None
    for mode in MODES:
        form = FORM_OF[mode]
        record = row["modes"][mode] = {}
        try:
            module = gluon_forms.load_form(case.file, form)
        except gluon_forms.FormError as error:
            record["error"] = f"no {form} form: {error}"
            continue
        except Exception as error:
            record["error"] = f"does not load: {type(error).__name__}: {first_line(error)}"
            continue
        enable_for(mode)
        before, resolved_before, advised_before = _fallbacks(), _resolved(), _advised()
        if tests:
            record["tests"] = _run_tests(module, case, text)

        def layout(expression, form=form):
            return _layout_value(expression, form, case.num_warps)

        def launch(module=module, layout=layout):
            case.launch(module, tensors, layout)
        out.fill_(float("nan"))
        result = launch_quietly(launch, torch)
        if result.error is not None:
            record["error"] = first_line(result.error, result.stderr)
        record["fell_back"] = _fallbacks() > before
        record["resolved_by_ours"] = _resolved() - resolved_before
        record["advised"] = _advised() - advised_before
        if result.error is not None:
            continue
        if mode == "expert":
            expert_out = out.clone()
        record["bit_exact"] = bool(expert_out is not None and torch.equal(out.view(torch.int32),
                                                                         expert_out.view(torch.int32)))
        launches[mode] = launch
        record["ms"] = []
    for r in range(rounds):
        order = list(launches)[r % len(launches):] + list(launches)[:r % len(launches)]
        for mode in order:
            # The plugin's setting is part of every kernel's cache key (switching it clears the
            # in-memory kernels): each mode is timed with its own setting, after one launch that
            # takes its kernel back from the disk cache.
            enable_for(mode)
            launches[mode]()
            torch.cuda.synchronize()
            row["modes"][mode]["ms"].append(triton.testing.do_bench(launches[mode], warmup=25, rep=100))
    enable_for("expert")
    for mode in launches:
        row["modes"][mode]["median_ms"] = statistics.median(row["modes"][mode]["ms"])
    launches.clear()                 # the launches hold the tensors
    del tensors, out, expert_out
    torch.cuda.empty_cache()
    return row


def _ratio(row, mode):
    ms = row["modes"].get(mode, {}).get("median_ms")
    base = row["modes"].get("expert", {}).get("median_ms")
    return ms / base if ms and base else None


def _cell(row, mode) -> str:
    record = row["modes"].get(mode, {})
    ratio = _ratio(row, mode)
    if ratio is None:
        return "fails: " + record.get("error", "not run")
    notes = [] if record.get("bit_exact") else ["output differs"]
    tests = record.get("tests")
    if tests and tests["passed"] != tests["total"]:
        notes.append(f"tests {tests['passed']}/{tests['total']}: {tests['first_failure']}")
    if record.get("fell_back") or (mode == "auto_ours" and record.get("resolved_by_ours") == 0):
        notes.append("not resolved by ours: fell back to Triton's")
    if mode == "newcomer_advised" and record.get("advised") == 0:
        notes.append("the advice changed nothing")
    return f"{ratio:.3f}" + (f" ({'; '.join(notes)})" if notes else "")


def render_gpu(rows: list[dict], why, rounds: int, device: str, versions: str, command: str = "") -> str:
    geo = lambda xs: statistics.geometric_mean(xs) if xs else float("nan")   # noqa: E731
    ours = [_ratio(r, "auto_ours") for r in rows if _ratio(r, "auto_ours")]
    newcomer = [_ratio(r, "newcomer") for r in rows if _ratio(r, "newcomer")]
    both = [(_ratio(r, "auto_ours"), _ratio(r, "auto_triton")) for r in rows
            if _ratio(r, "auto_ours") and _ratio(r, "auto_triton")]
    pairs = [(_ratio(r, "newcomer"), _ratio(r, "newcomer_advised")) for r in rows
             if _ratio(r, "newcomer") and _ratio(r, "newcomer_advised")]
    lines = ["# Gluon tutorials in three forms on the GPU: the expert's layouts, automatic ones (ours, Triton's), "
             "a newcomer's", "",
             f"- {device}; {versions}",
             f"- command: `{command or f'python benchmarks/gluon_forms_gpu.py --rounds {rounds}'}`; kernels by the rule in "
             "`benchmarks/harness/gluon_forms_cases.py`, forms by the rule in `benchmarks/harness/gluon_forms.py` (both stated "
             "before measuring); each kernel's modes side by side in one process, median over rounds of "
             "`do_bench` medians; outputs compared bit for bit with the expert's; the file's own test over all "
             "its parametrizations in every mode"]
    if why:
        lines.append(f"- **{why}**: built-in kernels only")
    lines += [f"- auto with ours / expert: geomean **{geo(ours):.3f}**, worst **{max(ours, default=float('nan')):.3f}** "
              f"over {len(ours)} of {len(rows)} kernels",
              f"- Triton's resolution compiles {len(both)} of {len(rows)} auto forms"
              + (f"; ours / Triton's geomean **{geo([a / b for a, b in both]):.3f}**, ours >= 10% faster on "
                 f"{sum(a <= 0.9 * b for a, b in both)}, >= 3% slower on {sum(a >= 1.03 * b for a, b in both)}"
                 if both else ""),
              f"- newcomer / expert geomean **{geo(newcomer):.3f}** over {len(newcomer)} kernels",
              f"- newcomer with the advice applied / expert geomean **{geo([p[1] for p in pairs]):.3f}** over "
              f"{len(pairs)} kernels; gap recovered **{gluon_forms.gap_recovery(*map(list, zip(*pairs))) if pairs else float('nan'):.2f}**"
              " (goal >= 0.90; (newcomer - advised) / (newcomer - expert), geomeans over the kernels both run)", "",
              "| kernel | expert ms | auto ours / expert | auto Triton / expert | newcomer / expert | "
              "newcomer advised / expert | expert tests |",
              "|---|---:|---|---|---|---|---|"]
    for r in rows:
        expert = r["modes"].get("expert", {})
        tests = expert.get("tests") or {}
        ms = f"{expert['median_ms']:.4f}" if "median_ms" in expert else "fails: " + expert.get("error", "?")
        lines.append(f"| {r['name']} | {ms} | {_cell(r, 'auto_ours')} | {_cell(r, 'auto_triton')} | "
                     f"{_cell(r, 'newcomer')} | {_cell(r, 'newcomer_advised')} | {tests.get('passed', 0)}/{tests.get('total', 0)} |")
    return "\n".join(lines) + "\n"


def gpu_run(args, chosen: list, why: str | None, argv=None) -> int:
    os.environ["TRITON_CACHE_DIR"] = scratch_directory("ll_gluon_forms_")   # empty: see dry_run
    require_package()
    import torch
    import triton
    sys.path.insert(0, TUTORIALS_DIR)        # a tutorial may import another at the top
    rows = []
    for case in chosen:
        print(f"[gluon_forms] {case.name}", flush=True)
        rows.append(run_case(case, args.rounds, torch, triton, tests=not args.no_tests))
    versions = f"triton {triton.__version__}, torch {torch.__version__}"
    command = "python benchmarks/gluon_forms_gpu.py " + " ".join(sys.argv[1:] if argv is None else argv)
    text = render_gpu(rows, why, args.rounds, torch.cuda.get_device_name(), versions, command.strip())
    os.makedirs(args.out, exist_ok=True)
    suffix = "" if not args.only else "_" + "_".join(args.only).replace("/", "-")
    with open(os.path.join(args.out, f"gluon_forms_gpu{suffix}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, f"gluon_forms_gpu{suffix}.json"), "w") as f:
        json.dump({"rows": rows, "versions": versions, "not_carried": why}, f, indent=1)
    print(text)
    bad = [r["name"] for r in rows if "median_ms" not in r["modes"].get("expert", {})
           or "median_ms" not in r["modes"].get("auto_ours", {}) or r["modes"]["auto_ours"].get("fell_back")
           or not r["modes"]["auto_ours"].get("bit_exact")]
    return 1 if bad else 0


# --------------------------------------------------------------------------- the skeleton's four parts

def options(parser) -> None:
    parser.add_argument("--only", nargs="*", metavar="NAME", help="cases whose name contains one of these")
    parser.add_argument("--no-tests", action="store_true", help="GPU: skip the files' own tests (outputs still compared)")


def chosen_cases(args, env) -> tuple[list, str | None]:
    return selected_cases(args.only)


def run(args, env, chosen) -> list[dict] | int:
    """The dry run's rows; the GPU run measures and writes its report itself (its exit status)."""
    selected, why = chosen
    if not env.dry_run:
        return gpu_run(args, selected, why, args.argv)
    return dry_run(selected)


def summary(args, env, chosen, rows) -> int:
    if not env.dry_run:
        return rows
    if not rows:
        print(f"gluon_forms_gpu: no case matches {args.only}", file=sys.stderr)
        return 1
    version = env.header["triton"]
    text = render_dry(rows, chosen[1], version)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    publish(text.rstrip("\n"), os.path.join(args.out, f"gluon_forms_dry_{version}.md") if args.out else "")
    # the tutorials are 3.6.0's; a later release may have removed what they call (3.9 did)
    must_compile = [r for r in rows if r["name"].startswith("builtin/") or version == "3.6.0"]
    return 0 if all(r["expert"].startswith("compiles") for r in must_compile) else 1


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["kernels"]:   # four kernels of our own, each mode in its own process
        require_package()
        from harness import gluon_auto_suite
        return gluon_auto_suite.main(argv[1:])
    if argv[:1] == ["matmul"]:    # an expert's Gluon mma_v2 matmul, each mode in its own process
        from harness import gluon_matmul
        return gluon_matmul.main(argv[1:])
    return skeleton.main("gluon_forms_gpu", __doc__, argv, options=options, cases=chosen_cases, run=run,
                         summary=summary, dry_run="compile every form for sm_90 on the CPU, no timing",
                         rounds=3, dry_run_prints=True,
                         out_help="the folder to write the result into (the GPU run's default: benchmarks/results; "
                                  "--dry-run writes only where --out says)")


if __name__ == "__main__":
    sys.exit(main())
