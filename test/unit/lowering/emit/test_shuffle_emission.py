"""How shuffle islands spell their selects and packing, so that LLVM can fold them with the code
Triton emits around the island (``benchmarks/studies/sass_twins.py`` measures the effect in SASS).

The conversions are shuffle twins of stock Triton's lowering from the choice model's training runs:
``fresh404/69`` (i32, selects on lane bit 0), ``fresh303/2`` (i64), ``fresh404/133`` (i16
pairs), ``fresh303/143`` (i8)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.emit import thread_conditions
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_island
from linear_layouts.lowering.emit.thread_conditions import _bit_test_form
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.lowering.emit.island_writer import IslandState, IslandWriter
from linear_layouts.lowering.emit.emit_nvidia import NvidiaInstructions
from linear_layouts.lowering.planner import plan_candidates
from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.verify import verify_plan
from linear_layouts.lowering.cost import plan_cost


def _blocked(spt, tpw, wpc, order):
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")


TWINS = {
    # name: (src, dst, shape, bits, element, twin candidate)
    "fresh404/69": (_blocked([8, 1], [4, 8], [1, 2], [0, 1]), _blocked([4, 1], [4, 8], [1, 2], [0, 1]),
                    [64, 8], 32, "i32", 0),
    "fresh303/2": (_blocked([2, 1], [8, 4], [1, 1], [0, 1]), _blocked([1, 1], [8, 4], [1, 1], [0, 1]),
                   [16, 64], 64, "i64", 1),
    "fresh404/133": (_blocked([4, 8], [4, 8], [1, 4], [1, 0]), _blocked([8, 4], [4, 8], [2, 2], [1, 0]),
                     [16, 16], 16, "i16", 1),
    "fresh303/143": (_blocked([1, 2], [4, 8], [2, 1], [1, 0]), _blocked([1, 4], [4, 8], [2, 1], [1, 0]),
                     [64, 16], 8, "i8", 2),
}


def twin_island(name):
    src, dst, shape, bits, element, twin = TWINS[name]
    plans, _ = plan_candidates(to_linear_layout(src, shape), to_linear_layout(dst, shape), bits, "sm_90")
    plan = [p for p in plans if verify_plan(p).ok][twin]
    assert plan.method == "shuffle"
    site = IslandSite(result="%out", source="%in", src_type="tensor<T1>", dst_type="tensor<T2>",
                       element_type=element, guard_before=False, guard_after=False)
    island = emit_island(plan, site)
    assert check_emitted(island.text, plan, site)   # the simulator runs every island it is given
    return plan, island


# ------------------------------------------------------------------------ lane conditions

@pytest.mark.parametrize("members, form", [
    ([l % 2 == 1 for l in range(32)], (1, 1)),                   # odd lanes: bit 0 set
    ([(l & 4) == 0 for l in range(16)], (4, 0)),                 # lanes 0-3, 8-11: bit 2 clear
    ([(l & 6) == 2 for l in range(32)], (6, 2)),                 # two bits fixed
    ([l in (1, 2) for l in range(32)], None),                    # not a set of fixed bits
    ([l % 2 == (l >> 1) % 2 for l in range(32)], None),          # a parity: lanes 0, 3, 4, 7, ...
    ([True] * 32, (0, 0)),
    ([False] * 32, None),
])
def test_bit_test_form(members, form):
    assert _bit_test_form(np.array(members)) == form


def _condition_text(lanes):
    w = IslandWriter("t")
    vendor = NvidiaInstructions(target_named("sm_90"), IslandState(in_loop=True))
    thread_conditions.lane_mask_condition(w, vendor, np.array(lanes))
    return "\n".join(w.lines)


def test_a_lane_bit_is_tested_as_triton_tests_it():
    """Odd lanes: ``(lane & 1) != 0``; even lanes ``(lane & 1) == 0``: no constant lane mask
    shifted by the lane id, which LLVM did not see as the same bit as Triton's ``tid & 1``."""
    odd = _condition_text([l % 2 == 1 for l in range(32)])
    even = _condition_text([l % 2 == 0 for l in range(32)])
    for text, predicate in ((odd, "ne"), (even, "eq")):
        assert "llvm.lshr" not in text
        assert re.search(r"llvm\.and %t_\d+, %t_\d+ : i32", text)
        assert f'llvm.icmp "{predicate}"' in text
        assert "llvm.mlir.constant(1 : i32)" in text and "llvm.mlir.constant(0 : i32)" in text


def test_other_lane_sets_keep_the_mask_lookup():
    text = _condition_text([l in (1, 2) for l in range(32)])
    assert "llvm.mlir.constant(6 : i32)" in text and "llvm.lshr" in text


def _definitions(text):
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s*(%\w+) = (.*)$", text, re.M)}


def test_island_selects_on_lane_bit_tests():
    """fresh404/69: 32 selects, every one a test of one lane bit (``(lane & 1) != 0`` for the
    16 sent words, ``(lane & 2) != 0`` for the 16 received); no lane-mask lookup."""
    _, island = twin_island("fresh404/69")
    defs = _definitions(island.text)
    selects = [m.group(1) for m in re.finditer(r"llvm\.select (%\w+),", island.text)]
    assert len(selects) == island.counts["select"] == 32
    bits = []
    for condition in selects:
        m = re.fullmatch(r'llvm\.icmp "ne" (%\w+), (%\w+) : i32', defs[condition])
        assert m and defs[m.group(2)] == "llvm.mlir.constant(0 : i32) : i32"
        tested = re.fullmatch(r"llvm\.and (%\w+), (%\w+) : i32", defs[m.group(1)])
        assert tested and defs[tested.group(1)].startswith("llvm.and")   # the lane id: tid & 31
        bits.append(defs[tested.group(2)])
    assert sorted(bits) == ["llvm.mlir.constant(1 : i32) : i32"] * 16 + ["llvm.mlir.constant(2 : i32) : i32"] * 16


# ------------------------------------------------------------------------ 64-bit elements

def test_a_64_bit_element_is_selected_whole():
    """fresh303/2 (i64): the 64 selects are i64 selects (128 in 32-bit words, the cost model's
    count), each 64-bit value split into halves only for its two shuffles and joined after."""
    plan, island = twin_island("fresh303/2")
    text = island.text
    assert len(re.findall(r"llvm\.select [^\n]*: i1, i64", text)) == 64
    assert not re.search(r"llvm\.select [^\n]*: i1, i32", text)
    assert island.counts["select"] == plan_cost(plan).selects == 128
    assert island.counts["shfl.sync.idx"] == 64
    assert len(re.findall(r"llvm\.bitcast [^\n]*: vector<2xi32> to i64", text)) == 32   # one per received round


# ------------------------------------------------------------------------ packing

def test_16_bit_pairs_pack_through_vectors():
    """fresh404/133 (i16 pairs): 16 words packed through ``<2 x i16>`` and 16 unpacked the same
    way; no inline ``prmt`` (the one inline asm left reads %tid.x outside a loop)."""
    _, island = twin_island("fresh404/133")
    text = island.text
    assert len(re.findall(r"llvm\.bitcast [^\n]*: vector<2xi16> to i32", text)) == 16
    assert len(re.findall(r"llvm\.bitcast [^\n]*: i32 to vector<2xi16>", text)) == 16
    assert "prmt" not in text and text.count("llvm.inline_asm") == 1
    assert island.counts["prmt"] == 32   # what the remark reports: one byte permute per pair in SASS


def test_bytes_pack_by_shifts_and_unpack_through_vectors():
    """fresh303/143 (i8, 4 per word): 4 source words of 4 bytes packed by shifts and ors (3 each),
    8 destination words unpacked through ``<4 x i8>``; no inline ``prmt``."""
    _, island = twin_island("fresh303/143")
    text = island.text
    shifted = re.findall(r"(%\w+) = llvm\.shl ", text)
    ors = re.findall(r"llvm\.or (%\w+), (%\w+) ", text)
    assert len(ors) == 12 and sum(b in shifted for _, b in ors) == 12   # each or takes a shifted byte
    # the other shifts move the lane id's bits into each round's source lane (``xor_of_bits``)
    assert len(shifted) == 12 + len(re.findall(r"nvvm\.shfl\.sync", text))
    assert len(re.findall(r"llvm\.bitcast [^\n]*: i32 to vector<4xi8>", text)) == 8
    assert "prmt" not in text
