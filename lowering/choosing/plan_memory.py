"""Plans remembered: the planner is a pure function of (source, destination, element bits,
target, rank), and it verifies every plan it returns, so a plan made once may be used again.

Two memories, both explicit objects:

* :class:`ProcessPlans`: plans made in this process, least recently used dropped first.  Real
  programs ask for the same conversion again and again (every autotuning config, every
  recompile of a kernel).  ``PROCESS_PLANS`` is the one the passes use; ``forget()`` empties it.
* :class:`ModulePlans`: the plans of one module's lowering, and the choices made with them.  A
  kernel often converts the same layouts twice (rotary embeddings: the cosine and the sine
  halves; attention: one conversion per loop stage): the second takes the first one's plan,
  even where the process memory is off.  The same work, not less checking.  One compile asks
  its questions twice: from the conversions' types before the module is printed
  (``passes.drop_in.types_first``), then in the pass; the drop-in hands both the same memory, so the
  pass takes the answers the types gave instead of asking again.

Example::

    plans = ModulePlans(PROCESS_PLANS)        # or ModulePlans(None): this module only
    plans.plan(src, dst, 16, target)          # planned and verified
    plans.plan(src, dst, 16, target)          # the same object, not planned again
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Optional

from ..planner import plan_conversion


class ProcessPlans:
    """Plans by key, at most ``kept`` of them, the least recently used dropped first."""

    def __init__(self, kept: int = 4096):
        self.kept = kept
        self._plans: "OrderedDict[tuple, object]" = OrderedDict()

    def __len__(self) -> int:
        return len(self._plans)

    def plan(self, key: tuple):
        """The plan of ``key`` (``plan_conversion``'s arguments), made and kept if absent."""
        plan = self._plans.get(key)
        if plan is None:
            plan = plan_conversion(*key)
            self._plans[key] = plan
            if len(self._plans) > self.kept:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        return plan

    def forget(self) -> None:
        self._plans.clear()


PROCESS_PLANS = ProcessPlans()


class ModulePlans:
    """The plans of one module's lowering; ``across_compiles``: the process memory to share
    (None: plans are remembered within the module only)."""

    def __init__(self, across_compiles: Optional[ProcessPlans]):
        self.across_compiles = across_compiles
        self._plans: dict[tuple, object] = {}
        self._choices: dict[object, list[tuple[object, object]]] = {}
        # The results (value ids) of conversions already built in Triton's module by the drop-in
        # (``passes.drop_in.in_place``): each such convert is dead there, left to Triton's clean-up, and
        # a pass over the same module after it leaves it alone.
        self.built_in_place: set[int] = set()
        # The results of conversions the drop-in left to Triton after choosing ours, because
        # taking them would have cost a text route they cannot pay back
        # (``passes.drop_in.in_place.not_worth_a_text_route``): a pass over the module leaves them too.
        self.left_to_stock: set[int] = set()

    def plan(self, src, dst, bits: int, target, rank: int = 0):
        """The verified plan of rank ``rank`` (``lowering.planner.plan_conversion``), or the
        planner's ``Unsupported``."""
        key = (src, dst, bits, target, rank)
        if key not in self._plans:
            self._plans[key] = (self.across_compiles.plan(key) if self.across_compiles is not None
                                else plan_conversion(*key))
        return self._plans[key]

    def choice(self, request, policy, choose: Callable[[], object]):
        """The choice for ``request`` under ``policy``: the one made before in this module, else
        ``choose()``'s, kept.  The choice is a pure function of the two (``lowering_choice``), so
        only an equal request under an equal policy takes it.  (A policy holds a dict, so it is
        compared, not hashed.)"""
        made = self._choices.setdefault(request, [])
        for earlier_policy, choice in made:
            if earlier_policy == policy:
                return choice
        choice = choose()
        made.append((policy, choice))
        return choice
