"""A plan and its cost in words, with the instruction names of the plan's target.

The plan (``lowering.plan``) and the cost model (``lowering.cost``) are vendor-neutral: their
instructions are typed (``lowering.instructions``).  This module is where they meet the names
users know, through the emitters' ``mnemonic`` (``emit_llvm.mnemonic``): it sits above both, so
that neither the plan nor the cost model imports the other's users.

Example: a shared-memory plan of an mma -> blocked epilogue on sm_90 costs
``st.shared.b128=4, bar.warp.sync=1, ldmatrix.x4=4, scratch=4096B, ...``; the same counts on
gfx942 would read ``ds_write.b128=4, s_barrier=1, ...``.
"""

from __future__ import annotations

from .cost import PlanCost, plan_cost
from .emit.emit_llvm import mnemonic
from .plan import ConversionPlan
from .target import Target


def instruction_counts(cost: PlanCost, target: Target) -> dict[str, int]:
    """``cost.counts`` by the names of ``target``'s vendor, in the order the plan issues them.
    Two keys with one name (AMD's xor and indexed shuffles are both ``ds_bpermute``) add up."""
    named: dict[str, int] = {}
    for key, count in cost.counts.items():
        name = mnemonic(target, key)
        named[name] = named.get(name, 0) + count
    return named


def cost_text(cost: PlanCost, target: Target) -> str:
    """One line: ``shfl.idx=2, select=2, scratch=0B`` (plus conflicts and vector widths when the
    plan goes through shared memory)."""
    parts = [f"{name}={count}" for name, count in instruction_counts(cost, target).items()]
    parts += [f"scratch={cost.scratch_bytes}B"]
    if cost.shared_stores or cost.shared_loads:
        parts += [f"conflicts(st={cost.store_conflicts}, ld={cost.load_conflicts})",
                  f"vector(st={cost.max_store_bits}b, ld={cost.max_load_bits}b)"]
    return ", ".join(parts)


def plan_cost_text(plan: ConversionPlan) -> str:
    """``cost_text`` of the plan's own cost on its own target."""
    return cost_text(plan_cost(plan), plan.target)


def describe_plan(plan: ConversionPlan) -> str:
    """A multi-line description of the plan: its cost, shuffle rounds or shared-memory program,
    output renaming and notes."""
    target = plan.target
    lines = [f"ConversionPlan(scope={plan.scope}, method={plan.method}, bits={plan.element_bits}, "
             f"target={target.name})", f"  cost: {plan_cost_text(plan)}"]
    if plan.shuffle is not None:
        s = plan.shuffle
        lines.append(f"  pack {s.elements_per_word} elements/word, {len(s.src_words)} source words, "
                     f"{len(s.dst_words)} destination words")
        for i, r in enumerate(s.rounds):
            lines.append(f"  round {i}: {mnemonic(target, r.mode)} send word {r.send_word} from lane {r.source_lane}")
        lines.append(f"  destination word d <- round d ^ {s.receive_round}")
    if plan.shared is not None:
        sh = plan.shared
        lines.append(f"  scratch {sh.scratch_bytes} bytes, {sh.num_rounds} rounds, "
                     f"vectors st={sh.store_vector} ld={sh.load_vector}")
        lines.append(f"  swizzle: {sh.smem_layout}")
        for op in sh.ops:
            lines.append(f"    {op}")
    lines.append(f"  output: dst[i] = {plan.output.file}[{list(plan.output.sources)}]")
    lines.extend(f"  note: {n}" for n in plan.notes)
    return "\n".join(lines)
