"""``tl.dot`` as the target's matrix instruction."""

from __future__ import annotations

from dataclasses import dataclass, field

from .translation import PortError


@dataclass
class DotPlan:
    imports: list = field(default_factory=list)
    helpers: str = ""


def plan_dots(translations, original, launch) -> DotPlan:
    plan = DotPlan()
    for t in translations:
        if t.dots:
            raise PortError("tl.dot is not ported yet")
    return plan
