"""Does a count of accesses tell which conversions make LLVM's O3 slow on our module?  O3 of stock's
module and ours, with the island's shared accesses and the kernel's global ones, per fuzz case.

    python benchmarks/studies/llvm_slp_scan.py --seeds 1,2        # triton 3.9: every sm_* case of both seeds

For each sm_* case of ``benchmarks/compile_time.py fuzz`` (same seeds, same draws), the LLVM-dialect
modules Triton hands to LLVM are kept (``llvm_slp_probe.capture``: stock, and ours with the stock
gate off) and O3 is timed on each, interleaved, the fastest of ``--repeats``.  One line per case:
the counts of ``st.shared``/``ld.shared``/``bar.sync`` in our module, of ``ld.global`` /
``st.global`` lines, both O3 times and their ratio.  Cases whose island has the same counts but a
different ratio rule out a predicate on those counts (docs/compile-time.md).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path)
from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()

COUNTED = {"st.shared": r'"st\.shared', "ld.shared": r'"ld\.shared', "bar.sync": r'"bar\.sync',
           "ld.global": r"ld\.global", "st.global": r"st\.global"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--cases", type=int, default=8, help="compile_time_fuzz's --cases of that run")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    import llvm_slp_probe as probe
    from harness import compile_time_fuzz as fuzz
    for seed in (int(s) for s in args.seeds.split(",")):
        for index in range(args.cases * len(fuzz.TARGETS)):
            case = fuzz.drawn_case(seed, args.cases, index)
            if not case["target"].startswith("sm_"):
                continue
            directory = tempfile.mkdtemp(prefix="ll_slp_scan_")
            path = os.path.join(directory, "case.ttgir")
            with open(path, "w") as f:
                f.write(fuzz.case_text(case))
            modules = probe.capture(path, case["target"])
            counts = ", ".join(f"{name} {len(re.findall(pattern, modules['ours']))}" for name, pattern in COUNTED.items())
            arch = "sm_" + case["target"].split("_")[1] + ("a" if case["target"] == "sm_90" else "")
            seconds = {"stock": [], "ours": []}
            for _ in range(args.repeats):
                for mode in seconds:
                    seconds[mode].append(probe.optimize_seconds(modules[mode], directory, arch))
            stock, ours = min(seconds["stock"]), min(seconds["ours"])
            print(f"seed {seed} case {index} {case['kind']} {case['element']} {case['shape']}: {counts}; "
                  f"O3 stock {stock:.2f} s, ours {ours:.2f} s, ours / stock {ours / stock:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
