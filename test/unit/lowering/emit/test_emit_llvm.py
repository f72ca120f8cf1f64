"""The island emitters as pure text generation (no compiler): element types, the struct
models of Triton 3.6 / 3.9, no-op islands, and that every emitted island contains exactly the
plan's shuffles, shared-memory accesses and barriers (the compile tests then check that the
same counts survive LLVM, in ``test_lower_conversions_compile.py``)."""

from __future__ import annotations

import dataclasses

import random
from collections import Counter

import pytest

from linear_layouts.lowering.element_type import ElementType
from linear_layouts.lowering.emit.emit_llvm import IslandSite, EmitError, emit_island, island_element_type, struct_registers
from linear_layouts.tools.fuzz.testcases import random_linear_encoding
from linear_layouts.lowering.hardware import HardwareLayout
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.lowering.describe import describe_plan
from linear_layouts.lowering.instructions import AccessForm, BarrierScope, ShuffleMode
from linear_layouts.lowering.plan import Barrier
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import target_named
from linear_layouts.dialect import to_linear_layout


@pytest.mark.parametrize("ttgir, llvm, bits", [
    ("f32", "f32", 32), ("f16", "f16", 16), ("bf16", "bf16", 16), ("f64", "f64", 64), ("i1", "i1", 8),
    ("i8", "i8", 8), ("i64", "i64", 64), ("f8E4M3FN", "i8", 8), ("f8E5M2", "i8", 8),
    ("!tt.ptr<f32>", "!llvm.ptr<1>", 64), ("!tt.ptr<f16, 3>", "!llvm.ptr<3>", 64),
])
def test_element_types_follow_tritons_type_converter(ttgir, llvm, bits):
    element = ElementType.of(ttgir)
    assert (element.llvm, element.bits) == (llvm, bits)


@pytest.mark.parametrize("ttgir", ["complex<f32>", "tf32", "index", "i4", "f4E2M1FN"])
def test_element_types_without_a_modelled_struct_are_an_emit_error(ttgir):
    with pytest.raises(EmitError, match=f"{ttgir}.*not supported by the island emitter"):
        island_element_type(ttgir)


def test_struct_models_of_triton_36_and_39():
    # register bases (0, 8): register 1 repeats register 0 -> 3.6 keeps 4 fields, 3.9 keeps 2
    layout = to_linear_layout("#ttg.linear<{register = [[0], [8]], lane = [[1], [2], [4], [16], [32]], "
                              "warp = [], block = []}>", [64])
    hw = HardwareLayout.of(layout)
    assert struct_registers(hw, unique=False) == [0, 1, 2, 3]
    assert struct_registers(hw, unique=True) == [0, 2]


def _site(element="f32"):
    return IslandSite(result="%out", source="%in", src_type="tensor<T1>", dst_type="tensor<T2>",
                       element_type=element, guard_before=False, guard_after=False)


def test_noop_is_two_casts():
    a = to_linear_layout("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>", [32])
    plan = plan_conversion(a, a, 32, "sm_90")
    island = emit_island(plan, _site())
    assert check_emitted(island.text, plan, _site())
    lines = island.text.splitlines()
    assert len(lines) == 2 and all("unrealized_conversion_cast" in l for l in lines)
    assert lines[1].strip().startswith("%out = ")


def _expected(plan) -> Counter:
    out = Counter()
    nvidia = plan.target.vendor == "nvidia"
    if plan.shuffle is not None:
        for rnd in plan.shuffle.rounds:
            if rnd.mode is not ShuffleMode.LOCAL:
                xor = rnd.mode is ShuffleMode.XOR
                key = ("shfl.sync.bfly" if xor else "shfl.sync.idx") if nvidia else "ds_bpermute"
                out[key] += plan.shuffle.words_per_element
    if plan.shared is not None:
        bits = max(plan.element_bits, 8)
        for op in plan.shared.ops:
            if isinstance(op, Barrier):
                names = {BarrierScope.WARP: "bar.warp.sync" if nvidia else "fence",
                         BarrierScope.CTA: "bar.sync" if nvidia else "s_barrier"}
                out[names[op.scope]] += 1
            elif op.form.is_matrix:
                base = "stmatrix" if op.is_store else "ldmatrix"
                out[base + (".trans" if op.form is AccessForm.MATRIX_TRANS else "")] += 1
            elif nvidia:
                out[f"{'st' if op.is_store else 'ld'}.shared.b{len(op.registers) * bits}"] += 1
            else:
                out[("ds_write" if op.is_store else "ds_read") + f".b{len(op.registers) * bits}"] += 1
    return out


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "gfx90a", "gfx942"])
def test_islands_contain_exactly_the_plans_instructions(target):
    rng = random.Random(target)
    warp_size = target_named(target).warp_size
    checked = Counter()
    for i in range(40):
        shape = rng.choice([(32, 32), (64, 16), (16, 128)])
        warps = rng.choice([1, 2, 4])
        src = to_linear_layout(random_linear_encoding(rng, shape, warps, warp_size), list(shape))
        dst = to_linear_layout(random_linear_encoding(rng, shape, warps, warp_size), list(shape))
        element = rng.choice(["f32", "f16", "i8", "i64", "i1"])
        bits = ElementType.of(element).logical_bits
        plan = plan_conversion(src, dst, bits, target)
        if not plan:
            continue
        island = emit_island(plan, _site(element))
        simulated = check_emitted(island.text, plan, _site(element))
        assert simulated, simulated.errors
        got = Counter({k: v for k, v in island.counts.items() if k not in ("select", "prmt", "pack")})
        assert got == _expected(plan), describe_plan(plan)
        checked[plan.method] += 1
    assert sum(checked.values()) >= 20, checked


@pytest.mark.parametrize("in_loop, expected, absent", [
    (True, "nvvm.read.ptx.sreg.tid.x", "mov.u32 $0, %tid.x;"),
    (False, "mov.u32 $0, %tid.x;", "nvvm.read.ptx.sreg.tid.x"),
])
def test_thread_id_is_pure_only_inside_loops(in_loop, expected, absent):
    """Inside a loop the pure NVVM read lets LLVM hoist the address arithmetic; outside, inline
    PTX keeps it from being merged with Triton's and kept alive across a wgmma pipeline (ptxas
    then serialized a matmul's wgmmas: C7515)."""
    rows = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    cols = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
    plan = plan_conversion(to_linear_layout(rows, [64, 64]), to_linear_layout(cols, [64, 64]), 32, "sm_90")
    assert plan.method == "shared"
    site = IslandSite(result="%r", source="%s", src_type="tensor<64x64xf32, #a>", dst_type="tensor<64x64xf32, #b>",
                       element_type="f32", in_loop=in_loop)
    text = emit_island(plan, site).text
    assert expected in text and absent not in text
    assert check_emitted(text, plan, site)


@pytest.mark.parametrize("target, form", [("sm_90", "llvm"), ("sm_90", "asm"), ("gfx942", "llvm")])
def test_shared_addresses_are_one_base_per_thread_map_plus_constants(target, form):
    """``_emit_shared``'s addresses: one base address per distinct (lane map, warp map, constant
    bits shared with them), and each access at a constant number of bytes past its base
    (``vendor.advance``: an i8 GEP, or an i32 add in NVIDIA's inline-PTX form), the form the back
    ends fold into the access's immediate offset.  Byte offsets come from shifts: no multiply."""
    import re

    rows = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    cols = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
    warp_size = target_named(target).warp_size
    if warp_size == 64:
        rows = rows.replace("[8, 4]", "[16, 4]")
        cols = cols.replace("[4, 8]", "[4, 16]")
    shape = [64, 64]
    plan = plan_conversion(to_linear_layout(rows, shape), to_linear_layout(cols, shape), 32, target)
    assert plan.method == "shared"
    site = dataclasses.replace(_site(), shared_access=form)
    text = emit_island(plan, site).text
    assert check_emitted(text, plan, site)
    constants = dict(re.findall(r"(%\w+) = llvm\.mlir\.constant\((-?\d+) : i32\)", text))
    if form == "asm":
        pointer = re.search(r"(%\w+) = llvm\.ptrtoint", text).group(1)
        adds = re.findall(r"(%\w+) = llvm\.add (%\w+), (%\w+) : i32", text)
        bases = {name for name, a, _ in adds if a == pointer}
        advances = [int(constants[b]) for _, a, b in adds if a in bases]
    else:
        geps = re.findall(r"(%\w+) = llvm\.getelementptr (%\w+)\[(%\w+)\]", text)
        scratch = re.search(r"(%\w+) = llvm\.extractvalue .*!llvm\.struct<\(ptr<3>, i32\)>", text).group(1)
        bases = {name for name, p, _ in geps if p == scratch}
        advances = [int(constants[i]) for _, p, i in geps if p in bases]
    accesses = [op.address for op in plan.shared.ops if not isinstance(op, Barrier)]

    def split(a):
        thread_bits = 0
        for image in a.lane + a.warp:
            thread_bits |= image
        return (a.lane, a.warp, a.const & thread_bits), a.const & ~thread_bits

    assert len(bases) == len({split(a)[0] for a in accesses})
    assert sorted(advances) == sorted(split(a)[1] * 4 for a in accesses if split(a)[1])
    assert advances, "this plan has accesses a constant apart"
    assert "llvm.mul" not in text
