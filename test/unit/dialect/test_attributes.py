"""Round trips of the attribute syntax (Triton 3.6 and 3.9 spellings), aliases, and errors."""

import glob
import os
import re

import pytest

from linear_layouts.dialect import AttributeSyntaxError, LayoutError, parse_aliases, parse_attribute
from support import REPO  # noqa: E402

TEXTS = [
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[0, 1], [1, 0]]}>",
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 2], order = [1, 0], CTAsPerCGA = [2, 2], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>",
    "#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[0, 1], [1, 0]]}>}>",
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], CGALayout = [[1, 0]], instrShape = [16, 64, 16]}>",
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>",
    "#ttg.dot_op<{opIdx = 1, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>}>",
    "#ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 4], instrShape = [16, 16, 16], isTransposed = false, CGALayout = [[1, 0]], tilesPerWarp = [2, 2], elementBitWidth = 64}>",
    "#ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}, instrShape = [16, 16, 128]}>",
    "#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {register = [[1, 0]], warp = [[0, 1], [1, 0]]}, CGALayout = [[0, 1]]}>",
    "#ttg.amd_wmma<{version = 3, isTranspose = true, warpsPerCTA = [2, 2], CGALayout = [[0, 1]], tilesPerWarp = [2, 2], instrShape = [16, 16, 32]}>",
    "#ttg.linear<{register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[0, 4], [0, 0]], block = []}>",
    "#ttg.generic_linear<{register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[0, 4], [1, 4]], block = []}>",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0], CGALayout = [[0]]}>",
    "#ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 16, order = [0, 1]}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 8, fp4Padded = true, rank = 3}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = true, elementBitWidth = 32, CGALayout = [[1, 0]]}>",
    "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>",
    "#ttg.padded_shared<[32:+4, 64:+8] {offset = [[0, 1], [0, 2], [1, 0], [2, 0]], block = [[0, 0]]}>",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]], block = [[2, 0]]}, alignment = 16>",
]


@pytest.mark.parametrize("text", TEXTS)
def test_round_trip(text):
    attr = parse_attribute(text)
    assert str(attr) == text
    assert parse_attribute(str(attr)) == attr


def test_aliases_and_nested_parents():
    module = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {}
"""
    aliases = parse_aliases(module)
    assert list(aliases) == ["blocked", "mma", "dot"]
    assert str(aliases["dot"]) == "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>"
    assert aliases["dot"].parent == aliases["mma"]
    text = "#ttg.slice<{dim = 1, parent = #blocked}>"
    attr = parse_attribute(text, aliases)
    assert str(attr) == text and attr.parent == aliases["blocked"]
    assert parse_attribute("#blocked", aliases) == aliases["blocked"]


def test_padding_rule():
    attr = parse_attribute("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>")
    assert attr.padded_offset(70) == 78


@pytest.mark.parametrize("text, message", [
    ("#ttg.foo<{a = 1}>", "unknown layout attribute kind #ttg.foo"),
    ("#ttg.blocked<{sizePerThread = [1, 4]}>", "missing parameters threadsPerWarp, warpsPerCTA, order"),
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], x = 1}>", "unknown parameter x"),
    ("#ttg.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", "not a power of two"),
    ("#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>}>", "rank-1 parent"),
    ("#ttg.slice<{dim = 0, parent = #nope}>", "unknown alias #nope"),
    ("#ttg.blocked<{sizePerThread = [1, 4]", "expected '}'"),
    ("#ttg.blocked<{order = [0, 0], sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1]}>", "not a permutation"),
    ("#ttg.linear<{register = [[1, 1]], lane = [], warp = [], block = []}>", "more than one dim"),
    ("", "empty"),
])
def test_errors(text, message):
    with pytest.raises(AttributeSyntaxError, match=message) as info:
        parse_attribute(text)
    assert isinstance(info.value, LayoutError)
    if text:
        assert repr(text)[:30] in str(info.value) or text[:20] in str(info.value)


# Every layout alias of the TTGIR corpus (real kernels compiled by Triton 3.9) prints back exactly,
# and every tensor / shared-memory type in it converts to a linear layout.
CORPUS = sorted(glob.glob(os.path.join(str(REPO), "test", "lit", "corpus", "*", "*.ttgir")))
ALIAS_LINE = re.compile(r"^#(\w+) = (#ttg\.\w+<.*>)$")
TYPE = re.compile(r"(?:tensor|!ttg\.memdesc)<((?:\d+x)+)\w+, (#\w+)")


@pytest.mark.skipif(not CORPUS, reason="no TTGIR corpus under test/lit/corpus")
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: "/".join(p.split(os.sep)[-2:]))
def test_corpus_aliases_round_trip(path):
    from linear_layouts.dialect import to_linear_layout

    text = open(path).read()
    aliases = parse_aliases(text)
    for line in text.splitlines():
        m = ALIAS_LINE.match(line)
        if m and m.group(1) in aliases:
            assert str(aliases[m.group(1)]) == m.group(2)
    for dims, alias in set(TYPE.findall(text)):
        if alias[1:] in aliases:
            shape = [int(d) for d in dims.rstrip("x").split("x")]
            to_linear_layout(aliases[alias[1:]], shape[-aliases[alias[1:]].rank:])


def test_non_surjective_bases_are_rejected():
    with pytest.raises(AttributeSyntaxError, match="surjective"):
        parse_attribute("#ttg.shared_linear<{offset = [[2], [2]]}, alignment = 16>")
    with pytest.raises(AttributeSyntaxError, match="surjective"):
        parse_attribute("#ttg.linear<{register = [[2]], lane = [], warp = [], block = []}>")


@pytest.mark.parametrize("text, aliases", [
    ("#a", {"a": "#a"}),
    ("#a", {"a": "#b", "b": "#a"}),
    ("#ttg.slice<{dim = 0, parent = " * 400
     + "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>" + "}>" * 400, None),
])
def test_alias_cycles_and_deep_nesting_are_syntax_errors_not_recursion(text, aliases):
    with pytest.raises(AttributeSyntaxError, match="refers to itself|nested too deeply"):
        parse_attribute(text, aliases)
