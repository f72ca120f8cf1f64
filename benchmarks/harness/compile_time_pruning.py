"""The guard-barrier pruning alone, on real kernels' LLVM IR (CPU only, no GPU).

    python benchmarks/compile_time.py prune                           # FLA's and Liger-Kernel's kernels
    git show main:passes/barriers/guard_barriers.py > /tmp/old_guard_barriers.py
    python benchmarks/compile_time.py prune --reference /tmp/old_guard_barriers.py

Every ``NAME.cudaNN.ttgir`` of the corpus folders (``test/lit/corpus/fla`` and
``test/lit/corpus/liger_kernel`` unless ``--corpus`` names others) that holds a
``ttg.convert_layout`` is compiled with ``linear_layouts.enable()`` (nothing remembered:
``LINEAR_LAYOUTS_CACHE=off``, Triton's cache off) up to Triton's ``llir`` stage; the LLVM IR the
plugin hands to ``passes.barriers.guard_barriers.prune_guard_barriers`` is kept (a kernel
without a guard hands none) and the compile stops there.  Then the pruning runs on each text
``--repeats`` times, each run timed by this process's CPU clock (steadier than the wall clock
on a shared host), and the fastest counts: noise only adds time.

``--reference FILE``: a copy of ``guard_barriers.py`` from another tree, loaded as a module of
this package, runs on the same texts, its runs interleaved with the tree's; its answers (the
text out and the count) must be the tree's, or the command fails.  ``--save DIR`` keeps the
LLVM IR texts (``NAME.ll``).  Prints one row per kernel (the slowest first) and the totals.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
import sys
import time
import warnings

from harness.common import require_package  # noqa: E402

require_package()
from harness.compile_time_corpus import REPO, target_of  # noqa: E402
from harness.quiet_compile import first_line  # noqa: E402

CORPORA = [os.path.join(REPO, "test", "lit", "corpus", name) for name in ("fla", "liger_kernel")]


class _Captured(BaseException):
    """Stops a compile once its LLVM IR is kept (not an ``Exception``: no fallback catches it)."""


def capture(paths: list[str]) -> dict[str, str]:
    """{kernel name: the LLVM IR its compile hands to the pruning}, for the files that have a guard."""
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    import linear_layouts
    from linear_layouts.passes.drop_in import stage_wrappers
    from linear_layouts.passes.ir.diagnostics import CapturedStderr

    texts: dict[str, str] = {}
    current = {"name": ""}

    def keep(llir: str):
        texts[current["name"]] = llir
        raise _Captured

    real = stage_wrappers.prune_guard_barriers
    stage_wrappers.prune_guard_barriers = keep
    linear_layouts.enable()
    try:
        for path in paths:
            current["name"] = os.path.basename(path)[:-len(".ttgir")]
            stderr = None
            try:
                with warnings.catch_warnings(), CapturedStderr() as stderr:   # MLIR's diagnostics
                    warnings.simplefilter("ignore")
                    triton.compile(path, target=target_of(path))
            except _Captured:
                pass
            except Exception as error:      # a kernel this Triton does not compile: one line, go on
                print(f"{current['name']}: not compiled ({first_line(error, stderr.text if stderr else '')})")
    finally:
        linear_layouts.disable()
        stage_wrappers.prune_guard_barriers = real
    return texts


def load_reference(path: str):
    """``path`` (a copy of ``guard_barriers.py``) as a module of ``passes.barriers``, so that its
    relative imports resolve in this package."""
    name = "linear_layouts.passes.barriers._reference_guard_barriers"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def cpu_time_of(prune, text: str) -> float:
    """Seconds of this process's CPU time one ``prune(text)`` takes."""
    start = time.process_time()
    prune(text)
    return time.process_time() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="compile_time.py prune", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", default=CORPORA, help="folders of NAME.cudaNN.ttgir files")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference", metavar="FILE", help="another guard_barriers.py to compare with")
    parser.add_argument("--save", metavar="DIR", help="write each kernel's LLVM IR to DIR/NAME.ll")
    parser.add_argument("--rows", type=int, default=10, help="kernels shown (the slowest; default %(default)s)")
    args = parser.parse_args(argv)

    from linear_layouts.passes.barriers import guard_barriers
    paths = [path for folder in args.corpus for path in sorted(glob.glob(os.path.join(folder, "*.ttgir")))
             if re.search(r"\.cuda\d+\.ttgir$", path) and "ttg.convert_layout" in open(path).read()]
    texts = capture(paths)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        for name, text in texts.items():
            with open(os.path.join(args.save, name + ".ll"), "w") as out:
                out.write(text)
    reference = load_reference(args.reference) if args.reference else None
    rows, differ = [], []
    for name, text in texts.items():
        ours, answer = [], guard_barriers.prune_guard_barriers(text)
        theirs = []
        if reference is not None and reference.prune_guard_barriers(text) != answer:
            differ.append(name)
        for _ in range(args.repeats):
            ours.append(cpu_time_of(guard_barriers.prune_guard_barriers, text))
            if reference is not None:
                theirs.append(cpu_time_of(reference.prune_guard_barriers, text))
        rows.append((name, text.count("\n"), text.count(guard_barriers.GUARD_BARRIER_ASM), answer[1],
                     min(ours) * 1e3, min(theirs) * 1e3 if theirs else None))
    rows.sort(key=lambda row: -row[4])
    import triton
    print(f"prune_guard_barriers on {len(rows)} kernels' LLVM IR (of {len(paths)} files; "
          f"triton {triton.__version__}), fastest of {args.repeats} by CPU time, ms")
    print(f"{'kernel':48} {'lines':>7} {'guards':>6} {'dropped':>7} {'ms':>8}"
          + (f" {'reference':>10}" if reference else ""))
    for name, lines, guards, dropped, ms, ref_ms in rows[:args.rows]:
        print(f"{name:48} {lines:7} {guards:6} {dropped:7} {ms:8.2f}" + (f" {ref_ms:10.2f}" if reference else ""))
    total = sum(row[4] for row in rows)
    line = (f"{'total':48} {sum(r[1] for r in rows):7} {sum(r[2] for r in rows):6} {sum(r[3] for r in rows):7} "
            f"{total:8.1f}")
    if reference is not None:
        ref_total = sum(row[5] for row in rows)
        line += f" {ref_total:10.1f}  ({ref_total / total:.1f}x)"
    print(line)
    if differ:
        print(f"the reference answers differently on {len(differ)}: {', '.join(differ)}")
        return 1
    if reference is not None:
        print("the reference's answers (text out, count) are the same on every kernel")
    return 0


if __name__ == "__main__":
    sys.exit(main())
