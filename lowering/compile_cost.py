"""What an island will cost LLVM to optimize, predicted from its plan before it is emitted.

LLVM's O3 is linear in a straight-line block's instructions for the forms our islands take when
every value moved costs a bounded number of instructions: a register read from Triton's struct,
packed, stored or shuffled, unpacked, written to the result struct.  What can break that is an
island whose instructions grow with the registers *times* the threads: a select chain that
picks, for every output word, among the words of many lanes or warps (a shuffle's send word or
a receive's pick evaluated per lane and per warp: up to warp size x warps - 1 selects a word,
each under its own lane test), or a shared-memory plan that moves a replicated source in
narrow accesses.  Such an island's size is no longer a multiple of the tensor's registers, and
InstCombine's and SimplifyCFG's walks over chains of selects on the same thread id, and SLP's
scheduling regions over long blocks, grow faster than the block.  ``island_work`` predicts the
island's instruction count from the plan (the cost model's own counts: shuffles, selects with
their per-warp choices, byte packs, shared accesses, barriers) and ``work_problem`` refuses a
plan above ``MAX_INSTRUCTIONS_PER_VALUE`` instructions per value moved (plus
``INSTRUCTION_SLACK`` for small islands): such a conversion is left to Triton, whose lowering
of it is linear in its registers, with a remark naming the bound.  The bound is a property of
every plan, so it holds for every island, not for one measured case.

Why per value moved, not per element: the per-register ops (struct reads and writes, bitcasts)
are the linear floor every island pays and every LLVM pass handles in linear time; the
instructions beyond them are what a plan chooses, and a plan whose choices cost more than a few
instructions per value is the select-heavy form.  docs/compile-time.md has the measurements
(the islands of the compile-time fuzzes, random and structured, and of the kernel corpus all sit
far below the bound).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cost import plan_cost
from .shuffle import selects_with_warp_choices

# At most this many instructions (shuffles, selects, packs, shared accesses, barriers) per value
# the island moves (source registers + destination registers); see the module docstring.
MAX_INSTRUCTIONS_PER_VALUE = 8
# Islands this small are never what makes O3 slow, whatever their form.
INSTRUCTION_SLACK = 1024


@dataclass(frozen=True)
class IslandWork:
    """The predicted size of a plan's island: ``values`` (registers read and written) and
    ``instructions`` (what the plan adds to them)."""

    values: int
    instructions: int
    selects: int

    @property
    def budget(self) -> int:
        return MAX_INSTRUCTIONS_PER_VALUE * self.values + INSTRUCTION_SLACK

    @property
    def over_budget(self) -> bool:
        return self.instructions > self.budget


def _registers(layout) -> int:
    return layout.in_dim_size_or_one("register")


def island_work(plan) -> IslandWork:
    """``IslandWork`` of a conversion plan (shuffle, shared memory, rename), from the counts of
    the cost model.  Selects count with their per-warp choices (``selects_with_warp_choices``):
    a choice that depends on the warp is a select the final code has, even where the per-lane
    count (the planner's ranking) folds it away."""
    cost = plan_cost(plan)
    counts = dict(cost.counts)
    selects = cost.selects
    shuffle = getattr(plan, "shuffle", None)
    if shuffle is not None and selects:
        num_warps = plan.src.in_dim_size_or_one("warp")
        selects = max(selects, selects_with_warp_choices(shuffle, plan.target.warp_size, num_warps)
                      * shuffle.words_per_element)
    instructions = sum(v for k, v in counts.items() if getattr(k, "value", k) != "select") + selects
    values = _registers(plan.src) + _registers(plan.dst)
    return IslandWork(values=values, instructions=instructions, selects=selects)


def work_problem(plan) -> str:
    """Why ``plan``'s island would cost LLVM more than linear time in its registers ("" if it
    would not): its predicted instructions above ``MAX_INSTRUCTIONS_PER_VALUE`` per value."""
    work = island_work(plan)
    if not work.over_budget:
        return ""
    return (f"its island would have {work.instructions} instructions ({work.selects} selects) for "
            f"{work.values} values moved; islands are limited to {MAX_INSTRUCTIONS_PER_VALUE} per value "
            f"+ {INSTRUCTION_SLACK} (MAX_INSTRUCTIONS_PER_VALUE: beyond it the island grows with the "
            f"registers times the threads, and LLVM's optimizer with it)")
