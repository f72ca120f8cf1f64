"""Does an island of ours change the final code of an i1 no-op or register renaming?  (CPU only.)

    .venv/bin/python benchmarks/studies/i1_forwarding.py --out benchmarks/results/i1_forwarding_3.9.0.md
    .venv-compat/bin/python benchmarks/studies/i1_forwarding.py --out benchmarks/results/i1_forwarding_3.6.0.md

A ``ttg.convert_layout`` that stock Triton forwards without an instruction (the two layouts are
one map, or the conversion only renames registers: ``stock_lowering.stock_moves_nothing``) is
left to Triton: an island of ours would forward the values too, and would only cost compile
time.  i1 was once kept as an exception (stock's kernel around such an i1 conversion was seen to
hold selects ours did not).  This script asks that question of every release, on whole kernels:

* the conversions: every distinct i1 conversion of the committed corpus (``test/lit/corpus``:
  the project's kernels, Liger-Kernel's and flash-linear-attention's), and ``--count`` random
  ones per target (``tools.fuzz.conversion_fuzz.random_case`` drawn from ``--seed``, made i1), kept
  where stock moves nothing;
* each one's single-conversion kernel (load, convert, store) is compiled for its target twice in
  a forked child: stock Triton, and the plugin's pipeline with the choice off
  (``LINEAR_LAYOUTS_STOCK_GATE=off``: our no-op or renaming island);
* the two final codes (PTX or AMDGCN) are compared instruction by instruction (opcode counts),
  and by ``stock_dominance``'s costly kinds.

The rule it checks (``stock_lowering.stock_moves_nothing``): the two codes differ only where a
side holds copies of a register (a zero register basis) and the release's LLVM struct keeps every
copy (before triton 3.9); those stay ours, the rest go to Triton.  The report lists every
conversion whose two codes differ, and the run fails (exit 1) where a pair the plugin leaves to
Triton differs.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter

from timed_rows import publish, require_package  # noqa: E402

TARGETS = ("sm_90", "sm_80", "gfx942")


def opcode_counts(code: str) -> Counter:
    """How many times each instruction appears in PTX or AMDGCN (directives, labels and
    comments aside; a guard predicate ``@%p1`` is not part of the name)."""
    counts: Counter = Counter()
    for raw in code.splitlines():
        line = raw.split("//", 1)[0].split(";;", 1)[0].strip()
        if not line or line.startswith((".", "$", "{", "}", ";")) or line.endswith(":"):
            continue
        if line.startswith("@"):
            line = line.split(None, 1)[1] if " " in line else ""
        if line:
            counts[line.split()[0].rstrip(";")] += 1
    return counts


def candidate_rows(seed: int, count: int):
    """Every distinct i1 conversion of the corpus (held-out folders too) and ``count`` random
    i1 ones per target, that stock forwards without an instruction."""
    import glob

    import stock_dominance as sd
    from linear_layouts.lowering.choosing.stock_lowering import holds_register_copies, stock_moves_nothing
    from linear_layouts.passes.ir.bindings import installed_conventions
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    from linear_layouts.tools.fuzz.conversion_fuzz import random_case

    rows = []
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "test", "lit", "corpus")
    for path in sorted(glob.glob(os.path.join(root, "*", "*.ttgir"))):
        folder, name = os.path.basename(os.path.dirname(path)), os.path.basename(path)
        target = sd.CORPUS_TARGETS.get(folder) or next((t for f, t in sd.CORPUS_TARGETS.items() if f in name), None)
        for shape, element, src, dst, warps in sd.conversions_in(open(path).read()):
            if element == "i1" and len(shape) <= 2 and target in TARGETS:
                rows.append(sd.Row(f"{folder}/{name}", target, element, shape, warps, src, dst))
    for i in range(count):
        for target in TARGETS:
            case = random_case(random.Random(f"{seed}:{i}:{target}"), target)
            rows.append(sd.Row(f"seed{seed}/{i}", target, "i1", tuple(case.shape), case.num_warps, case.src, case.dst))
    seen, kept = set(), []
    for row in rows:
        key = (row.target, row.shape, row.src, row.dst, row.num_warps)
        if key in seen:
            continue
        seen.add(key)
        try:
            src, dst = tensor_layout_of(row.src, row.shape), tensor_layout_of(row.dst, row.shape)
            scope = stock_moves_nothing(src, dst, 1, row.target)
        except Exception:  # noqa: BLE001 - layouts this release rejects: not a forwarding pair
            continue
        if scope is not None:
            row.method = str(scope)
            row.reason = "copies" if holds_register_copies(src) or holds_register_copies(dst) else ""
            unique_struct = installed_conventions().struct_holds_unique_registers
            row.taken = stock_moves_nothing(src, dst, 1, row.target, unique_struct) is None   # stays ours
            kept.append(row)
    return kept


def compare(row, workdir: str) -> "tuple[dict, dict, dict] | str":
    """(opcode differences ours - stock, stock's costly kinds, ours') of ``row``'s kernel, or
    why it could not be compiled."""
    import stock_dominance as sd
    from linear_layouts.lowering.target import target_named
    from linear_layouts.tools.report.final_code import lower_pipeline, mark_conversions
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

    target = target_named(row.target)
    text = single_convert_ttgir(row.shape, row.element_type, row.src, row.dst, row.num_warps, row.target)
    marked, _ = mark_conversions(text)
    path = os.path.join(workdir, "kernel.ttgir")
    with open(path, "w") as f:
        f.write(marked)
    try:
        stock = sd._compile(path, target, None)
        os.environ["LINEAR_LAYOUTS_STOCK_GATE"] = "off"     # our island, inherited by the forked child
        try:
            ours = sd._compile(path, target, lower_pipeline())
        finally:
            os.environ.pop("LINEAR_LAYOUTS_STOCK_GATE", None)
    except Exception as error:  # noqa: BLE001 - recorded in the report
        return str(error).strip().splitlines()[-1][:160] if str(error).strip() else type(error).__name__
    a, b = opcode_counts(stock), opcode_counts(ours)
    differences = {name: b[name] - a[name] for name in sorted(set(a) | set(b)) if a[name] != b[name]}
    return differences, sd.costly_of_code(stock, target), sd.costly_of_code(ours, target)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=7301)
    parser.add_argument("--count", type=int, default=400, help="random conversions drawn per target")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    require_package()
    import triton

    command = "python benchmarks/studies/i1_forwarding.py " + " ".join(argv if argv is not None else sys.argv[1:])
    began = time.time()
    rows = candidate_rows(args.seed, args.count)
    same, differ, failed = [], [], []
    with tempfile.TemporaryDirectory(prefix="ll_i1_") as workdir:
        for i, row in enumerate(rows):
            result = compare(row, workdir)
            if isinstance(result, str):
                failed.append((row, result))
            elif result[0]:
                differ.append((row, result))
            else:
                same.append(row)
            print(f"[{i + 1}/{len(rows)}] {row.name} {row.target}: "
                  f"{'failed' if isinstance(result, str) else 'differs' if result[0] else 'same'}",
                  file=sys.stderr, flush=True)
    by_target = Counter(row.target for row in rows)
    copies = [row for row in rows if row.reason == "copies"]
    left_and_differ = [row for row, _ in differ if not row.taken]
    lines = [f"# i1 no-ops and renamings: stock's final code against our island's (triton {triton.__version__})", "",
             f"Produced by `{command}` ({time.time() - began:.0f} s, CPU).  What it compares: the docstring of "
             "`benchmarks/studies/i1_forwarding.py`.", "",
             f"* i1 conversions stock forwards without an instruction: **{len(rows)}** "
             f"({', '.join(f'{t}: {n}' for t, n in sorted(by_target.items()))}; "
             f"{sum(r.method == 'none' for r in rows)} no-ops, {sum(r.method == 'register' for r in rows)} renamings)",
             f"* the same instructions in both kernels: **{len(same)}**",
             f"* different: **{len(differ)}**; not compiled: {len(failed)}",
             f"* a side holds copies of a register: {len(copies)}, of which {sum(r.reason == 'copies' for r, _ in differ)} "
             f"differ; without copies: {len(rows) - len(copies)}, of which "
             f"{sum(r.reason != 'copies' for r, _ in differ)} differ",
             f"* the plugin (this release) keeps {sum(r.taken for r in rows)} of them ours and leaves "
             f"{sum(not r.taken for r in rows)} to Triton; of those left, **{len(left_and_differ)}** differ (must be 0)", ""]
    if differ:
        lines += ["| conversion | target | shape | warps | source | destination | copies | left to Triton | "
                  "ours - stock | stock's costly | ours |", "|---|---|---|---:|---|---|---|---|---|---|---|"]
        for row, (differences, stock, ours) in differ:
            shown = lambda counts: " ".join(f"{k}={v}" for k, v in counts.items() if v) or "-"   # noqa: E731
            lines.append(f"| {row.name} | {row.target} | {list(row.shape)} | {row.num_warps} | `{row.src}` | "
                         f"`{row.dst}` | {'yes' if row.reason else 'no'} | {'no' if row.taken else 'yes'} | "
                         f"{' '.join(f'{k} {v:+d}' for k, v in differences.items())} | "
                         f"{shown(stock)} | {shown(ours)} |")
        lines.append("")
    for row, why in failed:
        lines.append(f"* not compiled: {row.name} {row.target} {list(row.shape)}: {why}")
    publish("\n".join(lines), args.out)
    return 1 if left_and_differ else 0


if __name__ == "__main__":
    sys.exit(main())
