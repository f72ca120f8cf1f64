"""Our code against stock Triton's for the *same* plan, counted in SASS (CPU only, no GPU).

    python benchmarks/studies/sass_twins.py --out benchmarks/results/sass_twins.md          # shuffle twins
    python benchmarks/studies/sass_twins.py --all --out /tmp/sass_twins_all.md  # every twin

Issue 25's ``choice_signal.md`` found that stock Triton's lowering of a conversion usually has a
*twin* among our candidates (the same round-trip mix of shuffles, shared loads and stores,
ldmatrix/stmatrix and barriers), and that the twins ran 1.043x stock on an H100 (geomean).  This
script says where the difference is, without a GPU: each conversion is compiled by
``triton.compile`` for sm_90 twice, stock (plugin off) and with our twin forced
(``ll-lower-conversions{candidate_for=FORWARD:K,BACK:stock measured=false}``, as
``plan_contexts.modes_of`` forces ``cand<K>``), the cubin disassembled by the ``cuobjdump``
bundled with Triton, and the SASS instructions of the timed loop counted by opcode.

**The set, fixed by a rule before any count was looked at**: every conversion of the two training
runs (``plan_train.json.gz``, ``plan_train_303_404.json.gz``, Triton 3.6 on an H100) that
``choice_signal.training_cases`` keeps and whose twin ``choice_signal.stock_twin`` finds, in the
planner's current candidate order; by default those whose twin is a warp-shuffle plan (37),
``--all`` every one (251).  A twin whose PTX mix no longer equals stock's (the planner changed
its candidates since) is reported and left out of the totals.

**Contexts** (``--kinds``): ``chain``, the timed kernel of ``plan_contexts.chain_ttgir`` (A -> B
-> A in a loop, the return trip stock's in both compiles), and ``single``,
``harness.conversion_cases.kernel_ttgir`` (A -> B in a loop, added to an accumulator).

**Counts per loop iteration**: ptxas unrolls the 256- or 1024-iteration loop by a factor of its
own choosing, often different for stock and ours; so the loop body (the span of the last
backward branch) is divided by its unroll factor, the number of ``SHFL``/``LDS``/``STS``/
``LDSM``/``STSM``/``BAR`` in the SASS loop over the same instructions in the PTX loop (equal for
both compiles of a twin).  ``NOP`` is padding and not counted.  Registers are cuobjdump's.

Run it with the Triton whose code is compared (the GPU timings are Triton 3.6's: use
``.venv-compat``); two worker processes by default (``--jobs``).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import gzip
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from harness.checkout import REPO_ROOT, geomean, make_package_importable, publish  # noqa: E402

RUNS = ("benchmarks/results/plan_train.json.gz", "benchmarks/results/plan_train_303_404.json.gz")
MEMORY_OPS = ("SHFL", "LDS", "STS", "LDSM", "STSM", "BAR")
PTX_MEMORY = re.compile(r"^\s*(?:@!?%p\d+\s+)?(shfl\.sync|ld\.shared|st\.shared|ldmatrix|stmatrix|bar\.sync|barrier\.sync)")
SASS_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?\s*([^;]*);")
# opcode groups of the summary table (anything else is counted under its own name)
GROUPS = {"SHFL": "shfl", "SEL": "sel", "PRMT": "prmt", "LOP3": "lop3", "IMAD": "imad", "IADD3": "iadd",
          "VIADD": "iadd", "MOV": "mov", "SHF": "shf", "LEA": "lea"}


# --------------------------------------------------------------------------- the set

def twin_cases(shuffle_only: bool) -> list[dict]:
    """The conversions of the stated set, each with its twin's candidate index."""
    sys.path.insert(0, os.path.join(REPO_ROOT, "benchmarks"))
    import choice_signal
    rows = choice_signal.load_rows([os.path.join(REPO_ROOT, p) for p in RUNS])
    out = []
    for case in choice_signal.training_cases(rows):
        row = case["row"]
        twin = choice_signal.stock_twin(row)
        if twin is None:
            continue
        method = row["described"][twin]["method"]
        if shuffle_only and method != "shuffle":
            continue
        out.append({"case": row["case"], "src": row["src"], "dst": row["dst"], "shape": row["shape"],
                    "bits": row["bits"], "num_warps": row["num_warps"], "twin": twin, "method": method,
                    "ratio": case["ratios"][twin], "stock_mix": row["modes"]["stock"]["chain_mix"]})
    return out


# --------------------------------------------------------------------------- counting

def ptx_loop(ptx: str) -> list[str]:
    """The lines of the PTX loop: from the label of the last backward ``bra`` to it."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"^(\$L__\w+):", line))}
    for i in range(len(lines) - 1, -1, -1):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__\w+);", lines[i])
        if m and labels.get(m.group(1), len(lines)) < i:
            return lines[labels[m.group(1)]:i + 1]
    return []


def sass_loop(sass: str) -> list[tuple[str, str]]:
    """(opcode, operands) of the SASS loop: the span of the backward branch that starts earliest."""
    code = [(int(m.group(1), 16), m.group(3), m.group(5)) for line in sass.splitlines() if (m := SASS_LINE.match(line))]
    best = None
    for address, op, operands in code:
        if op == "BRA" and (t := re.match(r"(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))", operands.strip())) and t.group(1):
            target = int(t.group(1), 16)
            if target < address and (best is None or target < best[0]):
                best = (target, address)
    if best is None:
        return []
    return [(op, operands) for address, op, operands in code if best[0] <= address <= best[1]]


def loop_counts(ptx: str, sass: str) -> dict:
    """Per-iteration SASS opcode counts of the loop and its unroll factor."""
    ptx_memory = sum(1 for line in ptx_loop(ptx) if PTX_MEMORY.match(line))
    body = sass_loop(sass)
    ops = Counter(op for op, _ in body if op != "NOP")
    if not ops:
        return {"unroll": 0, "ops": {}, "total": None}   # no loop found (reported apart)
    sass_memory = sum(ops[o] for o in MEMORY_OPS)
    unroll = max(1, round(sass_memory / ptx_memory)) if ptx_memory else 1
    return {"unroll": unroll, "ops": {k: v / unroll for k, v in sorted(ops.items())},
            "total": sum(ops.values()) / unroll}


def compile_job(job):
    """One kernel compiled (stock or our twin) -> PTX mix, registers, loop counts."""
    try:
        return _compile_job(job)
    except Exception as e:  # the Triton boundary: reported per kernel, never fatal
        index, _, mode, kind, _ = job
        return index, mode, kind, {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]}


def _compile_job(job):
    index, entry, mode, kind, cuobjdump = job
    make_package_importable()
    sys.path.insert(0, os.path.join(REPO_ROOT, "benchmarks"))
    from linear_layouts.tools.testcases import instruction_classes
    from harness.conversion_cases import Case, kernel_ttgir
    from harness.plan_contexts import chain_ttgir, keys_of

    case = Case(entry["case"], "", entry["src"], entry["dst"], tuple(entry["shape"]), entry["bits"],
                entry["num_warps"], "sass_twins")
    forward, back = keys_of(case)
    # the return trip (chain) stays stock's, as in the timed cand<K> mode
    pipeline = (f"ll-lower-conversions{{candidate_for={forward}:{entry['twin']},{back}:stock measured=false}}"
                if mode == "ours" else None)
    kernel, sass, usage = compile_and_disassemble(chain_ttgir(case) if kind == "chain" else kernel_ttgir(case),
                                                  pipeline, cuobjdump)
    ptx = kernel.asm["ptx"]
    return index, mode, kind, {"mix": instruction_classes(ptx), "regs": int(re.search(r"REG:(\d+)", usage).group(1)),
                               **loop_counts(ptx, sass)}


def compile_and_disassemble(ttgir: str, pipeline, cuobjdump: str):
    """(the compiled kernel, its SASS, cuobjdump's resource usage) of a TTGIR module compiled for
    sm_90: stock Triton where ``pipeline`` is None, else with ``linear_layouts.enable(pipeline=...)``."""
    import triton
    from triton.backends.compiler import GPUTarget
    import linear_layouts
    from linear_layouts.passes import hook

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "kernel.ttgir")
        with open(path, "w") as f:
            f.write(ttgir)
        if pipeline is not None:
            linear_layouts.enable(pipeline=pipeline)
        try:
            kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
        finally:
            hook.disable()
        cubin = os.path.join(directory, "k.cubin")
        with open(cubin, "wb") as f:
            f.write(kernel.asm["cubin"])
        sass = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, check=True).stdout
        usage = subprocess.run([cuobjdump, "-res-usage", cubin], capture_output=True, text=True, check=True).stdout
    return kernel, sass, usage


def cuobjdump_path() -> str:
    import triton
    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")


# --------------------------------------------------------------------------- report

def grouped(ops: dict) -> Counter:
    out = Counter()
    for op, n in ops.items():
        out[GROUPS.get(op, "other")] += n
    return out


def code_label() -> str:
    """The checkout's commit (``+`` where the tree differs from it), or ``unknown``."""
    try:
        head = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO_ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def report(cases, results, kinds, argv, version, seconds, label) -> str:
    cols = ["shfl", "sel", "prmt", "lop3", "imad", "iadd", "shf", "lea", "mov", "other"]
    lines = ["# Our twin of stock's lowering against stock's, in SASS (per loop iteration)", "",
             f"Produced by `python benchmarks/studies/sass_twins.py {' '.join(argv)}` with Triton {version} on our code at "
             f"{label} ({seconds:.0f} s). The set: {len(cases)} conversions (see the script's docstring for the rule).", ""]
    for kind in kinds:
        good = [i for i in range(len(cases)) if all("error" not in results.get((i, m, kind), {"error": 1})
                                                    for m in ("stock", "ours"))]
        no_loop = [i for i in good if any(results[(i, m, kind)]["total"] is None for m in ("stock", "ours"))]
        good = [i for i in good if i not in no_loop]
        if kind == "chain":
            mismatched = [i for i in good if any(results[(i, "ours", kind)]["mix"][k] != cases[i]["stock_mix"][k]
                                                 for k in cases[i]["stock_mix"])]
        else:
            mismatched = [i for i in good if results[(i, "ours", kind)]["mix"] != results[(i, "stock", kind)]["mix"]]
        counted = [i for i in good if i not in mismatched]
        failed = [i for i in range(len(cases)) if i not in good]
        totals = {m: sum(results[(i, m, kind)]["total"] for i in counted) for m in ("stock", "ours")}
        longer = sum(results[(i, "ours", kind)]["total"] > results[(i, "stock", kind)]["total"] for i in counted)
        shorter = sum(results[(i, "ours", kind)]["total"] < results[(i, "stock", kind)]["total"] for i in counted)
        regs_more = sum(results[(i, "ours", kind)]["regs"] > results[(i, "stock", kind)]["regs"] for i in counted)
        ratio = geomean([results[(i, "ours", kind)]["total"] / results[(i, "stock", kind)]["total"] for i in counted])
        lines += [f"## {kind}", "",
                  f"Counted: {len(counted)} (twin's PTX mix differs from stock's: {len(mismatched)}; failed to compile: "
                  f"{len(failed)}).  SASS instructions per loop iteration, all counted conversions: stock "
                  f"{totals['stock']:.0f}, ours {totals['ours']:.0f} (geomean ours/stock {ratio:.3f}); ours longer "
                  f"in {longer}, shorter in {shorter}; more registers in {regs_more}.", ""]
        sums = {m: Counter() for m in ("stock", "ours")}
        for i in counted:
            for m in sums:
                sums[m].update(grouped(results[(i, m, kind)]["ops"]))
        lines += ["| by opcode (sum over counted) | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for m in ("stock", "ours"):
            lines.append(f"| {m} | " + " | ".join(f"{sums[m][c]:.0f}" for c in cols) + " |")
        lines += ["", "| conversion | method | bits | warps | H100 twin/stock | regs stock/ours | unroll stock/ours | "
                      "SASS/iter stock | ours | ours - stock, by opcode |", "|---|---|---:|---:|---:|---|---|---:|---:|---|"]
        for i in sorted(counted, key=lambda i: -cases[i]["ratio"]):
            s, o = results[(i, "stock", kind)], results[(i, "ours", kind)]
            diff = Counter(o["ops"])
            diff.subtract(Counter(s["ops"]))
            text = " ".join(f"{k}{v:+g}" for k, v in sorted(diff.items()) if abs(v) > 1e-9)
            c = cases[i]
            lines.append(f"| {c['case']} | {c['method']} | {c['bits']} | {c['num_warps']} | {c['ratio']:.3f} | "
                         f"{s['regs']}/{o['regs']} | {s['unroll']}/{o['unroll']} | {s['total']:g} | {o['total']:g} | {text} |")
        for i in mismatched:
            lines.append(f"| {cases[i]['case']} | mix differs | | | | | | | | ours {results[(i, 'ours', kind)]['mix']} |")
        for i in no_loop:
            lines.append(f"| {cases[i]['case']} | no loop found | | | | | | | | |")
        for i in failed:
            errors = [results.get((i, m, kind), {}).get("error") for m in ("stock", "ours")]
            lines.append(f"| {cases[i]['case']} | failed | | | | | | | | {errors} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="every twin, not only the shuffle twins")
    parser.add_argument("--kinds", default="chain,single")
    parser.add_argument("--limit", type=int, default=0, help="the first N conversions only (a quick look)")
    parser.add_argument("--match", default="", help="only conversions whose name contains this (a quick look)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="")
    parser.add_argument("--label", default="", help="what code this is (default: the checkout's git commit)")
    args = parser.parse_args(argv)
    # a cache of our own: Triton's cache key does not hash our emitter, and a stale kernel from an
    # older checkout would be counted as this one's
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="sass_twins_cache_")
    make_package_importable()
    import triton
    began = time.time()
    cases = twin_cases(shuffle_only=not args.all)
    if args.match:
        cases = [c for c in cases if args.match in c["case"]]
    if args.limit:
        cases = cases[:args.limit]
    kinds = args.kinds.split(",")
    tool = cuobjdump_path()
    jobs = [(i, c, mode, kind, tool) for i, c in enumerate(cases) for kind in kinds for mode in ("stock", "ours")]
    results = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        for index, mode, kind, result in pool.map(compile_job, jobs):
            results[(index, mode, kind)] = result
    if args.out:
        # gzip: the per-opcode counts of every twin are large and read by no code (results stay small)
        with gzip.open(os.path.splitext(args.out)[0] + ".json.gz", "wt") as f:
            json.dump({"triton": triton.__version__, "cases": cases,
                       "results": [{"index": i, "mode": m, "kind": k, **r} for (i, m, k), r in sorted(results.items())]},
                      f, indent=0)
    text = report(cases, results, kinds, argv, triton.__version__, time.time() - began, args.label or code_label())
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
