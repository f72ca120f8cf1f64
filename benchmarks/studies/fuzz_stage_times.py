"""Where a slow compile of a compile-time fuzz case spends its time, stage by stage (CPU).

    python benchmarks/studies/fuzz_stage_times.py --seed 2 --target gfx942 --index 2
    python benchmarks/studies/fuzz_stage_times.py --seed 2 --target gfx942 --index 2 --variant dst-only
    python benchmarks/studies/fuzz_stage_times.py --seed 2 --target gfx942 --index 2 --mode off --no-limit
    python benchmarks/studies/fuzz_stage_times.py --structured --seed 1 --target gfx942 --index 4 --mode off

The case is drawn as ``benchmarks/compile_time.py fuzz --seed S --targets T`` draws it (its
``index``-th case for that target).  ``--variant`` compiles it as drawn (``convert``), or with the
conversion made a no-op by giving both sides the destination's layout (``dst-only``) or the
source's (``src-only``): whether the time is the conversion's or the kernel's loads and stores.
``--mode`` compiles with stock Triton, or with the plugin (``off``: its stock gate off, so the
island is ours; ``default``); ``--no-limit`` lifts ``MAX_ELEMENTS_PER_THREAD`` for this run, to
see how long our island would take where the plugin leaves the conversion to Triton.  Each stage
(``llir``, ``ptx``/``amdgcn``, ``cubin``/``hsaco``) prints its start and its seconds as it ends,
so a run killed by ``timeout`` still says where it was.  Triton's cache is off.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path)
import argparse
import os
import random
import sys
import tempfile
import time

from harness.checkout import make_package_importable  # noqa: E402


def drawn(seed: int, target: str, index: int, structured: bool = False) -> dict:
    from harness.compile_time_fuzz import random_case, structured_case
    rng = random.Random(f"{seed}:{target}")
    draw = structured_case if structured else random_case
    return [draw(rng, target) for _ in range(index + 1)][index]


def timed_stages(backend, stages, options, language, capability):
    """A stages inspection hook: every stage prints when it starts and how long it took."""
    for name in list(stages):
        def stage(*args, _run=stages[name], _name=name, **kwargs):
            print(f"start {_name}", flush=True)
            start = time.perf_counter()
            result = _run(*args, **kwargs)
            print(f"stage {_name}: {time.perf_counter() - start:.1f} s", flush=True)
            return result
        stages[name] = stage


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--target", required=True, help="e.g. sm_90, gfx942")
    parser.add_argument("--index", type=int, required=True, help="the case's index among the target's cases")
    parser.add_argument("--variant", choices=("convert", "dst-only", "src-only"), default="convert")
    parser.add_argument("--mode", choices=("stock", "off", "default"), default="stock")
    parser.add_argument("--structured", action="store_true", help="the case of `fuzz --structured`")
    parser.add_argument("--no-limit", action="store_true", help="lift MAX_ELEMENTS_PER_THREAD for this run")
    args = parser.parse_args(argv)

    make_package_importable()
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    if args.mode == "off":
        os.environ["LINEAR_LAYOUTS_STOCK_GATE"] = "off"
    from harness.compile_time_fuzz import case_text, registers_per_thread

    case = dict(drawn(args.seed, args.target, args.index, args.structured))
    if args.variant == "dst-only":
        case["src"] = case["dst"]
    elif args.variant == "src-only":
        case["dst"] = case["src"]
    print(f"{case['element']} {case['shape']}, {case['num_warps']} warps, registers a thread "
          f"{registers_per_thread(case['src'], case['shape'])} -> {registers_per_thread(case['dst'], case['shape'])}:"
          f"\n  {case['src']}\n  -> {case['dst']}", flush=True)
    path = os.path.join(tempfile.mkdtemp(prefix="ll_stage_times_"), "case.ttgir")
    with open(path, "w") as f:
        f.write(case_text(case))

    import triton
    from triton import knobs

    import linear_layouts
    from linear_layouts.lowering.target import target_named
    if args.mode != "stock":
        if args.no_limit:
            from linear_layouts.passes import lower_conversions
            lower_conversions.MAX_ELEMENTS_PER_THREAD = 1 << 16
        linear_layouts.enable(remarks=True)
        inner = knobs.runtime.add_stages_inspection_hook

        def hook(*args_):
            if not args_:
                return inner()
            inner(*args_)
            timed_stages(*args_)
        knobs.runtime.add_stages_inspection_hook = hook
    else:
        knobs.runtime.add_stages_inspection_hook = (
            lambda *a: timed_stages(*a) if a else ("fuzz_stage_times", "0"))   # no args: the cache key (3.7+)
    start = time.perf_counter()
    triton.compile(path, target=target_named(args.target).gpu_target())
    print(f"total: {time.perf_counter() - start:.1f} s"
          + (f"; {linear_layouts.stats().islands} island(s)" if args.mode != "stock" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
