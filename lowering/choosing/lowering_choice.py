"""The one decision point: for a conversion (or a local-memory op), a target and a policy, which
lowering it gets - ours, with its verified plan and a note, or stock Triton's, with the reason.

The pass asks once per op (:func:`choose_conversion`, :func:`choose_local_load`,
:func:`choose_local_store`) and emits what the answer says.  As Triton's ``matchAndRewrite``
tries named cases in order and answers ``notifyMatchFailure`` with a reason, a conversion is
decided by the first rule that answers, in the order ``choice_order`` declares (read it there,
top to bottom, each rule with its evidence): :data:`~.choice_order.CONVERSION_RULES` (too many
elements, legacy, named rank, stock moves nothing, past the register file, gate before planning,
planned), the last asking the planner's pick :data:`~.choice_order.PLANNED_RULES` (no verified
plan, rank asked for, stock hazard, measured, fitted model); an answer that is ours is then held
to :data:`~.choice_order.LIMIT_RULES` (a plan forced by a stock hazard is not held to the island
size, stock being no option), and the pass, which sees the whole kernel, asks
:data:`~.choice_order.KERNEL_RULES` (:func:`kept_among_islands`).  This module holds the rules'
functions that read the policy (the others live in their own modules: ``register_file``,
``stock_hazards``, ``measured_choices``, ``fitted_model``, ``island_limits``, ...); the answer
names the rule that gave it (``LoweringChoice.rule``).

Example (sm_90, triton 3.6): a lane-scope conversion that stock moves with 2 warp shuffles a
thread and for which the planner has shared-memory candidates only is answered, with
``gate_first``, by rule ``gate before planning``:
``LoweringChoice(plan=None, reason="stock Triton's lowering: it moves this lane-scope
conversion with 2 warp shuffle(s) a thread, ...")``, without running the planner.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Optional

from ...dialect.conventions import NEWEST, TritonConventions, release_of
from ...dialect.linear_layout import LinearLayout
from ..legacy import plan_legacy_conversion, plan_legacy_local_load, plan_legacy_local_store
from ..local_memory import LOCAL_LOAD, LOCAL_STORE, plan_local_load, plan_local_store
from ..plan import STOCK, Method, Scope
from ..remark_words import detail
from ..planner import INVALID_CONVERSION_ERRORS, candidate_methods, with_fewer_rounds
from ..target import Target
from . import fitted_model, measured_choices
from .choice_order import (CONVERSION_RULES, ELSEWHERE_RULES, FITTED_RULES, LIMIT_RULES, PLANNED_RULES, Rule,
                           first_answer, rule_answered_by, rule_named)
from .island_limits import elements_problem, island_size_problem
from .plan_memory import ModulePlans
from .register_file import past_register_file
from .stock_bounds import why_no_plan_gains
from .stock_hazards import stock_hazard
from .stock_lowering import stock_moves_nothing, stock_warp_shuffles

# What a run owns when its policy names nothing: the shared-memory ops (``local_load``,
# ``local_store``, ``local_alloc``) are opt-in; docs/using-enable.md says why (more CTA barriers
# than stock in real kernels).
DEFAULT_METHODS = (Method.NOOP, Method.RENAME, Method.SHUFFLE, Method.SHARED)


@dataclass(frozen=True)
class Conversion:
    """A ``ttg.convert_layout``: its layouts, element width and target; the encodings as
    printed (legacy mode plans by the attribute's kind)."""

    src: LinearLayout
    dst: LinearLayout
    bits: int
    target: Target
    src_encoding: str = ""
    dst_encoding: str = ""


@dataclass(frozen=True)
class LocalAccess:
    """A ``ttg.local_load`` (registers are the destination) or ``ttg.local_store`` / ``local_alloc``
    with a source (registers are the source) of one memdesc; ``view``: it is a subslice view;
    ``encoding``: the register side's encoding as printed (legacy ``ldmatrix`` needs it)."""

    registers: LinearLayout
    buffer: LinearLayout
    bits: int
    target: Target
    view: bool = False
    encoding: str = ""


@dataclass(frozen=True)
class Policy:
    """How a run decides (the pass's options, read): ``legacy``: plan as Triton did before linear
    layouts; ``candidate``: the planner's rank to take (0, the cost model's pick); ``ranks``:
    ``candidate_for`` (conversion key -> rank or STOCK); ``measured``: follow GPU measurements;
    ``stock_gate``: stock's lowering is a candidate; ``gate_first``: decide the gate before
    planning where it can be; ``owned``: the methods this run emits; ``triton``: the release."""

    triton: str
    owned: tuple = DEFAULT_METHODS
    legacy: bool = False
    candidate: int = 0
    ranks: Mapping = field(default_factory=dict)
    measured: bool = True
    stock_gate: bool = True
    gate_first: bool = False

    @property
    def gate_applies(self) -> bool:
        """The gate may hand the cost model's pick to stock (not for another rank, nor when the
        environment turns it off)."""
        return self.stock_gate and self.candidate == 0 and not fitted_model.gate_turned_off()


@dataclass(frozen=True)
class LoweringChoice:
    """Ours (``plan`` set) or stock (``reason`` set).  ``method``: the plan's method, where one
    was planned (for remarks and statistics, also when stock was chosen over it); ``note``: why
    a measurement or a hazard changed what the model alone would have chosen; ``forced``: stock
    is no option (a hazard), so no limit hands it back; ``twin_plan``: stock was chosen because
    this verified plan is stock's own code (``stock_shared``), and it is the conversion's island
    where the kernel has islands of ours anyway (:func:`kept_among_islands`); ``rule``: the name of
    the rule that answered (``choice_order``), not part of the answer's identity."""

    plan: object = None
    reason: str = ""
    method: Optional[Method] = None
    note: str = ""
    forced: bool = False
    twin_plan: object = None
    rule: str = field(default="", compare=False)   # the rule of choice_order that gave the answer

    @property
    def ours(self) -> bool:
        return self.plan is not None


def stock(reason: str, method: Optional[Method] = None) -> LoweringChoice:
    return LoweringChoice(reason=reason, method=method)


def ours(plan, note: str = "", forced: bool = False) -> LoweringChoice:
    return LoweringChoice(plan=plan, method=plan.method, note=note, forced=forced)


def planned_or_why(plan) -> LoweringChoice:
    """Ours with ``plan``, or stock with the planner's reason when it is ``Unsupported``."""
    return ours(plan) if plan else stock(plan.reason)


def named(choice: LoweringChoice, rule: Rule) -> LoweringChoice:
    """``choice`` as given by ``rule``, unless a rule asked inside it named itself already."""
    return choice if choice.rule else replace(choice, rule=rule.name)


# --- conversions --------------------------------------------------------------------------

def choose_conversion(conversion: Conversion, policy: Policy, plans: ModulePlans) -> LoweringChoice:
    """Ours or stock for ``conversion`` (see the module docstring); asked once per module
    (``plans`` remembers the answer)."""
    return plans.choice(conversion, policy, lambda: _choose_conversion(conversion, policy, plans))


def _choose_conversion(conversion: Conversion, policy: Policy, plans: ModulePlans) -> LoweringChoice:
    """The first of ``choice_order.CONVERSION_RULES`` that answers, held to the limits."""
    rule, choice = first_answer(CONVERSION_RULES, conversion, policy, plans)
    return _held_to_limits(named(choice, rule), conversion.target, policy)


def _too_many_elements(conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Rule ``too many elements``: stock where a side holds more elements a thread than any island
    may (``island_limits.elements_problem``)."""
    too_many = elements_problem(conversion.src, conversion.dst)
    return stock(too_many) if too_many else None


def _legacy(conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    if not policy.legacy:
        return None
    plan = plan_legacy_conversion(conversion.src, conversion.dst, conversion.bits, conversion.target,
                                  (conversion.src_encoding, conversion.dst_encoding))
    return planned_or_why(plan)


def _named_rank(conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    if not policy.ranks:
        return None
    rank = policy.ranks.get(measured_choices.conversion_key(conversion.src, conversion.dst, conversion.bits,
                                                            conversion.target.name))
    if rank is None:
        return None
    if rank is STOCK:
        return stock("option candidate_for: this conversion is left to Triton")
    return planned_or_why(plans.plan(conversion.src, conversion.dst, conversion.bits, conversion.target, rank))


def _stock_moves_nothing(conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Stock forwards the values without an instruction (a no-op, or a renaming of registers):
    our island would only cost compile time (its emission, its simulation, the module's
    re-parse).  Example: ``blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8],
    warpsPerCTA = [4, 1]}>`` to the same layout written as a ``#ttg.linear``."""
    if not policy.gate_applies:
        return None
    c = conversion
    try:
        scope = stock_moves_nothing(c.src, c.dst, c.bits, c.target, _struct_holds_unique_registers(policy.triton))
    except INVALID_CONVERSION_ERRORS:
        return None       # the planner says why
    if scope is None or stock_hazard(c.src, c.dst, c.bits, c.target):
        return None
    what = "the two layouts are one map" if scope is Scope.NONE else "it only renames registers"
    return stock(f"stock Triton's lowering: {what}, and stock forwards the values without an instruction as "
                 f"our island would (left to it, the compile makes no island)",
                 Method.NOOP if scope is Scope.NONE else Method.RENAME)


def _past_register_file(conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Stock, without a plan, where the conversion's values do not fit in a thread's registers
    (``register_file``: the kernel spills, and the spills decide its time); a gate like the
    others, so not with the gate off nor where stock's lowering is hazardous."""
    if not policy.gate_applies:
        return None
    c = conversion
    reason = past_register_file(c.src, c.dst, c.bits, c.target)
    if not reason or stock_hazard(c.src, c.dst, c.bits, c.target):
        return None
    return stock(reason)


def _struct_holds_unique_registers(triton: str) -> bool:
    """The release's LLVM struct of a tensor holds each distinct register once (a version that
    names no release counts as the newest the plugin knows, as ``passes.ir.bindings`` reads it)."""
    return TritonConventions(release_of(triton) or NEWEST.release).struct_holds_unique_registers


def _gate_before_planning(conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Stock, decided without a plan, where the choice would send every plan the planner could
    build for this conversion's scope and candidate methods (``lowering.planner.candidate_methods``)
    to stock: where a fitted model answers, when it keeps no such plan
    (``fitted_model.could_be_ours``); elsewhere, when no such plan can gain on stock's floor
    (``stock_bounds.why_no_plan_gains``).  Never where stock's lowering is hazardous or a
    measurement is recorded for the conversion (either can overrule the choice).  The decision is
    the one :func:`follow_model` takes on the planned pick; only the remark may differ."""
    if not (policy.gate_first and policy.gate_applies):
        return None
    reason = gate_reason_without_plan(conversion, policy)
    return stock(reason) if reason else None


def gate_reason_without_plan(conversion: Conversion, policy: Policy) -> str:
    """Why the gate leaves ``conversion`` to stock whatever plan the planner would build, or ""
    when that is not known without the plan (see :func:`_gate_before_planning`)."""
    c = conversion
    try:
        scope, methods = candidate_methods(c.src, c.dst, c.target)
    except INVALID_CONVERSION_ERRORS:
        return ""          # the planner says why
    if scope not in (Scope.LANE, Scope.WARP) or not methods:
        return ""
    model = fitted_model.load_model()
    if model is not None and model.applies_to(c.target.name, policy.triton):
        question = _GateQuestion.of(conversion, model, scope, methods)
        reason = "" if question.could_be_ours() else question.reason()
    else:
        reason = why_no_plan_gains(c.src, c.dst, c.bits, c.target, scope, methods)
    return "" if not reason or _overruled(conversion, policy) else reason


def _overruled(conversion: Conversion, policy: Policy) -> bool:
    """A recorded measurement or a stock hazard can overrule the gate on the planned pick."""
    c = conversion
    return (policy.measured and measured_choices.lookup(c.src, c.dst, c.bits, c.target.name) is not None) or \
        bool(stock_hazard(c.src, c.dst, c.bits, c.target))


@dataclass(frozen=True)
class _GateQuestion:
    """What a fitted model decides a conversion by before planning: the model that answers for
    the target and release, the conversion's scope, the methods its candidates can have, its
    warps and (rule ``stock-shuffles``, lane scope) stock's predicted warp shuffles."""

    model: object
    scope: Scope
    methods: frozenset
    warps: int
    stock_shuffles: Optional[int]

    @classmethod
    def of(cls, conversion: Conversion, model, scope: Scope, methods: frozenset) -> "_GateQuestion":
        c = conversion
        by_stock_shuffles = model.rule == fitted_model.STOCK_SHUFFLES and scope is Scope.LANE
        return cls(model, scope, methods, c.src.in_dim_size_or_one("warp"),
                   stock_warp_shuffles(c.src, c.dst, c.bits, c.target) if by_stock_shuffles else None)

    def could_be_ours(self) -> bool:
        return fitted_model.could_be_ours(self.model, str(self.scope), self.methods, self.warps, self.stock_shuffles)

    def reason(self) -> str:
        model = self.model
        if (model.rule == fitted_model.STOCK_SHUFFLES and self.scope is Scope.LANE and self.warps == 1
                and Method.SHUFFLE not in self.methods):
            return (f"stock Triton's lowering: no plan of ours for it is a shuffle plan, and "
                    f"{fitted_model.ONE_WARP_MEASURED}")
        if model.rule == fitted_model.STOCK_SHUFFLES:
            return fitted_model.stock_shuffles_reason(self.stock_shuffles, "and no plan of ours for it is a shuffle plan",
                                                      model)
        kinds = "/".join(sorted(str(m) for m in self.methods))
        return ("stock Triton's lowering: the cost model cannot show a gain larger than its own error for any "
                f"{self.scope}-scope {kinds} plan over {self.warps} warp(s) (timed on {model.measured_on}, "
                f"triton {model.triton})" + detail("no such family is kept by lowering/choosing/choice_model.json; "
                                                  "remarks=detail names the planned pick's family"))


def _planned(conversion: Conversion, policy: Policy, plans: ModulePlans) -> LoweringChoice:
    """Rule ``planned``: the planner's pick (the policy's rank), asked ``choice_order.PLANNED_RULES``."""
    c = conversion
    plan = plans.plan(c.src, c.dst, c.bits, c.target, policy.candidate)
    rule, choice = first_answer(PLANNED_RULES, plan, conversion, policy, plans)
    return named(choice, rule)


def _no_verified_plan(plan, conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Rule ``no verified plan``: stock, with the planner's reason (``Unsupported``)."""
    return None if plan else stock(plan.reason)


def _rank_asked_for(plan, conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Rule ``rank asked for``: another rank than the cost model's pick is the run's to judge."""
    return ours(plan) if policy.candidate != 0 else None


def _stock_hazard_forces_ours(plan, conversion: Conversion, policy: Policy,
                              plans: ModulePlans) -> Optional[LoweringChoice]:
    """Rule ``stock hazard``: neither a measurement nor the gate may hand it to stock."""
    c = conversion
    hazard = stock_hazard(c.src, c.dst, c.bits, c.target)
    return ours(plan, note=f"never left to Triton: {hazard}", forced=True) if hazard else None


def _measured_stock(plan, conversion: Conversion, policy: Policy, plans: ModulePlans) -> Optional[LoweringChoice]:
    """Rule ``measured``: stock where a GPU measurement of this pick found stock faster (for the
    release it was measured on); a faster candidate goes on to the model (:func:`_modelled`)."""
    if not policy.measured:
        return None
    choice = follow_measurement(plan, conversion, policy, plans)
    return None if choice.ours else choice


def _modelled(plan, conversion: Conversion, policy: Policy, plans: ModulePlans) -> LoweringChoice:
    """Rule ``fitted model``: the pick, or the candidate a measurement found faster, in fewer
    shared-memory rounds where the buffer budget allows (then no twin of stock's code), then,
    the gate on, the fitted model's verdict (:func:`follow_model`)."""
    choice = follow_measurement(plan, conversion, policy, plans) if policy.measured else ours(plan)
    choice = replace(choice, plan=with_fewer_rounds(choice.plan))
    return follow_model(choice, conversion, policy) if policy.stock_gate else choice


def follow_measurement(plan, conversion: Conversion, policy: Policy, plans: ModulePlans) -> LoweringChoice:
    """A recorded GPU measurement overrules the cost model's ``plan``, while the planner still
    builds the plans it measured: stock (for the release it was measured on) or the faster
    candidate, with the measurement as the note."""
    c = conversion
    measured = measured_choices.lookup(c.src, c.dst, c.bits, c.target.name)
    if measured is None or instruction_mix(plan) != measured.model_pick_mix:
        return ours(plan)
    if measured.fastest is STOCK:
        same = measured_choices.same_release(measured.triton, policy.triton)
        return stock(measured.explain(), plan.method) if same else ours(plan)
    alternative = plans.plan(c.src, c.dst, c.bits, c.target, measured.fastest)
    if not alternative or instruction_mix(alternative) != measured.fastest_mix:
        return ours(plan)
    return ours(alternative, note=measured.explain())


def instruction_mix(plan) -> dict:
    """The plan's instructions by name (``st.shared.b128=4, ...``), as measurements record them."""
    from ..cost import plan_cost
    from ..describe import instruction_counts
    return instruction_counts(plan_cost(plan), plan.target)


def follow_model(choice: LoweringChoice, conversion: Conversion, policy: Policy) -> LoweringChoice:
    """The fitted model's verdict on ours (``fitted_model.decide``: the rule chosen on dependent-
    chain times for its target and release; elsewhere stock's floor, ``stock_bounds``), named by
    the rule of ``choice_order.FITTED_RULES`` or ``ELSEWHERE_RULES`` that gave it."""
    decision = fitted_model.decide(choice.plan, conversion.target.name, policy.triton)
    if decision is None:
        return choice
    rule = rule_answered_by(ELSEWHERE_RULES + FITTED_RULES, f"fitted_model.{decision.answered_by}")
    if decision.plan is not None:
        return named(choice, rule) if rule else choice
    answer = replace(stock(decision.reason, choice.plan.method), twin_plan=choice.plan if decision.twin else None)
    return named(answer, rule) if rule else answer


# --- the limits every answer of ours is held to, and the kernel's rule ----------------------

def _held_to_limits(choice: LoweringChoice, target: Target, policy: Policy) -> LoweringChoice:
    """Ours held to ``choice_order.LIMIT_RULES`` (the first that answers hands it to stock)."""
    choice = _twin_held_to_limits(choice, target, policy)
    if not choice.ours:
        return choice
    rule, handed_back = first_answer(LIMIT_RULES, choice, target, policy)
    return choice if rule is None else named(handed_back, rule)


def _twin_held_to_limits(choice: LoweringChoice, target: Target, policy: Policy) -> LoweringChoice:
    """``choice`` without its twin plan where that plan could not be an island of this run (the
    island limits, the methods the run owns): then it stays stock whatever the kernel holds."""
    if choice.twin_plan is None or _held_to_limits(ours(choice.twin_plan), target, policy).ours:
        return choice
    return replace(choice, twin_plan=None)


def _island_too_large(choice: LoweringChoice, target: Target, policy: Policy) -> Optional[LoweringChoice]:
    """Rule ``island size``: stock where the island is too large to emit (``island_limits``), not
    where a stock hazard forced ours."""
    too_large = "" if choice.forced else island_size_problem(choice.plan, target, policy.triton)
    return stock(too_large) if too_large else None


def _method_not_owned(choice: LoweringChoice, target: Target, policy: Policy) -> Optional[LoweringChoice]:
    """Rule ``methods owned``: stock where the run does not own the plan's method."""
    if choice.method in policy.owned:
        return None
    return stock(f"a {choice.method} plan, and this run owns only {','.join(policy.owned)}", choice.method)


TWIN_AMONG_ISLANDS = ("stock's own code, or a pick the choice leaves to stock when alone, kept as an island because "
                      "the kernel has islands of ours: stock's conversions among our islands cost up to 5% in FLA's "
                      "chunk_gla_bwd_kernel_intra (docs/lowering-choice.md, 'Twins of stock's code on sm_90 with "
                      "triton 3.6')" + detail("lowering/choosing/stock_shared.py; fitted_model.STOCK_RULES"))


def kept_among_islands(choices: list) -> list:
    """``choices`` (one kernel's, in order) with each twin of stock's code (``twin_plan``) made
    ours where some other choice of the kernel is ours; unchanged where none is.

    Why: a twin alone can only tie with stock, so in a kernel without islands it goes to stock
    and the compile makes no island at all (no print, no re-parse).  Among islands it saves
    nothing, and stock's conversions between our islands cost: FLA's chunk_gla_bwd_kernel_intra
    (4 warps, H200, triton 3.6) ran 0.947x stock with its two twins as islands and 0.999x with
    them left to stock.  Example: a kernel whose only conversion is a twin: stock; the same
    kernel with one more conversion our pick gains on: both islands."""
    if not any(c.ours for c in choices):
        return list(choices)
    return [replace(ours(c.twin_plan), note=TWIN_AMONG_ISLANDS, rule=_TWINS_AMONG_ISLANDS)
            if c.twin_plan is not None else c for c in choices]


_TWINS_AMONG_ISLANDS = rule_named("twins among islands").name


# --- local-memory ops ---------------------------------------------------------------------

def choose_local_load(access: LocalAccess, policy: Policy) -> LoweringChoice:
    """Ours or stock for a ``ttg.local_load`` of ``access.buffer`` into ``access.registers``."""
    a = access
    problem = elements_problem(a.registers)
    if problem:
        return stock(problem, LOCAL_LOAD)
    if policy.legacy:
        plan = plan_legacy_local_load(a.buffer, a.registers, a.bits, a.target, a.encoding, view=a.view)
    else:
        plan = plan_local_load(a.buffer, a.registers, a.bits, a.target, view=a.view)
    return ours(plan) if plan else stock(plan.reason, LOCAL_LOAD)


def choose_local_store(access: LocalAccess, policy: Policy, method=LOCAL_STORE) -> LoweringChoice:
    """Ours or stock for a store of ``access.registers`` into ``access.buffer``: a
    ``ttg.local_store``, or (``method`` ``LOCAL_ALLOC``) the fill of an allocation with a source."""
    a = access
    problem = elements_problem(a.registers)
    if problem:
        return stock(problem, method)
    if policy.legacy:
        plan = plan_legacy_local_store(a.registers, a.buffer, a.bits, a.target, view=a.view)
    else:
        plan = plan_local_store(a.registers, a.buffer, a.bits, a.target, view=a.view)
    return replace(ours(plan), method=method) if plan else stock(plan.reason, method)
