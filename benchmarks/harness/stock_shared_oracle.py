"""Stock Triton's shared-memory instructions for a conversion, predicted
(``lowering/choosing/stock_shared.py``) against Triton's own PTX (CPU only; run it with the
triton release the prediction describes, 3.6; run as ``plan_choice.py stock-shared``).

    python benchmarks/plan_choice.py stock-shared --seed 977 --count 300 \
        --out benchmarks/results/stock_shared_oracle_977_3.6.0.md
    python benchmarks/plan_choice.py stock-shared --corpus test/lit/corpus/fla --count 0 \
        --out benchmarks/results/stock_shared_oracle_fla_3.6.0.md

Two questions, per conversion that stock lowers through shared memory:

1. does stock use ``stmatrix``/``ldmatrix``: ``stock_matrix_pairs`` (a matrix pair fits) against
   the PTX;
2. is our planner's pick stock's own code: ``is_stock_twin`` against the instructions of both:
   stock's from the PTX (``st.shared``/``ld.shared`` and their widths, ``stmatrix``/``ldmatrix``),
   ours from the plan.  A *false twin* (predicted, and the instructions differ) would send to
   stock a conversion our pick may gain on; a missed one only keeps an island that ties.

Conversions: ``--seed``/``--count``, drawn by ``harness.plan_contexts.fresh_cases`` (the
generator of the timed draws), each in the kernel that times it (``conversion_cases.kernel_ttgir``);
``--corpus DIR``, every ``*.cuda90.ttgir`` kernel there.  Each kernel is compiled by
``triton.compile`` from its TTGIR with its conversions marked, and each conversion's instructions
are read off the PTX by its mark (``tools.report.final_code``).  ``--json PATH`` writes the tally.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
import time
from collections import Counter

from harness.common import require_package  # noqa: E402

NAMES = ("st.shared", "ld.shared", "stmatrix", "ldmatrix")


def plan_mix(plan) -> tuple[Counter, Counter]:
    """Our plan's shared-memory instructions: (count by name, count by bits per lane of the
    vector accesses)."""
    from linear_layouts.lowering.element_type import storage_bits_of
    from linear_layouts.lowering.instructions import AccessForm, AccessKind
    from linear_layouts.lowering.plan import SharedAccess

    names, bits = Counter(), Counter()
    element_bits = storage_bits_of(plan.element_bits)
    for op in plan.shared.ops:
        if not isinstance(op, SharedAccess):
            continue
        store = op.kind is AccessKind.STORE
        if op.form is AccessForm.VECTOR:
            names["st.shared" if store else "ld.shared"] += 1
            bits[len(op.registers) * element_bits] += 1
        else:
            names["stmatrix" if store else "ldmatrix"] += 1
    return names, bits


def code_mix(mix) -> tuple[Counter, Counter]:
    """A ``tools.report.final_code.CodeMix`` of one conversion as a mix."""
    return (Counter({n: c for n, c in mix.counts.items() if n in NAMES and c}),
            Counter({b: c for b, c in mix.shared_bits.items() if c}))


class Tally:
    def __init__(self):
        self.matrix = Counter()      # (predicted, used) -> conversions
        self.twin = Counter()        # (predicted twin, same instructions) -> conversions
        self.false_twins, self.unfollowed, self.errors = [], 0, []

    def as_json(self) -> dict:
        return {"matrix": [[p, u, n] for (p, u), n in self.matrix.items()],
                "twin": [[p, same, n] for (p, same), n in self.twin.items()],
                "false_twins": [name for name, *_ in self.false_twins], "errors": self.errors,
                "unfollowed": self.unfollowed}

    def add(self, name: str, src, dst, bits: int, target, stock: tuple[Counter, Counter]) -> None:
        from linear_layouts.lowering import Unsupported, plan_conversion
        from linear_layouts.lowering.choosing.stock_shared import is_stock_twin, stock_matrix_pairs
        from linear_layouts.lowering.plan import Method

        names, _ = stock
        if not (names["st.shared"] or names["stmatrix"]):
            return                                    # stock does not go through shared memory
        pairs = stock_matrix_pairs(src, dst, bits, target)
        if pairs is None:
            self.unfollowed += 1
            return
        self.matrix[(bool(pairs), bool(names["stmatrix"] or names["ldmatrix"]))] += 1
        plan = plan_conversion(src, dst, bits, target)
        if isinstance(plan, Unsupported) or plan.method is not Method.SHARED or plan.shared is None:
            return
        ours = plan_mix(plan)
        same = ours == stock
        twin = is_stock_twin(plan)
        self.twin[(twin, same)] += 1
        if twin and not same:
            self.false_twins.append((name, dict(stock[0]), dict(stock[1]), dict(ours[0]), dict(ours[1])))


def conversion_mixes_of(ttgir: str) -> list:
    """The per-conversion instructions (``tools.report.final_code.CodeMix``) of stock's PTX for a TTGIR
    module, in the order of its conversions; raises what ``triton.compile`` raises."""
    from triton.backends.compiler import GPUTarget
    from linear_layouts.tools.report.final_code import compile_ttgir, conversion_mixes, mark_conversions

    marked, count = mark_conversions(ttgir)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ttgir")
        with open(path, "w", encoding="utf-8") as f:
            f.write(marked)
        ptx = compile_ttgir(path, GPUTarget("cuda", 90, 32), None).asm["ptx"]
    return conversion_mixes(ptx, "nvidia", count)


def fresh(tally: Tally, seed: int, count: int) -> None:
    import triton
    from harness import plan_contexts
    from harness.conversion_cases import kernel_ttgir, release
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering import target_named

    version = release(triton.__version__)
    target = target_named("sm_90")
    for case in plan_contexts.fresh_cases(seed, count):
        try:
            (mix,) = conversion_mixes_of(kernel_ttgir(case))
        except Exception as error:   # the Triton boundary: a kernel it cannot compile is listed
            tally.errors.append((case.name, (str(error).strip().splitlines() or ["?"])[-1][:160]))
            continue
        shape = tuple(case.shape)
        tally.add(case.name, to_linear_layout(case.src, shape, conventions=version),
                  to_linear_layout(case.dst, shape, conventions=version), case.bits, target, code_mix(mix))


def corpus(tally: Tally, directory: str) -> None:
    from linear_layouts.lowering import target_named
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.op_requests import conversion_between

    target = target_named("sm_90")
    for path in sorted(glob.glob(os.path.join(directory, "*.cuda90.ttgir"))):
        name = os.path.basename(path).split(".")[0]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            mixes = conversion_mixes_of(text)
        except Exception as error:   # the Triton boundary: a kernel it cannot compile is listed
            tally.errors.append((name, (str(error).strip().splitlines() or ["?"])[-1][:160]))
            continue
        converts = [op for op in parse_module(text).walk() if op.name == "ttg.convert_layout"]
        for i, (op, mix) in enumerate(zip(converts, mixes)):
            conversion = conversion_between(op.operands[0], op.results[0], 32, target, op)
            if isinstance(conversion, str):
                continue
            tally.add(f"{name} #{i}", conversion.src, conversion.dst, conversion.bits, target, code_mix(mix))


def report(tally: Tally, command: str, seconds: float) -> str:
    import triton

    m, t = tally.matrix, tally.twin
    lines = ["# Stock Triton's shared-memory instructions: predicted against its PTX", "",
             f"Produced by `python benchmarks/plan_choice.py stock-shared {command}` with triton "
             f"{triton.__version__} ({seconds:.0f} s, CPU).  What it checks: the study's docstring.", "",
             f"Conversions stock lowers through shared memory: {sum(m.values())} "
             f"(and {tally.unfollowed} whose register directions are not single bits, not followed).", "",
             "| stmatrix/ldmatrix | stock uses them | stock does not |", "|---|---:|---:|",
             f"| predicted | {m[(True, True)]} | {m[(True, False)]} |",
             f"| not predicted | {m[(False, True)]} | {m[(False, False)]} |", "",
             "Our planner's shared-memory pick against stock's instructions:", "",
             "| | the same instructions | others |", "|---|---:|---:|",
             f"| predicted twin | {t[(True, True)]} | {t[(True, False)]} |",
             f"| not predicted | {t[(False, True)]} | {t[(False, False)]} |", ""]
    if tally.false_twins:
        lines += ["False twins (stock's names, widths; ours):", ""]
        lines += [f"* {name}: stock {a} {b}; ours {c} {d}" for name, a, b, c, d in tally.false_twins]
    lines += [f"* not compiled: {name}: {error}" for name, error in tally.errors]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="plan_choice.py stock-shared", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=919)
    parser.add_argument("--count", type=int, default=300, help="fresh conversions (0: none)")
    parser.add_argument("--corpus", default="", help="a folder of *.cuda90.ttgir kernels")
    parser.add_argument("--out", default="")
    parser.add_argument("--json", default="", help="write the tally here (the tests read it)")
    args = parser.parse_args(argv)
    require_package()
    began = time.time()
    tally = Tally()
    if args.count:
        fresh(tally, args.seed, args.count)
    if args.corpus:
        corpus(tally, args.corpus)
    text = report(tally, " ".join(argv if argv is not None else sys.argv[1:]), time.time() - began)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(tally.as_json(), f)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
