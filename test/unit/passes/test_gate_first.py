"""The stock gate decided before planning (``ll-lower-conversions{gate_first=true}``, what the
hook runs when no remark is printed): where the model's rule sends every plan of a conversion's
scope and candidate methods to stock, the conversion is left to Triton without building a plan.
These tests show that this is the decision the model takes on the planned pick, on random
conversions (under the shipped per-conversion rule, and under family gates with every family
flipped in turn, so that the families it names are checked) and on the Liger-Kernel corpus;
that where nothing was measured (triton 3.9, sm_80, AMD) the conversions decided first because
no plan can gain on stock's floor (``stock_bounds.why_no_plan_gains``) are ones whose every
candidate the floor rule sends to stock, on random conversions and both corpora; and that
``planner.candidate_methods`` names every method the planner's candidates have."""

from __future__ import annotations

import dataclasses
import glob
import os
import random

import pytest

from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.lowering_choice import (Conversion, Policy, follow_model,
                                                            gate_reason_without_plan, ours)
from linear_layouts.lowering.choosing.stock_bounds import dominance
from linear_layouts.lowering.choosing.stock_hazards import stock_hazard
from linear_layouts.lowering.choosing.stock_shared import is_stock_twin
from linear_layouts.lowering.planner import candidate_methods, plan_conversion
from linear_layouts.lowering.target import target_named
from linear_layouts.passes import lower_conversions
from linear_layouts.passes.ir.diagnostics import IRError
from linear_layouts.passes.lower_conversions import lower_text
from linear_layouts.tools.fuzz.random_layouts import planned_random_cases, random_case

CORPORA = os.path.join(os.path.dirname(__file__), "..", "..", "lit", "corpus")
CORPUS = os.path.join(CORPORA, "liger_kernel")
SM90 = target_named("sm_90")


@pytest.fixture(autouse=True)
def _gate_on_under_36(monkeypatch):
    """The suite turns the gate off (conftest.py); the model answers for sm_90 with triton 3.6."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")


# The families a gate decides by (``fitted_model.gated_family_of``): those of the family gate
# shipped before the per-conversion rule, which kept the two marked "ours".
FAMILIES = {"lane/shared/1warp": "stock", "lane/shared/matrix/1warp": "stock", "lane/shared/matrix/warps": "stock",
            "lane/shared/warps": "stock", "lane/shuffle/1warp": "stock", "lane/shuffle/warps": "stock",
            "lane/shuffle/warps/half-stock-shuffles": "ours", "lane/shuffle/warps/sub-word": "stock",
            "warp/shared/matrix/warps": "stock", "warp/shared/warps": "stock", "warp/shuffle/warps": "ours",
            "warp/shuffle/warps/sub-word": "stock"}


def _family_gate(kept: "str | None" = None):
    """The shipped model as a family gate (``FAMILY_GATE``): ``FAMILIES`` as they were, or, with
    ``kept``, that family "ours" and every other "stock's", so that the test checks every family
    name ``could_be_ours`` builds, not only the stock ones."""
    gates = {family: {"decision": decision if kept is None else "ours" if family == kept else "stock", "n": 99,
                      "geomean_pick_over_stock": 1.0, "spread": 1.1, "worst": 1.2}
             for family, decision in FAMILIES.items()}
    return dataclasses.replace(fitted_model.load_model(), gates=gates, rule=fitted_model.FAMILY_GATE)


def _gate_reason(src, dst, bits) -> str:
    """Why the gate leaves the conversion to stock before planning ("" if it does not)."""
    return gate_reason_without_plan(Conversion(src, dst, bits, SM90), Policy(triton="3.6.0"))


def _model_sends_to_stock(plan, src, dst, bits) -> bool:
    """The gate on the planned pick leaves the conversion to stock."""
    return not follow_model(ours(plan), Conversion(src, dst, bits, SM90), Policy(triton="3.6.0")).ours


def _cases(n: int, seed: int):
    """Random conversions of 32-lane layouts, on sm_90 (where the model answers)."""
    rng = random.Random(seed)
    while n:
        src, dst, bits, target = random_case(rng)
        if target.warp_size == 32:
            n -= 1
            yield src, dst, bits


def test_candidate_methods_names_every_candidates_method():
    seen = set()
    for src, dst, bits, target, plans, scope in planned_random_cases(seed=3, count=1500):
        got_scope, methods = candidate_methods(src, dst, target)
        assert got_scope == scope
        for plan in plans:
            assert plan.method in methods, (src, dst, bits, target.name)
            seen.add((str(scope), str(plan.method)))
    assert {("lane", "shuffle"), ("lane", "shared"), ("warp", "shared"), ("warp", "shuffle")} <= seen


_PLANNED = []


def _planned_cases():
    """400 random sm_90 conversions with the planner's pick (planned once for the module)."""
    if not _PLANNED:
        _PLANNED.extend((src, dst, bits, plan_conversion(src, dst, bits, SM90)) for src, dst, bits in _cases(400, 5))
    return _PLANNED


def test_gate_first_is_the_shipped_rules_decision_on_the_planned_pick():
    """The shipped model (rule ``stock-shuffles``): every conversion decided first is one the
    rule sends to stock on the planned pick, and every pick the rule sends to stock whose
    conversion has no shuffle candidate is decided first."""
    assert fitted_model.load_model().rule == fitted_model.STOCK_SHUFFLES
    sent_to_stock = 0
    for src, dst, bits, plan in _planned_cases():
        reason = _gate_reason(src, dst, bits)
        to_stock = bool(plan) and _model_sends_to_stock(plan, src, dst, bits)
        sent_to_stock += to_stock
        if reason:
            assert to_stock and "no plan of ours for it is a shuffle plan" in reason, (src, dst, bits)
            one_warp = plan.scope == "lane" and (not src.has_in_dim("warp") or src.in_dim_size("warp") == 1)
            assert ("in a CTA of one warp" in reason) == one_warp, (src, dst, bits, reason)
        elif to_stock:
            _, methods = candidate_methods(src, dst, SM90)
            # decided after planning: a shuffle candidate could have been ours, a hazard, a twin
            # of stock's shared-memory code (``stock_shared``), bytes through matrices, 16 bits
            # where matrices are in play or a shared-memory pick in Triton's rounds (whether the
            # planner moves it into fewer rounds) is known from the plan only
            assert ("shuffle" in methods or stock_hazard(src, dst, bits, SM90) or is_stock_twin(plan)
                    or fitted_model.bytes_through_matrices(plan)
                    or fitted_model.sixteen_bits_where_matrices_are_in_play(plan)
                    or fitted_model.shared_memory_in_tritons_rounds(plan)), (src, dst, bits)
    # Not vacuous: the rule sends picks to stock here.  (Almost every lane-scope conversion has
    # a shuffle candidate, so under this rule little is decided before planning.)
    assert sent_to_stock >= 10


def test_the_shipped_rule_decides_first_only_without_a_shuffle_candidate():
    model = fitted_model.load_model()
    lane, warp = "lane", "warp"
    assert not fitted_model.could_be_ours(model, lane, {"shared"}, 4, stock_shuffles=32)
    assert fitted_model.could_be_ours(model, lane, {"shared", "shuffle"}, 4, stock_shuffles=32)
    assert fitted_model.could_be_ours(model, lane, {"shared"}, 4, stock_shuffles=None)
    assert fitted_model.could_be_ours(model, warp, {"shared"}, 4, stock_shuffles=None)
    # over one warp, a shared-memory pick goes to stock whatever stock does: decided first
    assert not fitted_model.could_be_ours(model, lane, {"shared"}, 1, stock_shuffles=None)
    assert fitted_model.could_be_ours(model, lane, {"shared", "shuffle"}, 1, stock_shuffles=None)


@pytest.mark.parametrize("kept_family", [None] + sorted(FAMILIES),
                         ids=lambda family: "family-gate" if family is None else f"only-{family}")
def test_gate_first_is_the_gates_decision_on_the_planned_pick(monkeypatch, kept_family):
    model = _family_gate(kept_family)
    monkeypatch.setattr(fitted_model, "load_model", lambda *args, **kwargs: model)
    decided_first = picks_of_the_family = 0
    for src, dst, bits, plan in _planned_cases():
        reason = _gate_reason(src, dst, bits)
        if plan and fitted_model.gated_family_of(plan, str(plan.scope)) == kept_family:
            picks_of_the_family += 1
            assert not reason, (kept_family, src, dst, bits)
        if not reason:
            continue
        decided_first += 1
        assert not stock_hazard(src, dst, bits, SM90)
        if plan:   # the full path: the gate on the pick leaves it to Triton too
            assert _model_sends_to_stock(plan, src, dst, bits), \
                (fitted_model.gated_family_of(plan, str(plan.scope)), src, dst, bits)
    assert decided_first >= 20   # not vacuous


def test_a_family_kept_by_the_gate_is_planned(monkeypatch):
    """Make ``warp/shared/warps`` one the gate keeps: a warp-scope conversion through shared
    memory is then planned (and lowered), not decided first."""
    model = _family_gate()
    gates = dict(model.gates)
    gates["warp/shared/warps"] = dict(gates["warp/shared/warps"], decision="ours")
    changed = dataclasses.replace(model, gates=gates)
    monkeypatch.setattr(fitted_model, "load_model", lambda *args, **kwargs: changed)
    found = 0
    for src, dst, bits in _cases(400, seed=11):
        plan = plan_conversion(src, dst, bits, SM90)
        if plan and fitted_model.gated_family_of(plan, str(plan.scope)) == "warp/shared/warps":
            assert not _gate_reason(src, dst, bits)
            found += 1
    assert found >= 5


def _corpus_files(folder: str = CORPUS):
    return [p for p in sorted(glob.glob(os.path.join(folder, "*.ttgir"))) if "ttg.convert_layout" in open(p).read()]


def _lowered_both_ways(path: str):
    """(outcomes planned in full, outcomes with the gate first) of one corpus file, after
    checking that both give the same module; None where the installed Triton cannot read it."""
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.lower_conversions import LowerConversions, lower_module

    text = open(path).read()
    try:
        full_text, full = lower_text(text, path, measured=True)
    except IRError:     # ops newer than the installed Triton (the corpus is 3.9's)
        return None
    module = parse_module(text, path)
    first = lower_module(module, LowerConversions(measured=True), gate_first=True)
    assert module.print(debuginfo=True) == full_text, path
    assert [o.lowered for o in first] == [o.lowered for o in full], path
    return full, first


def test_gate_first_lowers_the_corpus_as_the_full_gate_does():
    files = _corpus_files()
    assert len(files) >= 20
    decided_first = 0
    for path in files:
        both = _lowered_both_ways(path)
        if both is not None:
            decided_first += sum(f.reason != g.reason for f, g in zip(*both))
    # sm_90: every lane-scope conversion of the corpus has a shuffle candidate, so the measured
    # rule decides none first; its sm_80 kernels are decided by stock's floor (nothing measured).
    assert decided_first >= 5


# --- where nothing was measured: stock's floor ------------------------------------------------

FLOOR_REASONS = ("every warp-scope plan of ours", "every lane-scope plan of ours", "every plan of ours goes through")


@pytest.mark.parametrize("seed", [17, 29])
def test_no_candidate_gains_where_the_floor_decides_first(seed):
    """Triton 3.9 (no model answers): wherever the floor decides before planning, no candidate
    the planner builds gains on stock's floor (so the planned pick, whichever it is, is left to
    stock by ``choose_dominant``), on random conversions of every target."""
    policy = Policy(triton="3.9.0")
    decided_first = 0
    for src, dst, bits, target, plans, scope in planned_random_cases(seed=seed, count=300):
        reason = gate_reason_without_plan(Conversion(src, dst, bits, target), policy)
        gains = [plan for plan in plans if dominance(plan).gains]
        if reason:
            decided_first += 1
            assert any(words in reason for words in FLOOR_REASONS), reason
            assert not gains, (src, dst, bits, target.name, reason)
            if plans:
                assert not follow_model(ours(plans[0]), Conversion(src, dst, bits, target), policy).ours
    assert decided_first >= 40     # not vacuous: most shared-memory-only conversions are decided first


def test_the_floor_decides_first_only_without_a_shuffle_candidate_or_where_the_floor_is_nothing():
    """A shuffle candidate can beat a shared-memory floor (no shared access, no barrier) or a
    shuffle floor (fewer shuffles): such a conversion is planned."""
    policy = Policy(triton="3.9.0")
    shuffle_floors_planned = 0
    for src, dst, bits, target, plans, scope in planned_random_cases(seed=41, count=300):
        reason = gate_reason_without_plan(Conversion(src, dst, bits, target), policy)
        _, methods = candidate_methods(src, dst, target)
        if reason and "shuffle" in methods:
            assert "moves data" in reason, reason   # the floor is nothing: any plan needs more
        shuffle_floors_planned += not reason and "shuffle" in methods
    assert shuffle_floors_planned >= 10


@pytest.mark.parametrize("corpus", ["liger_kernel", "fla", "cuda80", "gfx942"])
def test_the_floor_first_lowers_a_corpus_as_planning_in_full_does(monkeypatch, corpus):
    """Under triton 3.9 (no model answers), each corpus module lowers to the same text with the
    floor deciding first as with every conversion planned, and the floor decides some first."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.9.0")
    files = _corpus_files(os.path.join(CORPORA, corpus))
    assert files
    decided_first = 0
    for path in files:
        both = _lowered_both_ways(path)
        if both is not None:
            decided_first += sum(any(words in g.reason for words in FLOOR_REASONS) for g in both[1])
    assert decided_first >= 1, corpus


def test_the_pass_decides_first_only_without_remarks(monkeypatch):
    """The pass (what the hook and ll-opt run) decides first unless it prints remarks; the
    Python API (lower_text, lower_module) plans in full unless asked."""
    seen = []
    real = lower_conversions.plan_module
    monkeypatch.setattr(lower_conversions, "plan_module",
                        lambda module, options, gate_first=False, plans=None: seen.append(gate_first) or
                        real(module, options, gate_first, plans))
    from linear_layouts.passes.framework import PassContext, run_pipeline
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.lower_conversions import LowerConversions

    path = next(p for p in _corpus_files() if "tt.approx_divf" not in open(p).read())
    for remarks in (False, True):
        run_pipeline(parse_module(open(path).read(), path), [LowerConversions(remarks=remarks)], PassContext())
    lower_text(open(path).read(), path)
    assert seen == [True, False, False]
