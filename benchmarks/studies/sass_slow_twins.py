"""Held-out conversions where our default ran slower than stock, counted in SASS (CPU only, no GPU).

    python benchmarks/studies/sass_slow_twins.py --jobs 1 --out /tmp/sass_slow_twins.md
    python benchmarks/studies/sass_slow_twins.py --jobs 1 --all-slow --dump /tmp/slow_sass   # + the SASS/PTX

The set, fixed by a rule: every row of ``plan_fresh_2741_2857.json.gz`` (H100, triton 3.6) whose
mode ``ours`` (the plugin's default pipeline, ``plan_contexts.modes_of``: ``ll-lower-conversions
{measured=false}``, both directions of the chain) ran above 1.05x stock (the worse of the chain and
the latency context) and whose timed ``ours.chain_mix`` equals ``stock.chain_mix``; ``--all-slow``
adds the rows above 1.05 with a different mix.  Each conversion's timed kernel
(``plan_contexts.chain_ttgir``) is compiled for sm_90 stock and with ``ours``, disassembled with
the ``cuobjdump`` bundled with Triton and the loop counted per iteration as in ``sass_twins.py``.
Besides the opcode counts it counts the shared-memory accesses by width (PTX ``st.shared.b8`` ...
``v4.b32``; SASS ``STS.U8`` ... ``STS.128``): the chain mix counts instructions, not widths.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from harness.checkout import REPO_ROOT, make_package_importable, publish  # noqa: E402
import sass_twins  # noqa: E402

RUN = "benchmarks/results/plan_fresh_2741_2857.json.gz"
OURS = "ll-lower-conversions{measured=false}"
PTX_SHARED = re.compile(r"^\s*(?:@!?%p\d+\s+)?((?:ld|st)\.shared(?:\.v\d)?\.[bsuf]\d+)")
SASS_SHARED = re.compile(r"^(LDS|STS)(\.[A-Z0-9_.]+)?$")


def slow_rows(all_slow: bool, runs=(RUN,), bits: int = 0) -> list[dict]:
    """The stated set; with ``bits``, every row of ``runs`` of that width instead (timed or not,
    each conversion once): a wider check that a change to the emitter moves no other SASS."""
    rows = []
    for run in runs:
        with gzip.open(os.path.join(REPO_ROOT, run), "rt") as f:
            rows += json.load(f)["rows"]
    out, seen = [], set()
    for r in rows:
        m = r["modes"]
        key = (r["src"], r["dst"], tuple(r["shape"]), r["bits"], r["num_warps"])
        if bits:
            if r["bits"] != bits or key in seen:
                continue
            seen.add(key)
            timed = "us" in m.get("ours", {}).get("chain", {}) and "us" in m["stock"].get("chain", {})
            ratio = max(m["ours"]["chain"]["us"] / m["stock"]["chain"]["us"],
                        m["ours"]["latency"]["us"] / m["stock"]["latency"]["us"]) if timed else float("nan")
            out.append({k: r[k] for k in ("case", "src", "dst", "shape", "bits", "num_warps")}
                       | {"ratio": ratio, "same_mix": m.get("ours", {}).get("chain_mix") == m["stock"].get("chain_mix"),
                          "stock_mix": m["stock"].get("chain_mix") or {}})
            continue
        if "us" not in m.get("ours", {}).get("chain", {}) or "us" not in m["stock"].get("chain", {}):
            continue
        ratio = max(m["ours"]["chain"]["us"] / m["stock"]["chain"]["us"],
                    m["ours"]["latency"]["us"] / m["stock"]["latency"]["us"])
        same = m["ours"]["chain_mix"] == m["stock"]["chain_mix"]
        if ratio > 1.05 and (same or all_slow):
            out.append({k: r[k] for k in ("case", "src", "dst", "shape", "bits", "num_warps")}
                       | {"ratio": ratio, "same_mix": same, "stock_mix": m["stock"]["chain_mix"],
                          "ours_mix_timed": m["ours"]["chain_mix"]})
    return out


def compile_job(job):
    try:
        return _compile_job(job)
    except Exception as e:  # the Triton boundary: reported per kernel
        return job[0], job[2], {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]}


def _compile_job(job):
    index, entry, mode, cuobjdump, dump = job
    make_package_importable()
    from linear_layouts.tools.testcases import instruction_classes
    from harness.conversion_cases import Case
    from harness.plan_contexts import chain_ttgir

    case = Case(entry["case"], "", entry["src"], entry["dst"], tuple(entry["shape"]), entry["bits"],
                entry["num_warps"], "fresh:sass_slow")
    kernel, sass, usage = sass_twins.compile_and_disassemble(chain_ttgir(case), OURS if mode == "ours" else None,
                                                             cuobjdump)
    ptx = kernel.asm["ptx"]
    if dump:
        os.makedirs(dump, exist_ok=True)
        stem = os.path.join(dump, f"{index:02d}_{mode}")
        for ext, text in (("ptx", ptx), ("sass", sass), ("ttgir", kernel.asm["ttgir"]), ("llir", kernel.asm["llir"])):
            with open(f"{stem}.{ext}", "w") as f:
                f.write(text)
    counts = sass_twins.loop_counts(ptx, sass)
    unroll = counts["unroll"] or 1
    ptx_widths = Counter(m.group(1) for line in sass_twins.ptx_loop(ptx) if (m := PTX_SHARED.match(line)))
    sass_widths = Counter(op for op, _ in sass_loop_full(sass) if op.split(".")[0] in ("LDS", "STS"))
    return index, mode, {"mix": instruction_classes(ptx), "regs": int(re.search(r"REG:(\d+)", usage).group(1)),
                         "ptx_widths": dict(ptx_widths), "sass_widths": {k: v / unroll for k, v in sass_widths.items()},
                         **counts}


def sass_loop_full(sass: str) -> list[tuple[str, str]]:
    """(opcode with modifiers, operands) of the loop, as ``sass_twins.sass_loop`` finds it."""
    code = []
    for line in sass.splitlines():
        m = sass_twins.SASS_LINE.match(line)
        if m:
            code.append((int(m.group(1), 16), m.group(3) + (m.group(4) or ""), m.group(5)))
    body = sass_twins.sass_loop(sass)
    if not body:
        return []
    first = body[0]
    start = next(i for i, (a, op, o) in enumerate(code) if op.split(".")[0] == first[0] and o == first[1])
    return [(op, o) for _, op, o in code[start:start + len(body)]]


def report(cases, results, seconds, argv, version) -> str:
    cols = ["shfl", "sel", "prmt", "lop3", "imad", "iadd", "shf", "lea", "mov", "other"]
    lines = ["# Slow held-out conversions (ours/stock > 1.05): stock's SASS against our default's, per loop iteration", "",
             f"`python benchmarks/studies/sass_slow_twins.py {' '.join(argv)}`, Triton {version}, "
             f"{seconds:.0f} s; {len(cases)} conversions of `{RUN}`.", "",
             "| conversion | H100 ours/stock | timed mix = stock's | PTX mix now (ours) | regs stock/ours | unroll s/o | "
             "SASS/iter stock | ours | ours - stock, by opcode | shared widths stock (PTX) | ours (PTX) |",
             "|---|---:|---|---|---|---|---:|---:|---|---|---|"]
    for i, c in enumerate(cases):
        s, o = results.get((i, "stock"), {}), results.get((i, "ours"), {})
        if "error" in s or "error" in o or not s or not o:
            lines.append(f"| {c['case']} | {c['ratio']:.3f} | failed: {s.get('error')} {o.get('error')} |")
            continue
        if s["total"] is None or o["total"] is None:
            lines.append(f"| {c['case']} | {c['ratio']:.3f} | no loop found (stock {s['total']}, ours {o['total']}) |")
            continue
        diff = Counter(o["ops"])
        diff.subtract(Counter(s["ops"]))
        text = " ".join(f"{k}{v:+g}" for k, v in sorted(diff.items()) if abs(v) > 1e-9)
        mixnow = "=" if all(o["mix"].get(k) == c["stock_mix"][k] for k in c["stock_mix"]) else \
            " ".join(f"{k}={o['mix'].get(k)}" for k in c["stock_mix"])
        w = lambda d: " ".join(f"{k}={v}" for k, v in sorted(d.items()))  # noqa: E731
        lines.append(f"| {c['case']} | {c['ratio']:.3f} | {c['same_mix']} | {mixnow} | {s['regs']}/{o['regs']} | "
                     f"{s['unroll']}/{o['unroll']} | {s['total']:g} | {o['total']:g} | {text} | "
                     f"{w(s['ptx_widths'])}; SASS {w(s['sass_widths'])} | {w(o['ptx_widths'])}; SASS {w(o['sass_widths'])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all-slow", action="store_true", help="also the slow rows whose timed mix differs")
    parser.add_argument("--match", default="")
    parser.add_argument("--runs", nargs="*", default=[RUN], help="plan_*.json.gz files (default: the held-out run)")
    parser.add_argument("--bits", type=int, default=0, help="every row of this width, not the slow ones")
    parser.add_argument("--modes", default="stock,ours", help="which compiles (ours alone: a second pass on a changed emitter)")
    parser.add_argument("--json", default="", help="write the per-kernel counts here")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--dump", default="", help="write each kernel's PTX, SASS, TTGIR, LLVM IR here")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="sass_slow_cache_")
    make_package_importable()
    import triton
    began = time.time()
    cases = [c for c in slow_rows(args.all_slow, args.runs, args.bits) if args.match in c["case"]]
    tool = sass_twins.cuobjdump_path()
    jobs = [(i, c, mode, tool, args.dump) for i, c in enumerate(cases) for mode in args.modes.split(",")]
    results = {}
    if args.jobs <= 1:
        for job in jobs:
            index, mode, result = compile_job(job)
            results[(index, mode)] = result
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            for index, mode, result in pool.map(compile_job, jobs):
                results[(index, mode)] = result
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": cases, "results": [{"index": i, "mode": m, **r} for (i, m), r in sorted(results.items())]}, f)
    text = report(cases, results, time.time() - began, argv, triton.__version__)
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
