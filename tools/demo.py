"""`make demo` (``ll-demo``): what linear layouts do to real Triton kernels, on the CPU.

The main job:

1. compile every bundled kernel (``examples/kernels.py``: softmax, layer norm, matmul,
   attention, ...) for sm_90 and gfx942 with ``triton.compile`` - no GPU needed;
2. for every ``ttg.convert_layout`` Triton's layout passes left in the TTGIR, print one row
   (``tools.report.conversion_report``): where it is, its types, how far the data moves (scope), the
   lowering our planner chose, its cost per warp, and whether the plan is verified;
3. when ``ll-lower-conversions`` is available, compile each kernel again with
   ``linear_layouts.enable()`` and count the data-movement instructions of the final PTX /
   AMDGCN next to stock Triton's;
4. draw the most interesting plans (``ll-viz --plan`` pictures) into ``--out`` (``demo-out/``);
5. sum up.

``ll-demo --tour`` is the algebra tour: the paper's Figure 1 layout, its matrix over F2 and one
conversion computed with ``invert_and_compose``.

Run it with ``ll-demo`` or ``python -m linear_layouts.tools.demo``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from linear_layouts.dialect import LinearLayout
from linear_layouts.lowering.plan import Method
from linear_layouts.lowering.target import GFX942, SM90, Target, target_named
from linear_layouts.tools.cli import ArgumentParser, UsageError

# The demo's two targets: triton.compile's GPUTarget arguments and the planner's target name.
DEMO_TARGETS: dict[str, Target] = {t.name: t for t in (SM90, GFX942)}


@dataclass
class KernelResult:
    """One bundled kernel compiled for one target: its conversions, and the final code's
    data-movement counts with stock Triton and with our lowering."""

    kernel: str
    target: str
    rows: list = field(default_factory=list)          # conversion_report.ConversionRow
    stock_counts: dict = field(default_factory=dict)
    ours_counts: Optional[dict] = None                 # None: not compiled with the plugin
    ours_problem: str = ""                             # why compiling with the plugin failed
    error: str = ""                                    # why the stock compile failed


# ----------------------------------------------------------------------------- compiling

def bundled_kernels(names: Optional[list[str]] = None):
    """The kernels of ``examples/kernels.py`` (all, or those named)."""
    try:
        from linear_layouts.examples.kernels import KERNELS
    except ImportError as error:
        raise SystemExit(f"ll-demo: error: the bundled kernels (examples/kernels.py) are not installed: {error}")
    if not names:
        return KERNELS
    known = {k.name: k for k in KERNELS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"ll-demo: error: unknown kernel {unknown[0]!r} (bundled: {', '.join(known)})")
    return [known[n] for n in names]


def gpu_target(target: str):
    return target_named(target).gpu_target()


def compile_stock(kernel, target: str):
    """Stock Triton, from the Python source: the compiled kernel (its ``asm`` has every stage)."""
    import triton
    from triton.compiler import ASTSource

    signature = dict(kernel.signature)
    signature.update({name: "constexpr" for name in kernel.constexprs})
    source = ASTSource(kernel.function, signature, constexprs=kernel.constexprs)
    options = {"num_warps": kernel.num_warps, **kernel.options}
    return triton.compile(source, target=gpu_target(target), options=options)


def compile_ours(ttgir: str, target: str, workdir: str, name: str) -> str:
    """Our lowering: Triton's own TTGIR recompiled from a file with ``linear_layouts.enable()``
    (our pass runs before Triton's ``make_llir``).  Returns the final PTX / AMDGCN."""
    import triton

    from linear_layouts.passes.drop_in import hook

    path = os.path.join(workdir, f"{name}-{target}.ttgir")
    with open(path, "w") as f:
        f.write(ttgir)
    hook.enable()
    always = triton.knobs.compilation.always_compile
    triton.knobs.compilation.always_compile = True    # a cached binary would skip our passes and their stats()
    try:
        compiled = triton.compile(path, target=gpu_target(target))
    finally:
        triton.knobs.compilation.always_compile = always
        hook.disable()
    return compiled.asm[target_named(target).assembly_stage]


def lowering_pass_available() -> bool:
    from linear_layouts.passes.registry import registered_passes
    return "ll-lower-conversions" in registered_passes()


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:160]


def run_kernel(kernel, target: str, with_ours: bool, workdir: str) -> KernelResult:
    """Compile ``kernel`` for ``target``, report its conversions, and (``with_ours``) count the
    final code's instructions with and without our lowering.  Never raises: problems are
    recorded in the result (the demo's table says what went wrong, per kernel)."""
    from linear_layouts.tools.report.conversion_report import count_instructions, report_conversions

    result = KernelResult(kernel.name, target)
    code_stage, vendor = target_named(target).assembly_stage, target_named(target).vendor
    try:
        compiled = compile_stock(kernel, target)
    except Exception as error:  # the Triton boundary (any exception type): a release that cannot compile it
        result.error = f"stock compile failed: {_one_line(error)}"
        return result
    ttgir = compiled.asm["ttgir"]
    result.rows = report_conversions(ttgir, target, kernel=kernel.name, filename=f"{kernel.name}.ttgir")
    result.stock_counts = count_instructions(compiled.asm[code_stage], vendor)
    if with_ours:
        try:
            result.ours_counts = count_instructions(compile_ours(ttgir, target, workdir, kernel.name), vendor)
        except Exception as error:  # the Triton boundary again: the table says which kernel failed
            result.ours_problem = f"compile with linear_layouts.enable() failed: {_one_line(error)}"
    return result


# ----------------------------------------------------------------------------- printing

CONVERSION_HEADER = ["kernel", "location", "types", "scope", "lowering", "instructions per warp", "conflicts",
                     "scratch", "verified"]


def conversion_table(results: list[KernelResult]) -> list[str]:
    """One row per convert of the kernels of one target (``results`` are all for one target)."""
    from linear_layouts.tools.report.conversion_report import format_table

    rows = []
    for result in results:
        if result.error:
            rows.append([result.kernel, "-", "-", "-", "-", "-", "-", "-", result.error])
        elif not result.rows:
            rows.append([result.kernel, "-", "(no ttg.convert_layout)", "-", "-", "-", "-", "-", "-"])
        for row in result.rows:
            conflicts = "-" if row.plan is None or row.plan.shared is None else str(row.bank_conflicts)
            scratch = f"{row.scratch_bytes} B" if row.scratch_bytes else "-"
            rows.append([row.kernel, row.location, row.types, row.scope, row.lowering, row.instructions,
                         conflicts, scratch, row.verified])
    return format_table(CONVERSION_HEADER, rows)


def final_code_table(results: list[KernelResult]) -> list[str]:
    from linear_layouts.tools.report.conversion_report import counts_text, format_table

    rows = []
    for result in results:
        if result.error:
            continue
        ours = result.ours_problem or (counts_text(result.ours_counts) if result.ours_counts is not None else "-")
        rows.append([result.kernel, result.target, counts_text(result.stock_counts), ours])
    return format_table(["kernel", "target", "stock Triton", "with linear_layouts.enable()"], rows)


def interesting_rows(results: list[KernelResult]) -> list:
    """The plans worth a picture: per target, the shared-memory plan with the most scratch
    bytes, and the shuffle plan with the most shuffle instructions."""
    chosen = []
    for target in DEMO_TARGETS:
        rows = [r for res in results if res.target == target for r in res.rows if r.plan is not None]
        shared = [r for r in rows if r.plan.method is Method.SHARED]
        shuffles = [r for r in rows if r.plan.method is Method.SHUFFLE]
        if shared:
            chosen.append(max(shared, key=lambda r: r.scratch_bytes))
        if shuffles:
            chosen.append(max(shuffles, key=lambda r: len(r.plan.shuffle.rounds)))
    return chosen


def matplotlib_missing() -> bool:
    """True where matplotlib cannot be imported: it draws the pictures, and the demo runs
    without them (everything else it shows is text)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return True
    return False


def draw_pictures(results: list[KernelResult], out_dir: str) -> list[str]:
    from linear_layouts.tools.viewers.plan_view import draw_plan

    os.makedirs(out_dir, exist_ok=True)
    written = []
    for row in interesting_rows(results):
        path = os.path.join(out_dir, f"{row.kernel}-{row.plan.target.name}-{row.plan.method}.png")
        draw_plan(row.plan, path, row.what)
        written.append(f"{path}: {row.what}")
    return written


def counted(number: int, noun: str) -> str:
    """``1 kernel``, ``8 kernels``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def summary(results: list[KernelResult], plugin=None) -> list[str]:
    """The closing lines: conversions, the verified plans by kind, and (``plugin``: the drop-in's
    ``stats()`` after the same kernels compiled with ``enable()``) how many the plugin lowered,
    the rest left to Triton by the same decision a remark of ``enable(remarks=True)`` explains."""
    rows = [r for res in results for r in res.rows]
    lowered = Counter(r.lowering for r in rows if r.plan is not None)
    unplanned = sum(1 for r in rows if r.plan is None)
    noops = sum(1 for r in rows if r.is_noop)
    by_lowering = ", ".join(f"{name} {count}" for name, count in sorted(lowered.items(), key=lambda kv: -kv[1]))
    kernels, targets = len({r.kernel for r in results}), len({r.target for r in results})
    lines = [f"{counted(len(rows), 'conversion')} in {counted(kernels, 'kernel')} x {counted(targets, 'target')}; "
             f"{noops} {'is a no-op' if noops == 1 else 'are no-ops'} (the same linear map: nothing to do)",
             f"verified plans: {by_lowering or 'none'}; no plan: {unplanned}"]
    if plugin is not None:
        lines.append(f"with linear_layouts.enable(): {plugin.islands} of {plugin.conversions} lowered by us, "
                     f"{plugin.conversions - plugin.islands} left to Triton by the lowering choice "
                     "(enable(remarks=True) says why for each)")
    failed = [r for r in results if r.error or r.ours_problem]
    for r in failed:
        lines.append(f"note: {r.kernel} on {r.target}: {r.error or r.ours_problem}")
    return lines


def main_job(args) -> int:
    from ..passes.drop_in import environment
    environment.set_default("TRITON_DEFAULT_FP_FUSION", "1")  # quiet Triton 3.9's warning, keep its default
    started = time.time()
    kernels = bundled_kernels(args.kernel)
    targets = args.target or list(DEMO_TARGETS)
    with_ours = not args.no_compare and lowering_pass_available()
    print(f"ll-demo: {len(kernels)} bundled kernels (examples/kernels.py) compiled for {', '.join(targets)} "
          f"on the CPU; one row per ttg.convert_layout in Triton's TTGIR")
    results = []
    from ..passes.drop_in import plugin_stats
    plugin_stats.reset_stats()
    with tempfile.TemporaryDirectory(prefix="ll-demo-") as workdir:
        for target in targets:
            for kernel in kernels:
                results.append(run_kernel(kernel, target, with_ours, workdir))
    for target in targets:
        print()
        print(f"Conversions on {target_named(target).title}:")
        for line in conversion_table([r for r in results if r.target == target]):
            print(line)
    print()
    if with_ours:
        print("Data movement in the final code (whole kernel: conversions, reductions, loads and stores):")
        for line in final_code_table(results):
            print(line)
    else:
        print("(ll-lower-conversions is not registered: the final code of stock Triton only)")
        for line in final_code_table(results):
            print(line)
    if not args.no_pictures:
        print()
        if matplotlib_missing():
            print("Pictures need matplotlib (pip install matplotlib): none drawn")
        else:
            print(f"Pictures of the most interesting plans (ll-viz --plan), in {args.out}/:")
            for line in draw_pictures(results, args.out):
                print(f"  {line}")
    print()
    for line in summary(results, plugin_stats.stats() if with_ours else None):
        print(line)
    if not args.no_port:
        print()
        for line in port_section(None if args.no_pictures or matplotlib_missing() else args.out):
            print(line)
    if args.timing:
        print(f"done in {time.time() - started:.1f} s")
    return 0


def port_section(out) -> list:
    """The port of one bundled kernel (``linear_layouts.port``): the transpose for sm_90 as
    written in Triton, then in Gluon with its layouts written out, and the port's report (also
    written, with its pictures, to ``OUT/port-transpose/`` where the demo draws: ``out`` given)."""
    import inspect

    from linear_layouts.examples.kernels import transpose
    from ..passes.port.port import PortError, port
    from .port.report import report_text, write_report
    launch = dict(X="*fp32", Y="*fp32", M=64, N=64)
    lines = ["Porting to Gluon (ll-port examples/kernels.py:transpose --target sm90 --arg X='*fp32' "
             "--arg Y='*fp32' --arg M=64 --arg N=64):", "", "The Triton kernel:"]
    lines += ["    " + line for line in inspect.getsource(transpose.fn).rstrip().splitlines()]
    try:
        made = port(transpose, "sm90", details=True, **launch)
    except PortError as error:
        return lines + [f"ll-demo: the port failed: {error}"]
    kernel = made.source[made.source.index("@gluon.jit\ndef transpose"):]
    lines += ["", "Its port, every layout Triton chose written out:"] + ["    " + line for line in kernel.rstrip().splitlines()]
    if out is None:
        lines += ["", "The port's report:"]
    else:
        folder = os.path.join(out, "port-transpose")
        write_report(made, transpose, folder)
        lines += ["", f"The port's report (also {folder}/index.html, with a picture of each layout):"]
    lines += ["    " + line for line in report_text(made, transpose).rstrip().splitlines()]
    return lines


# ----------------------------------------------------------------------------- the algebra tour
OUT_DIMS = ["dim0", "dim1"]  # dim0 = row, dim1 = column


def figure1_layout() -> LinearLayout:
    """Figure 1 of the paper: each thread holds a 2x2 block (registers), lanes tile 4 columns
    of blocks by 8 rows of blocks, and the two warps sit side by side along the columns."""
    return LinearLayout.from_bases(
        {
            "register": [[0, 1], [8, 0]],
            "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
            "warp": [[0, 8]],
        },
        OUT_DIMS,
    )


def row_per_lane_layout() -> LinearLayout:
    """A destination layout for the conversion: each lane owns one row-segment of 4 columns
    in a row, lanes walk down the rows, and the two warps split the columns."""
    return LinearLayout.from_bases(
        {
            "register": [[0, 1], [0, 2]],
            "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4]],
            "warp": [[0, 8]],
        },
        OUT_DIMS,
    )


def ownership_grid(layout: LinearLayout, rows: int, cols: int) -> list[list[str]]:
    """For each element, 'w<warp>:t<lane>:r<reg>' of the first hardware coordinate holding it."""
    grid = [["" for _ in range(cols)] for _ in range(rows)]
    sizes = layout.in_dims
    for warp in range(sizes["warp"]):
        for lane in range(sizes["lane"]):
            for reg in range(sizes["register"]):
                out = layout.apply({"register": reg, "lane": lane, "warp": warp})
                cell = grid[out["dim0"]][out["dim1"]]
                if not cell:
                    grid[out["dim0"]][out["dim1"]] = f"t{lane}:r{reg}" + ("'" if warp else "")
    return grid


def print_grid(grid: list[list[str]], out) -> None:
    width = max(len(c) for row in grid for c in row)
    for row in grid:
        print("  " + " ".join(c.rjust(width) for c in row), file=out)


def describe_conversion(conversion: LinearLayout) -> list[str]:
    """Say in words which hardware levels a conversion layout (dst -> src coordinates) mixes.

    A hardware dim over which the conversion is *trivial* (identity on it, and kept apart from
    the others) needs no data movement across it; ``quotient`` removes such dims.  What is
    left is the minimal conversion: the levels the data really has to cross.
    """
    lines = []
    for dim in conversion.in_dim_names:
        touched = [o for o in conversion.out_dim_names if not conversion.sublayout_is_zero([dim], [o])]
        trivial = conversion.is_trivial_over([dim])
        lines.append(f"  destination {dim} bits come from source {' and '.join(touched) or 'nothing'} bits"
                     + ("  (trivial: no movement across " + dim + "s)" if trivial else ""))
    minimal = conversion
    for dim in ["warp", "lane", "register"]:
        reduced = minimal.quotient([dim])
        if reduced is None:
            break
        minimal = reduced
    lines.append(f"  minimal conversion moves data across: {', '.join(minimal.in_dim_names) or 'nothing (no-op)'}")
    return lines


def tour(out=None) -> int:
    """The algebra tour (``ll-demo --tour``)."""
    out = out or sys.stdout
    src = figure1_layout()
    print("== 1. The paper's Figure 1 layout: 16x16 tensor, 2x2 registers, 4x8 lanes, 2 warps ==", file=out)
    print(src, file=out)
    print("\nEvaluating it (L(x) = XOR of the bases of the set bits of x):", file=out)
    for reg, lane, warp in [(0, 0, 0), (1, 0, 0), (3, 5, 0), (2, 31, 1)]:
        where = src.apply({"register": reg, "lane": lane, "warp": warp})
        print(f"  register={reg} lane={lane:>2} warp={warp} -> (row {where['dim0']:>2}, col {where['dim1']:>2})",
              file=out)
    print("\nWho holds each element (t<lane>:r<register>, ' marks warp 1):", file=out)
    print_grid(ownership_grid(src, 16, 16), out)

    print("\n== 2. Its matrix over F2 ==", file=out)
    print("rows: tensor bits (dim0 bits 0-3, then dim1 bits 0-3); columns: hardware bits", file=out)
    columns = ["r0", "r1", "l0", "l1", "l2", "l3", "l4", "w0"]
    print("          " + " ".join(f"{c:>2}" for c in columns), file=out)
    row_names = [f"dim0.b{i}" for i in range(4)] + [f"dim1.b{i}" for i in range(4)]
    for name, row in zip(row_names, src.matrix()):
        print(f"  {name}  " + " ".join(f"{b:>2}" for b in row), file=out)
    print(f"surjective={src.is_surjective()} injective={src.is_injective()} "
          f"invertible={src.is_invertible()}", file=out)

    dst = row_per_lane_layout()
    print("\n== 3. A conversion, with invert_and_compose ==", file=out)
    print("Destination layout (4 consecutive columns per lane, lanes down the rows):", file=out)
    print(dst, file=out)
    conversion = dst.invert_and_compose(src)
    print("\nconversion = dst.invert_and_compose(src): for each destination (register, lane, warp),", file=out)
    print("the source (register, lane, warp) that holds the same element:", file=out)
    print(conversion, file=out)
    for line in describe_conversion(conversion):
        print(line, file=out)
    example = conversion.apply({"register": 3, "lane": 9, "warp": 1})
    print(f"\nFor example destination register 3 of lane 9 in warp 1 reads source register "
          f"{example['register']} of lane {example['lane']} in warp {example['warp']}.", file=out)
    print("Warps map to themselves, so this conversion stays inside each warp: registers and lanes", file=out)
    print("mix, which a warp shuffle (or warp-local shared memory) can do without a CTA barrier.", file=out)
    return 0



# ----------------------------------------------------------------------------- command line

def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog="ll-demo", description="Linear layouts on the bundled Triton kernels (no GPU).")
    p.add_argument("--tour", action="store_true", help="the algebra tour instead: Figure 1, its matrix, a conversion")
    p.add_argument("--out", default="demo-out", help="directory for the pictures (default demo-out)")
    p.add_argument("--kernel", action="append", help="only this bundled kernel (repeatable)")
    p.add_argument("--target", action="append", choices=list(DEMO_TARGETS), help="only this target (repeatable)")
    p.add_argument("--no-pictures", action="store_true", help="draw nothing")
    p.add_argument("--no-compare", action="store_true",
                   help="skip compiling with linear_layouts.enable() (no final-code comparison)")
    p.add_argument("--no-port", action="store_true", help="leave out the port of one kernel to Gluon")
    p.add_argument("--timing", action="store_true", help="print the total time at the end")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except UsageError as error:
        print(f"ll-demo: error: {error}", file=sys.stderr)
        return 1
    if args.tour:
        return tour()
    try:
        return main_job(args)
    except OSError as e:  # --out under a regular file, a read-only directory, ...
        where = f" '{e.filename}'" if getattr(e, "filename", None) else ""
        print(f"ll-demo: error: cannot write{where}: {e.strerror or e}", file=sys.stderr)
        return 1


def console_main() -> None:
    """The ``ll-demo`` console script: ``main`` and no teardown warnings of Triton's bindings
    after the Gluon port (``cli.end_process``)."""
    from .cli import end_process
    end_process(main())


if __name__ == "__main__":
    sys.exit(main())

