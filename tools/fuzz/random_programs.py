"""Random TTGIR functions for testing ``ll-assign-layouts`` (the unit tests and
``benchmarks/assign_fuzz_gpu.py`` draw from here; nothing in the passes uses it), and what must
not change under it.  It ships in the package, as ``tools/fuzz/conversion_fuzz.py`` does, so that the
GPU harness draws the same programs from an installed wheel.

:func:`random_program` writes one function over i32 tensors (so every reduction is order-free
and any layout is allowed to change it) from a seeded ``random.Random``: 2-D values (32x64) and
1-D values (32, along dim 0) in random blocked and slice layouts, combined by the ops the pass
has rules for (``arith.addi``, ``tt.expand_dims`` + ``tt.broadcast``, ``tt.reduce`` with
``arith.maxsi``, ``tt.make_range``, ``tt.splat``, ``ttg.convert_layout``), by ``scf.if``
branches that yield a tensor and by an ``scf.for`` with a loop-carried accumulator that is converted back and forth on every
iteration (and, where asked, an ``scf.while`` doing the same: see :func:`random_program`),
ending in stores through fixed pointer arguments.  Whenever two values meet in
different layouts, a conversion is inserted, as Triton does.  With ``loop_loads``, every
``scf.for`` body also loads a tile from a pointer argument (and may store one), addressed by the
induction variable, in a layout other than its accumulator's: the loads and stores in loops that
``memory_ops=true`` may re-lay out.

:func:`random_kernel` also bounds every i32 value the program computes (:class:`Magnitude`,
affine in the bound B on its inputs), so that a harness can draw inputs that cannot overflow
(``RandomKernel.input_bound``): Triton may fold i32 arithmetic as if it could not overflow, so
an overflowing program's answer can depend on where its conversions stand.

:func:`structure` is the program with every ``ttg.convert_layout`` looked through: what each
store and return computes, as nested tuples of op names, shapes and operands.  A
conversion moves data between threads without changing it, so an assignment that only adds,
moves or removes conversions and changes layouts leaves the structure as it was.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from linear_layouts.passes.assign.layout_rules import transpose_encoding
from linear_layouts.passes.assign.shape_layouts import shape_op_result
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


@dataclass(frozen=True)
class Magnitude:
    """An upper bound ``scale * B + offset`` on the absolute value of an i32 value, where ``B``
    bounds the absolute value of every element loaded from the input buffers."""

    scale: int
    offset: int

    def __add__(self, other: "Magnitude") -> "Magnitude":
        return Magnitude(self.scale + other.scale, self.offset + other.offset)

    def times(self, factor: int) -> "Magnitude":
        return Magnitude(self.scale * factor, self.offset * factor)

    def max(self, other: "Magnitude") -> "Magnitude":
        return Magnitude(max(self.scale, other.scale), max(self.offset, other.offset))


LOADED = Magnitude(1, 0)          # an element of X, V or L
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class RandomKernel:
    """A random program and what running it safely needs (see :func:`random_kernel`)."""

    text: str
    magnitude: Magnitude      # bounds every i32 the program computes from its inputs
    loop_store_tiles: int     # S must hold loop_store_tiles * MAX_TRIPS * M * N elements

    @property
    def input_bound(self) -> int:
        """The largest B such that inputs in [-B, B] keep every value within i32 (0 if even
        B = 1 might not: then only two's complement wrapping, still deterministic, is left)."""
        return max(0, (INT32_MAX - self.magnitude.offset) // max(1, self.magnitude.scale))


class _Writer:
    def __init__(self, rng: random.Random, loop_loads: bool = False):
        self.rng = rng
        self.lines: list[str] = []
        self.count = 0
        self.layouts2 = [blocked(rng, 2, 4, 32) for _ in range(3)]
        self.layouts1 = [blocked(rng, 1, 4, 32)] + [_slice1(p) for p in self.layouts2[:2]]
        self.loop_loads = loop_loads
        self.loop_store_tiles = 0
        self.functions: list[str] = []      # the noinline callees of ``calls`` steps, one text each
        # name -> Magnitude of every i32 value that data flows through (not addresses)
        self.bounds: dict[str, Magnitude] = {"%x": LOADED, "%v": LOADED}

    def name(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def bound(self, value) -> Magnitude:
        return self.bounds[value[0]]

    def set_bound(self, value, magnitude: Magnitude):
        self.bounds[value[0]] = magnitude
        return value

    def emit(self, text: str, indent: int = 4) -> None:
        self.lines.append(" " * indent + text)

    def convert(self, value, to: str, rank: int, indent: int = 4):
        name, encoding = value
        if encoding == to:
            return value
        out = self.name()
        t = _t2 if rank == 2 else _t1
        self.emit(f"{out} = ttg.convert_layout {name} : {t(encoding)} -> {t(to)}", indent)
        if name in self.bounds:
            self.bounds[out] = self.bounds[name]
        return out, to


def _kernel_prologue(w: _Writer, x_layout: str, v_layout: str) -> None:
    """%x (MxN) and %v (M) loaded from X and V (row-major), pointers computed in their layouts."""
    for name, pointer, layout, rank in (("%x", "%X", x_layout, 2), ("%v", "%V", v_layout, 1)):
        w.emit(f"{name} = tt.load {_pointers(w, pointer, layout, rank)} : "
               f"{(_t2 if rank == 2 else _t1)(layout, '!tt.ptr<i32>')}")


def _pointers(w: _Writer, base: str, layout: str, rank: int) -> str:
    """Emit the pointer tensor ``base + row * N + col`` (2-D) or ``base + row`` (1-D)."""
    if rank == 1:
        rows, splat, out = w.name(), w.name(), w.name()
        w.emit(f"{rows} = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t1(layout)}")
        w.emit(f"{splat} = tt.splat {base} : !tt.ptr<i32> -> {_t1(layout, '!tt.ptr<i32>')}")
        w.emit(f"{out} = tt.addptr {splat}, {rows} : {_t1(layout, '!tt.ptr<i32>')}, {_t1(layout)}")
        return out
    off, splat = _tile_offsets(w, layout), w.name()
    w.emit(f"{splat} = tt.splat {base} : !tt.ptr<i32> -> {_t2(layout, '!tt.ptr<i32>')}")
    out = w.name()
    w.emit(f"{out} = tt.addptr {splat}, {off} : {_t2(layout, '!tt.ptr<i32>')}, {_t2(layout)}")
    return out


def _tile_offsets(w: _Writer, layout: str) -> str:
    """Emit the offsets ``row * N + col`` of a row-major MxN tile in ``layout``."""
    r, r2, width, r3, c, c2, rb, cb, off = [w.name() for _ in range(9)]
    column = f"#ttg.slice<{{dim = 0, parent = {layout}}}>"
    w.emit(f"{r} = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t1(_slice1(layout))}")
    w.emit(f"{r2} = tt.expand_dims {r} {{axis = 1 : i32}} : {_t1(_slice1(layout))} -> tensor<{M}x1xi32, {layout}>")
    w.emit(f"{width} = arith.constant dense<{N}> : tensor<{M}x1xi32, {layout}>")
    w.emit(f"{r3} = arith.muli {r2}, {width} : tensor<{M}x1xi32, {layout}>")
    w.emit(f"{c} = tt.make_range {{end = {N} : i32, start = 0 : i32}} : tensor<{N}xi32, {column}>")
    w.emit(f"{c2} = tt.expand_dims {c} {{axis = 0 : i32}} : tensor<{N}xi32, {column}> -> tensor<1x{N}xi32, {layout}>")
    w.emit(f"{rb} = tt.broadcast {r3} : tensor<{M}x1xi32, {layout}> -> {_t2(layout)}")
    w.emit(f"{cb} = tt.broadcast {c2} : tensor<1x{N}xi32, {layout}> -> {_t2(layout)}")
    w.emit(f"{off} = arith.addi {rb}, {cb} : {_t2(layout)}")
    return off


MAX_TRIPS = 4     # the most iterations of any scf.for (its bound is %c4 or %n, and n <= MAX_TRIPS)
KERNEL_POINTERS = ("%X", "%V", "%OUT", "%OUT1")
# The first lines of every function written here: the constants and the condition the steps use.
PROLOGUE = ("    %c0 = arith.constant 0 : i32", "    %c1 = arith.constant 1 : i32", "    %c4 = arith.constant 4 : i32",
            "    %cond = arith.cmpi sgt, %n, %c1 : i32")


def random_program(rng: random.Random, steps: int = 8, kernel: bool = False, transposes: bool = False,
                   shape_ops: bool = False, whiles: bool = False, loop_loads: bool = False, calls: bool = False) -> str:
    """One random function's text: :func:`random_kernel`'s, without what running it needs."""
    return random_kernel(rng, steps, kernel, transposes, shape_ops, whiles, loop_loads, calls).text


def random_kernel(rng: random.Random, steps: int = 8, kernel: bool = False, transposes: bool = False,
                  shape_ops: bool = False, whiles: bool = False, loop_loads: bool = False,
                  calls: bool = False) -> RandomKernel:
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
    ``loop_loads=True`` (also off by default) makes loops more frequent and gives every
    ``scf.for`` memory ops in its body (:func:`_write_loop_memory`): the function takes two more
    pointers after the others, ``L`` (read) and ``S`` (written), before ``n``.
    ``calls=True`` (also off by default) adds a step that calls a noinline function of its own
    (:func:`_write_call`): a 2-D value and ``%n`` go in, a few steps of their own (conversions,
    adds, loops, branches, splats) run there, and a 2-D value comes back in a drawn layout.

    The kernel is well-defined for ``0 <= n <= MAX_TRIPS``, X of M*N, V of M, L of
    MAX_TRIPS*M*N and S of ``loop_store_tiles``*MAX_TRIPS*M*N elements; with inputs bounded by
    ``input_bound`` no i32 it computes overflows."""
    w = _Writer(rng, loop_loads)
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
                          + (["while"] * 2 if whiles else []) + (["loop"] * 3 if loop_loads else [])
                          + (["call"] * 2 if calls else []))
        _write_step(w, kind, two, one)
    result2 = w.convert(two[-1], out_layout, 2)
    result1 = w.convert(one[-1], out1_layout, 1)
    out, out1 = ("%out", "%out1") if not kernel else (_pointers(w, "%OUT", out_layout, 2),
                                                       _pointers(w, "%OUT1", out1_layout, 1))
    w.emit(f"tt.store {out}, {result2[0]} : {_t2(out_layout, '!tt.ptr<i32>')}")
    w.emit(f"tt.store {out1}, {result1[0]} : {_t1(out1_layout, '!tt.ptr<i32>')}")
    w.emit("tt.return")
    aligned = " {tt.divisibility = 16 : i32}"
    loop_pointers = "".join(f", {p}: !tt.ptr<i32>{aligned}" for p in ("%L", "%S")) if loop_loads else ""
    if kernel:
        signature = ", ".join(f"{p}: !tt.ptr<i32>{aligned}" for p in KERNEL_POINTERS) + loop_pointers + ", %n: i32"
    else:
        signature = (f"%x: {_t2(x_layout)}, %v: {_t1(v_layout)}, %out: {_t2(out_layout, '!tt.ptr<i32>')}, "
                     f"%out1: {_t1(out1_layout, '!tt.ptr<i32>')}{loop_pointers}, %n: i32")
    text = "\n".join([HEADER, *w.functions, f"  tt.func public @random({signature}) {{", *PROLOGUE, *w.lines, "  }",
                      "}", ""])
    magnitude = Magnitude(0, 0)
    for bound in w.bounds.values():
        magnitude = magnitude.max(bound)
    return RandomKernel(text, magnitude, w.loop_store_tiles)


def _write_step(w: _Writer, kind: str, two: list, one: list) -> None:
    """Emit one step of ``kind``; append its result to ``two`` (2-D) or ``one`` (1-D) and
    record its Magnitude."""
    rng = w.rng
    if kind == "convert2":
        two.append(w.convert(rng.choice(two), rng.choice(w.layouts2), 2))
    elif kind == "convert1":
        one.append(w.convert(rng.choice(one), rng.choice(w.layouts1), 1))
    elif kind == "add":
        a = rng.choice(two)
        b = w.convert(rng.choice(two), a[1], 2)
        out = w.name()
        w.emit(f"{out} = arith.addi {a[0]}, {b[0]} : {_t2(a[1])}")
        two.append(w.set_bound((out, a[1]), w.bound(a) + w.bound(b)))
    elif kind == "broadcast":
        parent = rng.choice(w.layouts2)
        v = w.convert(rng.choice(one), _slice1(parent), 1)
        e, b = w.name(), w.name()
        w.emit(f"{e} = tt.expand_dims {v[0]} {{axis = 1 : i32}} : {_t1(v[1])} -> tensor<{M}x1xi32, {parent}>")
        w.emit(f"{b} = tt.broadcast {e} : tensor<{M}x1xi32, {parent}> -> {_t2(parent)}")
        two.append(w.set_bound((b, parent), w.bound(v)))
    elif kind == "reduce":
        a = rng.choice(two)
        r = w.name()
        w.emit(f'{r} = "tt.reduce"({a[0]}) <{{axis = 1 : i32}}> ({{')
        w.emit("^bb0(%a: i32, %b: i32):", 2)
        w.emit("%m = arith.maxsi %a, %b : i32", 6)
        w.emit("tt.reduce.return %m : i32", 6)
        w.emit(f"}}) : ({_t2(a[1])}) -> {_t1(_slice1(a[1]))}")
        one.append(w.set_bound((r, _slice1(a[1])), w.bound(a)))
    elif kind == "range":
        layout = rng.choice([layout for layout in w.layouts1])
        r = w.name()
        w.emit(f"{r} = tt.make_range {{end = {M} : i32, start = 0 : i32}} : {_t1(layout)}")
        one.append(w.set_bound((r, layout), Magnitude(0, M - 1)))
    elif kind == "constant":
        layout = rng.choice(w.layouts2)
        c = w.name()
        # a splat of an argument, not a constant: Triton's canonicalizer folds arithmetic on
        # constants once a conversion no longer stands between them
        w.emit(f"{c} = tt.splat %n : i32 -> {_t2(layout)}")
        two.append(w.set_bound((c, layout), Magnitude(0, MAX_TRIPS)))
    elif kind in ("transpose", "reshape", "joinsplit", "gather"):
        two.append(_write_shape_step(w, kind, two))
    elif kind == "while":
        two.append(_write_while(w, two))
    elif kind == "call":
        two.append(_write_call(w, two))
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
        two.append(w.set_bound((r, layout), w.bound(then).max(w.bound(other))))
    else:
        two.append(_write_for(w, two))


def _write_call(w: _Writer, two: list):
    """A call of a noinline function written for it: ``@callee<k>(%a, %n) -> tensor`` whose
    body runs 1-3 steps of its own on %a (conversions, adds, loops, branches, splats of %n; no
    memory ops) and returns its last 2-D value plus %a, converted to a drawn layout.  The call's
    result is bounded by what the callee computes from a bound on %a (the caller's value's)."""
    rng = w.rng
    a = rng.choice(two)
    returned = rng.choice(w.layouts2)
    callee = _Writer(rng)
    callee.layouts2, callee.layouts1 = w.layouts2, w.layouts1
    callee.bounds = {"%a": w.bound(a)}
    inner = [("%a", a[1])]
    for _ in range(rng.randint(1, 3)):
        _write_step(callee, rng.choice(["convert2", "add", "loop", "branch", "constant"]), inner, [])
    # the result always depends on %a: the last value plus %a, in the last value's layout
    last = inner[-1]
    argument = callee.convert(inner[0], last[1], 2)
    total = callee.name()
    callee.emit(f"{total} = arith.addi {last[0]}, {argument[0]} : {_t2(last[1])}")
    callee.set_bound((total, last[1]), callee.bound(last) + callee.bound(argument))
    result = callee.convert((total, last[1]), returned, 2)
    callee.emit(f"tt.return {result[0]} : {_t2(returned)}")
    name = f"@callee{len(w.functions)}"
    w.functions.append("\n".join([f"  tt.func private {name}(%a: {_t2(a[1])}, %n: i32) -> {_t2(returned)} "
                                  "attributes {noinline = true} {", *PROLOGUE, *callee.lines, "  }"]))
    r = w.name()
    w.emit(f"{r} = tt.call {name}({a[0]}, %n) : ({_t2(a[1])}, i32) -> {_t2(returned)}")
    return w.set_bound((r, returned), callee.bound(result))


def _write_shape_step(w: _Writer, kind: str, two: list):
    """A transpose, reshape, join + split or gather step (see :func:`random_kernel`)."""
    rng = w.rng
    if kind == "transpose":
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
        return w.set_bound((s, a[1]), w.bound(a).times(4))
    if kind == "reshape":
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
        return w.set_bound((s, back), w.bound(a).times(4))
    if kind == "joinsplit":
        a = rng.choice(two)
        b = w.convert(rng.choice(two), a[1], 2)
        joined = shape_op_result("join", a[1], (M, N), (M, N, 2))
        pair = f"tensor<{M}x{N}x2xi32, {joined}>"
        j, d, lo, hi, s = w.name(), w.name(), w.name(), w.name(), w.name()
        w.emit(f"{j} = tt.join {a[0]}, {b[0]} : {_t2(a[1])} -> {pair}")
        w.emit(f"{d} = arith.addi {j}, {j} : {pair}")
        w.emit(f"{lo}, {hi} = tt.split {d} : {pair} -> {_t2(a[1])}")
        w.emit(f"{s} = arith.subi {lo}, {hi} : {_t2(a[1])}")
        return w.set_bound((s, a[1]), (w.bound(a) + w.bound(b)).times(2))
    source = rng.choice(two)
    indices = w.convert(rng.choice(two), rng.choice(w.layouts2), 2)
    mask, idx, g = w.name(), w.name(), w.name()
    w.emit(f"{mask} = arith.constant dense<31> : {_t2(indices[1])}")
    w.emit(f"{idx} = arith.andi {indices[0]}, {mask} : {_t2(indices[1])}")
    w.emit(f"{g} = tt.gather {source[0]}[{idx}] {{axis = 0 : i32}} : ({_t2(source[1])}, {_t2(indices[1])}) "
           f"-> {_t2(indices[1])}")
    return w.set_bound((g, indices[1]), w.bound(source))


def _write_while(w: _Writer, two: list):
    """An scf.while carrying a converted, doubled accumulator (see :func:`random_kernel`)."""
    rng = w.rng
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
    # n <= MAX_TRIPS rounds of a -> 2a + addend, and the last before region doubles once more
    magnitude = w.bound(init)
    for _ in range(MAX_TRIPS):
        magnitude = magnitude.times(2) + w.bound(addend)
    return w.set_bound((f"{r}#0", carried), magnitude.times(2))


def _write_for(w: _Writer, two: list):
    """An scf.for whose accumulator is converted to another layout, added to there and
    converted back on every iteration; with ``loop_loads``, memory ops in the body too."""
    rng = w.rng
    init = rng.choice(two)
    inside = rng.choice(w.layouts2)
    addend = w.convert(rng.choice(two), inside, 2)
    r, acc = w.name(), w.name()
    bound = "%n" if rng.random() < 0.5 else "%c4"
    memory = _LoopMemory(w, inside) if w.loop_loads else None
    iv = f"%i{w.count}"
    w.emit(f"{r} = scf.for {iv} = %c0 to {bound} step %c1 iter_args({acc} = {init[0]}) "
           f"-> ({_t2(init[1])}) : i32 {{")
    c = w.convert((acc, init[1]), inside, 2, indent=6)
    s = w.name()
    w.emit(f"{s} = arith.addi {c[0]}, {addend[0]} : {_t2(inside)}", 6)
    per_trip = w.bound(addend)
    if memory is not None:
        loaded = w.convert(memory.load(iv), inside, 2, indent=6)
        total = w.name()
        w.emit(f"{total} = arith.addi {s}, {loaded[0]} : {_t2(inside)}", 6)
        s = total
        per_trip = per_trip + LOADED
        memory.store(iv, (s, inside))
    back = w.convert((s, inside), init[1], 2, indent=6)
    w.emit(f"scf.yield {back[0]} : {_t2(init[1])}", 6)
    w.emit("}")
    return w.set_bound((r, init[1]), w.bound(init) + per_trip.times(MAX_TRIPS))


class _LoopMemory:
    """The memory ops of one scf.for body (``loop_loads``): the body loads tile ``iv`` of L
    (``L + iv*M*N + row*N + col``) in a layout drawn other than the accumulator's where one
    exists (so the body converts, which ``memory_ops`` may remove), and stores its accumulator
    to tile ``iv`` of this loop's own part of S in a drawn layout.  Every loop stores, so none is
    dead code that a canonicalizer would drop with its load.  Tile offsets are computed
    before the loop (Triton would hoist them); the induction variable's part is added in the
    body either to the scalar base (``tt.addptr`` on a pointer, then ``tt.splat``) or to the
    splatted offsets (``tt.splat`` of ``iv * M*N``, ``arith.addi``), on a draw.  A mask, on a
    draw, keeps tile elements below a drawn limit (the load's others read 0, the store's
    elements stay as they were)."""

    def __init__(self, w: _Writer, inside: str):
        self.w = w
        rng = w.rng
        others = [layout for layout in w.layouts2 if layout != inside] or w.layouts2
        self.load_layout = rng.choice(others)
        # any layout, the accumulator's too (then only the load needs a conversion)
        self.store_layout = rng.choice(w.layouts2)
        self.stride = w.name()
        w.emit(f"{self.stride} = arith.constant {M * N} : i32")
        self.load_tile = self._tile(self.load_layout)
        self.store_tile = self._tile(self.store_layout)
        # S + this loop's part: MAX_TRIPS tiles of its own (S itself for the first: a canonicalizer
        # folds an addptr of 0, and the program's structure would change with it)
        part = w.loop_store_tiles * MAX_TRIPS * M * N
        self.store_base = "%S" if part == 0 else w.name()
        if part:
            w.emit(f"{self.store_base} = tt.addptr %S, {self._constant(part)} : !tt.ptr<i32>, i32")
        w.loop_store_tiles += 1

    def _constant(self, value: int) -> str:
        name = self.w.name()
        self.w.emit(f"{name} = arith.constant {value} : i32")
        return name

    def _tile(self, layout: str) -> dict:
        """Offsets, a mask (or None) and the splatted base pointer placeholder for one layout."""
        rng, w = self.w.rng, self.w
        offsets = _tile_offsets(w, layout)
        mask = None
        if rng.random() < 0.4:
            limit, mask = w.name(), w.name()
            w.emit(f"{limit} = arith.constant dense<{rng.choice([M * N // 2, 5 * N + 3, M * N - 1])}> : {_t2(layout)}")
            w.emit(f"{mask} = arith.cmpi slt, {offsets}, {limit} : {_t2(layout)}")
        return {"layout": layout, "offsets": offsets, "mask": mask, "scalar_base": rng.random() < 0.5}

    def _pointer(self, base: str, iv: str, tile: dict) -> str:
        """Emit, in the body, ``base + iv*M*N + offsets`` in the tile's layout."""
        w, layout = self.w, tile["layout"]
        pointers, step, out = _t2(layout, "!tt.ptr<i32>"), w.name(), w.name()
        w.emit(f"{step} = arith.muli {iv}, {self.stride} : i32", 6)
        if tile["scalar_base"]:
            moved, splat = w.name(), w.name()
            w.emit(f"{moved} = tt.addptr {base}, {step} : !tt.ptr<i32>, i32", 6)
            w.emit(f"{splat} = tt.splat {moved} : !tt.ptr<i32> -> {pointers}", 6)
            w.emit(f"{out} = tt.addptr {splat}, {tile['offsets']} : {pointers}, {_t2(layout)}", 6)
            return out
        steps, offsets, splat = w.name(), w.name(), w.name()
        w.emit(f"{steps} = tt.splat {step} : i32 -> {_t2(layout)}", 6)
        w.emit(f"{offsets} = arith.addi {steps}, {tile['offsets']} : {_t2(layout)}", 6)
        w.emit(f"{splat} = tt.splat {base} : !tt.ptr<i32> -> {pointers}", 6)
        w.emit(f"{out} = tt.addptr {splat}, {offsets} : {pointers}, {_t2(layout)}", 6)
        return out

    def load(self, iv: str):
        """Load tile ``iv`` of L and convert it to the accumulator's layout."""
        w, tile = self.w, self.load_tile
        layout, pointer, loaded = tile["layout"], self._pointer("%L", iv, tile), w.name()
        if tile["mask"] is None:
            w.emit(f"{loaded} = tt.load {pointer} : {_t2(layout, '!tt.ptr<i32>')}", 6)
        else:
            zero = w.name()
            w.emit(f"{zero} = arith.constant dense<0> : {_t2(layout)}", 6)
            w.emit(f"{loaded} = tt.load {pointer}, {tile['mask']}, {zero} : {_t2(layout, '!tt.ptr<i32>')}", 6)
        return w.set_bound((loaded, layout), LOADED)

    def store(self, iv: str, value) -> None:
        """Store ``value`` (the accumulator) to tile ``iv`` of this loop's part of S."""
        w, tile = self.w, self.store_tile
        layout = tile["layout"]
        pointer = self._pointer(self.store_base, iv, tile)
        stored = w.convert(value, layout, 2, indent=6)
        mask = f", {tile['mask']}" if tile["mask"] is not None else ""
        w.emit(f"tt.store {pointer}, {stored[0]}{mask} : {_t2(layout, '!tt.ptr<i32>')}", 6)


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
