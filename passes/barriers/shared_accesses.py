"""What one line of a kernel's LLVM IR does to shared memory: ``classify`` says whether it is
one of our guard barriers, another full CTA barrier, or which kinds of access (read, write) it
may make.  ``passes.barriers.guard_barriers`` walks from each guard over these answers.

Conservative by construction: what is not recognised counts as both a read and a write - a call
of a function (the walks see through the module's own functions), inline assembly other than
plain register or global-memory code, a load or store through a generic pointer.  Examples::

    store i32 %v, ptr addrspace(3) %p                    -> WRITE
    %x = load <4 x i32>, ptr addrspace(1) %q              -> 0 (global memory)
    call void asm sideeffect "ldmatrix.sync...", ...      -> READ
    call void asm sideeffect "bar.sync 0; // guard", ""   -> "guard" (also "... // guard alone")
    call void @llvm.nvvm.barrier0()                       -> "barrier"
"""

from __future__ import annotations

import functools
import re

# A guard barrier is spelled ``bar.sync 0; // guard`` (lowering.emit.emit_nvidia), which tells it
# from Triton's barriers and from the barriers inside a plan; those are never dropped.
from ...lowering.emit.emit_nvidia import ALONE_GUARD_BARRIER_ASM, GUARD_BARRIER_ASM

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


NAME = r'"(?:[^"\\]|\\.)*"|[-\w.$]+'
INLINE_ASM = re.compile(r'asm (?:sideeffect )?(?:alignstack )?(?:inteldialect )?"(?P<text>[^"\\]*(?:\\.[^"\\]*)*)"')
CALL = re.compile(r"^\s*(?:%[-\w.$\"]+ = )?(?:(?:tail|musttail|notail) )?call(?:br)?\b")
CALLEE = re.compile(r"call [^@]*@(?P<name>" + NAME + r")\(")
_MEMORY = re.compile(r"^\s*(?:%[-\w.$]+ = )?(?P<op>load|store|atomicrmw|cmpxchg)\b(?P<rest>.*)$")




def may_access(line: str) -> bool:
    """Whether ``line`` holds one of the words every line that ``classify`` does not call 0
    holds: the (many) plain arithmetic lines of a kernel skip the patterns above (``in`` tests:
    several times quicker than one search for the alternatives)."""
    return ("call" in line or "asm" in line or "store" in line or "load" in line or "atomicrmw" in line
            or "cmpxchg" in line)


def unquoted(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name


@functools.lru_cache(maxsize=1024)
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


_POINTER = re.compile(r"\s*ptr(?: addrspace\((\d+)\))?")
_FIRST_POINTER = re.compile(r"\bptr(?: addrspace\((\d+)\))?")
# The first comma, with no bracket before it but whole ``<...>`` (a vector type) holding none:
# a comma at the top level, found by one match where most loads and stores have one.
_PLAIN_FIRST_COMMA = re.compile(r"[^,()\[\]{}<>]*(?:<[^,()\[\]{}<>]*>[^,()\[\]{}<>]*)*,")


def _pointer_space(rest: str) -> str:
    """The address space of the pointer operand of a load/store/atomic (``""`` = generic): the
    operand after the first top-level comma (``load <type>, ptr addrspace(3) %p``, ``store
    <type> %v, ptr %p``; commas inside constant expressions do not count)."""
    plain = _PLAIN_FIRST_COMMA.match(rest)
    if plain:
        m = _POINTER.match(rest, plain.end())
        return (m.group(1) or "") if m else ""
    depth = 0
    for at, char in enumerate(rest):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == "," and depth == 0:
            m = _POINTER.match(rest, at + 1)
            return (m.group(1) or "") if m else ""
    return ""            # not understood: as generic (may be shared memory)


def classify(line: str) -> str | int:
    """``"guard"``, ``"barrier"``, or the access kinds (0, READ, WRITE, BOTH) of one line.  A
    call of a function (other than a harmless intrinsic) is a read and a write here; the walks
    below see through calls of functions defined in the module (``_Program``)."""
    if not may_access(line):
        return 0
    asm = INLINE_ASM.search(line) if "asm " in line else None      # (the words each pattern needs first)
    if asm:
        text = asm.group("text")
        if text == GUARD_BARRIER_ASM or text == ALONE_GUARD_BARRIER_ASM:
            return "guard"
        if text in _BARRIER_ASM:
            return "barrier"
        return _asm_access(text)
    if "@llvm.nvvm.barrier" in line and _BARRIER_CALLS.search(line):
        return "barrier"
    if "call" in line and CALL.match(line):
        call = CALLEE.search(line)
        name = unquoted(call.group("name")) if call else ""
        if call and name.startswith(_HARMLESS_INTRINSICS):
            return 0
        if call and name.startswith(_MATRIX_INTRINSICS):
            # ldmatrix reads shared memory, stmatrix writes it (Triton's local loads and our
            # islands' NVVM form both call them), as their inline-PTX spellings above
            return READ if name.startswith("llvm.nvvm.ldmatrix.") else WRITE
        return BOTH          # any other function, or a call through a pointer
    memory = _MEMORY.match(line)
    if memory:
        op, rest = memory.group("op", "rest")
        if op in ("load", "store"):
            space = _pointer_space(rest)
        else:   # atomicrmw <op> ptr ..., cmpxchg ptr ...: the pointer comes first
            first = _FIRST_POINTER.search(rest)
            space = (first.group(1) or "") if first else ""
        if space not in ("", "3"):
            return 0    # global, constant, local memory
        return READ if op == "load" else WRITE if op == "store" else BOTH
    return 0
