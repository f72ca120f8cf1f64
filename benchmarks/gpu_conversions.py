"""GPU check of ll-lower-conversions: our islands vs stock Triton, bit for bit, on a real GPU.

    python benchmarks/gpu_conversions.py --out benchmarks/results          # on an H100/H200
    python benchmarks/gpu_conversions.py --out /tmp/dry --dry-run          # CPU: compile only

What it does (one process, about 3-6 minutes on a 16-core GPU machine):

1. builds >= 300 single-convert kernels (18 x 22 = 396 by default) (load X in layout A, ``ttg.convert_layout`` to B, store
   Y in B; X and Y row-major): layout pairs from a zoo (blocked layouts, NVIDIA mma v2/v3
   accumulators, random ``#ttg.linear`` permutations with broadcast) plus pairs that stay in a
   thread or a warp (register permutations, lane permutations, register/lane swaps), element types fp32, fp16,
   bf16, fp8 (e4m3), int8, int64, and 1, 4, 8 warps;
2. compiles every kernel twice - with our lowering (``ll-lower-conversions``) and with stock
   Triton - in a pool of worker processes, to cubin for the GPU's architecture;
3. launches both on random bits (Y poisoned with 0xFF bytes first) and checks that Y equals X
   bit for bit (the element at row-major index i must land at index i, whatever the layouts);
4. writes ``gpu_conversions.json`` (every case: layouts, plan, instruction mix of both PTX
   listings, scratch bytes, result) and ``gpu_conversions.md`` (summary) to ``--out``, with the
   GPU name and the Triton / torch versions.

The exit status is 0 when every kernel with our lowering is bit-exact, 1 otherwise.

It needs triton (3.6 - 3.9), torch, numpy and the installed ``linear_layouts`` (``harness/common.py``
says how to install it).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from collections import Counter, defaultdict

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


from harness import skeleton  # noqa: E402
from harness.common import require_package  # noqa: E402

require_package()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

from linear_layouts.passes.barriers.guard_barriers import guard_pruning  # noqa: E402

DTYPES = {  # name -> (TTGIR element type, torch dtype name, integer view for bit comparison)
    "fp32": ("f32", "float32", "int32"),
    "fp16": ("f16", "float16", "int16"),
    "bf16": ("bf16", "bfloat16", "int16"),
    "fp8e4m3": ("f8E4M3FN", "float8_e4m3fn", "int8"),
    "int8": ("i8", "int8", "int8"),
    "int64": ("i64", "int64", "int64"),
}
WARPS = (1, 4, 8)


# ------------------------------------------------------------------------------------ the zoo

def blocked(spt, tpw, wpc, order):
    return f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, order = {order}}}>"


def _warp_split(num_warps):
    return {1: ([1, 1], [1, 1]), 4: ([4, 1], [2, 2]), 8: ([8, 1], [4, 2])}[num_warps]


def layout_zoo(num_warps: int, arch: int, rng: random.Random, shape=(64, 64)) -> list[tuple[str, str]]:
    """(name, attribute) of layouts for a ``shape`` tensor on ``num_warps`` warps of 32 lanes."""
    from linear_layouts.tools.fuzz.testcases import random_linear_encoding
    tall, square = _warp_split(num_warps)
    wide = tall[::-1]
    zoo = [
        ("blocked-row-v4", blocked([1, 4], [4, 8], tall, [1, 0])),
        ("blocked-row-v8", blocked([1, 8], [8, 4], wide, [1, 0])),
        ("blocked-col-v4", blocked([4, 1], [8, 4], wide, [0, 1])),
        ("blocked-row-1", blocked([1, 1], [1, 32], square, [1, 0])),
        ("blocked-col-2", blocked([2, 1], [32, 1], square, [0, 1])),
        ("blocked-2x2", blocked([2, 2], [4, 8], tall, [1, 0])),
        ("mma-v2", f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {square}, instrShape = [16, 8]}}>"),
        ("mma-v2-tall", f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {tall}, instrShape = [16, 8]}}>"),
    ]
    if arch >= 90 and num_warps in (4, 8):
        zoo.append(("mma-v3", "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = "
                               f"{[num_warps, 1]}, instrShape = [16, 64, 16]}}>"))
    for i in range(3):
        zoo.append((f"linear-random-{i}", random_linear_encoding(rng, shape, num_warps, 32)))
    return zoo


def build_cases(arch: int, seed: int, pairs_per_group: int):
    """Every (dtype, warps) group gets ``pairs_per_group`` distinct ordered layout pairs."""
    from linear_layouts.tools.fuzz.testcases import related_linear_pairs, single_convert_ttgir
    rng = random.Random(seed)
    cases = []
    target = "sm_90" if arch >= 90 else "sm_80"
    for num_warps in WARPS:
        zoo = layout_zoo(num_warps, arch, rng)
        all_pairs = [(a, b) for a in zoo for b in zoo if a[0] != b[0]]
        for dtype, (element, _, _) in DTYPES.items():
            chosen = rng.sample(all_pairs, min(pairs_per_group, len(all_pairs)))
            # zoo pairs mostly cross warps (shared memory); add pairs inside threads and warps
            for i, (kind, src, dst) in enumerate(related_linear_pairs(rng, (64, 64), num_warps, 32)):
                chosen.append(((f"{kind}-{i}-a", src), (f"{kind}-{i}-b", dst)))
            for (src_name, src), (dst_name, dst) in chosen:
                shape = (64, 64)
                name = f"w{num_warps}-{dtype}-{src_name}-to-{dst_name}"
                text = single_convert_ttgir(shape, element, src, dst, num_warps, target, name="k")
                cases.append(dict(name=name, dtype=dtype, num_warps=num_warps, shape=list(shape), src_name=src_name,
                                  dst_name=dst_name, src=src, dst=dst, text=text))
    return cases


# ------------------------------------------------------------------------------ compile workers

def _worker_init(cache_dir: str) -> None:
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def _compile_path(text: str, arch: int, directory: str, name: str):
    import triton
    from triton.backends.compiler import GPUTarget
    path = os.path.join(directory, name + ".ttgir")
    with open(path, "w") as f:
        f.write(text)
    with guard_pruning():   # as linear_layouts.enable() compiles: redundant guards dropped
        return path, triton.compile(path, target=GPUTarget("cuda", arch, 32))


def compile_case(job):
    """Worker: lower with our pass (owning ``case["only"]``, default our defaults) and compile
    both variants; returns what the report needs."""
    index, case, arch, directory = job
    from linear_layouts.tools.fuzz.testcases import ptx_mix
    from linear_layouts.passes.lower_conversions import lower_text
    out = {"index": index}
    for variant in ("stock", "ours"):
        text = case["text"]
        try:
            if variant == "ours":
                text, outcomes = lower_text(case["text"], filename=case["name"], only=case.get("only", ""))
                # one op per kernel, or a local store and a local load: all of them must be ours
                out["lowered"] = bool(outcomes) and all(o.lowered for o in outcomes)
                out["method"] = "+".join(_plan_name(o) for o in outcomes)
                out["reason"] = "; ".join(o.reason for o in outcomes if o.reason)
                out["plan"] = "; ".join(_plan_text(o.plan) for o in outcomes)
            path, kernel = _compile_path(text, arch, directory, f"{index}-{variant}")
            out[variant] = {"path": path, "ok": True, "mix": dict(ptx_mix(kernel.asm["ptx"])),
                            "shared": int(kernel.metadata.shared)}
        except Exception as error:  # ours or Triton's, any failure is recorded per case
            out[variant] = {"ok": False, "error": f"{type(error).__name__}: {str(error)[-800:]}"}
    return out


def _plan_name(outcome) -> str:
    """The plan method (``shared``, ...), or for a local load the form of its loads (``matrix``)."""
    if outcome.plan is not None and hasattr(outcome.plan, "form"):
        return outcome.plan.form.name.lower()
    return outcome.method or "-"


def _plan_text(plan) -> str:
    from linear_layouts.lowering.describe import cost_text, describe_plan
    if plan is None:
        return ""
    if hasattr(plan, "buffer"):   # a local load or store: its accesses and their cost
        return cost_text(plan.cost, plan.target)
    return describe_plan(plan)


def compile_all(cases, arch: int, jobs: int, worker=None, progress_every: int = 50):
    """Run ``worker`` (default ``compile_case``) on every case in spawned processes; the worker
    gets ``(index, case, arch, directory)`` and returns a dict with ``"index"``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    worker = worker or compile_case
    directory = tempfile.mkdtemp(prefix="ll_gpu_conversions_")
    cache = os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(directory, "triton-cache"))
    # spawn, not fork: the parent may already hold a CUDA context
    context = multiprocessing.get_context("spawn")
    work = [(i, c, arch, directory) for i, c in enumerate(cases)]
    results = [None] * len(cases)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_init,
                             initargs=(cache,)) as pool:
        for done, r in enumerate(pool.map(worker, work, chunksize=4), 1):
            results[r["index"]] = r
            if done % progress_every == 0 or done == len(work):
                print(f"  compiled {done}/{len(work)}", flush=True)
    return results


# ------------------------------------------------------------------------------------ running

def run_on_gpu(cases, compiled, arch: int) -> None:
    """Launch both variants of every case; fills ``result["stock"/"ours"]["bit_exact"]``."""
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    torch.manual_seed(0)
    for case, result in zip(cases, compiled):
        _, torch_name, int_name = DTYPES[case["dtype"]]
        dtype, int_dtype = getattr(torch, torch_name), getattr(torch, int_name)
        numel = case["shape"][0] * case["shape"][1]
        info = torch.iinfo(int_dtype)
        bits = torch.randint(info.min, info.max, (numel,), dtype=torch.int64, device="cuda").to(int_dtype)
        x = bits.view(dtype)
        for variant in ("stock", "ours"):
            entry = result.get(variant, {})
            if not entry.get("ok"):
                continue
            try:
                # the cache written by the workers makes this a load, not a compile
                with guard_pruning():   # as linear_layouts.enable() compiles: redundant guards dropped
                    kernel = triton.compile(entry["path"], target=GPUTarget("cuda", arch, 32))
                y = torch.full((numel,), -1, dtype=int_dtype, device="cuda").view(dtype)  # poison: all ones
                kernel[(1, 1, 1)](x, y)
                torch.cuda.synchronize()
                same = torch.equal(y.view(int_dtype), x.view(int_dtype))
                entry["bit_exact"] = bool(same)
                if not same:
                    wrong = (y.view(int_dtype) != x.view(int_dtype)).nonzero().flatten()
                    entry["wrong_elements"] = int(wrong.numel())
                    entry["first_wrong_index"] = int(wrong[0])
            except Exception as error:  # the GPU boundary (Triton, CUDA): recorded per case
                entry["bit_exact"] = False
                entry["launch_error"] = f"{type(error).__name__}: {str(error)[-500:]}"


# ------------------------------------------------------------------------------------ reports

def _mix_text(mix: dict) -> str:
    keys = ("shfl", "ldmatrix", "stmatrix", "st.shared", "ld.shared", "bar.")
    items = sorted((k, v) for k, v in mix.items() if k.startswith(keys))
    return ", ".join(f"{k}={v}" for k, v in items) or "(no data movement)"


def group_table(rows, ours_bad, stock_bad) -> list[str]:
    """Markdown table: per (dtype, warps), cases, how many we lowered, failures of each side."""
    groups = defaultdict(lambda: [0, 0, 0, 0])
    for x in rows:
        g = groups[(x["dtype"], x["num_warps"])]
        g[0] += 1
        g[1] += x["lowered"]
        g[2] += x in ours_bad
        g[3] += x in stock_bad
    lines = ["| dtype | warps | cases | lowered by us | ours failing | stock failing |", "|---|---|---|---|---|---|"]
    for (dtype, warps), (n, low, bad, sbad) in sorted(groups.items()):
        lines.append(f"| {dtype} | {warps} | {n} | {low} | {bad} | {sbad} |")
    return lines


def failures_and_left(rows, ours_bad, stock_bad, json_name: str, plan_key: str) -> list[str]:
    """Markdown: the first failures of each side, and why cases were left to Triton."""
    lines = []
    if ours_bad or stock_bad:
        lines += ["", f"## Failures (details in {json_name})", ""]
        for label, bad in (("ours", ours_bad), ("stock", stock_bad)):
            for x in bad[:40]:
                e = x[label]
                why = e.get("error") or e.get("launch_error") or \
                    f"{e.get('wrong_elements')} wrong elements, first at index {e.get('first_wrong_index')}"
                lines.append(f"- {label}: {x['name']} (plan {x[plan_key]}): {why}")
    left = Counter(x["left_reason"] for x in rows if not x["lowered"])
    if left:
        lines += ["", "## Left to Triton", ""] + [f"- {n} x {reason}" for reason, n in left.most_common()]
    return lines


def write_reports(out_dir: str, cases, compiled, header: dict, dry_run: bool) -> tuple[int, int]:
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for case, r in zip(cases, compiled):
        rows.append({k: v for k, v in case.items() if k != "text"} | {
            "method": r.get("method", "-"), "lowered": r.get("lowered", False), "left_reason": r.get("reason", ""),
            "plan": r.get("plan", ""), "stock": {k: v for k, v in r.get("stock", {}).items() if k != "path"},
            "ours": {k: v for k, v in r.get("ours", {}).items() if k != "path"}})
    ours_bad = [x for x in rows if not x["ours"].get("ok") or (not dry_run and not x["ours"].get("bit_exact"))]
    stock_bad = [x for x in rows if not x["stock"].get("ok") or (not dry_run and not x["stock"].get("bit_exact"))]
    summary = {
        "cases": len(rows), "lowered_by_us": sum(x["lowered"] for x in rows),
        "left_to_triton": sum(not x["lowered"] for x in rows),
        "ours_failures": len(ours_bad), "stock_failures": len(stock_bad), "dry_run": dry_run,
        "methods": dict(Counter(x["method"] for x in rows)),
    }
    with open(os.path.join(out_dir, "gpu_conversions.json"), "w") as f:
        json.dump({"header": header, "summary": summary, "cases": rows}, f, indent=1)

    lines = ["# ll-lower-conversions on the GPU: bit-exact check against stock Triton", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()]
    lines += ["", "Each case: a 64x64 kernel `load X (layout A) -> ttg.convert_layout -> store Y (layout B)`, "
              "compiled with our lowering and with stock Triton, launched on random bits with Y "
              "poisoned (all ones); pass = Y equals X bit for bit." + (" **Dry run: compiled only, nothing "
                                                                         "launched.**" if dry_run else ""), ""]
    verdict = "PASS" if not ours_bad else "FAIL"
    lines += [f"## Verdict: {verdict} - {len(rows) - len(ours_bad)}/{len(rows)} cases correct with our lowering "
              f"({summary['lowered_by_us']} lowered by us, {summary['left_to_triton']} left to Triton); "
              f"stock Triton: {len(rows) - len(stock_bad)}/{len(rows)}", ""]
    lines += group_table(rows, ours_bad, stock_bad)
    by_method = Counter(x["method"] for x in rows)
    lines += ["", "Plans: " + ", ".join(f"{m}={n}" for m, n in sorted(by_method.items())), ""]
    lines += ["## Instruction mix, ours vs stock (first case of each plan method and dtype)", "",
              "| case | plan | ours (PTX) | stock (PTX) | scratch ours / stock |", "|---|---|---|---|---|"]
    seen = set()
    for x in rows:
        key = (x["method"], x["dtype"])
        if key in seen or not x["ours"].get("ok") or not x["stock"].get("ok"):
            continue
        seen.add(key)
        lines.append(f"| {x['name']} | {x['method']} | {_mix_text(x['ours']['mix'])} | "
                     f"{_mix_text(x['stock']['mix'])} | {x['ours']['shared']} / {x['stock']['shared']} |")
    lines += failures_and_left(rows, ours_bad, stock_bad, "gpu_conversions.json", "method")
    with open(os.path.join(out_dir, "gpu_conversions.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(ours_bad), len(stock_bad)


def options(parser) -> None:
    parser.add_argument("--arch", type=int, default=None, help="80 or 90 (default: the GPU's; 90 for --dry-run)")
    parser.add_argument("--pairs", type=int, default=18, help="zoo layout pairs per (dtype, warps) group, plus 4 intra-warp pairs (default 18: 396 cases)")


def cases(args, env) -> list:
    return build_cases(env.arch, args.seed, args.pairs)


def run(args, env, cases) -> list:
    return skeleton.compile_and_launch("gpu_conversions", env, cases, args.jobs, compile_all, run_on_gpu)


def summary(args, env, cases, compiled) -> int:
    env.header["total_seconds"] = env.seconds()
    ours_bad, stock_bad = write_reports(args.out, cases, compiled, env.header, args.dry_run)
    print(f"gpu_conversions: {len(cases)} cases, ours failing {ours_bad}, stock failing {stock_bad} "
          f"({env.header['total_seconds']} s); reports in {os.path.abspath(args.out)}/gpu_conversions.md and .json")
    return 0 if ours_bad == 0 else 1


def main(argv=None) -> int:
    return skeleton.main("gpu_conversions", __doc__, argv, options=options, cases=cases, run=run, summary=summary,
                         gpu_arch=lambda major, minor: 90 if major >= 9 else 80, jobs=True, seed=2026,
                         dry_run="compile only (no GPU needed); --arch picks the target",
                         out_help="directory for gpu_conversions.json / .md")


if __name__ == "__main__":
    sys.exit(main())
