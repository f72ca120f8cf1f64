"""What the layout conversions of the GPU suite's kernels can be worth at most: each kernel timed as
stock Triton compiles it and with every ``ttg.convert_layout`` made free.

    .venv-compat/bin/python benchmarks/studies/conversion_headroom_gpu.py --dry   # CPU: every kernel compiles both ways
    python benchmarks/studies/conversion_headroom_gpu.py                          # GPU (H100, triton 3.6)

**Why.** Issue 26 asks ``ll-assign-layouts`` for a geometric mean of 0.95 and five kernels at least
10% faster on the suite ``assign_gpu.py`` measures (kernels chosen before measuring: stock's TTGIR
has a conversion in a loop or in the epilogue).  An assignment saves time by removing conversions or
making them cheaper (it may also change loads, stores and reductions, which this does not bound).
A conversion that costs nothing bounds all of that: if a kernel with its conversions free is not
10% faster, no choice of where its conversions go makes it so.

**The free conversion** (this script only; the plugin never emits it): the conversion's island
reinterprets the source's registers as the destination's, register k of the result is register
``k mod n`` of the source (``n`` the source's register count); where the destination has fewer
registers than the source, the surplus ones are xored into it (register k of the result is the
xor of source registers k, k + m, k + 2m, ... with ``m`` the destination's count): otherwise the
code computing them would be dead and the kernel would do less work than the real one (a first
version without the xor made a gemv's accumulation of 7 rows in 8 dead: "0.50").  No shared
memory, no barrier, no shuffle: at most a few xors.  Its results are wrong, so the outputs are not compared; the kernels of the suite run
no loop whose trip count depends on the converted data (argmax and stream-K read it only to
select or store), so the time is that of the same work.  Each conversion's island is counted: a
kernel where the plugin fell back to Triton (none made free) is reported so, not as a bound.

**Measurement**: the suite's committed selection (``assign_gpu_selection.json``), per kernel the
modes ``stock``, ``free`` and ``stock_again`` (the noise), ``--rounds`` times in a rotated order,
each compile with an empty cache, ``triton.testing.do_bench`` medians (``assign_gpu.run_case``).
Writes ``conversion_headroom_gpu.md`` and ``.json.gz`` into ``--out``.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness.checkout import geomean, make_package_importable  # noqa: E402

make_package_importable()

import assign_gpu  # noqa: E402

RESULTS = on_path.RESULTS
FREE = "free"
MODES = ("stock", FREE, "stock_again")
FASTER = 0.90            # the "at least 10% faster"


# =========================================================================== the free conversion

class FreeConversions:
    """While active (``with``), the plugin's conversion lowering replaces every
    ``ttg.convert_layout`` by a reinterpretation of registers and nothing else; ``freed`` counts
    the conversions so replaced since the last reset."""

    freed = 0
    _saved = None

    def __enter__(self):
        from linear_layouts.passes import lower_conversions

        FreeConversions._saved = lower_conversions._lower_module
        lower_conversions._lower_module = _free_lower_module
        return self

    def __exit__(self, *exc):
        from linear_layouts.passes import lower_conversions

        lower_conversions._lower_module = FreeConversions._saved


def reinterpretation_island(op):
    """The island of a free conversion of ``op`` (see the module docstring), or None where the
    value's layout cannot be read (left to Triton)."""
    from linear_layouts.lowering.emit.emit_llvm import Island, island_element_type, struct_registers, struct_type
    from linear_layouts.lowering.hardware import HardwareLayout
    from linear_layouts.passes.ir.bindings import installed_conventions
    from linear_layouts.passes.ir.layouts import value_layout

    source, result = op.operands[0], op.results[0]
    try:
        src, dst = value_layout(source, op), value_layout(result, op)
        element = island_element_type(result.tensor_type.element_type)
    except Exception:
        return None
    unique = installed_conventions().struct_holds_unique_registers
    n_src = len(struct_registers(HardwareLayout.of(src), unique))
    n_dst = len(struct_registers(HardwareLayout.of(dst, src.out_dim_names), unique))
    src_struct, dst_struct = struct_type(element, n_src), struct_type(element, n_dst)
    lines = [f"%free_in = builtin.unrealized_conversion_cast %SOURCE : @SRC_TYPE@ to {src_struct}"]
    lines += [f"%free_r{k} = llvm.extractvalue %free_in[{k}] : {src_struct}" for k in range(n_src)]
    values = [f"%free_r{k % n_src}" for k in range(n_dst)]
    for k in range(n_dst):
        # Every source register is read: those beyond the destination's count are xored into
        # register k mod n_dst, or the code computing them would be dead and the bound too low.
        folded = [j for j in range(n_dst, n_src) if j % n_dst == k]
        if folded:
            values[k] = _xor_registers(lines, [k] + folded, element, f"%free_x{k}")
    lines.append(f"%free_s0 = llvm.mlir.undef : {dst_struct}")
    for k in range(n_dst):
        lines.append(f"%free_s{k + 1} = llvm.insertvalue {values[k]}, %free_s{k}[{k}] : {dst_struct}")
    lines.append(f"%RESULT = builtin.unrealized_conversion_cast %free_s{n_dst} : {dst_struct} to @DST_TYPE@")
    return Island("\n".join(lines))


def _xor_registers(lines: list, registers: list, element, name: str) -> str:
    """Append the ops xoring source ``registers`` (as integers of the element's width) to
    ``lines``; the result, of the element's type, is ``name``."""
    llvm_type, int_type = element.llvm, element.int_type if element.llvm != "i1" else "i1"
    pointer = llvm_type.startswith("!llvm.ptr")
    as_int = []
    for j in registers:
        if llvm_type == int_type:
            as_int.append(f"%free_r{j}")
            continue
        cast = "llvm.ptrtoint" if pointer else "llvm.bitcast"
        lines.append(f"{name}_i{j} = {cast} %free_r{j} : {llvm_type} to {int_type}")
        as_int.append(f"{name}_i{j}")
    acc, last = as_int[0], len(as_int) - 2
    for step, operand in enumerate(as_int[1:]):
        target = name if step == last and llvm_type == int_type else f"{name}_a{step}"
        lines.append(f"{target} = llvm.xor {acc}, {operand} : {int_type}")
        acc = target
    if llvm_type == int_type:
        return acc
    cast = "llvm.inttoptr" if pointer else "llvm.bitcast"
    lines.append(f"{name} = {cast} {acc} : {int_type} to {llvm_type}")
    return name


def _free_lower_module(module, options, gate_first=False):
    """``lower_conversions._lower_module`` for the free mode: every convert gets its
    reinterpretation island; local loads and stores are left to Triton as stock leaves them
    (``gate_first``: no gate here, every convert is freed)."""
    from linear_layouts.passes.island_splicing import OpPositions, splice_islands
    from linear_layouts.passes.lower_conversions import ConvertOutcome

    # each convert is named by its position among the printed converts, as the plugin's own
    # lowering names the ops it replaces (island_splicing.OpPositions): no edit of the module
    islands, outcomes, positions = {}, [], OpPositions()
    converts = [op for op in module.walk() if op.name == "ttg.convert_layout"]
    positions.totals["ttg.convert_layout"] = len(converts)
    for number, op in enumerate(converts):
        outcome = ConvertOutcome(op.location)
        outcomes.append(outcome)
        island = reinterpretation_island(op)
        if island is None:
            outcome.reason = "free mode: the layout could not be read"
            continue
        island.text = island.text.replace("%free_", f"%free{number}_")
        islands[number] = outcome.island = island
        positions.islands[("ttg.convert_layout", number)] = number
    if islands:
        module.rewrite_text(lambda text: splice_islands(text, islands, positions=positions))
    FreeConversions.freed += len(islands)
    return outcomes


# =========================================================================== modes

def enable_mode(mode: str) -> None:
    """assign_gpu's modes, plus ``free``: plain enable() with every conversion made free."""
    import linear_layouts

    if mode != FREE:
        return _enable_saved(mode)
    linear_layouts.enable()
    _free_context.__enter__()


_free_context = FreeConversions()
_enable_saved = assign_gpu.enable_mode


def _disable_free(real_disable):
    def disable(*args, **kwargs):
        if FreeConversions._saved is not None:
            _free_context.__exit__(None, None, None)
            FreeConversions._saved = None
        return real_disable(*args, **kwargs)
    return disable


def install_modes() -> None:
    """Make ``assign_gpu``'s harness (run_case, compile_case) run this script's modes."""
    import linear_layouts

    assign_gpu.MODES = MODES
    assign_gpu.OURS = (FREE,)
    assign_gpu.enable_mode = enable_mode
    if not getattr(linear_layouts.disable, "_frees", False):
        linear_layouts.disable = _disable_free(linear_layouts.disable)
        linear_layouts.disable._frees = True


# =========================================================================== report

def summarize(rows: list[dict]) -> dict:
    ratios = {r["name"]: r[FREE]["ms"] / r["stock"]["ms"] for r in rows
              if r[FREE].get("ok") and r["stock"].get("ok") and r[FREE].get("freed")}
    noise = [abs(r["stock_again"]["ms"] / r["stock"]["ms"] - 1) for r in rows
             if r["stock_again"].get("ok") and r["stock"].get("ok")]
    return {"kernels": len(rows), "measured": len(ratios),
            "geomean": geomean(ratios.values()) if ratios else None,
            "faster_10pct": sorted(n for n, v in ratios.items() if v <= FASTER),
            "best": min(ratios.items(), key=lambda kv: kv[1]) if ratios else None,
            "median_noise": statistics.median(noise) if noise else None,
            "max_noise": max(noise) if noise else None,
            "not_freed": sorted(r["name"] for r in rows if r[FREE].get("ok") and not r[FREE].get("freed"))}


def render(rows: list[dict], summary: dict, environment: dict, rounds: int) -> str:
    f = assign_gpu._f
    lines = ["# What the suite's layout conversions can be worth: stock vs every conversion free", "",
             f"GPU: {environment.get('gpu', '?')}; triton {environment.get('triton', '?')}; torch "
             f"{environment.get('torch', '?')}. Kernels: the committed selection of `assign_gpu.py` "
             "(`assign_gpu_selection.md`), all of it. Produced by `python benchmarks/studies/conversion_headroom_gpu.py` "
             f"({rounds} rounds, modes rotated, each compile with an empty cache; `do_bench` medians). "
             "`free`: every `ttg.convert_layout` replaced by a reinterpretation of its registers (no shared memory, "
             "no barrier, no shuffle; surplus source registers xored in so nothing the real conversion reads is "
             "dead; wrong results, so outputs are not compared): the time no placement or lowering of the "
             "conversions can beat. A ratio above 1 is the kernel running on other data or other register "
             "allocation, not a conversion costing less than nothing.", "",
             f"* run-to-run noise (stock timed twice): median {f(summary['median_noise'] and summary['median_noise'] * 100, 1)}%, "
             f"largest {f(summary['max_noise'] and summary['max_noise'] * 100, 1)}%",
             f"* free/stock: geomean **{f(summary['geomean'])}** over {summary['measured']} kernels; "
             f"kernels >= 10% faster with every conversion free: **{len(summary['faster_10pct'])}**"
             + (f" ({', '.join(summary['faster_10pct'])})" if summary["faster_10pct"] else "")
             + (f"; the most: {summary['best'][0]} {f(summary['best'][1])}" if summary["best"] else "")]
    if summary["not_freed"]:
        lines.append(f"* the plugin made no conversion free (fell back to Triton): {', '.join(summary['not_freed'])}")
    lines += ["", "| kernel | converts freed | stock ms | free ms | free/stock | stock again/stock |",
              "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        def ms(m):
            return f(r[m].get("ms"), 4) if r[m].get("ok") else "fail"
        ratio = r[FREE]["ms"] / r["stock"]["ms"] if r[FREE].get("ok") and r["stock"].get("ok") else None
        again = r["stock_again"]["ms"] / r["stock"]["ms"] if r["stock_again"].get("ok") and r["stock"].get("ok") else None
        lines.append(f"| {r['name']} | {r[FREE].get('freed', '-')} | {ms('stock')} | {ms(FREE)} | {f(ratio)} | {f(again)} |")
    failures = [(r["name"], m, r[m]["error"]) for r in rows for m in MODES if not r[m].get("ok")]
    if failures:
        lines += ["", "Failures:", ""] + [f"* {k} [{m}]: {e}" for k, m, e in failures]
    return "\n".join(lines) + "\n"


# =========================================================================== main

def run_case(case, rounds: int, cache_root: str) -> dict:
    """assign_gpu.run_case in this script's modes; ``freed``: conversions the free mode replaced
    in its compile (from the first round: every round compiles the same kernel)."""
    real_run_mode = assign_gpu.run_mode

    def run_mode(device_case, mode, cache_dir, stock_outputs):
        FreeConversions.freed = 0
        result = real_run_mode(device_case, mode, cache_dir, None)   # free's bits are not stock's
        if mode == FREE:
            result["freed"] = FreeConversions.freed
        return result
    assign_gpu.run_mode = run_mode
    try:
        row = assign_gpu.run_case(case, rounds, cache_root, {})
    finally:
        assign_gpu.run_mode = real_run_mode
    return row


def dry(cases) -> int:
    """No GPU: compile each kernel stock and free for sm_90; 1 if one fails or frees nothing."""
    failures = 0
    for case in cases:
        FreeConversions.freed = 0
        try:
            _, stock_converts, _ = assign_gpu.compile_case(case, mode="stock")
            assign_gpu.compile_case(case, mode=FREE)
            freed = FreeConversions.freed
            failures += freed == 0
            print(f"{assign_gpu.case_name(case)}: stock {stock_converts} converts, free mode freed {freed}", flush=True)
        except Exception as error:
            failures += 1
            print(f"{assign_gpu.case_name(case)}: FAILED {type(error).__name__}: {str(error).splitlines()[0][:200]}")
    print(f"{len(cases)} kernels, {failures} failed or freed nothing")
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry", action="store_true", help="no GPU: compile every kernel stock and free")
    parser.add_argument("--out", default=RESULTS)
    parser.add_argument("--selection", default=assign_gpu.SELECTION)
    parser.add_argument("--only", help="regex over selected kernel names")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--render", metavar="JSON_GZ", help="measure nothing: rewrite the report from an earlier run's .json.gz")
    args = parser.parse_args(argv)
    if args.render:
        with gzip.open(args.render, "rt") as f:
            saved = json.load(f)
        with open(os.path.join(args.out, "conversion_headroom_gpu.md"), "w") as f:
            f.write(render(saved["kernels"], summarize(saved["kernels"]), saved["environment"], saved["rounds"]))
        return 0
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    install_modes()
    _, cases = assign_gpu.selected_cases(args.selection, args.only)
    if args.dry:
        return dry(cases)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("conversion_headroom_gpu: no GPU (use --dry on a machine without one)", file=sys.stderr)
        return 2
    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__}
    cache_root = tempfile.mkdtemp(prefix="ll_headroom_cache_")
    rows = []
    for i, case in enumerate(cases):
        start = time.perf_counter()
        rows.append(run_case(case, args.rounds, cache_root))
        r = rows[-1]
        print(f"[{i + 1}/{len(cases)}] {r['name']} ({time.perf_counter() - start:.0f} s): "
              + ", ".join(f"{m}={r[m].get('ms', float('nan')):.4f}ms" for m in MODES)
              + f", freed {r[FREE].get('freed')}", flush=True)
    summary = summarize(rows)
    os.makedirs(args.out, exist_ok=True)
    # gzipped: benchmarks/results stays under its size limit (test_regenerate_results)
    with gzip.open(os.path.join(args.out, "conversion_headroom_gpu.json.gz"), "wt") as f:
        json.dump({"environment": environment, "rounds": args.rounds, "summary": summary, "kernels": rows}, f)
    text = render(rows, summary, environment, args.rounds)
    with open(os.path.join(args.out, "conversion_headroom_gpu.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
