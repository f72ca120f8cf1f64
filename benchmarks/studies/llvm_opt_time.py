"""LLVM's O3 time on one compile-time-fuzz case, stock vs the plugin, with and without SLP.

    python benchmarks/studies/llvm_opt_time.py --seed 1 --index 4          # triton 3.9: the flagged case 4
    python benchmarks/studies/llvm_opt_time.py --issue-case

Finds where a slow compile of ``benchmarks/compile_time.py fuzz` (`benchmarks/harness/compile_time_fuzz.py`)` spends its time in LLVM: the
case (same seed and index, so the same kernel) is compiled for its target in a fresh process
per measurement, and Triton's ``llvm.optimize_module`` call is timed (wrapped for the one
compile), once as Triton calls it and once with ``disable_slp_vectorizer=True`` (an argument
of Triton's own binding).  Prints one line per (mode, SLP) with the seconds; nothing else is
changed, so the compile's other stages are Triton's own.  sm_* targets only (the NVIDIA
backend's ``make_llir``).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import types

from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()


def child(mode: str, path: str, target: str, slp: str) -> int:
    """In a fresh process: compile ``path``; print the seconds of ``optimize_module``."""
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["LINEAR_LAYOUTS_STOCK_GATE"] = "off"
    import triton
    import triton.backends.nvidia.compiler as nvidia

    import linear_layouts
    from linear_layouts.lowering.target import target_named
    real = nvidia.llvm
    seconds = []

    def optimize_module(module, level, *args, **kwargs):
        if slp == "off":
            kwargs["disable_slp_vectorizer"] = True
        start = time.perf_counter()
        try:
            return real.optimize_module(module, level, *args, **kwargs)
        finally:
            seconds.append(time.perf_counter() - start)

    shim = types.SimpleNamespace(**{n: getattr(real, n) for n in dir(real) if not n.startswith("__")})
    shim.optimize_module = optimize_module
    nvidia.llvm = shim
    if mode == "ours":
        linear_layouts.enable()
        # the island this study times is one MAX_SHARED_ACCESSES_PER_THREAD now hands back
        from linear_layouts.passes import lower_conversions
        lower_conversions.SHARED_ACCESS_LIMIT_SINCE = (99, 0)
    triton.compile(path, target=target_named(target).gpu_target())
    print(json.dumps({"optimize_module": seconds[-1]}))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--index", type=int, default=4, help="the case's number in compile_time_fuzz's run")
    parser.add_argument("--cases", type=int, default=8, help="compile_time_fuzz's --cases of that run")
    parser.add_argument("--issue-case", action="store_true")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    from harness import compile_time_fuzz as fuzz
    case = fuzz.issue_case() if args.issue_case else fuzz.drawn_case(args.seed, args.cases, args.index)
    if not case["target"].startswith("sm_"):
        print(f"case {args.index} is for {case['target']}: this probe times the NVIDIA backend only")
        return 1
    path = os.path.join(tempfile.mkdtemp(prefix="ll_opt_time_"), "case.ttgir")
    with open(path, "w") as f:
        f.write(fuzz.case_text(case))
    print(f"{case['target']} {case['kind']} {case['element']} {case['shape']}: {case['src']} -> {case['dst']}")
    for mode in ("stock", "ours"):
        for slp in ("on", "off"):
            command = [sys.executable, os.path.abspath(__file__), "--child", mode, path, case["target"], slp]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                print(f"{mode}, SLP {slp}: failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            seconds = json.loads(done.stdout.strip().splitlines()[-1])["optimize_module"]
            print(f"{mode}, SLP {slp}: optimize_module {seconds:.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
