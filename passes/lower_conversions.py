"""``ll-lower-conversions``: replace each ``ttg.convert_layout`` by an LLVM-dialect island.

For every convert, in order:

1. read the two layouts (``passes.ir.layouts``) and the element type;
2. ask the planner for a *verified* plan (``lowering.planner.plan_conversion``: every plan it
   returns has passed the exhaustive verifier);
3. if we own that kind of lowering (option ``only``), print the plan as LLVM-dialect text
   (``lowering.emit.emit_llvm``) and put it in place of the convert.

Anything else - no plan, a plan kind we were told not to own, a layout we cannot read, an
element type the emitter does not know - leaves the convert to Triton, with a remark that says
why (``ll-opt --remarks``, or the option ``remarks=true``).  Remarks look like::

    k.ttgir:12:10: remark: [ll-lower-conversions] lowered: shuffle, shfl.idx=2, select=2
    k.ttgir:20:10: remark: [ll-lower-conversions] left to Triton: cross-CTA conversion ...

Translation validation.  Every island is executed by the emitted-code simulator
(``lowering.sim.island_sim``) for every thread of the CTA before it replaces the convert: the
text we print, not the plan, must put the right element in every destination register
(broadcast copies included), with no race, undefined value or out-of-bounds access.  An island
that fails is not used: the convert is left to Triton with a remark naming the first wrong
register.  With ``LINEAR_LAYOUTS_STRICT_CHECK=1`` in the environment (the test suites set it)
such a failure is an error instead.  ``verify=plan`` skips the simulation (only the plan
verifier runs; measured cost of ``verify=emitted``: see the README).

Local loads and stores.  With ``local_load`` / ``local_store`` in ``only`` the pass also
replaces ``ttg.local_load`` / ``ttg.local_store`` ops by islands that read or write the buffer
through the memdesc's descriptor, per a verified ``LocalLoadPlan`` / ``LocalStorePlan``
(``lowering.local_memory``: vector accesses, ldmatrix/stmatrix by left division); the island is
simulated like a conversion's, and guarded by barriers like one (a run of loads shares them).
A local load may read any memdesc value: an allocation, ``ttg.memdesc_index`` of one, a
``ttg.memdesc_subslice`` view, a loop's block argument.  Triton (3.6 and 3.9) reads a memdesc
from its type and its descriptor struct only, ``(base pointer, one i32 offset per dim)``:
``ttg.memdesc_subslice`` adds its offsets to the struct's and keeps the base, and a read of a
view type XORs ``L^-1(offsets)`` into every address, while a whole-buffer type's offsets are
ignored (zero).  The island does the same, so it is right whoever made the value (example: the
fp64 mma v2 loop reads ``memdesc_subslice %arg[0, 8]`` of a loop-carried buffer, and its island
XORs offset 8 into its addresses when field 2 of the descriptor has bit 3 set).  A local store
may write any memdesc value likewise: into a view, every store address XORs ``L^-1(o)``, and
the store verifier and simulator check, at every start, that the view's elements are written
and nothing else.
A local store has no result, so no attribute can mark it: its island goes in place of the k-th
``ttg.local_store`` of the printed text.

With ``local_alloc`` in ``only``, a ``ttg.local_alloc`` *with a source* (an immutable buffer
filled from registers: wgmma operands, a TMA store's staging buffer) is a local store into a
fresh allocation: planned by ``plan_local_store``, simulated as a store island, and emitted as ::

    %ll3_buffer = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    <the store island into %ll3_buffer>
    %a = ttg.memdesc_subslice %ll3_buffer[0, 0] : !ttg.memdesc<..., mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem>

Triton rejects an allocation without a source that is not ``mutable``; the whole-buffer
subslice (offsets 0) gives the users the original, immutable type, and being a view it keeps
Triton's alias analysis tying them to the allocation (its liveness, its barriers).  Neither
``ttg.memdesc_reinterpret`` (Triton 3.9: "source and result must have the same mutability") nor
an ``unrealized_conversion_cast`` (no alias: the allocator could reuse the bytes while the
result is read) would do.  Triton's barrier analysis sees no write in that allocation, so the
island ends with a guard barrier before the reads (none before the stores when no shared-memory
user can run before them; none between allocations in a row), and when Triton fenced the buffer
for the async proxy (``ttng.fence_async_shared`` after it: wgmma, TMA) the island puts
``fence.proxy.async.shared::cta`` before that barrier, Triton's own order (stores, fence,
barrier, reader); Triton's fence after it is then redundant and stays.  Allocations without a
source are never touched.  Opt-in (see ``DEFAULT_METHODS``).  Guards that Triton's own
barriers make redundant are dropped later, from the LLVM IR (``passes.barriers.guard_barriers``).

Options: ``only=noop,rename,shuffle,shared,local_load,local_store,local_alloc`` (comma-separated
plan methods we own; default all but ``local_load``, ``local_store`` and ``local_alloc``),
``verify=emitted|plan``, ``remarks=true``, ``mode=linear|legacy`` (``legacy``: plan like Triton before linear
layouts, ``lowering.legacy``: padded unswizzled shared memory for every convert that is not a
register renaming, no shuffles or ldmatrix/stmatrix, no-ops only for identical attributes; the
local loads and stores ``only`` names: ldmatrix for mma dot operands, vector accesses otherwise,
never stmatrix).

Scratch memory and barriers.  A shared-memory plan's buffer is a ``ttg.local_alloc`` of the
plan's size, freed by ``ttg.local_dealloc`` after the island, so Triton's allocator reserves the
bytes and keeps them ours in between.  Triton's barrier analysis cannot see the island's
accesses, so the plan's own barriers are emitted by us, and when the kernel has any other
possible user of shared memory (another convert, a reduction, a loop that runs the island
again, ...) we add a *guard* barrier before the first store and after the last load: without
them a fast warp could overwrite bytes that a slow warp is still reading for another purpose.
A kernel whose only shared-memory user is one island (e.g. load, convert, store) gets none, so
its instruction mix is exactly the plan's.

Calls.  Triton's barrier analysis is interprocedural: a ``tt.call`` counts as what its callee
(and the functions that one calls) may do in shared memory.  So here: a call of a function that
may touch shared memory is a shared-memory user where it stands, and one of a function that
touches none is not.  An island in a function that may be called (a ``tt.call`` names it; a
``@triton.jit(noinline=True)`` helper) gets both guards: the caller may have read the bytes its
scratch reuses before the call, and may touch shared memory, or call it again, after it returns.
Example: ``@kernel`` calls ``@helper`` twice in a row, ``@helper`` holds an island: its guard
after the island is what orders the first call's loads before the second call's stores.  Users
count by position only within the island's own function, so nothing depends on which function
comes first in the text (a kernel's island after ``@helper`` in the text was guarded after it,
before it was not).  Which of these guards Triton's barriers make redundant is decided later,
across calls too, on the LLVM IR (``passes.barriers.guard_barriers``).
"""

from __future__ import annotations

import dataclasses
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

from ..dialect.attributes import PaddedSharedEncoding
from ..lowering.choosing import fitted_model as model_choice
from ..lowering.choosing import measured_choices
from ..lowering.compile_cost import work_problem
from ..lowering.cost import plan_cost
from ..lowering.cost_weights import CALIBRATED as CALIBRATED_WEIGHTS
from ..lowering.describe import instruction_counts
from ..lowering.legacy import (attribute_kind, plan_legacy_conversion, plan_legacy_local_load,
                               plan_legacy_local_store)
from ..lowering.emit.emit_llvm import (ConvertSite, EmitError, Island, emit_island, emit_local_load_island,
                                       emit_local_store_island, island_element_type)
from ..lowering.local_memory import LOCAL_ALLOC, LOCAL_LOAD, LOCAL_STORE, plan_local_load, plan_local_store
from ..lowering.plan import STOCK, ConversionPlan, Method, Scope, SharedAccess
from ..lowering.planner import INVALID_CONVERSION_ERRORS, candidate_methods, plan_conversion
from ..lowering.choosing.stock_hazards import stock_hazard
from ..lowering.choosing.stock_lowering import stock_moves_nothing, stock_warp_shuffles
from ..lowering.target import Target, UnknownTarget, Vendor, target_named
from ..lowering.thread_group import ThreadGroup
from .ir.bindings import installed_conventions, installed_triton_version, triton_version
from .framework import ModulePass, PassContext, PassFailure
from .barriers.guard_placement import GuardPlacement
from .island_splicing import SPLICED_OPS, OpPositions, allocation_around, splice_islands
from .ir.layouts import memdesc_layout, value_layout
from .options import (CandidateRanks, Methods, Mode, VerifyLevel, parse_candidate_for, parse_methods,
                      parse_target, parse_word)
from .barriers.partitions import WarpGroups, layout_warps_problem
from .ir.snapshot import Module, Operation, in_loop

# What a run owns when ``only`` is empty.  ``local_load`` / ``local_store`` / ``local_alloc`` (a
# ``ttg.local_load`` / ``ttg.local_store`` / ``ttg.local_alloc`` with a source done by our own
# island) are opt-in (``only=...,local_load,local_store,local_alloc``).  The rule for turning one
# on: no kernel with more CTA barriers in its PTX than stock Triton (in all or inside loops), and
# GPU time within noise of stock.  benchmarks/studies/local_ops_barriers.py (every kernel of the paper and
# kernel suites, sm_90 and sm_80, triton 3.6 and 3.9; results/local_ops_barriers.md) finds none
# that qualifies: local loads leave more barriers than stock in 17 (3.6) / 24 (3.9) of 85 kernel x
# target compiles (guards kept around the int4 gemms' and the mma v2 attention's loads), though
# at least as fast as stock's in the four timed kernels (local_load_kernels.md: geometric mean
# 0.989 on an H100); allocations with a source in 23 / 23 (and 1.17x in the int4 wgmma loop,
# local_alloc_kernels.md); local stores occur in no NVIDIA kernel of those suites (unmeasured).
# AMD is unmeasured for all three, and its guard barriers are not pruned.
DEFAULT_METHODS = (Method.NOOP, Method.RENAME, Method.SHUFFLE, Method.SHARED)
STRICT_CHECK_VARIABLE = "LINEAR_LAYOUTS_STRICT_CHECK"
ISLAND_ATTRIBUTE = "ll.island"

# The most elements a thread may hold, in the source or the destination layout, for a convert
# we lower.  Every island is printed, re-parsed and simulated register by register; at 1024
# (e.g. 256x512 f32 over 4 warps) that takes about 3 s and 11 MB of text, and the time grows
# with the square of the count (each struct op carries the whole struct type).  A thread with
# more than 255 32-bit values spills on every GPU we target, so larger tensors are left to
# Triton, with a remark naming this limit.
MAX_ELEMENTS_PER_THREAD = 1024

# The most shared-memory accesses a thread (stores and loads of all rounds) an NVIDIA island may
# make from triton 3.9 on; a conversion whose plan needs more is left to Triton, with a remark
# naming this limit.  Why: on a 512-register f32 conversion (compile_time_fuzz seed 1, case 4:
# 128 st.shared.v4 and 128 ld.shared.v4), LLVM's O3 took about 6x stock's time, all of it in
# the SLP vectorizer working on Triton's own global-load and global-store address graphs around
# the island; stock's shared-memory round trip, through its address arithmetic, keeps that cheap
# and ours, in any form we tried, does not (docs/compile-time.md, the SLP section).  No property
# of the island or of the kernel's accesses was found that separates that case from others of
# the same size whose O3 is fast (case 3 of the same seed: the same accesses, O3 half stock's),
# so every island of that size is handed back: what that can cost is the run time of those few
# large conversions, never compile time.  Triton 3.6's LLVM showed no such case (its fuzz: none
# above 2x), so there the limit does not apply.
# 255: under the 256 accesses of a 512-register 32-bit conversion through 128-bit accesses (one
# store and one load per 4 registers), above issue 43's 1,024-register bf16 case (132) and far
# above the conversions of real kernels (test_shared_access_limit.py reads the kernel corpus).
MAX_SHARED_ACCESSES_PER_THREAD = 255
SHARED_ACCESS_LIMIT_SINCE = (3, 9)    # the first release whose LLVM was measured slow on such islands


@dataclass
class ConvertOutcome:
    """What happened to one convert: ``island`` set if we lowered it, else ``reason``."""

    location: str
    method: Optional[Method] = None   # the plan's method, once there is a plan
    plan: Optional[ConversionPlan] = None
    island: Optional[Island] = None
    reason: str = ""
    emitted_check: Optional[object] = None   # the simulator's VerificationResult (None: not run)
    threads: Optional[ThreadGroup] = None    # the warp group that runs it (None: the whole CTA)
    measured: str = ""    # why a measured choice replaced the cost model's pick (lowering.choosing.measured_choices)

    @property
    def lowered(self) -> bool:
        return self.island is not None

    def remark(self) -> str:
        if self.lowered:
            counts = ", ".join(f"{k}={v}" for k, v in sorted(self.island.counts.items()) if k != "select")
            selects = self.island.counts.get("select", 0)
            detail = ", ".join(x for x in (counts, f"select={selects}" if selects else "",
                                           f"scratch={self.island.scratch_bytes}B" if self.island.scratch_bytes
                                           else "") if x)
            return f"{self.location}: remark: [ll-lower-conversions] lowered: {self.method}" + \
                (f", {detail}" if detail else "") + (f"; {self.measured}" if self.measured else "") + \
                _estimated_weights_note(self.plan)
        return f"{self.location}: remark: [ll-lower-conversions] left to Triton: {self.reason}"


def _estimated_weights_note(plan) -> str:
    """``"; cost model estimated for sm_80"`` where the plan was chosen with cost constants not
    measured on its target (``lowering.cost_weights``: only calibrated targets are measured), so
    a reader knows how much the choice between candidates rests on."""
    target = getattr(plan, "target", None)
    if target is None or target.name in CALIBRATED_WEIGHTS:
        return ""
    return f"; cost model estimated for {target.name} (not measured on it)"


def _owned_methods(only: Methods) -> tuple[Method, ...]:
    """The methods a run owns: those ``only`` names, or :data:`DEFAULT_METHODS`."""
    return tuple(only) or DEFAULT_METHODS


def _target_of(module: Module, target: Optional[Target]) -> tuple[Optional[Target], str]:
    """(the target to plan for, or None and why not): the one given, else the module's
    ``ttg.target`` (read here, the one place a module's target name is resolved)."""
    if target is not None:
        return target, ""
    if module.target is None:
        return None, "the module has no ttg.target attribute (pass target=...)"
    try:
        return target_named(module.target), ""
    except UnknownTarget as error:
        return None, str(error)


def plan_module(module: Module, options: "LowerConversions",
                gate_first: bool = False) -> list[tuple[Operation, ConvertOutcome]]:
    """Plan every op of ``module`` that ``options`` may own; outcomes with a plan we own have
    ``plan`` set.  The options (fields of :class:`LowerConversions`): ``mode=legacy``: plans of
    ``lowering.legacy`` instead of the planner's.  ``candidate``: the planner's ``rank`` (0, the
    cheapest by the cost model; others for benchmarks).  ``measured``: where a GPU measurement
    showed the model's pick to be slower than another candidate or than stock Triton
    (``lowering.choosing.measured_choices``), follow the measurement.  ``candidate_for``: those
    conversions take candidate RANK, every other one is planned as usual
    (benchmarks/kernel_choice.py times one conversion of a kernel at a time this way)."""
    owned = _owned_methods(options.only)
    hw_target, target_problem = _target_of(module, options.target)
    wanted = {"ttg.convert_layout"} | {f"ttg.{name}" for name in (LOCAL_LOAD, LOCAL_STORE, LOCAL_ALLOC)
                                       if name in owned}
    groups = WarpGroups(module)
    amd = hw_target is not None and hw_target.vendor is Vendor.AMD
    joined = _values_joined_at_region_ends(module) if amd else set()
    results = []
    for op in (op for op in module.walk() if op.name in wanted):
        if op.name == "ttg.local_alloc" and not op.operands:
            continue   # an allocation without a source stores nothing: Triton's (or our scratch)
        outcome = ConvertOutcome(op.location)
        results.append((op, outcome))
        if hw_target is None:
            outcome.reason = target_problem
            continue
        if any(id(result) in joined for result in op.results):
            outcome.reason = (f"on AMD ({hw_target.name}) the result is joined with another value where a loop "
                              "or branch begins or ends (an scf.yield, scf.condition or loop's initial value): "
                              "Triton's AMD lowering cannot analyse an island's result there (an assertion in "
                              "its axis analysis)")
            continue
        _plan_op(module, op, hw_target, groups, outcome, options, owned, gate_first)
    return results


def _values_joined_at_region_ends(module: Module) -> set[int]:
    """ids of the values that meet another incoming value at a block argument once ``scf``
    becomes ``cf``: what an ``scf.yield`` or ``scf.condition`` hands out of its region, and the
    initial values of an ``scf.for`` or ``scf.while``.  On AMD, Triton's axis analysis (run by
    its conversion to LLVM) forwards an ``unrealized_conversion_cast``'s operand info to its
    result: the island's struct, whose rank is not the tensor's, and joining it with the
    tensor's at the block argument fails an assertion (``AxisInfo::join``: "Mismatched ranks";
    triton 3.6 and 3.9, CDNA and RDNA alike).
    Where the result meets an ordinary op first (an add, a store, a call) the op's own analysis
    starts afresh and nothing fails, so only these uses are left to Triton.

    Example: ``%r = scf.for ... { %c = ttg.convert_layout %s ...; scf.yield %c }`` - %c is
    joined with the loop's initial value at the loop's iteration argument; so is a converted
    ``%init`` in ``scf.for ... iter_args(%acc = %init)`` with what the body yields."""
    joined = set()
    for op in module.walk():
        if op.name in ("scf.yield", "scf.condition", "scf.while"):
            joined.update(id(value) for value in op.operands)
        elif op.name == "scf.for":            # lower bound, upper bound, step, then the initial values
            joined.update(id(value) for value in op.operands[3:])
    return joined


def _plan_op(module: Module, op: Operation, hw_target: Target, groups: WarpGroups, outcome: ConvertOutcome,
             options: "LowerConversions", owned: tuple[Method, ...], gate_first: bool = False) -> None:
    """Plan one op for the warps that run it (sets ``outcome.plan``, or ``outcome.reason``)."""
    group = groups.group_of(op)
    if isinstance(group, str):
        outcome.reason = group
        return
    if group is not None and hw_target.vendor is not Vendor.NVIDIA:
        outcome.reason = f"the {group.name} of a warp-specialized kernel on {hw_target.name} (not handled on AMD)"
        return
    outcome.threads = group
    mode = options.mode
    if op.name == "ttg.local_load":
        _plan_local_load(module, op, hw_target, outcome, mode)
    elif op.name == "ttg.local_store":
        _plan_local_store(module, op, hw_target, outcome, mode)
    elif op.name == "ttg.local_alloc":
        _plan_local_alloc(module, op, hw_target, outcome, mode)
    else:
        _plan_convert(module, op, hw_target, outcome, mode, owned, options.candidate_for.as_dict(),
                      options.candidate, options.measured, options.stock_gate, gate_first)
    if outcome.plan is not None:
        problem = layout_warps_problem(group, *(getattr(outcome.plan, name) for name in ("src", "dst")
                                                if getattr(outcome.plan, name, None) is not None))
        if problem:
            outcome.plan, outcome.reason = None, problem


def _plan_convert(module: Module, op: Operation, hw_target, outcome: ConvertOutcome, mode: str, owned,
                  ranks: dict, candidate: int, measured: bool, stock_gate: bool = True,
                  gate_first: bool = False) -> None:
    """Plan one ``ttg.convert_layout`` (sets ``outcome.plan``, or ``outcome.reason``).
    ``gate_first``: where the stock gate leaves every plan the planner could build to Triton
    (``_gate_before_planning``), no plan is built."""
    source, result = op.operands[0], op.results[0]
    try:
        src, dst = value_layout(source, op), value_layout(result, op)
        element = island_element_type(result.tensor_type.element_type)
    except (PassFailure, EmitError) as error:
        outcome.reason = getattr(error, "message", str(error))
        return
    if result.tensor_type.shape != source.tensor_type.shape:
        outcome.reason = "source and result shapes differ"
        return
    problem = _island_limits_problem(module, hw_target, src, dst)
    if problem:
        outcome.reason = problem
        return
    bits = element.logical_bits
    hazard = ""    # why stock's own lowering of this conversion must not be used (lowering.choosing.stock_hazards)
    if mode == "legacy":
        src_encoding, dst_encoding = source.tensor_type.encoding, result.tensor_type.encoding
        plan = plan_legacy_conversion(src, dst, bits, hw_target, same_attribute=src_encoding == dst_encoding,
                                      src_kind=attribute_kind(src_encoding), dst_kind=attribute_kind(dst_encoding))
    elif ranks and (key := measured_choices.conversion_key(src, dst, bits, hw_target.name)) in ranks:
        if ranks[key] is STOCK:
            outcome.reason = "option candidate_for: this conversion is left to Triton"
            return
        plan = _plan_remembered(src, dst, bits, hw_target, ranks[key])
    else:
        if stock_gate and candidate == 0 and not model_choice.gate_turned_off():
            forwarded = _stock_forwards_values(src, dst, bits, hw_target, outcome)
            if forwarded:
                return
        if gate_first and stock_gate and candidate == 0:
            reason = _gate_before_planning(src, dst, bits, hw_target, measured)
            if reason:
                outcome.reason = reason
                return
        plan = _plan_remembered(src, dst, bits, hw_target, candidate)
        # Where stock's lowering hangs or is wrong, neither a measurement nor the gate hands it back.
        hazard = stock_hazard(src, dst, bits, hw_target) if plan and candidate == 0 else ""
        if plan and measured and candidate == 0 and not hazard:
            plan, stock_is_faster = _follow_measurement(plan, src, dst, bits, hw_target, outcome)
            if stock_is_faster:
                return
        if plan and stock_gate and candidate == 0 and not hazard and \
                _follow_model(plan, src, dst, bits, hw_target, outcome):
            return
        if hazard:
            outcome.measured = f"never left to Triton: {hazard}"
    if not plan:
        outcome.reason = plan.reason
        return
    too_many = shared_accesses_problem(plan, hw_target) or work_problem(plan)
    if too_many and not hazard:
        outcome.reason = too_many
        return
    outcome.method = plan.method
    if plan.method not in owned:
        outcome.reason = f"a {plan.method} plan, and this run owns only {','.join(owned)}"
        return
    outcome.plan = plan


def _plan_local_store(module: Module, op: Operation, target, outcome: ConvertOutcome, mode: Mode = Mode.LINEAR) -> None:
    """Plan one ``ttg.local_store`` (sets ``outcome.plan``, or ``outcome.reason``).

    Any producer of the memdesc will do, as for ``_plan_local_load``: Triton writes a memdesc
    from its type and its descriptor struct alone.  A whole-buffer type is written at
    ``L^-1(c)`` (offsets zero), a subslice view type at ``L^-1(c) xor L^-1(o)`` with o read from
    the descriptor; the store writes the view's elements and nothing else."""
    value, buffer_value = op.operands[0], op.operands[1]
    outcome.method = LOCAL_STORE
    _plan_store_into(module, op, value, buffer_value, target, outcome, mode)


def _plan_local_alloc(module: Module, op: Operation, target, outcome: ConvertOutcome, mode: Mode = Mode.LINEAR) -> None:
    """Plan one ``ttg.local_alloc`` with a source: a local store into a fresh allocation (the
    same algebra, ``plan_local_store``; sets ``outcome.plan``, or ``outcome.reason``)."""
    value, buffer_value = op.operands[0], op.results[0]
    outcome.method = LOCAL_ALLOC
    if len(buffer_value.tensor_type.shape) != len(value.tensor_type.shape):
        outcome.reason = "the allocation's shape differs from its source's"
        return
    _plan_store_into(module, op, value, buffer_value, target, outcome, mode)


def _plan_store_into(module: Module, op: Operation, value, buffer_value, target, outcome: ConvertOutcome,
                     mode: Mode = Mode.LINEAR) -> None:
    """The store of register ``value`` into the memdesc ``buffer_value``: a whole buffer (a local
    store, or the fill of an allocation with a source) or a subslice view (a local store):
    sets ``outcome.plan``, or ``outcome.reason``."""
    try:
        view, problem = _memdesc_access(buffer_value, op)
        src, buffer = value_layout(value, op), value_layout(buffer_value, op)
        element = island_element_type(value.tensor_type.element_type)
        problem = problem or _island_limits_problem(module, target, src)
    except (PassFailure, EmitError) as error:
        outcome.reason = getattr(error, "message", str(error))
        return
    if problem:
        outcome.reason = problem
        return
    if mode == Mode.LEGACY:
        plan = plan_legacy_local_store(src, buffer, element.logical_bits, target, view=view)
    else:
        plan = plan_local_store(src, buffer, element.logical_bits, target, view=view)
    if not plan:
        outcome.reason = plan.reason
        return
    outcome.plan = plan


def shared_accesses_problem(plan: ConversionPlan, target: Target) -> str:
    """Why a conversion's island would make too many shared-memory accesses a thread for LLVM's
    O3 on this target and release ("" if it would not): ``MAX_SHARED_ACCESSES_PER_THREAD``."""
    if target.vendor is not Vendor.NVIDIA or installed_triton_version() < SHARED_ACCESS_LIMIT_SINCE:
        return ""
    shared = getattr(plan, "shared", None)
    if shared is None:
        return ""
    accesses = sum(1 for op in shared.ops if isinstance(op, SharedAccess))
    if accesses <= MAX_SHARED_ACCESSES_PER_THREAD:
        return ""
    return (f"{accesses} shared-memory accesses per thread; islands are limited to "
            f"{MAX_SHARED_ACCESSES_PER_THREAD} on NVIDIA from triton {'.'.join(map(str, SHARED_ACCESS_LIMIT_SINCE))} "
            f"(MAX_SHARED_ACCESSES_PER_THREAD: LLVM's SLP vectorizer can take many times stock's compile time "
            f"on such a module)")


def _island_limits_problem(module: Module, target, *layouts) -> str:
    """Why an island for these distributed layouts cannot be emitted here ("" if it can)."""
    per_thread = max(layout.in_dims.get("register", 1) for layout in layouts)
    if per_thread > MAX_ELEMENTS_PER_THREAD:
        return (f"{per_thread} elements per thread; islands are limited to {MAX_ELEMENTS_PER_THREAD} "
                f"per thread (MAX_ELEMENTS_PER_THREAD)")
    if (module.threads_per_warp or target.warp_size) != target.warp_size:
        return f"the module has {module.threads_per_warp} threads per warp, {target.name} has {target.warp_size}"
    return ""


def _plan_local_load(module: Module, op: Operation, target, outcome: ConvertOutcome, mode: Mode = Mode.LINEAR) -> None:
    """Plan one ``ttg.local_load`` (sets ``outcome.plan``, or ``outcome.reason``).

    Any producer of the memdesc will do (an allocation, ``ttg.memdesc_index``,
    ``ttg.memdesc_subslice``, a loop's block argument, ...): Triton's own lowering reads a
    memdesc from its type and its descriptor struct alone, and so does the island.  The struct
    is the base pointer and one i32 offset per dim; for a whole-buffer type Triton reads the
    element at ``L^-1(c)`` and ignores the offsets (zero by construction), for a subslice view
    type (``!ttg.memdesc<32x8xf64, ..., 32x16>``) it reads the offsets o, the view's start in
    its allocation, and ``L^-1(c) xor L^-1(o)`` (``lowering.local_memory``: ``SubsliceView``)."""
    source, result = op.operands[0], op.results[0]
    outcome.method = LOCAL_LOAD
    try:
        buffer, dst = value_layout(source, op), value_layout(result, op)
        element = island_element_type(result.tensor_type.element_type)
        view, problem = _memdesc_access(source, op)
    except (PassFailure, EmitError) as error:
        outcome.reason = getattr(error, "message", str(error))
        return
    problem = problem or _island_limits_problem(module, target, dst)
    if problem:
        outcome.reason = problem
        return
    if mode == Mode.LEGACY:
        plan = plan_legacy_local_load(buffer, dst, element.logical_bits, target, result.tensor_type.encoding,
                                      view=view)
    else:
        plan = plan_local_load(buffer, dst, element.logical_bits, target, view=view)
    if not plan:
        outcome.reason = plan.reason
        return
    outcome.plan = plan


def _memdesc_access(memdesc, op: Operation) -> tuple[bool, str]:
    """(whether ``memdesc`` is a subslice view, why its local load or store is left to Triton or
    "").  Left to Triton: views with a leading buffer dim, and ``padded_shared`` buffers and
    views.  A ``padded_shared`` layout maps offsets to elements *before* padding: Triton then
    moves offset ``x`` to ``x + (x >> log2 I) * P`` for every interval ``[I:+P]`` (``[16:+4]``:
    element 16 sits at 20; for a view, the sum ``L^-1(c) xor L^-1(o)`` as a whole), which our
    islands do not do."""
    layout = memdesc_layout(memdesc, op)
    padded = isinstance(layout.encoding, PaddedSharedEncoding)
    if layout.view_shape == layout.buffer_shape:
        if padded:
            return False, f"a padded_shared buffer ({layout.encoding}): our islands do not pad offsets; left to Triton"
        return False, ""
    shape = "x".join(map(str, layout.view_shape)) + " of " + "x".join(map(str, layout.buffer_shape))
    if layout.buffers is not None:
        return True, f"a view ({shape}) with a leading buffer dim: left to Triton"
    if padded:
        return True, f"a padded_shared view ({shape}): left to Triton"
    return True, ""



def _instruction_mix(plan) -> dict:
    """The plan's instructions by name (``st.shared.b128=4, ...``), as the measurements record them."""
    return instruction_counts(plan_cost(plan), plan.target)


def _follow_measurement(plan, src, dst, bits, target, outcome: ConvertOutcome):
    """(the plan to emit, whether stock Triton's lowering was measured faster).  A recorded
    measurement is followed only while the planner still builds the plans it measured."""
    choice = measured_choices.lookup(src, dst, bits, target.name)
    if choice is None or _instruction_mix(plan) != choice.model_pick_mix:
        return plan, False
    if choice.fastest is STOCK:
        if not measured_choices.same_release(choice.triton, triton_version()):
            return plan, False
        outcome.method = plan.method
        outcome.reason = choice.explain()
        return plan, True
    alternative = _plan_remembered(src, dst, bits, target, choice.fastest)
    if not alternative or _instruction_mix(alternative) != choice.fastest_mix:
        return plan, False
    outcome.measured = choice.explain()
    return alternative, False


def _stock_forwards_values(src, dst, bits: int, target, outcome: ConvertOutcome) -> bool:
    """Whether the conversion is left to stock Triton because neither side issues an instruction
    for it (``stock_lowering.stock_moves_nothing``: a no-op or a renaming of registers): our island
    would only cost compile time (its emission, its simulation, the module's re-parse; about
    1 ms a conversion, and 1 to 3 ms for a kernel with no other island).  Sets the remark.
    Example: ``blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>``
    to the same layout written as a ``#ttg.linear``: a no-op, left to Triton with a remark."""
    try:
        scope = stock_moves_nothing(src, dst, bits, target)
    except INVALID_CONVERSION_ERRORS:
        return False       # the planner says why
    if scope is None or stock_hazard(src, dst, bits, target):
        return False
    outcome.method = Method.NOOP if scope is Scope.NONE else Method.RENAME
    what = "the two layouts are one map" if scope is Scope.NONE else "it only renames registers"
    outcome.reason = (f"stock Triton's lowering: {what}, and stock forwards the values without an instruction as "
                      f"our island would (left to it, the compile makes no island)")
    return True


def _gate_before_planning(src, dst, bits: int, target, measured: bool) -> str:
    """Why the conversion is left to stock Triton whatever plan the planner would build for it,
    or "" when that is not known without the plan.  Known where the model answers for this
    target and release and its rule sends every plan of the conversion's scope and candidate
    methods (``lowering.planner.candidate_methods``) to stock (``fitted_model.could_be_ours``);
    never where stock's lowering is hazardous or a measurement is recorded for the conversion
    (either can overrule the model).  The decision is the one ``_follow_model`` takes on the
    planned pick (``test_gate_first``); only the remark may differ, so runs that print remarks
    plan in full.  Example: on sm_90 with triton 3.6 (rule ``stock-shuffles``), a lane-scope
    conversion stock moves with warp shuffles and for which the planner has shared-memory
    candidates only: the planner, its verifier and the cost model do not run (about 2 ms a
    conversion)."""
    if model_choice.gate_turned_off():
        return ""
    model = model_choice.load_model()
    if model is None or not model.applies_to(target.name, triton_version()):
        return ""
    try:
        scope, methods = candidate_methods(src, dst, target)
    except INVALID_CONVERSION_ERRORS:
        return ""          # the planner says why
    if scope not in (Scope.LANE, Scope.WARP) or not methods:
        return ""
    warps = src.in_dim_size("warp") if src.has_in_dim("warp") else 1
    by_stock_shuffles = model.rule == model_choice.STOCK_SHUFFLES
    stock_shuffles = stock_warp_shuffles(src, dst, bits, target) if by_stock_shuffles and scope is Scope.LANE else None
    if model_choice.could_be_ours(model, str(scope), methods, warps, stock_shuffles):
        return ""
    if measured and measured_choices.lookup(src, dst, bits, target.name) is not None:
        return ""
    if stock_hazard(src, dst, bits, target):
        return ""
    if by_stock_shuffles:
        return model_choice.stock_shuffles_reason(stock_shuffles, "and no plan of ours for it is a shuffle plan", model)
    kinds = "/".join(sorted(str(m) for m in methods))
    return ("stock Triton's lowering: the cost model cannot show a gain larger than its own error for any "
            f"{scope}-scope {kinds} plan over {warps} warp(s) (no such family is kept by "
            f"lowering/choosing/choice_model.json, fitted on {model.measured_on}, triton {model.triton}; "
            "remarks=true names the planned pick's family)")


def _follow_model(plan, src, dst, bits, target, outcome: ConvertOutcome) -> bool:
    """Whether the choice (``lowering.choosing.fitted_model``: the rule chosen on dependent-chain times for
    its target and Triton release; elsewhere stock's floor, ``lowering.choosing.stock_bounds``) leaves the
    conversion to stock Triton; sets the remark."""
    decision = model_choice.decide(plan, target.name, triton_version())
    if decision is None or decision.plan is not None:
        return False
    outcome.method = plan.method
    outcome.reason = decision.reason
    return True


# Plans made in this process, by (source, destination, element bits, target).  The planner is
# a pure function of these (and verifies every plan it returns), and real programs ask for the
# same conversion again and again: every autotuning config, every recompile of a kernel.
_PLANS: "OrderedDict[tuple, object]" = OrderedDict()
_PLANS_KEPT = 4096


class _ModuleMemo:
    """What one :func:`lower_module` call has planned and simulated, by exact input.

    A kernel often converts the same layouts twice (rotary embeddings: the cosine and the sine
    halves; attention: one conversion per loop stage).  The planner is deterministic and the
    simulator's verdict depends only on the island's text, plan and site, so within one module
    the second of two identical conversions takes the first one's plan and verdict, even with
    the memory across compiles (``passes.verified_islands``) off: the same work, not less checking."""

    def __init__(self):
        self.plans: dict[tuple, object] = {}
        self.verdicts: dict[str, object] = {}


_module_memo: Optional[_ModuleMemo] = None    # set while lower_module runs


def _plan_remembered(src, dst, bits: int, target, rank: int = 0):
    from . import verified_islands

    key = (src, dst, bits, target, rank)
    if _module_memo is not None and key in _module_memo.plans:
        return _module_memo.plans[key]
    plan = _plan_across_compiles(key) if verified_islands.caching_enabled() else plan_conversion(*key)
    if _module_memo is not None:
        _module_memo.plans[key] = plan
    return plan


def _plan_across_compiles(key: tuple):
    """The plan of ``key`` from the process-wide memory of plans (made and kept if absent)."""
    plan = _PLANS.get(key)
    if plan is None:
        plan = plan_conversion(*key)
        _PLANS[key] = plan
        if len(_PLANS) > _PLANS_KEPT:
            _PLANS.popitem(last=False)
    else:
        _PLANS.move_to_end(key)
    return plan


# The SSA prefix islands are emitted with (``%llX_7``); renamed to ``%ll<number>_`` on splicing.
_CACHEABLE_PREFIX = "llX"


def _simulate_unless_accepted(island_text: str, plan, site: ConvertSite, rank: int = 0):
    """The emitted-code simulator's verdict on ``island_text``: remembered if it accepted this
    very text for this plan and site before (``passes.verified_islands``), else a fresh run.
    ``rank``: the memdesc's rank for a local load's island (0 for a convert's)."""
    from ..lowering.sim.island_sim import check_emitted
    from ..lowering.sim.sim_local_memory import check_emitted_local_load, check_emitted_local_store
    from ..lowering.verify import VerificationResult
    from . import verified_islands

    key = verified_islands.verdict_key(island_text, plan, site, triton_version())
    if _module_memo is not None and key in _module_memo.verdicts:
        return _module_memo.verdicts[key]
    if verified_islands.is_accepted(key):
        return VerificationResult(True)
    if plan.method == LOCAL_LOAD:
        check = check_emitted_local_load(island_text, plan, site, rank)
    elif plan.method == LOCAL_STORE:
        check = check_emitted_local_store(island_text, plan, site, rank)
    else:
        check = check_emitted(island_text, plan, site)
    if check:
        verified_islands.remember_accepted(key)
    if _module_memo is not None:
        _module_memo.verdicts[key] = check
    return check


def _strict_check() -> bool:
    return os.environ.get(STRICT_CHECK_VARIABLE, "").strip() not in ("", "0")


def lower_module(module: Module, options: Optional["LowerConversions"] = None, *, gate_first: bool = False,
                 **values) -> list[ConvertOutcome]:
    """Replace every op we can lower by its island (in place); return every outcome.
    ``options``: the pass (its fields are the options); or the option values as keywords
    (``lower_module(module, only="shuffle", target="sm_90")``), read as the pipeline reads them.
    ``gate_first``: where the stock gate leaves every plan the planner could build to Triton,
    build none (``_gate_before_planning``: the same decisions; such an outcome's reason names
    the conversion's scope instead of the planned pick's family, and its ``method`` is unset).
    The pass sets it when it prints no remarks."""
    if options is None:
        options = LowerConversions(**values)
    elif values:
        raise TypeError("lower_module: give either a LowerConversions pass or option values, not both")
    global _module_memo
    outer, _module_memo = _module_memo, _ModuleMemo()
    try:
        return _lower_module(module, options, gate_first)
    finally:
        _module_memo = outer


def _lower_module(module: Module, options: "LowerConversions", gate_first: bool = False) -> list[ConvertOutcome]:
    planned = plan_module(module, options, gate_first)
    if not any(outcome.plan is not None for _, outcome in planned):
        return [o for _, o in planned]     # no island: no guards to place, nothing to splice
    guards = GuardPlacement(module, [(op, o.plan.method) for op, o in planned if o.plan is not None])
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
        island = _checked_island(op, outcome, _site_for(op, outcome, guards), options.verify)
        if island is None:
            continue
        # Islands are emitted (and their verdicts remembered) with one SSA prefix, so the same
        # conversion anywhere hashes alike; each gets its own prefix in the module.
        island.text = island.text.replace(f"%{_CACHEABLE_PREFIX}_", f"%ll{number}_")
        outcome.island = islands[number] = island
        positions.islands[position_of[id(op)]] = number
    if islands:
        module.rewrite_text(lambda text: splice_islands(text, islands, positions=positions))
    return [o for _, o in planned]


def _stores(op: Operation) -> bool:
    """The op's island stores registers into a buffer (a local store; an allocation with a
    source is a store into a fresh buffer); the others load registers (a convert, a local load)."""
    return op.name in ("ttg.local_store", "ttg.local_alloc")


def _memdesc_rank(op: Operation) -> int:
    """The rank of the buffer a local load, store or allocation accesses (0 for a convert)."""
    memdesc = {"ttg.local_load": lambda: op.operands[0], "ttg.local_store": lambda: op.operands[1],
               "ttg.local_alloc": lambda: op.results[0]}.get(op.name)
    return 0 if memdesc is None else len(memdesc().tensor_type.shape)


def _site_for(op: Operation, outcome: ConvertOutcome, guards: GuardPlacement) -> ConvertSite:
    """Where the island goes: placeholders for the op's SSA names and types (filled in when it
    is spliced), its element type, its guards, and the warps that run it."""
    storing = _stores(op)
    allocating = op.name == "ttg.local_alloc"
    value = op.operands[0] if storing else op.results[0]
    buffer = f"%{_CACHEABLE_PREFIX}_buffer" if allocating else "%BUFFER"
    site = ConvertSite(result="" if storing else "%RESULT", source="%SOURCE", src_type="@SRC_TYPE@",
                       dst_type="" if storing else "@DST_TYPE@", element_type=value.tensor_type.element_type,
                       buffer=buffer if storing else "", buffer_type="@BUFFER_TYPE@" if storing else "",
                       guard_before=guards.before(op), guard_after=guards.after(op),
                       prefix=_CACHEABLE_PREFIX,
                       unique_struct=installed_conventions().struct_holds_unique_registers, in_loop=in_loop(op),
                       threads=outcome.threads)
    if guards.async_fence(op):
        site.async_fence = True
    return site


def _checked_island(op: Operation, outcome: ConvertOutcome, site: ConvertSite,
                    verify: VerifyLevel) -> Optional[Island]:
    """The op's island, emitted and (``verify=emitted``) simulated; None, with
    ``outcome.reason`` set and its plan dropped, when it cannot be emitted or fails the
    simulator (an error instead under ``LINEAR_LAYOUTS_STRICT_CHECK``)."""
    rank = _memdesc_rank(op)
    try:
        if op.name == "ttg.local_load":
            island = emit_local_load_island(outcome.plan, site, rank)
        elif _stores(op):
            island = emit_local_store_island(outcome.plan, site, rank)
        else:
            island = emit_island(outcome.plan, site)
    except EmitError as error:
        outcome.plan, outcome.reason = None, str(error)
        return None
    if verify == VerifyLevel.EMITTED:
        check = _simulate_unless_accepted(island.text, outcome.plan, site, rank)
        outcome.emitted_check = check
        if not check:
            message = f"the emitted island failed the simulator: {check.errors[0]}"
            if _strict_check():
                raise PassFailure(op, f"internal error: {message}")
            outcome.plan, outcome.reason = None, message
            return None
    if op.name == "ttg.local_alloc":
        island.text = allocation_around(island.text, site.buffer, rank)
    return island


@dataclass(frozen=True)
class LowerConversions(ModulePass):
    """The pass, and the options of one lowering run (its fields).  Whoever builds it (a
    pipeline string, ``enable()``, :func:`lower_text`) may give an option as its word
    (``mode="legacy"``, ``only="shuffle,shared"``, ``target="sm_90"``); each is read into its
    type here, once (``passes.options``), and everything downstream reads the typed value."""

    name = "ll-lower-conversions"
    description = "Replace each verified ttg.convert_layout plan by an LLVM-dialect island (NVIDIA PTX / AMD)"
    only: Methods = Methods()          # the plan methods we own; empty: DEFAULT_METHODS
    remarks: bool = False
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
    # take candidate RANK ("stock": left to Triton), the others are planned as usual: benchmarks/kernel_choice.py times
    # one conversion of a kernel with several at a time.
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
                 "candidate_for": parse_candidate_for(self.candidate_for, "candidate_for")}
        for name, value in typed.items():
            object.__setattr__(self, name, value)   # a frozen dataclass: set once, here

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
        remarks = self.remarks or getattr(context, "remarks", False)
        # Without remarks no one reads why a conversion went to Triton: the gate may decide
        # before planning (the same decisions; the reason then names the scope, not the pick's family).
        outcomes = lower_module(module, options, gate_first=not remarks)
        if remarks:
            for outcome in outcomes:
                context.report(outcome.remark())


def lower_text(text: str, filename: str = "<module>", **options) -> tuple[str, list[ConvertOutcome]]:
    """The Python API: TTGIR text in, TTGIR text with islands out (plus every outcome); the
    options are :class:`LowerConversions`' (``only="shuffle"``, ``target="sm_90"``, ...).
    Hand the result to ``triton.compile`` (as a ``.ttgir`` file) for PTX/cubin or AMDGCN/hsaco."""
    from .ir.snapshot import parse_module
    lowering = LowerConversions(**options)
    module = parse_module(text, filename)
    outcomes = lower_module(module, lowering)
    return module.print(debuginfo=True), outcomes
