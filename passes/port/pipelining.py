"""The loads of a ``tl.dot`` loop as Triton pipelines them, written in the source: a ring of
shared-memory buffers filled by asynchronous copies issued ``stages - 1`` iterations ahead.

Triton's compile of a loop like the tutorial's matmul (``num_stages=3``)::

    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

keeps three tiles of ``a`` and of ``b`` in shared memory (``ttg.local_alloc`` of 3x128x64), copies
the tiles of the first two iterations before the loop, and in each iteration waits for the
oldest copy, multiplies it, and starts the copy of the iteration two ahead
(``ttg.async_copy_global_to_local``, ``ttg.async_wait``).  The port writes the same::

    a_ring = gl.allocate_shared_memory(gl.float16, [3, 128, 64], A_RING_LAYOUT)
    ...
    k_first = 0
    k_end = gl.cdiv(K, BLOCK_K)
    for stage in gl.static_range(2):                       # the first two tiles, before the loop
        _load_ahead(a_ring.index(stage), k_first + stage < k_end, a_ptrs, offs_k[None, :] < K - (k_first + stage) * BLOCK_K)
        ...
        a_ptrs += BLOCK_K * stride_ak                      # the pointers run two iterations ahead
        ...
        async_copy.commit_group()
    for k in range(0, gl.cdiv(K, BLOCK_K)):
        async_copy.wait_group(1)                           # this iteration's tiles have landed
        a = a_ring.index((k - k_first) % 3)
        b = b_ring.index((k - k_first) % 3)
        _load_ahead(a_ring.index((k - k_first + 2) % 3), k + 2 < k_end, a_ptrs, offs_k[None, :] < K - (k + 2) * BLOCK_K)
        ...
        async_copy.commit_group()
        acc = _dot_wgmma_shared(a, b, acc, ...)            # straight from the ring
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    async_copy.wait_group(0)

On sm_90, where the loop's one dot accumulates into a value nothing else in the loop reads, the
wgmma is left running as Triton's is (``warp_group_dot_wait {pendings = 1}``): the copies move
after the dot, which returns once the MMA before it has finished, so they fill the slots that MMA
read (:meth:`_LoopRewrite._plan_overlap`)::

        acc = _dot_wgmma_shared_overlapped(a, b, acc, ...)
        _load_ahead(a_ring.index((k - k_first + 2) % 3), ...)
        ...
    async_copy.wait_group(0)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])

Whether a copy is wanted (``k + 2 < k_end``) goes into its mask, as Triton predicates its copies:
a branch around the copy puts non-wgmma code between the loop's MMAs and ``ptxas`` serializes
them ("wgmma.mma_async instructions are serialized"), 1.4x the original's time on the
tutorial's matmul.

A tile the dot takes from shared memory (wgmma, tcgen05; wgmma's ``b`` where Triton keeps ``a`` in
registers) is handed over as the ring's buffer, where the ring's layout is the one the MMA reads;
one it takes in registers (mma_v2, MFMA) is read from the ring in the dot-operand layout Triton
reads it in; a tile used otherwise is read in its pointers' layout.  An operand of a
shared-memory MMA that the loop does not change (an attention's ``q``) is stored to shared memory
once, before the loop; one the loop loads without a copy ahead (Triton copies only 16-byte aligned
rows ahead) is stored beside the ring each iteration, as Triton's compile does.

A loop is pipelined where Triton's compile pipelined it (asynchronous copies at the load's line)
and its text allows the rotation: each pipelined load is a statement ``x = tl.load(ptrs, mask=...,
other=0)`` of the loop's body; what its pointers and mask read is the loop's index, values the loop
does not assign, values it computes from those alone before its loads (written into the copy
ahead), and pointers the loop only advances (``ptrs += step``, the step read from values the loop
does not assign) and reads nowhere else, nor after the loop; the loop stores nothing.
Any other loop stays as written (each iteration loads, then multiplies), and
:attr:`Pipelines.skipped` says why.

On AMD (MFMA), Triton's stream pipelining keeps a ring of ``num_stages - 1`` tiles filled through
registers; the port writes the same (:meth:`_LoopRewrite._write_body_through_registers`)::

    for k in range(0, gl.cdiv(K, BLOCK_K)):
        a = a_ring.index((k - k_first) % 2).load(DOT_A_OPERAND)     # this iteration's tile
        a_ahead = gl.load(a_ptrs, mask=... & (k + 2 < k_end), other=0)
        ...
        acc = _dot_mfma(a, b, acc, ...)
        a_ring.index((k - k_first + 2) % 2).store(a_ahead)
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .layouts import NamedLayout, ring_layout_expression
from . import loop_text
from .ring_copies import ELEMENT_TYPES as _ELEMENT_TYPES, RING as _RING, RingCopies, load_ahead_helper, tma_ahead_helper
from .tensor_descriptors import pads_with_nan

# The operands (0: a, 1: b) each matrix instruction reads from shared memory: its helper
# ``_dot_<kind>_shared`` (:mod:`.matmul`) takes them there, as a pipelined loop's rings hold them.
_SHARED_OPERANDS = {"wgmma": (0, 1), "tcgen05": (0, 1), "wgmma_registers": (1,)}

@dataclass
class Pipelines:
    """What pipelining adds to the module, and the loops it left as written (line -> why)."""

    imports: list = field(default_factory=list)
    helpers: str = ""
    layouts: list = field(default_factory=list)        # NamedLayout of each ring, at the module's top
    loops: list = field(default_factory=list)          # (line of the loop, stages, names of the loads)
    described: dict = field(default_factory=dict)      # line of the loop -> how it is pipelined, in words
    skipped: dict = field(default_factory=dict)


@dataclass
class _Load:
    statement: ast.Assign
    name: str
    pointer: ast.expr
    mask: ast.expr
    ring: object             # OpAt: Triton's ring (ttg.local_alloc of stages x tile)
    buffer: str = ""         # the ring's variable in the port
    ring_layout: str = ""
    element: str = ""
    read: str = ""           # how the iteration reads its tile: "buffer", or ".load(LAYOUT)"
    block: object = None     # block_pointers.BlockAccess where it loads through a block pointer (pointer: that)
    ready: str = ""          # a TMA ring's barriers (ring_copies)


def pipeline_loops(translations, original, dot_calls) -> Pipelines:
    """Rewrite, in each translation's final edits, every ``tl.dot`` loop Triton pipelined and
    whose text allows it (see the module's docstring)."""
    result = Pipelines()
    copies = False        # whether a loop copies asynchronously (NVIDIA): the copy helper and its import
    tma = False           # whether a loop copies with the TMA: its helper
    for translation in translations:
        loops = {}
        for call in (c for c in dot_calls if c.translation is translation):
            loop = loop_text.enclosing_loop(translation.source.tree, call.node)
            if loop is not None:
                loops.setdefault(id(loop), (loop, []))[1].append(call)
        for loop, calls in loops.values():
            line = translation.source.start(loop)[0]
            try:
                rewrite = _LoopRewrite(translation, original, loop, calls)
                rewrite.plan()
            except _NotPipelined as why:
                result.skipped[line] = str(why)
                continue
            rewrite.write(result)
            result.loops.append((line, rewrite.stages, [load.name for load in rewrite.loads]))
            result.described[line] = rewrite.describe()
            copies = copies or not (rewrite.through_registers or rewrite.tma)
            tma = tma or rewrite.tma
    if copies:
        line, helper = load_ahead_helper()
        result.imports.append(line)
        result.helpers += helper
    if tma:          # mbarrier and tma are imported with the descriptors (.tensor_descriptors)
        result.helpers += tma_ahead_helper()
    return result


class _NotPipelined(Exception):
    pass


def _same_layout(one: str, other: str) -> bool:
    """Two layout attributes (aliases expanded, as :mod:`.original` and :mod:`.matmul` give them) alike."""
    return one.replace(" ", "") == other.replace(" ", "")


class _LoopRewrite:
    """One ``tl.dot`` loop: :meth:`plan` reads whether and how it can be pipelined (or raises
    :class:`_NotPipelined`), :meth:`write` edits it."""

    def __init__(self, translation, original, loop, calls):
        self.translation, self.original, self.loop, self.calls = translation, original, loop, calls
        self.text = translation.source
        self.index = ""
        self.bounds, self.step = [], None
        self.stages = 0              # tiles in each ring
        self.ahead = 0               # iterations a tile is loaded ahead of its use
        self.through_registers = False   # AMD: loaded into registers ahead, stored to the ring (see _find_loads)
        self.copied = False          # Triton's compile copies the tiles asynchronously (else: through registers)
        self.tma = False             # ... with the TMA, from tensor descriptors
        self.copies = RingCopies(self)
        self.loads = []              # _Load, in the body's order
        self.advances = []           # the statements that advance the loads' pointers
        self.shared_dots = []        # (dot, [(operand, layout) stored once before the loop], [(operand, layout)
        #                              stored each iteration]): MMAs reading their operands from shared memory
        self.hoisted_lines = []      # the stores of those operands, before the loop
        self.computed = {}           # name -> value: what the loop computes from its index alone, for the loads
        self.first = self.end = self.step_text = ""
        self.descending = False      # the loop counts down (a negative step)
        self.overlapped = None       # (dot call, its statement, accumulator): the MMA left running, see _plan_overlap
        self.taken = loop_text.names(self.text.tree) | {a.arg for a in self.text.tree.args.args}

    # -- reading the loop
    def plan(self) -> None:
        # (A loop that also stores is pipelined where Triton's is: its loads run ahead of its stores.)
        self._read_range()
        self._find_loads()
        self._find_advances()
        for load in self.loads:
            self._plan_read(load)
        self._hand_rings_to_dots()
        if any(load.ring.shape[0] == self.ahead and load.read == "buffer" for load in self.loads):
            raise _NotPipelined("a one-tile ring the matrix instruction reads in place")
        self._plan_overlap()

    def _read_range(self) -> None:
        loop = self.loop
        if not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, ast.Call) or loop.orelse:
            raise _NotPipelined("the loop is not `for i in range(...)`")
        func = loop.iter.func
        if not ((isinstance(func, ast.Name) and func.id == "range") or
                (isinstance(func, ast.Attribute) and func.attr == "range")):
            raise _NotPipelined("the loop is not over range(...)")
        self.bounds = list(loop.iter.args)
        self.step = next((kw.value for kw in loop.iter.keywords if kw.arg == "step"), None)
        if len(self.bounds) == 3:
            self.step = self.bounds.pop()
        if not 1 <= len(self.bounds) <= 2:
            raise _NotPipelined("the loop's range has no bounds the port reads")
        step = self.step
        negated = isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub)
        size = step.operand if negated else step
        if step is not None and not isinstance(size, ast.Name) and \
                not (isinstance(size, ast.Constant) and isinstance(size.value, int) and size.value > 0):
            raise _NotPipelined("the loop's step is not a number or a name (or its negation)")
        self.descending = negated          # range(NT - 1, -1, -1): the tiles ahead lie below
        self.index = loop.target.id

    def _find_loads(self) -> None:
        """The body's ``x = tl.load(ptrs, mask=..., other=0)`` statements Triton copies ahead."""
        for statement in self.loop.body:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
                    isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)):
                continue
            call = statement.value
            if not (isinstance(call.func, ast.Attribute) and call.func.attr == "load"):
                continue
            keywords = {kw.arg: kw.value for kw in call.keywords}
            block = next((a for a in self.translation.block_accesses if a.node is call), None)
            descriptor = next((c for c in self.translation.descriptor_calls if c.node is call), None)
            if descriptor is not None:    # a tensor descriptor: copied by the TMA, or read through pointers as a block
                if keywords or len(call.args) != 1 or \
                        (not descriptor.tma and (not descriptor.boundary_check or pads_with_nan(self.translation))):
                    continue
                block, pointer, offsets = descriptor, descriptor.descriptor, descriptor.offsets
            elif block is not None:      # out of bounds read as zero, as the copies fill it
                if set(keywords) - {"boundary_check", "padding_option"} or len(call.args) != 1 or \
                        loop_text.constant(keywords.get("padding_option")) not in (None, "", "zero"):
                    continue
            elif set(keywords) - {"mask", "other"} or len(call.args) != 1 or not loop_text.is_zero(keywords.get("other")):
                continue
            here = self.text.mlir_position(call)[:2]
            at_line = [op for position, op in self.original.ops if position is not None and position[:2] == here]
            copies = [op for op in at_line if op.name in ("ttg.async_copy_global_to_local", "ttg.local_store",
                                                          "ttng.async_tma_copy_global_to_local")]
            rings = [op for op in at_line if op.name == "ttg.local_alloc" and len(op.shape) == 3]
            if copies and rings and descriptor is not None:    # pointer: the descriptor; mask: the offsets
                self.loads.append(_Load(statement, statement.targets[0].id, pointer, offsets, rings[0], block=block))
            elif copies and rings:
                self.loads.append(_Load(statement, statement.targets[0].id, call.args[0], keywords.get("mask"),
                                        rings[0], block=block))
                self.copied = self.copied or any(op.name == "ttg.async_copy_global_to_local" for op in copies)
        if not self.loads:
            raise _NotPipelined("Triton's compile loads nothing of this loop ahead")
        through_tma = {bool(getattr(load.block, "tma", False)) for load in self.loads}
        if len(through_tma) > 1:
            raise _NotPipelined("the loop copies some tiles with the TMA and others through pointers")
        self.tma = through_tma.pop()
        # Rings of different depths (one tile of a value read into registers, two of a dot's
        # operand): all filled S - 1 ahead; a one-tile ring is read into registers before the
        # copy into its slot (asynchronous copies only; checked in :meth:`plan`).
        stages = {load.ring.shape[0] for load in self.loads}
        self.stages = max(stages)
        if len(stages) > 1 and (self.tma or any(call.kind == "mfma" for call in self.calls) or
                                min(stages) < self.stages - 1):
            raise _NotPipelined("Triton's rings for this loop differ in depth")
        # On AMD, Triton's stream pipelining loads the tiles of the iterations ahead into registers
        # and stores each to its ring's slot after the dot: a ring of D tiles, loaded D iterations
        # ahead.  Where Triton copies asynchronously (NVIDIA; gfx950's direct copies to shared
        # memory, which the port writes through registers too, Gluon's asynchronous copy being
        # NVIDIA's), a ring of S tiles is filled S - 1 iterations ahead.
        self.through_registers = any(call.kind == "mfma" for call in self.calls)
        # (NVIDIA rings Triton fills through registers are copied asynchronously all the same.)
        self.ahead = self.stages - 1 if self.copied or not self.through_registers else self.stages
        if self.ahead < 1:
            raise _NotPipelined("Triton's ring for this loop holds one tile")

    def _find_advances(self) -> None:
        """What the loads read: the index, values from outside the loop, values the loop computes
        from those alone (``offs_k = k * BLOCK_K + tl.arange(0, BLOCK_K)``: written into the load
        ahead, the index replaced), and pointers the loop only advances (by a step read from
        outside it) and reads nowhere else, nor after it."""
        assigned = loop_text.assigned(self.loop.body)
        advanced = {}
        read = set()
        for load in self.loads:
            read |= (loop_text.names(load.pointer) | loop_text.names(load.mask)) - {self.index}
        read = self._find_computed(read, assigned)
        for used in sorted(read):
            if used not in assigned or used in self.computed:
                continue
            statements = assigned[used]
            steps = [loop_text.advance(s, used) for s in statements]
            if any(step is None for step in steps) or any(s not in self.loop.body for s in statements):
                raise _NotPipelined(f"`{used}` is computed in the loop, not only advanced")
            if any(loop_text.names(step) & (set(assigned) | {self.index}) for step in steps):
                raise _NotPipelined(f"`{used}` advances by a step the loop computes")
            advanced[used] = statements
        self.advances = [s for statements in advanced.values() for s in statements]
        if set(advanced) & set(self.computed):
            raise _NotPipelined(f"`{sorted(set(advanced) & set(self.computed))[0]}` is both computed and advanced")
        own = [load.statement for load in self.loads] + self.advances
        for name in advanced:
            if any(name in loop_text.names(s) for s in self.loop.body if s not in own):
                raise _NotPipelined(f"the loop reads `{name}` elsewhere")
        # read after the loop: its first use there reads it (a later loop that assigns it first does not)
        later = sorted((n for n in ast.walk(self.text.tree) if isinstance(n, ast.Name) and
                        (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) > (self.loop.end_lineno, 1 << 30)),
                       key=lambda n: (n.lineno, isinstance(n.ctx, ast.Store), n.col_offset))
        first = {}
        for n in later:
            first.setdefault(n.id, n)
        for name in sorted(set(advanced) | {load.name for load in self.loads}):
            if name in first and isinstance(first[name].ctx, ast.Load):
                raise _NotPipelined(f"`{name}` is read after the loop")

    def _find_computed(self, read: set, assigned: dict) -> set:
        """Of the names ``read``, those the loop computes afresh each iteration before its first
        load, from the index and values from outside the loop (and earlier such names), go to
        ``self.computed`` (name -> its value); returns ``read`` with their own reads added."""
        first_load = min(self.text.start(load.statement) for load in self.loads)
        pending, seen = list(read), set(read)
        while pending:
            name = pending.pop()
            statements = assigned.get(name, [])
            if len(statements) != 1 or statements[0] not in self.loop.body:
                continue
            statement = statements[0]
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
                    isinstance(statement.targets[0], ast.Name)) or self.text.start(statement) >= first_load:
                continue
            self.computed[name] = statement.value
            for more in loop_text.names(statement.value) - {self.index} - seen:
                seen.add(more)
                pending.append(more)
        for name, value in self.computed.items():
            outside = loop_text.names(value) - {self.index} - set(self.computed)
            if outside & set(assigned):
                raise _NotPipelined(f"`{name}` is computed in the loop from values the loop changes")
        return seen

    # -- how each iteration reads its tile
    def fresh(self, name: str) -> str:
        candidate, n = name, 2
        while candidate in self.taken:
            candidate, n = f"{name}_{n}", n + 1
        self.taken.add(candidate)
        return candidate

    def _plan_read(self, load) -> None:
        element = _RING.search(load.ring.text)
        if element is None or element.group(3) not in _ELEMENT_TYPES:
            raise _NotPipelined(f"Triton's ring for `{load.name}` has an element type the port does not write")
        load.element = _ELEMENT_TYPES[element.group(3)]
        load.buffer = self.fresh(f"{load.name}_ring")
        load.ring_layout = self.fresh(f"{load.name.upper()}_RING_LAYOUT")
        uses = [n for statement in self.loop.body if statement is not load.statement for n in ast.walk(statement)
                if isinstance(n, ast.Name) and n.id == load.name]
        operand = [(call, position) for call in self.calls for position, argument in enumerate(call.node.args[:2])
                   if isinstance(argument, ast.Name) and argument.id == load.name]
        if len(operand) == 1 and len(uses) == 1 and uses[0] is operand[0][0].node.args[operand[0][1]]:
            call, position = operand[0]
            if position not in _SHARED_OPERANDS.get(call.kind, ()):
                load.read = f".load({call.layouts[position]})"
            elif _same_layout(load.ring.encoding, call.encodings[position]):
                load.read = "buffer"          # the MMA reads Triton's ring as it is
            else:
                load.read = self._in_registers(load)
        else:
            load.read = self._in_registers(load)

    def _in_registers(self, load) -> str:
        if load.block is not None:
            return f".load({load.block.layout})"
        if not isinstance(load.pointer, ast.Name):
            raise _NotPipelined(f"`{load.name}` is used beyond the dot and its pointers are an expression")
        return f".load({load.pointer.id}.type.layout)"

    def _hand_rings_to_dots(self) -> None:
        """A shared-memory MMA takes its operands from shared memory where each it reads there is
        a ring's buffer or a value the loop does not change (stored to shared memory once, before
        the loop, as Triton's compile does); else each ring's tile is read into registers."""
        assigned = loop_text.assigned(self.loop.body)
        for call in (c for c in self.calls if c.kind in _SHARED_OPERANDS):
            rings, hoisted, stored = [], [], []
            for position in _SHARED_OPERANDS[call.kind]:
                argument = call.node.args[position]
                load = next((load for load in self.loads if isinstance(argument, ast.Name) and argument.id == load.name),
                            None)
                if load is not None and load.read == "buffer":
                    rings.append(load)
                elif isinstance(argument, ast.Name) and argument.id not in assigned and load is None:
                    hoisted.append((argument, call.layouts[position]))
                elif isinstance(argument, ast.Name) and load is None:
                    stored.append((argument, call.layouts[position]))
                else:
                    rings = None
                    break
            if rings:
                self.shared_dots.append((call, hoisted, stored))
                continue
            for load in self.loads:
                if load.read == "buffer" and any(isinstance(a, ast.Name) and a.id == load.name for a in call.node.args[:2]):
                    load.read = self._in_registers(load)

    def _plan_overlap(self) -> None:
        """Keep one wgmma in flight, as Triton's pipelined loop does (``warp_group_dot_wait
        {pendings = 1}``): each iteration starts its MMA, waits for the previous one, and only
        then copies into the ring's slot that MMA read.  Written where the loop's one dot is a
        shared-memory wgmma accumulating into a value nothing else in the loop reads
        (``acc = tl.dot(a, b, acc)`` or ``acc += tl.dot(a, b)``), after the loads, with no
        pointer advanced between the loads and the dot (the copies move after the dot)."""
        if len(self.calls) != 1 or not self.shared_dots or self.shared_dots[0][0].kind != "wgmma" or \
                self.shared_dots[0][2]:      # an operand stored each iteration: one buffer, the MMA must be done with it
            return
        call = self.calls[0]
        statement = next((s for s in self.loop.body if getattr(s, "value", None) is call.node), None)
        accumulator = loop_text.accumulated(statement, call.node)
        if accumulator is None:
            return
        body = self.loop.body
        where = body.index(statement)
        loads = [body.index(load.statement) for load in self.loads]
        if max(loads) > where or any(min(loads) < body.index(s) < where for s in self.advances if s in body):
            return
        for other in body:
            if other is not statement and accumulator in loop_text.names(other):
                return
        self.overlapped = (call, statement, accumulator)

    def describe(self) -> str:
        """``3 tiles of a, b in shared memory, copied 2 iterations ahead`` (and how the MMA runs)."""
        ahead = self.ahead
        iterations = f"{ahead} iteration{'s' if ahead > 1 else ''} ahead"
        tiles = " and ".join(f"{depth} tile{'s' if depth > 1 else ''} of " +
                             ", ".join(load.name for load in self.loads if load.ring.shape[0] == depth)
                             for depth in sorted({load.ring.shape[0] for load in self.loads}, reverse=True))
        tiles += " in shared memory"
        if self.through_registers:
            return f"{tiles}, loaded into registers {iterations} and stored there after the dot"
        return f"{tiles}, copied {iterations}" + ("; the wgmma left running, one in flight" if self.overlapped else "")

    # -- writing it
    def write(self, result) -> None:
        """Edit the loop in the translation's final edits; the rings' layouts go to ``result``."""
        edits = self.translation.final_edits
        self.hoisted_lines = []
        for call, hoisted, stored in self.shared_dots:
            start, end = self.text.start(call.node.func), self.text.end(call.node.func)
            edits.replace(start[0], start[1], end[1], f"_dot_{call.kind}_shared")
            for argument, layout in hoisted:
                name = self.fresh(f"{argument.id}_shared")
                self.hoisted_lines.append(f"{name} = gl.allocate_shared_memory({argument.id}.dtype, {argument.id}.shape, "
                                          f"{layout}, {argument.id})  # the loop does not change it: stored once")
                edits.replace_span(self.text.start(argument), self.text.end(argument), name)
            for argument, layout in stored:      # loaded by the loop but not copied ahead: stored as Triton does
                edits.replace_span(self.text.start(argument), self.text.end(argument),
                                   f"gl.allocate_shared_memory({argument.id}.dtype, {argument.id}.shape, {layout}, "
                                   f"{argument.id})")
        for load in self.loads:
            encoding, tile = load.ring.encoding, load.ring.shape[1:]
            expression, how = ring_layout_expression(encoding, tile), ""
            if encoding.startswith("#ttg.amd_rotating_shared"):
                how = ", its rotating swizzle written as the linear layout it is"
            result.layouts.append(NamedLayout(load.ring_layout, expression,
                                              f"Triton's ring of {self.stages} tile{'s' if self.stages > 1 else ''} "
                                              f"for `{load.name}` (line {self.text.start(load.statement)[0]}){how}",
                                              encoding, tile))
        self.first, self.end = self.fresh(f"{self.index}_first"), self.fresh(f"{self.index}_end")
        step = self.step
        self.step_text = "" if step is None or (isinstance(step, ast.Constant) and step.value == 1) \
            else self._source(step)
        self._write_prologue()
        self._write_body()

    def _source(self, node) -> str:
        return self.translation.final_edits.span_text(self.text.start(node), self.text.end(node))

    def _at(self, node, value: str) -> str:
        """``node``'s text with each value the loop computes written out and the loop's index
        replaced by ``value``."""
        text = self._source(node)
        for _ in range(len(self.computed) + 1):
            for name, computed in self.computed.items():
                text = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w])(?!\s*=[^=])", f"({self._source(computed)})", text)
        return re.sub(rf"(?<![\w.]){re.escape(self.index)}(?![\w])(?!\s*=[^=])", f"({value})", text)

    def within(self, value: str) -> str:
        """Whether iteration ``value`` is one the loop runs (``value < end``; ``>`` counting down)."""
        return f"{value} {'>' if self.descending else '<'} {self.end}"

    def _times(self, n: str) -> str:
        return f"{n} * {self.step_text}" if self.step_text else n

    def _write_body_through_registers(self) -> None:
        """In the loop (AMD): read this iteration's tiles from the rings, load the tiles ``ahead``
        iterations on into registers, and store them to their slots at the end of the body."""
        edits, ahead = self.translation.final_edits, self.ahead
        inner = " " * self.text.start(self.loop.body[0])[1]
        iteration = f"({self.index} - {self.first}) // {self.step_text}" if self.step_text \
            else f"{self.index} - {self.first}"
        value = f"{self.index} + {self._times(str(ahead))}"
        stores = []
        for number, load in enumerate(self.loads):
            parts = []
            if number == 0:
                parts += [f"{other.name} = {other.buffer}.index(({iteration}) % {self.stages}){other.read}"
                          f"  # this iteration's tile" for other in self.loads]
            ahead_name = self.fresh(f"{load.name}_ahead")
            parts.append(f"{ahead_name} = {self.copies.now(load, value)}")
            stores.append(f"{load.buffer}.index(({iteration} + {ahead}) % {self.stages}).store({ahead_name})")
            edits.replace_span(self.text.start(load.statement), self.text.end(load.statement), f"\n{inner}".join(parts))
        last = self.text.end(self.loop)
        edits.insert(last[0], last[1], "".join(f"\n{inner}{line}" for line in stores))

    def _write_prologue(self) -> None:
        """Before the loop: the rings, the bounds, the first tiles; the pointers run ahead."""
        ahead, outer = self.ahead, " " * self.text.start(self.loop)[1]
        stage = self.fresh("stage")
        how = "loads into registers, each stored to its slot after the dot," if self.through_registers else "copies"
        lines = [f"# the loop below, pipelined as Triton's compile pipelines it: {self.stages} tile"
                 f"{'s' if self.stages > 1 else ''} of {', '.join(load.name for load in self.loads)} in shared "
                 f"memory, {how} {ahead} iteration{'s' if ahead > 1 else ''} ahead"]
        lines += [f"{load.buffer} = gl.allocate_shared_memory({load.element}, {list(load.ring.shape)}, "
                  f"{load.ring_layout})" for load in self.loads]
        lines += self.hoisted_lines + self.copies.before()
        lines.append(f"{self.first} = {self._source(self.bounds[0]) if len(self.bounds) == 2 else '0'}")
        lines.append(f"{self.end} = {self._source(self.bounds[-1])}")
        lines.append(f"for {stage} in gl.static_range({ahead}):")
        by_statement = {id(load.statement): load for load in self.loads}
        in_order = sorted([load.statement for load in self.loads] + self.advances, key=self.text.start)
        value = f"{self.first} + {self._times(stage)}"
        for statement in in_order:
            load = by_statement.get(id(statement))
            if load is None:
                lines.append("    " + self._source(statement))
            elif self.through_registers:
                lines.append(f"    {load.buffer}.index({stage}).store({self.copies.now(load, value)})")
            else:
                lines.append("    " + self.copies.ahead(load, stage, value))
        if not self.through_registers:
            lines += ["    " + line for line in self.copies.commit()]
        line = self.text.start(self.loop)[0]
        self.translation.final_edits.insert(line, 0, "".join(f"{outer}{text}\n" for text in lines))

    def _write_body(self) -> None:
        """In the loop: wait for this iteration's tiles, read them, copy the tiles ``stages - 1``
        iterations on; after it, no copy outstanding."""
        if self.through_registers:
            self._write_body_through_registers()
            return
        edits, ahead = self.translation.final_edits, self.ahead
        inner, outer = " " * self.text.start(self.loop.body[0])[1], " " * self.text.start(self.loop)[1]
        iteration = f"({self.index} - {self.first}) // {self.step_text}" if self.step_text \
            else f"{self.index} - {self.first}"
        value = f"{self.index} + {self._times(str(ahead))}"
        copies = [self.copies.ahead(load, f"({iteration} + {ahead}) % {load.ring.shape[0]}", value)
                  for load in self.loads]
        commit = self.copies.commit()
        if self.overlapped:
            call, statement, accumulator = self.overlapped
            operands = ", ".join(self._source(argument) for argument in call.node.args[:2])
            started = (f"{accumulator} = _dot_wgmma_shared_overlapped({operands}, {accumulator}, "
                       f"{', '.join(call.layouts)})  # left running; the one before it has finished")
            copies = [started, "# the slots the MMA before read are free: copy into them"] + copies + commit
            edits.replace_span(self.text.start(statement), self.text.end(statement), f"\n{inner}".join(copies))
            copies = []
        for number, load in enumerate(self.loads):
            parts = []
            if number == 0:
                parts += self.copies.wait(iteration)
                parts += [f"{other.name} = {other.buffer}.index(({iteration}) % {other.ring.shape[0]})"
                          f"{'' if other.read == 'buffer' else other.read}" for other in self.loads]
            if copies:
                parts.append(copies[number])
                if number == len(self.loads) - 1:
                    parts += commit
            start = self.text.start(load.statement)
            if not parts:      # its copy moved after the dot: the line left empty, its indent too
                start = (start[0], 0)
            edits.replace_span(start, self.text.end(load.statement), f"\n{inner}".join(parts))
        last = self.text.end(self.loop)
        after = "".join(f"\n{outer}{line}" for line in self.copies.after())
        if self.overlapped:
            accumulator = self.overlapped[2]
            after += f"\n{outer}{accumulator} = warpgroup_mma_wait(num_outstanding=0, deps=[{accumulator}])  # nor an MMA"
        edits.insert(last[0], last[1], after)
