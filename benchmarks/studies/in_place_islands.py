"""Islands built in place: would Triton's own shared-memory ops, given our swizzle, compile to our
islands' code (CPU; run under triton 3.6, where sm_90 keeps islands)?

    .venv-compat/bin/python benchmarks/studies/in_place_islands.py --out benchmarks/results/in_place_islands_3.6.0.md

The question (the compile-time bound): a compile with an island pays Triton's print of
the module, our snapshot of it, the island's emission and simulation and the re-parse of the
edited text (docs/compile-time.md, "The floor the text round trip puts under a compile with an
island").  Triton's bindings create no LLVM-dialect ops, but ``gluon_ir.GluonOpBuilder`` does
create ``ttg.local_alloc``, ``ttg.local_store`` and ``ttg.local_load`` in place, with a
``#ttg.shared_linear`` layout.  A shared-memory plan of one round is such a layout (its
``smem_layout``: scratch offset -> element), so its conversion can be rewritten in place as

    %buf = ttg.local_alloc : () -> !ttg.memdesc<..., #ttg.shared_linear<{offset = OUR SWIZZLE}>, mutable>
    ttg.local_store %src, %buf
    %dst = ttg.local_load %buf          (the convert's uses moved to %dst)

with no print, no parse, and Triton's barrier analysis seeing the buffer.  What code comes out?
For every conversion of the corpus that ``enable()``'s default lowers through shared memory in
one round, each kernel is compiled three ways for sm_90: stock, ``enable()`` (our islands, as
shipped) and in place (Triton alone on the rewritten module); reported per kernel: whether the
in-place PTX equals stock's or ours (registers and labels renumbered) and the shared-memory
instructions of each.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED_INSTRUCTIONS = re.compile(r"(?:st|ld)matrix[a-z0-9.]*|(?:st|ld)\.shared\.[a-z0-9.]*|bar\.sync")


def normalized(ptx: str) -> list[str]:
    """PTX lines without comments and debug locations, registers and labels renumbered (two
    compiles of the same code, from files of other names, differ only there)."""
    lines = []
    for line in re.split(r"^\s*\.section\s+\.debug", ptx, maxsplit=1, flags=re.M)[0].splitlines():
        line = line.strip()
        if not line or line.startswith(("//", ".file", ".loc")):
            continue
        line = re.sub(r"%(r|rd|rs|p|f|fd|h|hh)\d+", r"%\1", line)
        lines.append(re.sub(r"\$L__BB\d+_\d+", "L", re.sub(r"\s+", " ", line)))
    return lines


def shared_mix(ptx: str) -> str:
    counts = Counter(SHARED_INSTRUCTIONS.findall(ptx))
    return ", ".join(f"{name.replace('.sync.aligned', '')} {n}" for name, n in sorted(counts.items()))


def in_place_text(path: str) -> tuple[str, int]:
    """The module of ``path`` with every conversion the default lowers through shared memory in
    one round rewritten in place, as the drop-in does (``passes.drop_in.in_place``), printed; and how many
    were."""
    from linear_layouts.passes.drop_in.in_place import in_place_module_text

    return in_place_module_text(open(path).read(), os.path.basename(path))


def compile_ptx(path: str, ours: bool) -> str:
    import triton
    from triton.backends.compiler import GPUTarget

    import linear_layouts

    if ours:
        linear_layouts.enable()
    try:
        return triton.compile(path, target=GPUTarget("cuda", 90, 32)).asm["ptx"]
    finally:
        linear_layouts.disable()


def study(corpus: str) -> list[dict]:
    rows = []
    for name in sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        if not name.endswith(".cuda90.ttgir") or "ttg.convert_layout" not in open(path).read():
            continue
        try:
            text, rewritten = in_place_text(path)
        except RuntimeError as error:       # a file this Triton does not parse
            print(f"{name}: skipped ({str(error).splitlines()[0][:80]})", flush=True)
            continue
        if not rewritten:
            continue
        with tempfile.TemporaryDirectory() as folder:
            in_place = os.path.join(folder, name)
            open(in_place, "w").write(text)
            ptx = {"stock": compile_ptx(path, False), "ours": compile_ptx(path, True),
                   "in place": compile_ptx(in_place, False)}
        same = {mode: normalized(ptx["in place"]) == normalized(ptx[mode]) for mode in ("stock", "ours")}
        rows.append({"kernel": name, "rewritten": rewritten, "same_as_stock": same["stock"],
                     "same_as_ours": same["ours"], "mix": {mode: shared_mix(p) for mode, p in ptx.items()}})
        print(f"{name}: {rewritten} in place; in-place PTX = stock's: {same['stock']}, = ours: {same['ours']}",
              flush=True)
    return rows


def report(rows: list[dict], command: str) -> str:
    import triton

    lines = ["# Islands built in place: Triton's shared-memory ops with our swizzle", "",
             f"Produced by `{command}` (CPU, triton {triton.__version__}, sm_90; what it does: the docstring of "
             "`benchmarks/studies/in_place_islands.py`).", "",
             f"* kernels with a one-round shared-memory island: {len(rows)}; conversions rewritten in place: "
             f"{sum(r['rewritten'] for r in rows)}",
             f"* in-place PTX identical to stock's: {sum(r['same_as_stock'] for r in rows)}; to ours: "
             f"{sum(r['same_as_ours'] for r in rows)}; to neither: "
             f"{sum(not r['same_as_stock'] and not r['same_as_ours'] for r in rows)}", "",
             "| kernel | in place | = stock | = ours | stock's shared-memory instructions | ours | in place |",
             "|---|---:|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['rewritten']} | {'yes' if r['same_as_stock'] else 'no'} | "
                     f"{'yes' if r['same_as_ours'] else 'no'} | {r['mix']['stock']} | {r['mix']['ours']} | "
                     f"{r['mix']['in place']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=os.path.join(REPO, "test", "lit", "corpus", "fla"))
    parser.add_argument("--out", default="", help="the report's path (default: print only)")
    args = parser.parse_args(argv)
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    rows = study(args.corpus)
    corpus = os.path.relpath(args.corpus, REPO)
    command = f"python benchmarks/studies/in_place_islands.py --corpus {corpus}" + (f" --out {args.out}" if args.out else "")
    text = report(rows, command)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
