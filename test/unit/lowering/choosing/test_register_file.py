"""The register-file rule (lowering/choosing/register_file.py): a conversion whose two layouts hold
more 32-bit values a thread than the target has registers goes to stock, decided before planning."""

import dataclasses

import pytest

from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.choosing import lowering_choice
from linear_layouts.lowering.choosing.lowering_choice import Conversion, Policy, choose_conversion
from linear_layouts.lowering.choosing.plan_memory import ModulePlans
from linear_layouts.lowering.choosing.register_file import past_register_file, registers_held
from linear_layouts.lowering.target import target_named


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the gate off (test/unit/conftest.py); the rule is a gate."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


# A bf16 slice whose lanes all hold the same 1,024 registers, to a 32-register linear layout
# (test/lit/lower-conversions/Inputs/replicated-slice-round-trips.ttgir).
REPLICATED_SRC = ("#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [8, 8], threadsPerWarp = [1, 32], "
                  "warpsPerCTA = [8, 1], order = [1, 0]}>}>")
REPLICATED_DST = ("#ttg.linear<{register = [[512], [256], [64], [4096], [1024]], "
                  "lane = [[16], [2048], [8], [32], [4]], warp = [[128], [2], [1]], block = []}>")


def _blocked(size, threads, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


def _layouts(src, dst, shape):
    return to_linear_layout(src, shape), to_linear_layout(dst, shape)


def test_the_replicated_slice_holds_1056_values_and_goes_to_stock():
    a, b = _layouts(REPLICATED_SRC, REPLICATED_DST, (8192,))
    assert (registers_held(a, 16), registers_held(b, 16)) == (1024, 32)
    reason = past_register_file(a, b, 16, target_named("sm_90"))
    assert reason.startswith("stock Triton's lowering: the two layouts hold 1056 32-bit values a thread (1024 + 32), "
                             "more than the 255 registers a thread has on sm_90")


# (source, destination, shape, bits, target, held, taken): the docstring's examples and the edges.
ONE_WARP_64x64 = (_blocked([1, 32], [32, 1], [1, 1], [1, 0]), _blocked([32, 1], [1, 32], [1, 1], [0, 1]))
CASES = [
    (*ONE_WARP_64x64, (64, 64), 16, "sm_90", 256, True),        # 128 + 128 > 255
    (*ONE_WARP_64x64, (64, 64), 8, "sm_90", 256, True),         # an 8-bit element still takes a register
    (*ONE_WARP_64x64, (32, 64), 32, "sm_90", 128, False),       # 64 + 64
    (*ONE_WARP_64x64, (32, 64), 64, "sm_90", 256, True),        # a 64-bit element takes two
    (*ONE_WARP_64x64, (64, 64), 16, "sm_80", 256, True),
    (*ONE_WARP_64x64, (64, 64), 16, "gfx942", 256, False),      # CDNA: 512 registers a lane
    (_blocked([32], [32], [1], [0]), _blocked([8], [32], [1], [0]), (1024,), 32, "sm_90", 64, False),
    (REPLICATED_SRC, REPLICATED_DST, (8192,), 16, "gfx942", 1056, True),
]


@pytest.mark.parametrize("src,dst,shape,bits,target,held,taken", CASES)
def test_the_values_both_layouts_hold_against_the_register_file(src, dst, shape, bits, target, held, taken):
    a, b = _layouts(src, dst, shape)
    assert registers_held(a, bits) + registers_held(b, bits) == held
    assert bool(past_register_file(a, b, bits, target_named(target))) is taken


def test_the_limit_is_the_targets_and_an_unknown_register_file_takes_nothing():
    a, b = _layouts(*ONE_WARP_64x64, (64, 64))
    sm_90 = target_named("sm_90")
    assert not past_register_file(a, b, 16, dataclasses.replace(sm_90, registers_per_thread=256))
    assert past_register_file(a, b, 16, dataclasses.replace(sm_90, registers_per_thread=255))
    assert not past_register_file(a, b, 16, dataclasses.replace(sm_90, registers_per_thread=0))


def _choice(policy, src=REPLICATED_SRC, dst=REPLICATED_DST, shape=(8192,), bits=16, target="sm_90"):
    a, b = _layouts(src, dst, shape)
    return choose_conversion(Conversion(a, b, bits, target_named(target)), policy, ModulePlans(None))


@pytest.mark.parametrize("triton", ["3.6.0", "3.9.0"])
def test_the_choice_leaves_it_to_stock_without_planning(triton, monkeypatch):
    def no_planning(*args, **kwargs):
        raise AssertionError("the rule decides before planning")
    monkeypatch.setattr(ModulePlans, "plan", no_planning)
    choice = _choice(Policy(triton=triton))
    assert not choice.ours and choice.twin_plan is None
    assert "the two layouts hold 1056 32-bit values a thread" in choice.reason


def test_with_the_gate_off_the_planner_decides(monkeypatch):
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    assert _choice(Policy(triton="3.6.0")).ours
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE")
    assert _choice(Policy(triton="3.6.0", stock_gate=False)).ours


def test_a_stock_hazard_overrules_it(monkeypatch):
    monkeypatch.setattr(lowering_choice, "stock_hazard", lambda *args: "stock's lowering hangs here (test)")
    choice = _choice(Policy(triton="3.6.0"))
    assert choice.ours and choice.forced and "hangs here" in choice.note


def test_legacy_mode_and_a_named_rank_are_not_gated():
    assert "registers a thread has" not in _choice(Policy(triton="3.6.0", legacy=True)).reason
    a, b = _layouts(REPLICATED_SRC, REPLICATED_DST, (8192,))
    from linear_layouts.lowering.choosing.measured_choices import conversion_key
    ranks = {conversion_key(a, b, 16, "sm_90"): 0}
    assert _choice(Policy(triton="3.6.0", ranks=ranks)).ours
