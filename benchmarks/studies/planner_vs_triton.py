"""Our conversion plans vs stock Triton's lowering, on single-convert kernels (CPU only).

For each case (source layout, destination layout, shape, element type, warps, target) we

* build a TTGIR module that loads a tensor in the source layout, converts it, and stores it in
  the destination layout, and ``triton.compile`` it (in a subprocess: bad input aborts Triton)
  for cuda:80 / cuda:90; from the PTX we count ``shfl.sync``, shared-memory instructions
  (``st.shared``/``ld.shared`` by width, ``stmatrix``/``ldmatrix``), ``bar.sync``/``bar.warp.sync``
  and ``selp``/``prmt``, and read the scratch bytes from ``metadata.shared``;
* plan the same conversion with ``lowering.planner.plan_conversion`` and read the cost model.

    python benchmarks/studies/planner_vs_triton.py [--random 40 --seed 1] [--out benchmarks/results/planner_vs_triton.md]

Triton's bank conflicts are not observable without a GPU profiler; ours are exact (cost model).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.describe import instruction_counts
from linear_layouts.lowering.plan import Unsupported
from linear_layouts.lowering.planner import plan_conversion

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")   # benchmarks/results

COMPILE = r"""
import json, re, sys, warnings
warnings.filterwarnings("ignore")
import triton
from triton.backends.compiler import GPUTarget
k = triton.compile(sys.argv[1], target=GPUTarget("cuda", int(sys.argv[2]), 32))
ptx = k.asm["ptx"]
ops = {}
for line in ptx.splitlines():
    line = line.strip()
    m = re.match(r"(?:@!?%p\d+\s+)?([a-z][a-z0-9_.:]*)", line)
    if not m:
        continue
    op = m.group(1)
    for key in ("shfl.sync", "st.shared", "ld.shared", "stmatrix", "ldmatrix", "bar.sync", "bar.warp.sync",
                "barrier.cluster.wait", "selp", "prmt"):
        if op.startswith(key):
            name = "barrier.cluster" if key == "barrier.cluster.wait" else key
            if key in ("st.shared", "ld.shared"):
                w = re.search(r"\.v(\d)", op)
                b = re.search(r"\.[bfu](\d+)", op)
                name = f"{key}.v{w.group(1) if w else 1}.b{b.group(1) if b else '?'}"
            if key in ("ldmatrix", "stmatrix"):
                x = re.search(r"\.x(\d)", op)
                name = f"{key}{'.trans' if '.trans' in op else ''}.x{x.group(1) if x else '?'}"
            ops[name] = ops.get(name, 0) + 1
print(json.dumps({"shared": k.metadata.shared, "ops": ops}))
"""

ELEMENT = {"f32": 32, "f16": 16, "i8": 8, "i64": 64, "i1": 1}
M80, M90 = 80, 90


def blocked(spt, tpw, wpc, order):
    f = lambda xs: "[" + ", ".join(map(str, xs)) + "]"  # noqa: E731
    return (f"#ttg.blocked<{{sizePerThread = {f(spt)}, threadsPerWarp = {f(tpw)}, warpsPerCTA = {f(wpc)}, "
            f"order = {f(order)}}}>")


MMA2_4 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"
MMA2_22 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
MMA3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
ROWS = ("#ttg.linear<{register = [[1, 0], [2, 0], [4, 0], [8, 0]], lane = [[0, 1], [0, 2], [0, 4], [0, 8], "
        "[0, 16]], warp = [], block = []}>")
COLUMN_PAIRS = ("#ttg.linear<{register = [[0, 2], [0, 4], [0, 8], [0, 16]], lane = [[1, 0], [2, 0], [4, 0], "
                "[8, 0], [0, 1]], warp = [], block = []}>")

# (name, source, destination, shape, element type, warps, sm)
CASES = [
    ("blocked[2]->blocked[1] 64", blocked([2], [32], [1], [0]), blocked([1], [32], [1], [0]), [64], "f32", 1, M90),
    ("blocked[2]->blocked[1] 64 i64", blocked([2], [32], [1], [0]), blocked([1], [32], [1], [0]), [64], "i64", 1, M90),
    ("blocked[4]->blocked[1] 128 i8", blocked([4], [32], [1], [0]), blocked([1], [32], [1], [0]), [128], "i8", 1, M90),
    ("blocked[4]->blocked[1] 128 f16", blocked([4], [32], [1], [0]), blocked([1], [32], [1], [0]), [128], "f16", 1, M90),
    ("32x32 transpose, 1 warp", blocked([1, 4], [8, 4], [1, 1], [1, 0]), blocked([4, 1], [4, 8], [1, 1], [0, 1]),
     [32, 32], "f32", 1, M90),
    ("App. C 16x32 rows->column pairs", ROWS, COLUMN_PAIRS, [16, 32], "f32", 1, M90),
    ("64x64 transpose f16, 4 warps", blocked([1, 8], [4, 8], [4, 1], [1, 0]), blocked([8, 1], [8, 4], [1, 4], [0, 1]),
     [64, 64], "f16", 4, M90),
    ("64x64 warps [4,1]->[1,4] f32", blocked([1, 4], [8, 4], [4, 1], [1, 0]), blocked([1, 4], [8, 4], [1, 4], [1, 0]),
     [64, 64], "f32", 4, M90),
    ("mma v2 -> blocked f32 (sm_80)", MMA2_4, blocked([1, 4], [2, 16], [4, 1], [1, 0]), [128, 64], "f32", 4, M80),
    ("mma v2 -> blocked f16 (sm_80)", MMA2_4, blocked([1, 8], [4, 8], [4, 1], [1, 0]), [128, 64], "f16", 4, M80),
    ("mma v2 [2,2] -> blocked f16 (sm_80)", MMA2_22, blocked([1, 8], [4, 8], [4, 1], [1, 0]), [64, 64], "f16", 4, M80),
    ("mma v3 -> blocked f16 (sm_90)", MMA3, blocked([1, 8], [4, 8], [4, 1], [1, 0]), [128, 64], "f16", 4, M90),
    ("mma v3 -> blocked f32 (sm_90)", MMA3, blocked([1, 4], [2, 16], [4, 1], [1, 0]), [128, 64], "f32", 4, M90),
    ("blocked -> mma v2 f16 (sm_80)", blocked([1, 8], [4, 8], [4, 1], [1, 0]), MMA2_4, [128, 64], "f16", 4, M80),
    ("slice(mma v2) -> blocked 1-D", f"#ttg.slice<{{dim = 1, parent = {MMA2_4}}}>", blocked([1], [32], [4], [0]),
     [128], "f32", 4, M80),
    ("(r0 l0) transposition 64", "#ttg.linear<{register = [[1]], lane = [[2], [4], [8], [16], [32]], warp = [], block = []}>",
     "#ttg.linear<{register = [[2]], lane = [[1], [4], [8], [16], [32]], warp = [], block = []}>", [64], "f32", 1, M90),
    ("(r0 l0) transposition 128 f16", "#ttg.linear<{register = [[1], [2]], lane = [[4], [8], [16], [32], [64]], warp = [], block = []}>",
     "#ttg.linear<{register = [[1], [4]], lane = [[2], [8], [16], [32], [64]], warp = [], block = []}>", [128], "f16", 1, M90),
    ("16x16 f16 lanes reshaped, 1 warp", blocked([1, 2], [8, 4], [1, 1], [1, 0]), blocked([1, 2], [4, 8], [1, 1], [1, 0]),
     [16, 16], "f16", 1, M90),
    ("mma v2 -> dot_op(a, kWidth 2) f16", MMA2_4, f"#ttg.dot_op<{{opIdx = 0, parent = {MMA2_4}, kWidth = 2}}>",
     [64, 32], "f16", 4, M80),
    ("32x32 i8 [1,4] -> [4,1], 4 warps", blocked([1, 4], [8, 4], [4, 1], [1, 0]), blocked([4, 1], [4, 8], [1, 4], [0, 1]),
     [32, 32], "i8", 4, M90),
    ("64x64 i64 warps [4,1]->[1,4]", blocked([1, 2], [8, 4], [4, 1], [1, 0]), blocked([1, 2], [8, 4], [1, 4], [1, 0]),
     [64, 64], "i64", 4, M90),
    ("cross-CTA 2 CTAs, split rows -> split cols", blocked([1, 4], [8, 4], [4, 1], [1, 0]) [:-2]
     + ", CGALayout = [[1, 0]]}>",
     blocked([1, 4], [8, 4], [4, 1], [1, 0])[:-2] + ", CGALayout = [[0, 1]]}>",
     [64, 64], "f32", 4, M90),
    ("blocked rows -> cols 1-D i1", blocked([4], [32], [1], [0]), blocked([1], [32], [1], [0]), [128], "i1", 1, M90),
]

POINTER = {"f32": "f32", "f16": "f16", "i8": "i8", "i64": "i64", "i1": "i8"}


def ttgir(src: str, dst: str, shape: list[int], dtype: str, warps: int, sm: int) -> str:
    ctas = 1
    m = re.search(r"CGALayout = \[(.*?)\]\}>", src)
    if m:
        ctas = 2 ** m.group(1).count("[")
    """A kernel: load a tensor in #src, convert to #dst, store (i1 loads i8 and compares)."""
    ptr_t = POINTER[dtype]
    tshape = "x".join(map(str, shape))
    lines = []

    def pointers(layout: str, base: str, tag: str) -> str:
        if len(shape) == 1:
            lines.append(f"%{tag}r = tt.make_range {{end = {shape[0]} : i32, start = 0 : i32}} : tensor<{shape[0]}xi32, {layout}>")
            off = f"%{tag}r"
        else:
            m, n = shape
            lines.extend([
                f"%{tag}r0 = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, #ttg.slice<{{dim = 1, parent = {layout}}}>>",
                f"%{tag}r0e = tt.expand_dims %{tag}r0 {{axis = 1 : i32}} : tensor<{m}xi32, #ttg.slice<{{dim = 1, parent = {layout}}}>> -> tensor<{m}x1xi32, {layout}>",
                f"%{tag}cn = arith.constant dense<{n}> : tensor<{m}x1xi32, {layout}>",
                f"%{tag}rows = arith.muli %{tag}r0e, %{tag}cn : tensor<{m}x1xi32, {layout}>",
                f"%{tag}r1 = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, #ttg.slice<{{dim = 0, parent = {layout}}}>>",
                f"%{tag}r1e = tt.expand_dims %{tag}r1 {{axis = 0 : i32}} : tensor<{n}xi32, #ttg.slice<{{dim = 0, parent = {layout}}}>> -> tensor<1x{n}xi32, {layout}>",
                f"%{tag}a = tt.broadcast %{tag}rows : tensor<{m}x1xi32, {layout}> -> tensor<{tshape}xi32, {layout}>",
                f"%{tag}b = tt.broadcast %{tag}r1e : tensor<1x{n}xi32, {layout}> -> tensor<{tshape}xi32, {layout}>",
                f"%{tag}off = arith.addi %{tag}a, %{tag}b : tensor<{tshape}xi32, {layout}>",
            ])
            off = f"%{tag}off"
        lines.extend([f"%{tag}s = tt.splat {base} : !tt.ptr<{ptr_t}> -> tensor<{tshape}x!tt.ptr<{ptr_t}>, {layout}>",
                  f"%{tag}p = tt.addptr %{tag}s, {off} : tensor<{tshape}x!tt.ptr<{ptr_t}>, {layout}>, tensor<{tshape}xi32, {layout}>"])
        return f"%{tag}p"

    p = pointers("#src", "%in", "s")
    elem = "i1" if dtype == "i1" else ptr_t
    lines.append(f"%v = tt.load {p} : tensor<{tshape}x!tt.ptr<{ptr_t}>, #src>")
    value = "%v"
    if dtype == "i1":
        lines += [f"%z = arith.constant dense<0> : tensor<{tshape}xi8, #src>",
                  f"%vb = arith.cmpi ne, %v, %z : tensor<{tshape}xi8, #src>"]
        value = "%vb"
    lines.append(f"%c = ttg.convert_layout {value} : tensor<{tshape}x{elem}, #src> -> tensor<{tshape}x{elem}, #dst>")
    q = pointers("#dst", "%out", "d")
    stored = "%c"
    if dtype == "i1":
        lines.append(f"%cx = arith.extui %c : tensor<{tshape}xi1, #dst> to tensor<{tshape}xi8, #dst>")
        stored = "%cx"
    lines.append(f"tt.store {q}, {stored} : tensor<{tshape}x!tt.ptr<{ptr_t}>, #dst>")
    body = "\n    ".join(lines)
    return f"""#src = {src}
#dst = {dst}
module attributes {{"ttg.num-ctas" = {ctas} : i32, "ttg.num-warps" = {warps} : i32, ttg.target = "cuda:{sm}", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @kernel(%in: !tt.ptr<{ptr_t}> {{tt.divisibility = 16 : i32}}, %out: !tt.ptr<{ptr_t}> {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    {body}
    tt.return
  }}
}}
"""


def compile_stock(text: str, sm: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ttgir")
        with open(path, "w") as f:
            f.write(text)
        env = dict(os.environ, TRITON_DEFAULT_FP_FUSION="1", TRITON_CACHE_DIR=os.path.join(tmp, "cache"))
        proc = subprocess.run([sys.executable, "-c", COMPILE, path, str(sm)], capture_output=True, text=True,
                              env=env, timeout=300)
        if proc.returncode != 0:
            return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
        return json.loads(proc.stdout.strip().splitlines()[-1])


def ours(src: str, dst: str, shape, dtype: str, sm: int) -> dict:
    a, b = to_linear_layout(src, shape), to_linear_layout(dst, shape)
    plan = plan_conversion(a, b, ELEMENT[dtype], f"sm_{sm}")
    if isinstance(plan, Unsupported):
        return {"error": plan.reason}
    cost = plan_cost(plan)
    return {"method": plan.method, "scope": plan.scope, "shared": cost.scratch_bytes, "shuffles": cost.shuffles,
            "selects": cost.selects, "conflicts": cost.bank_conflicts,
            "ops": instruction_counts(cost, plan.target)}


def fmt_ops(ops: dict) -> str:
    return ", ".join(f"{k}×{v}" for k, v in sorted(ops.items())) or "-"


# What the comparison cannot see, whatever the run: said under every report.
READING_NOTES = """## Reading the table

* Byte permutes (`prmt`) are not compared: stock packs sub-32-bit values for its own vector
  accesses; our plans count packing only in shuffle plans (shared-memory vectors of 8/16-bit
  elements are `st.shared.v2/v4.b8/b16`, no permutes).
* Bank conflicts: ours are exact (the cost model's count); Triton's are not observable without a
  GPU profiler, so they are not compared."""


def random_cases(n: int, seed: int) -> list:
    """Random blocked -> blocked pairs of one shape (1 to 4 warps, f32/f16/i8), cuda:90."""
    import random
    rng = random.Random(seed)

    def split(total, parts=2):
        out = [1] * parts
        while total > 1:
            out[rng.randrange(parts)] *= 2
            total //= 2
        return out
    cases = []
    for i in range(n):
        warps = rng.choice([1, 1, 2, 4])
        shape = [1 << rng.randint(3, 6), 1 << rng.randint(3, 6)]
        layouts = [blocked(split(rng.choice([1, 2, 4])), split(32), split(warps), rng.sample([0, 1], 2))
                   for _ in range(2)]
        cases.append((f"random {i}", layouts[0], layouts[1], shape, rng.choice(["f32", "f16", "i8"]), warps, M90))
    return cases


MEMORY_OPS = ("st.shared", "ld.shared", "ldmatrix", "stmatrix")


def measures(stock: dict, mine: dict) -> list[tuple[str, int, int]]:
    """(measure, stock, ours) for what the verdict compares (fewer is better): scratch bytes,
    shuffles and shared-memory instructions."""
    stock_mem = sum(v for k, v in stock["ops"].items() if k.startswith(MEMORY_OPS))
    mine_mem = sum(v for k, v in mine["ops"].items() if k.startswith(MEMORY_OPS))
    return [("scratch B", stock["shared"], mine["shared"]), ("shfl", stock["ops"].get("shfl.sync", 0), mine["shuffles"]),
            ("shared-memory instrs", stock_mem, mine_mem)]


def verdict_kind(stock: dict, mine: dict) -> str:
    """"stock n/a", "same", "better", "worse" or "mixed" (better in one measure, worse in another)."""
    if "error" in stock:
        return "stock n/a"
    compared = measures(stock, mine)
    worse = any(b > a for _, a, b in compared)
    better = any(b < a for _, a, b in compared)
    return "mixed" if worse and better else "worse" if worse else "better" if better else "same"


def verdict(stock: dict, mine: dict) -> str:
    """The table's last column: the kind and the measures that differ, ours vs stock."""
    kind = verdict_kind(stock, mine)
    if kind in ("stock n/a", "same"):
        return kind
    compared = measures(stock, mine)
    worse = [f"{n} {b} vs {a}" for n, a, b in compared if b > a]
    better = [f"{n} {b} vs {a}" for n, a, b in compared if b < a]
    return {"mixed": "mixed: ", "worse": "**worse**: ", "better": "better: "}[kind] + "; ".join(better + worse)


def summary(rows: list) -> str:
    """The report's closing section, computed from this run's rows ((name, type, sm, stock,
    ours) as ``main`` collects them): how many cases are the same as stock, better, worse or
    mixed, which ones, where the two lowerings chose different mechanisms, and our bank
    conflicts."""
    planned = [(name, stock, mine) for name, _, _, stock, mine in rows if "error" not in mine]
    left = [name for name, _, _, _, mine in rows if "error" in mine]
    by_kind: dict[str, list[str]] = {}
    for name, stock, mine in planned:
        by_kind.setdefault(verdict_kind(stock, mine), []).append(name)
    counts = [f"{len(by_kind.get(kind, []))} {kind}" for kind in ("same", "better", "worse", "mixed")]
    totals = f"{len(rows)} cases: " + ", ".join(counts)
    if by_kind.get("stock n/a"):
        totals += f", {len(by_kind['stock n/a'])} where stock Triton did not compile"
    if left:
        totals += f", {len(left)} left to Triton by our planner"
    lines = ["## Summary of this run", "", f"* {totals}."]
    for kind, title in (("better", "better"), ("worse", "**worse**"), ("mixed", "mixed")):
        if by_kind.get(kind):
            lines.append(f"* {title}: {', '.join(by_kind[kind])}.")
    compiled = [(name, stock, mine) for name, stock, mine in planned if "error" not in stock]
    more_scratch = [f"{name} ({mine['shared']} vs {stock['shared']} B)" for name, stock, mine in compiled
                    if mine["shared"] > stock["shared"]]
    if more_scratch:
        lines.append(f"* more scratch than stock: {', '.join(more_scratch)}.")
    stock_shuffles = [name for name, stock, mine in compiled
                      if stock["ops"].get("shfl.sync", 0) and mine["method"] == "shared"]
    if stock_shuffles:
        lines.append(f"* shared memory where stock shuffles: {', '.join(stock_shuffles)}.")
    stock_shared = [name for name, stock, mine in compiled
                    if stock["shared"] and not stock["ops"].get("shfl.sync", 0) and mine["method"] == "shuffle"]
    if stock_shared:
        lines.append(f"* shuffles where stock goes through shared memory: {', '.join(stock_shared)}.")
    conflicted = [f"{name} ({mine['conflicts']})" for name, _, mine in planned if mine["conflicts"]]
    if conflicted:
        lines.append(f"* bank conflicts in our plans (extra wavefronts per warp): {', '.join(conflicted)}.")
    elif planned:
        lines.append(f"* bank conflicts in our plans: none, in all {len(planned)} (our exact count).")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(RESULTS, "planner_vs_triton.md"))
    parser.add_argument("--random", type=int, default=0,
                        help="also compare N random blocked->blocked pairs (seeded) after the fixed list")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import triton
    rows = []
    cases = list(CASES) + random_cases(args.random, args.seed)
    for name, src, dst, shape, dtype, warps, sm in cases:
        stock = compile_stock(ttgir(src, dst, shape, dtype, warps, sm), sm)
        mine = ours(src, dst, shape, dtype, sm)
        rows.append((name, dtype, sm, stock, mine))
        print(name, "| stock:", stock, "| ours:", mine, flush=True)
    out = ["# Our conversion plans vs stock Triton", "",
           f"Generated by `benchmarks/studies/planner_vs_triton.py` (triton {triton.__version__}, CPU only: PTX and "
           "`metadata.shared` of a single-convert kernel; ours from the cost model). Counts are per warp "
           "(per thread) instructions of the convert; the stock column counts every instruction of that kind "
           "in the kernel's PTX (the loads/stores of the kernel itself use none of them). "
           "Bank conflicts: ours are exact (cost model); Triton's are not observable without a GPU.", "",
           "| case | type | sm | stock scratch B | stock shfl | stock shared/barrier ops | ours | ours scratch B | "
           "ours shfl | ours conflicts | ours ops | ours vs stock |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, dtype, sm, stock, mine in rows:
        if "error" in stock:
            s_scr, s_shfl, s_ops = "n/a", "n/a", f"compile failed: {stock['error']}"
        else:
            s_scr, s_shfl = stock["shared"], stock["ops"].get("shfl.sync", 0)
            s_ops = fmt_ops({k: v for k, v in stock["ops"].items() if k != "shfl.sync"})
        if "error" in mine:
            out.append(f"| {name} | {dtype} | {sm} | {s_scr} | {s_shfl} | {s_ops} | unsupported: {mine['error']} "
                       "| | | | |")
            continue
        out.append(f"| {name} | {dtype} | {sm} | {s_scr} | {s_shfl} | {s_ops} | {mine['scope']}/{mine['method']} | "
                   f"{mine['shared']} | {mine['shuffles']} | {mine['conflicts']} | {fmt_ops(mine['ops'])} | "
                   f"{verdict(stock, mine)} |")
    out += ["", summary(rows), "", READING_NOTES]
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
