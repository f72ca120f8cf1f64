"""``IslandWriter.xor_of_bits``: an F2-linear map of a thread id, printed as one shift and one mask
per distance that bits move (the form that keeps LLVM's SLP vectorizer from trying XOR
reductions of per-bit terms).  The printed ops are read back by a small interpreter here and
compared with the XOR of the images for every id."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from linear_layouts.lowering.emit.island_writer import EmitError, IslandWriter

MASK32 = 0xFFFFFFFF


def _run(lines: list[str], ids: np.ndarray) -> dict[str, np.ndarray]:
    """Executes the ops ``xor_of_bits`` prints (i32 constants, shl, lshr, and, xor) on every id
    of ``ids`` at once; ``%ids`` is the input.  Any other op fails."""
    values = {"%ids": ids.astype(np.uint64) & MASK32}
    for line in lines:
        m = re.fullmatch(r"\s*(%\w+) = llvm\.mlir\.constant\((-?\d+) : i32\) : i32", line)
        if m:
            assert -(1 << 31) <= int(m.group(2)) < (1 << 31), line   # printed as a signed i32
            values[m.group(1)] = np.full_like(ids, int(m.group(2)) & MASK32, dtype=np.uint64)
            continue
        m = re.fullmatch(r"\s*(%\w+) = llvm\.(shl|lshr|and|xor) (%\w+), (%\w+) : i32", line)
        assert m, f"unexpected op: {line}"
        a, b = values[m.group(3)], values[m.group(4)]
        op = m.group(2)
        if op in ("shl", "lshr"):
            assert (b < 32).all(), line
        values[m.group(1)] = {"shl": lambda: (a << b) & MASK32, "lshr": lambda: a >> b,
                              "and": lambda: a & b, "xor": lambda: a ^ b}[op]()
    return values


def _expected(images, ids: np.ndarray, const: int) -> np.ndarray:
    out = np.full(ids.shape, const, dtype=np.uint64)
    for i, image in enumerate(images):
        out ^= np.where((ids >> i) & 1 == 1, np.uint64(image), np.uint64(0))
    return out


def _printed(images, const: int = 0) -> tuple[str, list[str]]:
    w = IslandWriter("t", indent="")
    result = w.xor_of_bits(tuple(images), "%ids", const)
    return result, w.lines


def test_the_docstring_example_is_two_shifts_two_masks_one_xor():
    """Images (2, 4, 8, 32, 64) of lane bits 0..4: bits 0-2 move up by 1 (mask 14), bits 3-4 by
    2 (mask 96): ``((l << 1) & 14) ^ ((l << 2) & 96)``."""
    result, lines = _printed((2, 4, 8, 32, 64))
    assert lines == [
        "%t_1 = llvm.mlir.constant(1 : i32) : i32",
        "%t_2 = llvm.shl %ids, %t_1 : i32",
        "%t_3 = llvm.mlir.constant(14 : i32) : i32",
        "%t_4 = llvm.and %t_2, %t_3 : i32",
        "%t_5 = llvm.mlir.constant(2 : i32) : i32",
        "%t_6 = llvm.shl %ids, %t_5 : i32",
        "%t_7 = llvm.mlir.constant(96 : i32) : i32",
        "%t_8 = llvm.and %t_6, %t_7 : i32",
        "%t_9 = llvm.xor %t_4, %t_8 : i32",
    ]
    assert result == "%t_9"


def test_down_moves_in_place_and_constant():
    """Bit 2 -> 1 (lshr 1), bits 0-1 in place (no shift), then the constant XORed last."""
    result, lines = _printed((1, 2, 2), const=0x100)
    assert lines == [
        "%t_1 = llvm.mlir.constant(1 : i32) : i32",
        "%t_2 = llvm.lshr %ids, %t_1 : i32",
        "%t_3 = llvm.mlir.constant(2 : i32) : i32",
        "%t_4 = llvm.and %t_2, %t_3 : i32",
        "%t_5 = llvm.mlir.constant(3 : i32) : i32",
        "%t_6 = llvm.and %ids, %t_5 : i32",
        "%t_7 = llvm.xor %t_4, %t_6 : i32",
        "%t_8 = llvm.mlir.constant(256 : i32) : i32",
        "%t_9 = llvm.xor %t_7, %t_8 : i32",
    ]
    assert result == "%t_9"


def test_no_images_is_the_constant():
    assert _printed((), const=5) == ("%t_1", ["%t_1 = llvm.mlir.constant(5 : i32) : i32"])
    assert _printed((0, 0)) == ("%t_1", ["%t_1 = llvm.mlir.constant(0 : i32) : i32"])


def test_a_mask_with_bit_31_prints_signed():
    _, lines = _printed((1 << 31,))
    assert "llvm.mlir.constant(-2147483648 : i32) : i32" in lines[-2]


def _random_images(rng: random.Random, n: int) -> tuple[int, ...]:
    kinds = [lambda: 0, lambda: 1 << rng.randrange(32), lambda: rng.getrandbits(32),
             lambda: rng.getrandbits(8) << rng.randrange(24)]
    return tuple(rng.choice(kinds)() for _ in range(n))


CASES = [((2, 4, 8, 32, 64), 0), ((1, 2, 2), 0x100), ((0x80000000, 1, 0, 0xFFFFFFFF), 0xFFFFFFFF),
         ((16, 32, 64, 128, 256, 0, 512, 1024), 0x810), ((6, 3), 0)]
CASES += [(_random_images(random.Random(seed), random.Random(seed).randrange(1, 11)), random.Random(seed).getrandbits(32))
          for seed in range(40)]


@pytest.mark.parametrize("images, const", CASES)
def test_printed_arithmetic_is_the_xor_of_images_for_every_id(images, const):
    """Every id below 2**len(images), and ids with higher bits too (those bits must not leak into
    the result: a lane id has 5 bits but a view start or a warp id may have more)."""
    result, lines = _printed(images, const)
    n = len(images)
    ids = np.arange(1 << n, dtype=np.uint64)
    high = np.array([0, 1 << n, 0xFFFFFFFF & ~((1 << n) - 1), 0x5A5A5A5A & ~((1 << n) - 1)], dtype=np.uint64)
    ids = (ids[None, :] | high[:, None]).ravel()
    got = _run(lines, ids)[result]
    assert (got == _expected(images, ids & ((1 << n) - 1), const)).all()
    # one shift (or none) and one mask per distance, one XOR between terms, one for the constant
    distances = {b - i for i, image in enumerate(images) for b in range(32) if image >> b & 1}
    ops = [line for line in lines if "llvm.mlir.constant" not in line]
    assert len([op for op in ops if " llvm.and " in op]) == len(distances)
    assert len([op for op in ops if " llvm.shl " in op or " llvm.lshr " in op]) == len(distances - {0})
    assert len([op for op in ops if " llvm.xor " in op]) == max(len(distances) - 1, 0) + (1 if const and distances else 0)


@pytest.mark.parametrize("images, const", [((1 << 32,), 0), ((1, -1), 0), ((2,), 1 << 32), ((2,), -1)])
def test_values_that_do_not_fit_i32_raise(images, const):
    with pytest.raises(EmitError, match="does not fit an i32"):
        _printed(images, const)


def test_numpy_images_are_accepted():
    _, lines = _printed((np.int64(2), np.int64(4)))
    assert "llvm.shl %ids" in lines[1]
