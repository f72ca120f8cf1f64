"""tools/fuzz/random_programs.py's ``loop_loads`` option and its value bounds: every scf.for body
loads tile ``iv`` of L (and stores to its own part of S) in a layout other than its
accumulator's, every access stays inside the buffers the harness allocates, and the bound on
the program's values (``Magnitude``, ``input_bound``) is what the ops compute."""

from __future__ import annotations

import functools
import random
import re

import pytest

from linear_layouts.passes.assign.layout_rules import encoding_of
from linear_layouts.passes.ir.snapshot import in_loop, parse_module
from linear_layouts.tools.fuzz.random_programs import (INT32_MAX, LOADED, MAX_TRIPS, M, N, Magnitude, RandomKernel,
                                     random_kernel, random_program)

SEEDS = range(8)


@functools.lru_cache(maxsize=None)
def loop_kernel(seed: int) -> RandomKernel:
    return random_kernel(random.Random(seed), steps=8, kernel=True, loop_loads=True)


@functools.lru_cache(maxsize=None)
def parsed(seed: int):
    return parse_module(loop_kernel(seed).text)


def for_loops(module) -> list:
    return [op for op in module.walk() if op.name == "scf.for"]


def body_ops(loop) -> list:
    return loop.regions[0].blocks[0].operations


def users(loop, value) -> list:
    return [op for op in body_ops(loop) if any(operand is value for operand in op.operands)]


def reaches(value, target, seen=None) -> bool:
    """Whether ``value`` is computed from ``target`` (through the ops that define it)."""
    if value is target:
        return True
    op = value.defining_op
    if op is None:
        return False
    return any(reaches(operand, target) for operand in op.operands)


def test_without_the_option_loops_neither_load_nor_store():
    for seed in SEEDS:
        module = parse_module(random_program(random.Random(seed), kernel=True))
        assert not [op for op in module.walk() if op.name in ("tt.load", "tt.store") and in_loop(op)]
        assert "%L" not in module.print() and "%S" not in module.print()


@pytest.mark.parametrize("seed", SEEDS)
def test_every_for_body_loads_tile_iv_of_L(seed):
    """Exactly one tt.load per scf.for body, its pointers computed from the induction variable
    and the argument %L (not X), and what it loads added into the accumulator's new value,
    through one conversion where the layouts differ."""
    kernel = loop_kernel(seed)
    module = parsed(seed)
    arguments = module.ops_named("tt.func")[0].regions[0].blocks[0].arguments
    assert [a.type for a in arguments] == ["!tt.ptr<i32>"] * 6 + ["i32"]      # X V OUT OUT1 L S n
    x_pointer, l_pointer = arguments[0], arguments[4]
    loops = for_loops(module)
    assert loops
    for loop in loops:
        iv = loop.regions[0].blocks[0].arguments[0]
        loads = [op for op in body_ops(loop) if op.name == "tt.load"]
        assert len(loads) == 1
        pointer = loads[0].operands[0]
        assert reaches(pointer, iv) and reaches(pointer, l_pointer) and not reaches(pointer, x_pointer)
        loaded = loads[0].results[0]
        (user,) = users(loop, loaded)
        if user.name == "ttg.convert_layout":
            (user,) = users(loop, user.results[0])
        assert user.name == "arith.addi"
    # the induction variable moves the pointers by whole tiles: iv * M*N
    constants = dict(re.findall(r"(%v\d+) = arith\.constant (-?\d+) : i32", kernel.text))
    strides = re.findall(r"= arith\.muli %i\d+, (%v\d+) : i32", kernel.text)
    assert strides and {int(constants[c]) for c in strides} == {M * N}


def test_loads_mostly_differ_from_the_accumulator_and_every_loop_stores():
    loads = stores = differ = 0
    for seed in SEEDS:
        for loop in for_loops(parsed(seed)):
            load = next(op for op in body_ops(loop) if op.name == "tt.load")
            loads += 1
            differ += users(loop, load.results[0])[0].name == "ttg.convert_layout"
            stores += any(op.name == "tt.store" for op in body_ops(loop))
    assert loads >= 2 * len(SEEDS)            # loops are drawn more often with the option
    assert differ >= 0.8 * loads and stores == loads          # every loop stores: none is dead


def store_parts(text: str) -> list[int]:
    """The element offsets of S at which each storing loop's part starts."""
    constants = dict(re.findall(r"(%v\d+) = arith\.constant (\d+) : i32", text))
    # before the loops (4 spaces in): in a body the induction variable's step is added to it
    return [int(constants[c]) for c in re.findall(r"^    %v\d+ = tt\.addptr %S, (%v\d+) : !tt\.ptr<i32>, i32", text, re.M)]


@pytest.mark.parametrize("seed", SEEDS)
def test_every_access_is_inside_the_buffers(seed):
    """Loops run at most MAX_TRIPS times (bound %c4 or %n <= MAX_TRIPS), tile iv starts at
    iv*M*N, so L needs MAX_TRIPS tiles; each storing loop has its own MAX_TRIPS tiles of S (no
    two loops write one element, whatever the threads' order)."""
    kernel = loop_kernel(seed)
    assert MAX_TRIPS == 4
    assert all(bound in ("%n", "%c4") for bound in re.findall(r"scf\.for %i\d+ = %c0 to (%\w+) step %c1", kernel.text))
    parts = store_parts(kernel.text)     # the first loop stores from S itself
    assert [0] + parts == [k * MAX_TRIPS * M * N for k in range(kernel.loop_store_tiles)]
    assert kernel.text.count("tt.store") == kernel.loop_store_tiles + 2


def test_magnitude_arithmetic_and_the_input_bound():
    a, b = Magnitude(2, 3), Magnitude(5, 1)
    assert a + b == Magnitude(7, 4) and a.times(4) == Magnitude(8, 12) and a.max(b) == Magnitude(5, 3)
    assert RandomKernel("", Magnitude(8, 31), 0).input_bound == (INT32_MAX - 31) // 8
    assert RandomKernel("", LOADED, 0).input_bound == INT32_MAX
    assert RandomKernel("", Magnitude(2**32, 0), 0).input_bound == 0


def test_the_bound_follows_the_ops():
    """A loop adds its addend and its loaded tile MAX_TRIPS times; a while doubles: the bounds
    of programs with them exceed those of straight-line ones, and a bigger program never has a
    smaller bound than its own first values (X and V)."""
    plain = [random_kernel(random.Random(s), steps=0, kernel=True).magnitude for s in SEEDS]
    assert set(plain) == {LOADED}              # nothing but X and V, stored as they are
    for seed in SEEDS:
        kernel = loop_kernel(seed)
        if "scf.for" in kernel.text:
            # init + MAX_TRIPS * (addend + loaded tile): at least MAX_TRIPS input bounds
            assert kernel.magnitude.scale >= MAX_TRIPS
    whiles = [random_kernel(random.Random(s), steps=8, kernel=True, whiles=True) for s in SEEDS]
    assert max(k.magnitude.scale for k in whiles if "scf.while" in k.text) >= 2 ** (MAX_TRIPS + 1)
