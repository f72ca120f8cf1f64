"""Expected values of Triton's LinearLayoutConversionsTest (triton.md §2) and linear_attribute."""

import pytest

from linear_layouts.dialect import LayoutError, linear_attribute, parse_attribute, to_linear_layout


def bases(text, shape):
    return {k: [list(b) for b in v] for k, v in to_linear_layout(text, shape).bases.items()}


def test_blocked_worked_example():
    b = bases("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
              [32, 32])
    assert b == {"register": [[0, 1], [0, 2], [0, 16]], "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
                 "warp": [[8, 0], [16, 0]], "block": []}


def test_simple_blocked():
    b = bases("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [4], order = [0]}>", [16])
    assert b["lane"] == [[1], [2]] and b["warp"] == [[4], [8]]


def test_cta_duplication():
    b = bases("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [4], order = [0], "
              "CTAsPerCGA = [4], CTASplitNum = [2], CTAOrder = [0]}>", [32])
    assert b["block"] == [[16], [0]]


def test_slice_of_mma_v2():
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
    b = bases(f"#ttg.slice<{{dim = 0, parent = {mma}}}>", [128])
    assert b["register"] == [[1], [16], [32], [64]] and b["lane"] == [[2], [4], [0], [0], [0]]
    assert b["warp"] == [[8], [0]]


def test_mma_v2_16x16():
    b = bases("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
              [16, 16])
    assert b["register"] == [[0, 1], [8, 0], [0, 8]] and b["lane"] == [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]


@pytest.mark.parametrize("instr", ["[16, 16, 8]", "[16, 8, 8]"])
def test_mma_v3_64x16(instr):
    b = bases(f"#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = {instr}}}>",
              [64, 16])
    assert b["register"] == [[0, 1], [8, 0], [0, 8]] and b["warp"] == [[16, 0], [32, 0]]


def test_dot_mma_v2_kwidth8():
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>"
    a = bases(f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 8}}>", [16, 64])
    assert a["register"] == [[0, 1], [0, 2], [0, 4], [8, 0], [0, 32]]
    assert a["lane"] == [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]]
    b = bases(f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = 8}}>", [64, 8])
    assert b["register"] == [[1, 0], [2, 0], [4, 0], [32, 0]]
    assert b["lane"] == [[8, 0], [16, 0], [0, 1], [0, 2], [0, 4]]


def test_dot_mma_v3_warp4_kwidth2():
    mma = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16, 8]}>"
    a = bases(f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 2}}>", [64, 16])
    assert a["register"] == [[0, 1], [8, 0], [0, 8]] and a["warp"] == [[16, 0], [32, 0]]
    assert bases(f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 2}}>", [128, 16])["register"][-1] == [64, 0]


def test_mfma32_2x4_warps():
    m = "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], isTransposed = false}>"
    b = bases(m, [32, 32])
    assert b["register"] == [[1, 0], [2, 0], [8, 0], [16, 0]]
    assert b["lane"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]]
    assert b["warp"] == [[0, 0], [0, 0], [0, 0]]
    assert bases(m, [64, 32])["warp"] == [[0, 0], [0, 0], [32, 0]]
    assert bases(m, [64, 128])["warp"] == [[0, 32], [0, 64], [32, 0]]


def test_wmma_v1_2x4_warps():
    w = "#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [2, 4]}>"
    b = bases(w, [16, 16])
    assert b["register"] == [[2, 0], [4, 0], [8, 0]] and b["lane"] == [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]
    assert b["warp"] == [[0, 0], [0, 0], [0, 0]]
    assert bases(w, [32, 16])["warp"] == [[0, 0], [0, 0], [16, 0]]


def test_shared_swizzled_2d():
    b = bases("#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 4, order = [1, 0]}>", [32, 32])
    assert b["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 2], [4, 4], [8, 0], [16, 0]]


def test_nvmma_leading_offset_8x16():
    b = bases("#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 16}>", [8, 16])
    assert b["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 8]]


def test_nvmma_128b_64x64():
    b = bases("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>", [64, 64])
    assert b["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32],
                           [8, 0], [16, 0], [32, 0]]


def test_linear_attribute_round_trip():
    text = ("#ttg.linear<{register = [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], "
            "[8, 0], [16, 0]], warp = [[0, 0], [0, 0]], block = []}>")
    assert linear_attribute(to_linear_layout(text, [128, 8])) == text
    shared = "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]], block = [[2, 0]]}, alignment = 16>"
    assert linear_attribute(to_linear_layout(shared, [4, 4])) == shared
    generic = ("#ttg.generic_linear<{register = [[1, 0], [0, 1]], lane = [[2, 0], [4, 0], [8, 0], [0, 2], [0, 4]], "
               "warp = [[16, 8], [0, 8]], block = []}>")
    assert linear_attribute(to_linear_layout(generic, [32, 16])) == generic


@pytest.mark.parametrize("text, shape, message", [
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", [3], "power of two"),
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", [4, 4], "rank"),
    ("#ttg.shared_linear<{offset = [[1], [2]]}, alignment = 16>", [8], "covers exactly"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>", [64, 8], "swizzle"),
])
def test_bad_shapes(text, shape, message):
    with pytest.raises(LayoutError, match=message):
        to_linear_layout(parse_attribute(text), shape)


def test_amd_rotating_shared_follows_its_rule():
    # Not checkable against Gluon (no constructor): row r is XORed by vec * (phase ^ block),
    # phase = (r / perPhase) % maxPhase, block = (r / maxPhase / perPhase) % maxPhase.
    b = bases("#ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>", [16, 16])
    assert b["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [1, 4], [2, 8], [4, 4], [8, 8]]
    plain = bases("#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>", [16, 16])
    assert plain["offset"][4:] == [[1, 4], [2, 8], [4, 0], [8, 0]]


def test_linear_layout_reused_for_other_shapes():
    text = "#ttg.linear<{register = [[0, 1], [4, 0]], lane = [[0, 2], [1, 0], [2, 0]], warp = [], block = []}>"
    # Larger: registers repeat along dim1 first (the order the registers already walk).
    assert bases(text, [8, 8])["register"] == [[0, 1], [4, 0], [0, 4]]
    # Smaller: registers that would only hold copies are dropped, lanes keep zero bases.
    small = bases(text, [2, 2])
    assert small["register"] == [[0, 1]] and small["lane"] == [[0, 0], [1, 0], [0, 0]]


def test_padded_shared_linear_component():
    b = bases("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [4, 8]}>", [4, 8])
    assert b == {"offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]], "block": []}
