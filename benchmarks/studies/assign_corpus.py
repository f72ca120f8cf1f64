"""ll-assign-layouts over the whole TTGIR corpus: modelled conversion cost, stock vs ours.

    .venv/bin/python benchmarks/studies/assign_corpus.py                 # every file of test/lit/corpus
    .venv/bin/python benchmarks/studies/assign_corpus.py --only liger    # files whose path matches a regex
    .venv/bin/python benchmarks/studies/assign_corpus.py --option memory_ops=true --name assign_corpus_memory_ops

For every ``*.ttgir`` under ``test/lit/corpus`` (the project's own kernels for cuda80, cuda90 and
gfx942, and the third-party library of ``test/lit/corpus/liger_kernel``, see its SOURCES.md), the
module is parsed (``passes.ir.snapshot.parse_module``) and handed to
``passes.assign.assign_layouts.assign_module(module, target)`` with the module's own ``ttg.target``;
the pass's wall time is measured around that call alone.  Per function it reports converts
before/after, the loop-weighted modelled cost before/after, whether the assignment was accepted
(or why not) and the conversions left by kind.  A rejected assignment keeps Triton's layouts, so
the figure that counts for it ("effective") is its cost *before*, whatever the candidate's cost
was.  Aggregates: total effective cost before/after and its % change, the number of kernels
(files) improved / unchanged / worse, the pass's wall time per kernel (median, max).

Writes ``benchmarks/results/assign_corpus.md`` (and, with ``--json``, every row as
``assign_corpus.json``).  Run it with the Triton that made the corpus
(``test/lit/corpus/VERSION``: ``.venv``), which parses every file.
Until ``linear_layouts.passes.assign.assign_layouts`` exists the script says so and exits 1.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import glob
import importlib
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness.checkout import make_package_importable  # noqa: E402

REPO = on_path.REPO
CORPUS = os.path.join(REPO, "test", "lit", "corpus")
PASS_MODULE = "linear_layouts.passes.assign.assign_layouts"
# Relative change below which a kernel's cost counts as unchanged (float noise of a sum of costs).
EPSILON = 1e-9


class PassMissing(RuntimeError):
    """The pass module is not there (yet)."""


def load_assign_module():
    """``assign_module`` from the pass, imported only now; :class:`PassMissing` if the module
    does not exist (any other import error is a bug of the pass and propagates)."""
    make_package_importable()
    try:
        module = importlib.import_module(PASS_MODULE)
    except ModuleNotFoundError as error:
        if error.name and PASS_MODULE.startswith(error.name):
            raise PassMissing(f"{PASS_MODULE} does not exist yet (issue 26's ll-assign-layouts pass): "
                              "nothing to measure") from None
        raise
    if not hasattr(module, "assign_module"):
        raise PassMissing(f"{PASS_MODULE} has no assign_module(module, target) yet")
    return module.assign_module


def corpus_files(root: str = CORPUS, only: str | None = None) -> list[str]:
    files = sorted(glob.glob(os.path.join(root, "**", "*.ttgir"), recursive=True))
    if only:
        files = [f for f in files if re.search(only, os.path.relpath(f, root))]
    return files


def source_of(rel_path: str) -> str:
    """The corpus group of a file: its first folder (cuda80, cuda90, gfx942, liger_kernel...)."""
    return rel_path.split(os.sep)[0] if os.sep in rel_path else "."


# --------------------------------------------------------------------------- rows

def function_row(file: str, fa, wall_s: float) -> dict:
    """One FunctionAssignment as a plain dict (the JSON's and the table's row)."""
    accepted = bool(fa.accepted)
    row = {
        "file": file, "function": fa.name,
        "converts_before": int(fa.converts_before), "converts_after": int(fa.converts_after),
        "cost_before": float(fa.cost_before), "cost_after": float(fa.cost_after),
        "conversion_cost_before": float(getattr(fa, "conversion_cost_before", 0.0)),
        "conversion_cost_after": float(getattr(fa, "conversion_cost_after", 0.0)),
        "accepted": accepted, "reason": str(fa.reason or ""),
        "left": {str(k): int(v) for k, v in sorted(dict(fa.left or {}).items())},
        "wall_s": wall_s,
    }
    # What the kernel runs with: the new assignment if accepted, Triton's otherwise.
    row["effective_cost_after"] = row["cost_after"] if accepted else row["cost_before"]
    row["effective_converts_after"] = row["converts_after"] if accepted else row["converts_before"]
    row["effective_conversion_cost_after"] = (row["conversion_cost_after"] if accepted
                                              else row["conversion_cost_before"])
    return row


def text_converts(ttgir: str) -> int:
    """``ttg.convert_layout`` ops in the file's text: the count the pass's own must match."""
    return len(re.findall(r"(?<![\w.])ttg\.convert_layout\b", ttgir))


def noop_converts(module) -> int:
    """``ttg.convert_layout`` ops of ``module`` whose two sides are the same linear layout: no-ops,
    which the pass's cost model prices at 0 and does not count as conversions."""
    from linear_layouts.passes.ir.layouts import value_layout

    count = 0
    for op in module.walk():
        if op.name != "ttg.convert_layout":
            continue
        try:
            count += value_layout(op.operands[0], op) == value_layout(op.results[0], op)
        except Exception:   # a layout we cannot read is not a no-op we can vouch for
            pass
    return count


def kernel_rows(file: str, assignment, wall_s: float, converts_in_text: int | None = None,
                noops_in_text: int | None = None, gpu_rule: bool | None = None) -> list[dict]:
    """Rows of one file's Assignment; the file's wall time is shared out evenly over its
    functions (the pass runs on the module) and kept whole in ``file_wall_s``;
    ``converts_in_text``: the file's converts counted in its text (kept on every row);
    ``gpu_rule``: whether the GPU suite's selection rule (``assign_rule.selected``) takes the file."""
    functions = list(assignment.functions)
    rows = [function_row(file, fa, wall_s / max(len(functions), 1)) for fa in functions]
    for row in rows:
        row["file_wall_s"] = wall_s
        row["file_converts_in_text"] = converts_in_text
        row["file_noop_converts_in_text"] = noops_in_text
        row["file_gpu_rule"] = gpu_rule
    return rows


def rule_selects(ttgir: str) -> bool:
    """The GPU suite's rule, fixed before measuring (``assign_rule.selected``): a
    ``ttg.convert_layout`` in a loop or in the epilogue of stock's TTGIR."""
    from assign_rule import selected

    return selected(ttgir)


def verdict(before: float, after: float) -> str:
    """improved / unchanged / worse, by the relative change of the cost."""
    scale = max(abs(before), abs(after), 1e-30)
    if after < before - EPSILON * scale:
        return "improved"
    if after > before + EPSILON * scale:
        return "worse"
    return "unchanged"


def summarize(rows: list[dict], errors: list[dict] | None = None) -> dict:
    """Aggregates over the rows (kernel = file: its functions' costs added up)."""
    errors = errors or []
    files: dict[str, dict] = {}
    for row in rows:
        f = files.setdefault(row["file"], {"before": 0.0, "after": 0.0, "converts_before": 0,
                                           "converts_after": 0, "conversion_before": 0.0, "conversion_after": 0.0,
                                           "wall_s": row.get("file_wall_s", row["wall_s"])})
        f["before"] += row["cost_before"]
        f["conversion_before"] += row.get("conversion_cost_before", 0.0)
        f["conversion_after"] += row.get("effective_conversion_cost_after", 0.0)
        f["after"] += row["effective_cost_after"]
        f["converts_before"] += row["converts_before"]
        f["converts_after"] += row["effective_converts_after"]
    verdicts = {name: verdict(f["before"], f["after"]) for name, f in files.items()}
    total_before = sum(f["before"] for f in files.values())
    total_after = sum(f["after"] for f in files.values())
    conversion_before = sum(f["conversion_before"] for f in files.values())
    conversion_after = sum(f["conversion_after"] for f in files.values())
    conversion_verdicts = {name: verdict(f["conversion_before"], f["conversion_after"]) for name, f in files.items()}
    walls = [f["wall_s"] for f in files.values()]
    left: dict[str, int] = {}
    for row in rows:
        for kind, n in row["left"].items():
            if row["accepted"]:
                left[kind] = left.get(kind, 0) + n
    by_source: dict[str, int] = {}
    for name in files:
        by_source[source_of(name)] = by_source.get(source_of(name), 0) + 1
    # the pass's converts-before against the text's, per file (where the text count is known)
    in_text = {r["file"]: r["file_converts_in_text"] for r in rows if r.get("file_converts_in_text") is not None}
    noops = {r["file"]: r.get("file_noop_converts_in_text") or 0 for r in rows if r.get("file_converts_in_text") is not None}
    miscounted = sorted(name for name, n in in_text.items() if files[name]["converts_before"] != n)
    # the text's converts less its no-ops: what the pass's count must match
    unexplained = sorted(name for name, n in in_text.items() if files[name]["converts_before"] != n - noops[name])
    reasons: dict[str, int] = {}
    for row in rows:
        if not row["accepted"]:
            key = re.sub(r"\(line \d+.*", "(line ...)", row["reason"] or "?")
            # one group per sentence, whatever the kernel's numbers: "(431.8 -> 415.0, bound by
            # the shared pipe)" -> "(bound by the shared pipe)"
            key = re.sub(r"\([\d.]+ -> [\d.]+, ", "(", key)[:90]
            if key.startswith("memory-bound"):   # one group, whatever the kernel's numbers
                key = "memory-bound (the best assignment's gain hides under the DRAM floor)"
            elif key.startswith("no assignment can beat"):   # decided by the bound, before the solver
                key = "no assignment can beat Triton's by the margin (the bound: every changeable conversion free)"
            reasons[key] = reasons.get(key, 0) + 1
    by_rule = sorted({r["file"] for r in rows if r.get("file_gpu_rule")})
    changed_by_rule = sorted({r["file"] for r in rows if r.get("file_gpu_rule") and r["accepted"]})
    return {
        "gpu_rule_kernels": by_rule, "gpu_rule_changed": changed_by_rule,
        "kernels": len(files), "functions": len(rows), "errors": len(errors),
        "by_source": dict(sorted(by_source.items())),
        "cost_before": total_before, "cost_after": total_after,
        "cost_change_pct": (100.0 * (total_after - total_before) / total_before) if total_before else None,
        "conversion_cost_before": conversion_before, "conversion_cost_after": conversion_after,
        "conversion_cost_change_pct": (100.0 * (conversion_after - conversion_before) / conversion_before
                                       if conversion_before else None),
        "conversion_cost_worse": sorted(n for n, v in conversion_verdicts.items() if v == "worse"),
        "converts_before": sum(f["converts_before"] for f in files.values()),
        "converts_after": sum(f["converts_after"] for f in files.values()),
        "improved": sum(v == "improved" for v in verdicts.values()),
        "unchanged": sum(v == "unchanged" for v in verdicts.values()),
        "worse": sum(v == "worse" for v in verdicts.values()),
        "worse_kernels": sorted(n for n, v in verdicts.items() if v == "worse"),
        "accepted_functions": sum(r["accepted"] for r in rows),
        "wall_median_s": statistics.median(walls) if walls else None,
        "wall_max_s": max(walls) if walls else None,
        "left_by_kind_accepted": dict(sorted(left.items())),
        "converts_in_text": sum(in_text.values()) if in_text else None,
        "converts_miscounted": miscounted,
        "noop_converts_in_text": sum(noops.values()) if noops else None,
        "converts_unexplained": unexplained,
        "not_accepted_reasons": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def _num(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def render_markdown(rows: list[dict], summary: dict, errors: list[dict], environment: dict) -> str:
    s = summary
    lines = ["# ll-assign-layouts on the TTGIR corpus", "",
             f"triton {environment.get('triton', '?')}; pass at commit {environment.get('commit', '?')}"
             f"{' with ' + ', '.join(f'{k}={v}' for k, v in environment['options'].items()) if environment.get('options') else ''}; "
             f"corpus `test/lit/corpus` "
             f"({', '.join(f'{k}: {v}' for k, v in s['by_source'].items())}); "
             f"produced by `python benchmarks/studies/assign_corpus.py`.", "",
             "Costs are the pass's loop-weighted modelled costs of a whole function: conversions, elementwise "
             "work, reductions (and loads and stores with `memory_ops`). The conversion cost is the conversions' "
             "part alone (what issue 26's corpus goal measures). A function whose assignment was "
             "not accepted keeps Triton's layouts: its effective cost after is its cost before.", "",
             f"* kernels: {s['kernels']} ({s['functions']} functions; {s['errors']} failed)",
             f"* total modelled cost: {_num(s['cost_before'])} -> {_num(s['cost_after'])} "
             f"({_num(s['cost_change_pct'])}%)",
             f"* total modelled conversion cost: {_num(s.get('conversion_cost_before'))} -> "
             f"{_num(s.get('conversion_cost_after'))} ({_num(s.get('conversion_cost_change_pct'))}%)"
             + (f"; higher in {len(s['conversion_cost_worse'])} kernels ({', '.join(s['conversion_cost_worse'])}: "
                "traded for cheaper reductions or memory work)" if s.get("conversion_cost_worse") else "; higher in none"),
             f"* conversions (the pass's count): {s['converts_before']} -> {s['converts_after']}"
             + (f"; `ttg.convert_layout` ops in the files' text: {s['converts_in_text']}"
                f" ({len(s['converts_miscounted'])} kernels where the pass's count before differs from the text's"
                + (f"; {s['noop_converts_in_text']} of the text's are no-ops, the same linear layout on both sides, "
                   f"which the pass prices at 0 and does not count; kernels whose count differs beyond them: "
                   f"{len(s['converts_unexplained'])}"
                   + (f" ({', '.join(s['converts_unexplained'])})" if s['converts_unexplained'] else "")
                   if s.get("noop_converts_in_text") is not None else "") + ")"
                if s.get("converts_in_text") is not None else ""),
             f"* kernels improved / unchanged / worse: {s['improved']} / {s['unchanged']} / {s['worse']}"
             + (f" (worse: {', '.join(s['worse_kernels'])})" if s["worse_kernels"] else ""),
             f"* functions accepted: {s['accepted_functions']} of {s['functions']}",
             f"* kernels the GPU suite's rule selects (`assign_rule.selected`: a conversion in a loop or in the "
             f"epilogue): {len(s.get('gpu_rule_kernels', []))}; changed among them: {len(s.get('gpu_rule_changed', []))}"
             + (f" ({', '.join(s['gpu_rule_changed'])})" if s.get("gpu_rule_changed") else ""),
             f"* pass wall time per kernel: median {_num(s['wall_median_s'] and s['wall_median_s'] * 1e3)} ms, "
             f"max {_num(s['wall_max_s'] and s['wall_max_s'] * 1e3)} ms",
             f"* conversions left where accepted, by kind: "
             + (", ".join(f"{k} {v}" for k, v in s["left_by_kind_accepted"].items()) or "none"),
             "* why not accepted: " + ("; ".join(f"{k}: {v}" for k, v in s.get("not_accepted_reasons", {}).items())
                                       or "-"),
             "",
             "| kernel | function | converts before | after | cost before | after | change | conversion cost before | after | accepted / why not | left by kind | pass ms |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in rows:
        change = verdict(r["cost_before"], r["effective_cost_after"])
        pct = (100.0 * (r["effective_cost_after"] - r["cost_before"]) / r["cost_before"]) if r["cost_before"] else None
        status = "yes" if r["accepted"] else f"no: {r['reason'] or '?'}"
        if r["accepted"] and r["reason"]:
            status = f"yes ({r['reason']})"
        left = ", ".join(f"{k} {v}" for k, v in r["left"].items()) or "-"
        lines.append(f"| {r['file']} | {r['function']} | {r['converts_before']} | {r['effective_converts_after']} | "
                     f"{_num(r['cost_before'])} | {_num(r['effective_cost_after'])} | "
                     f"{change if pct is None else f'{pct:+.1f}%'} | {_num(r.get('conversion_cost_before'))} | "
                     f"{_num(r.get('effective_conversion_cost_after'))} | {status.replace('|', '/')} | {left} | "
                     f"{r['wall_s'] * 1e3:.1f} |")
    if errors:
        lines += ["", "Failures:", ""] + [f"* {e['file']}: {e['error']}" for e in errors]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- running

def parse_options(items: list[str] | None) -> dict:
    """``KEY=VALUE`` items as keyword arguments of assign_module (true/false, numbers, text)."""
    options = {}
    for item in items or []:
        key, _, value = item.partition("=")
        if not key or not _:
            raise ValueError(f"--option {item!r}: expected KEY=VALUE")
        low = value.strip().lower()
        if low in ("true", "false"):
            options[key] = low == "true"
        else:
            try:
                options[key] = int(value) if re.fullmatch(r"-?\d+", value.strip()) else float(value)
            except ValueError:
                options[key] = value
    return options


def run(files: list[str], assign_module, root: str = CORPUS, options: dict | None = None) -> tuple[list[dict], list[dict]]:
    from linear_layouts.passes.ir.snapshot import parse_module

    rows, errors = [], []
    for i, path in enumerate(files):
        rel = os.path.relpath(path, root)
        try:
            text = open(path).read()
            module = parse_module(text, filename=path)
            target = module.target
            start = time.perf_counter()
            assignment = assign_module(module, target, **(options or {}))
            wall = time.perf_counter() - start
            new = kernel_rows(rel, assignment, wall, text_converts(text), noop_converts(parse_module(text, filename=path)),
                              gpu_rule=rule_selects(text))
            rows += new
            print(f"[{i + 1}/{len(files)}] {rel}: " + "; ".join(
                f"{r['function']} {r['cost_before']:.1f}->{r['effective_cost_after']:.1f}"
                f"{'' if r['accepted'] else ' (kept)'}" for r in new) + f" [{wall * 1e3:.0f} ms]", flush=True)
        except Exception as error:  # one kernel's failure is reported, the rest still run
            errors.append({"file": rel, "error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]})
            print(f"[{i + 1}/{len(files)}] {rel}: FAILED {errors[-1]['error']}", flush=True)
    return rows, errors


def _commit() -> str:
    """The checkout's commit (the pass measured), with '+' if the tree has changes outside
    benchmarks/results; '?' without git."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!benchmarks/results"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return (head + ("+" if dirty else "")) or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=CORPUS)
    parser.add_argument("--only", help="regex over the files' paths relative to the corpus")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="a keyword option of assign_module, e.g. memory_ops=true (repeatable)")
    parser.add_argument("--name", default="assign_corpus", help="report file stem (default assign_corpus)")
    parser.add_argument("--json", action="store_true",
                        help="also write every row as <name>.json (raw data, kept out of benchmarks/results)")
    args = parser.parse_args(argv)
    options = parse_options(args.option)
    try:
        assign_module = load_assign_module()
    except PassMissing as error:
        print(f"assign_corpus: {error}", file=sys.stderr)
        return 1
    import triton

    files = corpus_files(args.corpus, args.only)
    if not files:
        print(f"assign_corpus: no .ttgir file under {args.corpus}", file=sys.stderr)
        return 1
    rows, errors = run(files, assign_module, args.corpus, options)
    summary = summarize(rows, errors)
    environment = {"triton": triton.__version__, "python": sys.version.split()[0], "commit": _commit(),
                   "options": {k: v for k, v in options.items()}}
    os.makedirs(args.out, exist_ok=True)
    if args.json:
        with open(os.path.join(args.out, f"{args.name}.json"), "w") as f:
            json.dump({"environment": environment, "summary": summary, "errors": errors,
                       "rows": rows}, f, indent=1)
    text = render_markdown(rows, summary, errors, environment)
    with open(os.path.join(args.out, f"{args.name}.md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if not errors else 2


if __name__ == "__main__":
    sys.exit(main())
