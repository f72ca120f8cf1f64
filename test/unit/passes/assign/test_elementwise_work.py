"""Elementwise work in the cost model of ``ll-assign-layouts`` (``passes/assign/layout_costs.py``):
one ALU op per *distinct* register a thread holds.

A layout whose tile is larger than the tensor repeats elements in a thread's registers: a column
of 32 row offsets (``32x1``) in ``blocked<{sizePerThread = [1, 4], ...}>`` gives each thread its
8 rows 4 times over.  Triton 3.6's linear layout keeps the copies (zero register bases: 32
registers), later releases drop them (8); a thread computes each distinct element once either
way.  Counting the copies priced the index arithmetic of every coalesced 2-D access 4 times over
under 3.6 only, and the advice's whole-kernel price for a newcomer's column sum then said its
16-byte loads made the kernel costlier under 3.6 and cheaper under 3.9."""

import pytest

from linear_layouts.lowering.cost_weights import weights_for
from linear_layouts.lowering.target import target_named
from linear_layouts.passes.assign.layout_costs import elementwise_work, memory_work, registers
from linear_layouts.passes.assign.pipe_time import Work

SM90 = target_named("sm_90")
COALESCED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"
ONE_PER_THREAD = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"


def test_copies_in_a_threads_registers_are_not_counted():
    # 32 rows over 4 warps: 8 rows per thread, in both layouts; the 4 columns per thread of
    # COALESCED fall on a dim of 1 (copies)
    assert registers(COALESCED, (32, 1)) == 8
    assert registers(ONE_PER_THREAD, (32, 1)) == 8
    # the tile itself: 32 rows x 128 columns over 128 threads, 32 each, no copies
    assert registers(COALESCED, (32, 128)) == 32
    assert registers(ONE_PER_THREAD, (32, 128)) == 32
    # a row of 128 columns sliced from the tile: every warp holds it (replicated across warps,
    # which is work in every warp), 4 per thread in COALESCED, 4 in ONE_PER_THREAD (one per lane
    # and 4 lane rounds)
    assert registers(COALESCED, (1, 128)) == 4
    assert registers(ONE_PER_THREAD, (1, 128)) == 4


def test_the_row_offsets_of_a_coalesced_access_cost_what_the_newcomers_do():
    alu = weights_for(SM90.name).alu_op
    work = elementwise_work(COALESCED, (32, 1), SM90)
    assert work == Work(alu=8 * alu, total=8 * alu)
    assert work == elementwise_work(ONE_PER_THREAD, (32, 1), SM90)
    assert elementwise_work(COALESCED, (32, 128), SM90).alu == pytest.approx(32 * alu)


def test_the_loads_price_copies_the_same_way():
    # memory_work already left copies out: the loads of the 32x128 tile differ only in their
    # instructions (32 of 4 bytes against 8 of 16 bytes per thread), the sectors are the same
    # (each warp reads 128 contiguous bytes per row in both)
    w = weights_for(SM90.name)
    narrow = memory_work(ONE_PER_THREAD, (32, 128), 32, 1, 4, SM90)
    wide = memory_work(COALESCED, (32, 128), 32, 1, 4, SM90)
    assert narrow.total - wide.total == pytest.approx((32 - 8) * w.shared_access)
