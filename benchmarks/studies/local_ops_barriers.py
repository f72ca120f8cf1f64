"""CTA barriers in the PTX of every benchmark kernel: stock Triton vs the plugin owning the
shared-memory ops (``ttg.local_load``, ``ttg.local_store``, ``ttg.local_alloc`` with a source).
No GPU: every kernel is compiled on the CPU (``triton.compile(ASTSource(...), target=GPUTarget(...))``).

    python benchmarks/studies/local_ops_barriers.py --out benchmarks/results            # under the triton to measure
    python benchmarks/studies/local_ops_barriers.py --combine benchmarks/results        # the verdict over releases

Why.  Our islands that touch shared memory get *guard* barriers (``bar.sync 0; // guard``)
because Triton's barrier analysis cannot see their accesses; ``passes.barriers.guard_barriers`` drops the
ones Triton's own barriers make redundant.  A shared-memory op kind can be on by default only if
no kernel ends up with more CTA barriers than stock Triton's, above all inside loops (a barrier
in a loop body is paid every iteration).  This script counts them.

Kernels: the paper suite (``paper_kernels.paper_cases()``, each case with its own num_warps,
num_stages and environment: ``DISABLE_MMA_V3=1`` for the mma v2 gemm) and the kernel suite
(``benchmarks/kernels.py``: the same kernels, launch arguments and options as its ``_cases``;
``KERNEL_SUITE`` below, checked against its names).  Targets: sm_90 and sm_80; a kernel whose
sm_90 TTGIR uses wgmma is compiled for sm_90 a second time with ``DISABLE_MMA_V3=1`` (Triton's
Ampere path, operands through ``ttg.local_load``; "sm_90/mma_v2").

Modes (``MODES``): ``stock``; ``default`` (``enable()``: conversions only); ``local_load``,
``local_store``, ``local_alloc`` (``only=noop,rename,shuffle,shared,<op>``); ``all`` (the three).
A mode whose ops do not occur in the kernel's TTGIR (stock's, where the plugin starts) owns
nothing more than an earlier mode and compiles to its code; it is not compiled again but
recorded as ``same as <mode>``.  Each compile has an empty Triton cache of its own.

Counts per kernel and mode, from the PTX (``ptx_barriers``): CTA barriers (``bar.sync``,
``bar.red``, ``barrier.sync``, ``barrier.cta.sync``..., not ``bar.warp.sync``): in all, and
inside loops, by loop depth.  Loops are the natural loops of the PTX's control flow: a back edge
is a branch (``@%p bra $L__BB0_3;``, ``bra.uni``) to a label at or before it; its loop is the
label's block and every block that reaches the branch without passing that label (for the
usual contiguous layout: the lines between the label and the branch).  LLVM's own
``// =>This Loop Header: Depth=N`` comments are checked against them.  Plus: guards left in the
PTX, and the plugin's stats (local loads / stores and allocations lowered, guard barriers
emitted and dropped, kernels compiled without our islands after a failure).

A kernel is *above stock* in a mode when it has more barriers than stock in all, or at loop
depth >= d for some d (a barrier moved into an inner loop counts).  Writes
``local_ops_barriers_<triton version>.json`` / ``.md`` into ``--out``; ``--combine DIR`` reads
every such JSON in DIR and writes ``local_ops_barriers.md``: per op kind, the kernels above
stock in each release.
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import glob
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

REPO = on_path.REPO

PLUGIN_METHODS = "noop,rename,shuffle,shared"
OP_KINDS = ("local_load", "local_store", "local_alloc")
# mode -> the op kinds it owns on top of the conversions (None: stock Triton)
MODES = {"stock": None, "default": (), "local_load": ("local_load",), "local_store": ("local_store",),
         "local_alloc": ("local_alloc",), "all": OP_KINDS}
TARGETS = ("sm_90", "sm_80")
MMA_V2_TARGET = "sm_90/mma_v2"


def mode_only(mode: str) -> str | None:
    """The ``enable(only=...)`` string of a plugin mode (None for ``default``: ``enable()``)."""
    owned = MODES[mode]
    if not owned:
        return None
    return ",".join((PLUGIN_METHODS,) + owned)


# =========================================================================== PTX analysis

# One PTX statement that is a CTA barrier.  ``bar.warp.sync`` (one warp) is not one.
_BARRIER = re.compile(r"^(?:@!?%\w+\s+)?(?:bar|barrier)(?:\.cta)?\.(?:sync|red)\b")
_LABEL = re.compile(r"^\s*([$\w.]+):")
_BRANCH = re.compile(r"^(@!?%\w+\s+)?bra(?:\.uni)?\s+([$\w.]+)\s*$")
_END = re.compile(r"^(@!?%\w+\s+)?(?:ret|exit)\b")
_FUNCTION = re.compile(r"^\s*(?:\.visible\s+|\.extern\s+|\.weak\s+)*\.(?:entry|func)\b")
_LLVM_HEADER = re.compile(r"=>\s*This (?:Inner )?Loop Header: Depth=(\d+)")


def _statements(line: str) -> list[str]:
    """The statements of one PTX line (comments dropped; inline asm may put several on a line)."""
    code = line.split("//", 1)[0]
    return [s.strip() for s in code.split(";") if s.strip()]


@dataclass
class _Block:
    label: str | None
    barriers: int = 0
    guards: int = 0                                   # ... of them our ``// guard`` barriers
    successors: list = field(default_factory=list)   # labels, or ("next",) for the fall-through
    falls_through: bool = True
    closed: bool = False                              # ended by a branch: what follows is another block
    llvm_depth: int = 0                               # LLVM's loop-header comment, 0 if none


def _functions(ptx: str) -> list[list[str]]:
    """The lines of each ``.entry`` / ``.func`` (anything before the first: ignored)."""
    functions, current = [], None
    for line in ptx.splitlines():
        if _FUNCTION.match(line):
            current = []
            functions.append(current)
        if current is not None:
            current.append(line)
    return functions


def _blocks(lines: list[str]) -> list[_Block]:
    blocks = [_Block(None)]
    comments_of_label = False     # comment-only lines right after a label are that label's
    for line in lines:
        label = _LABEL.match(line)
        if label:
            blocks.append(_Block(label.group(1)))
            comments_of_label = True
        statements = _statements(line.split(":", 1)[1] if label else line)
        guard_line = "// guard" in line
        if comments_of_label:
            header = _LLVM_HEADER.search(line)
            if header:
                blocks[-1].llvm_depth = int(header.group(1))
            if statements:
                comments_of_label = False
        for statement in statements:
            block = blocks[-1]
            if block.closed:                  # code after a branch (LLVM's "// %bb.3:"): a block of its own
                block = _Block(None)
                blocks.append(block)
            if _BARRIER.match(statement):
                block.barriers += 1
                block.guards += guard_line
            branch = _BRANCH.match(statement)
            end = _END.match(statement)
            if branch:
                block.successors.append(branch.group(2))
                block.closed = True
                block.falls_through = bool(branch.group(1))
            elif end:
                block.closed = True
                block.falls_through = bool(end.group(1))
    return blocks


def _predecessors(successors: list[list[int]]) -> list[list[int]]:
    """Each block's predecessors, from every block's successors."""
    predecessors = [[] for _ in successors]
    for i, targets in enumerate(successors):
        for t in targets:
            predecessors[t].append(i)
    return predecessors


def _dominators(successors: list[list[int]]) -> list[set | None]:
    """Each block's dominators (None: unreachable from the entry, block 0)."""
    reachable, work = {0}, [0]
    while work:
        for t in successors[work.pop()]:
            if t not in reachable:
                reachable.add(t)
                work.append(t)
    predecessors = _predecessors(successors)
    everything = set(reachable)
    dominators = [({0} if i == 0 else set(everything)) if i in reachable else None for i in range(len(successors))]
    changed = True
    while changed:
        changed = False
        for i in sorted(reachable - {0}):
            new = set.intersection(*(dominators[p] for p in predecessors[i] if p in reachable)) | {i}
            if new != dominators[i]:
                dominators[i], changed = new, True
    return dominators


def _barrier_depths(lines: list[str]) -> tuple[list[tuple[int, bool]], list[str]]:
    """((loop depth, is a guard) of every barrier of one function, disagreements with LLVM's
    comments).

    Loops are natural loops: a back edge is a branch to a block that dominates it (for a loop
    laid out in one piece: a branch back to a label above it); its loop is that block and every
    block that reaches the branch without passing it.  Dominance, not text order, decides: LLVM
    may place a loop's latch above its header (a rotated loop) and enter at the header with a
    forward ``bra.uni``; a textually backward branch to such a latch is no loop of its own."""
    blocks = _blocks(lines)
    index = {b.label: i for i, b in enumerate(blocks) if b.label is not None}
    successors = []
    for i, block in enumerate(blocks):
        targets = [index[t] for t in block.successors if t in index]
        if block.falls_through and i + 1 < len(blocks):
            targets.append(i + 1)
        successors.append(targets)
    predecessors = _predecessors(successors)
    dominators = _dominators(successors)
    loops: dict[int, set] = {}      # header -> body (back edges to one header make one loop)
    for i, targets in enumerate(successors):
        for header in targets:
            if dominators[i] is None or header not in dominators[i]:
                continue            # not a back edge
            body = loops.setdefault(header, {header})
            work = [i]
            while work:
                b = work.pop()
                if b in body:
                    continue
                body.add(b)
                work.extend(predecessors[b])
    depth = [sum(i in body for body in loops.values()) for i in range(len(blocks))]
    problems = []
    llvm_comments = any(b.llvm_depth for b in blocks)
    for i, block in enumerate(blocks):
        if block.llvm_depth and (i not in loops or depth[i] != block.llvm_depth):
            problems.append(f"{block.label}: LLVM says loop header at depth {block.llvm_depth}, "
                            f"we find {'depth ' + str(depth[i]) if i in loops else 'no loop header'}")
        elif i in loops and llvm_comments and not block.llvm_depth:
            problems.append(f"{block.label}: a loop header for us, not in LLVM's comments")
    return [(depth[i], n < block.guards) for i, block in enumerate(blocks) for n in range(block.barriers)], problems


def ptx_barriers(ptx: str) -> dict:
    """CTA barriers of a PTX module: ``total``, ``in_loops`` (at loop depth >= 1),
    ``by_depth`` ([barriers at depth >= 1, at depth >= 2, ...]), ``guards`` and
    ``guards_in_loops`` (those of them that are our ``// guard`` barriers), ``loop_check``
    (where our loops disagree with LLVM's comments)."""
    depths, problems = [], []
    for lines in _functions(ptx):
        d, p = _barrier_depths(lines)
        depths += d
        problems += p
    deepest = max((d for d, _ in depths), default=0)
    return {"total": len(depths), "in_loops": sum(1 for d, _ in depths if d >= 1),
            "by_depth": [sum(1 for d, _ in depths if d >= level) for level in range(1, deepest + 1)],
            "guards": sum(1 for _, guard in depths if guard),
            "guards_in_loops": sum(1 for d, guard in depths if guard and d >= 1), "loop_check": problems}


def above(counts: dict, reference: dict) -> bool:
    """More barriers than ``reference`` in all, or at some loop depth or deeper."""
    if counts["total"] > reference["total"]:
        return True
    mine, theirs = counts["by_depth"], reference["by_depth"]
    return any(m > (theirs[i] if i < len(theirs) else 0) for i, m in enumerate(mine))


# =========================================================================== kernels

@dataclass
class Kernel:
    """One kernel to compile: a paper case, or a launch of the kernel suite in the same form."""

    suite: str
    name: str
    case: object            # a paper_kernels.PaperCase (tensors, scalars, constexprs, options, environment)


# The launches of benchmarks/kernels.py's ``_cases`` (arguments as given there; tensors as
# (dtype, shape)), so that the kernel suite compiles without torch or a GPU.
KERNEL_SUITE = {
    "softmax": ("softmax_kernel", {"X": "float32", "Y": "float32"}, {}, dict(N=1024, BLOCK=1024), 4, 3),
    "layer_norm_fwd": ("layer_norm_fwd_kernel", {"X": "float16", "Y": "float16", "W": "float16", "B": "float16"},
                       {}, dict(N=2048, eps=1e-5, BLOCK=2048), 8, 3),
    "layer_norm_bwd": ("layer_norm_bwd_kernel", {"X": "float16", "DY": "float16", "W": "float16",
                                                 "MEAN": "float32", "RSTD": "float32", "DX": "float16"},
                       {}, dict(N=2048, BLOCK=2048), 8, 3),
    "rms_norm": ("rms_norm_kernel", {"X": "float16", "Y": "float16", "W": "float16"}, {},
                 dict(N=4096, eps=1e-6, BLOCK=4096), 8, 3),
    "matmul_fp16": ("matmul_kernel", {"A": "float16", "B": "float16", "C": "float16"},
                    dict(M=4096, N=4096, K=4096), dict(BM=128, BN=128, BK=64), 8, 3),
    "matmul_fp8": ("matmul_kernel", {"A": "float8_e4m3fn", "B": "float8_e4m3fn", "C": "float16"},
                   dict(M=4096, N=4096, K=4096), dict(BM=128, BN=128, BK=128), 8, 3),
    "int4_matmul": ("int4_matmul_kernel", {"A": "float16", "Wq": "int8", "S": "float16", "C": "float16"},
                    dict(M=2048, N=4096, K=4096), dict(BM=128, BN=128, BK=64), 8, 3),
    "attention": ("attention_fwd_kernel", {"Q": "float16", "K": "float16", "V": "float16", "O": "float16"},
                  dict(SEQ=2048, sm_scale=64 ** -0.5), dict(D=64, BM=128, BN=64), 8, 3),
    "cross_entropy": ("cross_entropy_kernel", {"LOGITS": "float16", "TARGET": "int64", "LOSS": "float32"}, {},
                      dict(N=8192, BLOCK=8192), 16, 3),
    "transpose": ("transpose_kernel", {"X": "float32", "Y": "float32"}, dict(M=8192, N=8192),
                  dict(BM=64, BN=64), 4, 3),
    "embedding": ("embedding_kernel", {"IDS": "int32", "TABLE": "float16", "OUT": "float16"}, {},
                  dict(D=1024, ROWS=16), 4, 3),
    "column_sum": ("column_sum_kernel", {"X": "float32", "Y": "float32"}, dict(M=8192, N=8192),
                   dict(BM=64, BN=128), 4, 3),
    "row_max": ("row_max_kernel", {"X": "float32", "Y": "float32"}, {}, dict(N=1024, ROWS=16), 4, 3),
}


def kernels() -> list[Kernel]:
    """The paper suite, then the kernel suite."""
    from harness.checkout import make_package_importable
    make_package_importable()
    import paper_kernels as paper
    from linear_layouts.examples import gpu_kernels

    # Pointee types the kernel suite needs beyond the paper suite's (numpy-style names).
    paper.TRITON_TYPE.setdefault("float8_e4m3fn", "fp8e4nv")
    paper.TRITON_TYPE.setdefault("int64", "i64")
    out = [Kernel("paper", case.name, case) for case in paper.paper_cases()]
    for name, (function, tensors, scalars, constexprs, num_warps, num_stages) in KERNEL_SUITE.items():
        case = paper.PaperCase(
            "kernels", name, getattr(gpu_kernels, function), grid=(1,),
            tensors={n: paper.Tensor((1,), dtype) for n, dtype in tensors.items()},
            scalars=scalars, constexprs=constexprs, reference=None, atol=0, rtol=0,
            num_warps=num_warps, num_stages=num_stages)
        out.append(Kernel("kernels", name, case))
    return out


# =========================================================================== compiling (worker)

_ALLOC_WITH_SOURCE = re.compile(r"=\s*ttg\.local_alloc\s+%")


def _ttgir_ops(ttgir: str) -> dict:
    import paper_kernels as paper
    counts = paper.ttgir_counts(ttgir)
    return {"convert_layout": counts["convert_layout"], "local_load": counts["local_load"],
            "local_store": counts["local_store"], "local_alloc": len(_ALLOC_WITH_SOURCE.findall(ttgir)),
            "mma": counts["mma"]}


def _compile(kernel: Kernel, target: str, mode: str, cache_dir: str) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import linear_layouts
    import paper_kernels as paper
    from linear_layouts.passes import hook

    case = kernel.case
    arch = int(target[3:5])
    environment = dict(case.environment)
    if target == MMA_V2_TARGET:
        environment["DISABLE_MMA_V3"] = "1"
    signature, constexprs, attrs = paper.compile_signature(case)
    source = ASTSource(fn=case.function, signature=signature, constexprs=constexprs, attrs=attrs)
    saved = triton.knobs.cache.dir
    triton.knobs.cache.dir = cache_dir
    start = time.perf_counter()
    result = {}
    try:
        with paper.environment(environment):
            hook.reset_stats()
            if mode != "stock":
                linear_layouts.enable(only=mode_only(mode))
            compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32),
                                      options={"num_warps": case.num_warps, "num_stages": case.num_stages})
        result.update(ptx_barriers(compiled.asm["ptx"]))
        if mode == "stock":
            result["ttgir"] = _ttgir_ops(compiled.asm["ttgir"])
        else:
            s = hook.stats()
            result["plugin"] = {"conversions": s.conversions, "conversions_lowered": s.islands,
                                "local_loads": s.local_loads, "local_loads_lowered": s.local_loads_lowered,
                                "local_writes_lowered": s.local_writes_lowered,
                                "guards_emitted": s.guard_barriers, "guards_dropped": s.guard_barriers_dropped,
                                "fallbacks": [f"{f.stage}: {f.reason}" for f in s.fallbacks]}
    except Exception as error:  # a compile that fails is recorded, never fatal
        text = [line.strip() for line in str(error).strip().splitlines() if line.strip()] or [""]
        result = {"error": f"{type(error).__name__}: {text[0][:200]}" + (f" ... {text[-1][:200]}" if len(text) > 1 else "")}
    finally:
        linear_layouts.disable()
        triton.knobs.cache.dir = saved
    result["compile_s"] = round(time.perf_counter() - start, 2)
    return result


def _effective(mode: str, present: dict) -> tuple:
    """The op kinds a mode owns that the kernel's TTGIR has: modes with the same compile alike."""
    if MODES[mode] is None:
        return ("stock",)
    return tuple(op for op in MODES[mode] if present.get(op))


def measure_kernel(kernel: Kernel, workdir: str) -> dict:
    """Every target and mode of one kernel: {target: {"ttgir": ..., "modes": {mode: counts}}}."""
    out = {}
    targets = list(TARGETS)
    position = 0
    while position < len(targets):
        target = targets[position]
        position += 1
        modes: dict = {}
        stock = _compile(kernel, target, "stock", os.path.join(workdir, target.replace("/", "_"), "stock"))
        modes["stock"] = stock
        present = stock.get("ttgir", {})
        row = {"ttgir": present, "modes": modes}
        out[target] = row
        if "error" in stock:
            continue
        if target == "sm_90" and "v3" in present.get("mma", "") and not kernel.case.environment.get("DISABLE_MMA_V3"):
            targets.insert(position, MMA_V2_TARGET)
        compiled_as: dict = {}
        for mode in MODES:
            if mode == "stock":
                continue
            key = _effective(mode, present)
            if key in compiled_as:
                modes[mode] = {"same_as": compiled_as[key]}
                continue
            compiled_as[key] = mode
            modes[mode] = _compile(kernel, target, mode, os.path.join(workdir, target.replace("/", "_"), mode))
    return out


def _worker(indices: list[int], out_path: str) -> int:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    every = kernels()
    workdir = tempfile.mkdtemp(prefix="ll_local_ops_barriers_")
    results = []
    for i in indices:
        k = every[i]
        results.append({"suite": k.suite, "kernel": k.name, "num_warps": k.case.num_warps,
                        "num_stages": k.case.num_stages, "environment": k.case.environment,
                        "targets": measure_kernel(k, os.path.join(workdir, str(i)))})
    with open(out_path, "w") as f:
        json.dump(results, f)
    return 0


# =========================================================================== the report

def _resolve(modes: dict, mode: str) -> dict:
    entry = modes.get(mode, {})
    return modes.get(entry["same_as"], {}) if "same_as" in entry else entry


def judge(rows: list[dict]) -> dict:
    """Per plugin mode: the kernels (``suite/kernel @ target``) above stock, and above the default
    mode (what the op kind adds on top of the conversions), plus failures and fallbacks."""
    verdict = {}
    for mode in MODES:
        if mode == "stock":
            continue
        entry = {"above_stock": [], "above_default": [], "errors": [], "fallbacks": [], "stock_fails": [],
                 "kernels_with_op": 0, "compared": 0}
        for row in rows:
            for target, data in row["targets"].items():
                where = f"{row['suite']}/{row['kernel']} @ {target}"
                stock = data["modes"].get("stock", {})
                mine = _resolve(data["modes"], mode)
                if "error" in stock:       # stock Triton cannot compile it for this target (fp8 on sm_80)
                    entry["stock_fails"].append(f"{where}: {stock['error']}")
                    continue
                if "error" in mine:
                    entry["errors"].append(f"{where}: {mine['error']}")
                    continue
                entry["compared"] += 1
                if MODES[mode] and any(data["ttgir"].get(op) for op in MODES[mode]):
                    entry["kernels_with_op"] += 1
                if mine.get("plugin", {}).get("fallbacks"):
                    entry["fallbacks"].append(f"{where}: {mine['plugin']['fallbacks'][0]}")
                if above(mine, stock):
                    entry["above_stock"].append(where)
                    entry.setdefault("extra", []).append([mine["total"] - stock["total"],
                                                          mine["in_loops"] - stock["in_loops"]])
                    default = _resolve(data["modes"], "default")
                    if mode != "default" and "error" not in default and above(mine, default):
                        entry["above_default"].append(where)
        verdict[mode] = entry
    return verdict


def grouped(entries: list[str]) -> str:
    """``suite/kernel[shape] @ target`` entries as one phrase per kernel: how many, over how
    many shapes, on which targets."""
    order = TARGETS[:1] + (MMA_V2_TARGET,) + TARGETS[1:]
    families: dict = {}
    for entry in entries:
        name, target = entry.rsplit(" @ ", 1)
        family = families.setdefault(name.split("[", 1)[0], {"n": 0, "shapes": set(), "targets": set()})
        family["n"] += 1
        family["shapes"].add(name)
        family["targets"].add(target)
    return "; ".join(f"`{name}` {f['n']} ({len(f['shapes'])} shape{'s' if len(f['shapes']) > 1 else ''}: "
                     + ", ".join(t for t in order if t in f["targets"]) + ")" for name, f in families.items())


def _cell(counts: dict, stock: dict) -> str:
    if "error" in counts:
        return "error"
    text = f"{counts['total']} / {counts['in_loops']}"
    if len(counts["by_depth"]) > 1:
        text += " (" + ",".join(str(n) for n in counts["by_depth"][1:]) + " deeper)"
    if counts.get("guards"):
        text += f" g{counts['guards']}/{counts.get('guards_in_loops', 0)}"
    if above(counts, stock):
        text = f"**{text} ▲**"
    elif counts["total"] < stock["total"] or counts["in_loops"] < stock["in_loops"]:
        text += " ▼"
    return text


def write_report(document: dict, out: str) -> tuple[str, str]:
    version = document["environment"]["triton"]
    rows = document["kernels"]
    verdict = document["verdict"]
    base = os.path.join(out, f"local_ops_barriers_{version}")
    with open(base + ".json", "w") as f:
        json.dump(document, f, indent=1)
    lines = [f"# CTA barriers in the PTX: stock Triton vs our shared-memory islands (triton {version})", "",
             f"Produced by `{document['environment']['command']}` (CPU only: "
             f"{document['environment']['seconds']:.0f} s on {document['environment']['cpus']} CPUs). "
             "Every kernel of the paper suite and of the kernel suite compiled for sm_90 and sm_80 "
             f"(and, where sm_90 picks wgmma, for sm_90 with `DISABLE_MMA_V3=1`: `{MMA_V2_TARGET}`), "
             "each compile with an empty Triton cache.", "",
             "Modes: `stock`; `default` = `enable()` (conversions only); `local_load`, `local_store`, "
             f"`local_alloc` = `enable(only=\"{PLUGIN_METHODS},<op>\")`; `all` = the three.", "",
             "## Verdict", "",
             "| mode | kernels x targets compared | with the op | above stock (kernel: kernels x targets (shapes: "
             "targets)) | of which above `default` | "
             "fallbacks | errors |", "|---|---:|---:|---|---|---:|---:|"]
    for mode, entry in verdict.items():
        listed = f"{len(entry['above_stock'])}: " + grouped(entry["above_stock"]) if entry["above_stock"] \
            else "**none: no kernel above stock**"
        extra = str(len(entry["above_default"]))
        lines.append(f"| `{mode}` | {entry['compared']} | {entry['kernels_with_op'] if MODES[mode] else '-'} | "
                     f"{listed} | {extra if MODES[mode] else '-'} | {len(entry['fallbacks'])} | "
                     f"{len(entry['errors'])} |")
    lines += ["", "## Per kernel", "",
              "Each cell: CTA barriers in the PTX, total / inside loops (`(n deeper)`: at loop depth 2 and "
              "more); `gN/M`: N of them our guards, M of those inside loops; **▲**: above stock (in all, or at some loop depth); "
              "▼: fewer than stock. `=mode`: the TTGIR has none of the mode's ops, so it compiles as that "
              "mode. TTGIR ops: local loads / local stores / allocations with a source / converts in "
              "stock's TTGIR.", "",
              "| kernel | target | mma | TTGIR ll/ls/la/cvt | " + " | ".join(MODES) + " | lowered (all) | "
              "guards kept/emitted (all) |",
              "|---|---|---|---|" + "---|" * len(MODES) + "---|---|"]
    for row in rows:
        for target, data in row["targets"].items():
            modes = data["modes"]
            stock = modes["stock"]
            t = data["ttgir"]
            ops = f"{t.get('local_load', '-')}/{t.get('local_store', '-')}/{t.get('local_alloc', '-')}/" \
                  f"{t.get('convert_layout', '-')}"
            cells = []
            for mode in MODES:
                entry = modes.get(mode, {})
                if "error" in stock:
                    cells.append("error" if mode == "stock" else "-")
                elif mode == "stock":
                    cells.append(f"{stock['total']} / {stock['in_loops']}"
                                 + (" (" + ",".join(map(str, stock["by_depth"][1:])) + " deeper)"
                                    if len(stock["by_depth"]) > 1 else ""))
                elif "same_as" in entry:
                    cells.append(f"={entry['same_as']}")
                else:
                    cells.append(_cell(entry, stock))
            every = _resolve(modes, "all")
            plugin = every.get("plugin", {})
            lowered = (f"{plugin.get('local_loads_lowered', 0)} ll, {plugin.get('local_writes_lowered', 0)} ls+la, "
                       f"{plugin.get('conversions_lowered', 0)}/{plugin.get('conversions', 0)} cvt") if plugin else "-"
            guards = (f"{plugin['guards_emitted'] - plugin['guards_dropped']}/{plugin['guards_emitted']}"
                      if plugin else "-")
            lines.append(f"| {row['suite']}/{row['kernel']} | {target} | {t.get('mma', '-')} | {ops} | "
                         + " | ".join(cells) + f" | {lowered} | {guards} |")
    problems = [f"{row['suite']}/{row['kernel']} @ {target} [{mode}]: {p}"
                for row in rows for target, data in row["targets"].items()
                for mode, entry in data["modes"].items() for p in entry.get("loop_check", [])]
    failures = [item for mode in verdict for item in verdict[mode]["errors"] + verdict[mode]["fallbacks"]]
    stock_fails = sorted(set(item for mode in verdict for item in verdict[mode]["stock_fails"]))
    if stock_fails:
        lines += ["", "Not compared (stock Triton does not compile them for the target):", ""] + \
            [f"* {p}" for p in stock_fails]
    if problems:
        lines += ["", "Loops that disagree with LLVM's loop comments:", ""] + [f"* {p}" for p in problems]
    if failures:
        lines += ["", "Errors and fallbacks:", ""] + [f"* {p}" for p in sorted(set(failures))]
    text = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    return base + ".json", base + ".md"


def combine(directory: str) -> str:
    """``local_ops_barriers.md``: per op kind, the kernels above stock in every release measured."""
    documents = []
    for path in sorted(glob.glob(os.path.join(directory, "local_ops_barriers_*.json"))):
        with open(path) as f:
            documents.append(json.load(f))
    if not documents:
        raise SystemExit(f"no local_ops_barriers_<version>.json in {directory}")
    versions = [d["environment"]["triton"] for d in documents]
    lines = ["# Can the shared-memory ops be on by default? CTA barriers vs stock Triton", "",
             "From " + ", ".join(f"`local_ops_barriers_{v}.md`" for v in versions) + " (`python "
             "benchmarks/studies/local_ops_barriers.py --out benchmarks/results` under each release, then `--combine "
             "benchmarks/results`). Rule: no kernel may have more CTA barriers (`bar.sync` / `barrier.sync`) in "
             "its PTX than stock Triton, in all or inside loops (at any loop depth).", "",
             "| mode | " + " | ".join(f"above stock, triton {v}" for v in versions) + " | barriers: holds? |",
             "|---|" + "---|" * len(versions) + "---|"]
    for mode in MODES:
        if mode == "stock":
            continue
        cells, holds = [], True
        for document in documents:
            entry = document["verdict"][mode]
            n = entry["compared"]
            if entry["above_stock"]:
                holds = False
                loops = sorted(e[1] for e in entry.get("extra", []))
                cells.append(f"{len(entry['above_stock'])} of {n}, inside loops {loops[0]:+d} to {loops[-1]:+d} "
                             "per kernel: " + grouped(entry["above_stock"]))
            else:
                cells.append(f"none of {n}" + (f" ({entry['kernels_with_op']} with the op)" if MODES[mode] else ""))
            if entry["errors"] or entry["fallbacks"]:
                holds = False
                cells[-1] += f"; {len(entry['errors'])} errors, {len(entry['fallbacks'])} fallbacks"
        lines.append(f"| `{mode}` | " + " | ".join(cells) + f" | {'yes' if holds else '**no**'} |")
    path = os.path.join(directory, "local_ops_barriers.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=on_path.RESULTS)
    parser.add_argument("--jobs", type=int, default=1, help="kernels compiled in parallel (one process each)")
    parser.add_argument("--only", help="comma-separated kernel names (a paper case's name, or a kernel-suite name)")
    parser.add_argument("--combine", metavar="DIR", help="write DIR/local_ops_barriers.md from the JSONs in DIR")
    parser.add_argument("--rewrite", metavar="JSON", help="write the report of an earlier run's JSON again "
                        "(its verdict judged anew)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.combine:
        combine(args.combine)
        return 0
    if args.rewrite:
        with open(args.rewrite) as f:
            document = json.load(f)
        document["verdict"] = judge(document["kernels"])
        write_report(document, os.path.dirname(os.path.abspath(args.rewrite)))
        return 0
    if args.worker is not None:
        return _worker([int(i) for i in args.worker.split(",")], args.worker_out)

    import triton
    every = kernels()
    wanted = set(args.only.split(",")) if args.only else None
    indices = [i for i, k in enumerate(every) if wanted is None or k.name in wanted or k.case.kernel in wanted]
    start = time.perf_counter()
    scratch = tempfile.mkdtemp(prefix="ll_local_ops_barriers_out_")
    pending = list(indices)
    running: list = []
    finished: dict = {}
    env = dict(os.environ, TRITON_DEFAULT_FP_FUSION=os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"))
    while pending or running:
        while pending and len(running) < max(1, args.jobs):
            i = pending.pop(0)
            path = os.path.join(scratch, f"{i}.json")
            process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(i),
                                        "--worker-out", path], env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)
            running.append((i, path, process))
        i, path, process = running.pop(0)
        output, _ = process.communicate()
        if process.returncode == 0 and os.path.exists(path):
            with open(path) as f:
                finished[i] = json.load(f)[0]
        else:
            k = every[i]
            tail = (output or "").strip().splitlines()[-1:] or ["(no output)"]
            finished[i] = {"suite": k.suite, "kernel": k.name, "num_warps": k.case.num_warps,
                           "num_stages": k.case.num_stages, "environment": k.case.environment,
                           "targets": {t: {"ttgir": {}, "modes": {"stock": {
                               "error": f"worker exit {process.returncode}: {tail[0][:300]}"}}} for t in TARGETS}}
        row = finished[i]
        summary = ", ".join(f"{t}: " + " ".join(
            f"{m}={_resolve(d['modes'], m).get('total', '?')}/{_resolve(d['modes'], m).get('in_loops', '?')}"
            for m in MODES if m in d["modes"]) for t, d in row["targets"].items())
        print(f"[{len(finished)}/{len(indices)}] {row['suite']}/{row['kernel']}: {summary}", flush=True)
    rows = [finished[i] for i in indices]
    command = "python benchmarks/studies/local_ops_barriers.py --out benchmarks/results" + \
        (f" --only {args.only}" if args.only else "") + (f" --jobs {args.jobs}" if args.jobs != 1 else "")
    document = {"environment": {"triton": triton.__version__, "python": platform.python_version(),
                                "cpus": os.cpu_count(), "seconds": time.perf_counter() - start,
                                "command": command, "date": time.strftime("%Y-%m-%d")},
                "modes": {m: mode_only(m) if MODES[m] is not None else "stock" for m in MODES},
                "kernels": rows, "verdict": judge(rows)}
    os.makedirs(args.out, exist_ok=True)
    for path in write_report(document, args.out):
        print("wrote", path)
    for mode, entry in document["verdict"].items():
        print(f"{mode}: above stock: {', '.join(entry['above_stock']) or 'none'}"
              + (f"; errors {len(entry['errors'])}" if entry["errors"] else "")
              + (f"; fallbacks {len(entry['fallbacks'])}" if entry["fallbacks"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
