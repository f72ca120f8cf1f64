"""GPU fuzz: random conversions of our own making, ours vs stock Triton, bit for bit.

    python benchmarks/fuzz_gpu.py --cases 3000 --seed 1 --out benchmarks/results   # on an H100/H200
    python benchmarks/fuzz_gpu.py --cases 50 --dry-run --out /tmp/dry              # CPU: compile only
    python benchmarks/fuzz_gpu.py --cases 3000 --seed 101 --in-place --out DIR     # ours built in place

The cases come from ``tools/fuzz/conversion_fuzz.py`` (``ll-fuzz``'s generator, the CUDA target of
the GPU): random ``#ttg.linear`` layouts with broadcast bases, tiny tensors, blocked tiles larger
than the tensor, slices of blocked and MMA layouts, MMA accumulators, dot operands and pairs
from real kernels; every element type (i1, i8, i16, i32, i64, fp8, f16, bf16, f32, pointers)
and 1, 2, 4 or 8 warps.  Each is the kernel ``load X in A; convert to B; store Y in B``,
compiled with our islands (``ll-lower-conversions``, every island simulated before use,
``LINEAR_LAYOUTS_STRICT_CHECK=1``) and with stock Triton, in worker processes, then launched
on random bits with Y poisoned (all ones).

Pass: ours writes X, bit for bit (the value a load and a store keep; ``i1`` inputs are 0 or 1).
Stock's output is compared too: where stock writes something else, the case is listed as a
stock error (``lowering/choosing/stock_hazards.py`` names the kinds found so far).  A case stock cannot compile is skipped and counted; ours failing to
compile where stock compiles is a failure.  Writes ``fuzz_gpu.json`` and ``fuzz_gpu.md`` to
``--out`` with the GPU, the versions and the seed; exit status 0 iff no failure.

History: the first version of this check (an H100, triton 3.6.0, before the emitted-code
simulator) found 14% of such conversions silently wrong and 8.5% failing to compile, every one
with a layout that replicates data over lanes or warps.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import asdict

from harness import skeleton  # noqa: E402
from harness.common import require_package  # noqa: E402

require_package()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

from linear_layouts.passes.barriers.guard_barriers import guard_pruning  # noqa: E402
os.environ.setdefault("LINEAR_LAYOUTS_STRICT_CHECK", "1")
# The subject is our islands: the stock gate (lowering/choosing/fitted_model.py) would leave most of them to
# Triton on the model's word, and the fuzz would test stock against stock.
os.environ.setdefault("LINEAR_LAYOUTS_STOCK_GATE", "off")

# TTGIR element type -> (torch dtype of the buffers, integer dtype of the same width for the bits)
TORCH_TYPES = {"i1": ("int8", "int8"), "i8": ("int8", "int8"), "i16": ("int16", "int16"), "i32": ("int32", "int32"),
               "i64": ("int64", "int64"), "f8E4M3FN": ("int8", "int8"), "f8E5M2": ("int8", "int8"),
               "f16": ("int16", "int16"), "bf16": ("int16", "int16"), "f32": ("int32", "int32"),
               "!tt.ptr<f32>": ("int64", "int64")}


def compile_case(job):
    """Worker: compile stock and ours (each in a forked child: Triton may abort on a case)."""
    index, case, arch, directory = job
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir
    from linear_layouts.passes.ir.sandbox import run_forked
    from linear_layouts.passes.drop_in.in_place import in_place_enabled, in_place_module_text
    from linear_layouts.passes.lower_conversions import lower_text
    text = single_convert_ttgir(case.shape, case.element_type, case.src, case.dst, case.num_warps, f"sm_{arch}",
                                name="k")
    out = {"index": index}

    def compile_to(path: str, module_text: str) -> None:
        with open(path, "w") as f:
            f.write(module_text)

        def child() -> str:
            with guard_pruning():   # as linear_layouts.enable() compiles: redundant guards dropped
                triton.compile(path, target=GPUTarget("cuda", arch, 32))
            return "ok"
        run_forked(child)

    for variant in ("stock", "ours"):
        path = os.path.join(directory, f"{index}-{variant}.ttgir")
        try:
            module_text = text
            if variant == "ours" and in_place_enabled():
                module_text, built = in_place_module_text(text, f"case{index}")
                out["lowered"] = built > 0
                out["method"] = "shared, in place" if built else "-"
                out["reason"] = "" if built else "not a one-round shared-memory plan: nothing built in place"
            elif variant == "ours":
                module_text, outcomes = lower_text(text, filename=f"case{index}")
                out["lowered"] = outcomes[0].lowered
                out["method"] = outcomes[0].method or "-"
                out["reason"] = outcomes[0].reason
            compile_to(path, module_text)
            out[variant] = {"ok": True, "path": path}
        except Exception as error:  # noqa: BLE001 - ours or Triton's, any failure is recorded per case
            lines = [line for line in str(error).strip().splitlines() if line.strip()]
            errors = [line for line in lines if "error" in line.lower()] or lines or [type(error).__name__]
            out[variant] = {"ok": False, "error": errors[0][:300]}
        if variant == "stock" and not out["stock"]["ok"]:
            break  # not ours to judge
    return out


def compile_all(cases, arch: int, jobs: int):
    """Every case compiled both ways in spawned workers (``gpu_conversions.compile_all``; the
    workers inherit ``LINEAR_LAYOUTS_STRICT_CHECK`` from this process's environment)."""
    from gpu_conversions import compile_all as compile_in_pool
    return compile_in_pool(cases, arch, jobs, worker=compile_case, progress_every=250)


def run_on_gpu(cases, compiled, arch: int) -> None:
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    torch.manual_seed(0)
    for case, result in zip(cases, compiled):
        if not (result.get("stock", {}).get("ok") and result.get("ours", {}).get("ok")):
            continue
        storage, bits_name = TORCH_TYPES[case.element_type]
        int_dtype = getattr(torch, bits_name)
        numel = 1
        for s in case.shape:
            numel *= s
        if case.element_type == "i1":
            x = torch.randint(0, 2, (numel,), dtype=int_dtype, device="cuda")
        else:
            info = torch.iinfo(int_dtype)
            x = torch.randint(info.min, info.max, (numel,), dtype=torch.int64, device="cuda").to(int_dtype)
        outputs = {}
        for variant in ("stock", "ours"):
            try:
                with guard_pruning():   # as linear_layouts.enable() compiles: redundant guards dropped
                    kernel = triton.compile(result[variant]["path"], target=GPUTarget("cuda", arch, 32))
                y = torch.full((numel,), -1, dtype=int_dtype, device="cuda")
                kernel[(1, 1, 1)](x, y)
                torch.cuda.synchronize()
                outputs[variant] = y
            except Exception as error:  # noqa: BLE001 - the GPU boundary (Triton, CUDA): recorded per case
                result[variant]["launch_error"] = f"{type(error).__name__}: {str(error)[:300]}"
        if len(outputs) < 2:
            result["verdict"] = "launch-error"
            continue
        stock_exact = bool(torch.equal(outputs["stock"], x))
        ours_exact = bool(torch.equal(outputs["ours"], x))
        same = bool(torch.equal(outputs["ours"], outputs["stock"]))
        result["stock_equals_x"] = stock_exact
        result["ours_equals_x"] = ours_exact
        # Ours is judged by the value it must hold (X: a load and a store keep every bit; i1
        # inputs are 0 or 1), not by stock's: stock Triton is wrong on some conversions
        # (lowering/choosing/stock_hazards.py), and there ours differs from stock and is right.
        result["verdict"] = "pass" if ours_exact or (same and case.element_type == "i1") else "wrong"
        if not same:
            wrong = (outputs["ours"] != outputs["stock"]).nonzero().flatten()
            result["wrong_elements"] = int(wrong.numel())
            result["first_wrong_index"] = int(wrong[0])


def write_reports(out_dir: str, seed: int, cases, compiled, header: dict, dry_run: bool) -> int:
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for index, (case, r) in enumerate(zip(cases, compiled)):
        stock_ok, ours_ok = r.get("stock", {}).get("ok"), r.get("ours", {}).get("ok")
        if not stock_ok:
            verdict = "skipped (stock does not compile)"
        elif not ours_ok:
            verdict = "ours fails to compile"
        elif dry_run:
            verdict = "compiled"
        else:
            verdict = r.get("verdict", "not run")
        rows.append({"index": index, **asdict(case), "verdict": verdict, "lowered": r.get("lowered", False),
                     "method": r.get("method", "-"), "left_reason": r.get("reason", ""),
                     "stock_error": r.get("stock", {}).get("error", ""), "ours_error": r.get("ours", {}).get("error", ""),
                     "stock_equals_x": r.get("stock_equals_x"), "ours_equals_x": r.get("ours_equals_x"),
                     "wrong_elements": r.get("wrong_elements")})
    bad_verdicts = ("ours fails to compile", "wrong", "launch-error", "not run")
    failures = [x for x in rows if x["verdict"] in bad_verdicts]
    checked = [x for x in rows if x["verdict"] in ("pass", "wrong", "compiled")]
    skipped = [x for x in rows if x["verdict"].startswith("skipped")]
    stock_not_x = [x for x in checked if x["stock_equals_x"] is False and x["element_type"] != "i1"]
    summary = {"cases": len(rows), "checked": len(checked), "failures": len(failures), "skipped": len(skipped),
               "lowered_by_us": sum(x["lowered"] for x in checked), "stock_not_equal_to_x": len(stock_not_x),
               "dry_run": dry_run}
    with open(os.path.join(out_dir, "fuzz_gpu.json"), "w") as f:
        json.dump({"header": header, "seed": seed, "summary": summary, "cases": rows}, f, indent=0)
    lines = ["# GPU fuzz: random conversions, ours vs stock Triton, bit for bit", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()] + [f"- seed: {seed} (case i = "
                                                            f"`conversion_fuzz.case_at({seed}, i, ('sm_90',))`)", ""]
    verdict = "PASS" if not failures else "FAIL"
    lines += [f"## Verdict: {verdict} - {len(checked)} cases run, {len(failures)} failures "
              f"({summary['lowered_by_us']} lowered by us, the rest left to Triton with a reason); "
              f"{len(skipped)} skipped because stock Triton does not compile them; stock output != X in "
              f"{len(stock_not_x)} (i1 excluded)." + (" **Dry run: compiled only.**" if dry_run else ""), ""]
    for label, key in (("kind", "kind"), ("element type", "element_type"), ("warps", "num_warps")):
        groups = defaultdict(Counter)
        for x in rows:
            groups[x[key]][x["verdict"].split(" ")[0]] += 1
        verdicts = sorted({v for g in groups.values() for v in g})
        lines += [f"| {label} | " + " | ".join(verdicts) + " |", "|---" * (len(verdicts) + 1) + "|"]
        for k in sorted(groups, key=str):
            lines.append(f"| {k} | " + " | ".join(str(groups[k][v]) for v in verdicts) + " |")
        lines.append("")
    methods = Counter(x["method"] for x in checked)
    lines += ["Plans of the cases run: " + ", ".join(f"{m}={n}" for m, n in sorted(methods.items())), ""]
    fewer = fewer_rounds_count(checked)
    if fewer:
        lines += [f"Of the shared-memory plans run, {fewer} do Triton's rounds in fewer rounds through a larger "
                  f"buffer (lowering.planner.with_fewer_rounds; counted again by planning each on this host).", ""]
    stock_wrong = [x for x in checked if x["stock_equals_x"] is False and x.get("ours_equals_x")]
    if stock_wrong:
        lines += ["## Stock wrong, ours right (stock Triton's output is not X; ours is)", ""]
        lines += [f"- case {x['index']} ({x['kind']}, {x['element_type']}, {tuple(x['shape'])}, {x['num_warps']} warps): "
                  f"`{x['src']}` -> `{x['dst']}`" for x in stock_wrong[:20]] + [""]
    if failures:
        lines += ["## Failures (reproduce with the seed and index)", ""]
        for x in failures[:60]:
            why = x["ours_error"] or (f"{x['wrong_elements']} elements differ from stock" if x["wrong_elements"] else "")
            lines.append(f"- case {x['index']} ({x['kind']}, {x['element_type']}, {x['shape']}, {x['num_warps']} warps): "
                         f"{x['verdict']}: {why}\n  - src `{x['src']}`\n  - dst `{x['dst']}`")
    left = Counter(x["left_reason"][:100] for x in checked if not x["lowered"])
    if left:
        lines += ["", "## Left to Triton", ""] + [f"- {n} x {reason}" for reason, n in left.most_common(10)]
    stock_errors = Counter(x["stock_error"][:120] for x in skipped)
    if stock_errors:
        lines += ["", "## Why stock Triton did not compile the skipped cases", ""] + \
            [f"- {n} x {reason}" for reason, n in stock_errors.most_common(8)]
    with open(os.path.join(out_dir, "fuzz_gpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(failures)


def fewer_rounds_count(rows) -> int:
    """How many of ``rows`` (report rows lowered by us with a shared-memory plan) the planner
    plans in fewer rounds than Triton's swizzle takes (``with_fewer_rounds`` changes the plan),
    as every stock gate off (the fuzz's setting) plans them."""
    from linear_layouts.dialect import to_linear_layout
    from linear_layouts.lowering.planner import plan_conversion, with_fewer_rounds
    count = 0
    for x in rows:
        if not (x["lowered"] and x["method"].startswith("shared")):
            continue
        bits = 64 if x["element_type"].startswith("!tt.ptr") else x["element_type"]
        plan = plan_conversion(to_linear_layout(x["src"], list(x["shape"])), to_linear_layout(x["dst"], list(x["shape"])),
                               bits, x["target"])
        count += bool(plan) and with_fewer_rounds(plan) is not plan
    return count


def _sm_90_only(major: int, minor: int) -> int:
    if major != 9:
        raise skeleton.NoGpu(f"this script compiles for sm_90; the GPU is sm_{major}{minor}")
    return 90


def options(parser) -> None:
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--in-place", action="store_true",
                        help="ours: the conversions built in place (passes/drop_in/in_place.py, LINEAR_LAYOUTS_IN_PLACE=1), "
                             "not spliced as islands")


def cases(args, env) -> list:
    from linear_layouts.passes.drop_in.in_place import IN_PLACE_VARIABLE
    from linear_layouts.tools.fuzz.conversion_fuzz import case_at
    # The compile workers inherit it: ours is the text route's island unless --in-place.
    os.environ[IN_PLACE_VARIABLE] = "1" if args.in_place else "0"
    if args.in_place:
        env.header["in_place"] = True
    print(f"fuzz_gpu: seed {args.seed}" + (", built in place" if args.in_place else ""), flush=True)
    return [case_at(args.seed, i, ("sm_90",)) for i in range(args.cases)]


def run(args, env, cases) -> list:
    return skeleton.compile_and_launch("fuzz_gpu", env, cases, args.jobs, compile_all, run_on_gpu)


def summary(args, env, cases, compiled) -> int:
    env.header["total_seconds"] = env.seconds()
    failures = write_reports(args.out, args.seed, cases, compiled, env.header, args.dry_run)
    print(f"fuzz_gpu: {len(cases)} cases, {failures} failures ({env.header['total_seconds']} s); "
          f"reports in {os.path.abspath(args.out)}/fuzz_gpu.md and .json")
    return 0 if failures == 0 else 1


def main(argv=None) -> int:
    return skeleton.main("fuzz_gpu", __doc__, argv, options=options, cases=cases, run=run, summary=summary,
                         gpu_arch=_sm_90_only, jobs=True, seed=1)


if __name__ == "__main__":
    sys.exit(main())
