"""``plan_cost`` keeps a plan's cost on the plan: the same value as computing it afresh, and the
plan's equality, hash and print do not change."""

import dataclasses

from linear_layouts.lowering import cost
from linear_layouts.tools.fuzz.random_layouts import planned_random_cases


def test_the_kept_cost_is_the_cost():
    checked = 0
    for *_, plans, _ in planned_random_cases(seed=2, count=300):
        for plan in plans:
            fresh = dataclasses.replace(plan)              # no cost kept yet
            before = (repr(fresh), hash(fresh))
            first = cost.plan_cost(fresh)
            assert cost.plan_cost(fresh) is first
            assert first == cost._plan_cost(plan)
            assert (repr(fresh), hash(fresh)) == before and fresh == plan
            checked += 1
    assert checked > 200
