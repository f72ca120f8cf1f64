"""Which pairs of shared-memory accesses can run one after the other with no CTA barrier in
between, found by brute force over the paths of a whole program: calls are followed into the
callee and each return goes back to its own call; a path that starts inside a function and
returns past where it started may go back to any call site of that function (the start's caller
is not known).  Independent of ``passes.barriers.guard_barriers`` (no summaries: explicit call stacks),
so the tests can hold its pruning against it.

A program is read from LLVM IR (``llvm_program``: the simple IR the tests write) or from PTX
(``ptx_program``: what ``triton.compile`` gives).  Example (PTX, the helper called twice)::

    .entry k { call.uni h; call.uni h; ret; }
    .func h { st.shared [a]; bar.sync 0; ld.shared [a]; ret; }

``unprotected_pairs`` finds (h's ld.shared, h's st.shared): the first call's read, then the
second call's write of the same bytes, and no barrier between them on that path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

READ, WRITE = 1, 2
BOTH = READ | WRITE

# Lines of the simple LLVM IR the tests write (``llvm_program`` reads them; the pruning classifies
# them as the names say): our guard, Triton's CTA barrier (3.9's and 3.6's spelling), an
# island's inline-PTX load and store, Triton's store to shared memory, a store to global memory.
GUARD = '  call void asm sideeffect "bar.sync 0; // guard", ""()'
TRITON_BARRIER = "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)"
TRITON_BARRIER_36 = "  call void @llvm.nvvm.barrier0()"
OUR_LOAD = '  %v = call i32 asm sideeffect "ld.shared.b32 $0, [$1];", "=r,r"(i32 %a)'
OUR_STORE = '  call void asm sideeffect "st.shared.b32 [$0], $1;", "r,r"(i32 %a, i32 %b)'
TRITON_STORE = "  store i32 %x, ptr addrspace(3) %p, align 4"
GLOBAL_STORE = '  call void asm sideeffect "@$2 st.global.b32 [ $1 + 0 ], { $0 };", "r,l,b"(i32 %x, ptr addrspace(1) %q, i1 true)'


def terminator(targets: list[int]) -> str:
    """A random block's last line: ``ret`` with no target, else a branch to blocks ``%b<n>``."""
    if not targets:
        return "  ret void"
    if len(targets) == 1:
        return f"  br label %b{targets[0]}"
    return f"  br i1 %c, label %b{targets[0]}, label %b{targets[1]}"


def kernel(*lines: str) -> str:
    """A kernel ``@k`` of those lines (labels and branches included as written)."""
    return "define void @k() {\n" + "\n".join(lines) + "\n}\n"


@dataclass
class Block:
    # ("access", kind, label), ("barrier",) or ("call", callee name)
    items: list[tuple] = field(default_factory=list)
    successors: list[str] = field(default_factory=list)


@dataclass
class Function:
    entry: str
    blocks: dict[str, Block]


Program = dict[str, Function]


def unprotected_pairs(program: Program, depth: int = 4, across_calls: bool = False) -> set[tuple[str, str]]:
    """(first, second) labels of two accesses, one of them a write, such that some path runs
    the second after the first with no barrier in between.  Call stacks are kept explicitly up
    to ``depth`` calls (deeper calls are not followed: with recursion the paths are infinite).
    A call of a function the program does not define is an access that reads and writes.
    ``across_calls``: only pairs on a path that enters or leaves a function between them (the
    accesses of two calls in a row, of a call and its caller; not two stores of one island,
    which no barrier needs to separate and this search cannot tell apart by address)."""
    call_sites = {name: [] for name in program}
    for caller, function in program.items():
        for block_name, block in function.blocks.items():
            for at, item in enumerate(block.items):
                if item[0] == "call" and item[1] in program:
                    call_sites[item[1]].append((caller, block_name, at + 1))
    pairs = set()
    for name, function in program.items():
        for block_name, block in function.blocks.items():
            for at, item in enumerate(block.items):
                first = _access(item)
                if first is None:
                    continue
                first_kind, first_label = first
                start = (name, block_name, at + 1, (), False)
                seen, work = {start}, [start]
                while work:
                    function_name, current, position, stack, crossed = work.pop()
                    items = program[function_name].blocks[current].items
                    nexts = []
                    if position < len(items):
                        item = items[position]
                        access = _access(item)
                        if item[0] == "barrier":
                            continue
                        if access is not None:
                            kind, label = access
                            if (first_kind | kind) & WRITE and (crossed or not across_calls):
                                pairs.add((first_label, label))
                            nexts.append((function_name, current, position + 1, stack, crossed))
                        elif item[0] == "call":       # a call of a function of the program
                            if len(stack) < depth:
                                callee = program[item[1]]
                                nexts.append((item[1], callee.entry, 0,
                                              stack + ((function_name, current, position + 1),), True))
                        else:
                            nexts.append((function_name, current, position + 1, stack, crossed))
                    else:
                        successors = program[function_name].blocks[current].successors
                        if successors:
                            nexts += [(function_name, s, 0, stack, crossed) for s in successors]
                        elif stack:                   # a return to its own call
                            nexts.append(stack[-1] + (stack[:-1], True))
                        else:                         # a return past the start: any caller
                            nexts += [site + ((), True) for site in call_sites[function_name]]
                    for state in nexts:
                        if state not in seen:
                            seen.add(state)
                            work.append(state)
    return pairs


def _access(item: tuple):
    if item[0] == "access":
        return item[1], item[2]
    if item[0] == "call" and item[2:]:              # ("call", name, label): not defined here
        return BOTH, item[2]
    return None


def _resolve_external_calls(program: Program) -> Program:
    for function in program.values():
        for block in function.blocks.values():
            block.items = [item if item[0] != "call" or item[1] in program else ("call", item[1], f"call {item[1]}")
                           for item in block.items]
    return program


# --------------------------------------------------------------------------- LLVM IR

def llvm_program(text: str) -> Program:
    """The test's LLVM IR: ``define void @f() {``, labels ``b1:``, ``store``/``load`` with
    ``addrspace(3)``, inline ``st.shared``/``ld.shared``, guards, plans' and Triton's barriers,
    ``call void @g(...)`` (a quoted name too), ``br``, ``ret``."""
    program: Program = {}
    blocks: dict[str, Block] = {}
    current = None
    for line in text.split("\n"):
        define = re.match(r'define [^@]*@("[^"]+"|[-\w.$]+)\(', line)
        if define:
            current = Block()
            blocks = {"entry": current}
            program[define.group(1).strip('"')] = Function("entry", blocks)
            continue
        if current is None or line.startswith("}"):
            continue
        label = re.match(r"^([-\w.$]+):", line)
        stripped = line.strip()
        if label:
            current = blocks[label.group(1)] = Block()
        elif '"bar.sync 0;' in line or "@llvm.nvvm.barrier" in line:     # a guard, a plan's or Triton's
            current.items.append(("barrier",))
        elif " asm " in line:
            if "st.shared" in line:
                current.items.append(("access", WRITE, stripped))
            elif "ld.shared" in line:
                current.items.append(("access", READ, stripped))
        elif stripped.startswith("store") and "addrspace(3)" in line:
            current.items.append(("access", WRITE, stripped))
        elif " = load " in line and "addrspace(3)" in line:
            current.items.append(("access", READ, stripped))
        elif re.match(r"(?:tail )?call ", stripped):
            callee = re.search(r'@("[^"]+"|[-\w.$]+)\(', stripped)
            current.items.append(("call", callee.group(1).strip('"') if callee else "<through a pointer>"))
        elif stripped.startswith("br "):
            current.successors = re.findall(r"label %([-\w.$]+)", stripped)
    return _resolve_external_calls(program)


# --------------------------------------------------------------------------------- PTX

_PTX_HEADER = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(?P<name>[\w$.]+)")
_PTX_LABEL = re.compile(r"^(?P<name>\$?[\w$.]+):")
_PTX_BARRIER = re.compile(r"^(?:bar|barrier)\.sync(?:\.aligned)?\s+0\s*;")


def ptx_program(ptx: str) -> Program:
    """The functions and kernels of a PTX module (declarations skipped): shared-memory accesses
    (``st.shared``/``stmatrix`` write, ``ld.shared``/``ldmatrix`` read, ``atom``/``red.shared``
    both, labelled ``function:line``), CTA barriers (``bar.sync 0``), ``call``, branches and
    ``ret``.  Named barriers (``bar.sync 1, 128``) are not CTA barriers and count as nothing."""
    lines = ptx.split("\n")
    program: Program = {}
    index = 0
    while index < len(lines):
        header = _PTX_HEADER.match(lines[index])
        index += 1
        if not header:
            continue
        while index < len(lines) and lines[index].strip() != "{" and not lines[index].strip().endswith(";"):
            index += 1
        if index >= len(lines) or lines[index].strip() != "{":
            continue                                   # a declaration
        name = header.group("name")
        end = index + 1
        while not lines[end].startswith("}"):
            end += 1
        program[name] = _ptx_function(name, lines, index + 1, end)
        index = end + 1
    return _resolve_external_calls(program)


def _ptx_function(name: str, lines: list[str], first: int, end: int) -> Function:
    blocks = {"<entry>": Block(), "<exit>": Block()}
    current, falls_through = blocks["<entry>"], True
    for number in range(first, end):
        statement = lines[number].split("//")[0].strip()
        if not statement or statement.startswith((".", "{", "}")):
            continue
        label = _PTX_LABEL.match(statement)
        if label:
            block = blocks.setdefault(label.group("name"), Block())
            if falls_through:
                current.successors.append(label.group("name"))
            current, falls_through = block, True
            continue
        predicated = statement.startswith("@")
        if predicated:
            statement = statement.split(None, 1)[1]
        opcode = statement.split(None, 1)[0]
        operands = statement[len(opcode):].strip().rstrip(";").strip()
        where = f"{name}:{number + 1}"
        if opcode.startswith("bra") or opcode in ("ret", "exit"):
            target = operands.split(",")[0].strip() if opcode.startswith("bra") else "<exit>"
            blocks.setdefault(target, Block())
            current.successors.append(target)
            # A branch ends its block; the statements after a predicated one run when it is
            # not taken (after an unconditional one they are unreachable unless labelled).
            after = f"<after line {number + 1}>"
            blocks[after] = Block()
            if predicated:
                current.successors.append(after)
            current, falls_through = blocks[after], True
        elif opcode.startswith("call"):
            callee = re.sub(r"^\([^)]*\)\s*,\s*", "", operands).split(",")[0].strip()
            current.items.append(("call", callee))
        elif _PTX_BARRIER.match(statement):
            current.items.append(("barrier",))
        elif opcode.startswith(("st.shared", "stmatrix")):
            current.items.append(("access", WRITE, where))
        elif opcode.startswith(("ld.shared", "ldmatrix")):
            current.items.append(("access", READ, where))
        elif opcode.startswith(("atom.shared", "red.shared")):
            current.items.append(("access", BOTH, where))
    return Function("<entry>", blocks)
