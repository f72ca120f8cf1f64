"""``ll-lower-conversions{candidate_for=KEY:RANK}``: one conversion of a kernel takes another
verified candidate while every other conversion is planned as usual (what
benchmarks/plan_choice.py kernels needs to time the conversions of a kernel one at a time)."""

from support import REPO

from linear_layouts.lowering.choosing import measured_choices
from linear_layouts.lowering.describe import instruction_counts
from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.passes.lower_conversions import lower_text

GATHER = REPO / "test" / "lit" / "corpus" / "cuda90" / "gather.ttgir"


def _mixes(outcomes):
    return [instruction_counts(plan_cost(o.plan), o.plan.target) for o in outcomes]


def _key(plan):
    return measured_choices.conversion_key(plan.src, plan.dst, plan.element_bits, plan.target.name)


def test_one_conversion_takes_another_candidate_the_others_do_not_move():
    text = GATHER.read_text()
    _, default = lower_text(text, filename=str(GATHER))
    assert len(default) == 3 and all(o.island is not None for o in default)
    first = default[0].plan
    alternative = plan_conversion(first.src, first.dst, first.element_bits, first.target, 1)
    assert alternative, "the first conversion has a second candidate"
    moved_mix = instruction_counts(plan_cost(alternative), alternative.target)
    _, moved = lower_text(text, filename=str(GATHER), candidate_for=f"{_key(first)}:1")
    # Every convert of that conversion (the kernel has it twice) moves; the other one does not.
    want = [moved_mix if _key(o.plan) == _key(first) else mix for o, mix in zip(default, _mixes(default))]
    assert _mixes(moved) == want
    assert want.count(moved_mix) == 2 and _mixes(moved)[2] == _mixes(default)[2]
    assert moved_mix != _mixes(default)[0]


def test_stock_leaves_that_conversion_to_triton():
    text = GATHER.read_text()
    _, default = lower_text(text, filename=str(GATHER))
    third = default[2].plan
    _, outcomes = lower_text(text, filename=str(GATHER), candidate_for=f"{_key(third)}:stock")
    assert [o.island is not None for o in outcomes] == [True, True, False]
    assert outcomes[2].reason == "option candidate_for: this conversion is left to Triton"
