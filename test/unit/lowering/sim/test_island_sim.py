"""The emitted-code simulator (``lowering.sim.island_sim``): it passes every island the emitters
print for verified plans, and it catches the emitter broken in 18 distinct ways.

Each mutation breaks the *emitter* (a vendor method or helper monkeypatched), emits the island
again, and requires (1) the island text to change - a mutation that changes nothing would test
nothing - and (2) ``check_emitted`` to reject it with the expected kind of message.
"""

from __future__ import annotations

import random
import dataclasses
import re

import numpy as np
import pytest

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.emit import emit_amd, emit_llvm, emit_nvidia, island_writer
from linear_layouts.lowering.describe import describe_plan
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_island
from linear_layouts.tools.fuzz.testcases import random_linear_encoding
from linear_layouts.lowering.instructions import AccessForm, BarrierScope, ShuffleMode
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.lowering.sim.sim_machine import prmt
from linear_layouts.lowering.plan import Barrier
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import target_named

ELEMENTS = {"f32": 32, "f16": 16, "bf16": 16, "i8": 8, "f8E4M3FN": 8, "i1": 1, "i16": 16, "i32": 32, "i64": 64,
            "!tt.ptr<f32>": 64}


def site_for(element="f32", unique=False, guards=True):
    return IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                       element_type=element, guard_before=guards, guard_after=guards, unique_struct=unique)


def random_plans(seed, count, targets=("sm_90", "sm_80", "gfx942")):
    """(plan, element type) pairs of random #ttg.linear layouts with broadcast bases."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        target = rng.choice(targets)
        warp_size = target_named(target).warp_size
        warps = rng.choice([1, 2, 4, 8])
        shape = rng.choice([(16, 16), (64, 32), (8, 4), (2, 2), (128,), (32, 64), (4, 128)])
        element = rng.choice(sorted(ELEMENTS))
        a = random_linear_encoding(rng, shape, warps, warp_size)
        b = random_linear_encoding(rng, shape, warps, warp_size)
        plan = plan_conversion(to_linear_layout(a, list(shape)), to_linear_layout(b, list(shape)),
                               ELEMENTS[element], target_named(target))
        if plan:
            out.append((plan, element))
    return out


@pytest.mark.parametrize("unique", [False, True], ids=["struct-3.6", "struct-3.9"])
def test_every_emitted_island_passes(unique):
    methods = set()
    for plan, element in random_plans(11 + unique, 150):
        site = site_for(element, unique)
        result = check_emitted(emit_island(plan, site).text, plan, site)
        assert result, (describe_plan(plan), result.errors)
        methods.add(plan.method)
    assert {"shuffle", "shared"} <= methods


def test_bias_row_broadcast_over_warps():
    # A Hopper matmul's bias row: the slice -> blocked shuffle picks a source word that depends
    # on the warp.  Emitting it per lane only (warp 0's choice everywhere) was wrong in 7/8 of
    # the elements on an H100; the simulator sees it.
    blocked = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>"
    row = ("#ttg.slice<{dim = 0, parent = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
           "instrShape = [16, 256, 16]}>}>")
    plan = plan_conversion(to_linear_layout(row, [256]), to_linear_layout(blocked, [256]), 32, target_named("sm_90"))
    assert plan.method == "shuffle" and any(any(r.send_word.warp) for r in plan.shuffle.rounds)
    site = site_for()
    assert check_emitted(emit_island(plan, site).text, plan, site)


def test_prmt_matches_the_ptx_definition():
    a, b = np.array([0x33221100], dtype=np.uint64), np.array([0x77665544], dtype=np.uint64)
    assert int(prmt(a, b, 0x5410)[0]) == 0x55441100
    assert int(prmt(a, b, 0x4432)[0]) == 0x44443322
    assert int(prmt(a, b, 0x0040)[0]) == 0x00004400   # bytes: a0, b0, a0, a0
    # a nibble with bit 3 set replicates the sign bit of the byte it names
    assert int(prmt(np.array([0x80], dtype=np.uint64), b, 0x0008)[0]) == 0x808080FF


def test_unknown_ops_fail_closed():
    plan, element = random_plans(3, 1, targets=("sm_90",))[0]
    site = site_for(element)
    text = emit_island(plan, site).text
    lines = text.splitlines()
    lines.insert(1, "    %bogus = llvm.frobnicate %x : i32")
    result = check_emitted("\n".join(lines), plan, site)
    assert not result and "unsupported op 'llvm.frobnicate'" in result.errors[0]


@pytest.mark.parametrize("call, message", [
    # another intrinsic than the two barriers
    ('llvm.call_intrinsic "llvm.nvvm.barrier0.popc"(%Z) : (i32) -> ()', "barrier intrinsics only"),
    # the whole CTA's barrier on another id than 0
    ('llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%ONE) : (i32) -> ()', "barrier is 0"),
    # a named barrier without its thread count
    ('llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.count"(%Z) : (i32) -> ()', "with operands (%Z)"),
])
def test_barrier_intrinsic_calls_are_read_exactly(call, message):
    """An island's barrier is an intrinsic call (emit_nvidia, "barriers"); the simulator runs the
    two it emits and refuses any other call, id or operand count."""
    plan, element = find_plan(lambda p: is_shared(p) and any(isinstance(o, Barrier) for o in p.shared.ops))
    site = site_for(element)
    text = emit_island(plan, site).text
    assert text.count(f'"{emit_nvidia.CTA_BARRIER_INTRINSIC}"') >= 1
    assert check_emitted(text, plan, site)
    constants = "    %Z = llvm.mlir.constant(0 : i32) : i32\n    %ONE = llvm.mlir.constant(1 : i32) : i32\n"
    wrong = re.sub(r'llvm\.call_intrinsic "' + re.escape(emit_nvidia.CTA_BARRIER_INTRINSIC) + r'"\(\S+\) : \(i32\) -> \(\)',
                   lambda _: call, text, count=1)
    lines = wrong.splitlines(keepends=True)
    result = check_emitted(lines[0] + constants + "".join(lines[1:]), plan, site)
    assert not result and message in result.errors[0], result.errors


def test_an_nvidia_barrier_call_in_an_amd_island_fails():
    plan, element = find_plan(lambda p: is_shared(p) and any(isinstance(o, Barrier) for o in p.shared.ops),
                              targets=("gfx942",))
    site = site_for(element)
    text = emit_island(plan, site).text
    lines = text.splitlines()
    lines.insert(1, "    %Z = llvm.mlir.constant(0 : i32) : i32")
    lines.insert(2, f'    llvm.call_intrinsic "{emit_nvidia.CTA_BARRIER_INTRINSIC}"(%Z) : (i32) -> ()')
    result = check_emitted("\n".join(lines), plan, site)
    assert not result and "the target is" in result.errors[0], result.errors


# ------------------------------------------------------------------------------ mutations


def find_plan(predicate, targets=("sm_90",), elements=("f32",), seed=0, tries=3000):
    rng = random.Random(seed)
    for _ in range(tries):
        target = rng.choice(targets)
        warp_size = target_named(target).warp_size
        warps = rng.choice([2, 4, 8])
        shape = rng.choice([(32, 32), (16, 64), (64, 64), (16, 16)])
        element = rng.choice(elements)
        a = random_linear_encoding(rng, shape, warps, warp_size, broadcast=False)
        b = random_linear_encoding(rng, shape, warps, warp_size, broadcast=False)
        plan = plan_conversion(to_linear_layout(a, list(shape)), to_linear_layout(b, list(shape)),
                               ELEMENTS[element], target_named(target))
        if plan and predicate(plan):
            return plan, element
    raise AssertionError("no plan of the wanted kind found")


def shared_ops(plan):
    return [op for op in plan.shared.ops if not isinstance(op, Barrier)] if plan.shared else []


def is_shared(plan):
    return plan.method == "shared"


def has_form(form):
    return lambda plan: any(op.form is form for op in shared_ops(plan))


def shuffle_with(mode):
    return lambda plan: plan.method == "shuffle" and any(r.mode is mode for r in plan.shuffle.rounds)


def shared_with_warp_addresses(plan):
    return any(any(op.address.warp) for op in shared_ops(plan))


def wrong_barrier(self, w, scope, guard=False, alone=False):
    if scope is BarrierScope.CTA and not guard:
        return None
    return ORIGINAL_NV_BARRIER(self, w, scope, guard, alone)


ORIGINAL_NV_BARRIER = emit_nvidia.NvidiaInstructions.barrier
ORIGINAL_AMD_BARRIER = emit_amd.AmdInstructions.barrier


def _swap_select(self, condition, if_true, if_false, type_="i32"):
    self.counts["select"] += 1
    return self.op(f"llvm.select {condition}, {if_false}, {if_true} : i1, {type_}")


def _nv_shuffle_off_by_one(self, w, value, rnd, warp_size):
    from dataclasses import replace
    wrong = replace(rnd, source_lane=rnd.source_lane.with_const(rnd.source_lane.const ^ 1))
    return ORIGINAL_NV_SHUFFLE(self, w, value, wrong, warp_size)


ORIGINAL_NV_SHUFFLE = emit_nvidia.NvidiaInstructions.shuffle


def _address_plus_one_element(self, w, base, byte_offset):
    return ORIGINAL_NV_ADDRESS(self, w, base, w.binary("add", byte_offset, w.const(4)))


ORIGINAL_NV_ADDRESS = emit_nvidia.NvidiaInstructions.shared_address


def _one_more_field(layout, unique):
    regs = ORIGINAL_STRUCT_REGISTERS(layout, unique)
    return regs + [regs[0]]


ORIGINAL_STRUCT_REGISTERS = emit_llvm.struct_registers


def _half_store(self, w, op, address, values, bits):
    if len(values) >= 2 and not op.form.is_matrix:
        values = values[:len(values) // 2] + values[:len(values) // 2]
    return ORIGINAL_NV_STORE(self, w, op, address, values, bits)


ORIGINAL_NV_STORE = emit_nvidia.NvidiaInstructions.store


def _load_without_trans(self, w, op, address, count, bits):
    from dataclasses import replace
    if op.form is AccessForm.MATRIX_TRANS:
        op = replace(op, form=AccessForm.MATRIX)
    return ORIGINAL_NV_LOAD(self, w, op, address, count, bits)


ORIGINAL_NV_LOAD = emit_nvidia.NvidiaInstructions.load


def _unpack_reversed(self, w, word, count, bits):
    return list(reversed(ORIGINAL_SHIFT_UNPACK(self, w, word, count, bits)))


ORIGINAL_SHIFT_UNPACK = emit_nvidia._ShiftPacker.unpack


def _words_swapped(w, packer, bits, values):
    words = ORIGINAL_ELEMENT_WORDS(w, packer, bits, values)
    if bits == 64:
        words = [words[i ^ 1] for i in range(len(words))]
    return words


ORIGINAL_ELEMENT_WORDS = island_writer.element_words


def _bpermute_unscaled(self, w, value, rnd, warp_size):
    source = w.xor_of_bits(rnd.source_lane.lane, self.lane_id(w), rnd.source_lane.const)
    w.counts["ds_bpermute"] += 1
    return w.op(f"rocdl.ds_bpermute {source}, {value} : (i32, i32) -> i32")


def _no_guard(self, w, scope, guard=False, alone=False):
    if guard:
        return None
    return ORIGINAL_NV_BARRIER(self, w, scope, guard, alone)


def _reversed_struct(self, values, struct_type):
    return ORIGINAL_BUILD_STRUCT(self, list(reversed(values)), struct_type)


ORIGINAL_BUILD_STRUCT = emit_llvm.IslandWriter.build_struct


def _amd_barrier_without_fences(self, w, scope, guard=False, alone=False):
    if scope is BarrierScope.CTA:
        w.line("rocdl.s.barrier")
        return None
    return ORIGINAL_AMD_BARRIER(self, w, scope, guard)


def _lanes_only(affine, warp_size, num_warps):
    # the original bug: a send word evaluated over lanes only, warp 0's choice in every warp
    lanes = np.arange(warp_size, dtype=np.int64)
    row = np.broadcast_to(np.asarray(affine.evaluate(lanes), dtype=np.int64), (warp_size,))
    return np.broadcast_to(row, (num_warps, warp_size)).astype(np.int64)


def _skip_a_field(self, values, struct_type):
    out = self.op(f"llvm.mlir.undef : {struct_type}")
    for i, v in enumerate(values):
        if i != len(values) - 1:
            out = self.op(f"llvm.insertvalue {v}, {out}[{i}] : {struct_type}")
    return out


def _lane_id_drops_bit_zero(self, w):
    return w.binary("and", ORIGINAL_NV_LANE(self, w), w.const(30))


ORIGINAL_NV_LANE = emit_nvidia.NvidiaInstructions.lane_id


def _warp_id_zero(self, w):
    return w.const(0)


def _pack_pair_swapped(self, w, values, bits):
    if len(values) == 2 and bits == 16:
        return ORIGINAL_NV_PACK(self, w, values[::-1], bits)
    return ORIGINAL_NV_PACK(self, w, values, bits)


def _unpack_bytes_reversed(self, w, word, count, bits):
    return ORIGINAL_NV_UNPACK(self, w, word, count, bits)[::-1]


ORIGINAL_NV_PACK = emit_nvidia.NvidiaInstructions.pack
ORIGINAL_NV_UNPACK = emit_nvidia.NvidiaInstructions.unpack
ORIGINAL_AMD_VECTOR = emit_amd.AmdInstructions._through_a_vector


def _amd_vector_reversed(w, values, bits, type_):
    return ORIGINAL_AMD_VECTOR(w, values[::-1], bits, type_)


def _vector_words_reversed(w, words):
    return ORIGINAL_WORDS_TO_VECTOR(w, words[::-1])


ORIGINAL_WORDS_TO_VECTOR = island_writer.words_to_vector


def _overclaimed_alignment(w, address, value, total):
    """An ``llvm.store`` that claims twice its natural alignment (LLVM would trust it)."""
    type_ = island_writer.shared_access_type(total)
    w.line(f"llvm.store {value}, {address} {{alignment = {total // 4} : i64}} : {type_}, !llvm.ptr<3>")


BIAS_ROW = (("#ttg.slice<{dim = 0, parent = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
             "instrShape = [16, 256, 16]}>}>"),
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>")


def bias_row_plan():
    src, dst = (to_linear_layout(x, [256]) for x in BIAS_ROW)
    return plan_conversion(src, dst, 32, target_named("sm_90")), "f32"


MUTATIONS = [
    # name, (module, attribute, replacement), how to find a plan, what the message says
    ("missing barrier between stores and loads", (emit_nvidia.NvidiaInstructions, "barrier", wrong_barrier),
     lambda: find_plan(lambda p: is_shared(p) and any(isinstance(o, Barrier) and o.scope is BarrierScope.CTA
                                                      for o in p.shared.ops)), "missing barrier"),
    ("swapped select arms", (emit_llvm.IslandWriter, "select", _swap_select),
     lambda: find_plan(lambda p: shuffle_with(ShuffleMode.INDEX)(p) and plan_cost(p).selects > 0), "wrong element"),
    ("wrong shuffle source lane", (emit_nvidia.NvidiaInstructions, "shuffle", _nv_shuffle_off_by_one),
     lambda: find_plan(lambda p: p.method == "shuffle"), "wrong element"),
    ("address one element off", (emit_nvidia.NvidiaInstructions, "shared_address", _address_plus_one_element),
     lambda: find_plan(is_shared), ""),
    ("struct arity", (emit_llvm, "struct_registers", _one_more_field),
     lambda: find_plan(lambda p: p.method in ("shuffle", "shared")), "fields"),
    ("store writes half the vector twice", (emit_nvidia.NvidiaInstructions, "store", _half_store),
     lambda: find_plan(lambda p: any(len(o.registers) >= 2 and o.is_store for o in shared_ops(p))), ""),
    ("ldmatrix .trans dropped", (emit_nvidia.NvidiaInstructions, "load", _load_without_trans),
     lambda: find_plan(has_form(AccessForm.MATRIX_TRANS), elements=("f16",)), "wrong element"),
    ("unpack order swapped", (emit_nvidia._ShiftPacker, "unpack", _unpack_reversed),
     lambda: find_plan(lambda p: any(not o.is_store and len(o.registers) >= 2 for o in shared_ops(p)),
                       elements=("i8", "f16")), "wrong element"),
    ("64-bit halves swapped", (island_writer, "element_words", _words_swapped),
     lambda: find_plan(lambda p: p.method in ("shuffle", "shared"), elements=("i64",)), "wrong element"),
    ("ds_bpermute index not scaled by 4", (emit_amd.AmdInstructions, "shuffle", _bpermute_unscaled),
     lambda: find_plan(lambda p: p.method == "shuffle", targets=("gfx942",)), ""),
    ("guard barrier dropped", (emit_nvidia.NvidiaInstructions, "barrier", _no_guard),
     lambda: find_plan(is_shared), "guard"),
    ("output registers permuted", (emit_llvm.IslandWriter, "build_struct", _reversed_struct),
     lambda: find_plan(lambda p: p.method in ("shuffle", "shared")), "wrong element"),
    ("AMD LDS store's elements in reverse", (emit_amd.AmdInstructions, "_through_a_vector",
                                            staticmethod(_amd_vector_reversed)),
     lambda: find_plan(lambda p: any(o.is_store and len(o.registers) >= 2 for o in shared_ops(p)),
                       targets=("gfx942",), elements=("i8", "f16")), "wrong element"),
    ("AMD barrier without its fences", (emit_amd.AmdInstructions, "barrier", _amd_barrier_without_fences),
     lambda: find_plan(is_shared, targets=("gfx942",)), "fence"),
    ("NVIDIA vector store's words in reverse", (island_writer, "words_to_vector", _vector_words_reversed),
     lambda: find_plan(lambda p: any(o.is_store and len(o.registers) >= 2 and not o.form.is_matrix
                                     for o in shared_ops(p))), "wrong element"),
    ("a store claims more alignment than it has", (island_writer, "shared_store", _overclaimed_alignment),
     lambda: find_plan(is_shared), "alignment"),
    ("warp term dropped from a send word", (emit_llvm, "_threads_of", _lanes_only), bias_row_plan,
     "wrong element"),
    ("an output field never inserted", (emit_llvm.IslandWriter, "build_struct", _skip_a_field),
     lambda: find_plan(lambda p: p.method in ("shuffle", "shared")), "undefined"),
    ("lane id drops bit 0", (emit_nvidia.NvidiaInstructions, "lane_id", _lane_id_drops_bit_zero),
     lambda: find_plan(lambda p: p.method in ("shuffle", "shared")), ""),
    ("warp term dropped from addresses", (emit_nvidia.NvidiaInstructions, "warp_id", _warp_id_zero),
     lambda: find_plan(shared_with_warp_addresses), ""),
    ("16-bit pair packed high first", (emit_nvidia.NvidiaInstructions, "pack", _pack_pair_swapped),
     lambda: find_plan(lambda p: p.method == "shuffle" and p.shuffle.elements_per_word == 2, elements=("f16",)),
     "wrong element"),
    ("bytes unpacked in reverse", (emit_nvidia.NvidiaInstructions, "unpack", _unpack_bytes_reversed),
     lambda: find_plan(lambda p: p.method == "shuffle" and p.shuffle.elements_per_word > 1, elements=("i8",)),
     "wrong element"),
]


@pytest.mark.parametrize("name, patch, finder, message", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_broken_emitter_is_caught(monkeypatch, name, patch, finder, message):
    plan, element = finder()
    site = site_for(element)
    good = emit_island(plan, site).text
    assert check_emitted(good, plan, site), "the unbroken island must pass"
    owner, attribute, replacement = patch
    monkeypatch.setattr(owner, attribute, replacement)
    bad = emit_island(plan, site).text
    assert bad != good, f"mutation '{name}' did not change the island"
    result = check_emitted(bad, plan, site)
    assert not result, f"mutation '{name}' was not caught"
    assert message in result.errors[0], result.errors[0]


def test_at_least_fifteen_distinct_mutations():
    assert len({m[0] for m in MUTATIONS}) >= 15
    assert len({(m[1][0], m[1][1], m[1][2]) for m in MUTATIONS}) == len(MUTATIONS)


@pytest.mark.parametrize("form, store, load", [("llvm", "llvm.store ", "llvm.load "), ("asm", "st.shared", "ld.shared")])
def test_text_level_mutations_are_caught(form, store, load):
    plan, element = find_plan(is_shared)
    site = dataclasses.replace(site_for(element), shared_access=form)
    text = emit_island(plan, site).text
    assert check_emitted(text, plan, site)
    # a store moved after the loads (program order)
    lines = text.splitlines()
    stores = [i for i, l in enumerate(lines) if store in l]
    loads = [i for i, l in enumerate(lines) if load in l]
    assert stores and loads
    moved = lines[:stores[0]] + lines[stores[0] + 1:loads[-1] + 1] + [lines[stores[0]]] + lines[loads[-1] + 1:]
    assert not check_emitted("\n".join(moved), plan, site)
    # the scratch buffer halved
    halved = re.sub(r"memdesc<(\d+)xi8", lambda m: f"memdesc<{int(m.group(1)) // 2}xi8", text)
    assert halved != text
    result = check_emitted(halved, plan, site)
    assert not result and "outside" in result.errors[0]


# --------------------------------------------------------------------------- passes side by side

NARROW_SRC = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
NARROW_DST = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"


def _narrow_island(element):
    """A 64x64 conversion through shared memory of ``element`` (i1: 12 passes, i8: 2)."""
    plan = plan_conversion(to_linear_layout(NARROW_SRC, [64, 64]), to_linear_layout(NARROW_DST, [64, 64]),
                           ELEMENTS[element], target_named("sm_90"))
    site = site_for(element)
    return plan, site, emit_island(plan, site).text


def _swap_result_fields(text, first, second):
    """The island with result struct fields ``first`` and ``second`` given each other's value."""
    inserts = {int(m.group(2)): m for m in re.finditer(r"llvm\.insertvalue (%\w+), %\w+\[(\d+)\]", text)}
    a, b = inserts[first], inserts[second]
    out = list(text)
    for match, value in ((a, b.group(1)), (b, a.group(1))):
        out[match.start(1):match.end(1)] = value.ljust(match.end(1) - match.start(1))
    return "".join(out).replace("  ,", ",").replace(" ,", ",")


@pytest.mark.parametrize("element, limit", [("i1", None), ("i8", None), ("i1", "small")])
def test_passes_side_by_side_catch_a_wrong_element_in_any_bit(monkeypatch, element, limit):
    """All passes of a narrow type run in one execution of the island (CTA copies), or in a few
    where the simulation's size limit says so; a result field holding another element is caught
    even when the two element ids agree in the first pass's bits (only a later pass sees it)."""
    from linear_layouts.lowering.sim import island_sim
    from linear_layouts.lowering.hardware import HardwareLayout

    plan, site, text = _narrow_island(element)
    bits = ELEMENTS[element]
    if limit == "small":      # room for 5 CTA copies at a time: the 12 passes in 3 runs
        dst_regs = len(emit_llvm.struct_registers(HardwareLayout.of(plan.dst, None), False))
        monkeypatch.setattr(island_sim, "MAX_THREAD_REGISTERS", 128 * dst_regs * 5)
    runs = []
    real_run = island_sim._Island.run
    monkeypatch.setattr(island_sim._Island, "run", lambda self: (runs.append(self.m.B), real_run(self))[1])
    assert check_emitted(text, plan, site)
    assert runs == ([12] if limit is None and element == "i1" else [2] if element == "i8" else [5, 5, 2])
    # result fields 0 and j: elements whose ids differ only above the first pass's bits
    ids = island_sim._element_ids(HardwareLayout.of(plan.dst, None),
                                  emit_llvm.struct_registers(HardwareLayout.of(plan.dst, None), False))
    difference = ids[:, 0] ^ ids[:, 1:].T
    j = next(j for j in range(len(difference)) if not (difference[j] & ((1 << bits) - 1)).any()) + 1
    swapped = _swap_result_fields(text, 0, j)
    assert swapped != text
    result = check_emitted(swapped, plan, site)
    assert not result and "hold the wrong element" in result.errors[0]


def test_a_vector_to_vector_bitcast_keeps_the_bytes_in_order():
    """``llvm.bitcast`` of ``vector<8xi8>`` to ``vector<2xi32>`` and back (the AMD emitter's LDS
    accesses of 8- and 16-bit elements): element j of the result holds bits [32 j, 32 j + 32) of
    the operand, lowest element first, as LLVM's little-endian layout does."""
    import numpy as np
    from linear_layouts.lowering.sim.island_sim import _Island
    from linear_layouts.lowering.sim.sim_machine import Machine, Scalar

    machine = Machine(1, 1, 64, "amd")
    island = _Island([], machine, [], site=None)
    lanes = np.arange(machine.T, dtype=np.uint64)
    defined = np.ones(machine.T, dtype=bool)
    bytes_ = [Scalar(8, (lanes + i) & np.uint64(0xFF), defined) for i in range(8)]
    words = island._vector_bitcast(bytes_, "vector<8xi8>", "vector<2xi32>", (8, 8), (2, 32))
    expect = [sum(((lanes + 4 * j + i) & np.uint64(0xFF)) << np.uint64(8 * i) for i in range(4)) for j in range(2)]
    assert [w.bits for w in words] == [32, 32]
    assert all((w.value == e).all() for w, e in zip(words, expect))
    back = island._vector_bitcast(words, "vector<2xi32>", "vector<8xi8>", (2, 32), (8, 8))
    assert all((b.value == a.value).all() and b.bits == 8 for a, b in zip(bytes_, back))
    halves = island._vector_bitcast(words, "vector<2xi32>", "vector<4xi16>", (2, 32), (4, 16))
    assert [int(h.value[3]) for h in halves] == [0x0403, 0x0605, 0x0807, 0x0a09]
    from linear_layouts.lowering.sim.sim_machine import SimulationError
    with pytest.raises(SimulationError, match="sizes differ"):
        island._vector_bitcast(bytes_, "vector<8xi8>", "vector<4xi32>", (8, 8), (4, 32))


# ------------------------------------------------------------ the two forms of NVIDIA shared accesses


@pytest.mark.parametrize("kind, form", [("stmatrix", AccessForm.MATRIX), ("ldmatrix", AccessForm.MATRIX),
                                        ("ldmatrix", AccessForm.MATRIX_TRANS)])
def test_matrix_accesses_are_nvvm_ops_and_the_simulator_runs_both_forms(kind, form):
    """In the LLVM form (the default) ldmatrix / stmatrix are ``nvvm.ldmatrix`` / ``nvvm.stmatrix``
    (Triton's own form); with ``shared_access="asm"`` the inline PTX of before.  The simulator runs
    both, and reads the NVVM op's layout: ``col`` (.trans) for ``row`` is a wrong element."""
    store = kind == "stmatrix"
    plan, element = find_plan(lambda p: any(op.form is form and op.is_store == store for op in shared_ops(p)),
                              elements=("f16",))
    site = site_for(element)
    text = emit_island(plan, site).text
    assert f"nvvm.{kind} " in text and f"{kind}.sync" not in text
    assert check_emitted(text, plan, site)
    asm_site = dataclasses.replace(site, shared_access="asm")
    asm = emit_island(plan, asm_site).text
    assert f"nvvm.{kind}" not in asm and f'"{kind}.sync' in asm and "llvm.load " not in asm and "llvm.store " not in asm
    assert check_emitted(asm, plan, asm_site)
    wanted, other = ("col", "row") if form is AccessForm.MATRIX_TRANS else ("row", "col")
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if f"nvvm.{kind} " in line)
    lines[first] = lines[first].replace(f"mma_layout<{wanted}>", f"mma_layout<{other}>")
    result = check_emitted("\n".join(lines), plan, site)
    assert not result and "wrong element" in result.errors[0], result.errors


def test_nvvm_ldmatrix_result_must_match_its_count():
    plan, element = find_plan(lambda p: any(op.form.is_matrix and not op.is_store and len(op.registers) * 16 == 128
                                            for op in shared_ops(p)), elements=("f16",))
    site = site_for(element)
    text = emit_island(plan, site).text
    bad = text.replace("num = 4 : i32", "num = 2 : i32", 1)
    assert bad != text
    result = check_emitted(bad, plan, site)
    assert not result and "nvvm.ldmatrix num = 2" in result.errors[0]


def test_the_study_switch_picks_the_inline_ptx_form(monkeypatch):
    plan, element = find_plan(lambda p: is_shared(p) and any(not op.form.is_matrix for op in shared_ops(p)))
    site = site_for(element)
    assert "llvm.store " in emit_island(plan, site).text
    monkeypatch.setattr("linear_layouts.lowering.emit.emit_nvidia.SHARED_ACCESS_FORM", "asm")
    text = emit_island(plan, site).text
    assert "llvm.store " not in text and "llvm.load " not in text and "st.shared" in text
    assert check_emitted(text, plan, site)
    # the site's own choice wins over the switch
    assert "llvm.store " in emit_island(plan, dataclasses.replace(site, shared_access="llvm")).text
    monkeypatch.setattr("linear_layouts.lowering.emit.emit_nvidia.SHARED_ACCESS_FORM", "ptx")
    with pytest.raises(ValueError, match="shared access form 'ptx': expected one of llvm, asm"):
        emit_island(plan, site)
