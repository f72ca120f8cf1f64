"""GPU check of our ``ttg.local_load`` islands: bit for bit against stock Triton, on a real GPU.

    python benchmarks/local_load_gpu.py --out benchmarks/results          # on an H100/H200
    python benchmarks/local_load_gpu.py --out /tmp/dry --dry-run          # CPU: compile only
    python benchmarks/local_load_gpu.py --only local_load,local_alloc     # the allocation ours too
    python benchmarks/local_load_gpu.py --only subslice                   # loads from subslice views

Each case is a kernel ``load X (layout A) -> ttg.local_alloc into a buffer of shared layout S ->
ttg.local_load into layout B -> store Y (layout B)``; X and Y row-major, so Y must equal X bit
for bit whatever A, S and B are.  The cases cross

* shared layouts S: swizzled (``vec``/``perPhase``/``maxPhase`` as Triton picks them for mma
  operands, and unswizzled), both orders, and ``nvmma_shared`` (64- and 128-byte swizzles);
* result layouts B: blocked layouts, random ``#ttg.linear`` layouts with broadcast, and the mma v2
  dot operands (``ldmatrix`` / ``ldmatrix.trans`` territory);
* element types fp32, fp16, bf16, fp8 (e4m3), int8, int64; 1, 4 and 8 warps.

Each kernel is compiled twice, with ``ll-lower-conversions{only=local_load}`` and with stock
Triton, launched on random bits with Y poisoned, and compared with X.  Writes
``local_load_gpu.json`` / ``.md`` into ``--out`` with the GPU name and the Triton and torch
versions.  Exit status 0 when every kernel with our islands is bit-exact.

``--only subslice`` (the ``subslice`` group, ``local_load_gpu_subslice.json`` / ``.md``): the
buffer is read through ``ttg.memdesc_subslice`` views of a random shape (64x32, 32x64, 64x16,
16x64 or 32x32), every view of the tiling once, each into layout B over the view's shape and
stored to its place in Y; half of the cases read constant views, the other half read them in a
loop whose block arguments carry the views (rotated every iteration), so the islands take the
views' starts from the descriptors at run time.  Y covers X exactly once either way.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections import Counter

from harness import skeleton  # noqa: E402
from harness.common import require_package  # noqa: E402

require_package()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import gpu_conversions  # noqa: E402  (the worker pool and the launcher are the same)
from gpu_conversions import DTYPES, WARPS, blocked, compile_all, run_on_gpu  # noqa: E402  (compile_case: case["only"])

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = (64, 64)


def shared_layouts(bits: int) -> list[tuple[str, str]]:
    """(name, attribute) of shared layouts for ``bits``-bit elements."""
    vec = max(1, 128 // bits)
    out = [("swizzle-none-row", "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"),
           ("swizzle-none-col", "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"),
           ("swizzle-mma-row", f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = 1, maxPhase = 8, order = [1, 0]}}>"),
           ("swizzle-mma-col", f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = 2, maxPhase = 4, order = [0, 1]}}>")]
    if bits in (8, 16, 32):
        for width in (w for w in (64, 128) if w <= SHAPE[1] * bits // 8):   # a row must hold the swizzle
            out.append((f"nvmma-{width}", f"#ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = false, "
                                          f"elementBitWidth = {bits}}}>"))
    return out


def result_layouts(num_warps: int, bits: int, rng: random.Random, shape=SHAPE) -> list[tuple[str, str]]:
    from linear_layouts.tools.fuzz.testcases import random_linear_encoding
    tall, square = gpu_conversions._warp_split(num_warps)
    zoo = [("blocked-row-v4", blocked([1, 4], [4, 8], tall, [1, 0])),
           ("blocked-col-v4", blocked([4, 1], [8, 4], tall[::-1], [0, 1])),
           ("blocked-row-1", blocked([1, 1], [1, 32], square, [1, 0]))]
    if bits in (8, 16, 32):
        k_width = 32 // bits
        mma = f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {square}, instrShape = [16, 8]}}>"
        for index in (0, 1):
            zoo.append((f"dot-op{index}", f"#ttg.dot_op<{{opIdx = {index}, parent = {mma}, kWidth = {k_width}}}>"))
    for i in range(2):
        zoo.append((f"linear-random-{i}", random_linear_encoding(rng, shape, num_warps, 32)))
    return zoo


def case_groups():
    """(warps, the blocked layout X is loaded in, dtype name, element type, bits) of every group
    of cases: each warp count of ``WARPS`` with each dtype of ``DTYPES``."""
    for num_warps in WARPS:
        tall, _ = gpu_conversions._warp_split(num_warps)
        source = blocked([1, 4], [4, 8], tall, [1, 0])
        for dtype, (element, _, int_name) in DTYPES.items():
            yield num_warps, source, dtype, element, {"int8": 8, "int16": 16, "int32": 32, "int64": 64}[int_name]


def build_cases(arch: int, seed: int, per_group: int, buffers: int = 0, only: str = "local_load"):
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir
    rng = random.Random(seed)
    target = "sm_90" if arch >= 90 else "sm_80"
    cases = []
    for num_warps, source, dtype, element, bits in case_groups():
        combos = [(s, d) for s in shared_layouts(bits) for d in result_layouts(num_warps, bits, rng)]
        for (s_name, shared), (d_name, dst) in rng.sample(combos, min(per_group, len(combos))):
            name = f"w{num_warps}-{dtype}-{s_name}-to-{d_name}"
            text = single_convert_ttgir(SHAPE, element, source, dst, num_warps, target, name="k",
                                        shared_encoding=shared, buffers=buffers)
            cases.append(dict(name=name, dtype=dtype, num_warps=num_warps, shape=list(SHAPE), src_name=s_name,
                              dst_name=d_name, src=shared, dst=dst, text=text, only=only))
    return cases


VIEW_SHAPES = ((64, 32), (32, 64), (64, 16), (16, 64), (32, 32))


def subslice_ttgir(element: str, src: str, dst: str, num_warps: int, target: str, shared: str,
                   view: tuple[int, int], carried: bool) -> str:
    """A kernel ``k(X, Y)``: load the 64x64 X (layout ``src``) into an immutable buffer of layout
    ``shared``, read every ``view``-shaped ``ttg.memdesc_subslice`` of it (the tiling of the
    buffer) into layout ``dst`` and store each to its place in Y.  ``carried``: the views enter
    a loop as block arguments and rotate (iteration i reads view i; the stores' row-major start
    rotates with them), so each load's view start is known only at run time."""
    from linear_layouts.lowering.target import target_named
    (m, n), (vm, vn) = SHAPE, view
    memory = element
    ptr = f"!tt.ptr<{memory}>"
    whole = f"!ttg.memdesc<{m}x{n}x{element}, #shared, #smem>"
    part = f"!ttg.memdesc<{vm}x{vn}x{element}, #shared, #smem, {m}x{n}>"
    tensor = f"tensor<{vm}x{vn}x{element}, #dst>"
    starts = [(r, c) for r in range(0, m, vm) for c in range(0, n, vn)]
    lines = [f"#src = {src}", f"#dst = {dst}", f"#shared = {shared}", "#smem = #ttg.shared_memory",
             f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, '
             f'ttg.target = "{target_named(target).triton_name}", "ttg.threads-per-warp" = 32 : i32}} {{',
             f"  tt.func public @k(%X: {ptr}, %Y: {ptr}) {{"]
    x_off = _row_major_offsets(lines, (m, n), n, "#src", "x")
    lines += [f"    %x_p0 = tt.splat %X : {ptr} -> tensor<{m}x{n}x{ptr}, #src>",
              f"    %x_p = tt.addptr %x_p0, {x_off} : tensor<{m}x{n}x{ptr}, #src>, tensor<{m}x{n}xi32, #src>",
              f"    %v = tt.load %x_p : tensor<{m}x{n}x{ptr}, #src>",
              f"    %a = ttg.local_alloc %v : (tensor<{m}x{n}x{element}, #src>) -> {whole}"]
    y_off = _row_major_offsets(lines, (vm, vn), n, "#dst", "y")      # a view's place in Y, from (0, 0)
    lines.append(f"    %y_p0 = tt.splat %Y : {ptr} -> tensor<{vm}x{vn}x{ptr}, #dst>")
    for i, (r, c) in enumerate(starts):
        lines.append(f"    %view{i} = ttg.memdesc_subslice %a[{r}, {c}] : {whole} -> {part}")
        lines.append(f"    %start{i} = arith.constant {r * n + c} : i32")

    def load_and_store(view_name: str, start: str, tag: str):
        lines.extend([f"    %{tag}_x = ttg.local_load {view_name} : {part} -> {tensor}",
                      f"    %{tag}_s = tt.splat {start} : i32 -> tensor<{vm}x{vn}xi32, #dst>",
                      f"    %{tag}_o = arith.addi {y_off}, %{tag}_s : tensor<{vm}x{vn}xi32, #dst>",
                      f"    %{tag}_p = tt.addptr %y_p0, %{tag}_o : tensor<{vm}x{vn}x{ptr}, #dst>, tensor<{vm}x{vn}xi32, #dst>",
                      f"    tt.store %{tag}_p, %{tag}_x : tensor<{vm}x{vn}x{ptr}, #dst>"])

    if not carried:
        for i in range(len(starts)):
            load_and_store(f"%view{i}", f"%start{i}", f"l{i}")
    else:
        k = len(starts)
        views = [f"%m{i}" for i in range(k)]
        offsets = [f"%o{i}" for i in range(k)]
        inits = ", ".join([f"{v} = %view{i}" for i, v in enumerate(views)] + [f"{o} = %start{i}" for i, o in enumerate(offsets)])
        types = ", ".join([part] * k + ["i32"] * k)
        lines += ["    %c0 = arith.constant 0 : i32", "    %c1 = arith.constant 1 : i32",
                  f"    %trips = arith.constant {k} : i32",
                  f"    %rest:{2 * k} = scf.for %i = %c0 to %trips step %c1 iter_args({inits}) -> ({types}) : i32 {{"]
        load_and_store(views[0], offsets[0], "b")
        rotated = views[1:] + views[:1] + offsets[1:] + offsets[:1]
        lines.append(f"      scf.yield {', '.join(rotated)} : {types}")
        lines.append("    }")
    lines += ["    tt.return", "  }", "}", ""]
    return "\n".join(lines)


def _row_major_offsets(lines: list, shape, row_stride: int, enc: str, tag: str) -> str:
    """Append ops computing ``row * row_stride + column`` over ``shape`` in layout ``enc``."""
    m, n = shape
    row_enc, col_enc = f"#ttg.slice<{{dim = 1, parent = {enc}}}>", f"#ttg.slice<{{dim = 0, parent = {enc}}}>"
    full = f"tensor<{m}x{n}xi32, {enc}>"
    lines += [
        f"    %{tag}_r = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, {row_enc}>",
        f"    %{tag}_r2 = tt.expand_dims %{tag}_r {{axis = 1 : i32}} : tensor<{m}xi32, {row_enc}> -> tensor<{m}x1xi32, {enc}>",
        f"    %{tag}_n = arith.constant dense<{row_stride}> : tensor<{m}x1xi32, {enc}>",
        f"    %{tag}_rs = arith.muli %{tag}_r2, %{tag}_n : tensor<{m}x1xi32, {enc}>",
        f"    %{tag}_rb = tt.broadcast %{tag}_rs : tensor<{m}x1xi32, {enc}> -> {full}",
        f"    %{tag}_c = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {col_enc}>",
        f"    %{tag}_c2 = tt.expand_dims %{tag}_c {{axis = 0 : i32}} : tensor<{n}xi32, {col_enc}> -> tensor<1x{n}xi32, {enc}>",
        f"    %{tag}_cb = tt.broadcast %{tag}_c2 : tensor<1x{n}xi32, {enc}> -> {full}",
        f"    %{tag}_off = arith.addi %{tag}_rb, %{tag}_cb : {full}"]
    return f"%{tag}_off"


def build_subslice_cases(arch: int, seed: int, per_group: int):
    """The ``subslice`` group: like ``build_cases``, each kernel reading its buffer through
    views (``subslice_ttgir``), constant ones and loop-carried ones alternately."""
    rng = random.Random(seed)
    target = "sm_90" if arch >= 90 else "sm_80"
    cases = []
    for num_warps, source, dtype, element, bits in case_groups():
        for n in range(per_group):
            view = rng.choice(VIEW_SHAPES)
            if view[0] * view[1] < 32 * num_warps:
                view = (64, 32)
            s_name, shared = rng.choice(shared_layouts(bits))
            d_name, dst = rng.choice(result_layouts(num_warps, bits, rng, view))
            carried = n % 2 == 1
            name = (f"w{num_warps}-{dtype}-{s_name}-view{view[0]}x{view[1]}-"
                    f"{'carried' if carried else 'constant'}-to-{d_name}")
            text = subslice_ttgir(element, source, dst, num_warps, target, shared, view, carried)
            cases.append(dict(name=name, dtype=dtype, num_warps=num_warps, shape=list(SHAPE), src_name=s_name,
                              dst_name=d_name, src=shared, dst=dst, view=list(view), carried=carried, text=text,
                              only="local_load"))
    return cases


def write_reports(out_dir: str, cases, compiled, header: dict, dry_run: bool, stem: str = "local_load_gpu") -> int:
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for case, r in zip(cases, compiled):
        rows.append({k: v for k, v in case.items() if k != "text"} | {
            "form": r.get("method", "-"), "lowered": r.get("lowered", False), "left_reason": r.get("reason", ""),
            "plan": r.get("plan", ""), "stock": {k: v for k, v in r.get("stock", {}).items() if k != "path"},
            "ours": {k: v for k, v in r.get("ours", {}).items() if k != "path"}})
    ours_bad = [x for x in rows if not x["ours"].get("ok") or (not dry_run and not x["ours"].get("bit_exact"))]
    stock_bad = [x for x in rows if not x["stock"].get("ok") or (not dry_run and not x["stock"].get("bit_exact"))]
    lowered = [x for x in rows if x["lowered"]]
    summary = {"cases": len(rows), "lowered_by_us": len(lowered), "ours_failures": len(ours_bad),
               "stock_failures": len(stock_bad), "dry_run": dry_run, "forms": dict(Counter(x["form"] for x in rows))}
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        json.dump({"header": header, "summary": summary, "cases": rows}, f, indent=1)
    lines = ["# ttg.local_load (and, where named, ttg.local_store) through our islands, on the GPU: bit-exact check against stock Triton", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()]
    lines += ["", "Each case: a 64x64 kernel `load X (blocked) -> ttg.local_alloc (shared layout S) -> "
              "ttg.local_load (layout B) -> store Y`, compiled with our local-load islands and with stock Triton, "
              "launched on random bits with Y poisoned; pass = Y equals X bit for bit."
              + (" **Dry run: compiled only, nothing launched.**" if dry_run else ""), ""]
    verdict = "PASS" if not ours_bad else "FAIL"
    lines += [f"## Verdict: {verdict} - {len(rows) - len(ours_bad)}/{len(rows)} cases correct with our islands "
              f"({len(lowered)} lowered by us, {len(rows) - len(lowered)} left to Triton); stock Triton: "
              f"{len(rows) - len(stock_bad)}/{len(rows)}", ""]
    lines += gpu_conversions.group_table(rows, ours_bad, stock_bad)
    lines += ["", "Forms chosen (store+load where both are ours): " + ", ".join(f"{m}={n}" for m, n in sorted(summary["forms"].items())), ""]
    # How our loads compare with stock's on the cases both compiled: the shared-memory load
    # instructions and barriers of the whole kernel (the local_alloc's stores are Triton's in both).
    keys = ("ldmatrix", "ld.shared", "bar.sync")
    same = fewer = more = 0
    for x in lowered:
        if not (x["ours"].get("ok") and x["stock"].get("ok")):
            continue
        ours = sum(v for k, v in x["ours"]["mix"].items() if k.startswith(keys[:2]))
        stock = sum(v for k, v in x["stock"]["mix"].items() if k.startswith(keys[:2]))
        same += ours == stock
        fewer += ours < stock
        more += ours > stock
    lines += [f"Shared-memory load instructions per thread, ours vs stock (cases we lowered): fewer in {fewer}, "
              f"the same in {same}, more in {more}.", ""]
    lines += ["| case | our plan | ours (PTX) | stock (PTX) |", "|---|---|---|---|"]
    seen = set()
    for x in lowered:
        key = (x["form"], x["dtype"])
        if key in seen or not x["ours"].get("ok") or not x["stock"].get("ok"):
            continue
        seen.add(key)
        lines.append(f"| {x['name']} | {x['plan']} | {gpu_conversions._mix_text(x['ours']['mix'])} | "
                     f"{gpu_conversions._mix_text(x['stock']['mix'])} |")
    lines += gpu_conversions.failures_and_left(rows, ours_bad, stock_bad, stem + ".json", "form")
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(ours_bad)


def options(parser) -> None:
    parser.add_argument("--arch", type=int, default=None, help="80 or 90 (default: the GPU's; 90 for --dry-run)")
    parser.add_argument("--per-group", type=int, default=18, help="cases per (dtype, warps) group (18: 324 cases)")
    parser.add_argument("--buffers", type=int, default=0,
                        help="stage through the last of N buffers of one allocation (ttg.memdesc_index), as "
                             "pipelined loops do; writes local_load_gpu_buffers.json/.md")
    parser.add_argument("--only", default="local_load",
                        help="the lowerings we own (with --buffers: local_load,local_store lowers the store too); "
                             "'subslice': the subslice group (local loads from ttg.memdesc_subslice views)")


def cases(args, env) -> list:
    env.header.update(seed=args.seed, command="python benchmarks/local_load_gpu.py " + " ".join(args.argv))
    if "subslice" in [name.strip() for name in args.only.split(",")]:
        env.header["lowered"] = "ttg.local_load from ttg.memdesc_subslice views (constant and loop-carried)"
        return build_subslice_cases(env.arch, args.seed, args.per_group)
    return build_cases(env.arch, args.seed, args.per_group, args.buffers, args.only)


def run(args, env, cases) -> list:
    return skeleton.compile_and_launch("local_load_gpu", env, cases, args.jobs, compile_all, run_on_gpu)


def summary(args, env, cases, compiled) -> int:
    env.header["seconds"] = env.seconds()
    stem = "local_load_gpu_buffers" if args.buffers > 1 else "local_load_gpu"
    if "local_store" in args.only:
        stem = "local_store_gpu"
        env.header["lowered"] = "ttg.local_store and ttg.local_load, both by our islands"
    elif "local_alloc" in args.only:
        stem = "local_alloc_gpu"
        env.header["lowered"] = "ttg.local_alloc with a source and ttg.local_load, both by our islands"
    if "subslice" in [name.strip() for name in args.only.split(",")]:
        stem = "local_load_gpu_subslice"
    if args.buffers > 1:
        env.header["staging"] = f"the last of {args.buffers} buffers of one allocation (ttg.memdesc_index, local_store)"
    failures = write_reports(args.out, cases, compiled, env.header, args.dry_run, stem)
    print(open(os.path.join(args.out, stem + ".md")).read()[:2500])
    return 1 if failures else 0


def main(argv=None) -> int:
    return skeleton.main("local_load_gpu", __doc__, argv, options=options, cases=cases, run=run, summary=summary,
                         jobs=True, seed=2026)


if __name__ == "__main__":
    sys.exit(main())
