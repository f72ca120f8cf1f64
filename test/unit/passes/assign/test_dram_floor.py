"""The DRAM floor of ``ll-assign-layouts``: bytes per global memory op, loop weights, per-target
rates, and that the floor only ever keeps Triton's layouts (never makes the pass accept more)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from linear_layouts.lowering.target import TARGETS, target_named
from linear_layouts.passes.assign.assign_layouts import assign_module
from linear_layouts.passes.assign.dram_floor import bytes_moved, dram_byte_cost, dram_floor
from linear_layouts.passes.ir.module_lines import ModuleLines
from linear_layouts.passes.ir.snapshot import parse_module
from linear_layouts.tools.fuzz.random_programs import random_program

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
BLOCKED_1D = "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')

KERNEL = f"""
#B = {BLOCKED}
#V = {BLOCKED_1D}
#S = {SHARED}
#smem = #ttg.shared_memory
{HEADER}
  tt.func public @k(%p: tensor<64x128x!tt.ptr<f16>, #B>, %q: tensor<512x!tt.ptr<f32>, #V>, %s: !tt.ptr<f32>) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %x = tt.load %p : tensor<64x128x!tt.ptr<f16>, #B>
    %one = tt.load %s : !tt.ptr<f32>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<64x128xf16, #S, #smem, mutable>
    %t = ttg.async_copy_global_to_local %p, %buf : tensor<64x128x!tt.ptr<f16>, #B> -> <64x128xf16, #S, #smem, mutable>
    scf.for %i = %c0 to %c8 step %c1 : i32 {{
      %v = tt.load %q : tensor<512x!tt.ptr<f32>, #V>
      tt.store %q, %v : tensor<512x!tt.ptr<f32>, #V>
    }}
    %a = arith.constant dense<1.000000e+00> : tensor<512xf32, #V>
    %old = tt.atomic_rmw fadd, relaxed, gpu, %q, %a : (tensor<512x!tt.ptr<f32>, #V>, tensor<512xf32, #V>) -> tensor<512xf32, #V>
    tt.return
  }}
}}
"""


def _module_and_ops():
    module = parse_module(KERNEL)
    ops = {}
    for op in module.walk():
        ops.setdefault(op.name, []).append(op)
    return module, ops


def test_bytes_each_global_op_moves():
    _module, ops = _module_and_ops()
    tile, scalar = ops["tt.load"][0], ops["tt.load"][1]
    assert bytes_moved(tile) == 64 * 128 * 2          # 16 KiB of f16, named by the pointers
    assert bytes_moved(scalar) == 0                    # a scalar load is no tile traffic
    assert bytes_moved(ops["ttg.async_copy_global_to_local"][0]) == 64 * 128 * 2
    assert bytes_moved(ops["tt.store"][0]) == 512 * 4
    assert bytes_moved(ops["tt.atomic_rmw"][0]) == 2 * 512 * 4   # read and written


def test_the_floor_weighs_loops_and_divides_by_warps():
    module, _ops = _module_and_ops()
    out = {}

    def read(text):
        lines = ModuleLines(module, text)
        function = next(op for op in module.walk() if op.name == "tt.func")
        out["floor"] = dram_floor(list(module.walk()), lines, 4, target_named("sm_90"))
        out["floor_8_warps"] = dram_floor(list(module.walk()), lines, 8, target_named("sm_90"))
        out["gfx942"] = dram_floor(list(module.walk()), lines, 4, target_named("gfx942"))
        return text

    module.rewrite_text(read)
    # tile load + async copy: 2 x 16384; the loop's load and store, 8 trips: 8 x 2 x 2048;
    # the atomic: 4096.  69632 bytes over 4 warps, x sm_90's measured cost of a byte.  The two
    # tt.loads read through function arguments only, the same bytes in every program: on sm_90,
    # whose L2 rate was measured, they count at L2's (test_grid_shared_loads.py).
    total = 2 * 16384 + 8 * 2 * 2048 + 4096
    sm90 = target_named("sm_90")
    grid_shared = 16384 + 8 * 2048
    assert out["floor"] == pytest.approx(((total - grid_shared) * dram_byte_cost(sm90)
                                          + grid_shared * sm90.weights.l2_byte) / 4)
    assert out["floor_8_warps"] == pytest.approx(out["floor"] / 2)
    assert out["gfx942"] == pytest.approx(total / 4 * 0.5 / 8.3)   # hand-set wavefront, published rate


def test_a_byte_costs_the_measured_rate_else_the_published_one():
    sm90, sm100 = target_named("sm_90"), target_named("sm_100")
    measured = sm90.weights.dram_byte
    published = sm90.weights.shared_wavefront / 12.8
    assert dram_byte_cost(sm90) == pytest.approx(measured if measured > 0 else published)
    # sm_100 reuses sm_90's instruction constants, never its DRAM rate: a B200's own published one.
    assert sm100.weights.dram_byte == 0.0
    assert dram_byte_cost(sm100) == pytest.approx(sm90.weights.shared_wavefront / 27.0)
    assert dram_byte_cost(target_named("gfx942")) == pytest.approx(0.5 / 8.3)


def test_every_target_has_a_dram_rate():
    rates = {name: target.dram_bytes_per_cycle for name, target in TARGETS.items()}
    assert all(0.5 < rate < 64 for rate in rates.values()), rates
    assert rates["sm_90"] == 12.8 and rates["gfx942"] == 8.3


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_the_floor_only_keeps_layouts(seed):
    """With the floor, the pass accepts a subset of what it accepts without it (max(floor, t)
    moves less than t), and what it accepts is no slower, floor included, than the floor-free
    choice: the solver minimises max(floor, busiest pipe), so under the floor it may choose an
    assignment with fewer instructions instead, never one with a busier pipe above it."""
    text = random_program(random.Random(seed))
    with_floor, without = parse_module(text), parse_module(text)
    floored = assign_module(with_floor, "sm_90")
    plain = assign_module(without, "sm_90", dram_floor=False)
    for a, b in zip(floored.functions, plain.functions):
        assert not a.accepted or b.accepted
        if a.accepted:
            assert a.time_after <= max(a.dram_floor, b.time_after) * (1 + 1e-9) + 1e-9
            assert a.time_after >= a.dram_floor


def test_a_memory_bound_kernel_says_so():
    text = f"""
#A = #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}}>
#B = {BLOCKED}
{HEADER}
  tt.func public @store_only(%x: tensor<128x1xf32, #A>, %out: tensor<128x64x!tt.ptr<f32>, #B>) {{
    %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
    %c = ttg.convert_layout %b : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
    tt.store %out, %c : tensor<128x64x!tt.ptr<f32>, #B>
    tt.return
  }}
}}
"""
    kept = assign_module(parse_module(text), "sm_90").functions[0]
    changed = assign_module(parse_module(text), "sm_90", dram_floor=False).functions[0]
    assert changed.accepted and not kept.accepted
    assert kept.dram_floor == pytest.approx(128 * 64 * 4 / 4 * dram_byte_cost(target_named("sm_90")))
    assert "memory-bound" in kept.reason and f"DRAM floor {kept.dram_floor:.1f}" in kept.remark()
