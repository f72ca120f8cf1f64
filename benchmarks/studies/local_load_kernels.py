"""Whole kernels with our ``ttg.local_load`` islands vs stock Triton, side by side in one run.

    python benchmarks/studies/local_load_kernels.py --out benchmarks/results      # on an H100/H200

The kernels of ``benchmarks/kernels.py`` that read operands from shared memory (the matmuls, the
int4 matmul, attention).  On sm_90 Triton feeds ``tl.dot`` with wgmma straight from shared
memory, so there is no ``local_load`` to lower; ``--mma-v2`` (default on) sets
``DISABLE_MMA_V3=1`` so that Triton takes its Ampere path (mma v2, operands staged through
``ttg.local_alloc`` + ``ttg.local_load`` into dot-operand layouts), the code the paper's
``ldmatrix`` comparison is about.  Modes, interleaved per kernel: ``stock``, ``local_load``
(``enable(only="noop,rename,shuffle,shared,local_load")``), ``conversions`` (our default:
conversions only) and ``stock_again`` (the noise).  Outputs are checked against torch; times are
``do_bench`` medians.  Writes local_load_kernels.json / .md into ``--out``.

``--own local_alloc --no-mma-v2``: the same kernels on the wgmma path, where Triton stages dot
operands with ``ttg.local_alloc`` of a register value; the second mode owns those allocations
(``only=...,local_alloc``) instead of local loads.  Writes local_alloc_kernels.json / .md.
``--own all``: loads, stores and allocations with a source, all ours (local_ops_kernels.*).
Every mode is timed ``--rounds`` times (default 5) in a rotated order; the median counts
(``kernels.run_rounds``).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import json
import os
import sys
import tempfile

from harness.checkout import geomean, make_package_importable  # noqa: E402

REPO = on_path.REPO
KERNELS = ("matmul_fp16", "int4_matmul", "attention", "matmul_fp8")
MODES = {"stock": None, "local_load": "noop,rename,shuffle,shared,local_load",
         "conversions": "noop,rename,shuffle,shared", "stock_again": None}


def run(bench, mode: str, cache_root: str, own: str = "local_load", prepared=None, number: int = 0) -> dict:
    """``kernels.run_mode`` with this script's modes (the plugin owning ``MODES[mode]``)."""
    from kernels import round_label, run_mode

    from linear_layouts.passes import hook
    hook.reset_stats()   # the "plugin" line counts this run's kernels only
    if MODES[mode] is None:
        return run_mode(bench, "stock", cache_root, label=round_label(mode, number), prepared=prepared)
    only = MODES[mode].replace("local_load", "local_load,local_store,local_alloc" if own == "all" else own)
    return run_mode(bench, "linear", cache_root, only=only, label=round_label(mode, number), prepared=prepared)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--no-mma-v2", action="store_true", help="leave Triton's choice of mma version alone")
    parser.add_argument("--own", choices=("local_load", "local_alloc", "all"), default="local_load",
                        help="which shared-memory op the second mode lowers with our islands (all: loads, "
                             "stores and allocations with a source)")
    parser.add_argument("--rounds", type=int, default=5, help="times each mode is timed, order rotated (default 5)")
    args = parser.parse_args(argv)
    if not args.no_mma_v2:
        os.environ["DISABLE_MMA_V3"] = "1"
    make_package_importable()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import torch
    import triton
    from kernels import _cases, run_rounds

    benches = [b for b in _cases() if b.name in KERNELS]
    cache_root = tempfile.mkdtemp(prefix="ll_local_load_kernels_")
    rows = []
    for bench in benches:
        prepared = bench.setup()      # one set of tensors for every mode (kernels.run_mode)

        def run_one(mode: str, number: int) -> dict:
            return run(bench, mode, cache_root, args.own, prepared, number)
        row = {"kernel": bench.name, **run_rounds(run_one, MODES, args.rounds)}
        rows.append(row)
        print(bench.name, {m: (round(row[m]["ms"], 4) if row[m].get("ok") else row[m].get("error")) for m in MODES},
              flush=True)
    header = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
              "DISABLE_MMA_V3": os.environ.get("DISABLE_MMA_V3", "unset"),
              "command": "python benchmarks/studies/local_load_kernels.py " + " ".join(argv or sys.argv[1:])}
    os.makedirs(args.out, exist_ok=True)
    stem = {"local_load": "local_load_kernels", "local_alloc": "local_alloc_kernels", "all": "local_ops_kernels"}[args.own]
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        json.dump({"header": header, "rows": rows}, f, indent=1)
    lines = [f"# Whole kernels: our {args.own} islands vs stock Triton", ""] + [f"- {k}: {v}" for k, v in header.items()]
    lines += ["", f"| kernel | stock ms | {args.own} ms | ratio | conversions-only ms | ratio | stock again (noise) | "
              "correct | plugin |", "|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for row in rows:
        s, ll, cv, again = (row[m] for m in MODES)
        if not (s.get("ok") and ll.get("ok")):
            lines.append(f"| {row['kernel']} | {s.get('ms', s.get('error'))} | {ll.get('ms', ll.get('error'))} | - | - | "
                         f"- | - | - | - |")
            continue
        r = ll["ms"] / s["ms"]
        ratios.append(r)
        lines.append(f"| {row['kernel']} | {s['ms']:.4f} | {ll['ms']:.4f} | {r:.3f} | "
                     f"{cv.get('ms', float('nan')):.4f} | {cv.get('ms', float('nan')) / s['ms']:.3f} | "
                     f"{again.get('ms', float('nan')) / s['ms']:.3f} | "
                     f"{all(row[m].get('correct') for m in MODES)} | {ll.get('plugin', '')} |")
    if ratios:
        lines += ["", f"Geometric mean {args.own} / stock: {geomean(ratios):.3f} over {len(ratios)} kernels."]
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
