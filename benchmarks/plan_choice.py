"""How good is the planner's choice?  Every candidate plan it considered, and stock Triton, timed
side by side on the GPU.

    python benchmarks/plan_choice.py --out benchmarks/results        # on a GPU machine
    python benchmarks/plan_choice.py --dry-run --limit 5              # CPU: plan and compile only
    python benchmarks/plan_choice.py fit RUN.json.gz ... --out choice_fit.md --write MODEL.json  # CPU
    python benchmarks/plan_choice.py kernels --out benchmarks/results      # GPU: inside real kernels
    python benchmarks/plan_choice.py calibrate --out benchmarks/results    # GPU: the cost model's constants
    python benchmarks/plan_choice.py stock-shared --seed 977 --count 300   # CPU: stock's shared-memory code

``--fresh``/``--train`` time fresh draws as a kernel sees them (``harness/plan_contexts.py``);
``fit`` fits the choice model to ``--train`` runs (``harness/fit_choice.py``, whose docstring
says how); ``--write-choices`` writes the measured table.  ``kernels`` times every candidate of
the kernel suite's conversions inside its kernel (``kernels --help``; the rows ``--write-choices``
reads last); ``calibrate`` measures each instruction class the cost model counts, alone in a loop,
and fits the model's constants to it (``harness/calibrate.py``; ``calibrate --dry-run``: CPU);
``stock-shared`` predicts stock's shared-memory instructions (``lowering/choosing/stock_shared.py``)
and checks them against Triton's PTX (``harness/stock_shared_oracle.py``; CPU, under triton 3.6).
Without them:

For each conversion the planner builds its candidates (warp shuffles with and without packing,
shared memory with each pair of store/load instructions, ...), verifies them and ranks them by
the cost model (``lowering.cost``); it emits rank 0.  Here every verified rank is compiled on
its own (``ll-lower-conversions{candidate=K}``) into the timing kernel of
``benchmarks/conversions.py`` (the conversion 1024 times in a loop, results checked bit for
bit), together with stock Triton's own lowering of the same kernel.  The report says, per
conversion, where the chosen plan ranks among the measured ones:

* chosen / fastest: the chosen plan's time over the fastest of (our candidates + stock);
* chosen / stock:   the chosen plan's time over stock Triton's.

The cases: every conversion of the TTGIR corpus (``harness.conversion_cases.corpus_cases``: real
kernels, each at several element widths) and random pairs of blocked layouts (1 to 8 warps, 8 to 64-bit
elements), from a fixed seed.  Writes plan_choice.json (with each candidate's cost-model
features, which the study ``fit_cost_model.py`` fitted the model's constants to: docs/studies.md) and
plan_choice.md into --out, with the GPU name and the Triton and torch versions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

from harness import skeleton  # noqa: E402
from harness.common import geomean, require_package  # noqa: E402
from harness.conversion_cases import (ITERATIONS, Case, _wrap, corpus_cases, kernel_ttgir, pow2_split,  # noqa: E402
                                     release)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STOCK = -1               # the "rank" of stock Triton's own lowering
CHOSEN = -2              # what the plugin emits by default (the cost model, overruled by measurements)
WITHIN = 1.03            # "close to the fastest": within 3%
NOT_SLOWER_THAN_STOCK = 1.05
# A measured choice needs the model's pick slower by at least this much per kernel (1024
# conversions), beside the 3%: kernels of a few microseconds vary by up to 10% run to run.
MEASURABLE_MS = 0.001
# Inside a real kernel (rows of ``plan_choice.py kernels``, named "kernel/..."), the kernel is
# what a user runs: the model's pick loses to a faster option once it is slower by more than
# the run's own noise (stock timed twice) and by at least 1%, not 3%.  A conversion that makes
# a whole kernel 2% slower than stock is a regression the kernel suite would show.
KERNEL_MARGIN = 0.01


# --------------------------------------------------------------------------- cases

def _random_blocked(shape, num_warps, rng: random.Random) -> str:
    rank = len(shape)
    threads = pow2_split(32, rank, rng)
    warps = pow2_split(num_warps, rank, rng)
    size = [rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


def random_cases(count: int, seed: int) -> list[Case]:
    """Random blocked -> blocked conversions of 2-D tensors.  Half keep the warp split (the
    data stays in its warp more often: the shuffle-or-shared decisions), half draw both."""
    rng = random.Random(seed)
    cases, seen = [], set()
    while len(cases) < count:
        num_warps = rng.choice([1, 2, 4, 4, 8])
        bits = rng.choice([8, 16, 32, 64])
        shape = (1 << rng.randint(2, 7), 1 << rng.randint(2, 7))
        if not 256 <= shape[0] * shape[1] <= 8192:
            continue
        src = _random_blocked(shape, num_warps, rng)
        dst = _random_blocked(shape, num_warps, rng)
        if rng.random() < 0.5:
            warps_of_src = re.search(r"warpsPerCTA = \[[^\]]*\]", src).group(0)
            dst = re.sub(r"warpsPerCTA = \[[^\]]*\]", warps_of_src, dst)
        key = (src, dst, shape, bits)
        if src == dst or key in seen:
            continue
        seen.add(key)
        name = f"random/{len(cases)}:{shape[0]}x{shape[1]}:i{bits}:w{num_warps}"
        cases.append(Case(name, "", src, dst, shape, bits, num_warps, "random"))
    return cases


# --------------------------------------------------------------------------- candidates

def cost_features(plan) -> dict:
    """The cost model's per-warp counts of a plan (what the model's constants multiply), and its
    instructions by name."""
    from linear_layouts.lowering.cost import plan_cost
    from linear_layouts.lowering.describe import instruction_counts
    from linear_layouts.lowering.instructions import BarrierScope

    cost = plan_cost(plan)
    named = instruction_counts(cost, plan.target)
    warp_barriers = cost.counts.get(BarrierScope.WARP, 0)
    cta_barriers = cost.counts.get(BarrierScope.CTA, 0) + cost.counts.get(BarrierScope.CLUSTER, 0)
    return {"shuffles": cost.shuffles, "alu": cost.selects + cost.packs,
            "shared_accesses": cost.shared_stores + cost.shared_loads,
            "wavefronts": cost.store_wavefronts + cost.load_wavefronts,
            "warp_barriers": warp_barriers, "cta_barriers": cta_barriers,
            "scratch_bytes": cost.scratch_bytes, "weight": cost.weight,
            "instructions": named}


def verified_candidates(case: Case) -> list[dict]:
    """The planner's verified candidates for the case's conversion, in its order (rank 0 is
    what it emits), each with its method and cost-model features."""
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.dialect.attribute_parser import parse_aliases
    from linear_layouts.lowering.planner import plan_candidates
    from linear_layouts.lowering.verify import verify_plan

    aliases = parse_aliases(case.aliases) if case.aliases else None
    src = to_linear_layout(case.src, case.shape, aliases, conventions=installed_release())
    dst = to_linear_layout(case.dst, case.shape, aliases, conventions=installed_release())
    plans, scope = plan_candidates(src, dst, case.bits, "sm_90")
    out = []
    for plan in plans:
        if verify_plan(plan).ok:
            out.append({"method": plan.method, "scope": scope, **cost_features(plan)})
    return out


# --------------------------------------------------------------------------- compiling

def pipeline_of(rank: int) -> str | None:
    """The plugin pipeline that emits ``rank`` (None: stock Triton, plugin off)."""
    if rank == STOCK:
        return None
    if rank == CHOSEN:
        return "ll-lower-conversions"
    # measured=false: rank 0 is the cost model's own pick, whatever the measurements say.
    return f"ll-lower-conversions{{candidate={rank} measured=false}}"


def compile_candidate(args):
    """Compile one case with one candidate (or stock) in a worker process."""
    index, case, rank, directory = args
    require_package()
    import triton
    from triton.backends.compiler import GPUTarget

    path = os.path.join(directory, f"case{index}_rank{rank}.ttgir")
    with open(path, "w") as f:
        f.write(kernel_ttgir(case))
    start = time.perf_counter()
    try:
        import linear_layouts
        from linear_layouts.passes.drop_in import hook

        if pipeline_of(rank):
            linear_layouts.enable(pipeline=pipeline_of(rank))
        try:
            kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
        finally:
            hook.disable()
        from linear_layouts.tools.fuzz.testcases import instruction_classes

        result = {"ok": True, "compile_s": time.perf_counter() - start, **instruction_classes(kernel.asm["ptx"]),
                  "ptx_sha": ptx_digest(kernel.asm["ptx"])}
    except Exception as e:  # the Triton boundary (any exception type): reported per candidate, never fatal
        result = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]}
    return index, rank, result


def ptx_digest(ptx: str) -> str:
    """A short digest of a kernel's PTX: two modes with the same digest run the same binary, so
    any difference in their times is noise (kernels of a few microseconds differ by up to 20%).
    The debug information (``.file``, ``//`` comments, the ``.debug_*`` sections) names the
    TTGIR file each mode was compiled from (one per candidate here): left out."""
    import hashlib
    code = []
    for line in ptx.splitlines():
        if line.lstrip().startswith(".section") and ".debug" in line:
            break
        if not line.lstrip().startswith(".file"):
            code.append(line.split("//", 1)[0].rstrip())
    code = "\n".join(code)
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def load_candidate(index, rank, directory):
    """The compiled kernel (a hit in Triton's cache: the workers compiled it)."""
    import linear_layouts
    import triton
    from linear_layouts.passes.drop_in import hook
    from triton.backends.compiler import GPUTarget

    if pipeline_of(rank):
        linear_layouts.enable(pipeline=pipeline_of(rank))
    try:
        return triton.compile(os.path.join(directory, f"case{index}_rank{rank}.ttgir"),
                              target=GPUTarget("cuda", 90, 32))
    finally:
        hook.disable()


# --------------------------------------------------------------------------- timing

def ranks_of(index: int, candidates, overruled) -> list[int]:
    """What to compile and time for case ``index``: stock, every verified candidate, and the
    plugin's default when a recorded measurement overrules the model there."""
    return [STOCK] + ([CHOSEN] if overruled[index] else []) + list(range(len(candidates[index])))


def time_on_gpu(cases, candidates, overruled, compiled, directory):
    import torch
    from triton.testing import do_bench

    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    grid = sms * 4
    torch_type = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
    rows = []
    for index, case in enumerate(cases):
        size = 1
        for s in case.shape:
            size *= s
        dtype = torch_type[case.bits]
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2 ** 30)), min(info.max, 2 ** 30), (size,), dtype=dtype, device="cuda")
        expected = _wrap(x.to(torch.int64) * ITERATIONS + sum(range(ITERATIONS)), case.bits).to(dtype)
        row = {"case": case.name, "src": case.src_resolved, "dst": case.dst_resolved, "shape": list(case.shape),
               "bits": case.bits, "num_warps": case.num_warps, "candidates": candidates[index], "stock": None,
               "chosen": None}
        for rank in ranks_of(index, candidates, overruled):
            result = dict(compiled.get((index, rank), {"ok": False, "error": "not compiled"}))
            if result.get("ok"):
                try:
                    kernel = load_candidate(index, rank, directory)
                    y = torch.full((grid * size,), -7, dtype=dtype, device="cuda")  # poison
                    kernel[(grid, 1, 1)](x, y)
                    torch.cuda.synchronize()
                    result["exact"] = bool(torch.equal(y.view(grid, size), expected.expand(grid, size)))
                    result["ms"] = do_bench(lambda: kernel[(grid, 1, 1)](x, y), warmup=25, rep=100,
                                            return_mode="median")
                except Exception as e:  # the GPU boundary (Triton, CUDA): reported per candidate
                    result.update(ok=False, error=f"{type(e).__name__}: {e}"[:300])
            if rank == STOCK:
                row["stock"] = result
            elif rank == CHOSEN:
                row["chosen"] = {"overruled_by": overruled[index], **result}
            else:
                row["candidates"][rank] = {**row["candidates"][rank], **result}
        rows.append(row)
        print(f"[{index + 1}/{len(cases)}] {summary_line(row)}", flush=True)
    return rows, grid


# --------------------------------------------------------------------------- judging

def noise_line(rows) -> str:
    """Run-to-run noise, from the run itself: where a recorded measurement leaves a conversion to
    stock, the plugin's kernel is stock's, so 'chosen' and 'stock' time the same code twice."""
    twice = sorted(row["chosen"]["ms"] / row["stock"]["ms"] for row in rows
                   if row.get("chosen") and row["chosen"].get("overruled_by") == "stock"
                   and row["chosen"].get("ms") and row["stock"] and row["stock"].get("ms"))
    if not twice:
        return "* run-to-run noise: not measured (no conversion was left to stock by a measurement)"
    within = sum(1 for r in twice if abs(r - 1) <= 0.01)
    return (f"* run-to-run noise (the same kernel timed twice, where a measurement leaves the conversion to "
            f"stock): {len(twice)} pairs, median ratio {twice[len(twice) // 2]:.3f}, {within} within 1%, "
            f"extremes {twice[0]:.3f} and {twice[-1]:.3f}")


def judge(row) -> dict | None:
    """Where the plugin's choice stands, or None when it was not measured.  The choice is the
    cost model's pick (rank 0) unless a recorded measurement overruled it (``row["chosen"]``:
    the default pipeline, timed on its own)."""
    stock = row["stock"].get("ms") if row["stock"] else None
    ours = [c.get("ms") for c in row["candidates"]]
    chosen = row["chosen"].get("ms") if row.get("chosen") else (ours[0] if ours else None)
    if not ours or not ours[0] or not stock or not chosen:
        return None
    fastest = min([t for t in ours if t] + [stock])
    best_ours = min(t for t in ours if t)
    chosen_run = row["chosen"] if row.get("chosen") else row["candidates"][0]
    same_binary = bool(chosen_run.get("ptx_sha")) and chosen_run.get("ptx_sha") == row["stock"].get("ptx_sha")
    return {"chosen_over_fastest": chosen / fastest, "chosen_over_stock": chosen / stock,
            "chosen_is_stocks_binary": same_binary,
            "model_over_fastest": ours[0] / fastest, "model_over_stock": ours[0] / stock,
            "best_ours_over_stock": best_ours / stock, "candidates": len(ours),
            "overruled": row["chosen"]["overruled_by"] if row.get("chosen") else "",
            "fastest": "stock" if fastest == stock else f"rank {ours.index(fastest)}"}


def summary_line(row) -> str:
    parts = [f"stock={row['stock'].get('ms', float('nan')):.4f}" if row["stock"] else "stock=-"]
    if row.get("chosen"):
        parts.append(f"chosen={row['chosen'].get('ms', float('nan')):.4f}")
    for rank, c in enumerate(row["candidates"]):
        ok = "" if c.get("exact", False) else "(!)"
        parts.append(f"{rank}:{c['method']}={c.get('ms', float('nan')):.4f}{ok}")
    return f"{row['case']}: " + ", ".join(parts)


def write_report(rows, out, environment, argv):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "plan_choice.json"), "w") as f:
        json.dump({"environment": environment, "iterations": ITERATIONS, "cases": rows}, f, indent=1)
    judged = [(row, judge(row)) for row in rows]
    judged = [(row, j) for row, j in judged if j]
    n = len(judged)
    close = sum(1 for _, j in judged if j["chosen_over_fastest"] <= WITHIN)
    slower_than_stock = [(row, j) for row, j in judged if j["chosen_over_stock"] > NOT_SLOWER_THAN_STOCK]
    several = [(row, j) for row, j in judged if j["candidates"] > 1]
    several_close = sum(1 for _, j in several if j["chosen_over_fastest"] <= WITHIN)
    inexact = [(row["case"], rank) for row in rows for rank, c in enumerate(row["candidates"])
               if c.get("ok") and not c.get("exact", True)]
    if row_stock_inexact := [row["case"] for row in rows if row["stock"] and row["stock"].get("ok")
                             and not row["stock"].get("exact", True)]:
        inexact += [(c, "stock") for c in row_stock_inexact]
    inexact += [(row["case"], "chosen") for row in rows if row.get("chosen") and row["chosen"].get("ok")
                and not row["chosen"].get("exact", True)]
    model_close = sum(1 for _, j in judged if j["model_over_fastest"] <= WITHIN)
    model_slower = sum(1 for _, j in judged if j["model_over_stock"] > NOT_SLOWER_THAN_STOCK)
    overruled = [j for _, j in judged if j["overruled"]]
    lines = ["# Plan choice: every candidate the planner considered, and stock Triton, timed side by side", "",
             f"GPU: {environment.get('gpu')}; triton {environment.get('triton')}; torch {environment.get('torch')}; "
             f"{ITERATIONS} conversions per kernel, medians of `triton.testing.do_bench`.", "",
             f"Produced by `python benchmarks/plan_choice.py {' '.join(argv)}`.", "",
             f"* conversions measured: {n} (of {len(rows)}); with more than one candidate: {len(several)}",
             f"* chosen plan within {100 * (WITHIN - 1):.0f}% of the fastest (our candidates and stock): "
             f"{close}/{n} ({100 * close / max(n, 1):.1f}%); among those with several candidates: "
             f"{several_close}/{len(several)}",
             f"* chosen plan more than {100 * (NOT_SLOWER_THAN_STOCK - 1):.0f}% slower than stock: "
             f"{len(slower_than_stock)}" + (f" ({same_ptx} of them compile to stock's own PTX: timing noise)"
                                            if (same_ptx := sum(1 for _, j in slower_than_stock
                                                                if j["chosen_is_stocks_binary"])) else ""),
             f"* geometric mean chosen / stock: {geomean([j['chosen_over_stock'] for _, j in judged]):.3f}; "
             f"best candidate / stock: {geomean([j['best_ours_over_stock'] for _, j in judged]):.3f}",
             f"* the cost model's own pick (rank 0): within {100 * (WITHIN - 1):.0f}% of the fastest in {model_close}/{n}, "
             f"more than {100 * (NOT_SLOWER_THAN_STOCK - 1):.0f}% slower than stock in {model_slower}, geometric mean "
             f"pick / stock {geomean([j['model_over_stock'] for _, j in judged]):.3f}",
             f"* overruled by a recorded measurement (lowering/choosing/measured_choices.json): {len(overruled)} "
             f"(to stock: {sum(1 for j in overruled if j['overruled'] == 'stock')})",
             f"* every measured kernel bit-exact: {not inexact}" + (f" (not: {inexact[:5]})" if inexact else ""),
             noise_line(rows),
             "", "| case | warps | candidates (method: ms) | stock ms | chosen | chosen/fastest | chosen/stock | fastest |",
             "|---|---:|---|---:|---|---:|---:|---|"]
    for row, j in judged:
        cands = ", ".join(f"{c['method']}: {c['ms']:.4f}" if c.get("ms") else f"{c['method']}: -"
                          for c in row["candidates"])
        chosen = f"measured: {j['overruled']}" if j["overruled"] else "rank 0"
        lines.append(f"| {row['case']} | {row['num_warps']} | {cands} | {row['stock']['ms']:.4f} | {chosen} | "
                     f"{j['chosen_over_fastest']:.3f} | {j['chosen_over_stock']:.3f} | {j['fastest']} |")
    failures = [(row["case"], rank, c.get("error")) for row in rows for rank, c in enumerate(row["candidates"])
                if not c.get("ok")]
    failures += [(row["case"], "stock", row["stock"].get("error")) for row in rows
                 if row["stock"] and not row["stock"].get("ok")]
    if failures:
        lines += ["", "Not measured (compile or run failures):", ""]
        lines += [f"* {c} [{r}]: {e}" for c, r, e in failures]
    with open(os.path.join(out, "plan_choice.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:14]))


# --------------------------------------------------------------------------- the measured-choice table

def installed_release():
    import triton
    return release(triton.__version__)


def layouts_of(row, version):
    """Both layouts of a result row as the plugin sees them under Triton ``version``."""
    from linear_layouts.dialect.encodings import to_linear_layout
    shape = tuple(row["shape"])
    return (to_linear_layout(row["src"], shape, conventions=version),
            to_linear_layout(row["dst"], shape, conventions=version))


def overruling_choice(case: Case):
    """"stock" or the rank a recorded measurement picks for this case, "" when none applies
    (as ``passes.lower_conversions`` decides it: the entry must match the planner's plans)."""
    from linear_layouts.lowering.choosing import measured_choices

    src, dst = layouts_of({"src": case.src_resolved, "dst": case.dst_resolved, "shape": case.shape},
                          installed_release())
    choice = measured_choices.lookup(src, dst, case.bits, "sm_90")
    return "" if choice is None else str(choice.fastest)


def _kernel_verdict(rows: list):
    """For the in-kernel rows of one conversion (``kernel/...`` rows of kernel_choice.json with
    one conversion key, from one kernel or several): ``(row, fastest, fastest_ms, model_pick_ms)``
    for the table (``row``: the kernel where ``fastest`` gained most), or None when the model's
    pick stands.

    With ``noise`` the largest of ``KERNEL_MARGIN`` and the rows' own noise, an option (a
    candidate rank, or "stock") overrules the pick when it is faster than the pick by more than
    the noise in some kernel and slower by no more than the noise in any: one kernel's gain may
    not be another's loss.  Of those, the one with the smallest geometric mean of time / the
    pick's time wins, except that stock Triton's lowering wins whenever it too is nowhere
    slower and is within the noise of that one: a conversion we cannot show to be faster is
    left to Triton.

    Worked example (template attention's epilogue, two kernels, noise 1%): the pick takes 0.2078
    and 0.1164 ms, candidate 2 0.2063 and 0.1140 (ratios 0.993, 0.979), stock 0.2061 and 0.1146
    (0.992, 0.985): both beat the pick by more than 1% in the second kernel and lose nowhere;
    candidate 2 has the better mean (0.986 against 0.988), but stock is within 1% of it, so the
    conversion goes to stock."""
    def ms(row, option):
        return row["stock"].get("ms") if option == "stock" else row["candidates"][option].get("ms")

    def row_noise(row):
        if row.get("noise") is not None:
            return row["noise"]
        again, stock = (row.get("stock_again") or {}).get("ms"), row["stock"].get("ms")
        return abs(again / stock - 1) if again and stock else 0.0

    noise = max([KERNEL_MARGIN] + [row_noise(row) for row in rows])
    ratios = {}
    for option in ["stock", *range(1, min(len(row["candidates"]) for row in rows))]:
        if all(ms(row, option) for row in rows):
            ratios[option] = [ms(row, option) / row["candidates"][0]["ms"] for row in rows]

    def nowhere_slower(option):
        return all(r <= 1 + noise for r in ratios[option])

    def geomean_of(option):
        return math.exp(sum(math.log(r) for r in ratios[option]) / len(rows))
    better = [o for o in ratios if nowhere_slower(o) and any(r * (1 + noise) < 1 for r in ratios[o])]
    if not better:
        return None
    best = min(better, key=geomean_of)
    if "stock" in ratios and nowhere_slower("stock") and geomean_of("stock") <= geomean_of(best) * (1 + noise):
        best = "stock"
    row = rows[min(range(len(rows)), key=lambda n: ratios[best][n])]
    return row, best, ms(row, best), row["candidates"][0]["ms"]


def write_choices(results_paths: str, table_path: str) -> int:
    """The conversions of plan_choice.json files (comma-separated, all measured on one GPU with
    one Triton release) where the cost model's pick was more than 3% (and ``MEASURABLE_MS``)
    slower than the fastest measured option - inside real kernels (kernel_choice.json rows,
    grouped by conversion: ``_kernel_verdict``) more than the runs' noise and ``KERNEL_MARGIN``
    - as the table ``lowering.choosing.measured_choices`` reads.  Later files win where two measured the
    same conversion."""
    from linear_layouts.lowering.choosing.measured_choices import conversion_key

    runs = [json.load(open(path)) for path in results_paths.split(",")]
    environments = {(run["environment"]["gpu"], run["environment"]["triton"]) for run in runs}
    if len(environments) != 1:
        raise SystemExit(f"--from: the runs were made on different GPUs or Triton releases: {sorted(environments)}")
    data = runs[0]
    version = release(data["environment"]["triton"])

    def key_of(row):
        src, dst = layouts_of(row, version)
        return conversion_key(src, dst, row["bits"], "sm_90")

    def entry(row, fastest, fastest_ms, pick_ms):
        return {"case": row["case"], "src": row["src"], "dst": row["dst"], "shape": row["shape"], "bits": row["bits"],
                "fastest": fastest, "model_pick_ms": round(pick_ms, 5), "fastest_ms": round(fastest_ms, 5),
                "model_pick_mix": row["candidates"][0]["instructions"],
                "fastest_mix": None if fastest == "stock" else row["candidates"][fastest]["instructions"]}

    choices = {}
    for run in runs:
        in_kernel = {}
        for row in run["cases"]:
            ours = [c.get("ms") for c in row["candidates"]]
            stock = row["stock"].get("ms") if row["stock"] else None
            if not ours or not all(ours) or not stock or "instructions" not in row["candidates"][0]:
                continue
            if row["case"].startswith("kernel/"):
                in_kernel.setdefault(key_of(row), []).append(row)
                continue
            fastest_ours = min(range(len(ours)), key=lambda k: ours[k])
            fastest_ms = min(stock, ours[fastest_ours])
            if ours[0] <= WITHIN * fastest_ms or ours[0] - fastest_ms < MEASURABLE_MS:
                continue
            choices[key_of(row)] = entry(row, "stock" if stock < ours[fastest_ours] else fastest_ours, fastest_ms,
                                         ours[0])
        for key, rows in in_kernel.items():
            verdict = _kernel_verdict(rows)
            if verdict:
                choices[key] = entry(*verdict)
    environment = data["environment"]
    table = {"measured_on": environment["gpu"], "triton": environment["triton"],
             "made_by": f"python benchmarks/plan_choice.py --write-choices {os.path.relpath(table_path, REPO)} "
                        f"--from {','.join(os.path.relpath(p, REPO) for p in results_paths.split(','))}",
             "choices": dict(sorted(choices.items(), key=lambda kv: kv[1]["case"]))}
    with open(table_path, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    stock = sum(1 for c in choices.values() if c["fastest"] == "stock")
    print(f"{len(choices)} measured choices ({stock} to stock) -> {table_path}")
    return 0


def same_ptx(results_path: str, random_count: int) -> int:
    """For each conversion of a plan_choice.json whose choice was timed more than 5% slower than
    stock, compile (CPU, the installed Triton) stock's kernel and the chosen one again and print
    whether their PTX is the same: runs made before the digests were recorded (``ptx_sha``)."""
    import triton

    data = json.load(open(results_path))
    cases = {c.name: c for c in corpus_cases() + random_cases(random_count, data["environment"]["seed"])}
    directory = tempfile.mkdtemp(prefix="ll_same_ptx_")
    for index, row in enumerate(data["cases"]):
        verdict = judge(row)
        if not verdict or verdict["chosen_over_stock"] <= NOT_SLOWER_THAN_STOCK:
            continue
        ptx = {}
        for rank in (STOCK, CHOSEN if row.get("chosen") else 0):
            with open(os.path.join(directory, f"case{index}_rank{rank}.ttgir"), "w") as f:
                f.write(kernel_ttgir(cases[row["case"]]))
            triton.knobs.cache.dir = tempfile.mkdtemp(dir=directory)   # empty: compiled, not loaded
            ptx[rank] = load_candidate(index, rank, directory).asm["ptx"]
        same = len({ptx_digest(text) for text in ptx.values()}) == 1
        print(f"{row['case']}: chosen / stock {verdict['chosen_over_stock']:.3f}; "
              + ("the same PTX as stock's (timing noise)" if same else "PTX differs from stock's"))
    return 0


# --------------------------------------------------------------------------- kernels: inside real kernels

def conversions_of(kernel_text: str, name: str):
    """The distinct conversions of a kernel's TTGIR, as Cases (one per (src, dst, shape, bits))."""
    from harness.conversion_cases import converts_in

    distinct = {}
    for _, case in converts_in(kernel_text, name):
        distinct.setdefault(case.key, case)
    return list(distinct.values())


def launched_ttgir(bench) -> str:
    """The TTGIR of the kernel ``bench`` launches (compiled by stock Triton)."""
    import gc

    from linear_layouts.passes.drop_in.hook import forget_jit_kernels
    from triton.runtime.jit import JITFunction

    forget_jit_kernels()
    launch, _, _ = bench.setup()
    launch()
    texts = []
    with warnings.catch_warnings():  # isinstance() on some torch objects warns about deprecations
        warnings.simplefilter("ignore")
        jit_functions = [obj for obj in gc.get_objects() if isinstance(obj, JITFunction)]
    for obj in jit_functions:
        for cache in (getattr(obj, "device_caches", None) or {}).values():
            texts += [kernel.asm["ttgir"] for kernel in cache[0].values()]   # (kernel cache, ...)
    if len(texts) != 1:
        raise RuntimeError(f"{bench.name}: expected one compiled kernel, found {len(texts)}")
    return texts[0]


def time_conversions(bench, found: list, cache_root: str, rounds: int) -> list[dict]:
    """A row per distinct conversion of the kernel (those with a verified candidate): every
    candidate and "left to Triton", timed in the kernel, the other conversions as the plugin
    plans them by default (``candidate_for``)."""
    import torch
    from kernels import round_label, run_mode, run_rounds

    from linear_layouts.lowering.choosing.measured_choices import conversion_key

    rows, keys = [], []
    for case in found:
        candidates = verified_candidates(case)
        if not candidates:
            continue
        row = {"case": f"kernel/{bench.name}:{'x'.join(map(str, case.shape))}:i{case.bits}",
               "src": case.src_resolved, "dst": case.dst_resolved, "shape": list(case.shape), "bits": case.bits,
               "num_warps": case.num_warps, "candidates": candidates}
        src, dst = layouts_of(row, installed_release())
        keys.append(conversion_key(src, dst, case.bits, "sm_90"))
        rows.append(row)
    prepared = bench.setup()

    def run_one(mode: str, number: int) -> dict:
        label = round_label(mode, number)
        if mode in ("stock", "stock_again"):
            return run_mode(bench, "stock", cache_root, label=label, prepared=prepared)
        n, rank = mode[1:].split(".")
        return run_mode(bench, "linear", cache_root, label=label, prepared=prepared,
                        pipeline=f"ll-lower-conversions{{candidate_for={keys[int(n)]}:{rank}}}")
    modes = ["stock", "stock_again"]
    for n, row in enumerate(rows):
        modes += [f"c{n}.stock"] + [f"c{n}.{rank}" for rank in range(len(row["candidates"]))]
    results = run_rounds(run_one, modes, rounds)
    stock, again = results["stock"].get("ms"), results["stock_again"].get("ms")
    for n, row in enumerate(rows):
        row["stock"], row["stock_again"], row["kernel_stock"] = results[f"c{n}.stock"], results["stock_again"], \
            results["stock"]
        row["noise"] = abs(again / stock - 1) if stock and again else None
        for rank in range(len(row["candidates"])):
            row["candidates"][rank] = {**row["candidates"][rank], **results[f"c{n}.{rank}"]}
        print(row["case"], row["stock"].get("ms"), [c.get("ms") for c in row["candidates"]], flush=True)
    del prepared
    torch.cuda.empty_cache()
    return rows


def benches(wanted: set, paper: set, parser):
    """(bench, environment variables) for every kernel to measure: the kernel suite's (those
    named in ``wanted``; all of them when neither set names any) and every case of the paper
    kernels named in ``paper`` (each shape a bench of its own, made when it is reached: its
    tensors live on the GPU only while it is measured)."""
    from kernels import _cases
    from paper_kernels import DeviceCase, paper_cases
    import torch

    suite = _cases()
    unknown = wanted - {bench.name for bench in suite}
    if unknown:
        parser.error(f"--only: unknown kernel {sorted(unknown)[0]!r}")
    if wanted or not paper:
        for bench in suite:
            if not wanted or bench.name in wanted:
                yield bench, {}
    if paper:
        cases = paper_cases(torch.cuda.get_device_properties(0).multi_processor_count)
        unknown = paper - {case.kernel for case in cases}
        if unknown:
            parser.error(f"--paper: unknown kernel {sorted(unknown)[0]!r}")
        for case in cases:
            if case.kernel in paper:
                yield DeviceCase(case).bench(), case.environment


def kernels_main(argv) -> int:
    """Plan choice inside real kernels: every verified candidate of a kernel's conversion, and stock
    Triton, timed in the kernel itself rather than in a loop of its own.

        python benchmarks/plan_choice.py kernels --out benchmarks/results      # on a GPU machine

    ``plan_choice.py`` without ``kernels`` times a conversion alone, 1024 times in a loop; inside a
    kernel the same conversion sits between loads, reductions and arithmetic, and the fastest lowering can differ
    (``column_sum``'s accumulator conversion: our shuffles beat stock's shared memory by 31% alone,
    and lose 5% inside the kernel).  For every kernel of ``benchmarks/kernels.py`` with
    conversions, each distinct conversion is timed in the kernel with each of its verified
    candidates and left to Triton, one conversion at a time: ``candidate_for=KEY:K`` (or
    ``KEY:stock``) moves that conversion only, every other one planned as the plugin does by
    default.  Each row carries the kernel's own noise (stock timed twice) in ``noise``.

        python benchmarks/plan_choice.py kernels --paper template_attention    # the paper kernels' cases too

    ``--paper KERNELS`` adds every case of those kernels of ``benchmarks/paper_kernels.py`` (each
    shape its own kernel, under its own environment: ``DISABLE_MMA_V3`` for the mma v2 gemm); with
    ``--only`` unset and ``--paper`` given, only the paper cases run.

    Writes kernel_choice.json in plan_choice.json's row format (a row per conversion, its candidates'
    times and instruction mixes, stock's time), which ``plan_choice.py --write-choices`` reads like
    its own: list it last in ``--from``, and its rows decide their conversions by the in-kernel rule
    (``_kernel_verdict`` above: all kernels that have the conversion judged together, an
    option must gain beyond the noise somewhere and lose nowhere, stock preferred within the
    noise), replacing the isolated entry for that conversion.  And kernel_choice.md.
    """
    parser = argparse.ArgumentParser(prog="plan_choice.py kernels", description=kernels_main.__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument("--rounds", type=int, default=5, help="times each mode is timed, order rotated (default 5)")
    parser.add_argument("--paper", default="", help="comma-separated kernels of benchmarks/paper_kernels.py "
                                                    "(int4_gemm, mma_v2_gemm, streamk_gemm, layer_norm, template_attention)")
    parser.add_argument("--stem", default="kernel_choice", help="file names of the results (default kernel_choice)")
    args = parser.parse_args(argv)
    require_package()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import torch
    import triton
    from paper_kernels import environment

    wanted = set(filter(None, args.only.split(",")))
    paper = set(filter(None, args.paper.split(",")))
    cache_root = tempfile.mkdtemp(prefix="ll_kernel_choice_")
    rows, skipped = [], []
    for bench, variables in benches(wanted, paper, parser):
        with environment(variables):
            found = conversions_of(launched_ttgir(bench), bench.name)
            if not found:
                skipped.append((bench.name, "0 distinct conversions"))
                continue
            measured = time_conversions(bench, found, cache_root, args.rounds)
        if not measured:
            skipped.append((bench.name, "no verified candidate"))
        rows += measured

    machine = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, args.stem + ".json"), "w") as f:
        json.dump({"environment": machine, "cases": rows, "skipped": skipped}, f, indent=1)
    lines = ["# Plan choice inside real kernels", "",
             f"GPU: {machine['gpu']}; triton {machine['triton']}; torch {machine['torch']}; "
             f"the median over {args.rounds} rounds (modes in a rotated order, one set of tensors for all) of "
             "`triton.testing.do_bench` medians, each kernel compiled with an empty cache.", "",
             f"Produced by `python benchmarks/plan_choice.py kernels {' '.join(argv)}`.", "",
             "One row per distinct conversion of a kernel, the kernel's other conversions planned as by default; "
             "\"stock\" is that conversion left to Triton, \"stock again\" the whole kernel's stock timed twice.", "",
             "| kernel | stock ms | stock again | candidates (method: ms) | model's pick / fastest | fastest | all correct |",
             "|---|---:|---:|---|---:|---|---|"]
    for row in rows:
        times = [c.get("ms") for c in row["candidates"]]
        stock = row["stock"].get("ms")
        options = [(t, str(k)) for k, t in enumerate(times) if t] + ([(stock, "stock")] if stock else [])
        fastest = min(options)
        correct = all(r.get("correct") for r in [row["stock"], row["stock_again"]] + row["candidates"])
        cands = ", ".join(f"{c['method']}: {c.get('ms', float('nan')):.4f}" for c in row["candidates"])
        kernel_stock = row.get("kernel_stock", row["stock"]).get("ms")
        lines.append(f"| {row['case']} | {stock:.4f} | {row['stock_again'].get('ms', float('nan')) / kernel_stock:.3f} | "
                     f"{cands} | {times[0] / fastest[0]:.3f} | {fastest[1]} | {correct} |")
    lines += ["", "Kernels not measured here: " + "; ".join(f"{n} ({why})" for n, why in skipped)]
    with open(os.path.join(args.out, args.stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0



# --------------------------------------------------------------------------- the skeleton's four parts

def options(parser) -> None:
    parser.add_argument("--random", type=int, default=110, help="how many random conversions (default 110)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases")
    parser.add_argument("--match", nargs="+", default=[], metavar="TEXT",
                        help="only the cases whose name contains one of these texts")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--write-choices", default="", metavar="TABLE",
                        help="write the measured-choice table from the results given by --from, and stop")
    parser.add_argument("--from", dest="results", default="", metavar="JSON", help="a plan_choice.json")
    parser.add_argument("--same-ptx", action="store_true",
                        help="no GPU: for the conversions of --from whose choice was more than 5%% slower than "
                             "stock, compile both again and say whether their PTX is the same, and stop")
    parser.add_argument("--fresh", type=int, nargs="*", default=None, metavar="SEED",
                        help="conversions no table has seen, drawn from these seeds (plan_contexts.fresh_cases), "
                             "timed as a kernel sees them: stock and ours, round trips in a dependent chain, grid "
                             "full and one program per SM; prints the geomean, the worst case and the count above 1.05")
    parser.add_argument("--count", type=int, default=220, help="--fresh: conversions per seed")
    parser.add_argument("--registers", type=int, nargs=2, default=None, metavar=("LOW", "HIGH"),
                        help="--fresh: draw conversions whose larger layout holds more than LOW and at most HIGH "
                             "32-bit registers a thread (default 0 64)")
    parser.add_argument("--train", action="store_true", help="--fresh: time every candidate too (the model's fit)")
    parser.add_argument("--table", action="store_true", help="--fresh: also time the plugin with the measured table on")
    parser.add_argument("--corpus", action="store_true", help="--fresh: add the TTGIR corpus's conversions")
    parser.add_argument("--held-out-kernels", action="store_true",
                        help="--fresh: add Liger-Kernel's sm_90 conversions (never measured before)")
    parser.add_argument("--fla-kernels", action="store_true",
                        help="--fresh: add flash-linear-attention's sm_90 conversions (test/lit/corpus/fla: "
                             "no choice was fitted on them)")
    parser.add_argument("--first-pairs", action="store_true",
                        help="--fresh: add three pairs that lose only in a dependent chain (plan_contexts.first_pairs)")
    parser.add_argument("--replicated-round-trips", action="store_true",
                        help="--fresh: add the round-trip case of compile_time.py fuzz --replicated-round-trips")
    parser.add_argument("--structured", type=int, nargs="*", default=None, metavar="SEED",
                        help="--fresh: add large-register conversions (256 to 1,024 registers a thread) drawn from "
                             "these seeds as the compile-time fuzz draws them (plan_contexts.structured_cases)")
    parser.add_argument("--structured-count", type=int, default=12, help="--structured: conversions per seed")
    parser.add_argument("--independent", action="store_true",
                        help="--fresh: also conversions.py's harness (one direction, independent conversions)")
    parser.add_argument("--rep", type=int, default=20, help="--fresh: do_bench's rep (ms)")
    parser.add_argument("--stem", default="", help="--fresh: the result files' name")
    parser.add_argument("--no-pick", action="store_true", help="--fresh: leave out the ungated pick (ours vs stock only)")
    parser.add_argument("--shared-asm", action="store_true",
                        help="--fresh: also time ours_asm, ours with inline-PTX shared accesses (the study switch emit_nvidia.SHARED_ACCESS_FORM)")
    parser.add_argument("--in-place", action="store_true",
                        help="--fresh: also time ours_in_place, ours with its one-round shared-memory plans built in "
                             "Triton's module and its others spliced as text (LINEAR_LAYOUTS_IN_PLACE=1, the default)")
    parser.add_argument("--text", action="store_true",
                        help="--fresh: also time ours_text, ours with every island spliced as text (LINEAR_LAYOUTS_IN_PLACE=0)")
    parser.add_argument("--round-modes", action="store_true",
                        help="--fresh: also time ours_stock_rounds (shared plans in Triton's rounds only, "
                             "LINEAR_LAYOUTS_ROUND_SCRATCH=0) and ours_wide_rounds (fewer rounds through buffers "
                             "of up to 64 KB)")
    parser.add_argument("--forward", action="store_true",
                        help="--fresh: also time ours_forward, the default's choice for the case's own direction "
                             "with stock's lowering of the return trip (what a kernel converting A -> B runs)")
    parser.add_argument("--every-pair", action="store_true",
                        help="--fresh: also time every pair of the forward and return trip's verified candidates "
                             "(stock's lowering of either direction among them): the best any choice among "
                             "today's plans reaches (plan_contexts.best_of_every_pair)")
    parser.add_argument("--ptxas-usage", action="store_true",
                        help="--fresh: record what ptxas -v says of every compile (registers, spill bytes; "
                             "with --dry-run, on a CPU)")
    parser.add_argument("--deadline", type=float, default=None, metavar="SECONDS",
                        help="--fresh: time no further conversion after this many seconds; report what was timed")


def chosen_cases(args, env) -> list:
    """The conversions whose candidates are timed (``--fresh`` draws its own; ``--write-choices``
    and ``--same-ptx`` read ``--from``'s)."""
    if args.write_choices or args.same_ptx:
        unread = [path for path in args.results.split(",") if not os.path.isfile(path)] if args.results else ["(none given)"]
        if unread:
            raise skeleton.UsageError(f"--from: no such results file {unread[0]}")
    if args.fresh is not None or args.write_choices or args.same_ptx:
        return []
    cases = corpus_cases() + random_cases(args.random, args.seed)
    if args.match:
        cases = [c for c in cases if any(text in c.name for text in args.match)]
    if args.limit:
        cases = cases[:args.limit]
    return cases


def run(args, env, cases) -> dict | int:
    """Every verified candidate of every case (and stock) compiled and, unless ``--dry-run``, timed;
    the other modes run whole here (their exit status)."""
    if args.fresh is not None:
        from harness.plan_contexts import main_fresh
        return main_fresh(args, args.argv)
    if args.write_choices:
        return write_choices(args.results, args.write_choices)
    if args.same_ptx:
        return same_ptx(args.results, args.random)
    candidates = []
    from linear_layouts.dialect import LayoutError
    from linear_layouts.lowering.planner import UnsupportedElementWidth

    for case in cases:
        try:
            candidates.append(verified_candidates(case))
        except (LayoutError, UnsupportedElementWidth) as e:  # a case the planner cannot take is reported
            print(f"{case.name}: no candidates ({type(e).__name__}: {e})")
            candidates.append([])
    overruled = [overruling_choice(case) for case in cases]
    print(f"{len(cases)} cases, {sum(map(len, candidates))} candidates, "
          f"{sum(1 for o in overruled if o)} overruled by recorded measurements", flush=True)
    directory = tempfile.mkdtemp(prefix="ll_choice_")
    jobs = [(i, c, rank, directory) for i, c in enumerate(cases) for rank in ranks_of(i, candidates, overruled)]
    compiled = {}
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for index, rank, result in pool.map(compile_candidate, jobs, chunksize=4):
            compiled[(index, rank)] = result
    bad = [(cases[i].name, r, res.get("error")) for (i, r), res in compiled.items() if not res["ok"]]
    print(f"compiled {len(jobs)} kernels in {time.perf_counter() - start:.1f}s; {len(bad)} failed"
          + (f" (first: {bad[0]})" if bad else ""), flush=True)
    if args.dry_run:
        return 0 if not bad else 1
    rows, grid = time_on_gpu(cases, candidates, overruled, compiled, directory)
    return {"rows": rows, "grid": grid}


def summary(args, env, cases, results) -> int:
    if isinstance(results, int):
        return results
    import torch
    import triton

    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                   "python": sys.version.split()[0], "seed": args.seed}
    environment["grid"] = results["grid"]
    write_report(results["rows"], args.out, environment, args.argv)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["fit"]:           # the choice model from --train runs (CPU): harness/fit_choice.py
        require_package()
        from harness import fit_choice
        return fit_choice.main(argv[1:])
    if argv[:1] == ["kernels"]:       # every candidate timed inside the suite's kernels (GPU)
        return kernels_main(argv[1:])
    if argv[:1] == ["calibrate"]:     # the cost model's constants (GPU): harness/calibrate.py
        from harness import calibrate
        return calibrate.main(argv[1:])
    if argv[:1] == ["stock-shared"]:  # stock's shared code against its PTX (CPU): harness/stock_shared_oracle.py
        from harness import stock_shared_oracle
        return stock_shared_oracle.main(argv[1:])
    return skeleton.main("plan_choice", __doc__, argv, options=options, cases=chosen_cases, run=run, summary=summary,
                         seed=12, dry_run="plan and compile only (no GPU needed)",
                         no_gpu=lambda args: bool(args.write_choices or args.same_ptx))


if __name__ == "__main__":
    sys.exit(main())
