"""Stock Triton's warp shuffles, predicted (lowering/choosing/stock_lowering.py) against Triton's own PTX,
on conversions drawn fresh (CPU only; run it with triton 3.6, the release the rules describe).

    python benchmarks/studies/stock_lowering_oracle.py --seed 909 --count 400 \
        --out benchmarks/results/stock_lowering_oracle.md

Each conversion of ``plan_contexts.fresh_cases(seed, count)`` (the generator of the training
draws; seed 909 was never timed or used to write the rules) becomes a load -> convert -> store
kernel (``planner_vs_triton.ttgir``), compiled by ``triton.compile`` for sm_90 in a subprocess;
the ``shfl.sync`` count of its PTX is compared with ``stock_warp_shuffles`` of the pair (one
direction: the kernel converts once).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import sys
import time

from harness.checkout import make_package_importable  # noqa: E402

ELEMENT_TYPE = {8: "i8", 16: "f16", 32: "f32", 64: "i64"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=909)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    make_package_importable()
    import triton
    from harness import plan_contexts
    import planner_vs_triton
    from plan_choice import release
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.stock_lowering import stock_warp_shuffles

    version = release(triton.__version__)
    began = time.time()
    rows, wrong, errors = [], [], []
    for case in plan_contexts.fresh_cases(args.seed, args.count):
        shape = tuple(case.shape)
        predicted = stock_warp_shuffles(to_linear_layout(case.src, shape, conventions=version),
                                        to_linear_layout(case.dst, shape, conventions=version), case.bits) or 0
        text = planner_vs_triton.ttgir(case.src, case.dst, list(shape), ELEMENT_TYPE[case.bits], case.num_warps, 90)
        result = planner_vs_triton.compile_stock(text, 90)
        if "error" in result:
            errors.append((case.name, result["error"]))
            continue
        compiled = result["ops"].get("shfl.sync", 0)
        rows.append((case, predicted, compiled))
        if compiled != predicted:
            wrong.append((case, predicted, compiled))
    shuffling = [r for r in rows if r[1] or r[2]]
    lines = ["# Stock Triton's warp shuffles: predicted against its PTX", "",
             f"Produced by `python benchmarks/studies/stock_lowering_oracle.py {' '.join(argv or sys.argv[1:])}` with "
             f"triton {triton.__version__} ({time.time() - began:.0f} s, CPU).", "",
             f"Conversions compiled: {len(rows)} (errors: {len(errors)}); the prediction is exact in "
             f"**{len(rows) - len(wrong)}** of {len(rows)}, and in {len(shuffling) - len(wrong)} of the {len(shuffling)} "
             "where stock or the prediction shuffles.", ""]
    if wrong:
        lines += ["| conversion | source | destination | predicted | PTX |", "|---|---|---|---:|---:|"]
        lines += [f"| {c.name} | `{c.src}` | `{c.dst}` | {p} | {x} |" for c, p, x in wrong]
    lines += [f"* error: {name}: {error}" for name, error in errors]
    text = "\n".join(lines) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
