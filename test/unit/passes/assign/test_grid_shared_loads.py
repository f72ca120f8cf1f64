"""The DRAM floor's L2 term (passes/assign/dram_floor.py): loads whose address no program id reaches
read data the whole grid shares, at L2's measured rate while their working set fits L2."""

from __future__ import annotations

import pytest

from linear_layouts.lowering.target import target_named
from linear_layouts.passes.assign.dram_floor import dram_byte_cost, dram_floor, grid_shared_bytes
from linear_layouts.passes.ir.module_lines import ModuleLines
from linear_layouts.passes.ir.snapshot import parse_module

V = "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')


def kernel(body: str, elements: int = 512, upper: str = "%c1024") -> str:
    """A function over a base pointer %X and a bound %n; ``body`` runs inside
    ``scf.for %i = 0 to <upper>`` with %offs (0..elements-1) and %base (splat of %X) at hand."""
    return f"""
#V = {V}
{HEADER}
  tt.func public @k(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>, %n: i32) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c1024 = arith.constant 1024 : i32
    %offs = tt.make_range {{end = {elements} : i32, start = 0 : i32}} : tensor<{elements}xi32, #V>
    %base = tt.splat %X : !tt.ptr<f32> -> tensor<{elements}x!tt.ptr<f32>, #V>
    %pid = tt.get_program_id x : i32
    %acc0 = arith.constant dense<0.000000e+00> : tensor<{elements}xf32, #V>
    %r = scf.for %i = %c0 to {upper} step %c1 iter_args(%acc = %acc0) -> (tensor<{elements}xf32, #V>) : i32 {{
{body}
    }}
    %out = tt.splat %Y : !tt.ptr<f32> -> tensor<{elements}x!tt.ptr<f32>, #V>
    %outp = tt.addptr %out, %offs : tensor<{elements}x!tt.ptr<f32>, #V>, tensor<{elements}xi32, #V>
    tt.store %outp, %r : tensor<{elements}x!tt.ptr<f32>, #V>
    tt.return
  }}
}}
"""


def _load_at(index_expr: str, elements: int = 512) -> str:
    """A loop body that loads %base + %offs + splat(<index_expr>) * elements and accumulates."""
    return f"""      %scaled = arith.muli {index_expr}, %c1024 : i32
      %s = tt.splat %scaled : i32 -> tensor<{elements}xi32, #V>
      %o = arith.addi %offs, %s : tensor<{elements}xi32, #V>
      %p = tt.addptr %base, %o : tensor<{elements}x!tt.ptr<f32>, #V>, tensor<{elements}xi32, #V>
      %x = tt.load %p : tensor<{elements}x!tt.ptr<f32>, #V>
      %a = arith.addf %acc, %x : tensor<{elements}xf32, #V>
      scf.yield %a : tensor<{elements}xf32, #V>"""


def shared_loads(text: str, target: str = "sm_90"):
    """(number of tt.loads the grid shares, number of tt.loads, floor for 4 warps)."""
    module = parse_module(text)
    out = {}

    def read(module_text):
        lines = ModuleLines(module, module_text)
        ops = [op for op in module.walk() if op.name in ("tt.load", "tt.store")]
        out["shared"] = grid_shared_bytes(ops, lines, target_named(target))
        out["loads"] = sum(op.name == "tt.load" for op in ops)
        out["floor"] = dram_floor(ops, lines, 4, target_named(target))
        return module_text

    module.rewrite_text(read)
    return len(out["shared"]), out["loads"], out["floor"]


def test_a_tile_chosen_by_the_iteration_remainder_is_shared():
    """reduce_in_loop_gpu's pattern: X + (i % 4) * 1024: at most 7 tiles (signed remainder), read
    by every program alike: L2's rate for the 1024 loads, DRAM's for the store."""
    text = kernel("      %t = arith.remsi %i, %c4 : i32\n" + _load_at("%t"))
    shared, loads, floor = shared_loads(text)
    assert (shared, loads) == (1, 1)
    sm90 = target_named("sm_90")
    expected = (1024 * 512 * 4 * sm90.weights.l2_byte + 512 * 4 * dram_byte_cost(sm90)) / 4
    assert floor == pytest.approx(expected)
    assert sm90.weights.l2_byte < dram_byte_cost(sm90)


def test_a_per_program_tile_is_dram():
    text = kernel("      %t = arith.addi %i, %pid : i32\n" + _load_at("%t"))
    assert shared_loads(text)[:2] == (0, 1)
    # the remainder bounds the tiles a program id reaches too: pid % 4 of a shared buffer
    text = kernel("      %u = arith.addi %i, %pid : i32\n      %t = arith.remui %u, %c4 : i32\n" + _load_at("%t"))
    assert shared_loads(text)[:2] == (1, 1)


def test_the_induction_variable_counts_its_iterations():
    # 1024 tiles of 2 KiB: 2 MiB, within an H100's L2
    assert shared_loads(kernel(_load_at("%i")))[:2] == (1, 1)
    # a dynamic trip count: as many tiles as the loop likes, not shared ...
    assert shared_loads(kernel(_load_at("%i"), upper="%n"))[:2] == (0, 1)
    # ... unless a remainder bounds them
    text = kernel("      %t = arith.remui %i, %c4 : i32\n" + _load_at("%t"), upper="%n")
    assert shared_loads(text)[:2] == (1, 1)


def test_a_working_set_beyond_l2_is_dram():
    # 1024 iterations x 65536 f32 (256 KiB each): 256 MiB of distinct tiles, beyond 50 MB
    assert shared_loads(kernel(_load_at("%i", 65536), elements=65536))[:2] == (0, 1)


def test_an_iteration_argument_is_not_followed():
    body = """      %pa = tt.splat %X : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #V>
      %x = tt.load %pa : tensor<512x!tt.ptr<f32>, #V>
      %a = arith.addf %acc, %x : tensor<512xf32, #V>
      %pb = tt.addptr %pa, %offs : tensor<512x!tt.ptr<f32>, #V>, tensor<512xi32, #V>
      %y = tt.load %pb : tensor<512x!tt.ptr<f32>, #V>
      %acc2 = arith.addf %a, %y : tensor<512xf32, #V>
      %z = tt.bitcast %acc2 : tensor<512xf32, #V> -> tensor<512xi32, #V>
      %pc = tt.addptr %pa, %z : tensor<512x!tt.ptr<f32>, #V>, tensor<512xi32, #V>
      %w = tt.load %pc : tensor<512x!tt.ptr<f32>, #V>
      %acc3 = arith.addf %acc2, %w : tensor<512xf32, #V>
      scf.yield %acc3 : tensor<512xf32, #V>"""
    # %pa and %pb: only %X and constants (shared); %pc: through the accumulator, an iteration
    # argument: not followed, DRAM.
    assert shared_loads(kernel(body))[:2] == (2, 3)


def test_targets_without_a_measured_l2_rate_count_dram():
    text = kernel("      %t = arith.remsi %i, %c4 : i32\n" + _load_at("%t"))
    shared, _loads, floor = shared_loads(text, "sm_100")
    assert shared == 0
    assert floor == pytest.approx((1024 + 1) * 512 * 4 * dram_byte_cost(target_named("sm_100")) / 4)
