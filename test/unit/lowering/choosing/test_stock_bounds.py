"""Stock's floor (lowering/choosing/stock_bounds.py) on conversions whose stock final code is known, and
the choice it makes where nothing was measured (lowering.choosing.fitted_model.choose_dominant).  The floors
below were read off stock Triton's PTX / AMDGCN of the single-conversion kernel
(``benchmarks/studies/stock_dominance.py`` compiles them; the same numbers on triton 3.6 and 3.9)."""

import pytest

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout as _to_linear_layout
from linear_layouts.lowering.choosing import fitted_model as choice
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.choosing.stock_bounds import Costly, dominance, more_than, stock_floor

RELEASE = TritonConventions((3, 9))


def layout(text, shape):
    return _to_linear_layout(text, shape, conventions=RELEASE)


def blocked(size, threads, warps, order=None):
    order = order or list(range(len(size)))[::-1]
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the choice off (test/unit/conftest.py); these tests are about it."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


def test_the_docstring_example_crosses_warps_through_shared_memory():
    """1024 x i32, 4 warps, sizePerThread 4 -> 1: 8 registers a side, 256 bits per lane: 8
    wavefronts each way, one CTA barrier (stock's PTX: 2 st.shared.v4 + 8 ld.shared.b32 + bar.sync)."""
    src, dst = layout(blocked([4], [32], [4]), (1024,)), layout(blocked([1], [32], [4]), (1024,))
    assert stock_floor(src, dst, 32, "sm_90") == Costly(store_wavefronts=8, load_wavefronts=8, cta_barriers=1)


def test_a_shuffle_conversion_floors_at_stocks_shuffles():
    """The f16 pair (64x128, sizePerThread [1, 8] -> [1, 4]): stock shuffles 32 words per thread
    each way (64 in the measured round trip) and nothing else."""
    shape = (64, 128)
    src, dst = layout(blocked([1, 8], [4, 8], [4, 1]), shape), layout(blocked([1, 4], [4, 8], [4, 1]), shape)
    assert stock_floor(src, dst, 16, "sm_90") == Costly(shuffles=32)


def linear(registers):
    return (f"#ttg.linear<{{register = {registers}, lane = [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]], "
            "warp = [[2, 0], [4, 0]], block = []}>")


def test_a_renaming_costs_nothing():
    src, dst = layout(linear("[[0, 1], [0, 32]]"), (8, 64)), layout(linear("[[0, 32], [0, 1]]"), (8, 64))
    assert stock_floor(src, dst, 32, "sm_80") == Costly()
    assert stock_floor(src, src, 32, "sm_80") == Costly()


def test_one_wave_on_amd_needs_no_barrier():
    """AMD's back end drops s_barrier in a workgroup of one wave: the floor has none; NVIDIA's
    one-warp kernel keeps a warp barrier."""
    shape = (64, 64)
    src, dst = layout(blocked([1, 4], [4, 16], [1, 1]), shape), layout(blocked([4, 1], [16, 4], [1, 1]), shape)
    floor = stock_floor(src, dst, 32, "gfx942")   # 64 registers of 32 bits a lane, 64 lanes: 128 x 128 bytes
    assert floor == Costly(store_wavefronts=128, load_wavefronts=128)
    src32, dst32 = layout(blocked([1, 4], [4, 8], [1, 1]), shape), layout(blocked([4, 1], [8, 4], [1, 1]), shape)
    assert stock_floor(src32, dst32, 32, "sm_80").warp_barriers == 1


def test_barriers_compare_as_cta_then_all_together():
    stock = Costly(cta_barriers=1)
    assert more_than(Costly(warp_barriers=1), stock) == []            # a warp barrier for a CTA one: fine
    assert more_than(Costly(cta_barriers=1), Costly(warp_barriers=1)) == ["cta_barriers (1 > 0)"]
    assert more_than(Costly(warp_barriers=2), stock) == ["barriers (2 > 1)"]
    assert more_than(Costly(shuffles=3, selects=1), Costly(shuffles=4)) == ["selects (1 > 0)"]


def test_where_nothing_was_measured_a_plan_needing_more_goes_to_stock():
    """The f16 pair on sm_80 (no model): our pick goes through shared memory where stock
    shuffles; the remark names what ours needs more of."""
    shape = (64, 128)
    plan = plan_conversion(layout(blocked([1, 8], [4, 8], [4, 1]), shape),
                           layout(blocked([1, 4], [4, 8], [4, 1]), shape), 16, "sm_80")
    assert plan.method == "shared"
    decision = choice.decide(plan, "sm_80", "3.9.0")
    assert decision.plan is None
    assert "needs more store_wavefronts" in decision.reason and "load_wavefronts" in decision.reason


def test_where_nothing_was_measured_a_plan_that_only_ties_goes_to_stock():
    """1024 x i32 sizePerThread 4 -> 1 over 4 warps: our shared-memory plan needs what stock needs
    at least, no more and no fewer: a tie, which gains nothing for the island's compile time, so
    stock, on sm_90 under 3.9 as on gfx942; the remark says so."""
    for target in ("sm_90", "gfx942"):
        warp = 32 if target.startswith("sm") else 64
        n = 1024 if warp == 32 else 2048
        plan = plan_conversion(layout(blocked([4], [warp], [4]), (n,)), layout(blocked([1], [warp], [4]), (n,)),
                               32, target)
        verdict = dominance(plan)
        assert verdict.holds and not verdict.fewer() and not verdict.gains, verdict.reason()
        decision = choice.decide(plan, target, "3.9.0")
        assert decision.plan is None
        assert "needs just what stock Triton's lowering needs at least" in decision.reason
        assert "no gain to show for the island's compile time" in decision.reason


@pytest.mark.parametrize("ours, stock, floor_says_nothing, gains", [
    (Costly(shuffles=32), Costly(shuffles=64), False, True),                   # fewer shuffles, nothing more
    (Costly(shuffles=32, selects=1), Costly(shuffles=64), False, False),       # one select more
    (Costly(store_wavefronts=8, load_wavefronts=8, cta_barriers=1),
     Costly(store_wavefronts=8, load_wavefronts=8, cta_barriers=1), False, False),   # a tie
    (Costly(store_wavefronts=8, load_wavefronts=8, warp_barriers=1),
     Costly(store_wavefronts=8, load_wavefronts=8, cta_barriers=1), False, True),    # a warp barrier for a CTA one
    (Costly(store_wavefronts=8, load_wavefronts=8), Costly(store_wavefronts=8, load_wavefronts=8, cta_barriers=1),
     False, True),                                                              # one barrier fewer
    (Costly(), Costly(), True, True),                # stock moves data its floor cannot show; ours moves nothing
    (Costly(selects=3), Costly(), True, False),      # ... and ours selects
])
def test_a_gain_is_no_more_of_any_kind_and_fewer_of_some(ours, stock, floor_says_nothing, gains):
    from linear_layouts.lowering.choosing.stock_bounds import Dominance, more_than
    verdict = Dominance(ours, stock, tuple(more_than(ours, stock)), floor_says_nothing)
    assert verdict.gains is gains


def test_warp_dependent_selects_are_counted_for_the_choice():
    """gfx942, i8, 8 waves, a source broadcast over the waves: each wave keeps its own register
    of 4 (no shuffle, no shared memory).  The planner's select count (per lane) says 0; the final
    code has 3 v_cndmask, and the choice counts 3: more than stock's floor here (which is 0: each
    wave already holds what it needs), so left to Triton."""
    from linear_layouts.lowering.cost import plan_cost
    from linear_layouts.lowering.choosing.stock_bounds import plan_costly

    src = layout(blocked([8], [64], [8]), (4,))
    dst = layout("#ttg.linear<{register = [], lane = [[0], [0], [0], [0], [0], [0]], warp = [[2], [0], [1]], "
                 "block = []}>", (4,))
    plan = plan_conversion(src, dst, 8, "gfx942")
    assert plan.method == "shuffle" and plan_cost(plan).selects == 0
    assert plan_costly(plan).selects == 3
    assert stock_floor(src, dst, 8, "gfx942") == Costly()
    assert dominance(plan).more == ("selects (3 > 0)",)


def test_the_unplanned_example_is_decided_on_the_floor_alone():
    """``why_no_plan_gains``'s docstring example: 64x64 bf16 across warps on sm_80 (shared memory
    only; 32 distinct elements a thread, 16 wavefronts each way and a CTA barrier at least): no
    plan of ours can gain, said before any plan is built; the pick, planned, only ties."""
    from linear_layouts.lowering.choosing.stock_bounds import why_no_plan_gains
    from linear_layouts.lowering.plan import Method, Scope
    from linear_layouts.lowering.remark_words import with_detail

    shape = (64, 64)
    src = layout(blocked([1, 8], [4, 8], [4, 1]), shape)
    dst = layout(blocked([8, 1], [8, 4], [1, 4], order=[0, 1]), shape)
    floor = Costly(store_wavefronts=16, load_wavefronts=16, cta_barriers=1)
    assert stock_floor(src, dst, 16, "sm_80") == floor
    assert with_detail(why_no_plan_gains(src, dst, 16, "sm_80", Scope.WARP, {Method.SHARED})) == (
        "stock Triton's lowering: every warp-scope plan of ours goes through shared memory and needs at least "
        "what stock Triton's shared-memory round trip needs at least (16 store and 16 load wavefronts, 1 barrier): no "
        "gain to show for the island's compile time (stock at least: store_wavefronts=16 load_wavefronts=16 "
        "cta_barriers=1; lowering/choosing/stock_bounds.py)")
    # A shuffle candidate could beat the floor: only the plan tells.
    assert why_no_plan_gains(src, dst, 16, "sm_80", Scope.WARP, {Method.SHARED, Method.SHUFFLE}) == ""
    verdict = dominance(plan_conversion(src, dst, 16, "sm_80"))
    assert verdict.holds and not verdict.gains


def test_a_shuffle_floor_rules_out_shared_memory_plans():
    """The f16 pair: stock shuffles 32 words a thread; a conversion with only shared-memory
    candidates cannot gain on it (stores, which stock has none of), one with shuffles might."""
    from linear_layouts.lowering.choosing.stock_bounds import why_no_plan_gains
    from linear_layouts.lowering.plan import Method, Scope

    shape = (64, 128)
    src, dst = layout(blocked([1, 8], [4, 8], [4, 1]), shape), layout(blocked([1, 4], [4, 8], [4, 1]), shape)
    assert "with 32 warp shuffle(s) a thread and no shared-memory access" in \
        why_no_plan_gains(src, dst, 16, "sm_90", Scope.LANE, {Method.SHARED})
    assert why_no_plan_gains(src, dst, 16, "sm_90", Scope.LANE, {Method.SHARED, Method.SHUFFLE}) == ""
