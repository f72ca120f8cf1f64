"""Random TTGIR functions for testing ``ll-assign-layouts`` (the unit tests and
``benchmarks/assign_fuzz_gpu.py`` draw from here; nothing in the passes uses it), and what must
not change under it.

:func:`random_program` writes one function over i32 tensors (so every reduction is order-free
and any layout is allowed to change it) from a seeded ``random.Random``: 2-D values (32x64) and
1-D values (32, along dim 0) in random blocked and slice layouts, combined by the ops the pass
has rules for (``arith.addi``, ``tt.expand_dims`` + ``tt.broadcast``, ``tt.reduce`` with
``arith.maxsi``, ``tt.make_range``, ``tt.splat``, ``ttg.convert_layout``), by ``scf.if``
branches that yield a tensor and by an ``scf.for`` with a loop-carried accumulator that is converted back and forth on every
iteration (and, where asked, an ``scf.while`` doing the same: see :func:`random_program`),
ending in stores through fixed pointer arguments.  Whenever two values meet in
different layouts, a conversion is inserted, as Triton does.

:func:`structure` is the program with every ``ttg.convert_layout`` looked through: what each
store and return computes, as nested tuples of op names, shapes and operands.  A
conversion moves data between threads without changing it, so an assignment that only adds,
moves or removes conversions and changes layouts leaves the structure as it was.
"""

from __future__ import annotations

import random

from ..passes.layout_rules import transpose_encoding
from ..passes.shape_layouts import shape_op_result
from .random_layouts import blocked

M, N = 32, 64
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')


def _t2(encoding: str, element: str = "i32") -> str:
    return f"tensor<{M}x{N}x{element}, {encoding}>"


def _t1(encoding: str, element: str = "i32") -> str:
    return f"tensor<{M}x{element}, {encoding}>"


def _slice1(parent: str) -> str:
    return f"#ttg.slice<{{dim = 1, parent = {parent}}}>"


class _Writer:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self.count = 0
        self.layouts2 = [blocked(rng, 2, 4, 32) for _ in range(3)]
        self.layouts1 = [blocked(rng, 1, 4, 32)] + [_slice1(p) for p in self.layouts2[:2]]

    def name(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text: str, indent: int = 4) -> None:
        self.lines.append(" " * indent + text)

    def convert(self, value, to: str, rank: int, indent: int = 4):
        name, encoding = value
        if encoding == to:
            return value
        out = self.name()
        t = _t2 if rank == 2 else _t1
        self.emit(f"{out} = ttg.convert_layout {name} : {t(encoding)} -> {t(to)}", indent)
        return out, to


def _kernel_prologue(w: _Writer, x_layout: str, v_layout: str) -> None:
    """%x (MxN) and %v (M) loaded from X and V (row-major), pointers computed in their layouts."""
    for name, pointer, layout, rank in (("%x", "%X", x_layout, 2), ("%v", "%V", v_layout, 1)):
        w.emit(f"{name} = tt.load {_pointers(w, pointer, layout, rank)} : "
               f"{(_t2 if rank == 2 else _t1)(layout, '!tt.ptr<i32>')}")


def _pointers(w: _Writer, base: str, layout: str, rank: int, indent: int = 4) -> str:
    """Emit the pointer tensor ``base + row * N + col`` (2-D) or ``base + row`` (1-D)."""
    if rank == 1:
        rows, splat, out = w.name(), w.name(), w.name()
        w.emit(f"{rows} = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t1(layout)}", indent)
        w.emit(f"{splat} = tt.splat {base} : !tt.ptr<i32> -> {_t1(layout, '!tt.ptr<i32>')}", indent)
        w.emit(f"{out} = tt.addptr {splat}, {rows} : {_t1(layout, '!tt.ptr<i32>')}, {_t1(layout)}", indent)
        return out
    names = [w.name() for _ in range(10)]
    r, r2, width, r3, c, c2, rb, cb, off, splat = names
    column = f"#ttg.slice<{{dim = 0, parent = {layout}}}>"
    w.emit(f"{r} = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t1(_slice1(layout))}", indent)
    w.emit(f"{r2} = tt.expand_dims {r} {{axis = 1 : i32}} : {_t1(_slice1(layout))} -> "
           f"tensor<{M}x1xi32, {layout}>", indent)
    w.emit(f"{width} = arith.constant dense<{N}> : tensor<{M}x1xi32, {layout}>", indent)
    w.emit(f"{r3} = arith.muli {r2}, {width} : tensor<{M}x1xi32, {layout}>", indent)
    w.emit(f"{c} = tt.make_range {{end = {N} : i32, start = 0 : i32}} : tensor<{N}xi32, {column}>", indent)
    w.emit(f"{c2} = tt.expand_dims {c} {{axis = 0 : i32}} : tensor<{N}xi32, {column}> -> "
           f"tensor<1x{N}xi32, {layout}>", indent)
    w.emit(f"{rb} = tt.broadcast {r3} : tensor<{M}x1xi32, {layout}> -> {_t2(layout)}", indent)
    w.emit(f"{cb} = tt.broadcast {c2} : tensor<1x{N}xi32, {layout}> -> {_t2(layout)}", indent)
    w.emit(f"{off} = arith.addi {rb}, {cb} : {_t2(layout)}", indent)
    w.emit(f"{splat} = tt.splat {base} : !tt.ptr<i32> -> {_t2(layout, '!tt.ptr<i32>')}", indent)
    out = w.name()
    w.emit(f"{out} = tt.addptr {splat}, {off} : {_t2(layout, '!tt.ptr<i32>')}, {_t2(layout)}", indent)
    return out


LOOP_TILES = 4   # a loop_loads kernel's X holds this many M x N tiles: one per iteration (at most 4)


def _loop_load(w: _Writer, two: list, rng: random.Random) -> None:
    """An ``scf.for`` that loads tile i of X (``X + i * M * N``) on iteration i, in a random
    layout, converts it to the accumulator's and adds it (``loop_loads=True``).  Its pointers
    are computed inside the loop from the induction variable, as after Triton's pipeliner: the
    load ``ll-assign-layouts{memory_ops=true}`` may re-lay out.  At most 4 iterations
    (``%c4`` or ``%n``, which the harness sets to 3), so X must hold ``LOOP_TILES`` tiles."""
    init = rng.choice(two)
    load_layout = rng.choice(w.layouts2)
    r, acc, iv = w.name(), w.name(), f"%i{w.count}"
    bound = "%n" if rng.random() < 0.5 else "%c4"
    w.emit(f"{r} = scf.for {iv} = %c0 to {bound} step %c1 iter_args({acc} = {init[0]}) "
           f"-> ({_t2(init[1])}) : i32 {{")
    offset, base, tile = w.name(), w.name(), w.name()
    w.emit(f"{offset} = arith.muli {iv}, %ctile : i32", 6)
    w.emit(f"{base} = tt.addptr %X, {offset} : !tt.ptr<i32>, i32", 6)
    pointers = _pointers(w, base, load_layout, 2, indent=6)
    w.emit(f"{tile} = tt.load {pointers} : {_t2(load_layout, '!tt.ptr<i32>')}", 6)
    converted = w.convert((tile, load_layout), init[1], 2, indent=6)
    s = w.name()
    w.emit(f"{s} = arith.addi {acc}, {converted[0]} : {_t2(init[1])}", 6)
    w.emit(f"scf.yield {s} : {_t2(init[1])}", 6)
    w.emit("}")
    two.append((r, init[1]))


def random_program(rng: random.Random, steps: int = 8, kernel: bool = False, transposes: bool = False,
                   shape_ops: bool = False, whiles: bool = False, loop_loads: bool = False) -> str:
    """One random function (see the module docstring).  ``kernel=False``: its inputs and output
    pointers are tensor arguments; ``kernel=True``: a launchable kernel
    ``@random(X, V, OUT, OUT1: !tt.ptr<i32>, n: i32)`` that loads %x (32x64, row-major) and %v
    (32) and stores the two results to OUT and OUT1.  ``transposes=True`` adds a step that
    transposes a value (``tt.trans``, 64x32 in the transposed layout), adds it to itself there,
    transposes it back and adds it to itself again (off by default, so that the draws of a seed stay as they were).
    ``shape_ops=True`` adds three more (also off by default): a value converted to a random
    layout, reshaped to 2048 elements, added to itself, reshaped back; two values joined
    (``tt.join``), added, split and the halves added; a gather along dim 0 whose indices are a
    value masked to 0..31 (``arith.andi``), so every index is in bounds.
    ``whiles=True`` (also off by default) adds a step writing an ``scf.while`` that carries a 2-D
    accumulator and an i32 counter %k: its before region converts the accumulator to another
    layout, doubles it there, converts it back and forwards it while ``%k < %n``; its after region
    adds a value converted into the accumulator's layout and counts.
    ``loop_loads=True`` (kernels only, off by default) adds a step loading a tile of X inside an
    ``scf.for`` (:func:`_loop_load`)."""
    if loop_loads and not kernel:
        raise ValueError("loop_loads=True needs kernel=True (the loop loads from the kernel's X)")
    w = _Writer(rng)
    x_layout, out_layout = rng.choice(w.layouts2), rng.choice(w.layouts2)
    v_layout, out1_layout = rng.choice(w.layouts1), rng.choice(w.layouts1)
    if kernel:
        _kernel_prologue(w, x_layout, v_layout)
    two = [("%x", x_layout)]
    one = [("%v", v_layout)]
    for _ in range(steps):
        kind = rng.choice(["convert2", "convert1", "add", "broadcast", "reduce", "range", "constant", "loop",
                           "branch"] + (["transpose"] * 2 if transposes else [])
                          + (["reshape", "joinsplit", "gather"] if shape_ops else [])
                          + (["while"] * 2 if whiles else [])
                          + (["loop_load"] * 3 if loop_loads else []))
        if kind == "loop_load":
            _loop_load(w, two, rng)
        elif kind == "convert2":
            two.append(w.convert(rng.choice(two), rng.choice(w.layouts2), 2))
        elif kind == "convert1":
            one.append(w.convert(rng.choice(one), rng.choice(w.layouts1), 1))
        elif kind == "add":
            a = rng.choice(two)
            b = w.convert(rng.choice(two), a[1], 2)
            out = w.name()
            w.emit(f"{out} = arith.addi {a[0]}, {b[0]} : {_t2(a[1])}")
            two.append((out, a[1]))
        elif kind == "broadcast":
            parent = rng.choice(w.layouts2)
            v = w.convert(rng.choice(one), _slice1(parent), 1)
            e, b = w.name(), w.name()
            w.emit(f"{e} = tt.expand_dims {v[0]} {{axis = 1 : i32}} : {_t1(v[1])} -> tensor<{M}x1xi32, {parent}>")
            w.emit(f"{b} = tt.broadcast {e} : tensor<{M}x1xi32, {parent}> -> {_t2(parent)}")
            two.append((b, parent))
        elif kind == "reduce":
            a = rng.choice(two)
            r = w.name()
            w.emit(f'{r} = "tt.reduce"({a[0]}) <{{axis = 1 : i32}}> ({{')
            w.emit("^bb0(%a: i32, %b: i32):", 2)
            w.emit("%m = arith.maxsi %a, %b : i32", 6)
            w.emit("tt.reduce.return %m : i32", 6)
            w.emit(f"}}) : ({_t2(a[1])}) -> {_t1(_slice1(a[1]))}")
            one.append((r, _slice1(a[1])))
        elif kind == "range":
            layout = rng.choice([layout for layout in w.layouts1])
            r = w.name()
            w.emit(f"{r} = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t1(layout)}")
            one.append((r, layout))
        elif kind == "constant":
            layout = rng.choice(w.layouts2)
            c = w.name()
            # a splat of an argument, not a constant: Triton's canonicalizer folds arithmetic on
            # constants once a conversion no longer stands between them
            w.emit(f"{c} = tt.splat %n : i32 -> {_t2(layout)}")
            two.append((c, layout))
        elif kind == "transpose":
            a = rng.choice(two)
            flipped = transpose_encoding(a[1], (1, 0))
            t, d, back = w.name(), w.name(), w.name()
            wide = f"tensor<{N}x{M}xi32, {flipped}>"
            w.emit(f"{t} = tt.trans {a[0]} {{order = array<i32: 1, 0>}} : {_t2(a[1])} -> {wide}")
            w.emit(f"{d} = arith.addi {t}, {t} : {wide}")
            w.emit(f"{back} = tt.trans {d} {{order = array<i32: 1, 0>}} : {wide} -> {_t2(a[1])}")
            # an add after the transposes, so that no transpose ever reads one (Triton folds
            # trans(trans(x)) into x, which would change the program's structure)
            s = w.name()
            w.emit(f"{s} = arith.addi {back}, {back} : {_t2(a[1])}")
            two.append((s, a[1]))
        elif kind == "reshape":
            a = w.convert(rng.choice(two), rng.choice(w.layouts2), 2)
            flat = shape_op_result("reshape", a[1], (M, N), (M * N,))
            back = shape_op_result("reshape", flat, (M * N,), (M, N), known=(a[1],))
            r, d, t, s = w.name(), w.name(), w.name(), w.name()
            wide = f"tensor<{M * N}xi32, {flat}>"
            w.emit(f"{r} = tt.reshape {a[0]} : {_t2(a[1])} -> {wide}")
            w.emit(f"{d} = arith.addi {r}, {r} : {wide}")
            w.emit(f"{t} = tt.reshape {d} : {wide} -> {_t2(back)}")
            # an add after, so that no reshape reads a reshape (Triton folds the pair)
            w.emit(f"{s} = arith.addi {t}, {t} : {_t2(back)}")
            two.append((s, back))
        elif kind == "joinsplit":
            a = rng.choice(two)
            b = w.convert(rng.choice(two), a[1], 2)
            joined = shape_op_result("join", a[1], (M, N), (M, N, 2))
            pair = f"tensor<{M}x{N}x2xi32, {joined}>"
            j, d, lo, hi, s = w.name(), w.name(), w.name(), w.name(), w.name()
            w.emit(f"{j} = tt.join {a[0]}, {b[0]} : {_t2(a[1])} -> {pair}")
            w.emit(f"{d} = arith.addi {j}, {j} : {pair}")
            w.emit(f"{lo}, {hi} = tt.split {d} : {pair} -> {_t2(a[1])}")
            w.emit(f"{s} = arith.subi {lo}, {hi} : {_t2(a[1])}")
            two.append((s, a[1]))
        elif kind == "gather":
            source = rng.choice(two)
            indices = w.convert(rng.choice(two), rng.choice(w.layouts2), 2)
            mask, idx, g = w.name(), w.name(), w.name()
            w.emit(f"{mask} = arith.constant dense<31> : {_t2(indices[1])}")
            w.emit(f"{idx} = arith.andi {indices[0]}, {mask} : {_t2(indices[1])}")
            w.emit(f"{g} = tt.gather {source[0]}[{idx}] {{axis = 0 : i32}} : ({_t2(source[1])}, {_t2(indices[1])}) "
                   f"-> {_t2(indices[1])}")
            two.append((g, indices[1]))
        elif kind == "while":
            init = rng.choice(two)
            carried, inside = init[1], rng.choice(w.layouts2)
            types = f"{_t2(carried)}, i32"
            r, acc, k = w.name(), w.name(), w.name()
            w.emit(f"{r}:2 = scf.while ({acc} = {init[0]}, {k} = %c0) : ({types}) -> ({types}) {{")
            converted = w.convert((acc, carried), inside, 2, indent=6)
            doubled, more = w.name(), w.name()
            w.emit(f"{doubled} = arith.addi {converted[0]}, {converted[0]} : {_t2(inside)}", 6)
            back = w.convert((doubled, inside), carried, 2, indent=6)
            w.emit(f"{more} = arith.cmpi slt, {k}, %n : i32", 6)
            w.emit(f"scf.condition({more}) {back[0]}, {k} : {types}", 6)
            w.emit("} do {")
            a, counter = w.name(), w.name()
            w.emit(f"^bb0({a}: {_t2(carried)}, {counter}: i32):")
            addend = w.convert(rng.choice(two), carried, 2, indent=6)
            total, next_counter = w.name(), w.name()
            w.emit(f"{total} = arith.addi {a}, {addend[0]} : {_t2(carried)}", 6)
            w.emit(f"{next_counter} = arith.addi {counter}, %c1 : i32", 6)
            w.emit(f"scf.yield {total}, {next_counter} : {types}", 6)
            w.emit("}")
            two.append((f"{r}#0", carried))
        elif kind == "branch":
            layout = rng.choice(w.layouts2)
            r = w.name()
            w.emit(f"{r} = scf.if %cond -> ({_t2(layout)}) {{")
            then = w.convert(rng.choice(two), layout, 2, indent=6)
            w.emit(f"scf.yield {then[0]} : {_t2(layout)}", 6)
            w.emit("} else {")
            other = w.convert(rng.choice(two), layout, 2, indent=6)
            w.emit(f"scf.yield {other[0]} : {_t2(layout)}", 6)
            w.emit("}")
            two.append((r, layout))
        else:
            init = rng.choice(two)
            inside = rng.choice(w.layouts2)
            addend = w.convert(rng.choice(two), inside, 2)
            r, acc = w.name(), w.name()
            bound = "%n" if rng.random() < 0.5 else "%c4"
            w.emit(f"{r} = scf.for %i{w.count} = %c0 to {bound} step %c1 iter_args({acc} = {init[0]}) "
                   f"-> ({_t2(init[1])}) : i32 {{")
            c = w.convert((acc, init[1]), inside, 2, indent=6)
            s = w.name()
            w.emit(f"{s} = arith.addi {c[0]}, {addend[0]} : {_t2(inside)}", 6)
            back = w.convert((s, inside), init[1], 2, indent=6)
            w.emit(f"scf.yield {back[0]} : {_t2(init[1])}", 6)
            w.emit("}")
            two.append((r, init[1]))
    result2 = w.convert(two[-1], out_layout, 2)
    result1 = w.convert(one[-1], out1_layout, 1)
    out, out1 = ("%out", "%out1") if not kernel else (_pointers(w, "%OUT", out_layout, 2),
                                                       _pointers(w, "%OUT1", out1_layout, 1))
    w.emit(f"tt.store {out}, {result2[0]} : {_t2(out_layout, '!tt.ptr<i32>')}")
    w.emit(f"tt.store {out1}, {result1[0]} : {_t1(out1_layout, '!tt.ptr<i32>')}")
    w.emit("tt.return")
    if kernel:
        signature = ("%X: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %V: !tt.ptr<i32> {tt.divisibility = 16 : i32}, "
                     "%OUT: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %OUT1: !tt.ptr<i32> {tt.divisibility = 16 : i32}, "
                     "%n: i32")
    else:
        signature = (f"%x: {_t2(x_layout)}, %v: {_t1(v_layout)}, %out: {_t2(out_layout, '!tt.ptr<i32>')}, "
                     f"%out1: {_t1(out1_layout, '!tt.ptr<i32>')}, %n: i32")
    body = ["    %c0 = arith.constant 0 : i32", "    %c1 = arith.constant 1 : i32", "    %c4 = arith.constant 4 : i32",
            "    %cond = arith.cmpi sgt, %n, %c1 : i32"]
    if loop_loads:
        body.append(f"    %ctile = arith.constant {M * N} : i32")
    return "\n".join([HEADER, f"  tt.func public @random({signature}) {{", *body, *w.lines, "  }", "}", ""])


def structure(module) -> list:
    """What the module's stores, yields and returns compute, conversions looked through (sorted
    so that the order of independent ops does not matter)."""
    memo: dict[int, tuple] = {}

    def type_of(value) -> tuple:
        t = value.tensor_type
        return (t.shape, t.element_type) if t is not None else (value.type,)

    def key(value) -> tuple:
        if id(value) in memo:
            return memo[id(value)]
        if value.is_block_argument:
            block = value.owner
            owner = block.parent.parent if block.parent is not None else None
            inputs = tuple(key(v) for v in owner.operands) if owner is not None and owner.name == "scf.for" else ()
            if owner is not None and owner.name == "scf.while":   # its regions' arguments differ
                inputs = (tuple(key(v) for v in owner.operands), "before" if block.parent is owner.regions[0] else "after")
            result = ("argument", value.index, owner.name if owner is not None else None, inputs)
        elif value.owner.name == "ttg.convert_layout":
            result = key(value.owner.operands[0])
        elif value.owner.name in ("scf.if", "arith.select"):
            # Written as a select (Triton's canonicalizer turns a branch that only yields into
            # one, and a choice between two equal values into that value).
            op = value.owner
            if op.name == "scf.if":
                options = [key(region.blocks[0].operations[-1].operands[value.index]) for region in op.regions]
            else:
                options = [key(v) for v in op.operands[1:]]
            condition = key(op.operands[0])
            # A select under the same condition inside a branch takes that branch's side:
            # c ? (c ? a : b) : d is c ? a : d.
            for branch in (0, 1):
                while options[branch][:1] == ("select",) and options[branch][2] == condition:
                    options[branch] = options[branch][3 + branch]
            result = options[0] if options[0] == options[1] else ("select", type_of(value), condition, *options)
        elif value.owner.name == "tt.reshape" and key(value.owner.operands[0])[0] == "tt.splat":
            # A reshaped splat is a splat of the new shape (Triton's canonicalizer folds it so
            # once no conversion stands between them).
            result = ("tt.splat", 0, type_of(value), key(value.owner.operands[0])[3])
        else:
            op = value.owner
            result = (op.name, value.index, type_of(value), tuple(key(v) for v in op.operands))
            if op.name == "scf.for":     # what the loop computes: its body's yield
                result += (tuple(key(v) for v in op.regions[0].blocks[0].operations[-1].operands),)
            elif op.name == "scf.while":   # what it computes: the condition and what it forwards, the after region's yield
                result += tuple(tuple(key(v) for v in region.blocks[0].operations[-1].operands) for region in op.regions)
        memo[id(value)] = result
        return result

    # Stores and returns: a loop whose result nothing uses is dead code the canonicalizer may drop.
    sinks = [(op.name, tuple(key(v) for v in op.operands)) for op in module.walk()
             if op.name in ("tt.store", "tt.return")]
    return sorted(sinks, key=repr)
