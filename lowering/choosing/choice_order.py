"""The order of the questions: which lowering a ``ttg.convert_layout`` gets, ours or stock
Triton's, read top to bottom.

Each question is a named :class:`Rule`: what it asks, the function that answers it (in its own
module of ``lowering/choosing/``, looked up by name when asked, so that a study may replace it
there), the file of the repository its reasons or timings are in, and the GPUs, releases and
targets it was measured on.  ``lowering_choice`` walks these tuples in order (:func:`first_answer`)
and the answer carries the name of the rule that gave it (``LoweringChoice.rule``); the remark
says why in words.  docs/lowering-choice.md, "The order of the questions", names every rule.

1. :data:`CONVERSION_RULES`, asked of every conversion, the first that answers decides;
2. :data:`PLANNED_RULES`, asked of the planner's pick by the last of them (``planned``);
3. :data:`FITTED_RULES`, asked by ``fitted_model.decide`` where the fitted model answers (its
   target and release, ``choice_model.json``), and :data:`ELSEWHERE_RULES` before it or in its
   place;
4. :data:`LIMIT_RULES`, asked of every answer that is ours (the first that answers hands it to
   stock);
5. :data:`KERNEL_RULES`, asked by the pass once per kernel, over all of its answers.

Example (sm_90, triton 3.6, the default policy): ``blocked<[1, 8], [4, 8], [4, 1]> ->
blocked<[1, 4], [4, 8], [4, 1]>`` of 32x128 i32 passes the conversion rules down to ``planned``,
the planned ones down to ``fitted model``, whose rule ``stock shuffles`` leaves it to stock: stock
moves it with 32 warp shuffles a thread, our pick goes through shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Optional

EVERYWHERE = "every target and release"


@dataclass(frozen=True)
class Rule:
    """One question of the choice.  ``name``: as docs/lowering-choice.md names it;
    ``question``: what it asks, and what it answers; ``answered_by``: ``module.function`` of
    ``lowering/choosing/`` that answers (None: the rule does not apply); ``evidence``: the file
    (from the repository's root) holding its reasons or timings; ``measured_on``: the GPUs,
    releases and targets behind it, or why nothing needed measuring."""

    name: str
    question: str
    answered_by: str
    evidence: str
    measured_on: str

    def ask(self, *args):
        """The answer of ``answered_by`` for ``args`` (None: ask the next rule)."""
        module, function = self.answered_by.rsplit(".", 1)
        return getattr(import_module(f"{__package__}.{module}"), function)(*args)


def first_answer(rules: tuple, *args) -> tuple[Optional[Rule], object]:
    """The first of ``rules``, in order, that answers for ``args``, and its answer; (None, None)
    where none does."""
    for rule in rules:
        answer = rule.ask(*args)
        if answer is not None:
            return rule, answer
    return None, None


def rule_named(name: str) -> Rule:
    """The rule called ``name`` in any of the tuples of this module."""
    return next(rule for rule in ALL_RULES if rule.name == name)


def rule_answered_by(rules: tuple, function: str) -> Optional[Rule]:
    """The rule of ``rules`` whose ``answered_by`` is ``function`` (``module.function``)."""
    return next((rule for rule in rules if rule.answered_by == function), None)


# --- 1. every conversion, the first that answers decides ------------------------------------

CONVERSION_RULES = (
    Rule("too many elements",
         "does a side hold more elements a thread than any island may (MAX_ELEMENTS_PER_THREAD)? stock",
         "lowering_choice._too_many_elements", "docs/compile-time.md",
         f"{EVERYWHERE}: a bound on the work of an island's proof and re-parse, not a timing"),
    Rule("legacy",
         "does the run plan as Triton did before linear layouts (mode=legacy)? that plan, or stock",
         "lowering_choice._legacy", "docs/benchmarks.md",
         f"{EVERYWHERE}: a mode the run asks for, the baseline of the benchmarks"),
    Rule("named rank",
         "does the run's candidate_for name this conversion? that candidate, or stock",
         "lowering_choice._named_rank", "benchmarks/results/plan_choice.md",
         f"{EVERYWHERE}: an option the run sets (benchmarks/plan_choice.py times one conversion at a time)"),
    Rule("stock moves nothing",
         "is it a no-op or a renaming of registers for stock too? stock, no island (the gate on)",
         "lowering_choice._stock_moves_nothing", "benchmarks/results/i1_forwarding_3.9.0.md",
         "final code compared, no GPU: triton 3.6, 3.7, 3.8 and 3.9 on sm_80, sm_90 and gfx942; "
         f"applied on {EVERYWHERE}"),
    Rule("past the register file",
         "do the two layouts hold more values a thread than the target has registers? stock (the gate on)",
         "lowering_choice._past_register_file", "benchmarks/results/register_file_rule.md",
         f"H100, triton 3.6 (sm_90); applied on {EVERYWHERE} with a known register file"),
    Rule("gate before planning",
         "would the choice send every plan the planner could build to stock? stock, unplanned "
         "(the gate on, gate_first)",
         "lowering_choice._gate_before_planning", "benchmarks/results/floor_first_3.9.0.md",
         "CPU, triton 3.6 and 3.9, random conversions of every target (none that could gain is decided first); "
         "sm_90 with triton 3.6 by the fitted model's rule"),
    Rule("planned",
         "the planner's pick, asked PLANNED_RULES in order (always answers)",
         "lowering_choice._planned", "docs/lowering-choice.md", EVERYWHERE),
)


# --- 2. the planner's pick ------------------------------------------------------------------

PLANNED_RULES = (
    Rule("no verified plan",
         "did the planner prove no plan? stock, with the planner's reason",
         "lowering_choice._no_verified_plan", "docs/architecture.md",
         f"{EVERYWHERE}: nothing proven, nothing to emit"),
    Rule("rank asked for",
         "does the run ask for another rank than the cost model's pick (candidate)? that plan",
         "lowering_choice._rank_asked_for", "benchmarks/results/plan_choice.md",
         f"{EVERYWHERE}: an option the run sets"),
    Rule("stock hazard",
         "does stock's lowering hang or compute wrong here? ours, whatever the rest says and the limits",
         "lowering_choice._stock_hazard_forces_ours", "docs/stock-bugs.md",
         "triton 3.6 on NVIDIA (an H100 for the byte swap; 3.9 rejects the layouts of the hang); applied on "
         "every release"),
    Rule("measured",
         "did a GPU run find stock faster than this very pick (measured_choices.json)? stock",
         "lowering_choice._measured_stock", "benchmarks/results/plan_choice.md",
         "H100, triton 3.6 (sm_90); a stock entry only under the release it was measured with"),
    Rule("fitted model",
         "the pick (or the measured faster candidate) in fewer rounds where a buffer allows, then, the gate "
         "on, fitted_model.decide: ELSEWHERE_RULES and FITTED_RULES (always answers)",
         "lowering_choice._modelled", "benchmarks/results/choice_fit.md",
         "H100 and H200, triton 3.6 (sm_90) where the model answers; stock's floor elsewhere"),
)


# --- 3. fitted_model.decide -----------------------------------------------------------------

ELSEWHERE_RULES = (
    Rule("free either way",
         "is the pick a no-op or a renaming of registers? ours (nothing to lose)",
         "fitted_model.decide", "docs/lowering-choice.md", f"{EVERYWHERE}: no instruction either way"),
    Rule("stock's floor",
         "where no fitted model answers: does the pick need no more of any costly instruction than stock "
         "at least, and fewer of some kind? ours, else stock (ties go to stock)",
         "fitted_model.choose_dominant", "benchmarks/results/stock_dominance_seed5101_ties_3.9.0.md",
         "final code compared, no GPU: triton 3.9 (and 3.6) on sm_80, sm_90 and gfx942; applied on every "
         "target and release the model does not answer for (triton 3.9; sm_80, AMD, ...)"),
    Rule("family gate",
         "a model file of rule family-gate: does the pick's family show a gain larger than its error? "
         "ours, else stock",
         "fitted_model.choose", "benchmarks/results/choice_fit.md",
         "H100, triton 3.6 (sm_90); not the shipped rule, kept for comparison"),
)

FITTED_RULES = (
    Rule("one warp",
         "a lane-scope conversion over one warp: a shared-memory pick? stock; a shuffle pick: ours only "
         "where it gains on stock's floor",
         "fitted_model.one_warp_choice", "benchmarks/results/one_warp_choice.md",
         "H100, triton 3.6 (sm_90); FLA's one-warp kernels on H200"),
    Rule("bytes through matrices",
         "an 8-bit pick with ldmatrix/stmatrix where stock stores and loads plain vectors? stock",
         "fitted_model.bytes_through_matrices", "benchmarks/results/matrix_use_rule.md",
         "H100 and H200, triton 3.6 (sm_90)"),
    Rule("sixteen bits where matrices are in play",
         "16-bit elements in Triton's rounds where ldmatrix/stmatrix is in play (ours or stock's)? stock",
         "fitted_model.sixteen_bits_where_matrices_are_in_play", "benchmarks/results/sixteen_bit_matrix_rule.md",
         "H100 and H200, triton 3.6 (sm_90)"),
    Rule("broadcast shuffles",
         "is every warp shuffle of the pick a broadcast? stock",
         "fitted_model.shuffles_only_broadcast", "benchmarks/results/plan_heldout_kernels_broadcast.md",
         "H200, triton 3.6 (sm_90)"),
    Rule("twins of stock's code",
         "does the pick store and load shared memory as stock does? stock, kept among islands",
         "fitted_model.is_stock_twin", "benchmarks/results/twin_choice.md", "H100 and H200, triton 3.6 (sm_90)"),
    Rule("stock shuffles",
         "a lane-scope conversion stock moves with warp shuffles, and the pick no shuffle plan needing at most "
         "as many? stock",
         "fitted_model.stock_shuffles_choice", "benchmarks/results/plan_fresh_2311_2419.md",
         "H100, triton 3.6 (sm_90)"),
    Rule("shared memory in Triton's rounds",
         "any other shared-memory pick in Triton's rounds? stock, kept among islands",
         "fitted_model.shared_memory_in_tritons_rounds", "benchmarks/results/plan_forward_16007_16111.md",
         "H200, triton 3.6 (sm_90); Liger-Kernel's and flash-linear-attention's kernels"),
    Rule("the pick stands",
         "no rule above took it: the pick (or the model's rank), ours",
         "fitted_model.choose_by_stock_shuffles", "benchmarks/results/plan_fresh_2521_2633.md",
         "H100, triton 3.6 (sm_90)"),
)


# --- 4. every answer that is ours -----------------------------------------------------------

LIMIT_RULES = (
    Rule("island size",
         "would the island make too many shared accesses (NVIDIA from 3.9), hold more than an AMD lane's "
         "registers (before 3.9), or cost too much to compile? stock (not where a stock hazard forced ours)",
         "lowering_choice._island_too_large", "docs/compile-time.md",
         "compile times on sm_90 (triton 3.6 and 3.9) and gfx942 (triton 3.6 and 3.9)"),
    Rule("methods owned",
         "is the plan's method one the run owns (only=...)? else stock",
         "lowering_choice._method_not_owned", "docs/using-enable.md",
         f"{EVERYWHERE}: an option the run sets"),
)


# --- 5. once per kernel ---------------------------------------------------------------------

KERNEL_RULES = (
    Rule("twins among islands",
         "a pick left to stock as stock's own code, in a kernel with islands of ours? ours after all",
         "lowering_choice.kept_among_islands", "benchmarks/results/fla_gla_twins_gpu.md",
         "H200, triton 3.6 (sm_90)"),
)

ALL_RULES = CONVERSION_RULES + PLANNED_RULES + ELSEWHERE_RULES + FITTED_RULES + LIMIT_RULES + KERNEL_RULES
