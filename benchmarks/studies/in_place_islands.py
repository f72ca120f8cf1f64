"""Islands built in place: would Triton's own shared-memory ops, given our swizzle, compile to our
islands' code (CPU; run under triton 3.6, where sm_90 keeps islands)?

    .venv-compat/bin/python benchmarks/studies/in_place_islands.py --out benchmarks/results/in_place_islands_3.6.0.md

The question (issue 53, the compile-time bound): a compile with an island pays Triton's print of
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
    """PTX lines without comments, registers and labels renumbered (two compiles of the same code
    differ only there)."""
    lines = []
    for line in ptx.splitlines():
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        line = re.sub(r"%(r|rd|rs|p|f|fd|h|hh)\d+", r"%\1", line)
        lines.append(re.sub(r"\$L__BB\d+_\d+", "L", re.sub(r"\s+", " ", line)))
    return lines


def shared_mix(ptx: str) -> str:
    counts = Counter(SHARED_INSTRUCTIONS.findall(ptx))
    return ", ".join(f"{name.replace('.sync.aligned', '')} {n}" for name, n in sorted(counts.items()))


def offset_bases(plan, shape: list[int]) -> list[list[int]]:
    """The ``#ttg.shared_linear`` offset bases of a one-round shared-memory plan: its swizzle's
    in-dims in address order (vector, bank, segment), each element index written as coordinates
    (the flattened index has dim0 lowest, as ``HardwareLayout`` flattens)."""
    swizzle = plan.shared.smem_layout
    bases = []
    for dim in ("vector", "bank", "segment"):
        for (element,) in swizzle.bases.get(dim, []):
            coords = []
            for size in shape:
                coords.append(element % size)
                element //= size
            bases.append(coords)
    return bases


def in_place_text(path: str) -> tuple[str, int]:
    """The module of ``path`` with every conversion the default lowers through shared memory in
    one round rewritten in place (see the module docstring), printed; and how many were."""
    from triton._C.libtriton import gluon_ir

    from linear_layouts.lowering.plan import Method
    from linear_layouts.passes.ir.bindings import bindings, new_context
    from linear_layouts.passes.ir.snapshot import snapshot_of
    from linear_layouts.passes.lower_conversions import LowerConversions, plan_module

    context = new_context()
    handle = bindings().parse_mlir_module(path, context)
    handle.context = context
    snapshot = snapshot_of(handle, handle.str(), os.path.basename(path))
    builder = gluon_ir.GluonOpBuilder(context)
    rewritten = 0
    for op, outcome in plan_module(snapshot, LowerConversions(), gate_first=True):
        plan = outcome.plan
        if op.name != "ttg.convert_layout" or plan is None or plan.method is not Method.SHARED \
                or plan.shared.num_rounds != 1 or plan.scope.name == "BLOCK":
            continue
        source, result = op._handle.get_operand(0), op._handle.get_result(0)
        shape = op.results[0].tensor_type.shape
        element = _element_type(builder, op.results[0].tensor_type.element_type)
        layout = builder.get_shared_linear_layout(offset_bases(plan, list(shape)), [], 16)
        buffer_type = builder.get_shared_mem_desc_ty(element, list(shape), layout, list(shape))
        builder.set_insertion_point_after(op._handle)
        buffer = builder.create_local_alloc(buffer_type)
        builder.create_local_store(buffer, source)
        result.replace_all_uses_with(builder.create_local_load(result.get_type(), buffer))
        rewritten += 1
    return str(handle), rewritten


def _element_type(builder, name: str):
    return {"bf16": builder.get_bf16_ty, "f16": builder.get_half_ty, "f32": builder.get_float_ty,
            "i32": builder.get_int32_ty, "i64": builder.get_int64_ty, "i8": builder.get_int8_ty,
            "i16": builder.get_int16_ty, "i1": builder.get_int1_ty}[name]()


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
