"""The order of the questions (lowering/choosing/choice_order.py): every rule names a function
that exists, an evidence file that exists and a name docs/lowering-choice.md uses; the walk asks
the rules in the declared order; and on known conversions the rule that answers is the expected
one."""

from types import SimpleNamespace

import pytest

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering.choosing import choice_order, fitted_model, lowering_choice
from linear_layouts.lowering.choosing.choice_order import (ALL_RULES, CONVERSION_RULES, FITTED_RULES, LIMIT_RULES,
                                                           PLANNED_RULES, first_answer)
from linear_layouts.lowering.choosing.lowering_choice import (Conversion, LoweringChoice, Policy, choose_conversion,
                                                              kept_among_islands, ours)
from linear_layouts.lowering.choosing.plan_memory import ModulePlans
from linear_layouts.lowering.plan import Method
from linear_layouts.lowering.target import target_named
from support import REPO


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the gate off (test/unit/conftest.py); most rules are the gate's."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


def _module_of(rule):
    return choice_order.import_module(f"{choice_order.__package__}.{rule.answered_by.rsplit('.', 1)[0]}")


def test_every_rule_names_a_function_that_exists():
    assert [rule.name for rule in ALL_RULES
            if not callable(getattr(_module_of(rule), rule.answered_by.rsplit(".", 1)[1], None))] == []


def test_every_rules_evidence_is_a_file_of_the_repository():
    missing = [(rule.name, rule.evidence) for rule in ALL_RULES if not (REPO / rule.evidence).is_file()]
    assert missing == []


def test_every_rule_is_named_in_the_choices_documentation():
    doc = (REPO / "docs" / "lowering-choice.md").read_text(encoding="utf-8")
    section = doc[doc.index("## The order of the questions"):]
    assert [rule.name for rule in ALL_RULES if f"`{rule.name}`" not in section] == []
    assert "lowering/choosing/choice_order.py" in section


def test_rule_names_are_unique_and_say_where_they_were_measured():
    names = [rule.name for rule in ALL_RULES]
    assert len(names) == len(set(names))
    assert all(rule.question and rule.measured_on for rule in ALL_RULES)


def _recording(monkeypatch, rules, asked):
    """Each of ``rules``' functions in its module replaced by one that records its rule's name and
    gives no answer, but the last, which answers."""
    for rule in rules:
        last = rule is rules[-1]
        monkeypatch.setattr(_module_of(rule), rule.answered_by.rsplit(".", 1)[1],
                            lambda *args, name=rule.name, last=last: asked.append(name) or (
                                LoweringChoice(reason="test") if last else None))


def test_the_walk_asks_the_conversion_rules_in_the_declared_order(monkeypatch):
    asked = []
    _recording(monkeypatch, CONVERSION_RULES, asked)
    layout = to_linear_layout(_blocked([1], [32], [4], [0]), (128,))
    choice = choose_conversion(Conversion(layout, layout, 32, target_named("sm_90")), Policy(triton="3.6.0"),
                               ModulePlans(None))
    assert asked == [rule.name for rule in CONVERSION_RULES]
    assert choice.rule == CONVERSION_RULES[-1].name and choice.reason == "test"


def test_the_walk_asks_the_planned_and_limit_rules_in_the_declared_order(monkeypatch):
    asked = []
    _recording(monkeypatch, PLANNED_RULES, asked)
    rule, answer = first_answer(PLANNED_RULES, None, None, None, None)
    assert asked == [r.name for r in PLANNED_RULES] and rule is PLANNED_RULES[-1] and answer.reason == "test"
    asked.clear()
    _recording(monkeypatch, LIMIT_RULES, asked)
    assert first_answer(LIMIT_RULES, None, None, None)[0] is LIMIT_RULES[-1]
    assert asked == [r.name for r in LIMIT_RULES]


def test_the_fitted_rules_are_in_the_order_fitted_model_asks_them():
    """``choose_by_stock_shuffles`` asks one warp, ``STOCK_RULES``, the lane-scope rule, then
    ``STOCK_RULES_AFTER_SHUFFLES``; what none takes is the pick."""
    walked = (["one_warp_choice"] + [takes for takes, _, _ in fitted_model.STOCK_RULES] + ["stock_shuffles_choice"]
              + [takes for takes, _, _ in fitted_model.STOCK_RULES_AFTER_SHUFFLES] + ["choose_by_stock_shuffles"])
    assert [rule.answered_by for rule in FITTED_RULES] == [f"fitted_model.{name}" for name in walked]


# --- the rule that answers, on known conversions (layouts as triton 3.6 reads them) -----------

RELEASE = TritonConventions((3, 6))


def _blocked(size, threads, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


SPT8 = _blocked([1, 8], [4, 8], [4, 1], [1, 0])
SPT4 = _blocked([1, 4], [4, 8], [4, 1], [1, 0])
# stock 64 shuffles a thread, our pick 32 (fitted_model's docstring): kept
HALVES = (_blocked([1, 8], [2, 16], [4, 1], [1, 0]), _blocked([1, 4], [2, 16], [4, 1], [1, 0]), (32, 16), 32)
ONE_WARP = (_blocked([1, 4], [8, 4], [1, 1], [1, 0]), _blocked([4, 1], [4, 8], [1, 1], [0, 1]), (32, 32), 32)
WARP_SCOPE = (_blocked([1, 4], [8, 4], [4, 1], [1, 0]), _blocked([4, 1], [4, 8], [1, 4], [0, 1]), (64, 64), 32)
REGISTER_FILE = (_blocked([1, 32], [32, 1], [1, 1], [1, 0]), _blocked([32, 1], [1, 32], [1, 1], [0, 1]), (64, 64), 16)
TOO_MANY = (_blocked([2048], [32], [1], [0]), _blocked([1024], [32], [1], [0]), (65536,), 32)
SHUFFLES_ONLY = (Method.NOOP, Method.RENAME, Method.SHARED)

# (source, destination, shape, bits, policy beyond triton 3.6.0, the rule, ours)
ANSWERS = [
    (*TOO_MANY, {}, "too many elements", False),
    (SPT8, SPT4, (64, 128), 16, {"legacy": True}, "legacy", True),
    (SPT8, SPT8, (64, 128), 16, {}, "stock moves nothing", False),
    (*REGISTER_FILE, {}, "past the register file", False),
    (*WARP_SCOPE, {"triton": "3.9.0", "gate_first": True}, "gate before planning", False),
    (*HALVES, {"candidate": 1}, "rank asked for", True),
    (SPT8, SPT4, (64, 128), 32, {}, "measured", False),
    (SPT8, SPT4, (64, 128), 16, {"stock_gate": False}, "fitted model", True),
    (*WARP_SCOPE, {"triton": "3.9.0"}, "stock's floor", False),
    (*ONE_WARP, {}, "one warp", False),
    (SPT8, SPT4, (64, 128), 16, {}, "sixteen bits where matrices are in play", False),
    (*WARP_SCOPE, {}, "twins of stock's code", False),
    (SPT8, SPT4, (32, 128), 32, {}, "stock shuffles", False),
    (*HALVES, {}, "the pick stands", True),
    (*HALVES, {"owned": SHUFFLES_ONLY}, "methods owned", False),
]


@pytest.mark.parametrize("src,dst,shape,bits,policy,rule,taken", ANSWERS, ids=[a[-2] for a in ANSWERS])
def test_the_rule_that_answers(src, dst, shape, bits, policy, rule, taken):
    conversion = Conversion(to_linear_layout(src, shape, conventions=RELEASE),
                            to_linear_layout(dst, shape, conventions=RELEASE), bits, target_named("sm_90"))
    choice = choose_conversion(conversion, Policy(**{"triton": "3.6.0", **policy}), ModulePlans(None))
    assert (choice.rule, choice.ours) == (rule, taken), choice.reason


def test_a_twin_among_islands_is_named_by_the_kernels_rule():
    src, dst, shape, bits = HALVES
    conversion = Conversion(to_linear_layout(src, shape, conventions=RELEASE),
                            to_linear_layout(dst, shape, conventions=RELEASE), bits, target_named("sm_90"))
    gains = choose_conversion(conversion, Policy(triton="3.6.0"), ModulePlans(None))
    twin = LoweringChoice(reason="stock's own code (test)", twin_plan=gains.plan, rule="twins of stock's code")
    kept = kept_among_islands([twin, gains])
    assert [c.rule for c in kept] == ["twins among islands", "the pick stands"] and kept[0].ours


def test_the_rule_is_no_part_of_the_answer():
    """Two answers that differ only in the rule that gave them are the same answer."""
    plan = SimpleNamespace(method=Method.SHUFFLE)
    named = lowering_choice.named(ours(plan), CONVERSION_RULES[0])
    assert named.rule == CONVERSION_RULES[0].name and named == ours(plan)
