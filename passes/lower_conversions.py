"""``ll-lower-conversions``: replace each ``ttg.convert_layout`` (and, where asked, each
``ttg.local_load``, ``ttg.local_store`` and ``ttg.local_alloc`` with a source) by an
LLVM-dialect island.

A *conversion* here is any op that changes the layout a tensor is held in: registers to
registers (``convert_layout``), shared memory to registers (``local_load``) or registers to
shared memory (``local_store``, ``local_alloc``); hence one pass, and one name, for all four.

For every such op, in order:

1. read what it asks for (``passes.op_requests``: its layouts, element width, buffer);
2. ask the one decision point (``lowering.choosing.lowering_choice``) for ours - a *verified*
   plan, every plan the planner returns having passed the exhaustive verifier - or stock
   Triton's lowering, with the reason;
3. for ours, emit the island, run it in the emitted-code simulator for every thread
   (``passes.islands.island_checks``), and put it in place of the op (``passes.islands.island_splicing``).

Anything else leaves the op to Triton, with a remark that says why (``ll-opt --remarks``, or
the option ``remarks=true``).  Remarks look like::

    k.ttgir:12:10: remark: [ll-lower-conversions] lowered: shuffle, shfl.idx=2, select=2
    k.ttgir:20:10: remark: [ll-lower-conversions] left to Triton: cross-CTA conversion ...

Options (the fields of :class:`LowerConversions`): ``only=noop,rename,shuffle,shared,
local_load,local_store,local_alloc`` (the plan methods we own; default all but the three
shared-memory ops, ``lowering_choice.DEFAULT_METHODS``), ``verify=emitted|plan``,
``remarks=true|detail`` (``detail``: the cost model's field names and the deciding rule's source
file too), ``mode=linear|legacy`` (``legacy``: plan like Triton before linear layouts,
``lowering.legacy``), ``candidate``, ``candidate_for``, ``measured``, ``stock_gate``.

Scratch memory.  A shared-memory plan's buffer is a ``ttg.local_alloc`` of the plan's size, freed
by ``ttg.local_dealloc`` after the island, so Triton's allocator reserves the bytes and keeps them
ours in between.  Triton's barrier analysis cannot see the island's accesses, so the plan's own
barriers are emitted by us, plus *guard* barriers where another shared-memory user could race
with the island (``passes.barriers.guard_placement``, calls included).  A ``ttg.local_alloc``
with a source becomes a fresh mutable allocation, the store island into it, and the original
result as a whole-buffer view (``island_splicing.allocation_around`` says why that form).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from ..lowering.choosing.lowering_choice import (DEFAULT_METHODS, LoweringChoice, Policy, choose_conversion,
                                                 choose_local_load, choose_local_store, kept_among_islands, stock)
from ..lowering.choosing.plan_memory import PROCESS_PLANS, ModulePlans
from ..lowering.cost_weights import CALIBRATED as CALIBRATED_WEIGHTS
from ..lowering.emit.emit_llvm import Island
from ..lowering.local_memory import LOCAL_ALLOC, LOCAL_LOAD, LOCAL_STORE
from ..lowering.plan import ConversionPlan, Method
from ..lowering.remark_words import in_words, with_detail
from ..lowering.target import Target, Vendor
from ..lowering.thread_group import ThreadGroup
from .barriers.guard_placement import GuardPlacement
from .barriers.partitions import WarpGroups, layout_warps_problem
from .framework import ModulePass, PassContext
from .ir.bindings import triton_version
from .ir.module_target import target_or_why
from .ir.snapshot import Module, Operation
from .islands.island_checks import CACHEABLE_PREFIX, IslandChecks, site_for
from .islands.island_splicing import SPLICED_OPS, OpPositions, splice_islands
from .op_requests import OP_OF_METHOD, read_conversion, read_local_access, values_joined_at_region_ends
from .options import (CandidateRanks, Methods, Mode, RemarkLevel, VerifyLevel, parse_candidate_for, parse_methods,
                      parse_remarks, parse_target, parse_word)


@dataclass
class LoweringOutcome:
    """What happened to one op: ``island`` set if we lowered it, else ``reason``."""

    location: str
    method: Optional[Method] = None   # the plan's method, once there is a plan
    plan: Optional[ConversionPlan] = None
    island: Optional[Island] = None
    # Why it was left to Triton, with the parts only the detail level shows marked
    # (``lowering.remark_words``); ``reason`` reads it whole.
    reason_text: str = ""
    emitted_check: Optional[object] = None   # the simulator's VerificationResult (None: not run)
    threads: Optional[ThreadGroup] = None    # the warp group that runs it (None: the whole CTA)
    # Why a measurement or a hazard changed the model's pick (lowering_choice), marked the same way.
    note_text: str = ""

    @property
    def lowered(self) -> bool:
        return self.island is not None

    @property
    def reason(self) -> str:
        """Why it was left to Triton, the detail level's parts included (the report, the studies)."""
        return with_detail(self.reason_text)

    @property
    def note(self) -> str:
        return with_detail(self.note_text)

    def take(self, choice: LoweringChoice) -> None:
        self.plan, self.method = choice.plan, choice.method
        self.reason_text, self.note_text = choice.reason, choice.note

    def remark(self, level: RemarkLevel = RemarkLevel.WORDS) -> str:
        """The remark line: in the user's words, or with our internals at ``RemarkLevel.DETAIL``."""
        said = with_detail if level is RemarkLevel.DETAIL else in_words
        if self.lowered:
            counts = ", ".join(f"{k}={v}" for k, v in sorted(self.island.counts.items()) if k != "select")
            selects = self.island.counts.get("select", 0)
            detail = ", ".join(x for x in (counts, f"select={selects}" if selects else "",
                                           f"scratch={self.island.scratch_bytes}B" if self.island.scratch_bytes
                                           else "") if x)
            return f"{self.location}: remark: [ll-lower-conversions] lowered: {self.method}" + \
                (f", {detail}" if detail else "") + (f"; {said(self.note_text)}" if self.note_text else "") + \
                _estimated_weights_note(self.plan)
        return f"{self.location}: remark: [ll-lower-conversions] left to Triton: {said(self.reason_text)}"


def _estimated_weights_note(plan) -> str:
    """``"; cost model estimated for sm_80"`` where the plan was chosen with cost constants not
    measured on its target (``lowering.cost_weights``: only calibrated targets are measured), so
    a reader knows how much the choice between candidates rests on."""
    target = getattr(plan, "target", None)
    if target is None or target.name in CALIBRATED_WEIGHTS:
        return ""
    return f"; cost model estimated for {target.name} (not measured on it)"


def plan_module(module: Module, options: "LowerConversions", gate_first: bool = False,
                plans: Optional[ModulePlans] = None) -> list[tuple[Operation, LoweringOutcome]]:
    """Decide every op of ``module`` that ``options`` may own; outcomes of ours have ``plan``
    set.  ``gate_first``: the stock gate may decide before planning (``lowering_choice``);
    ``plans``: the memory of plans to use (default: a fresh one for this module)."""
    policy = options.policy(gate_first)
    plans = plans or options.module_plans()
    hw_target, target_problem = target_or_why(module, options.target)
    wanted = {"ttg.convert_layout"} | {OP_OF_METHOD[m] for m in (LOCAL_LOAD, LOCAL_STORE, LOCAL_ALLOC)
                                       if m in policy.owned}
    groups = WarpGroups(module)
    amd = hw_target is not None and hw_target.vendor is Vendor.AMD
    joined = values_joined_at_region_ends(module) if amd else set()
    results, decided = [], []
    for op in (op for op in module.walk() if op.name in wanted):
        if op.name == "ttg.local_alloc" and not op.operands:
            continue   # an allocation without a source stores nothing: Triton's (or our scratch)
        if plans.built_in_place and _result_id(op) in plans.built_in_place:
            continue   # built in place before this pass (passes.drop_in.in_place): dead, Triton's to drop
        if plans.left_to_stock and _result_id(op) in plans.left_to_stock:
            continue   # left to Triton by the drop-in (passes.drop_in.in_place.not_worth_a_text_route)
        outcome = LoweringOutcome(op.location)
        results.append((op, outcome))
        if hw_target is None:
            outcome.reason_text = target_problem
        elif any(id(result) in joined for result in op.results):
            outcome.reason_text = (f"on AMD ({hw_target.name}) the result is joined with another value where a loop "
                              "or branch begins or ends (an scf.yield, scf.condition or loop's initial value): "
                              "Triton's AMD lowering cannot analyse an island's result there (an assertion in "
                              "its axis analysis)")
        else:
            decided.append((outcome, _decide_op(module, op, hw_target, groups, policy, plans)))
    # Twins of stock's code are islands only beside islands of ours (kept_among_islands).
    kept = kept_among_islands([d.choice for _, d in decided])
    for (outcome, d), choice in zip(decided, kept):
        _Decided(choice, d.threads).apply_to(outcome)
    return results


def _result_id(op: Operation) -> Optional[int]:
    """The id of the first result of ``op`` in Triton's module (None: not a module Triton holds)."""
    handle = getattr(op.results[0], "_handle", None) if op.results else None
    return handle.id() if handle is not None else None


@dataclass
class _Decided:
    choice: LoweringChoice
    threads: Optional[ThreadGroup] = None

    def apply_to(self, outcome: LoweringOutcome) -> None:
        outcome.take(self.choice)
        outcome.threads = self.threads


def _decide_op(module: Module, op: Operation, target: Target, groups: WarpGroups, policy: Policy,
               plans: ModulePlans) -> _Decided:
    """The one question, asked for ``op`` and the warps that run it."""
    group = groups.group_of(op)
    if isinstance(group, str):
        return _Decided(stock(group))
    if group is not None and target.vendor is not Vendor.NVIDIA:
        return _Decided(stock(f"the {group.name} of a warp-specialized kernel on {target.name} (not handled on AMD)"))
    choice = _choose_for(module, op, target, policy, plans)
    if choice.ours or choice.twin_plan is not None:
        plan = choice.plan if choice.ours else choice.twin_plan
        problem = layout_warps_problem(group, *(getattr(plan, name) for name in ("src", "dst")
                                                if getattr(plan, name, None) is not None))
        if problem:
            choice = stock(problem, choice.method) if choice.ours else dataclasses.replace(choice, twin_plan=None)
    return _Decided(choice, group)


def _choose_for(module: Module, op: Operation, target: Target, policy: Policy, plans: ModulePlans) -> LoweringChoice:
    method = {"ttg.local_load": LOCAL_LOAD, "ttg.local_store": LOCAL_STORE, "ttg.local_alloc": LOCAL_ALLOC}.get(op.name)
    request = read_conversion(module, op, target) if method is None else read_local_access(module, op, target)
    if isinstance(request, str):
        return stock(request, method)
    if method is None:
        return choose_conversion(request, policy, plans)
    if method == LOCAL_LOAD:
        return choose_local_load(request, policy)
    return choose_local_store(request, policy, method)


def lower_module(module: Module, options: Optional["LowerConversions"] = None, *, gate_first: bool = False,
                 plans: Optional[ModulePlans] = None, **values) -> list[LoweringOutcome]:
    """Replace every op we can lower by its island (in place); return every outcome.
    ``options``: the pass (its fields are the options); or the option values as keywords
    (``lower_module(module, only="shuffle", target="sm_90")``), read as the pipeline reads them.
    ``gate_first``: where the stock gate leaves every plan the planner could build to Triton,
    build none (the same decisions; such an outcome's reason names the conversion's scope
    instead of the planned pick's family, and its ``method`` is unset).  The pass sets it when
    it prints no remarks.  ``plans``: the module's memory of plans and choices (default: a fresh
    one, ``LowerConversions.module_plans``)."""
    if options is None:
        options = LowerConversions(**values)
    elif values:
        raise TypeError("lower_module: give either a LowerConversions pass or option values, not both")
    planned = plan_module(module, options, gate_first, plans)
    if not any(outcome.plan is not None for _, outcome in planned):
        return [o for _, o in planned]     # no island: no guards to place, nothing to splice
    guards = GuardPlacement(module, [(op, o.plan.method) for op, o in planned if o.plan is not None])
    checks = IslandChecks(options.verify)
    islands: dict[int, Island] = {}
    # Each op an island replaces is named by its position among the ops of its name: MLIR
    # prints them in the order module.walk() visits (island_splicing.OpPositions).
    positions, position_of = OpPositions(), {}
    for op in module.walk():
        if op.name in SPLICED_OPS:
            position_of[id(op)] = (op.name, positions.totals.get(op.name, 0))
            positions.totals[op.name] = positions.totals.get(op.name, 0) + 1
    for number, (op, outcome) in enumerate(planned):
        if outcome.plan is None:
            continue
        island, outcome.emitted_check, why_not = checks.checked_island(op, outcome.plan,
                                                                       site_for(op, outcome.threads, guards))
        if island is None:
            outcome.plan, outcome.reason_text = None, why_not
            continue
        island.text = island.text.replace(f"%{CACHEABLE_PREFIX}_", f"%ll{number}_")
        outcome.island = islands[number] = island
        positions.islands[position_of[id(op)]] = number
    if islands:
        module.rewrite_text(lambda text: splice_islands(text, islands, positions=positions))
    return [o for _, o in planned]


@dataclass(frozen=True)
class LowerConversions(ModulePass):
    """The pass, and the options of one lowering run (its fields).  Whoever builds it (a
    pipeline string, ``enable()``, :func:`lower_text`) may give an option as its word
    (``mode="legacy"``, ``only="shuffle,shared"``, ``target="sm_90"``); each is read into its
    type here, once (``passes.options``), and everything downstream reads the typed value."""

    name = "ll-lower-conversions"
    description = "Replace each verified ttg.convert_layout plan by an LLVM-dialect island (NVIDIA PTX / AMD)"
    only: Methods = Methods()          # the plan methods we own; empty: DEFAULT_METHODS
    remarks: RemarkLevel = RemarkLevel.OFF   # true: remarks in words; detail: with our internals
    target: Optional[Target] = None    # None: the module's ttg.target (or the driver's, ll-opt --target)
    mode: Mode = Mode.LINEAR           # LEGACY: plan like Triton before linear layouts (lowering.legacy)
    verify: VerifyLevel = VerifyLevel.EMITTED   # EMITTED: simulate every island; PLAN: the plan verifier only
    # Which verified candidate to emit: 0 = the cheapest by the cost model.  Others exist so that
    # benchmarks/plan_choice.py can time every candidate the planner considered.
    candidate: int = 0
    # Follow recorded GPU measurements where they overrule the cost model (including "stock
    # Triton is faster here": left to Triton with a remark); see lowering/choosing/measured_choices.py.
    measured: bool = True
    # "KEY:RANK,...": the conversions with these keys (lowering.choosing.measured_choices.conversion_key)
    # take candidate RANK ("stock": left to Triton), the others are planned as usual: benchmarks/plan_choice.py
    # kernels times one conversion of a kernel with several at a time.
    candidate_for: CandidateRanks = CandidateRanks()
    # Stock Triton's lowering is a candidate: where conversions were timed (sm_90 + triton 3.6), the
    # choice model's rule (lowering/choosing/fitted_model.py: stock where stock moves a lane-scope
    # conversion with warp shuffles and our pick needs more); on other targets and releases, where
    # our plan needs more of some costly instruction than stock's lowering at least
    # (lowering/choosing/stock_bounds.py).  false: always our plan (tests of a lowering's structure).
    stock_gate: bool = True

    def __post_init__(self):
        typed = {"only": parse_methods(self.only, "only"),
                 "target": parse_target(self.target, "target"),
                 "mode": parse_word(Mode, self.mode, "mode", "mode"),
                 "verify": parse_word(VerifyLevel, self.verify, "verify", "verify level"),
                 "candidate_for": parse_candidate_for(self.candidate_for, "candidate_for"),
                 "remarks": parse_remarks(self.remarks, "remarks")}
        for name, value in typed.items():
            object.__setattr__(self, name, value)   # a frozen dataclass: set once, here

    def policy(self, gate_first: bool = False) -> Policy:
        """How this run decides each op (``lowering_choice.Policy``)."""
        return Policy(triton=triton_version(), owned=tuple(self.only) or DEFAULT_METHODS,
                      legacy=self.mode == Mode.LEGACY, candidate=self.candidate,
                      ranks=self.candidate_for.as_dict(), measured=self.measured, stock_gate=self.stock_gate,
                      gate_first=gate_first)

    @staticmethod
    def module_plans() -> ModulePlans:
        """The plans of one module's lowering, shared across compiles while
        ``passes.islands.verified_islands`` remembers (``LINEAR_LAYOUTS_CACHE``)."""
        from .islands import verified_islands
        return ModulePlans(PROCESS_PLANS if verified_islands.caching_enabled() else None)

    def check_options(self) -> Optional[str]:
        if self.candidate < 0:
            return f"option candidate={self.candidate}: expected 0 or more"
        return None

    @property
    def owns_local_memory_ops(self) -> bool:
        """This run lowers ``ttg.local_load``, ``ttg.local_store`` or ``ttg.local_alloc`` (with a
        source) too (``only=...,local_load``)."""
        return any(method in (LOCAL_LOAD, LOCAL_STORE, LOCAL_ALLOC) for method in self.only)

    def apply(self, module: Module, context: PassContext) -> None:
        options = self if self.target is not None or context.target is None else \
            dataclasses.replace(self, target=context.target)
        # The pass's option or the driver's (ll-opt --remarks), the more detailed of the two.
        remarks = max(self.remarks, parse_remarks(getattr(context, "remarks", False), "--remarks"),
                      key=list(RemarkLevel).index)
        # Without remarks no one reads why a conversion went to Triton: the gate may decide
        # before planning (the same decisions; the reason then names the scope, not the pick's family).
        outcomes = lower_module(module, options, gate_first=not remarks, plans=context.plans)
        if remarks:
            if module.num_warps is None:   # TTIR: a remark says why there is nothing, not silence
                context.report("remark: the module is TTIR (no ttg.num-warps: Triton has not assigned layouts yet), "
                               "so it has no layout conversions to lower; give the kernel's TTGIR "
                               "(kernel.asm[\"ttgir\"], or the .ttgir file in Triton's cache)")
            for outcome in outcomes:
                context.report(outcome.remark(remarks))


def lower_text(text: str, filename: str = "<module>", **options) -> tuple[str, list[LoweringOutcome]]:
    """The Python API: TTGIR text in, TTGIR text with islands out (plus every outcome); the
    options are :class:`LowerConversions`' (``only="shuffle"``, ``target="sm_90"``, ...).
    Hand the result to ``triton.compile`` (as a ``.ttgir`` file) for PTX/cubin or AMDGCN/hsaco."""
    from .ir.snapshot import parse_module
    lowering = LowerConversions(**options)
    module = parse_module(text, filename)
    outcomes = lower_module(module, lowering)
    return module.print(debuginfo=True), outcomes
