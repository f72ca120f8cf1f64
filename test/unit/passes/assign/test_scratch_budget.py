"""Shared memory as a hard limit of ll-assign-layouts (passes/assign/scratch_budget.py): a conversion the
assignment adds must fit beside the kernel's own buffers, or Triton's layouts stay."""

from __future__ import annotations

import pytest

from linear_layouts.lowering.target import target_named
from linear_layouts.passes.assign.assign_layouts import assign_module
from linear_layouts.passes.assign.scratch_budget import buffer_bytes, conversion_scratch
from linear_layouts.passes.ir.snapshot import parse_module

A = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>"
B = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
S = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')


def kernel(buffer_rows: tuple[int, ...]) -> str:
    """dram-floor.mlir's @compute_bound (the assignment converts the 128x1 row before the
    broadcast, out of the loop: a new conversion across warps, 512 bytes) beside shared buffers
    of ``rows`` x 256 f16 each."""
    alloc = "".join(f"    %buf{i} = ttg.local_alloc : () -> !ttg.memdesc<{rows}x256xf16, #S, #smem, mutable>\n"
                    for i, rows in enumerate(buffer_rows))
    return f"""
#A = {A}
#B = {B}
#S = {S}
#smem = #ttg.shared_memory
{HEADER}
  tt.func public @k(%x: tensor<128x1xf32, #A>, %out: tensor<128x64x!tt.ptr<f32>, #B>) {{
{alloc}    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #B>
    %acc = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (tensor<128x64xf32, #B>) : i32 {{
      %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
      %e = math.exp %b : tensor<128x64xf32, #A>
      %c = ttg.convert_layout %e : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
      %s = arith.addf %a, %c : tensor<128x64xf32, #B>
      scf.yield %s : tensor<128x64xf32, #B>
    }}
    tt.store %out, %acc : tensor<128x64x!tt.ptr<f32>, #B>
    tt.return
  }}
}}
"""


def test_scratch_of_a_conversion():
    assert conversion_scratch(A, B, (128, 1), 32) == 512          # across warps: the whole tensor
    assert conversion_scratch(A, A, (128, 1), 32) == 0
    one_warp = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
    two_per = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
    assert conversion_scratch(one_warp, two_per, (64,), 32) == 0  # within a warp: shuffles


def test_buffer_bytes_counts_local_allocs():
    module = parse_module(kernel((64, 2)))
    assert buffer_bytes(list(module.walk())) == 66 * 256 * 2


@pytest.mark.parametrize("rows, accepted", [((), True), ((256, 128, 64), True), ((256, 128, 64, 4, 2), False)])
def test_a_conversion_that_does_not_fit_keeps_tritons_layouts(rows, accepted):
    """sm_90 gives a block 227 KiB (232448 bytes): buffers of 224 KiB leave room for the
    512-byte conversion, 227 KiB do not."""
    result = assign_module(parse_module(kernel(rows)), "sm_90").functions[0]
    assert result.accepted is accepted
    if not accepted:
        assert result.reason == ("shared memory: a conversion it adds (128x1, across warps) needs 512 bytes of "
                                 "scratch beside the kernel's 232448 bytes of shared buffers, over sm_90's 232448")
        assert "shared memory:" in result.remark()
    assert target_named("sm_90").shared_memory_bytes == 232448
