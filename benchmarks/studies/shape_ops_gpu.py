"""tt.join, tt.split and tt.reshape in the layouts our rules give them, run on the GPU.

    python benchmarks/studies/shape_ops_gpu.py --count 60 --out benchmarks/results     # H100/H200

For each of ``--count`` random blocked and linear layouts ``L`` of a 32x64 i32 tensor (and the
layouts of a few hand-picked cases), three one-program kernels, their TTGIR written by hand with
the result layouts :mod:`linear_layouts.passes.assign.shape_layouts` computes, are compiled by Triton
(its own lowering, no plugin pass) and run on random input:

* ``join``: ``split(join(x, y))`` stored as two outputs: must give back x and y;
* ``join_add``: ``join(x, y)`` plus itself, split: 2x and 2y;
* ``reshape``: x reshaped to 2048, plus itself, reshaped back: 2x.

A wrong answer means Triton lowers the op in that layout differently from what our algebra
says the layout means, and the rule must not offer it.  Writes ``shape_ops_gpu.md``.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import os
import random
import sys
import tempfile

from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()

M, N = 32, 64
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')


def _t(shape, encoding, element="i32"):
    return f"tensor<{'x'.join(map(str, shape))}x{element}, {encoding}>"


def _pointers(layout: str, base: str, out: list[str], tag: str) -> str:
    """Lines computing a 32x64 row-major tensor of pointers from ``base`` in ``layout``."""
    s0, s1 = f"#ttg.slice<{{dim = 1, parent = {layout}}}>", f"#ttg.slice<{{dim = 0, parent = {layout}}}>"
    out += [f"    %{tag}r = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t((M,), s0)}",
            f"    %{tag}re = tt.expand_dims %{tag}r {{axis = 1 : i32}} : {_t((M,), s0)} -> {_t((M, 1), layout)}",
            f"    %{tag}st = arith.constant dense<{N}> : {_t((M, 1), layout)}",
            f"    %{tag}rm = arith.muli %{tag}re, %{tag}st : {_t((M, 1), layout)}",
            f"    %{tag}c = tt.make_range {{end = {N} : i32, start = 0 : i32}} : {_t((N,), s1)}",
            f"    %{tag}ce = tt.expand_dims %{tag}c {{axis = 0 : i32}} : {_t((N,), s1)} -> {_t((1, N), layout)}",
            f"    %{tag}rb = tt.broadcast %{tag}rm : {_t((M, 1), layout)} -> {_t((M, N), layout)}",
            f"    %{tag}cb = tt.broadcast %{tag}ce : {_t((1, N), layout)} -> {_t((M, N), layout)}",
            f"    %{tag}o = arith.addi %{tag}rb, %{tag}cb : {_t((M, N), layout)}",
            f"    %{tag}s = tt.splat {base} : !tt.ptr<i32> -> {_t((M, N), layout, '!tt.ptr<i32>')}",
            f"    %{tag}p = tt.addptr %{tag}s, %{tag}o : {_t((M, N), layout, '!tt.ptr<i32>')}, {_t((M, N), layout)}"]
    return f"%{tag}p"


def kernel_text(kind: str, layout: str) -> str:
    """``@k(X, Y, A, B)``: loads x, y in ``layout``, stores two results to A and B."""
    from linear_layouts.passes.assign.shape_layouts import shape_op_result
    lines: list[str] = []
    px = _pointers(layout, "%X", lines, "x")
    py = _pointers(layout, "%Y", lines, "y")
    pa = _pointers(layout, "%A", lines, "a")
    pb = _pointers(layout, "%B", lines, "b")
    two = _t((M, N), layout)
    lines += [f"    %x = tt.load {px} : {_t((M, N), layout, '!tt.ptr<i32>')}",
              f"    %y = tt.load {py} : {_t((M, N), layout, '!tt.ptr<i32>')}"]
    if kind in ("join", "join_add"):
        joined = shape_op_result("join", layout, (M, N), (M, N, 2))
        pair = _t((M, N, 2), joined)
        lines.append(f"    %j = tt.join %x, %y : {two} -> {pair}")
        source = "%j"
        if kind == "join_add":
            lines.append(f"    %j2 = arith.addi %j, %j : {pair}")
            source = "%j2"
        lines += [f"    %lo, %hi = tt.split {source} : {pair} -> {two}",
                  f"    tt.store {pa}, %lo : {_t((M, N), layout, '!tt.ptr<i32>')}",
                  f"    tt.store {pb}, %hi : {_t((M, N), layout, '!tt.ptr<i32>')}"]
    else:
        flat = shape_op_result("reshape", layout, (M, N), (M * N,))
        back = shape_op_result("reshape", flat, (M * N,), (M, N), known=(layout,))
        wide = _t((M * N,), flat)
        lines += [f"    %f = tt.reshape %x : {two} -> {wide}",
                  f"    %f2 = arith.addi %f, %f : {wide}",
                  f"    %g = tt.reshape %f2 : {wide} -> {_t((M, N), back)}",
                  f"    %gl = ttg.convert_layout %g : {_t((M, N), back)} -> {two}",
                  f"    tt.store {pa}, %gl : {_t((M, N), layout, '!tt.ptr<i32>')}",
                  f"    tt.store {pb}, %y : {_t((M, N), layout, '!tt.ptr<i32>')}"]
    signature = ", ".join(f"%{name}: !tt.ptr<i32> {{tt.divisibility = 16 : i32}}" for name in "XYAB")
    return "\n".join([HEADER, f"  tt.func public @k({signature}) {{", *lines, "    tt.return", "  }", "}", ""])


def layouts(count: int, seed: int) -> list[str]:
    from support.random_layouts import blocked
    from linear_layouts.tools.testcases import random_linear_encoding
    fixed = ["#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [0, 1]}>",
             "#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
             "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
             "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"]
    rng = random.Random(seed)
    drawn = [blocked(rng, 2, 4, 32) if rng.random() < 0.7 else random_linear_encoding(rng, (M, N), 4, 32, broadcast=False)
             for _ in range(count)]
    return fixed + drawn


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--dry-run", action="store_true", help="compile only (no GPU)")
    args = parser.parse_args(argv)
    import triton
    from triton.backends.compiler import GPUTarget
    work = tempfile.mkdtemp(prefix="ll_shape_ops_")
    rows = []
    for index, layout in enumerate(layouts(args.count, args.seed)):
        for kind in ("join", "join_add", "reshape"):
            path = os.path.join(work, f"{index}-{kind}.ttgir")
            with open(path, "w") as f:
                f.write(kernel_text(kind, layout))
            try:
                kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
            except Exception as error:  # noqa: BLE001 - recorded per case
                rows.append((index, kind, layout, "compile error: " + str(error).splitlines()[0][:200]))
                continue
            if args.dry_run:
                rows.append((index, kind, layout, "compiled"))
                continue
            import torch
            x = torch.randint(-2**30, 2**30, (M, N), dtype=torch.int32, device="cuda")
            y = torch.randint(-2**30, 2**30, (M, N), dtype=torch.int32, device="cuda")
            a = torch.full((M, N), -1, dtype=torch.int32, device="cuda")
            b = torch.full((M, N), -1, dtype=torch.int32, device="cuda")
            kernel[(1, 1, 1)](x, y, a, b)
            torch.cuda.synchronize()
            want = {"join": (x, y), "join_add": (2 * x, 2 * y), "reshape": (2 * x, y)}[kind]
            wrong = int((a != want[0]).sum().item() + (b != want[1]).sum().item())
            rows.append((index, kind, layout, "right" if wrong == 0 else f"WRONG ({wrong} elements)"))
    bad = [r for r in rows if r[3] not in ("right", "compiled")]
    lines = ["# tt.join, tt.split, tt.reshape in the layouts of our rules, on the GPU", "",
             f"- triton {triton.__version__}; command: `python benchmarks/studies/shape_ops_gpu.py --count {args.count} "
             f"--seed {args.seed}`" + (" (dry run: compiled only)" if args.dry_run else ""),
             f"- kernels: {len(rows)}; not right: **{len(bad)}**", ""]
    if bad:
        lines += ["| layout | kernel | result |", "|---|---|---|"]
        lines += [f"| `{layout}` | {kind} | {verdict} |" for _, kind, layout, verdict in bad]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "shape_ops_gpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
