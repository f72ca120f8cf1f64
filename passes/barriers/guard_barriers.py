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

Guards of an island alone.  The guard before a conversion's island that is the kernel's only
shared-memory island, and whose kernel has no shared-memory op of Triton's that could touch its
bytes (``passes.barriers.buffer_spans``), orders the island after one thing only: itself, in the
previous iteration of its loop (``GuardPlacement.before_alone``; spelled ``bar.sync 0; // guard
alone``).  Triton's accesses do not matter to it, so its walk looks for barriers alone: walking
backward from it, every path must meet one of Triton's own CTA barriers (an NVVM barrier call;
inline ``bar.sync`` may be the plan's own, inside the island) before it meets the guard again
(any copy of it: where LLVM duplicated the island, reaching one is reaching the island's code,
which lies just after it).  Reaching the kernel's entry is fine: nothing of the island ran
before.  Example, a pipelined loop::

    loop:
      bar.sync 0; // guard alone    <- behind: the back edge, then Triton's barrier: it goes
      st.shared ...; ld.shared ...   (the island)
      st.global ...
      cp.async.wait_group 0
      barrier.cta.sync 0            (Triton's, after its async wait)
      ldmatrix ...; cp.async ...     (Triton's, on buffers apart from the island's)
      br loop

These are judged only where every guard of the module is such a guard: a regular guard's walk
may have stopped at one, and the two rules must not each lean on the other.

Conservative by construction: an instruction we do not recognise (a call of a function the
module does not define, a call through a pointer, inline assembly other than plain register or
global-memory code, a generic-pointer load) counts as both a read and a write, and only full CTA
barriers (``bar.sync 0``, ``llvm.nvvm.barrier0``, ...) stop a walk; so a guard stays whenever we
cannot prove it idle.  Asynchronous work (``cp.async``, wgmma, TMA) is never recognised, so its
issue and its wait both count as accesses.  Only NVIDIA guards are handled; on AMD a barrier is
more than an ``s_barrier`` (LDS counters must drain first) and ours stay as emitted.

What it reads.  This runs on every kernel with a guard, so it reads little of the text: the
blocks come from the lines at the margin (``define``, labels, ``}``) and each block's
terminator; only lines holding one of a few words (a call, inline assembly, a load, a store,
an atomic) can access shared memory or synchronise, and a walk looks at those alone, in the
blocks it enters, from its guard outward; a walk from a guard stops once it has met both kinds.
The answers are those of a classification of every line (docs/compile-time.md, 'Pruning guard
barriers: reading less').
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import re
from dataclasses import dataclass


# A guard barrier is read as one line, ``bar.sync 0; // guard`` (lowering.emit.emit_nvidia), which
# tells it from Triton's barriers and from the barriers inside a plan; those are never dropped.
from ...lowering.emit.emit_nvidia import ALONE_GUARD_BARRIER_ASM, GUARD_BARRIER_ASM
from .barrier_pairs import joined_pairs, split_pairs
# What each line does (``classify``); READ, WRITE, BOTH are re-exported for the tests and tools.
from .shared_accesses import (BOTH, CALL, CALLEE, INLINE_ASM, NAME, READ, WRITE, classify, may_access,  # noqa: F401
                              unquoted)


class _Block:
    """A basic block: the lines ``first`` to ``end`` (its label's line not included) of the
    text, where it branches to and what branches to it.

    A walk looks only at the lines of a block that may access shared memory, synchronise or
    call (``may_access``; not comments): every other line is no access (``classify`` gives 0)
    and no call, so it steps from one of these lines straight to the next.  ``lines``: all of
    them, in order, found the first time a walk enters the block at an edge; a walk from a line
    inside it (a guard, a call) that finds them not yet known looks at the lines it crosses
    only (a guard is often a few lines from a barrier in a block of thousands)."""

    def __init__(self, name: str, text_lines: list[str], first: int, end: int):
        self.name, self.text_lines, self.first, self.end = name, text_lines, first, end
        self.successors: list[str] = []
        self.predecessors: list[str] = []

    @functools.cached_property
    def lines(self) -> list[int]:
        return list(self._scan(self.first, self.end, 1))

    def crossed(self, position: int, forward: bool):
        """The lines a walk from line ``position`` (exclusive; ``first - 1`` and ``end`` are
        the block's edges) crosses that may matter, nearest first."""
        if "lines" in self.__dict__ or position in (self.first - 1, self.end):
            lines = self.lines
            if forward:
                return lines[bisect.bisect_right(lines, position):]
            return reversed(lines[:bisect.bisect_left(lines, position)])
        if forward:
            return self._scan(position + 1, self.end, 1)
        return self._scan(position - 1, self.first - 1, -1)

    def _scan(self, start: int, stop: int, step: int):
        text_lines = self.text_lines
        for index in range(start, stop, step):
            line = text_lines[index]
            if may_access(line) and line.lstrip()[:1] != ";":
                yield index


@dataclass
class _Function:
    name: str
    blocks: dict[str, _Block]
    entry: str                                           # the name of its entry block


@dataclass(frozen=True)
class _Point:
    """A place to walk from: after (forward) or before (backward) line ``position`` of the text,
    in a block; ``first - 1`` (forward) or ``end`` (backward) is the block's edge."""
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


_LABEL = re.compile(r'^(?P<name>[-\w.$]+|"[^"]+"):')
_TARGET = re.compile(r"label %(?P<name>[-\w.$]+|\"[^\"]+\")")
_DEFINE = re.compile(r"^define [^@]*@(?P<name>" + NAME + r")\(")


_TERMINATORS = ("br ", "switch ", "indirectbr ", "callbr ")


def _targets(text_lines: list[str], first: int, end: int) -> list[str]:
    """The labels the block of lines ``first`` to ``end`` branches to, read off its terminator:
    its last instruction, on one line of its own (LLVM's printer puts nothing after it).  A
    switch may list its cases on lines of their own, up to "]": a block whose last line is not
    a terminator is read line by line, a switch's case lines with it."""
    for index in range(end - 1, first - 1, -1):
        last = text_lines[index].strip()
        if last and last[0] != ";":
            break
    else:
        return []
    if last.startswith(_TERMINATORS):
        return _TARGET.findall(text_lines[index])
    if last.startswith(("ret", "unreachable")):
        return []
    targets: list[str] = []
    in_switch = False
    for index in range(first, end):
        stripped = text_lines[index].strip()
        if not stripped or stripped[0] == ";":
            continue
        if in_switch or stripped.startswith(_TERMINATORS):
            targets += _TARGET.findall(text_lines[index])
            in_switch = (in_switch or stripped.startswith("switch ")) and not stripped.endswith("]")
    return targets


def _blocks(text_lines: list[str], first: int, end: int, labels: list[tuple[int, str]]
            ) -> tuple[dict[str, _Block], str]:
    """The blocks of one function body (lines ``first`` to ``end``, whose label lines are
    ``labels``: (index, name)) and its entry block's name (``"<entry>"`` unless the body starts
    with a label: no instruction before its first one)."""
    blocks: dict[str, _Block] = {}
    first_label = labels[0][0] if labels else end
    if not labels or any((line := text_lines[index].strip()) and line[0] != ";" for index in range(first, first_label)):
        blocks["<entry>"] = _Block("<entry>", text_lines, first, first_label)
    ends = [index for index, _ in labels[1:]] + [end]
    for (index, name), block_end in zip(labels, ends):
        blocks[name] = _Block(name, text_lines, index + 1, block_end)
    for block in blocks.values():
        block.successors = [name for name in _targets(text_lines, block.first, block.end) if name in blocks]
        for successor in block.successors:
            blocks[successor].predecessors.append(block.name)
    return blocks, next(iter(blocks))


def _functions(text_lines: list[str]) -> dict[str, _Function]:
    """The functions defined in the text, from its lines that start at the margin (``define``,
    labels, ``}``; instructions are indented)."""
    functions: dict[str, _Function] = {}
    start, name, labels = None, "", []
    for index in [index for index, line in enumerate(text_lines) if line[:1] not in " "]:
        line = text_lines[index]
        define = _DEFINE.match(line) if line.startswith("define ") else None
        if define:
            start, name, labels = index, unquoted(define.group("name")), []
        elif start is None:
            continue
        elif line.startswith("}"):
            blocks, entry = _blocks(text_lines, start + 1, index, labels)
            functions[name] = _Function(name, blocks, entry)
            start = None
        else:
            label = _LABEL.match(line)
            if label:
                labels.append((index, label.group("name")))
    return functions


def _lines_holding(text: str, text_lines: list[str], needles: tuple[str, ...]) -> dict[int, int]:
    """The lines of ``text`` (split into ``text_lines``) that hold any of ``needles``: {index:
    offset of the line's start}.  Each is found by its text in the list, from the previous one
    on (quicker than counting the newlines before it): a line equal to it in between would
    hold a needle too, and have been found first."""
    starts = set()
    for needle in needles:
        at = text.find(needle)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(needle, at + 1)
    found: dict[int, int] = {}
    index = -1
    for start in sorted(starts):
        end = text.find("\n", start)
        index = text_lines.index(text[start:] if end < 0 else text[start:end], index + 1)
        found[index] = start
    return found


class _Program:
    """The functions of an LLVM IR module and how they call each other.

    ``callee_at``: the lines that call a function defined in the module, and which; a walk
    crosses such a call with that function's summary, not as "unknown: both".
    ``call_sites``: for each function, the points just at its calls; a walk that leaves a
    function (its entry, backward; a return, forward) goes on from each of them.  A function
    without call sites is an entry point of the kernel: nothing of this CTA runs before or after
    it.  A call through a pointer could enter any function, so with one in the module leaving
    any function meets "unknown: both" (``indirect_calls``, looked for by the guard check only
    where it could change the answer; Triton's LLVM IR has none).

    Built from the few lines that matter: those at the margin (``define``, labels, ``}``), each
    block's terminator, and the lines that name a function of the module; a block's other lines
    are looked at only when a walk crosses them (``_Block.crossed``).
    """

    def __init__(self, text: str, text_lines: list[str]):
        self.text_lines = text_lines
        self.functions = _functions(text_lines)
        self._spans = sorted(((block.first, block.end, function, block)
                              for function in self.functions.values() for block in function.blocks.values()
                              if block.first < block.end), key=lambda span: span[0])
        self._span_firsts = [span[0] for span in self._spans]
        self.callee_at: dict[int, str] = {}
        self.call_sites: dict[str, list[_Point]] = {name: [] for name in self.functions}
        self.callees: dict[str, set[str]] = {name: set() for name in self.functions}
        spellings = tuple(f"@{spelled}(" for name in self.functions for spelled in (name, f'"{name}"'))
        for index in _lines_holding(text, text_lines, spellings):
            located = self.block_of(index)
            line = text_lines[index]
            if located is None or "call" not in line or not CALL.match(line) or INLINE_ASM.search(line):
                continue
            call = CALLEE.search(line)
            if call is not None and unquoted(call.group("name")) in self.functions:
                function, block = located
                callee = unquoted(call.group("name"))
                self.callee_at[index] = callee
                self.callees[function.name].add(callee)
                self.call_sites[callee].append(_Point(function.name, block.name, index))

    def block_of(self, index: int) -> tuple[_Function, _Block] | None:
        """The function and block that line ``index`` is an instruction of (None: a comment, a
        label, a line outside every function)."""
        at = bisect.bisect_right(self._span_firsts, index) - 1
        if at < 0:
            return None
        first, end, function, block = self._spans[at]
        line = self.text_lines[index].strip()
        if not first <= index < end or not line or line[0] == ";":
            return None
        return function, block

    @functools.cached_property
    def indirect_calls(self) -> bool:
        """Whether some instruction calls through a pointer (a call that names no function)."""
        for first, end, _, _ in self._spans:
            for line in self.text_lines[first:end]:
                if "call" not in line or ("asm " in line and INLINE_ASM.search(line)) or not CALL.match(line):
                    continue
                if CALLEE.search(line) is None:
                    return True
        return False

    def in_order(self) -> list[_Function]:
        """The functions, callees before their callers (ties and cycles by name): a result that
        does not depend on the order of the functions in the text."""
        done: set[str] = set()
        order: list[_Function] = []

        def visit(name: str) -> None:
            if name in done:
                return
            done.add(name)
            for callee in sorted(self.callees[name]):
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
                entry, transparent = self.walk(kinds, summaries, [_Point(name, function.entry,
                                                                        function.blocks[function.entry].first - 1)],
                                               forward=True, leave=False)
                exits = [_Point(name, block.name, block.end)
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
        function goes on at every call site of it (before the call, backward; after it, forward);
        such a walk (a guard's) ends as soon as it has met both kinds, which nothing further can
        change, and its second answer then only says whether a path left before.  What a call
        through a pointer adds where a path leaves a function is the caller's to add
        (``indirect_calls``): it needs a look at every call of the module."""
        met, left = 0, False
        seen: set[_Point] = set()
        work = list(starts)
        while work:
            point = work.pop()
            function = self.functions[point.function]
            block = function.blocks[point.block]
            stopped = False
            for index in block.crossed(point.position, forward):
                kind = kinds[index]
                if kind in ("barrier", "guard"):
                    stopped = True
                    break
                callee = self.callee_at.get(index)
                if callee is None:
                    met |= kind
                    if leave and met == BOTH:
                        return met, left
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
                    neighbour = function.blocks[name]
                    nxt = _Point(function.name, name, neighbour.first - 1 if forward else neighbour.end)
                    if nxt not in seen:
                        seen.add(nxt)
                        work.append(nxt)
                continue
            left = True             # a return (forward) or the entry (backward): the function is left
            if not leave:
                continue
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


def _needed(behind: int, ahead: int) -> bool:
    """Whether a guard with these access kinds behind and ahead of it orders a conflicting pair."""
    return bool((behind & WRITE and ahead) or (behind & READ and ahead & WRITE))


def prune_guard_barriers(llir: str) -> tuple[str, int]:
    """``llir`` without the guard barriers proven redundant, and how many were dropped."""
    joined = joined_pairs(llir)
    if joined is None:
        return llir, 0
    text, pairs = joined
    pruned, dropped = _prune_joined(text)
    return (split_pairs(pruned, pairs), dropped) if dropped else (llir, 0)


def _prune_joined(llir: str) -> tuple[str, int]:
    """``prune_guard_barriers`` on a text whose barrier pairs are joined (``barrier_pairs``)."""
    if GUARD_BARRIER_ASM not in llir:
        return llir, 0
    lines = llir.split("\n")
    kinds = _LineKinds(lines)
    program = _Program(llir, lines)
    line_starts = _lines_holding(llir, lines, (GUARD_BARRIER_ASM,))
    guards: dict[_Block, list[int]] = {}
    for index in line_starts:
        located = program.block_of(index)
        if located is not None:
            guards.setdefault(located[1], []).append(index)
    summaries = None
    removed: list[int] = []
    all_alone = all(ALONE_GUARD_BARRIER_ASM in lines[index] for index in line_starts)
    for function in program.in_order():
        for block in function.blocks.values():
            for index in guards.get(block, ()):
                if kinds[index] != "guard":
                    continue
                if all_alone:
                    if _alone_guard_needed(program, kinds, lines, _Point(function.name, block.name, index)):
                        continue
                    kinds[index] = 0
                    removed.append(index)
                    continue
                if summaries is None:
                    summaries = program.summaries(kinds)
                here = [_Point(function.name, block.name, index)]
                behind, left_behind = program.walk(kinds, summaries, here, forward=False, leave=True)
                ahead, left_ahead = 0, False
                if behind or left_behind:
                    ahead, left_ahead = program.walk(kinds, summaries, here, forward=True, leave=True)
                # A walk that left a function met both kinds if the module calls through a
                # pointer; that can only keep a guard, so it is looked for only when the guard
                # would go without it.
                if not _needed(behind, ahead) and (left_behind or left_ahead) and program.indirect_calls:
                    behind, ahead = (BOTH if left_behind else behind), (BOTH if left_ahead else ahead)
                if _needed(behind, ahead):
                    continue
                kinds[index] = 0          # gone: later checks see it absent
                removed.append(index)
                if program.call_sites[function.name]:
                    summaries = None      # this function's summary (and its callers') may grow
    if not removed:
        return llir, 0
    # The text less each removed line and its newline (a guard's line has one: "}" follows it).
    pieces, kept_from = [], 0
    for index in sorted(removed):
        pieces.append(llir[kept_from:line_starts[index]])
        kept_from = line_starts[index] + len(lines[index]) + 1
    pieces.append(llir[kept_from:])
    return "".join(pieces), len(removed)


class _AloneKinds(dict):
    """What the walk of a guard of an island alone sees (see the module docstring): a copy of
    such a guard, in place or dropped, is the island itself (a write: the walk has reached it);
    one of Triton's CTA barriers (an NVVM call) or another guard stops the walk; nothing else
    matters (inline ``bar.sync`` included: it may be the plan's own, inside the island)."""

    def __init__(self, kinds: "_LineKinds", lines: list[str]):
        super().__init__()
        self.kinds, self.lines = kinds, lines

    def __missing__(self, index: int) -> str | int:
        line = self.lines[index]
        if ALONE_GUARD_BARRIER_ASM in line:
            kind = WRITE
        else:
            kind = self.kinds[index]
            if kind == "barrier" and "asm " in line:
                kind = 0
            elif kind not in ("barrier", "guard"):
                kind = 0
        self[index] = kind
        return kind


def _alone_guard_needed(program: _Program, kinds: "_LineKinds", lines: list[str], here: _Point) -> bool:
    """Whether a path back from the guard of an island alone at ``here`` reaches the island
    again without one of Triton's barriers on it."""
    view = _AloneKinds(kinds, lines)
    summaries = program.summaries(view)
    behind, left = program.walk(view, summaries, [here], forward=False, leave=True)
    return bool(behind) or (left and program.indirect_calls)


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
