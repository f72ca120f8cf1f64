"""Where the plugin's own compile time goes, stage by stage, on the corpus's kernels (CPU only).

    python benchmarks/studies/plugin_stages.py                      # the 25 Liger-Kernel kernels with a conversion
    python benchmarks/studies/plugin_stages.py --repeats 5 --match neighborhood
    python benchmarks/studies/plugin_stages.py --bundled --repeats 7   # compile_time.py's kernels, one column each

Every kernel of ``test/lit/corpus/liger_kernel/`` that holds a ``ttg.convert_layout`` is
compiled (TTGIR to cubin) with ``linear_layouts.enable()``, cold as in
``benchmarks/compile_time_corpus.py`` (nothing remembered: ``LINEAR_LAYOUTS_CACHE=off`` and
``passes.process_memory.forget_kernels`` before each compile), after one warm-up round.  The
plugin's functions below are wrapped with a clock for the run, and the report gives each one's
wall time per kernel (inclusive: an indented stage is part of the one above it) and how often
it ran.  Nothing else is changed.  Prints one line per stage, in the order of STAGES.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import sys
import time

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
from harness.checkout import make_package_importable  # noqa: E402
from harness.compile_time_corpus import FunctionClock  # noqa: E402

make_package_importable()

CORPUS = os.path.join(on_path.REPO, "test", "lit", "corpus",
                      "liger_kernel")
# (module, attribute, label): what is timed.  Labels indented by two spaces run inside the one
# above them.
STAGES = (
    ("passes.hook", "run_plugin_pipeline", "the plugin's pipeline, all of it"),
    ("passes.hook", "snapshot_of", "  the snapshot of Triton's module"),
    ("passes.hook", "parse_module", "  a parsed copy of the module (pipelines that edit it)"),
    ("passes.lower_conversions", "plan_module", "  planning every op"),
    ("passes.lower_conversions", "_plan_remembered", "    planner and plan verifier"),
    ("passes.lower_conversions", "value_layout", "    layouts of the values"),
    ("passes.lower_conversions", "_follow_model", "    the choice (ours or stock's)"),
    ("passes.lower_conversions", "stock_hazard", "    stock's hazards"),
    ("passes.lower_conversions", "GuardPlacement", "  guard barriers' placement"),
    ("passes.lower_conversions", "_checked_island", "  emitting and simulating islands"),
    ("passes.lower_conversions", "emit_island", "    emitting"),
    ("passes.lower_conversions", "_simulate_unless_accepted", "    the simulator"),
    ("passes.lower_conversions", "splice_islands", "  splicing islands into the text"),
    ("passes.hook", "triton_module_from_text", "  Triton's parse of the module with islands"),
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="cold compiles of each kernel")
    parser.add_argument("--match", default="", help="only the files whose name contains this text")
    parser.add_argument("--bundled", action="store_true",
                        help="compile_time.py's bundled kernels (TTIR to sm_90) instead of the corpus: the median "
                             "of the cold compiles, per kernel")
    args = parser.parse_args(argv)
    if args.bundled:
        return bundled(args)
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    import linear_layouts
    from harness.compile_time_corpus import target_of
    from linear_layouts.passes.process_memory import forget_kernels
    paths = [p for p in sorted(glob.glob(os.path.join(CORPUS, "*.ttgir")))
             if args.match in os.path.basename(p) and "ttg.convert_layout" in open(p).read()]
    compiled = []
    for path in paths:                  # stock compiles: Triton's warm-up, and files it cannot compile
        try:
            triton.compile(path, target=target_of(path))
            compiled.append(path)
        except Exception:               # ops newer than this Triton: not measured
            pass
    if not compiled:
        print("plugin_stages: no kernel to measure", file=sys.stderr)
        return 1
    clock = FunctionClock(STAGES).__enter__()     # for the rest of the run
    totals, calls = clock.totals, clock.calls
    linear_layouts.enable()
    for path in compiled:               # warm-up: the plugin's imports and process data
        forget_kernels()
        triton.compile(path, target=target_of(path))
    totals.clear()
    calls.clear()
    for _ in range(args.repeats):
        for path in compiled:
            forget_kernels()
            triton.compile(path, target=target_of(path))
    linear_layouts.disable()
    compiles = len(compiled) * args.repeats
    print(f"triton {triton.__version__}: {len(compiled)} kernels x {args.repeats} cold compiles; ms per kernel")
    for _, _, label in STAGES:
        if calls[label]:
            print(f"{label:58s} {totals[label] / compiles * 1000:7.2f} ms  ({calls[label] / compiles:.1f} calls)")
    return 0


def bundled(args) -> int:
    """The stages of ``compile_time.py``'s kernels that hold a conversion: per kernel, the median
    over ``--repeats`` cold compiles (after one warm-up compile of each)."""
    import statistics
    import tempfile

    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget

    import compile_time
    import linear_layouts
    from linear_layouts.passes.process_memory import forget_kernels
    target, workdir = GPUTarget("cuda", 90, 32), tempfile.mkdtemp(prefix="ll_stages_")
    kernels = [(k, compile_time.ttir_file(k, target, workdir)) for k in compile_time.kernels()
               if args.match in k.name]
    clock = FunctionClock(STAGES).__enter__()     # for the rest of the run
    totals, calls = clock.totals, clock.calls
    linear_layouts.enable()
    columns = {}
    for kernel, path in kernels:
        options = {"num_warps": kernel.num_warps, **kernel.options}
        forget_kernels()
        triton.compile(path, target=target, options=options)     # warm-up
        samples = collections.defaultdict(list)
        for _ in range(args.repeats):
            totals.clear()
            forget_kernels()
            triton.compile(path, target=target, options=options)
            for _, _, label in STAGES:
                samples[label].append(totals[label])
        if any(samples[STAGES[0][2]]):                   # the plugin ran: the kernel has a conversion
            columns[kernel.name.split()[0]] = {label: statistics.median(v) * 1000 for label, v in samples.items()}
    linear_layouts.disable()
    print(f"triton {triton.__version__}: bundled kernels, median of {args.repeats} cold compiles; ms")
    print(f"{'':58s}" + "".join(f"{name[:11]:>12s}" for name in columns))
    for _, _, label in STAGES:
        if any(column[label] for column in columns.values()):
            print(f"{label:58s}" + "".join(f"{column[label]:12.2f}" for column in columns.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
