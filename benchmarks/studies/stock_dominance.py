"""Stock's floor against stock's final code, and ours against stock's, per conversion (CPU only).

    .venv/bin/python benchmarks/studies/stock_dominance.py --seed 4301 --count 30 --kernels \
        --json /tmp/stock_dominance_3.9.0.jsonl --out benchmarks/results/stock_dominance_3.9.0.md
    .venv-compat/bin/python benchmarks/studies/stock_dominance.py --seed 4301 --count 30 --kernels \
        --json /tmp/stock_dominance_3.6.0.jsonl --out benchmarks/results/stock_dominance_3.6.0.md

For each conversion (fresh random ones, ``tools.fuzz.conversion_fuzz.random_case`` drawn from
``--seed``; with ``--kernels`` also every distinct conversion of the committed corpus,
``test/lit/corpus``: the demo's kernels and Liger-Kernel's), a single-conversion kernel (load, convert, store) is compiled
for the target twice in a forked child:

* with stock Triton: the costly instructions of the kernel (the load and the store around the
  convert issue none: no shuffle, shared access or barrier) are stock's; they are compared,
  kind by kind, with ``lowering.choosing.stock_bounds.stock_floor``:
  *exact*, *low* (the floor is below stock: allowed, it only costs a missed plan) or *high*
  (the floor is above stock: a bug, it could take a plan needing more than stock);
* with the plugin (``linear_layouts.enable()``'s pipeline, default options: the choice of
  ``lowering.choosing.fitted_model`` active): where it lowers the conversion, every kind in our kernel must be
  no more than in stock's; where it leaves a no-op or a register renaming to Triton because
  stock moves nothing (``lowering.choosing.stock_lowering.stock_moves_nothing``), stock's kernel
  must hold no costly instruction at all.

The run fails (exit 1) on a *high* floor, on a conversion the plugin takes that needs more
than stock of some kind (where no measured model decides), or on a conversion left to Triton as
moving nothing whose stock code moves something.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from timed_rows import publish, require_package  # noqa: E402

DEFAULT_TARGETS = ("sm_90", "sm_80", "gfx942")


@dataclass
class Row:
    name: str
    target: str
    element_type: str
    shape: tuple
    num_warps: int
    src: str
    dst: str
    stock: dict = field(default_factory=dict)      # stock's costly instructions (final code)
    floor: dict = field(default_factory=dict)      # stock_floor's
    ours: dict = field(default_factory=dict)       # ours (final code) where the plugin takes it
    taken: bool = False
    method: str = ""
    reason: str = ""
    error: str = ""

    def floor_verdicts(self) -> dict:
        """exact / low / high per kind; barriers as ``more_than`` compares them: CTA barriers, and
        all barriers together."""
        if not self.floor:
            return {}
        floor, stock = dict(self.floor), dict(self.stock)
        for counts in (floor, stock):
            counts["barriers"] = counts.pop("warp_barriers") + counts["cta_barriers"]
        return {kind: ("exact" if floor[kind] == n else "low" if floor[kind] < n else "high")
                for kind, n in stock.items()}

    def ours_more(self) -> list[str]:
        from linear_layouts.lowering.choosing.stock_bounds import Costly, more_than
        return more_than(Costly(**self.ours), Costly(**self.stock)) if self.taken and self.ours else []


_PTX_REGISTER = re.compile(r"%[a-z]+\d+")
_PTX_DATA_SOURCE = re.compile(r"^\s*(?:ld\.(?:volatile\.)?(?:global|shared|local)|ldmatrix|shfl\.sync)")


def _ptx_data_registers(code: str) -> set:
    """The PTX registers that hold (or derive from) tensor data: the results of loads and
    shuffles, and of anything computed from them.  A ``selp`` or ``prmt`` on index registers only
    (thread ids, constants) is address arithmetic that LLVM's instruction selection may write as
    a byte permute (``prmt.b32 %r36, %r35, 0, 0x7701U`` on ``tid & 3``), not data movement."""
    data: set = set()
    for _ in range(2):    # a second pass for the odd use before its definition in the text
        for raw in code.splitlines():
            line = raw.split("//", 1)[0].strip()
            if not line or line.startswith((".", "$", "{", "}")):
                continue
            line = re.sub(r"^@!?%p\d+\s+", "", line)    # a guard predicate is not an operand
            registers = _PTX_REGISTER.findall(line)
            if not registers:
                continue
            if _PTX_DATA_SOURCE.match(line):
                data.update(registers[:1] if "[" not in line.split(",", 1)[0] else [])
                if "{" in line.split("[", 1)[0]:   # ld ... { %r1, %r2 }, [addr]
                    data.update(_PTX_REGISTER.findall(line.split("[", 1)[0]))
                continue
            destination, sources = registers[0], registers[1:]
            if any(r in data for r in sources):
                data.add(destination)
    return data


# AMD's other cross-lane moves: LLVM's AMDGPU back end writes a shuffle with a fixed pattern as a
# DPP move (``v_mov_b32_dpp v6, v6 quad_perm:[1,0,3,2]``: stock's lane swap on gfx942), a swizzle
# or a permlane; they count as shuffles, as ds_bpermute does.
_AMD_CROSS_LANE = re.compile(r"^\s*(?:v_\w+_dpp\b|ds_swizzle_b32|v_permlane\w*|v_readlane_b32|v_writelane_b32)")


def _moves_data(raw: str, vendor: str, data: "set | None") -> bool:
    """Whether a select / permute instruction works on tensor data (always, on AMD: not traced)."""
    if vendor != "nvidia" or data is None:
        return True
    return any(r in data for r in _PTX_REGISTER.findall(raw.split("//", 1)[0])[1:])


def costly_of_code(code: str, target, line: "int | None" = None) -> dict:
    """Costly instructions of PTX / AMDGCN (``lowering.choosing.stock_bounds`` kinds), of the whole code
    or of the instructions under ``.loc`` line ``line``.  PTX selects and permutes count where
    they work on tensor data (``_ptx_data_registers``)."""
    from linear_layouts.tools.report.final_code import _LOC_DIRECTIVE, _classify
    from linear_layouts.lowering.choosing.stock_bounds import Costly

    counts = Counter({kind: 0 for kind in Costly.kinds()})
    data = _ptx_data_registers(code) if target.vendor == "nvidia" else None
    current = 0
    for raw in code.splitlines():
        directive = _LOC_DIRECTIVE.match(raw)
        if directive:
            current = int(directive.group(2))
            continue
        found = _classify(raw, target.vendor)
        if found is None and target.vendor == "amd" and _AMD_CROSS_LANE.match(raw):
            found = ("cross-lane", "shuffle", 0)
        if found is None or (line is not None and current != line):
            continue
        name, kind, bits = found
        if kind == "shuffle":
            counts["shuffles"] += 1
        elif kind == "cta_barrier":
            counts["cta_barriers"] += 1
        elif kind == "warp_barrier":
            counts["warp_barriers"] += 1
        elif kind == "alu":
            counts["selects"] += _moves_data(raw, target.vendor, data)
        else:
            wavefronts = bits if kind == "matrix" else \
                max(1, -(-target.warp_size * bits // (8 * target.wavefront_bytes)))
            store = name.startswith(("st", "ds_write"))
            counts["store_wavefronts" if store else "load_wavefronts"] += wavefronts
    return dict(counts)


def _compile(path: str, target, pipeline) -> str:
    from linear_layouts.passes.ir.sandbox import run_forked
    from linear_layouts.tools.report.final_code import compile_ttgir

    return run_forked(lambda: compile_ttgir(path, target.gpu_target(), pipeline).asm[target.assembly_stage])


def check(row: Row, workdir: str) -> Row:
    """Fill ``row``: stock's code, the floor, the plugin's decision and (if taken) ours."""
    from linear_layouts.lowering.emit.emit_llvm import island_element_type
    from linear_layouts.lowering.choosing.stock_bounds import stock_floor
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    from linear_layouts.passes.lower_conversions import lower_text
    from linear_layouts.tools.report.final_code import lower_pipeline, mark_conversions
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

    target = target_named(row.target)
    text = single_convert_ttgir(row.shape, row.element_type, row.src, row.dst, row.num_warps, row.target)
    try:
        src, dst = tensor_layout_of(row.src, row.shape), tensor_layout_of(row.dst, row.shape)
        floor = stock_floor(src, dst, island_element_type(row.element_type).logical_bits, target)
    except Exception as error:  # noqa: BLE001 - a layout this Triton rejects: recorded, not checked
        row.error = f"layouts: {type(error).__name__}: {str(error)[:160]}"
        return row
    row.floor = asdict(floor) if floor is not None else {}
    marked, _ = mark_conversions(text)
    path = os.path.join(workdir, "kernel.ttgir")
    with open(path, "w") as f:
        f.write(marked)
    try:
        stock_code = _compile(path, target, None)
    except Exception as error:  # noqa: BLE001 - stock fails: nothing to compare
        row.error = f"stock: {str(error).strip().splitlines()[-1][:160] if str(error).strip() else error}"
        return row
    # The whole kernel's: the rest of it (global loads and stores) has no shuffle, shared access
    # or barrier; and AMD's code does not keep the convert's line on all of its instructions.
    row.stock = costly_of_code(stock_code, target)
    _, outcomes = lower_text(text, filename=row.name)
    outcome = outcomes[0]
    row.taken, row.method, row.reason = outcome.lowered, str(outcome.method or ""), outcome.reason[:300]
    if row.taken:
        row.ours = costly_of_code(_compile(path, target, lower_pipeline()), target)
    return row


def random_rows(seed: int, count: int, targets) -> list[Row]:
    from linear_layouts.tools.fuzz.conversion_fuzz import random_case

    rows = []
    for i in range(count):
        for target in targets:
            case = random_case(random.Random(f"{seed}:{i}:{target}"), target)
            rows.append(Row(f"seed{seed}/{i}/{case.kind}", target, case.element_type, tuple(case.shape),
                            case.num_warps, case.src, case.dst))
    return rows


_ALIAS = re.compile(r"^(#[\w]+) = (#ttg\.[\w_]+<.*>)\s*$")
_CONVERT = re.compile(r"ttg\.convert_layout %\S+ : tensor<([\dx]+)x([^,]+), (.+)> -> tensor<[\dx]+x[^,]+, (.+)>(?: loc\(.*\))?\s*$")
_WARPS = re.compile(r'"ttg\.num-warps" = (\d+)')
CORPUS_TARGETS = {"cuda80": "sm_80", "cuda90": "sm_90", "gfx942": "gfx942"}
# Corpora kept out of every table the choice is tuned on: test/lit/corpus/fla is the held-out
# one the compile-time benchmark measures (``compile_time.py corpus --corpus``).
HELD_OUT = {"fla"}


def _expand(encoding: str, aliases: dict) -> str:
    """``encoding`` with every alias it names (``#mma``) written out."""
    for _ in range(4):
        encoding = re.sub(r"#[\w]+\b(?![.<])", lambda m: aliases.get(m.group(0), m.group(0)), encoding)
    return encoding


def conversions_in(text: str) -> list[tuple]:
    """(shape, element type, source, destination, warps) of each ``ttg.convert_layout`` of a
    TTGIR module, aliases written out."""
    aliases = dict(m.groups() for m in map(_ALIAS.match, text.splitlines()) if m)
    warps = _WARPS.search(text)
    out = []
    for line in text.splitlines():
        match = _CONVERT.search(line)
        if match and warps:
            dims, element, src, dst = match.groups()
            out.append((tuple(int(d) for d in dims.split("x")), element.strip(), _expand(src, aliases),
                        _expand(dst, aliases), int(warps.group(1))))
    return out


def kernel_rows(targets) -> list[Row]:
    """Every distinct conversion of the committed corpus (``test/lit/corpus``: the project's
    kernels for sm_80, sm_90 and gfx942, Liger-Kernel's for sm_90 and sm_80; not the ``HELD_OUT``
    folders) for ``targets``."""
    import glob

    rows, seen = [], set()
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "test", "lit", "corpus")
    for path in sorted(glob.glob(os.path.join(root, "*", "*.ttgir"))):
        folder, name = os.path.basename(os.path.dirname(path)), os.path.basename(path)
        if folder in HELD_OUT:
            continue
        target = CORPUS_TARGETS.get(folder) or next((t for f, t in CORPUS_TARGETS.items() if f in name), None)
        if target not in targets:
            continue
        for shape, element, src, dst, warps in conversions_in(open(path).read()):
            key = (target, shape, element, src, dst, warps)
            if key not in seen and len(shape) <= 2:   # the single-conversion kernel is 1-D or 2-D
                seen.add(key)
                rows.append(Row(f"{folder}/{name}", target, element, shape, warps, src, dst))
    return rows


def _interleaved(*lists) -> list:
    """The rows of ``lists`` taken in turn (a run cut short has checked some of each)."""
    out = []
    for i in range(max(map(len, lists))):
        out += [rows[i] for rows in lists if i < len(rows)]
    return out


def _warp_size(target: str) -> int:
    from linear_layouts.lowering.target import target_named
    return target_named(target).warp_size


def report(rows: list[Row], command: str, triton_version: str, seconds: float) -> tuple[str, bool]:
    from linear_layouts.lowering.choosing.stock_bounds import Costly

    checked = [r for r in rows if r.stock]
    lines = [f"# Stock's floor and the plugin's choice against final code (triton {triton_version})", "",
             f"Produced by `{command}` ({seconds:.0f} s, CPU).  What it checks: the docstring of "
             "`benchmarks/studies/stock_dominance.py`; the rule: `lowering/choosing/stock_bounds.py`.", ""]
    ok = True
    for target in sorted({r.target for r in rows}):
        mine = [r for r in checked if r.target == target]
        errors = [r for r in rows if r.target == target and r.error]
        verdicts = Counter()
        for r in mine:
            verdicts.update(f"{k}:{v}" for k, v in r.floor_verdicts().items())
        all_exact = sum(1 for r in mine if r.floor and all(v == "exact" for v in r.floor_verdicts().values()))
        high = [r for r in mine if "high" in r.floor_verdicts().values()]
        taken = [r for r in mine if r.taken]
        worse = [r for r in taken if r.ours_more()]
        better = [r for r in taken if any(r.ours[k] < r.stock[k] for k in r.stock)]
        from linear_layouts.lowering.choosing.fitted_model import load_model
        model = load_model()
        measured = model is not None and model.applies_to(target, triton_version)
        # Left to Triton because stock's lowering moves nothing (a no-op or a renaming,
        # lowering_choice._stock_moves_nothing): stock's code must hold no costly instruction.
        forwarded = [r for r in mine if not r.taken and FORWARDED in r.reason]
        not_free = [r for r in forwarded if any(r.stock.values())]
        ok &= not high and (measured or not worse) and not not_free
        lines += [f"## {target}", "",
                  f"Conversions compiled: {len(mine)} (not compiled: {len(errors)}: layouts this Triton rejects "
                  "or stock fails on).  Floor exact on every kind: **{0}** of {1}; above stock on some kind "
                  "(must be 0): **{2}**.".format(all_exact, len(mine), len(high)), "",
                  "| kind | exact | low | high |", "|---|---:|---:|---:|"]
        for kind in [k for k in Costly.kinds() if k != "warp_barriers"] + ["barriers"]:
            lines.append(f"| {kind} | {verdicts[kind + ':exact']} | {verdicts[kind + ':low']} | "
                         f"{verdicts[kind + ':high']} |")
        lines += ["", f"The plugin takes **{len(taken)}** of {len(mine)} (methods: "
                  f"{dict(Counter(r.method for r in taken))}); ours needs more than stock of some kind on "
                  f"**{len(worse)}** ({'decided by the measured model here, lowering/choosing/choice_model.json: not a failure' if measured else 'must be 0'}); "
                  f"fewer of some kind on {len(better)}.", ""]
        lines += [f"Left to Triton as moving nothing (no-ops and register renamings): **{len(forwarded)}**; "
                  f"stock's code holds a costly instruction on **{len(not_free)}** of them (must be 0).", ""]
        for r in high + worse + not_free:
            lines.append(f"* {r.name} {r.element_type} {list(r.shape)} w{r.num_warps}: `{r.src}` -> `{r.dst}`: "
                         f"stock {r.stock}, floor {r.floor}, ours {r.ours or '-'}")
        left = Counter(_reason_class(r.reason) for r in mine if not r.taken)
        lines += ["", "Left to Triton, by reason: " + ", ".join(f"{k}: {n}" for k, n in left.most_common()), ""]
    return "\n".join(lines) + "\n", ok


# The remark of a conversion left to Triton because neither side moves data.
FORWARDED = "stock forwards the values without an instruction"


def _reason_class(reason: str) -> str:
    if "needs more" in reason:
        kinds = reason.split("needs more ", 1)[1].split(" than", 1)[0]
        return "needs more " + ", ".join(part.split(" (")[0] for part in kinds.split(", "))
    return reason.split(":")[0][:60] or "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=4301)
    parser.add_argument("--count", type=int, default=40, help="random conversions per target")
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    parser.add_argument("--kernels", action="store_true", help="also the corpus kernels' conversions")
    parser.add_argument("--out", default="")
    parser.add_argument("--json", default="", help="append each row to this JSON-lines file")
    parser.add_argument("--report-from", default="", metavar="JSONL", help="report the rows of an earlier --json")
    args = parser.parse_args(argv)
    require_package()
    os.environ.pop("LINEAR_LAYOUTS_STOCK_GATE", None)   # the default: the choice active
    import triton

    targets = tuple(t for t in args.targets.split(",") if t)
    command = "python benchmarks/studies/stock_dominance.py " + " ".join(argv if argv is not None else sys.argv[1:])
    began = time.time()
    if args.report_from:
        with open(args.report_from) as f:
            rows = [Row(**{**json.loads(line), "shape": tuple(json.loads(line)["shape"])}) for line in f if line.strip()]
    else:
        rows = _interleaved(random_rows(args.seed, args.count, targets), kernel_rows(targets) if args.kernels else [])
        with tempfile.TemporaryDirectory(prefix="ll_dominance_") as workdir:
            for i, row in enumerate(rows):
                check(row, workdir)
                print(f"[{i + 1}/{len(rows)}] {row.name} {row.target}: {row.error or ('taken' if row.taken else 'left')}"
                      f" {row.ours_more() or ''}", file=sys.stderr, flush=True)
                if args.json:   # one row a line, as it is checked: a run cut short still reports
                    with open(args.json, "a") as f:
                        f.write(json.dumps(asdict(row)) + "\n")
    text, ok = report(rows, command, triton.__version__, time.time() - began)
    publish(text, args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
