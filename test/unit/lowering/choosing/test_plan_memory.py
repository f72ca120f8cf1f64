"""``plan_memory.ModulePlans`` remembers a module's choices as well as its plans: an equal
request under an equal policy takes the first answer; a policy that differs is asked again."""

from linear_layouts.lowering.choosing.lowering_choice import Policy
from linear_layouts.lowering.choosing.plan_memory import ModulePlans


def test_an_equal_request_under_an_equal_policy_is_answered_once():
    plans, asked = ModulePlans(None), []

    def choose(answer):
        def ask():
            asked.append(answer)
            return answer
        return ask

    first = plans.choice("convert A->B", Policy(triton="3.6.0"), choose("first"))
    again = plans.choice("convert A->B", Policy(triton="3.6.0"), choose("again"))
    other_policy = plans.choice("convert A->B", Policy(triton="3.6.0", ranks={"k": 1}), choose("ranked"))
    other_request = plans.choice("convert B->A", Policy(triton="3.6.0"), choose("reverse"))
    assert (first, again, other_policy, other_request) == ("first", "first", "ranked", "reverse")
    assert asked == ["first", "ranked", "reverse"]
    # A policy holding a dict (``ranks``) is compared, never hashed: asked again, it is found.
    assert plans.choice("convert A->B", Policy(triton="3.6.0", ranks={"k": 1}), choose("x")) == "ranked"
