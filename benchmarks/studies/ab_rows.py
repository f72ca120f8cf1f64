"""Two runs of the same ``plan_choice.py --fresh ... --match ...`` rows, one before a change and
one after, side by side: what the change does to each row's ratio over stock (CPU only; the
timings are the runs').

Each run times stock too, so each row's ratio is of one run; the report compares ratios, never
times across runs.  A row counts as better or worse when its ratio moved by more than 1%.  The
runs come from two wheels on one GPU in one call, e.g.::

    pip install --force-reinstall before.whl && python benchmarks/plan_choice.py --fresh S1 S2 \\
        --count 60 --no-pick --rep 10 --match ROWS... --stem NAME_old --out DIR
    pip install --force-reinstall after.whl && ... --stem NAME_new --out DIR
    python benchmarks/studies/ab_rows.py --title "..." --pair held-out DIR/NAME_old.json \\
        DIR/NAME_new.json --out benchmarks/results/common_vector_both_ways.md
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from timed_rows import geomean, worst_ratio

MOVED = 0.01


def ratios_of(path: str) -> tuple[dict, list, dict]:
    """case -> ours/stock (the worse context), the command that wrote the run, its environment."""
    with open(path) as f:
        run = json.load(f)
    ratios = {row["case"]: worst_ratio(row, "ours") for row in run["rows"]}
    return {case: r for case, r in ratios.items() if r}, run.get("argv", []), run.get("environment", {})


def pair_lines(label: str, before_path: str, after_path: str) -> list[str]:
    before, _, env = ratios_of(before_path)
    after, _, _ = ratios_of(after_path)
    cases = [c for c in before if c in after]
    moved = [(c, before[c], after[c]) for c in cases if abs(after[c] - before[c]) > MOVED]
    lines = [f"**{label}** ({len(cases)} rows; {env.get('gpu', '?')}, triton {env.get('triton', '?')}): geomean "
             f"{geomean(before[c] for c in cases):.3f} -> **{geomean(after[c] for c in cases):.3f}**; above 1.05 "
             f"{sum(before[c] > 1.05 for c in cases)} -> {sum(after[c] > 1.05 for c in cases)}; better "
             f"{sum(a < b for _, b, a in moved)}, worse {sum(a > b for _, b, a in moved)} (by over 1%)", "",
             "| row | before | after |", "|---|---:|---:|"]
    lines += [f"| {c.split(':')[0]} {':'.join(c.split(':')[2:])} | {b:.3f} | {a:.3f} |" for c, b, a in moved]
    return lines + [""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--title", required=True)
    parser.add_argument("--pair", nargs=3, action="append", required=True, metavar=("LABEL", "BEFORE", "AFTER"))
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    lines = [f"# {args.title}", "",
             "Ours over stock per row (the worse of the chain and latency contexts), before and after, each "
             "ratio of one run; rows whose ratio moved by over 1% listed. Produced by `python "
             "benchmarks/studies/ab_rows.py " + shlex.join(sys.argv[1:] if argv is None else argv) + "`.", ""]
    for label, before, after in args.pair:
        lines += pair_lines(label, before, after)
    text = "\n".join(lines)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
