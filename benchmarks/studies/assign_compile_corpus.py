"""Every corpus kernel through ``ll-assign-layouts`` and the lowering, to Triton's back end (CPU only).

    python benchmarks/studies/assign_compile_corpus.py --out benchmarks/results      # under the triton to check

The assignment's own checks (``assign_corpus.py``, the unit tests) stop at a module that parses;
what a user gets is a kernel compiled by Triton.  This script compiles every TTGIR file of
``test/lit/corpus`` twice with ``ll-opt --emit ptx`` (``amdgcn`` for the AMD files): once as
stock (no pass) and once through ``ll-assign-layouts{memory_ops=true reorder_reductions=true}``
and ``ll-lower-conversions`` (the options that change the most functions), each in its own
``ll-opt`` process, so that an abort inside Triton ends one compile, not the run.

A kernel fails *ours only* when stock compiles it and the pipeline does not: the plugin must
never make a kernel fail that Triton compiles.  Files the installed Triton cannot compile at all
(the corpus is printed by triton 3.9; 3.6 reads only part of it) are counted apart.  Writes
``assign_compile_corpus_<triton version>.md``; exit status 1 when any kernel fails ours only.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import glob
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = on_path.REPO
CORPUS = os.path.join(REPO, "test", "lit", "corpus")
PIPELINE = "ll-assign-layouts{memory_ops=true reorder_reductions=true},ll-lower-conversions"


def ll_opt() -> list[str]:
    """The ``ll-opt`` of this checkout, run by this interpreter."""
    return [sys.executable, "-m", "linear_layouts.tools.ll_opt"]


def emit_for(path: str) -> str:
    return "amdgcn" if os.sep + "gfx" in path or "hip" in os.path.basename(path) else "ptx"


def compile_file(path: str, pipeline: str | None, workdir: str) -> tuple[bool, str]:
    """(compiled, the first line of the error) for one ``ll-opt`` run to the back end."""
    emit = emit_for(path)
    out = os.path.join(workdir, f"{abs(hash((path, pipeline)))}.{emit}")
    command = ll_opt() + [path, "--emit", emit, "-o", out] + (["-p", pipeline] if pipeline else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO)
    # the first line of the error, with this checkout's path left out (reports are committed)
    error = (done.stderr.strip().splitlines() or [""])[0].replace(REPO + os.sep, "")
    return done.returncode == 0 and os.path.exists(out), error[:200]


def check(files: list[str], jobs: int) -> list[dict]:
    workdir = tempfile.mkdtemp(prefix="ll_assign_compile_")

    def one(path: str) -> dict:
        ours, ours_error = compile_file(path, PIPELINE, workdir)
        stock, stock_error = (True, "") if ours else compile_file(path, None, workdir)
        return {"file": os.path.relpath(path, CORPUS), "ours": ours, "stock": stock,
                "error": "" if ours else ours_error, "stock_error": stock_error}

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, files))


def render(rows: list[dict], version: str) -> str:
    ours_only = [r for r in rows if r["stock"] and not r["ours"]]
    neither = [r for r in rows if not r["stock"] and not r["ours"]]
    lines = [f"# The corpus through ll-assign-layouts and the lowering, to Triton's back end (triton {version})", "",
             f"- command: `python benchmarks/studies/assign_compile_corpus.py --out benchmarks/results`; pipeline "
             f"`{PIPELINE}`, `ll-opt --emit ptx` (`amdgcn` for gfx files), each compile its own process",
             f"- files: {len(rows)}; compiled through the pipeline: **{sum(r['ours'] for r in rows)}**",
             f"- failed where stock compiles: **{len(ours_only)}**",
             f"- stock cannot compile them either (this Triton cannot read or lower the file): {len(neither)}", ""]
    if ours_only:
        lines += ["## Failed where stock compiles", ""] + [f"* {r['file']}: {r['error']}" for r in ours_only] + [""]
    if neither:
        lines += ["## Stock fails too", ""] + [f"* {r['file']}: {r['stock_error']}" for r in neither] + [""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--only", default="", help="substring of the files' paths to keep")
    parser.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    import triton

    files = [f for f in sorted(glob.glob(os.path.join(CORPUS, "*", "*.ttgir"))) if args.only in f]
    rows = check(files, args.jobs)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"assign_compile_corpus_{triton.__version__}.md")
    with open(path, "w") as f:
        f.write(render(rows, triton.__version__))
    failed = [r for r in rows if r["stock"] and not r["ours"]]
    print(f"{len(rows)} files, {sum(r['ours'] for r in rows)} compiled through the pipeline, "
          f"{len(failed)} failed where stock compiles; wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
