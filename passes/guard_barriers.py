"""Drop the guard barriers of our islands that Triton's own barriers make redundant.

Why guards exist.  Triton's barrier analysis (membar) runs after our pass and cannot see the
shared-memory accesses of our islands (they are LLVM-dialect code, not ``ttg`` ops).  So an
island that reads or writes a buffer Triton's code also uses is fenced by a *guard* CTA barrier
before its first access and after its last (``passes.lower_conversions`` decides where, from
the TTGIR alone).  Often Triton puts a barrier of its own right next to ours - after a
``ttg.async_wait``, at the end of a pipelined loop, before the next buffer is written - and
ours then only costs time: an fp8 mma v2 matmul with our local loads ran 32% slower than stock
for two such barriers per iteration.

What this does.  Once Triton has produced the LLVM IR (``make_llir``), every access to shared
memory and every barrier of the kernel is in it, ours and Triton's alike.  A guard ``G`` can go
if no two accesses that may conflict are separated by ``G`` alone: walking backward from ``G``
and forward from it, each walk stopping at any other CTA barrier, we collect the kinds of access
met (read, write); ``G`` is needed iff a write lies behind and any access ahead, or a read
behind and a write ahead.  Guards are considered one at a time, each check seeing the barriers
still in place, so two guards in a row never both go.

Worked example (a pipelined loop, one iteration)::

    st.shared (Triton)         ; stage the operand
    bar.sync 0  (Triton)
    bar.sync 0  // guard   <- behind: nothing (stops at Triton's barrier): redundant
    ldmatrix ... (ours)
    bar.sync 0  // guard   <- behind: our reads; ahead: mma (no access), the back edge, then
    mma.sync ...              Triton's barrier before the next st.shared: redundant
    br loop

Conservative by construction: an instruction we do not recognise (a call, inline assembly
other than plain register or global-memory code, a generic-pointer load) counts as both a read
and a write, and only full CTA barriers (``bar.sync 0``, ``llvm.nvvm.barrier0``, ...) stop a
walk; so a guard stays whenever we cannot prove it idle.  Asynchronous work (``cp.async``,
wgmma, TMA) is never recognised, so its issue and its wait both count as accesses.  Only NVIDIA
guards are handled; on AMD a barrier is more than an ``s_barrier`` (LDS counters must drain
first) and ours stay as emitted.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field


# A guard barrier is spelled ``bar.sync 0; // guard`` (lowering.emit_nvidia), which tells it
# from Triton's barriers and from the barriers inside a plan; those are never dropped.
from ..lowering.emit_nvidia import GUARD_BARRIER_ASM

READ, WRITE = 1, 2
BOTH = READ | WRITE

# Full CTA barriers as Triton's LLVM IR spells them (3.6: barrier0; 3.9: barrier.cta.sync).
_BARRIER_CALLS = re.compile(
    r"call void @llvm\.nvvm\.(?:barrier0\(\)|barrier\.cta\.sync\.aligned(?:\.all)?\(i32 0\)|barrier\.sync\(i32 0\))")
_BARRIER_ASM = {"bar.sync 0;", "barrier.sync 0;", "barrier.sync.aligned 0;", "bar.sync 0x0;"}

# Intrinsics that touch no shared memory (everything else called counts as a read and a write).
_HARMLESS_INTRINSICS = (
    "llvm.nvvm.read.ptx.sreg.", "llvm.nvvm.shfl.", "llvm.nvvm.fma.", "llvm.nvvm.ex2.", "llvm.nvvm.rcp.",
    "llvm.nvvm.f2h.", "llvm.nvvm.fmax.", "llvm.nvvm.fmin.", "llvm.nvvm.mul.", "llvm.nvvm.prmt",
    "llvm.nvvm.redux.", "llvm.nvvm.vote.", "llvm.nvvm.bar.warp.sync", "llvm.nvvm.mma.", "llvm.nvvm.add.",
    "llvm.nvvm.div.", "llvm.nvvm.sqrt.", "llvm.nvvm.rsqrt.", "llvm.nvvm.lg2.", "llvm.nvvm.sin.", "llvm.nvvm.cos.",
    "llvm.nvvm.fence.proxy.async", "llvm.nvvm.ff2", "llvm.nvvm.f2", "llvm.nvvm.i2f", "llvm.nvvm.d2",
    "llvm.fma.", "llvm.fmuladd.", "llvm.fabs.", "llvm.exp2.", "llvm.exp.", "llvm.log2.", "llvm.log.", "llvm.sqrt.",
    "llvm.smax.", "llvm.smin.", "llvm.umax.", "llvm.umin.", "llvm.maxnum.", "llvm.minnum.", "llvm.maximum.",
    "llvm.minimum.", "llvm.vector.reduce.", "llvm.ctpop.", "llvm.ctlz.", "llvm.cttz.", "llvm.bitreverse.",
    "llvm.bswap.", "llvm.fshl.", "llvm.fshr.", "llvm.abs.", "llvm.copysign.", "llvm.floor.", "llvm.ceil.",
    "llvm.trunc.", "llvm.round.", "llvm.rint.", "llvm.nearbyint.", "llvm.lifetime.", "llvm.assume", "llvm.dbg.",
    "llvm.sin.", "llvm.cos.", "llvm.pow.", "llvm.is.fpclass.", "llvm.expect.", "llvm.umul.with.overflow.",
    "llvm.sadd.with.overflow.", "llvm.uadd.with.overflow.",
)

# Inline-assembly instructions that touch no shared memory: register arithmetic and global
# memory (Triton's loads and stores of tensors).  Matched on the mnemonic's start.
_HARMLESS_ASM = (
    "mov", "ld.global", "st.global", "cvt", "prmt", "selp", "shfl", "fma", "add", "sub", "mul", "mad", "ex2", "lg2",
    "rcp", "sqrt", "rsqrt", "min", "max", "abs", "neg", "and", "or", "xor", "not", "shl", "shr", "setp", "lop3",
    "bfe", "bfi", "brev", "clz", "popc", "createpolicy", "prefetch.global", "vote", "activemask", "redux.sync",
    "bar.warp.sync", "tanh", "sin", "cos", "div", "rem", "testp", "copysign", "fence.proxy.async", "cvta",
    "red.global", "atom.global", "set", "slct", "mma.sync", "dp4a", "dp2a",
)


@dataclass
class _Block:
    name: str
    lines: list[int] = field(default_factory=list)      # indices into the text's lines
    successors: list[str] = field(default_factory=list)
    predecessors: list[str] = field(default_factory=list)


_LABEL = re.compile(r'^(?P<name>[-\w.$]+|"[^"]+"):')
_TARGET = re.compile(r"label %(?P<name>[-\w.$]+|\"[^\"]+\")")
_ASM = re.compile(r'asm (?:sideeffect )?(?:alignstack )?(?:inteldialect )?"(?P<text>(?:[^"\\]|\\.)*)"')
_CALLEE = re.compile(r"call [^@]*@(?P<name>[-\w.$]+)\(")
_MEMORY = re.compile(r"^\s*(?:%[-\w.$]+ = )?(?P<op>load|store|atomicrmw|cmpxchg)\b(?P<rest>.*)$")


def _asm_access(text: str) -> int:
    """The access kinds of an inline-assembly string (LLVM escapes: \\0A newline, \\09 tab)."""
    text = text.replace("\\0A", "\n").replace("\\09", " ")
    kinds = 0
    for statement in re.split(r"[;\n]", text):
        statement = statement.split("//")[0].strip().strip("{}").strip()
        if not statement or statement.startswith((".reg", "}", "{")) or statement.endswith(":"):
            continue
        if statement.startswith("@"):   # a predicate: @%p1 st.shared ...
            parts = statement.split(None, 1)
            statement = parts[1] if len(parts) > 1 else ""
        mnemonic = statement.split(None, 1)[0] if statement else ""
        if not mnemonic:
            continue
        if mnemonic.startswith(("st.shared", "stmatrix")):
            kinds |= WRITE
        elif mnemonic.startswith(("ld.shared", "ldmatrix")):
            kinds |= READ
        elif not mnemonic.startswith(_HARMLESS_ASM) or ".shared" in mnemonic:
            kinds |= BOTH
    return kinds


def _pointer_space(rest: str) -> str:
    """The address space of the pointer operand of a load/store/atomic (``""`` = generic): the
    operand after the first top-level comma (``load <type>, ptr addrspace(3) %p``, ``store
    <type> %v, ptr %p``; commas inside constant expressions do not count)."""
    depth = 0
    for at, char in enumerate(rest):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == "," and depth == 0:
            m = re.match(r"\s*ptr(?: addrspace\((\d+)\))?", rest[at + 1:])
            return (m.group(1) or "") if m else ""
    return ""            # not understood: as generic (may be shared memory)
    return ""


def classify(line: str) -> str | int:
    """``"guard"``, ``"barrier"``, or the access kinds (0, READ, WRITE, BOTH) of one line."""
    asm = _ASM.search(line)
    if asm:
        text = asm.group("text")
        if text == GUARD_BARRIER_ASM:
            return "guard"
        if text in _BARRIER_ASM:
            return "barrier"
        return _asm_access(text)
    if _BARRIER_CALLS.search(line):
        return "barrier"
    call = _CALLEE.search(line)
    if call:
        return 0 if call.group("name").startswith(_HARMLESS_INTRINSICS) else BOTH
    memory = _MEMORY.match(line)
    if memory:
        if memory.group("op") in ("load", "store"):
            space = _pointer_space(memory.group("rest"))
        else:   # atomicrmw <op> ptr ..., cmpxchg ptr ...: the pointer comes first
            first = re.search(r"\bptr(?: addrspace\((\d+)\))?", memory.group("rest"))
            space = (first.group(1) or "") if first else ""
        if space not in ("", "3"):
            return 0    # global, constant, local memory
        if memory.group("op") == "load":
            return READ
        if memory.group("op") == "store":
            return WRITE
        return BOTH
    return 0


def _functions(lines: list[str]):
    """The blocks (by name, the entry block "<entry>") of each function body of the module."""
    start = None
    for index, line in enumerate(lines):
        if line.startswith("define "):
            start = index
        elif line.startswith("}") and start is not None:
            yield _blocks(lines, start + 1, index)
            start = None


def _blocks(lines: list[str], first: int, end: int) -> dict[str, _Block]:
    blocks: dict[str, _Block] = {}
    current = _Block("<entry>")
    blocks[current.name] = current
    in_switch = False       # a switch's cases follow it on lines of their own, up to "]"
    for index in range(first, end):
        line = lines[index]
        label = _LABEL.match(line)
        if label:
            current = _Block(label.group("name"))
            blocks[current.name] = current
            continue
        if not line.strip() or line.lstrip().startswith(";"):
            continue
        current.lines.append(index)
        stripped = line.strip()
        if stripped.startswith(("br ", "switch ", "indirectbr ", "callbr ")) or in_switch:
            current.successors += [m.group("name") for m in _TARGET.finditer(line)]
            in_switch = (in_switch or stripped.startswith("switch ")) and not stripped.endswith("]")
    for block in blocks.values():
        for successor in block.successors:
            if successor in blocks:
                blocks[successor].predecessors.append(block.name)
    return blocks


def _kinds_met(blocks: dict[str, _Block], kinds: dict[int, str | int], block: _Block, position: int,
               forward: bool) -> int:
    """Access kinds met walking from ``block.lines[position]`` (exclusive) until a barrier (a
    guard still in place counts), over every path."""
    met = 0
    seen: set[str] = set()
    work = [(block, position)]
    while work:
        current, at = work.pop()
        indices = current.lines[at + 1:] if forward else list(reversed(current.lines[:at]))
        stopped = False
        for index in indices:
            kind = kinds[index]
            if kind in ("barrier", "guard"):
                stopped = True
                break
            met |= kind
        if stopped:
            continue
        for name in (current.successors if forward else current.predecessors):
            if name in blocks and name not in seen:
                seen.add(name)
                nxt = blocks[name]
                work.append((nxt, -1 if forward else len(nxt.lines)))
    return met


def prune_guard_barriers(llir: str) -> tuple[str, int]:
    """``llir`` without the guard barriers proven redundant, and how many were dropped."""
    if GUARD_BARRIER_ASM not in llir:
        return llir, 0
    lines = llir.split("\n")
    kinds = {index: classify(line) for index, line in enumerate(lines)}
    removed: set[int] = set()
    for blocks in _functions(lines):
        for block in blocks.values():
            for position, index in enumerate(block.lines):
                if kinds[index] != "guard":
                    continue
                behind = _kinds_met(blocks, kinds, block, position, forward=False)
                ahead = _kinds_met(blocks, kinds, block, position, forward=True)
                if (behind & WRITE and ahead) or (behind & READ and ahead & WRITE):
                    continue
                kinds[index] = 0          # gone: later checks see it absent
                removed.add(index)
    if not removed:
        return llir, 0
    return "\n".join(line for index, line in enumerate(lines) if index not in removed), len(removed)


def pruning_stages_hook(*args):
    """A Triton stages hook that only wraps ``llir`` with ``prune_guard_barriers``: for compiling
    a module that already holds our islands (``ll-opt --emit``, the GPU checks of
    ``benchmarks/``) as ``linear_layouts.enable()`` would.  The no-argument call of Triton
    3.7+ asks for a cache key: the pruning is part of the compiler, so it names itself."""
    if not args:
        return "linear-layouts-guard-pruning", "linear-layouts-guard-pruning"
    stages = args[1]
    if stages is not None and "llir" in stages:
        make_llir = stages["llir"]
        stages["llir"] = lambda src, metadata: prune_guard_barriers(make_llir(src, metadata))[0]
    return None


@contextlib.contextmanager
def guard_pruning():
    """``with guard_pruning(): triton.compile(path_of_module_with_islands, ...)``."""
    import triton
    previous = triton.knobs.runtime.add_stages_inspection_hook
    triton.knobs.runtime.add_stages_inspection_hook = pruning_stages_hook
    try:
        yield
    finally:
        triton.knobs.runtime.add_stages_inspection_hook = previous
