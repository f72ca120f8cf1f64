"""The stock gate decided before planning (``ll-lower-conversions{gate_first=true}``, what the
hook runs when no remark is printed): where the fitted model keeps no family of a conversion's
scope and candidate methods, the conversion is left to Triton without building a plan.  These
tests show that this is the decision the gate takes on the planned pick, on random conversions
(under the fitted model and under a model with every gate flipped, so that the families it names
are checked, not just the ones that happen to be stock's today) and on the Liger-Kernel corpus;
and that ``planner.candidate_methods`` names every method the planner's candidates have."""

from __future__ import annotations

import dataclasses
import glob
import os
import random

import pytest

from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.stock_hazards import stock_hazard
from linear_layouts.lowering.planner import (INVALID_CONVERSION_ERRORS, candidate_methods, plan_candidates,
                                             plan_conversion)
from linear_layouts.lowering.target import target_named
from linear_layouts.passes import lower_conversions
from linear_layouts.passes.ir.diagnostics import IRError
from linear_layouts.passes.lower_conversions import ConvertOutcome, lower_text
from support.random_layouts import random_case

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "lit", "corpus", "liger_kernel")
SM90 = target_named("sm_90")


@pytest.fixture(autouse=True)
def _gate_on_under_36(monkeypatch):
    """The suite turns the gate off (conftest.py); the model answers for sm_90 with triton 3.6."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")


def _one_family_kept(model, kept: str):
    """The model with one family's decision "ours" and every other "stock's", so that the test
    checks every family name ``could_be_ours`` builds, not only today's stock ones."""
    gates = {family: dict(gate, decision="ours" if family == kept else "stock", n=99)
             for family, gate in model.gates.items()}
    return dataclasses.replace(model, gates=gates)


def _cases(n: int, seed: int):
    """Random conversions of 32-lane layouts, on sm_90 (where the model answers)."""
    rng = random.Random(seed)
    while n:
        src, dst, bits, target = random_case(rng)
        if target.warp_size == 32:
            n -= 1
            yield src, dst, bits


def test_candidate_methods_names_every_candidates_method():
    rng = random.Random(3)
    seen = set()
    for _ in range(1500):
        src, dst, bits, target = random_case(rng)
        try:
            plans, scope = plan_candidates(src, dst, bits, target)
        except INVALID_CONVERSION_ERRORS:
            continue
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


@pytest.mark.parametrize("kept_family", [None] + sorted(fitted_model.load_model().gates),
                         ids=lambda family: "fitted-model" if family is None else f"only-{family}")
def test_gate_first_is_the_gates_decision_on_the_planned_pick(monkeypatch, kept_family):
    if kept_family is not None:
        model = _one_family_kept(fitted_model.load_model(), kept_family)
        monkeypatch.setattr(fitted_model, "load_model", lambda *args, **kwargs: model)
    decided_first = picks_of_the_family = 0
    for src, dst, bits, plan in _planned_cases():
        reason = lower_conversions._gate_before_planning(src, dst, bits, SM90, measured=True)
        if plan and fitted_model.gated_family_of(plan, str(plan.scope)) == kept_family:
            picks_of_the_family += 1
            assert not reason, (kept_family, src, dst, bits)
        if not reason:
            continue
        decided_first += 1
        assert not stock_hazard(src, dst, bits, SM90)
        if plan:   # the full path: the gate on the pick leaves it to Triton too
            assert lower_conversions._follow_model(plan, src, dst, bits, SM90, ConvertOutcome("x")), \
                (fitted_model.gated_family_of(plan, str(plan.scope)), src, dst, bits)
    assert decided_first >= 20   # not vacuous


def test_a_family_kept_by_the_gate_is_planned(monkeypatch):
    """Make ``warp/shared/warps`` one the gate keeps: a warp-scope conversion through shared
    memory is then planned (and lowered), not decided first."""
    model = fitted_model.load_model()
    gates = dict(model.gates)
    gates["warp/shared/warps"] = dict(gates["warp/shared/warps"], decision="ours")
    changed = dataclasses.replace(model, gates=gates)
    monkeypatch.setattr(fitted_model, "load_model", lambda *args, **kwargs: changed)
    found = 0
    for src, dst, bits in _cases(400, seed=11):
        plan = plan_conversion(src, dst, bits, SM90)
        if plan and fitted_model.gated_family_of(plan, str(plan.scope)) == "warp/shared/warps":
            assert not lower_conversions._gate_before_planning(src, dst, bits, SM90, measured=True)
            found += 1
    assert found >= 5


def _corpus_files():
    return [p for p in sorted(glob.glob(os.path.join(CORPUS, "*.ttgir"))) if "ttg.convert_layout" in open(p).read()]


def test_gate_first_lowers_the_corpus_as_the_full_gate_does():
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.lower_conversions import LowerConversions, lower_module

    files = _corpus_files()
    assert len(files) >= 20
    decided_first = 0
    for path in files:
        text = open(path).read()
        try:
            full_text, full = lower_text(text, path, measured=True)
        except IRError:     # ops newer than the installed Triton (the corpus is 3.9's)
            continue
        module = parse_module(text, path)
        first = lower_module(module, LowerConversions(measured=True), gate_first=True)
        assert module.print(debuginfo=True) == full_text, path
        assert [o.lowered for o in first] == [o.lowered for o in full], path
        decided_first += sum("no such family is kept" in o.reason for o in first)
    assert decided_first >= 5


def test_the_pass_decides_first_only_without_remarks(monkeypatch):
    """The pass (what the hook and ll-opt run) decides first unless it prints remarks; the
    Python API (lower_text, lower_module) plans in full unless asked."""
    seen = []
    real = lower_conversions._lower_module
    monkeypatch.setattr(lower_conversions, "_lower_module",
                        lambda module, options, gate_first=False: seen.append(gate_first) or
                        real(module, options, gate_first))
    from linear_layouts.passes.framework import PassContext, run_pipeline
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.lower_conversions import LowerConversions

    path = next(p for p in _corpus_files() if "tt.approx_divf" not in open(p).read())
    for remarks in (False, True):
        run_pipeline(parse_module(open(path).read(), path), [LowerConversions(remarks=remarks)], PassContext())
    lower_text(open(path).read(), path)
    assert seen == [True, False, False]
