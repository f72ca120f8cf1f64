"""What a safe parse costs a process, by how much private memory the process holds: a forked
child, against the checker process (``passes/ir/parse_checker.py``).

    python benchmarks/studies/fork_and_checker.py                 # 0, 100, 300, 600 MB; 40 parses each
    python benchmarks/studies/fork_and_checker.py --out benchmarks/results/fork_and_checker_3.9.0.md

Every safe parse (``parse_module(..., safe=True)``: ll-opt's input, each rewrite a pass commits,
the report's and the advice's modules) parses the module once where a Triton abort cannot take
the caller down.  The process grows Python objects (lists of short strings, as a test suite's
or a notebook's heap holds) to each size, then parses one small module ``--parses`` times each
way; CPU is user + system of the process, of its forked children (``os.times``) and of the
checker (``/proc/<pid>/stat``: Linux only).  The checker is started before the timing (its start, one
per process, is printed on its own).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(HERE, "..", "..", "test", "lit", "attach-layouts", "amd-mfma.mlir")


def _cpu() -> float:
    """This process's CPU seconds, its waited-for children's (the forked parses), and the
    checker's (running: read from /proc)."""
    from linear_layouts.passes.ir import parse_checker

    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    checker = parse_checker._the_checker
    if checker is not None and checker._process is not None:
        with open(f"/proc/{checker._process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,100,300,600", help="MB of Python objects to add before each row")
    parser.add_argument("--parses", type=int, default=40)
    parser.add_argument("--out", help="write the table (Markdown) here as well")
    args = parser.parse_args(argv)

    import triton
    from linear_layouts.passes.ir.bindings import bindings, new_context
    from linear_layouts.passes.ir.parse_checker import _checker, private_memory
    from linear_layouts.passes.ir.sandbox import run_in_child

    new_context()
    path = os.path.abspath(MODULE)

    def parse_in_child() -> str:
        bindings().parse_mlir_module(path, new_context())
        return ""

    started, cpu = time.perf_counter(), _cpu()
    assert _checker().parse(path).ok
    start_line = (f"checker start and first parse: {time.perf_counter() - started:.2f} s wall, "
                  f"{_cpu() - cpu:.2f} s CPU")
    rows = ["| Python objects added, MB | private memory, MB | fork: CPU ms a parse | checker: CPU ms a parse |",
            "| ---: | ---: | ---: | ---: |"]
    ballast = []
    for size in (int(s) for s in args.sizes.split(",")):
        while len(ballast) < size * 10:            # about 100 KB a list
            ballast.append([str(i) for i in range(1000)])
        costs = []
        for parse in (lambda: run_in_child(parse_in_child, report_exception=False),
                      lambda: _checker().parse(path)):
            cpu = _cpu()
            for _ in range(args.parses):
                assert parse().ok
            costs.append((_cpu() - cpu) / args.parses * 1000)
        rows.append(f"| {size} | {private_memory() >> 20} | {costs[0]:.1f} | {costs[1]:.1f} |")
    header = (f"Safe parses of `{os.path.relpath(MODULE, os.path.join(HERE, '..', '..'))}`, "
              f"{args.parses} a row each way; triton {triton.__version__}, Python "
              f"{sys.version.split()[0]}, {os.cpu_count()} cores.\n`python benchmarks/studies/fork_and_checker.py`\n\n"
              f"{start_line}\n")
    text = header + "\n" + "\n".join(rows) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
