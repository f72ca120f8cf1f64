"""``plan_cost`` keeps a plan's cost on the plan: the same value as computing it afresh, and the
plan's equality, hash and print do not change."""

import dataclasses
import random

from linear_layouts.lowering import cost
from linear_layouts.lowering.planner import plan_candidates
from support.random_layouts import random_case


def test_the_kept_cost_is_the_cost():
    rng = random.Random(2)
    checked = 0
    for _ in range(300):
        src, dst, bits, target = random_case(rng)
        try:
            plans, _ = plan_candidates(src, dst, bits, target)
        except Exception:
            continue
        for plan in plans:
            fresh = dataclasses.replace(plan)              # no cost kept yet
            before = (repr(fresh), hash(fresh))
            first = cost.plan_cost(fresh)
            assert cost.plan_cost(fresh) is first
            assert first == cost._plan_cost(plan)
            assert (repr(fresh), hash(fresh)) == before and fresh == plan
            checked += 1
    assert checked > 200
