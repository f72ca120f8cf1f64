"""Islands in a warp group of a warp-specialized kernel (``lowering.thread_group``): the
emitter numbers warps from the group's first warp and synchronises only the group, and the
emitted-code simulator runs only the group's threads, so an island whose barrier waits for
threads that never arrive (the whole CTA's ``bar.sync 0``, another group's count or id) or
whose warp ids are not the group's fails it."""

from __future__ import annotations

import random
import re

import pytest

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.emit.emit_llvm import IslandSite, EmitError, emit_island
from linear_layouts.lowering.emit.emit_nvidia import CTA_BARRIER_INTRINSIC, GROUP_BARRIER_INTRINSIC, warp_group_barrier
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.thread_group import ThreadGroup
from linear_layouts.tools.fuzz.testcases import random_linear_encoding


def blocked(size, threads, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


def transpose_plan(warps: int, shape=(64, 64)):
    """A shared-memory transpose for ``warps`` warps (row-major to column-major blocks)."""
    src = blocked([1, 4], [32, 1], [1, warps], [1, 0])
    dst = blocked([4, 1], [1, 32], [warps, 1], [0, 1])
    plan = plan_conversion(to_linear_layout(src, list(shape)), to_linear_layout(dst, list(shape)), 32,
                           target_named("sm_90"))
    assert plan.method == "shared"
    return plan


def site(group, guards=True):
    return IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                       element_type="f32", guard_before=guards, guard_after=guards, threads=group)


PARTITION_0 = ThreadGroup(4, first_warp=4, cta_warps=8, barrier_id=2, name="partition 0")
DEFAULT = ThreadGroup(4, first_warp=0, cta_warps=8, barrier_id=0, name="default warp group")


def test_barrier_spellings_are_tritons():
    assert warp_group_barrier(ThreadGroup(4), 32).ptx == "bar.sync 0;"
    assert warp_group_barrier(DEFAULT, 32).ptx == "bar.sync 0, 128;"
    assert warp_group_barrier(PARTITION_0, 32).ptx == "bar.sync 2, 128;"
    assert warp_group_barrier(ThreadGroup(2, 8, 12, 3, "partition 1"), 32).ptx == "bar.sync 3, 64;"
    assert warp_group_barrier(ThreadGroup(1, 10, 12, 4, "partition 2"), 32).ptx == "bar.warp.sync -1;"


def test_group_must_be_aligned_and_a_power_of_two():
    with pytest.raises(ValueError, match="not a multiple"):
        ThreadGroup(8, first_warp=4)
    with pytest.raises(ValueError, match="power of two"):
        ThreadGroup(3)


@pytest.mark.parametrize("group", [DEFAULT, PARTITION_0], ids=["default", "partition"])
def test_island_in_a_group_passes_and_uses_the_groups_barrier(group):
    plan = transpose_plan(4)
    where = site(group)
    text = emit_island(plan, where).text
    assert check_emitted(text, plan, where)
    # the group's named barrier (bar.sync id, 128), as intrinsic calls: the plan's and the guard's
    named = re.findall(r'llvm\.call_intrinsic "' + re.escape(GROUP_BARRIER_INTRINSIC) + r'"\((%\S+), (%\S+)\)', text)
    constants = dict(re.findall(r"(%\S+) = llvm\.mlir\.constant\((-?\d+) : i32\)", text))
    assert len(named) >= 2
    assert {(int(constants[i]), int(constants[n])) for i, n in named} == {(group.barrier_id, 128)}
    assert warp_group_barrier(group, 32).ptx == f"bar.sync {group.barrier_id}, 128;"
    assert '"// guard of a warp group"' in text
    assert CTA_BARRIER_INTRINSIC not in text, "no whole-CTA barrier"


def test_the_whole_cta_island_hangs_in_a_partition():
    """Today's island (``bar.sync 0``, unmasked warp ids) in partition 0: the simulator says
    the barrier never completes, as it did on an H100 (the kernel never finished)."""
    plan = transpose_plan(4)
    text = emit_island(plan, site(None)).text
    result = check_emitted(text, plan, site(PARTITION_0))
    assert not result
    assert "waits for 256 threads" in result.errors[0] and "never completes" in result.errors[0]


@pytest.mark.parametrize("wrong, message", [
    ("bar.sync 0, 256;", "waits for 256 threads"),       # the whole CTA's count
    ("bar.sync 2, 64;", "completes before every thread arrives"),
    ("bar.sync 3, 128;", "may meet another warp group's barrier"),  # partition 1's id
    ("bar.sync 0, 128;", "may meet another warp group's barrier"),  # the default group's
])
def test_a_wrong_named_barrier_fails(wrong, message):
    plan = transpose_plan(4)
    where = site(PARTITION_0)
    barrier_id, threads = (int(x) for x in wrong[len("bar.sync "):-1].split(", "))
    made = iter(range(1000))

    def wrong_barrier(match):   # the same op with other constants (fresh names each time)
        k = next(made)
        return (f"%wrong_id{k} = llvm.mlir.constant({barrier_id} : i32) : i32\n    "
                f"%wrong_n{k} = llvm.mlir.constant({threads} : i32) : i32\n    "
                f'llvm.call_intrinsic "{GROUP_BARRIER_INTRINSIC}"(%wrong_id{k}, %wrong_n{k}) : (i32, i32) -> ()')
    text, replaced = re.subn(r'llvm\.call_intrinsic "' + re.escape(GROUP_BARRIER_INTRINSIC) + r'"\([^)]*\) : \(i32, i32\) -> \(\)',
                             wrong_barrier,
                             emit_island(plan, where).text)
    assert replaced >= 2
    result = check_emitted(text, plan, where)
    assert not result and message in result.errors[0], result.errors


def test_warp_ids_are_masked_to_the_partition():
    """A Hopper bias row's slice -> blocked shuffle picks its source word by warp.  In a
    partition of 8 warps at warp 8 the island reads its warp as ``(tid >> 5) & 7`` (the
    simulator's threads have %tid.x = 256..511) and is right; at warp 0 no mask is needed."""
    row = ("#ttg.slice<{dim = 0, parent = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
           "instrShape = [16, 256, 16]}>}>")
    plan = plan_conversion(to_linear_layout(row, [256]), to_linear_layout(blocked([1], [32], [8], [0]), [256]), 32,
                           target_named("sm_90"))
    partition = ThreadGroup(8, first_warp=8, cta_warps=16, barrier_id=2, name="partition 0")
    def warp_masked(text):
        """Whether the warp id ``tid >> 5`` is ANDed with 7 (other uses of 7, such as a mask of
        ``xor_of_bits`` on the lane id, do not count)."""
        lines = text.splitlines()
        def named(constant):
            return next(line.split(" = ")[0].strip() for line in lines if f"llvm.mlir.constant({constant} : i32)" in line)
        tid = next(line.split(" = ")[0].strip() for line in lines if "%tid.x" in line)
        warp = next(line.split(" = ")[0].strip() for line in lines if f"llvm.lshr {tid}, {named(5)}" in line)
        return any(f"llvm.and {warp}, {named(7)}" in line for line in lines)

    text = emit_island(plan, site(partition)).text
    assert warp_masked(text)
    assert check_emitted(text, plan, site(partition))
    default_text = emit_island(plan, site(ThreadGroup(8, 0, 16, 0, "default warp group"))).text
    assert not warp_masked(default_text)


def test_layouts_of_another_warp_count_are_refused_by_the_simulator():
    plan = transpose_plan(2, shape=(32, 64))
    result = check_emitted(emit_island(plan, site(None)).text, plan, site(PARTITION_0))
    assert not result and "of 4 warps" in result.errors[0]


@pytest.mark.parametrize("seed", [1, 2])
def test_random_conversions_in_random_partitions_pass(seed):
    """Random linear layouts of 1-8 warps, each in a partition of that many warps placed as
    Triton would (after a default group at least as large), simulated from the text."""
    rng = random.Random(seed)
    checked = 0
    while checked < 25:
        warps = rng.choice([1, 2, 4, 8])
        shape = rng.choice([(64, 32), (32, 64), (128,), (16, 16)])
        a = random_linear_encoding(rng, shape, warps, 32)
        b = random_linear_encoding(rng, shape, warps, 32)
        plan = plan_conversion(to_linear_layout(a, list(shape)), to_linear_layout(b, list(shape)), 32,
                               target_named("sm_90"))
        if not plan or plan.method != "shared":
            continue
        base = max(warps, rng.choice([4, 8]))
        group = ThreadGroup(warps, first_warp=base, cta_warps=base + max(4, warps), barrier_id=2, name="partition 0")
        where = site(group)
        result = check_emitted(emit_island(plan, where).text, plan, where)
        assert result, result.errors
        checked += 1


def test_amd_islands_are_not_emitted_in_a_group():
    plan = plan_conversion(to_linear_layout(blocked([1, 4], [64, 1], [1, 4], [1, 0]), [64, 64]),
                           to_linear_layout(blocked([4, 1], [1, 64], [4, 1], [0, 1]), [64, 64]), 32,
                           target_named("gfx942"))
    with pytest.raises(EmitError, match="warp-specialized"):
        emit_island(plan, site(ThreadGroup(4, 4, 8, 2, "partition 0")))
