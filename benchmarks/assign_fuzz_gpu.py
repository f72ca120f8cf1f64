"""GPU fuzz of ``ll-assign-layouts``: random kernels of our own making, bit for bit against stock.

    python benchmarks/assign_fuzz_gpu.py --cases 300 --seed 1 --out benchmarks/results   # H100/H200
    python benchmarks/assign_fuzz_gpu.py --cases 20 --dry-run --out /tmp/dry            # CPU: compile only
    python benchmarks/assign_fuzz_gpu.py --cases 60 --seed 83 --memory-ops --loop-loads  # loads in loops

Each case is a kernel from ``linear_layouts.tools.fuzz.random_programs`` (``random_program(kernel=True)``): it
loads a 32x64 and a 32-element i32 tensor in random layouts, combines them through elementwise
ops, expand_dims + broadcast, max-reductions, make_range, splats and an ``scf.for`` whose
accumulator is converted back and forth (with ``--transposes``, also ``tt.trans`` there and
back; with ``--shape-ops``, reshapes there and back, join + split, and gathers; with
``--whiles``, an ``scf.while`` carrying a converted accumulator), with ``ttg.convert_layout`` wherever layouts meet, and stores two results.  Three compiles of the same TTGIR:

* ``stock``: Triton alone;
* ``assigned``: ``ll-assign-layouts`` (``memory_ops`` as given), then Triton's own lowering: is
  the rewritten module the same computation?
* ``ours``: ``ll-assign-layouts`` then ``ll-lower-conversions`` (every island simulated), as
  ``enable(assign_layouts=True)`` compiles: the product.

With ``--loop-loads`` every ``scf.for`` body also loads tile ``iv`` of a buffer L and may
store its accumulator to a buffer S, in layouts other than the accumulator's (so stock converts
in the loop; with ``--memory-ops`` the assignment may give those loads and stores the
accumulator's layout): the fuzz for ``memory_ops`` on loads and stores inside loops.

All three run on the same random inputs with poisoned outputs (OUT, OUT1 and S filled with -1);
pass = every output bit-identical to stock's.  The inputs are bounded so that the kernel cannot
overflow: the programs compute on i32 only (adds, subtracts, max, masks with 31; no floats), and
``random_programs.random_kernel`` bounds every value it computes by ``scale * B + offset`` for
inputs in [-B, B]; each case draws X, V and L uniformly from [-B, B] with the largest B that
keeps that bound within i32 (reported per case).  Overflow is not harmless here: Triton's i32
arithmetic may be folded as if it could not overflow, and where a conversion stands then changes
the answer (``results/assign_fuzz_gpu_seed71_case178.txt``, from full-range inputs).  Outputs are
compared as bits (``bit_equal``: for floats too, so a NaN matches the same NaN).  Buffer sizes:
X M*N, V M, L MAX_TRIPS*M*N (tile iv < MAX_TRIPS), S MAX_TRIPS*M*N per loop that stores; %n is
``LAUNCH_N`` <= MAX_TRIPS, so every in-loop access is in bounds.

A case where the pass kept Triton's layouts still runs (its ``assigned`` is stock's text).
Every case records what the assignment did to the TTGIR it is given (which Triton lowers as is:
a ``.ttgir`` compile starts after Triton's layout passes): conversions before and after, those
inside loops, and how many loads and stores inside loops it gave another layout; a dry run lists
them per case.  Writes ``assign_fuzz_gpu*.md`` and ``.json`` to ``--out``; exit status 0 iff no
failure.
"""

from __future__ import annotations

import json
import os
import random
import sys
from concurrent.futures import ProcessPoolExecutor

from harness import skeleton  # noqa: E402
from harness.common import require_package, scratch_directory  # noqa: E402

require_package()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
# The subject is our islands: the stock gate (lowering/choosing/fitted_model.py) would leave most of them to
# Triton on the model's word, and the fuzz would test stock against stock.
os.environ.setdefault("LINEAR_LAYOUTS_STOCK_GATE", "off")

VARIANTS = ("stock", "assigned", "ours")


def random_programs():
    """The random kernel generator the unit tests draw from too (``linear_layouts.tools.fuzz.random_programs``,
    in the installed package: imported when first needed)."""
    from linear_layouts.tools.fuzz import random_programs as generator
    return generator


def case_kernel(seed: int, index: int, transposes: bool = False, shape_ops: bool = False, whiles: bool = False,
                loop_loads: bool = False, calls: bool = False):
    """Case ``index`` of ``seed``: a ``random_programs.RandomKernel`` (text, input bound, buffers)."""
    rng = random.Random(seed * 1_000_003 + index)
    return random_programs().random_kernel(rng, steps=rng.randint(4, 12), kernel=True, transposes=transposes, shape_ops=shape_ops,
                         whiles=whiles, loop_loads=loop_loads, calls=calls)


def case_text(seed: int, index: int, transposes: bool = False, shape_ops: bool = False, whiles: bool = False,
              loop_loads: bool = False, calls: bool = False) -> str:
    return case_kernel(seed, index, transposes, shape_ops, whiles, loop_loads, calls).text


def conversions(text: str) -> tuple[int, int]:
    """(ttg.convert_layout ops in the module, those of them inside a loop)."""
    from linear_layouts.passes.ir.snapshot import in_loop, parse_module
    converts = parse_module(text).ops_named("ttg.convert_layout")
    return len(converts), sum(1 for op in converts if in_loop(op))


def loop_memory_layouts(text: str) -> list[tuple[str, str]]:
    """(op name, pointer encoding) of every tt.load and tt.store inside a loop, in text order:
    the assignment adds and removes conversions but never reorders these, so two lists of one
    program compare op by op."""
    from linear_layouts.passes.assign.layout_rules import encoding_of
    from linear_layouts.passes.ir.snapshot import in_loop, parse_module
    return [(op.name, encoding_of(op.operands[0])) for op in parse_module(text).walk()
            if op.name in ("tt.load", "tt.store") and in_loop(op)]


def compile_case(job) -> dict:
    """Worker: write and compile the three variants (each in a forked child: Triton may abort)."""
    index, seed, directory, memory_ops, transposes, shape_ops, whiles, loop_loads, calls = job
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.framework import PassContext, run_pipeline
    from linear_layouts.passes.barriers.guard_barriers import guard_pruning
    from linear_layouts.passes.pipeline import parse_pipeline
    from linear_layouts.passes.ir.sandbox import run_forked
    from linear_layouts.passes.ir.snapshot import parse_module

    kernel = case_kernel(seed, index, transposes, shape_ops, whiles, loop_loads, calls)
    text = kernel.text
    assign = "ll-assign-layouts" + ("{memory_ops=true}" if memory_ops else "")
    out: dict = {"index": index, "input_bound": kernel.input_bound, "loop_store_tiles": kernel.loop_store_tiles}
    for variant in VARIANTS:
        path = os.path.join(directory, f"{index}-{variant}.ttgir")
        try:
            module_text = text
            if variant != "stock":
                module = parse_module(text, f"case{index}")
                pipeline = assign + (",ll-lower-conversions" if variant == "ours" else "")
                lines = []
                run_pipeline(module, parse_pipeline(pipeline), PassContext(report_stream=_Lines(lines), remarks=True))
                module_text = module.print(debuginfo=True)
                if variant == "assigned":
                    out["remark"] = next((line for line in lines if "ll-assign-layouts" in line), "")
                    out["changed"] = "layouts assigned by cost" in out["remark"]
                    out.update(_assignment_effect(text, module_text))
            with open(path, "w") as f:
                f.write(module_text)

            def child(path=path) -> str:
                with guard_pruning():
                    triton.compile(path, target=GPUTarget("cuda", 90, 32))
                return "ok"
            run_forked(child)
            out[variant] = {"ok": True, "path": path}
        except Exception as error:  # noqa: BLE001 - any failure is recorded per case
            out[variant] = {"ok": False, "error": str(error).strip().splitlines()[0][:300] if str(error).strip()
                            else type(error).__name__}
        if variant == "stock" and not out["stock"]["ok"]:
            break
    return out


def _assignment_effect(stock_text: str, assigned_text: str) -> dict:
    """What the assignment did to a case: conversions (all, in loops) before and after, and
    how many of the loops' loads and stores it gave another layout."""
    stock_memory, assigned_memory = loop_memory_layouts(stock_text), loop_memory_layouts(assigned_text)
    # op by op only while no load or store was dropped (every loop stores: none should be)
    relaid = (sum(1 for a, b in zip(stock_memory, assigned_memory) if a != b)
              if [a[0] for a in stock_memory] == [b[0] for b in assigned_memory] else -1)
    return {"converts": [conversions(stock_text), conversions(assigned_text)],
            "loop_memory_ops": len(stock_memory), "loop_memory_relaid": relaid}


class _Lines:
    def __init__(self, lines):
        self.lines = lines

    def write(self, text):
        self.lines.extend(t for t in text.splitlines() if t)
        return len(text)

    def flush(self):
        pass


LAUNCH_N = 3      # the kernels' %n: trip count of the loops bounded by %n (at most MAX_TRIPS)


def input_buffers(result: dict, loop_loads: bool, rng) -> dict:
    """The buffers one case reads and writes, as numpy int32 arrays (``rng``: a
    ``numpy.random.Generator``): X (M*N), V (M) and, with ``loop_loads``, L (MAX_TRIPS tiles:
    every in-loop load reads tile iv < MAX_TRIPS) hold integers drawn uniformly from [-B, B], B
    the case's ``input_bound`` (at least 1), so that no i32 the kernel computes overflows; OUT,
    OUT1 and S (the loops' stores: MAX_TRIPS tiles per loop that stores) hold -1, which a
    variant that skips a store leaves visible.  In the kernel's argument order."""
    import numpy as np

    generator = random_programs()
    MAX_TRIPS, M, N = generator.MAX_TRIPS, generator.M, generator.N
    bound = max(1, result["input_bound"])

    def draw(count):
        return rng.integers(-bound, bound, size=count, endpoint=True, dtype=np.int64).astype(np.int32)

    def poison(count):
        return np.full(count, -1, dtype=np.int32)
    buffers = {"X": draw(M * N), "V": draw(M), "OUT": poison(M * N), "OUT1": poison(M)}
    if loop_loads:
        buffers["L"] = draw(MAX_TRIPS * M * N)
        buffers["S"] = poison(max(1, result["loop_store_tiles"]) * MAX_TRIPS * M * N)
    return buffers


OUTPUTS = ("OUT", "OUT1", "S")


def bit_equal(a, b) -> bool:
    """Same shape, type and bits (torch tensors or numpy arrays): a float NaN equals the same
    NaN, -0.0 differs from 0.0."""
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    a = a.cpu().numpy() if hasattr(a, "cpu") else a
    b = b.cpu().numpy() if hasattr(b, "cpu") else b
    return a.tobytes() == b.tobytes()


def run_on_gpu(results: list[dict], loop_loads: bool = False) -> None:
    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    import numpy as np

    from linear_layouts.passes.barriers.guard_barriers import guard_pruning
    rng = np.random.default_rng(0)
    for result in results:
        if not all(result.get(v, {}).get("ok") for v in VARIANTS):
            continue
        inputs = {name: torch.from_numpy(array).cuda() for name, array in input_buffers(result, loop_loads, rng).items()}
        outputs = {}
        for variant in VARIANTS:
            try:
                with guard_pruning():
                    kernel = triton.compile(result[variant]["path"], target=GPUTarget("cuda", 90, 32))
                buffers = {name: t.clone() for name, t in inputs.items()}
                kernel[(1, 1, 1)](*buffers.values(), LAUNCH_N)
                torch.cuda.synchronize()
                outputs[variant] = {name: buffers[name] for name in OUTPUTS if name in buffers}
            except Exception as error:  # noqa: BLE001 - the GPU boundary: recorded per case
                result[variant]["launch_error"] = f"{type(error).__name__}: {str(error)[:300]}"
        if len(outputs) < len(VARIANTS):
            result["verdict"] = "launch-error"
            continue
        result["wrong"] = [variant for variant in VARIANTS[1:]
                           if not all(bit_equal(outputs[variant][k], outputs["stock"][k]) for k in outputs["stock"])]
        result["verdict"] = "wrong" if result["wrong"] else "pass"
        if not result["wrong"]:
            del result["wrong"]


def write_reports(out_dir: str, args, results: list[dict], header: dict) -> int:
    stock_failed = [r for r in results if not r.get("stock", {}).get("ok")]
    ours_failed = [r for r in results if r.get("stock", {}).get("ok")
                   and not all(r.get(v, {}).get("ok") for v in VARIANTS)]
    changed = sum(1 for r in results if r.get("changed"))
    verdicts = {k: sum(1 for r in results if r.get("verdict") == k) for k in ("pass", "wrong", "launch-error")}
    lines = ["# ll-assign-layouts on the GPU: random kernels, bit for bit against stock", "",
             f"- {header['gpu']}; triton {header['triton']}, torch {header['torch']}, python {header['python']}",
             f"- command: `python benchmarks/assign_fuzz_gpu.py --cases {args.cases} --seed {args.seed}"
             + (" --memory-ops" if args.memory_ops else "") + (" --transposes" if args.transposes else "")
             + (" --shape-ops" if args.shape_ops else "") + (" --whiles" if args.whiles else "")
             + (" --loop-loads" if args.loop_loads else "") + (" --calls" if args.calls else "") + "`",
             f"- cases: {len(results)}; the pass changed layouts in **{changed}** "
             f"(the rest keep Triton's and run as a control)",
             f"- stock failed to compile (skipped): {len(stock_failed)}; ours or assigned failed where stock "
             f"compiled: **{len(ours_failed)}**",
             *_effect_lines(results)]
    if args.dry_run:
        lines.append("- dry run: compiled only, nothing launched")
    else:
        lines.append(f"- bit-identical to stock (assigned and ours): **{verdicts['pass']}**, wrong: "
                     f"**{verdicts['wrong']}**, launch errors: {verdicts['launch-error']}")
    failures = ours_failed + [r for r in results if r.get("verdict") in ("wrong", "launch-error")]
    if args.dry_run:
        lines += _per_case_table(results)
    if failures:
        lines += ["", "| case | what | detail |", "|---|---|---|"]
        for r in failures[:50]:
            detail = r.get("wrong") or next((r[v].get("error") or r[v].get("launch_error")
                                             for v in VARIANTS if isinstance(r.get(v), dict)
                                             and (r[v].get("error") or r[v].get("launch_error"))), "")
            lines.append(f"| {r['index']} | {r.get('verdict', 'compile')} | {detail} |")
    os.makedirs(out_dir, exist_ok=True)
    name = "assign_fuzz_gpu" + (f"_seed{args.seed}" if args.seed != 1 else "") + ("_transposes" if args.transposes else "") \
        + ("_shape_ops" if args.shape_ops else "") + ("_whiles" if args.whiles else "") \
        + ("_loop_loads" if args.loop_loads else "") + ("_calls" if args.calls else "")
    with open(os.path.join(out_dir, name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump({"header": header, "cases": len(results), "changed": changed, "verdicts": verdicts,
                   "ours_failed": len(ours_failed), "failures": [r["index"] for r in failures],
                   "per_case": [{k: r.get(k) for k in PER_CASE_KEYS} for r in results]}, f, indent=1)
    print("\n".join(lines))
    return 1 if failures else 0


PER_CASE_KEYS = ("index", "changed", "converts", "loop_memory_ops", "loop_memory_relaid", "input_bound",
                 "loop_store_tiles", "verdict")


def _effect_lines(results: list[dict]) -> list[str]:
    """Summary of what the assignment did: conversions (all, in loops) and loop loads/stores."""
    measured = [r for r in results if r.get("converts")]
    total = [sum(r["converts"][k][0] for r in measured) for k in (0, 1)]
    looped = [sum(r["converts"][k][1] for r in measured) for k in (0, 1)]
    memory = sum(r["loop_memory_ops"] for r in measured)
    relaid = [r for r in measured if r["loop_memory_relaid"] > 0]
    dropped = sum(1 for r in measured if r["loop_memory_relaid"] < 0)
    bounds = [r["input_bound"] for r in results if "input_bound" in r]
    return [f"- conversions, stock -> assigned: {total[0]} -> {total[1]}; inside loops: {looped[0]} -> {looped[1]}",
            f"- loads and stores inside loops: {memory}; the assignment re-laid out "
            f"{sum(r['loop_memory_relaid'] for r in relaid)} of them, in **{len(relaid)}** cases"
            + (f" (and dropped some in {dropped}: not compared)" if dropped else ""),
            f"- inputs drawn from [-B, B], B from each program's bound on its values (no i32 overflow): "
            f"B min {min(bounds, default=0)}, median {sorted(bounds)[len(bounds) // 2] if bounds else 0}; "
            f"cases where even B = 1 could overflow: {sum(1 for b in bounds if b < 1)}"]


def _per_case_table(results: list[dict]) -> list[str]:
    lines = ["", "| case | changed | conversions stock -> assigned | in loops | loop loads/stores re-laid | B |",
             "|---|---|---|---|---|---|"]
    for r in results:
        if not r.get("converts"):
            continue
        (before, before_loop), (after, after_loop) = r["converts"]
        lines.append(f"| {r['index']} | {'yes' if r.get('changed') else 'no'} | {before} -> {after} | "
                     f"{before_loop} -> {after_loop} | {r['loop_memory_relaid']} of {r['loop_memory_ops']} | "
                     f"{r['input_bound']} |")
    return lines


def options(parser) -> None:
    parser.set_defaults(jobs=max(1, (os.cpu_count() or 2) - 2))
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--memory-ops", action="store_true", help="ll-assign-layouts{memory_ops=true}")
    parser.add_argument("--transposes", action="store_true",
                        help="programs with tt.trans steps too (random_program(transposes=True))")
    parser.add_argument("--shape-ops", action="store_true",
                        help="programs with tt.reshape, tt.join/tt.split and tt.gather steps too "
                             "(random_program(shape_ops=True))")
    parser.add_argument("--whiles", action="store_true",
                        help="programs with scf.while loops too (random_program(whiles=True))")
    parser.add_argument("--loop-loads", action="store_true",
                        help="programs whose scf.for bodies load (and store) tiles too "
                             "(random_program(loop_loads=True)); use with --memory-ops")
    parser.add_argument("--calls", action="store_true",
                        help="programs that call noinline functions of their own, with conversions, loops and "
                             "branches inside (random_program(calls=True))")


def cases(args, env) -> list:
    """One compile job per case: (index, seed, work folder, the options of the draw)."""
    assert 0 <= LAUNCH_N <= random_programs().MAX_TRIPS, "the buffers and the input bounds assume n <= MAX_TRIPS"
    directory = scratch_directory("ll_assign_fuzz_")
    return [(i, args.seed, directory, args.memory_ops, args.transposes, args.shape_ops, args.whiles, args.loop_loads,
             args.calls) for i in range(args.cases)]


def run(args, env, jobs) -> list:
    if args.jobs > 1:
        import multiprocessing
        with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(compile_case, jobs))
    else:
        results = [compile_case(job) for job in jobs]
    if not args.dry_run:
        run_on_gpu(results, args.loop_loads)
    return results


def summary(args, env, jobs, results) -> int:
    env.header.setdefault("torch", "-")
    env.header["seconds"] = env.seconds()
    return write_reports(args.out, args, results, env.header)


def main(argv=None) -> int:
    return skeleton.main("assign_fuzz_gpu", __doc__, argv, options=options, cases=cases, run=run, summary=summary,
                         jobs=True, seed=1, dry_run="compile only (no GPU)")


if __name__ == "__main__":
    sys.exit(main())
