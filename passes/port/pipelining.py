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
        async_copy.commit_group()
        a_ptrs += BLOCK_K * stride_ak                      # the pointers run two iterations ahead
        ...
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

A tile the dot takes from shared memory (wgmma, tcgen05) is handed over as the ring's buffer; one
it takes in registers (mma_v2, MFMA) is read from the ring in the dot-operand layout Triton reads
it in; a tile used otherwise is read in its pointers' layout.

A loop is pipelined where Triton's compile pipelined it (asynchronous copies at the load's line)
and its text allows the rotation: each pipelined load is a statement ``x = tl.load(ptrs, mask=...,
other=0)`` of the loop's body; what its pointers and mask read is the loop's index, values the loop
does not assign, and pointers the loop only advances (``ptrs += step``, the step read from values
the loop does not assign) and reads nowhere else, nor after the loop; the loop stores nothing.
Any other loop stays as written (each iteration loads, then multiplies), and
:attr:`Pipelines.skipped` says why.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .layouts import NamedLayout, gluon_layout_expression
from .original import expand_aliases

_ELEMENT_TYPES = {"f16": "gl.float16", "bf16": "gl.bfloat16", "f32": "gl.float32", "f64": "gl.float64",
                  "i8": "gl.int8", "i16": "gl.int16", "i32": "gl.int32", "f8E4M3FN": "gl.float8e4nv",
                  "f8E5M2": "gl.float8e5"}
_RING = re.compile(r"!ttg\.memdesc<(\d+)x([0-9x]+)x(\w+), (#[\w.]+)")

_LOAD_AHEAD = '''
@gluon.jit
def _load_ahead(buffer, wanted, pointer, mask):
    """Start copying the tile at ``pointer`` into ``buffer`` (masked-off elements zero), if ``wanted``."""
    if wanted:
        async_copy.{copy}(buffer, pointer, mask)
'''

_WGMMA_SHARED = '''
@gluon.jit
def _dot_wgmma_shared(a_smem, b_smem, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Hopper's warpgroup MMA, both operands already in shared memory."""
    if acc is None:
        acc = gl.zeros([a_smem.shape[0], b_smem.shape[1]], gl.float32, ACC)
    fence_async_shared()
    acc = warpgroup_mma(a_smem, b_smem, gl.convert_layout(acc, ACC), is_async=True)
    done = warpgroup_mma_wait(num_outstanding=0, deps=[acc, a_smem, b_smem])
    return done[0]
'''

_TCGEN05_SHARED = '''
@gluon.jit
def _dot_tcgen05_shared(a_smem, b_smem, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr,
                        ACC_TMEM: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Blackwell's tcgen05, both operands already in shared memory."""
    if acc is None:
        acc = gl.zeros([a_smem.shape[0], b_smem.shape[1]], gl.float32, ACC)
    acc_tmem = allocate_tensor_memory(gl.float32, [a_smem.shape[0], b_smem.shape[1]], ACC_TMEM,
                                      gl.convert_layout(acc, ACC))
    done = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(done, count=1)
    fence_async_shared()
    tcgen05_mma(a_smem, b_smem, acc_tmem)
    tcgen05_commit(done)
    mbarrier.wait(done, 0)
    mbarrier.invalidate(done)
    return acc_tmem.load(ACC)
'''


@dataclass
class Pipelines:
    """What pipelining adds to the module, and the loops it left as written (line -> why)."""

    imports: list = field(default_factory=list)
    helpers: str = ""
    layouts: list = field(default_factory=list)        # NamedLayout of each ring, at the module's top
    loops: list = field(default_factory=list)          # (line of the loop, stages, names of the loads)
    skipped: dict = field(default_factory=dict)


@dataclass
class _Load:
    statement: ast.Assign
    name: str
    pointer: ast.expr
    mask: ast.expr
    ring: str = ""
    ring_layout: str = ""
    element: str = ""
    shape: tuple = ()
    read: str = ""           # how the iteration reads its tile: the buffer, or .load(LAYOUT)


def pipeline_loops(translations, original, dot_calls, launch) -> Pipelines:
    """Rewrite, in each translation's final edits, every ``tl.dot`` loop Triton pipelined and
    whose text allows it (see the module's docstring)."""
    result = Pipelines()
    kinds = set()
    for translation in translations:
        calls = [c for c in dot_calls if c.translation is translation]
        loops = {}
        for call in calls:
            loop = _enclosing_loop(translation.source.tree, call.node)
            if loop is not None:
                loops.setdefault(id(loop), (loop, []))[1].append(call)
        for loop, loop_calls in loops.values():
            line = translation.source.start(loop)[0]
            try:
                written = _pipeline(translation, original, loop, loop_calls, result)
            except _NotPipelined as why:
                result.skipped[line] = str(why)
                continue
            kinds |= written
    if result.loops:
        import triton.experimental.gluon.language.nvidia.ampere.async_copy as async_copy
        copy = "async_load" if hasattr(async_copy, "async_load") else "async_copy_global_to_shared"
        result.imports.append("from triton.experimental.gluon.language.nvidia.ampere import async_copy")
        result.helpers = _LOAD_AHEAD.format(copy=copy)
        if "wgmma" in kinds:
            result.helpers += _WGMMA_SHARED
        if "tcgen05" in kinds:
            result.helpers += _TCGEN05_SHARED
    return result


class _NotPipelined(Exception):
    pass


def _enclosing_loop(tree, node):
    """The innermost ``for`` whose body holds ``node``."""
    found = None
    for candidate in ast.walk(tree):
        if isinstance(candidate, ast.For) and any(sub is node for stmt in candidate.body for sub in ast.walk(stmt)):
            if found is None or candidate.lineno >= found.lineno:
                found = candidate
    return found


def _names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assigned(statements) -> dict:
    """name -> [statements assigning it], over ``statements`` and everything nested in them."""
    found = {}
    for statement in statements:
        for node in ast.walk(statement):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.For):
                targets = [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(node)
    return found


def _advance(statement, name):
    """The step of ``name += step`` / ``name = name + step``, else None."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
        return statement.value
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.BinOp) and \
            isinstance(statement.value.op, ast.Add) and isinstance(statement.value.left, ast.Name) and \
            statement.value.left.id == name:
        return statement.value.right
    return None


def _is_zero(node) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value in (0, 0.0, None))


def _pipeline(translation, original, loop, calls, result) -> set:
    text = translation.source
    edits = translation.final_edits
    line = text.start(loop)[0]
    if not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, ast.Call) or loop.orelse:
        raise _NotPipelined("the loop is not `for i in range(...)`")
    func = loop.iter.func
    if not ((isinstance(func, ast.Name) and func.id == "range") or (isinstance(func, ast.Attribute) and func.attr == "range")):
        raise _NotPipelined("the loop is not over range(...)")
    bounds = list(loop.iter.args)
    step = next((kw.value for kw in loop.iter.keywords if kw.arg == "step"), None)
    if len(bounds) == 3:
        step = bounds.pop()
    if not 1 <= len(bounds) <= 2:
        raise _NotPipelined("the loop's range has no bounds the port reads")
    if step is not None and not (isinstance(step, ast.Constant) and isinstance(step.value, int) and step.value > 0):
        if not isinstance(step, ast.Name):
            raise _NotPipelined("the loop's step is not a positive number or a name")
    index = loop.target.id
    assigned = _assigned(loop.body)
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                (node.func.attr == "store" or node.func.attr.startswith("atomic")):
            raise _NotPipelined("the loop stores to memory (a load ahead could read before the store)")

    dot_operands = {}
    for call in calls:
        for position, argument in enumerate(call.node.args[:2]):
            if isinstance(argument, ast.Name):
                dot_operands.setdefault(argument.id, []).append((call, position))
    loads = []
    for statement in loop.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
                isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)):
            continue
        call = statement.value
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "load"):
            continue
        keywords = {kw.arg: kw.value for kw in call.keywords}
        if set(keywords) - {"mask", "other"} or len(call.args) != 1 or not _is_zero(keywords.get("other")):
            continue
        position = text.mlir_position(call)
        copies = [op for op in original.ops if op[0] is not None and op[0][:2] == position[:2]
                  and op[1].name == "ttg.async_copy_global_to_local"]
        rings = [op for op in original.ops if op[0] is not None and op[0][:2] == position[:2]
                 and op[1].name == "ttg.local_alloc" and len(op[1].shape) == 3]
        if not copies or not rings:
            continue
        loads.append((statement, statement.targets[0].id, call.args[0], keywords.get("mask"), rings[0][1]))
    if not loads:
        in_registers = [op for op in original.ops if op[0] is not None and op[1].name == "ttg.local_store"
                        and loop.lineno <= op[0][1] - text.first_line + 1 <= loop.end_lineno]
        if in_registers:
            raise _NotPipelined("Triton's compile pipelines this loop through registers and a shared-memory store "
                                "(AMD's stream pipelining), which the port does not write")
        raise _NotPipelined("Triton's compile loads nothing of this loop ahead")
    stages = {ring.shape[0] for *_, ring in loads}
    if len(stages) != 1 or min(stages) < 2:
        raise _NotPipelined("Triton's rings for this loop differ in depth")
    stages = stages.pop()

    # what the loads read: the index, values from outside the loop, pointers the loop only advances
    advanced = {}
    for _, name, pointer, mask, _ in loads:
        for used in _names(pointer) | (_names(mask) if mask is not None else set()):
            if used == index or used not in assigned:
                continue
            statements = assigned[used]
            steps = [_advance(s, used) for s in statements]
            if any(step_ is None for step_ in steps) or any(s not in loop.body for s in statements):
                raise _NotPipelined(f"`{used}` is computed in the loop, not only advanced")
            for step_ in steps:
                if _names(step_) & (set(assigned) | {index}):
                    raise _NotPipelined(f"`{used}` advances by a step the loop computes")
            advanced[used] = statements
    load_statements = [s for s, *_ in loads]
    advance_statements = [s for statements in advanced.values() for s in statements]
    for name in advanced:
        for statement in loop.body:
            if statement in load_statements or statement in advance_statements:
                continue
            if name in _names(statement):
                raise _NotPipelined(f"the loop reads `{name}` elsewhere")
    after = [node for node in ast.walk(text.tree) if getattr(node, "lineno", 0) > loop.end_lineno]
    read_after = {n.id for n in after if isinstance(n, ast.Name)}
    if set(advanced) & read_after:
        raise _NotPipelined(f"`{sorted(set(advanced) & read_after)[0]}` is read after the loop")
    loaded_names = {name for _, name, *_ in loads}
    if loaded_names & read_after:
        raise _NotPipelined(f"`{sorted(loaded_names & read_after)[0]}` is read after the loop")

    # how each iteration reads its tile
    function_names = _names(text.tree) | {a.arg for a in text.tree.args.args}
    taken = set(function_names)

    def fresh(name):
        candidate, n = name, 2
        while candidate in taken:
            candidate, n = f"{name}_{n}", n + 1
        taken.add(candidate)
        return candidate

    kinds = set()
    built = []
    for statement, name, pointer, mask, ring in loads:
        uses = [n for stmt in loop.body if stmt is not statement for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and n.id == name]
        operand = dot_operands.get(name, [])
        direct = len(operand) == 1 and len(uses) == 1 and uses[0] is operand[0][0].node.args[operand[0][1]]
        element = _RING.search(ring.text)
        if element is None or element.group(3) not in _ELEMENT_TYPES:
            raise _NotPipelined(f"Triton's ring for `{name}` has an element type the port does not write")
        load = _Load(statement, name, pointer, mask, fresh(f"{name}_ring"), "", _ELEMENT_TYPES[element.group(3)],
                     ring.shape)
        layout_name = f"{name.upper()}_RING_LAYOUT"
        while layout_name in taken:
            layout_name = "_" + layout_name
        taken.add(layout_name)
        encoding = expand_aliases(ring.encoding, _aliases(original.ttgir))
        result.layouts.append(NamedLayout(layout_name, gluon_layout_expression(encoding, ring.shape[1:]),
                                          f"Triton's ring of {stages} tiles for `{name}` (line {text.start(statement)[0]})",
                                          encoding, ring.shape[1:]))
        load.ring_layout = layout_name
        if direct:
            call, position = operand[0]
            if call.kind in ("wgmma", "tcgen05"):
                load.read = "buffer"
            else:
                load.read = f".load({call.layouts[position]})"
        elif isinstance(pointer, ast.Name):
            load.read = f".load({pointer.id}.type.layout)"
        else:
            raise _NotPipelined(f"`{name}` is used beyond the dot and its pointers are an expression")
        built.append(load)
    for call in calls:          # a shared-memory MMA takes the ring's buffers when both operands are there
        if call.kind not in ("wgmma", "tcgen05"):
            continue
        operands = [next((load for load in built if isinstance(argument, ast.Name) and argument.id == load.name), None)
                    for argument in call.node.args[:2]]
        if all(load is not None and load.read == "buffer" for load in operands):
            start, end = text.start(call.node.func), text.end(call.node.func)
            edits.replace(start[0], start[1], end[1], f"_dot_{call.kind}_shared")
            kinds.add(call.kind)
        else:
            for load in operands:
                if load is not None and load.read == "buffer":
                    load.read = f".load({load.pointer.id}.type.layout)" if isinstance(load.pointer, ast.Name) else ""
                    if not load.read:
                        raise _NotPipelined(f"`{load.name}` must reach the dot in registers")

    _write(translation, loop, index, bounds, step, stages, built, advance_statements, fresh)
    result.loops.append((line, stages, [load.name for load in built]))
    return kinds


def _aliases(ttgir: str) -> dict:
    return dict(re.findall(r"^(#[\w.]+) = (#.*)$", ttgir, flags=re.M))


def _write(translation, loop, index, bounds, step, stages, loads, advance_statements, fresh) -> None:
    text = translation.source
    edits = translation.final_edits
    loop_start = text.start(loop)
    outer = " " * loop_start[1]
    inner = " " * text.start(loop.body[0])[1]

    def source(node):
        return edits.span_text(text.start(node), text.end(node))

    def at(node, value):   # the node's text with the loop's index replaced by ``value``
        return re.sub(rf"(?<![\w.]){re.escape(index)}(?![\w])", f"({value})", source(node))

    first, end = fresh(f"{index}_first"), fresh(f"{index}_end")
    step_text = "" if step is None or (isinstance(step, ast.Constant) and step.value == 1) else source(step)
    times = (lambda n: f"{n} * {step_text}") if step_text else (lambda n: f"{n}")
    ahead = stages - 1

    def load_ahead(load, buffer, wanted, value):
        mask = at(load.mask, value) if load.mask is not None else "None"
        return f"_load_ahead({load.ring}.index({buffer}), {wanted}, {at(load.pointer, value)}, {mask})"

    # before the loop: the rings, the bounds, the first tiles, the pointers run ahead
    stage = fresh("stage")
    lines = [f"# the loop below, pipelined as Triton's compile pipelines it: {stages} tiles of "
             f"{', '.join(load.name for load in loads)} in shared memory, copies {ahead} iteration"
             f"{'s' if ahead > 1 else ''} ahead"]
    for load in loads:
        lines.append(f"{load.ring} = gl.allocate_shared_memory({load.element}, {list(load.shape)}, {load.ring_layout})")
    lines.append(f"{first} = {source(bounds[0]) if len(bounds) == 2 else '0'}")
    lines.append(f"{end} = {source(bounds[-1])}")
    lines.append(f"for {stage} in gl.static_range({ahead}):")
    body = []
    order = sorted([(text.start(s), "load", s) for s in (load.statement for load in loads)] +
                   [(text.start(s), "advance", s) for s in advance_statements], key=lambda item: item[0])
    by_statement = {id(load.statement): load for load in loads}
    value = f"{first} + {times(stage)}"
    for _, kind, statement in order:
        if kind == "load":
            body.append(load_ahead(by_statement[id(statement)], stage, f"{value} < {end}", value))
        else:
            body.append(source(statement))
    body.insert(len(body), "async_copy.commit_group()")
    lines += ["    " + line for line in body]
    edits.insert(loop_start[0], 0, "".join(f"{outer}{line}\n" for line in lines))

    # in the loop: wait for this iteration's tiles, read them, copy the tiles `ahead` iterations on
    iteration = f"({index} - {first}) // {step_text}" if step_text else f"{index} - {first}"
    value = f"{index} + {times(ahead)}"
    for number, load in enumerate(loads):
        parts = []
        if number == 0:
            parts.append(f"async_copy.wait_group({ahead - 1})  # this iteration's tiles have landed")
            for other in loads:
                read = "" if other.read == "buffer" else other.read
                parts.append(f"{other.name} = {other.ring}.index(({iteration}) % {stages}){read}")
        parts.append(load_ahead(load, f"({iteration} + {ahead}) % {stages}", f"{value} < {end}", value))
        if number == len(loads) - 1:
            parts.append("async_copy.commit_group()")
        edits.replace_span(text.start(load.statement), text.end(load.statement), f"\n{inner}".join(parts))
    last = text.end(loop)
    edits.insert(last[0], last[1], f"\n{outer}async_copy.wait_group(0)  # no copy outlives the loop")
