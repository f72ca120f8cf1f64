"""Islands grow linearly with the registers they move (issue 43, compile time that scales).

The case of issue 43: a bf16 slice of a blocked layout whose lanes all hold the same data
(``sizePerThread = [8, 8]``, ``threadsPerWarp = [1, 32]``, 8 warps, sliced along dim 1), R
registers a thread, converted to a permutation layout (``#ttg.linear``, R / 32 registers).  LLVM's
optimizer is fast on an island when its code is straight-line work per register with no
per-register address arithmetic; these tests pin that shape down by counting the island's ops
(structural, not a timing): every source register is read once, the thread's address
arithmetic does not grow with R, and the island's size per register stays bounded, so doubling
R at most doubles the island.  ``benchmarks/compile_time.py fuzz` (`benchmarks/harness/compile_time_fuzz.py`)` measures the compile times.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from linear_layouts.passes.lower_conversions import MAX_ELEMENTS_PER_THREAD, lower_text
from linear_layouts.tools.testcases import single_convert_ttgir

SOURCE = ("#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [8, 8], threadsPerWarp = [1, 32], "
          "warpsPerCTA = [8, 1], order = [1, 0]}>}>")
ADDRESS_OPS = ("llvm.and", "llvm.or", "llvm.xor", "llvm.shl", "llvm.lshr")


def _case(registers: int) -> str:
    """The kernel with ``registers`` source registers a thread (8,192 elements for 1,024)."""
    numel = registers * 8
    bits = [[1 << i] for i in range(numel.bit_length() - 1)]
    random.Random(43).shuffle(bits)
    r = len(bits) - 8
    dst = f"#ttg.linear<{{register = {bits[:r]}, lane = {bits[r:r + 5]}, warp = {bits[r + 5:]}, block = []}}>"
    return single_convert_ttgir((numel,), "bf16", SOURCE, dst, 8, "sm_90", name="k")


def _island(registers: int):
    _, outcomes = lower_text(_case(registers), filename="scaling", stock_gate=False)
    assert len(outcomes) == 1
    return outcomes[0]


def _ops(text: str) -> Counter:
    ops = Counter(m.group(1) for m in re.finditer(r"= ((?:llvm|builtin|ttg)\.[a-z_.]+)", text))
    ops.update(m.group(1) for m in re.finditer(r"^\s*((?:llvm|ttg)\.[a-z_.]+)", text, re.M))
    return ops


@pytest.fixture(scope="module")
def islands():
    out = {}
    for registers in (256, 512, 1024):
        outcome = _island(registers)
        assert outcome.lowered, outcome.reason
        assert outcome.emitted_check is None or outcome.emitted_check.ok   # the simulator accepted it
        out[registers] = outcome.island.text
    return out


def test_every_source_register_is_read_once(islands):
    for registers, text in islands.items():
        # the island's first op: the cast of the source tensor to Triton's struct of its registers
        struct_in = re.match(r"\s*(%\S+) = builtin.unrealized_conversion_cast ", text).group(1)
        reads = re.findall(rf"llvm.extractvalue {re.escape(struct_in)}\[(\d+)\]", text)
        assert len(reads) == len(set(reads)) == registers


def test_address_arithmetic_does_not_grow_with_registers(islands):
    counts = {r: sum(_ops(text)[op] for op in ADDRESS_OPS) for r, text in islands.items()}
    assert max(counts.values()) <= 40, counts
    assert counts[1024] <= counts[256] + 8, counts


def test_island_size_is_linear_in_registers(islands):
    sizes = {r: sum(_ops(text).values()) for r, text in islands.items()}
    for registers, size in sizes.items():
        assert size <= 5 * registers, sizes          # 4,567 ops for 1,024 registers today
    assert sizes[512] <= 2 * sizes[256] + 64, sizes
    assert sizes[1024] <= 2 * sizes[512] + 64, sizes


def test_more_registers_than_the_limit_are_left_to_triton():
    outcome = _island(2 * MAX_ELEMENTS_PER_THREAD)
    assert not outcome.lowered
    assert "MAX_ELEMENTS_PER_THREAD" in outcome.reason
