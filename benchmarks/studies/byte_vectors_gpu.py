"""Our 8-bit shared-memory islands with bytes packed by shifts (the default) or through ``<4 x i8>``
(``LINEAR_LAYOUTS_BYTE_VECTORS=1``, ``lowering/emit/emit_nvidia.bytes_as_vectors``), timed (GPU).

The runs (one warm H200, triton 3.6, the same 57 i8 conversions of fresh seeds 2741, 717, 828
and 939; a fresh ``TRITON_CACHE_DIR`` each, since Triton's cache does not key on the switch)::

    python benchmarks/plan_choice.py --fresh 2741 717 828 939 --count 100 --match ":i8:" --no-pick \\
        --jobs 16 --rep 10 --deadline 150 --stem bv_<run> --out $OUT     # switch unset: off_1..3; =1: on_1

then ``python benchmarks/studies/byte_vectors_gpu.py`` (CPU) compares them from the committed
``benchmarks/results/byte_vectors_gpu/*.json.gz``: per conversion, ours / stock (the worse of
the chain and latency contexts, stock timed in the same run) with the switch on against the
median of the three runs without it.  Writes ``byte_vectors_gpu.md`` there.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import statistics

import on_path  # noqa: E402,F401

RESULTS = os.path.join(on_path.REPO, "benchmarks", "results", "byte_vectors_gpu")


def ratios(path: str) -> dict:
    """ours / stock per conversion, the worse of the two contexts."""
    with gzip.open(path, "rt") as f:
        rows = json.load(f)["rows"]
    out = {}
    for row in rows:
        modes = row["modes"]
        if "ours" in modes and "stock" in modes:
            out[row["case"]] = max(modes["ours"][k]["us"] / modes["stock"][k]["us"] for k in ("chain", "latency"))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(RESULTS, "byte_vectors_gpu.md"))
    args = parser.parse_args(argv)
    off = [ratios(os.path.join(RESULTS, f"off_{i}.json.gz")) for i in (1, 2, 3)]
    on = ratios(os.path.join(RESULTS, "on_1.json.gz"))
    rows = []
    for case in sorted(on):
        runs = [run[case] for run in off if case in run]
        if runs:
            rows.append((on[case] / statistics.median(runs), case, statistics.median(runs), min(runs), max(runs),
                         on[case]))
    rows.sort()
    geo = math.exp(sum(math.log(r[0]) for r in rows) / len(rows))
    above = lambda values: sum(1 for v in values if v > 1.05)  # noqa: E731
    lines = ["# 8-bit islands: bytes packed by shifts (default) or through <4 x i8> (LINEAR_LAYOUTS_BYTE_VECTORS=1)", "",
             "Produced by `python benchmarks/studies/byte_vectors_gpu.py` from the runs its docstring names "
             "(H200, triton 3.6).", "",
             f"{len(rows)} conversions: switch on / off, geomean **{geo:.3f}**; ours / stock geomean "
             f"{math.exp(sum(math.log(r[2]) for r in rows) / len(rows)):.3f} off (median of 3 runs), "
             f"{math.exp(sum(math.log(r[5]) for r in rows) / len(rows)):.3f} on; above 1.05 x stock: "
             f"{above(r[2] for r in rows)} off, {above(r[5] for r in rows)} on; faster by 5% or more with the switch: "
             f"{sum(1 for r in rows if r[0] < 0.95)}, slower by 5% or more: {sum(1 for r in rows if r[0] > 1.05)}.", "",
             "| conversion | ours / stock, off (median; range of 3) | on | on / off |", "|---|---:|---:|---:|"]
    for ratio, case, median, low, high, switched in rows:
        lines.append(f"| {case} | {median:.3f} ({low:.3f}-{high:.3f}) | {switched:.3f} | {ratio:.3f} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(lines[4])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
