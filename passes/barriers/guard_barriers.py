"""Drop the guard barriers of our islands that Triton's own barriers make redundant.

Why guards exist.  Triton's barrier analysis (membar) runs after our pass and cannot see the
shared-memory accesses of our islands (they are LLVM-dialect code, not ``ttg`` ops).  So an
island that reads or writes a buffer Triton's code also uses is fenced by a *guard* CTA barrier
before its first access and after its last (``passes.lower_conversions`` decides where, from
the TTGIR alone).  Often Triton puts a barrier of its own right next to ours - after a
``ttg.async_wait``, at the end of a pipelined loop, before the next buffer is written - and
ours then only costs time, every iteration of a loop (measured: docs/studies.md, 'Shared-memory
ops in whole kernels').

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

Calls.  A ``@triton.jit(noinline=True)`` helper is an LLVM function of its own, and Triton's
barrier analysis is interprocedural (a call site counts as the callee's accesses), so the walks
are too.  A walk that reaches its function's entry (backward) or a ``ret`` (forward) goes on at
every call site of the function: the code before, or after, each ``call @f`` (a function with no
call site is the kernel: nothing of this CTA runs before or after it).  A walk that meets a
``call`` of a function defined in the module meets what that function does from its entry up to
its first barrier (forward; from its returns back to its last barrier, backward), and goes on
past the call only if some path through the callee has no barrier at all.  Those summaries are
computed for every function at once, to a fixed point (recursion included: they only grow), and
again after a guard of a called function goes.  Guards are judged callees first, then by name,
so the result does not depend on the order of the functions in the text.  Example: a helper
with an island, called twice in a row::

    define void @kernel() {               define internal void @helper() {
      call void @helper()                   bar.sync 0  // guard     (1)
      call void @helper()                   st.shared ...  (ours)
      ret void                              bar.sync 0     (the plan's)
    }                                       ld.shared ...  (ours)
                                            bar.sync 0  // guard     (2)
                                            ret void
                                          }

(1), behind: the helper's entry, so each call site: before the first call, the kernel's entry
(nothing); before the second, the first call, met backward from its ``ret``: guard (2) at once
(nothing).  Nothing behind: (1) goes.  (2), behind: our reads; ahead: the ``ret``, so after each
call: after the first, the second call, met from its entry: now that (1) is gone, our stores.  A
read behind and a write ahead: (2) stays, the one barrier between the two calls (stock Triton
has one there too).  Stopping at the entry and the ``ret``, as this did before, both went and
the second call's stores could overwrite bytes the first call's loads had not read yet.

Conservative by construction: an instruction we do not recognise (a call of a function the
module does not define, a call through a pointer, inline assembly other than plain register or
global-memory code, a generic-pointer load) counts as both a read and a write, and only full CTA
barriers (``bar.sync 0``, ``llvm.nvvm.barrier0``, ...) stop a walk; so a guard stays whenever we
cannot prove it idle.  Asynchronous work (``cp.async``, wgmma, TMA) is never recognised, so its
issue and its wait both count as accesses.  Only NVIDIA guards are handled; on AMD a barrier is
more than an ``s_barrier`` (LDS counters must drain first) and ours stay as emitted.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field


# A guard barrier is spelled ``bar.sync 0; // guard`` (lowering.emit.emit_nvidia), which tells it
# from Triton's barriers and from the barriers inside a plan; those are never dropped.
from ...lowering.emit.emit_nvidia import GUARD_BARRIER_ASM

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

# The shared-memory matrix intrinsics: ``ldmatrix`` a read, ``stmatrix`` a write (``classify``).
_MATRIX_INTRINSICS = ("llvm.nvvm.ldmatrix.", "llvm.nvvm.stmatrix.")

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


@dataclass
class _Function:
    name: str
    blocks: dict[str, _Block]
    entry: str                                           # the name of its entry block


@dataclass(frozen=True)
class _Point:
    """A place to walk from: after (forward) or before (backward) ``lines[position]`` of a
    block; position -1 (forward) or ``len(lines)`` (backward) is the block's edge."""
    function: str
    block: str
    position: int


@dataclass
class _Summaries:
    """What a call of each function does, seen from the call site (current guards in place):
    ``entry``: the access kinds met from its entry up to its first barrier on any path (calls
    it makes included); ``exit``: likewise backward from its returns; ``transparent``: some path
    from its entry to a return meets no barrier."""
    entry: dict[str, int]
    exit: dict[str, int]
    transparent: dict[str, bool]


_NAME = r'"(?:[^"\\]|\\.)*"|[-\w.$]+'
_LABEL = re.compile(r'^(?P<name>[-\w.$]+|"[^"]+"):')
_TARGET = re.compile(r"label %(?P<name>[-\w.$]+|\"[^\"]+\")")
_ASM = re.compile(r'asm (?:sideeffect )?(?:alignstack )?(?:inteldialect )?"(?P<text>(?:[^"\\]|\\.)*)"')
_CALL = re.compile(r"^\s*(?:%[-\w.$\"]+ = )?(?:(?:tail|musttail|notail) )?call(?:br)?\b")
_CALLEE = re.compile(r"call [^@]*@(?P<name>" + _NAME + r")\(")
_DEFINE = re.compile(r"^define [^@]*@(?P<name>" + _NAME + r")\(")
_MEMORY = re.compile(r"^\s*(?:%[-\w.$]+ = )?(?P<op>load|store|atomicrmw|cmpxchg)\b(?P<rest>.*)$")
# Every line ``classify`` does not call 0 holds one of these words: one search for them lets the
# (many) plain arithmetic lines of a kernel skip the four patterns above.
_MAY_ACCESS = re.compile(r"asm|call|load|store|atomicrmw|cmpxchg")


def _unquoted(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name


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
    """``"guard"``, ``"barrier"``, or the access kinds (0, READ, WRITE, BOTH) of one line.  A
    call of a function (other than a harmless intrinsic) is a read and a write here; the walks
    below see through calls of functions defined in the module (``_Program``)."""
    if not _MAY_ACCESS.search(line):
        return 0
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
    if _CALL.match(line):
        call = _CALLEE.search(line)
        if call and _unquoted(call.group("name")).startswith(_HARMLESS_INTRINSICS):
            return 0
        if call and _unquoted(call.group("name")).startswith(_MATRIX_INTRINSICS):
            # ldmatrix reads shared memory, stmatrix writes it (Triton's local loads and our
            # islands' NVVM form both call them), as their inline-PTX spellings above
            return READ if _unquoted(call.group("name")).startswith("llvm.nvvm.ldmatrix.") else WRITE
        return BOTH          # any other function, or a call through a pointer
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


def _blocks(lines: list[str], first: int, end: int) -> tuple[dict[str, _Block], str]:
    """The blocks of one function body (lines ``first`` to ``end``) and its entry block's name
    (``"<entry>"`` unless the body starts with a label)."""
    blocks: dict[str, _Block] = {}
    current = _Block("<entry>")
    blocks[current.name] = current
    in_switch = False       # a switch's cases follow it on lines of their own, up to "]"
    for index in range(first, end):
        line = lines[index]
        label = _LABEL.match(line) if line[:1] not in (" ", "") else None   # instructions are indented
        if label:
            if current.name == "<entry>" and not current.lines:
                del blocks["<entry>"]         # the body starts with a label: that block is the entry
            current = _Block(label.group("name"))
            blocks[current.name] = current
            continue
        stripped = line.strip()
        if not stripped or stripped[0] == ";":
            continue
        current.lines.append(index)
        if in_switch or stripped.startswith(("br ", "switch ", "indirectbr ", "callbr ")):
            current.successors += [m.group("name") for m in _TARGET.finditer(line)]
            in_switch = (in_switch or stripped.startswith("switch ")) and not stripped.endswith("]")
    for block in blocks.values():
        block.successors = [name for name in block.successors if name in blocks]
        for successor in block.successors:
            blocks[successor].predecessors.append(block.name)
    return blocks, next(iter(blocks))


class _Program:
    """The functions of an LLVM IR module and how they call each other.

    ``callee_at``: the lines that call a function defined in the module, and which; a walk
    crosses such a call with that function's summary, not as "unknown: both".
    ``call_sites``: for each function, the points just at its calls; a walk that leaves a
    function (its entry, backward; a return, forward) goes on from each of them.  A function
    without call sites is an entry point of the kernel: nothing of this CTA runs before or after
    it.  A call through a pointer could enter any function, so with one in the module leaving
    any function meets "unknown: both" (Triton's LLVM IR has none).
    """

    def __init__(self, lines: list[str]):
        self.functions: dict[str, _Function] = {}
        start, name = None, ""
        for index, line in enumerate(lines):
            # (_DEFINE is anchored at "define ": most lines are not looked at by the pattern)
            define = _DEFINE.match(line) if line.startswith("define ") else None
            if define:
                start, name = index, _unquoted(define.group("name"))
            elif line.startswith("}") and start is not None:
                blocks, entry = _blocks(lines, start + 1, index)
                self.functions[name] = _Function(name, blocks, entry)
                start = None
        self.callee_at: dict[int, str] = {}
        self.call_sites: dict[str, list[_Point]] = {name: [] for name in self.functions}
        self.indirect_calls = False
        for function in self.functions.values():
            for block in function.blocks.values():
                for position, index in enumerate(block.lines):
                    line = lines[index]
                    if "call" not in line or not _CALL.match(line) or _ASM.search(line):
                        continue
                    call = _CALLEE.search(line)
                    if call is None:
                        self.indirect_calls = True
                    elif _unquoted(call.group("name")) in self.functions:
                        callee = _unquoted(call.group("name"))
                        self.callee_at[index] = callee
                        self.call_sites[callee].append(_Point(function.name, block.name, position))

    def in_order(self) -> list[_Function]:
        """The functions, callees before their callers (ties and cycles by name): a result that
        does not depend on the order of the functions in the text."""
        done: set[str] = set()
        order: list[_Function] = []

        def visit(name: str) -> None:
            if name in done:
                return
            done.add(name)
            callees = sorted({self.callee_at[index] for block in self.functions[name].blocks.values()
                              for index in block.lines if index in self.callee_at})
            for callee in callees:
                visit(callee)
            order.append(self.functions[name])

        for name in sorted(self.functions):
            visit(name)
        return order

    def summaries(self, kinds: dict[int, str | int]) -> _Summaries:
        """Every function's summary, to a fixed point: start from "nothing, opaque" and walk
        again until no summary grows (they only grow, so this ends, recursion included)."""
        summaries = _Summaries({n: 0 for n in self.functions}, {n: 0 for n in self.functions},
                               {n: False for n in self.functions})
        if not self.callee_at:
            return summaries
        changed = True
        while changed:
            changed = False
            for name, function in self.functions.items():
                entry, transparent = self.walk(kinds, summaries, [_Point(name, function.entry, -1)],
                                               forward=True, leave=False)
                exits = [_Point(name, block.name, len(block.lines))
                         for block in function.blocks.values() if not block.successors]
                exit_, _ = self.walk(kinds, summaries, exits, forward=False, leave=False)
                if (entry, exit_, transparent) != (summaries.entry[name], summaries.exit[name],
                                                    summaries.transparent[name]):
                    summaries.entry[name], summaries.exit[name] = entry, exit_
                    summaries.transparent[name] = transparent
                    changed = True
        return summaries

    def walk(self, kinds: dict[int, str | int], summaries: _Summaries, starts: list[_Point], forward: bool,
             leave: bool) -> tuple[int, bool]:
        """The access kinds met walking from ``starts`` (exclusive) over every path until a
        barrier (a guard still in place counts), and whether some path left its function (at a
        return, forward; at the entry, backward).  A call of a function of the module is met as
        its summary and crossed only if it is transparent.  ``leave``: a path that leaves its
        function goes on at every call site of it (before the call, backward; after it, forward)."""
        met, left = 0, False
        seen: set[_Point] = set()
        work = list(starts)
        while work:
            point = work.pop()
            function = self.functions[point.function]
            block = function.blocks[point.block]
            indices = block.lines[point.position + 1:] if forward else reversed(block.lines[:point.position])
            stopped = False
            for index in indices:
                kind = kinds[index]
                if kind in ("barrier", "guard"):
                    stopped = True
                    break
                callee = self.callee_at.get(index)
                if callee is None:
                    met |= kind
                    continue
                met |= summaries.entry[callee] if forward else summaries.exit[callee]
                if not summaries.transparent[callee]:
                    stopped = True
                    break
            if stopped:
                continue
            neighbours = block.successors if forward else block.predecessors
            if neighbours:
                for name in neighbours:
                    nxt = _Point(function.name, name, -1 if forward else len(function.blocks[name].lines))
                    if nxt not in seen:
                        seen.add(nxt)
                        work.append(nxt)
                continue
            left = True             # a return (forward) or the entry (backward): the function is left
            if not leave:
                continue
            if self.indirect_calls:
                met |= BOTH
            for site in self.call_sites[function.name]:
                if site not in seen:
                    seen.add(site)
                    work.append(site)
        return met, left


class _LineKinds(dict):
    """``classify`` of each line by index, computed when first asked for: the walks from a guard
    stop at the nearest barriers, so in a large kernel most lines are never looked at."""

    def __init__(self, lines: list[str]):
        super().__init__()
        self.lines = lines

    def __missing__(self, index: int) -> str | int:
        kind = self[index] = classify(self.lines[index])
        return kind


def prune_guard_barriers(llir: str) -> tuple[str, int]:
    """``llir`` without the guard barriers proven redundant, and how many were dropped."""
    if GUARD_BARRIER_ASM not in llir:
        return llir, 0
    lines = llir.split("\n")
    kinds = _LineKinds(lines)
    program = _Program(lines)
    summaries = None
    removed: set[int] = set()
    for function in program.in_order():
        for block in function.blocks.values():
            for position, index in enumerate(block.lines):
                if GUARD_BARRIER_ASM not in lines[index] or kinds[index] != "guard":
                    continue
                if summaries is None:
                    summaries = program.summaries(kinds)
                here = [_Point(function.name, block.name, position)]
                behind, _ = program.walk(kinds, summaries, here, forward=False, leave=True)
                ahead, _ = program.walk(kinds, summaries, here, forward=True, leave=True)
                if (behind & WRITE and ahead) or (behind & READ and ahead & WRITE):
                    continue
                kinds[index] = 0          # gone: later checks see it absent
                removed.add(index)
                if program.call_sites[function.name]:
                    summaries = None      # this function's summary (and its callers') may grow
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
