"""``ll-apply-advice``: the kernel compiled with the report's layout advice applied, as its author
would apply it.

The advice (:mod:`.layout_advice`) names, per op, a layout to write instead.  In the TTGIR an
author's layout variable is one attribute: every value laid out with ``L = gl.BlockedLayout(...)``
(and every ``gl.SliceLayout(d, L)``) prints the same ``#blocked``.  Changing the variable changes
them all; that is the edit made here, one round at a time:

1. **the variable**: for each blocked layout ``L`` that advised loads or stores (or replicated
   data) use directly, the suggestion of largest modelled gain ``S`` replaces ``L`` everywhere
   (slices of it included), unless a ``cp.async`` laid out in ``L`` would then copy under
   4 bytes a thread, which the backend rejects (``L`` then stays, and its advised loads and
   stores get their own layouts as in step 2);
2. **a second variable where the author would split**: a load or store in ``L`` whose own
   suggestion differs from ``S`` (a transpose: its load wants rows, its store columns), one in
   ``L`` that ``S`` would make costlier (it keeps ``L``), and one in a slice of ``L`` (a row of
   sums stored in a 1-D layout) gets its own layout: its operands are converted to it
   (``gl.convert_layout`` in the author's code) and its result back.  Index arithmetic that
   feeds it is computed again in its layout (``passes.gluon.rematerialize``: what the author
   writes as ``gl.arange(..., layout=gl.SliceLayout(.., S))``), and Triton's canonicalizer folds
   a conversion of a conversion into one;
3. **shared buffers**: a buffer's ``gl.SwizzledSharedLayout`` suggestion replaces its layout in
   the buffer's allocation and accesses.
4. **epilogue stores**: a store of a value in a layout the hardware forces (an MMA
   accumulator's) is converted before it, on the module steps 1-3 made: the store and every op
   that only feeds it left to ``ll-resolve-auto-layouts`` behind a conversion from the
   accumulator (:mod:`.epilogue_edit`), which places the conversion and lays out the bias, the
   activation and the index arithmetic by the model the round is priced with.

Each finding comes priced on the whole kernel (:mod:`.layout_advice`: the kernel with that
finding applied by :func:`.advice_edits.advised_module`, the edit made here, against the kernel as written,
both by :mod:`.kernel_price`), and a round is kept only where the whole kernel's modelled cost
falls without a loop's data spilling: every finding at once, else the single finding of largest
gain that lowers it.  Why: a suggestion for one op reaches every op of its layout variable; a
store after a loop advised narrower accesses would narrow the loop's loads too.  Rounds repeat
until the advice has nothing left of these kinds to say or no edit lowers the cost (a fixed
point; at most ``MAX_ROUNDS``).  Conversions in loops are not applied (their advice is a
move of code, not of a layout).  Example, a 64x64 transpose written with one element per thread
(``[1, 1], [1, 32], [4, 1]`` for the load and the store): the store's suggestion becomes the
layout, the load keeps its own coalesced one, and the data goes between them by one
``ttg.convert_layout`` -- the kernel an expert writes.

**Named findings** (``apply_advice(..., findings=KEYS)``, ``enable(apply_advice=True,
advice_findings=KEYS)``, ``ll-apply-advice{findings=KEYS}``): only the findings named by their
keys (``Finding.key``, as ``report --measure`` names them; alike ops are one finding), as one
edit, the very edit each finding's gain was priced on -- no rounds, no fallback to another
subset.  What ``report --measure`` times a kernel's best findings with, one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Optional

from ...dialect.linear_layout import LayoutError
from ...lowering.target import Target, UnknownTarget
from ..ir.module_lines import TextMismatch
from ..framework import ModulePass, PassContext, PassFailure
from ..options import OptionError
from ..ir.diagnostics import IRError
from ..ir.module_target import module_target
from ..ir.snapshot import Module
from ..gluon.kernel_price import KernelPrice, kernel_price
from .advice_edits import Trials
from .findings import APPLIED, Finding, parse_finding_keys
from .layout_advice import advise_module, without_resolved

APPLIED_KINDS = APPLIED
MAX_ROUNDS = 4


@dataclass
class Applied:
    """What ``ll-apply-advice`` did to one module."""

    rounds: int = 0
    edits: list = field(default_factory=list)        # one line per edit, for remarks
    cost_before: float = 0.0
    cost_after: float = 0.0
    left: list = field(default_factory=list)         # findings of the applied kinds still there

    def remarks(self) -> list[str]:
        lines = list(self.edits)
        lines.append(f"{self.rounds} round(s); modelled cost (loop-weighted) {self.cost_before:.1f} -> "
                     f"{self.cost_after:.1f}; findings of the applied kinds left: {len(self.left)}")
        return lines


def applicable(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.kind in APPLIED_KINDS and f.layout]


def apply_advice(module: Module, target: "str | Target | None" = None, resolution=None,
                 findings: Optional[Collection[str]] = None) -> Applied:
    """Apply the advice to ``module`` in place (see the module docstring).  ``resolution``: the
    :class:`~..gluon.resolution_record.Resolution` that chose the module's automatic layouts,
    if one did; a layout it chose is never changed (``layout_advice.without_resolved``).
    ``findings``: keys of findings to apply, only those, as one edit (named findings, above).

    Round trips, on a read-only snapshot printed already (the drop-in's): per round, one parse
    and one print per distinct trial the round prices (``advice_edits.Trials``: the findings
    alone, then together, then the fallbacks; a trial asked for again is not made again), and
    the trial kept is taken over as it is.  So a kernel with one finding takes one parse and
    one print beyond the snapshot's, the closest to one of each the bindings allow: that print
    is forced (``advice_edits``' module docstring says why)."""
    try:
        hw_target = module_target(module, target)
    except UnknownTarget as error:
        raise PassFailure(None, f"ll-apply-advice: {error}") from None
    if findings is not None:
        return _apply_named(module, hw_target, resolution, set(findings))
    price = kernel_price(module, hw_target)
    result = Applied(cost_before=price.cost)
    left = None      # the findings on the module as it is now, where the loop has them
    for _ in range(MAX_ROUNDS):
        text = module.print(debuginfo=True)
        trials = Trials(module, text, hw_target)      # the round's: each edited text parsed once
        findings = without_resolved(applicable(advise_module(module, text, hw_target, merged=False, trials=trials)),
                                    resolution)
        left = findings
        if not findings:
            break
        kept = _cheaper_round(trials, findings, price)
        if kept is None:
            break
        trial, price, edits = kept
        # the trial is the round's module, parsed and canonicalized already: taken over as it
        # is (no print and no parse of its text again)
        module.adopt(trial)
        left = None
        result.rounds += 1
        result.edits += edits
    result.cost_after = price.cost
    if left is None:   # (the advice on an unchanged module is not computed again: its trials cost round trips)
        left = without_resolved(applicable(advise_module(module, module.print(debuginfo=True), hw_target,
                                                         merged=False)), resolution)
    result.left = left
    return result


def ranked_findings(module: Module, target: Target, resolution=None, trials: Optional[Trials] = None) -> list[Finding]:
    """The findings ``ll-apply-advice`` can apply to ``module`` as the report shows them (alike
    ops merged into one finding, its ``edits``, priced as one edit), largest whole-kernel gain
    first; none that would change a layout ``resolution`` chose.  ``trials``: as
    ``advise_module``'s."""
    shown = advise_module(module, module.print(debuginfo=True), target, merged=True, trials=trials)
    return sorted(without_resolved(applicable(shown), resolution), key=lambda f: -f.gain)


def _apply_named(module: Module, target: Target, resolution, keys: set) -> Applied:
    """Named findings (module docstring): the findings of ``keys`` applied as one edit.  A key no
    finding of the module has is a :class:`PassFailure` naming the keys it has."""
    trials = Trials(module, module.print(debuginfo=True), target)
    findings = ranked_findings(module, target, resolution, trials)
    named = [f for f in findings if f.key in keys]
    missing = sorted(keys - {f.key for f in named})
    if missing:
        has = ", ".join(f.key for f in findings) or "none"
        raise PassFailure(None, f"ll-apply-advice: no finding {', '.join(missing)} in this kernel "
                                f"(its findings: {has})")
    result = Applied(cost_before=kernel_price(module, target).cost,
                     left=[f for f in findings if f.key not in keys])
    if named:
        # the edit each finding's gain was priced on: one finding's is that very trial
        trial, _ = trials.priced([e for f in named for e in f.edits], result.edits)
        module.adopt(trial)
        result.rounds = 1
    result.cost_after = kernel_price(module, target).cost
    return result


def _cheaper_round(trials: Trials, findings: list[Finding], price: KernelPrice):
    """(trial module, its price, edits) of the first of these edits that lowers the whole kernel's
    modelled cost without making it spill: every finding at once (what an author given the list
    does), else each finding alone, largest whole-kernel gain first; None where none does.  The
    findings' gains already say each alone lowers the cost, so the fallback finds one unless
    the edit no longer reads back (the cost is that of the same edit: ``advised_module``; an
    edit the advice priced already, as one finding at once is, is not parsed again:
    :class:`~.advice_edits.Trials`)."""
    tries = [findings] + [[f] for f in sorted(findings, key=lambda f: -f.gain)] if len(findings) > 1 else [findings]
    for subset in tries:
        edits: list[str] = []
        try:
            trial, new_price = trials.priced(subset, edits)
        except (TextMismatch, IRError, LayoutError):
            continue
        if trial.print(debuginfo=True) == trials.text:
            continue
        if new_price.cost < price.cost and not new_price.spills_where(price, trials.target):
            return trial, new_price, edits
    return None


@dataclass(frozen=True)
class ApplyAdvice(ModulePass):
    name = "ll-apply-advice"
    description = ("Apply the report's layout advice (global accesses, replicated data, shared swizzles, epilogue "
                   "stores) as the "
                   "author would edit the layouts, round by round while the whole kernel's modelled cost falls")
    report: bool = False
    findings: str = ""       # finding keys, comma-separated: only those, as one edit (module docstring)

    def check_options(self) -> Optional[str]:
        try:
            parse_finding_keys(self.findings, "findings")
        except OptionError as error:
            return str(error)
        return None

    def apply(self, module: Module, context: PassContext) -> None:
        keys = parse_finding_keys(self.findings, "findings")
        applied = apply_advice(module, context.target, findings=keys or None)
        if context.remarks or self.report:
            for line in applied.remarks():
                context.report(f"{module.filename}: remark: [{self.name}] {line}")
