"""``ll-fuzz``: random layout conversions, lowered, simulated and (some) compiled.

    ll-fuzz --cases 5000 --seed 1                       # plan, emit, simulate every island
    ll-fuzz --cases 2000 --compile 200 --targets sm_90  # ... and compile 200 with stock and ours

Every case is a ``ttg.convert_layout`` between two layouts of one tensor that our generator
draws (``random_case``), weighted towards what once went wrong: layouts that replicate data
over registers, lanes or warps (zero bases, tiles larger than the tensor), tiny tensors,
slices of blocked and MMA layouts, MMA accumulators, dot operands, and conversions taken from
real kernels.  A case *fails* when

* lowering raises, or the emitted-code simulator (``lowering.sim.island_sim``) rejects an island;
* (compiled cases) stock Triton compiles the kernel and ours does not.

A case is reproducible from ``(seed, index)``: ``random_case(random.Random(f"{seed}:{index}"),
target)`` with the target ``targets[index % len(targets)]``.  The GPU counterpart, which runs
the kernels against stock Triton bit for bit, is ``benchmarks/fuzz_gpu.py``.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from ...lowering.target import ORIGINAL_TARGETS
from ...lowering.target import TARGETS as KNOWN_TARGETS
from ..cli import ArgumentParser, UsageError

ELEMENT_TYPES = ("i1", "i8", "i16", "i32", "i64", "f8E4M3FN", "f8E5M2", "f16", "bf16", "f32", "!tt.ptr<f32>")
# The default targets: the project's first four, so that (seed, index) names the same case as in
# the runs recorded before the others were added (docs/targets.md); ``--targets all``
# (ALL_TARGETS) adds sm_86, sm_89, sm_100, sm_120, gfx950, gfx1100 and gfx1201.
TARGETS = ORIGINAL_TARGETS  # sm_80, sm_90, gfx90a, gfx942
ALL_TARGETS = tuple(KNOWN_TARGETS)
WARPS = (1, 2, 4, 8)
KINDS = ("linear-broadcast", "tiny", "blocked-large-tile", "slice", "mma", "dot-operand", "real-kernel")


@dataclass(frozen=True)
class FuzzCase:
    shape: tuple
    element_type: str
    src: str
    dst: str
    num_warps: int
    target: str
    kind: str


# ------------------------------------------------------------------------------ the generator

def _blocked(spt, tpw, wpc, order) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {list(spt)}, threadsPerWarp = {list(tpw)}, "
            f"warpsPerCTA = {list(wpc)}, order = {list(order)}}}>")


def _split(rng, total: int, parts: int) -> list[int]:
    """``total`` (a power of two) as a product of ``parts`` random powers of two."""
    out = [1] * parts
    for _ in range(total.bit_length() - 1):
        out[rng.randrange(parts)] *= 2
    return out


def _random_blocked(rng, rank: int, num_warps: int, warp_size: int, max_spt: int = 8) -> str:
    spt = [1 << rng.randrange(max_spt.bit_length()) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    return _blocked(spt, _split(rng, warp_size, rank), _split(rng, num_warps, rank), order)


def _warp_size(target: str) -> int:
    from ...lowering.target import target_named
    return target_named(target).warp_size


def _wmma_warps(warps) -> str:
    """``warpsPerCTA = [a, b]`` as the installed Triton spells it in ``#ttg.amd_wmma``: up to 3.6
    that way, from 3.7 as ``ctaLayout = {warp = bases}`` (dimension 1 first, as Triton 3.9 prints
    the layout of ``tl.dot`` on gfx1100: warpsPerCTA [2, 2] is ``warp = [[0, 1], [1, 0]]``)."""
    from ...passes.ir.bindings import installed_conventions
    if installed_conventions().release < (3, 7):
        return f"warpsPerCTA = {list(warps)}"
    bases = [[0, 1 << k] for k in range(warps[1].bit_length() - 1)] + \
        [[1 << k, 0] for k in range(warps[0].bit_length() - 1)]
    return "ctaLayout = {warp = " + str(bases) + "}" if bases else "ctaLayout = {}"  # 1 warp: as Triton prints it


def _mma(rng, num_warps: int, target: str, shape) -> str:
    """An MMA accumulator layout for the target: nvidia_mma v2 (v3 on sm_90) on CUDA, amd_mfma on
    AMD CDNA (the target's MFMA version), amd_wmma on RDNA."""
    from ...lowering.target import target_named
    t = target_named(target)
    if t.wmma_version:
        transpose, warps = str(rng.random() < 0.5).lower(), _split(rng, num_warps, 2)
        return f"#ttg.amd_wmma<{{version = {t.wmma_version}, isTranspose = {transpose}, {_wmma_warps(warps)}}}>"
    if t.vendor == "amd":
        m = rng.choice((16, 32))
        return (f"#ttg.amd_mfma<{{version = {t.mfma_version}, warpsPerCTA = {_split(rng, num_warps, 2)}, "
                f"instrShape = [{m}, {m}, {16 if m == 16 else 8}], isTransposed = {str(rng.random() < 0.5).lower()}}}>")
    if target == "sm_90" and num_warps >= 4 and rng.random() < 0.5:
        n = rng.choice((8, 16, 32, 64, 128, 256))
        warps = [num_warps, 1] if num_warps == 4 or rng.random() < 0.5 else [4, num_warps // 4]
        return (f"#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = {warps}, "
                f"instrShape = [16, {n}, 16]}}>")
    return (f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {_split(rng, num_warps, 2)}, "
            f"instrShape = [16, 8]}}>")


def _element_bits(element: str) -> int:
    if element == "i1":
        return 8
    if element.startswith("!tt.ptr"):
        return 64
    digits = "".join(ch for ch in element if ch.isdigit())
    return 8 if element.startswith("f8") else int(digits)


def _dot_operand(rng, num_warps: int, target: str, element: str) -> str:
    parent = _mma(rng, num_warps, target, None)
    if "versionMajor = 3" in parent:  # wgmma reads only operand A from registers
        parent = parent.replace("versionMajor = 3", "versionMajor = 2").split("instrShape")[0] + "instrShape = [16, 8]}>"
    bits = _element_bits(element)
    k_width = max(1, 32 // bits) if not target.startswith("gfx") else \
        rng.choice((8, 16)) if "amd_wmma" in parent else rng.choice((4, 8))
    return f"#ttg.dot_op<{{opIdx = {rng.randrange(2)}, parent = {parent}, kWidth = {k_width}}}>"


def _shape(rng, rank: int, low: int = 0, high: int = 7) -> tuple:
    return tuple(1 << rng.randint(low, high) for _ in range(rank))


def _linear(rng, shape, num_warps, warp_size, broadcast=True) -> str:
    from .testcases import random_linear_encoding
    return random_linear_encoding(rng, shape, num_warps, warp_size, broadcast=broadcast)


def _real_kernel_pairs(num_warps: int, target: str, rng) -> list[tuple]:
    """Conversions seen in real kernels that once went wrong (see the module docstring of
    ``benchmarks/fuzz_gpu.py``): a Hopper matmul's bias row, and a row vector from a
    reduction broadcast into an MMA accumulator (``acc * invr[:, None]``)."""
    pairs = []
    if target == "sm_90" and num_warps == 8:
        row = ("#ttg.slice<{dim = 0, parent = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, "
               "warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>}>")
        pairs.append(((256,), _blocked([1], [32], [8], [0]), row))
    warp_size = _warp_size(target)
    mma = _mma(rng, num_warps, target, None)
    reduce_parent = _blocked([1, 4], [warp_size // 8, 8], [num_warps, 1], [1, 0])
    m = rng.choice((16, 32, 64, 128))
    pairs.append(((m,), f"#ttg.slice<{{dim = 1, parent = {reduce_parent}}}>", f"#ttg.slice<{{dim = 1, parent = {mma}}}>"))
    return pairs


def random_case(rng: random.Random, target: str) -> FuzzCase:
    """One random conversion for ``target`` (see the module docstring)."""
    from ...dialect import LayoutError
    from ...passes.ir.layouts import tensor_layout_of
    warp_size = _warp_size(target)
    for _ in range(200):
        num_warps = rng.choice(WARPS)
        element = rng.choice(ELEMENT_TYPES)
        kind = rng.choice(KINDS)
        if kind == "linear-broadcast":
            shape = _shape(rng, rng.choice((1, 2)), 0, 6)
            src, dst = _linear(rng, shape, num_warps, warp_size), _linear(rng, shape, num_warps, warp_size)
        elif kind == "tiny":
            shape = rng.choice(((1,), (2,), (4,), (1, 1), (2, 1), (1, 4), (2, 2), (4, 2), (2, 8)))
            src = _linear(rng, shape, num_warps, warp_size) if rng.random() < 0.5 else \
                _random_blocked(rng, len(shape), num_warps, warp_size)
            dst = _random_blocked(rng, len(shape), num_warps, warp_size)
        elif kind == "blocked-large-tile":
            shape = _shape(rng, 2, 0, 6)
            src = _random_blocked(rng, 2, num_warps, warp_size)
            dst = _random_blocked(rng, 2, num_warps, warp_size) if rng.random() < 0.5 else \
                _linear(rng, shape, num_warps, warp_size)
        elif kind == "slice":
            parent_shape = _shape(rng, 2, 2, 7)
            dim = rng.randrange(2)
            shape = (parent_shape[1 - dim],)
            parent = _mma(rng, num_warps, target, parent_shape) if rng.random() < 0.5 else \
                _random_blocked(rng, 2, num_warps, warp_size)
            src = f"#ttg.slice<{{dim = {dim}, parent = {parent}}}>"
            other = rng.random()
            if other < 0.4:
                dst = _random_blocked(rng, 1, num_warps, warp_size)
            elif other < 0.7:
                dst = f"#ttg.slice<{{dim = {dim}, parent = {_random_blocked(rng, 2, num_warps, warp_size)}}}>"
            else:
                dst = _linear(rng, shape, num_warps, warp_size)
        elif kind == "mma":
            shape = _shape(rng, 2, 3, 7)
            src = _mma(rng, num_warps, target, shape)
            dst = _random_blocked(rng, 2, num_warps, warp_size) if rng.random() < 0.6 else \
                _linear(rng, shape, num_warps, warp_size)
        elif kind == "dot-operand":
            shape = _shape(rng, 2, 3, 7)
            src = _dot_operand(rng, num_warps, target, element)
            dst = _random_blocked(rng, 2, num_warps, warp_size) if rng.random() < 0.5 else \
                _mma(rng, num_warps, target, shape) if rng.random() < 0.5 else _linear(rng, shape, num_warps, warp_size)
        else:
            shape, src, dst = rng.choice(_real_kernel_pairs(num_warps, target, rng))
            num_warps = num_warps if "warpsPerCTA = [8, 1], instrShape = [16, 256" not in dst else 8
            element = rng.choice(("f32", "f16", "bf16"))
        if rng.random() < 0.5:
            src, dst = dst, src
        try:
            tensor_layout_of(src, shape)
            tensor_layout_of(dst, shape)
        except LayoutError:
            continue  # a layout the shape does not fit: draw again
        if len(shape) > 2 or any(s > 256 for s in shape) or _numel(shape) > 4096:
            continue
        return FuzzCase(tuple(shape), element, src, dst, num_warps, target, kind)
    raise RuntimeError("the generator drew 200 invalid cases in a row")


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def case_at(seed: int, index: int, targets=TARGETS) -> FuzzCase:
    """The reproducible case number ``index`` of a run with ``seed``."""
    return random_case(random.Random(f"{seed}:{index}"), targets[index % len(targets)])


# ------------------------------------------------------------------------------ checking

@dataclass
class CaseResult:
    index: int
    case: FuzzCase
    outcome: str = ""              # "lowered", "left", "failed"
    method: str = ""
    reason: str = ""               # why left to Triton, or what failed
    compiled: str = ""             # "", "both", "stock-failed", "ours-failed"
    fewer_rounds: bool = False     # the plan checked is the planner's in fewer rounds (as the choice emits it)


def check_case(index: int, case: FuzzCase) -> CaseResult:
    """Plan, emit and simulate the conversion, with the layouts the installed Triton gives."""
    from ...lowering.emit.emit_llvm import IslandSite, EmitError, emit_island, island_element_type
    from ...lowering.sim.island_sim import check_emitted
    from ...lowering.planner import plan_conversion, with_fewer_rounds
    from ...lowering.target import target_named
    from ...passes.ir.bindings import installed_conventions
    from ...passes.ir.layouts import tensor_layout_of

    result = CaseResult(index, case)
    try:
        src, dst = tensor_layout_of(case.src, case.shape), tensor_layout_of(case.dst, case.shape)
        bits = island_element_type(case.element_type).logical_bits
        plan = plan_conversion(src, dst, bits, target_named(case.target))
        if not plan:
            result.outcome, result.reason = "left", plan.reason
            return result
        fewer = with_fewer_rounds(plan)     # what the choice emits (lowering_choice), checked the same way
        result.fewer_rounds, plan = fewer is not plan, fewer
        result.method = plan.method
        site = IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                           element_type=case.element_type, guard_before=True, guard_after=index % 2 == 0,
                           unique_struct=installed_conventions().struct_holds_unique_registers, in_loop=index % 3 == 0)
        try:
            island = emit_island(plan, site)
        except EmitError as error:
            result.outcome, result.reason = "left", str(error)
            return result
        check = check_emitted(island.text, plan, site)
        if not check:
            result.outcome, result.reason = "failed", f"simulator: {check.errors[0]}"
            return result
        result.outcome = "lowered"
    except Exception as error:  # noqa: BLE001 - the fuzzer's job: any crash of ours, a bug included, is a finding
        result.outcome, result.reason = "failed", f"{type(error).__name__}: {error}"
    return result


def compile_case(job) -> tuple[int, str, str]:
    """(index, verdict, detail): compile the single-convert kernel with stock Triton, then with
    our islands (``lower_text``), for the case's target."""
    index, case = job
    from ...passes.drop_in import environment
    environment.set_default("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    from .testcases import single_convert_ttgir
    from ...lowering.target import target_named
    from ...passes.lower_conversions import lower_text
    from ...passes.ir.diagnostics import IRError
    from ...passes.ir.sandbox import run_forked
    target = target_named(case.target).gpu_target()
    text = single_convert_ttgir(case.shape, case.element_type, case.src, case.dst, case.num_warps, case.target)
    directory = tempfile.mkdtemp(prefix="ll_fuzz_")
    path = os.path.join(directory, "kernel.ttgir")

    def compile_text(module_text: str):
        def child() -> str:
            with open(path, "w") as f:
                f.write(module_text)
            triton.compile(path, target=target)
            return "ok"
        return run_forked(child)  # Triton aborts on some inputs: only the child dies

    try:
        compile_text(text)
    except IRError as error:  # run_forked's answer for anything that went wrong in the child
        return index, "stock-failed", _first_line(error)
    try:
        lowered, outcomes = lower_text(text, filename=f"case{index}")
        compile_text(lowered)
    except Exception as error:  # noqa: BLE001 - the fuzzer's job: any failure of ours, a bug included, is a finding
        return index, "ours-failed", f"{type(error).__name__}: {_first_line(error, 400)}"
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return index, "both", "lowered" if outcomes[0].lowered else f"left: {outcomes[0].reason[:120]}"


def _first_line(error: BaseException, limit: int = 200) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    interesting = [line for line in lines if "error" in line.lower()] or lines
    return interesting[0][:limit] if interesting else type(error).__name__


@dataclass
class FuzzReport:
    seed: int
    results: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failures(self) -> list:
        return [r for r in self.results if r.outcome == "failed" or r.compiled == "ours-failed"]

    def by_target(self) -> dict:
        """target -> ``"N lowered, N left, N failed, compiled both/stock-failed/ours-failed N/N/N"``."""
        out = {}
        for t in sorted({r.case.target for r in self.results}):
            rs = [r for r in self.results if r.case.target == t]
            o = Counter(r.outcome for r in rs)
            c = Counter(r.compiled for r in rs if r.compiled)
            text = f"{len(rs)}: {o['lowered']} lowered, {o['left']} left, {o['failed']} failed"
            if c:
                text += f", compiled both/stock-failed/ours-failed {c['both']}/{c['stock-failed']}/{c['ours-failed']}"
            out[t] = text
        return out

    def summary(self) -> str:
        counts = Counter(r.outcome for r in self.results)
        compiled = Counter(r.compiled for r in self.results if r.compiled)
        by_kind = Counter((r.case.kind, r.outcome) for r in self.results)
        methods = Counter(r.method for r in self.results if r.outcome == "lowered")
        left = Counter(r.reason.split(":")[0][:70] for r in self.results if r.outcome == "left")
        lines = [f"ll-fuzz: seed {self.seed}, {len(self.results)} cases in {self.seconds:.1f} s: "
                 f"{counts['lowered']} lowered and simulated, {counts['left']} left to Triton, "
                 f"{len(self.failures)} failed",
                 "  methods: " + ", ".join(f"{k}={v}" for k, v in sorted(methods.items()))
                 + f" ({sum(r.fewer_rounds for r in self.results if r.outcome == 'lowered')} shared in fewer rounds)",
                 "  by kind: " + ", ".join(f"{k}/{o}={v}" for (k, o), v in sorted(by_kind.items()))]
        if compiled:
            lines.append("  compiled: " + ", ".join(f"{k}={v}" for k, v in sorted(compiled.items())))
        if len({r.case.target for r in self.results}) > 1:
            lines.append("  by target: " + "; ".join(f"{t} {c}" for t, c in sorted(self.by_target().items())))
        if left:
            lines.append("  left to Triton: " + "; ".join(f"{k} ({v})" for k, v in left.most_common(5)))
        for r in self.failures[:20]:
            lines.append(f"  FAILED case {r.index} (seed {self.seed}): {r.reason or r.compiled}\n"
                         f"    {asdict(r.case)}")
        return "\n".join(lines)


def _check_job(job):
    index, case = job
    return check_case(index, case)


def run_fuzz(cases: int, seed: int, *, compile_count: int = 0, jobs: int = 2, targets=TARGETS,
             progress=None) -> FuzzReport:
    """Draw ``cases`` cases, check each; compile ``compile_count`` of them (spread evenly)."""
    start = time.time()
    drawn = [(i, case_at(seed, i, targets)) for i in range(cases)]
    report = FuzzReport(seed)
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            report.results = list(pool.map(_check_job, drawn, chunksize=32))
    else:
        report.results = [check_case(i, c) for i, c in drawn]
    if compile_count:
        step = max(1, cases // compile_count)
        while step > 1 and math.gcd(step, len(targets)) > 1:
            step -= 1  # a step that is a multiple of the target count would compile one target only
        chosen = [drawn[i] for i in range(0, cases, step)][:compile_count]
        by_index = {r.index: r for r in report.results}
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for index, verdict, detail in pool.map(compile_case, chosen):
                by_index[index].compiled = verdict
                if verdict == "ours-failed":
                    by_index[index].reason = (by_index[index].reason + "; " if by_index[index].reason else "") + \
                        f"compile: {detail}"
    report.seconds = time.time() - start
    return report


# ------------------------------------------------------------------------------ the command

def main(argv=None) -> int:
    p = ArgumentParser(prog="ll-fuzz", description="Random layout conversions: lowered, simulated, optionally compiled.")
    p.add_argument("--cases", type=int, default=1000, metavar="N",
                   help="how many random conversions to draw, plan, emit and simulate (default 1000)")
    p.add_argument("--seed", type=int, default=1,
                   help="the random seed: the same seed draws the same cases (default 1)")
    p.add_argument("--compile", type=int, default=0, help="also compile this many cases (stock and ours)")
    p.add_argument("--targets", default=",".join(TARGETS),
                   help=f"comma-separated, or 'all' ({', '.join(ALL_TARGETS)})")
    p.add_argument("--jobs", type=int, default=2, metavar="N",
                   help="worker processes to spread the cases over (default 2)")
    try:
        args = p.parse_args(argv)
    except UsageError as error:
        print(f"ll-fuzz: error: {error}", file=sys.stderr)
        return 1
    targets = ALL_TARGETS if args.targets.strip() == "all" else \
        tuple(t.strip() for t in args.targets.split(",") if t.strip())
    unknown = [t for t in targets if t not in ALL_TARGETS]
    if unknown or not targets:
        print(f"ll-fuzz: error: unknown target {unknown[0] if unknown else args.targets!r} "
              f"(known: {', '.join(ALL_TARGETS)})", file=sys.stderr)
        return 1
    if args.cases < 1 or args.compile < 0 or args.jobs < 1:
        print("ll-fuzz: error: --cases and --jobs must be positive, --compile not negative", file=sys.stderr)
        return 1
    report = run_fuzz(args.cases, args.seed, compile_count=args.compile, jobs=args.jobs, targets=targets)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
