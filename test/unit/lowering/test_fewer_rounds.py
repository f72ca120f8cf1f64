"""Fewer shared-memory rounds (``lowering.planner.with_fewer_rounds``): Triton's swizzle converts
in rounds through a small buffer; the same accesses through a larger one need fewer rounds and
so fewer CTA barriers.  Checked here: the exact counts on a worked example, the verifier and the
emitted-code simulator on random conversions, the choice (a plan with merged rounds is no twin of
stock's code), and the budget's variable."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.stock_shared import is_stock_twin
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_island
from linear_layouts.lowering.instructions import BarrierScope
from linear_layouts.lowering.plan import Barrier, SharedAccess
from linear_layouts.lowering.planner import (DEFAULT_ROUND_SCRATCH, ROUND_SCRATCH_VARIABLE, plan_conversion,
                                             round_scratch_budget, with_fewer_rounds)
from linear_layouts.lowering.shared import fewer_rounds
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.lowering.swizzle import Swizzle
from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.verify import verify_plan
from linear_layouts.tools.fuzz.testcases import random_linear_encoding

# The worked example of ``with_fewer_rounds``: 32x256 i32 over 4 warps, a held-out conversion
# (fresh5113/30) that Triton converts in 4 rounds through 8 KB.
SRC = ("#ttg.linear<{register = [[0, 64], [0, 1], [0, 2], [0, 16], [0, 8], [0, 128]], lane = [[16, 0], [0, 4], "
       "[4, 0], [0, 32], [1, 0]], warp = [[2, 0], [8, 0]], block = []}>")
DST = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [0, 1]}>"


def _example():
    return plan_conversion(to_linear_layout(SRC, [32, 256]), to_linear_layout(DST, [32, 256]), 32, "sm_90")


def _accesses(plan):
    return Counter((op.kind.value, op.form.value, len(op.registers)) for op in plan.shared.ops
                   if isinstance(op, SharedAccess))


def _barriers(plan):
    return sum(isinstance(op, Barrier) for op in plan.shared.ops)


def test_the_worked_example_in_triton_rounds_and_fewer():
    plan = _example()
    assert (plan.shared.num_rounds, plan.shared.scratch_bytes, _barriers(plan)) == (4, 8192, 7)
    two = with_fewer_rounds(plan, 16384)
    one = with_fewer_rounds(plan, 32768)
    assert (two.shared.num_rounds, two.shared.scratch_bytes, _barriers(two), two.shared.rounds_merged) == (2, 16384, 3, 1)
    assert (one.shared.num_rounds, one.shared.scratch_bytes, _barriers(one), one.shared.rounds_merged) == (1, 32768, 1, 2)
    for fewer in (two, one):
        assert verify_plan(fewer).ok
        assert _accesses(fewer) == _accesses(plan) == Counter({("store", "vector", 4): 16, ("load", "vector", 4): 16})
        before, after = plan_cost(plan), plan_cost(fewer)
        assert (after.store_conflicts, after.load_conflicts) == (before.store_conflicts, before.load_conflicts) == (0, 0)
        assert "where Triton's swizzle takes 4 through 8192" in fewer.notes[-1]
    # a budget that does not double the buffer, or a one-round plan: the plan itself
    assert with_fewer_rounds(plan, 16383) is plan and with_fewer_rounds(plan, 0) is plan
    assert with_fewer_rounds(one, 1 << 20) is one


def test_fewer_rounds_moves_round_directions_into_the_segment_in_order():
    swizzle = Swizzle(vector=(1, 2), bank=(4, 8, 16), segment=(32,), reps=(64, 128))   # i32: 64 elements, 256 B
    assert fewer_rounds(swizzle, 32, 256) == swizzle
    assert fewer_rounds(swizzle, 32, 512) == Swizzle((1, 2), (4, 8, 16), (32, 64), (128,))
    assert fewer_rounds(swizzle, 32, 1024) == Swizzle((1, 2), (4, 8, 16), (32, 64, 128), ())


def test_a_plan_with_merged_rounds_is_no_twin_and_the_model_keeps_it(monkeypatch):
    monkeypatch.delenv(fitted_model.GATE_VARIABLE, raising=False)   # the unit tests' conftest turns the gate off
    plan = _example()
    assert is_stock_twin(plan)      # Triton's own code: plain 128-bit vectors, no matrix pair, its rounds
    choice = fitted_model.decide(plan, "sm_90", "3.6.0")
    assert choice.plan is None and choice.twin
    fewer = with_fewer_rounds(plan, 16384)
    assert not is_stock_twin(fewer)
    assert fitted_model.decide(fewer, "sm_90", "3.6.0").plan is fewer


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(ROUND_SCRATCH_VARIABLE, raising=False)
    assert round_scratch_budget() == DEFAULT_ROUND_SCRATCH == 16384
    monkeypatch.setenv(ROUND_SCRATCH_VARIABLE, "0")
    assert round_scratch_budget() == 0 and with_fewer_rounds(_example()).shared.num_rounds == 4
    monkeypatch.setenv(ROUND_SCRATCH_VARIABLE, "65536")
    assert with_fewer_rounds(_example()).shared.num_rounds == 1
    for bad in ("16k", "-1"):
        monkeypatch.setenv(ROUND_SCRATCH_VARIABLE, bad)
        with pytest.raises(ValueError, match=f"{ROUND_SCRATCH_VARIABLE}='{bad}': expected a number of bytes"):
            round_scratch_budget()


def test_the_budget_is_part_of_the_cache_key(monkeypatch):
    from linear_layouts.passes.drop_in.plugin_config import environment_switches
    monkeypatch.delenv(ROUND_SCRATCH_VARIABLE, raising=False)
    assert "round-scratch" not in environment_switches()
    monkeypatch.setenv(ROUND_SCRATCH_VARIABLE, "0")
    assert environment_switches().endswith("-round-scratch-0")


def _site(element):
    return IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                      element_type=element, guard_before=True, guard_after=True, unique_struct=False)


ELEMENTS = {"f32": 32, "f16": 16, "i8": 8, "i64": 64}


@given(st.integers(0, 2 ** 32 - 1))
@settings(max_examples=60, deadline=None)
def test_random_conversions_in_fewer_rounds_are_verified_and_simulated(seed):
    """Random #ttg.linear pairs with a multi-round plan: every plan with fewer rounds passes the
    exhaustive verifier and the emitted-code simulator, with the same accesses and bank
    conflicts as Triton's rounds and two barriers fewer per round saved."""
    rng = random.Random(seed)
    target = rng.choice(["sm_90", "sm_80", "gfx942"])
    warp_size = target_named(target).warp_size
    for _ in range(40):     # draw until a conversion has rounds to merge
        shape = rng.choice([(64, 32), (32, 64), (128, 16), (4096,), (16, 128)])
        element = rng.choice(sorted(ELEMENTS))
        warps = rng.choice([2, 4, 8])
        a = random_linear_encoding(rng, shape, warps, warp_size)
        b = random_linear_encoding(rng, shape, warps, warp_size)
        plan = plan_conversion(to_linear_layout(a, list(shape)), to_linear_layout(b, list(shape)), ELEMENTS[element],
                               target_named(target))
        if plan and plan.shared is not None and plan.shared.num_rounds > 1:
            break
    else:
        return
    fewer = with_fewer_rounds(plan, 1 << 20)
    if _waits_for_its_warp(plan):
        assert fewer is plan, "a warp's rounds are not merged"
        return
    assert fewer is not plan and fewer.shared.num_rounds == 1
    assert verify_plan(fewer).ok
    assert _accesses(fewer) == _accesses(plan)
    before, after = plan_cost(plan), plan_cost(fewer)
    assert (after.store_conflicts, after.load_conflicts) == (before.store_conflicts, before.load_conflicts)
    assert _barriers(plan) - _barriers(fewer) == 2 * (plan.shared.num_rounds - 1)
    scopes = {op.scope for op in fewer.shared.ops if isinstance(op, Barrier)}
    assert scopes == {op.scope for op in plan.shared.ops if isinstance(op, Barrier)} == {BarrierScope.CTA}
    site = _site(element)
    result = check_emitted(emit_island(fewer, site).text, fewer, site)
    assert result, result.errors


def _waits_for_its_warp(plan):
    return any(isinstance(op, Barrier) and op.scope is BarrierScope.WARP for op in plan.shared.ops)


def test_a_plan_that_stays_in_its_warp_keeps_triton_rounds(monkeypatch):
    """f16 32x128, blocked (``sizePerThread = [2, 4]``) -> mma v2 over 2 warps (the held-out
    fresh9301/52): every element stays in its warp, and Triton's swizzle takes 2 rounds through
    4 KB with ``bar.warp.sync`` between them, a NOP in the SASS.  Merging them would save no
    wait: the plan keeps its rounds, and the choice leaves the conversion to stock (its twin)."""
    from linear_layouts.lowering.choosing.lowering_choice import Conversion, Policy, choose_conversion
    from linear_layouts.lowering.choosing.plan_memory import ModulePlans
    src = "#ttg.blocked<{sizePerThread = [2, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]}>"
    dst = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 1], instrShape = [16, 8]}>"
    a, b = to_linear_layout(src, [32, 128]), to_linear_layout(dst, [32, 128])
    plan = plan_conversion(a, b, 16, "sm_90")
    assert (plan.shared.num_rounds, plan.shared.scratch_bytes, _waits_for_its_warp(plan)) == (2, 4096, True)
    assert with_fewer_rounds(plan, 1 << 20) is plan
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)     # the default: the gate on
    choice = choose_conversion(Conversion(a, b, 16, target_named("sm_90")), Policy(triton="3.6.0", measured=False),
                               ModulePlans(None))
    assert not choice.ours, choice


def test_enable_names_a_bad_budget_and_stays_off(monkeypatch):
    triton = pytest.importorskip("triton")  # noqa: F841 - enable() needs Triton
    import linear_layouts
    from linear_layouts.passes.drop_in import hook
    from linear_layouts.passes.drop_in.plugin_config import PluginError
    linear_layouts.disable()
    monkeypatch.setenv(ROUND_SCRATCH_VARIABLE, "16k")
    with pytest.raises(PluginError, match=f"{ROUND_SCRATCH_VARIABLE}='16k'"):
        linear_layouts.enable()
    assert hook.active_config() is None      # the plugin stays as it was: off
