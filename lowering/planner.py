"""The conversion planner: ``plan_conversion(src, dst, bits, target)``.

1. Both layouts lose their broadcast registers (each element is planned once; the final rename
   copies it into every register that names it).
2. The minimal conversion C = dst.invert_and_compose(src), with block, warp, lane and register
   stripped from the slowest while C is the identity on them (Triton's ``minimalCvtLayout`` in
   ``lib/Analysis/Utility.cpp``; ``lowering.conversion``), gives the *scope*: the slowest dim left.
3. By scope:
   * none / register: a register rename, no instructions;
   * lane: warp shuffles (``lowering.shuffle``) or shared memory, whichever the cost model
     (``lowering.cost``) says is cheaper;
   * warp: shared memory with the optimal swizzle (``lowering.shared``, ``lowering.swizzle``),
     in Triton's rounds;
   * block (the data crosses the CTAs of a cluster): on targets with distributed shared memory
     (sm_90), every CTA stores to its own buffer and loads from the CTA holding what it wants,
     between cluster barriers (``_cluster_candidates``); elsewhere ``Unsupported`` (left to
     Triton).
4. Every candidate plan goes through the exhaustive verifier (``lowering.verify``) before it is
   returned; a plan that fails is dropped (and the next candidate tried).  If none passes, the
   result is ``Unsupported`` with the verifier's message.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from ..dialect import f2
from ..dialect.linear_layout import LayoutError, LinearLayout
from .conversion import minimal_conversion, scope_of
from .cost import plan_cost
from .hardware import HardwareLayout, aligned_pair, to_linear_layout
from .instructions import AccessKind
from .plan import ConversionPlan, Method, RegisterRename, Scope, SharedAccess, Unsupported
from .element_type import ElementType, UnknownElementType, storage_bits_of
from .shared import cluster_coordinates, cta_local, cta_space, instruction_pairs, plan_shared_memory
from .shuffle import LaneConversion, packing_pairs, plan_shuffles, with_phantom_registers, word_level, word_registers
from . import settings
from .settings import DEFAULT_ROUND_SCRATCH  # noqa: F401  (the default, known by this module's name too)
from .target import Target, UnknownTarget, target_named
from .verify import verify_plan

SUPPORTED_BITS = (1, 8, 16, 32, 64)


class UnsupportedElementWidth(ValueError):
    """An element width the planner does not plan for (not one of ``SUPPORTED_BITS``)."""


# What bad input raises on its way into the planner: layouts that are not two distributed
# layouts of one tensor, a target or element type we do not know.  A planner entry point
# answers these with ``Unsupported``; any other exception is a bug and propagates.
INVALID_CONVERSION_ERRORS = (LayoutError, UnknownTarget, UnknownElementType, UnsupportedElementWidth)


# The largest scratch buffer (bytes) a shared-memory candidate may take to do a conversion in
# fewer rounds than Triton's swizzle does (``lowering.shared.fewer_rounds``); 0 plans Triton's
# rounds only.  Why a bound: the buffer adds to the kernel's shared memory while the conversion
# runs (Triton's allocator reuses it afterwards), and shared memory bounds how many CTAs an SM
# holds.  Measured: docs/lowering-choice.md, 'Fewer rounds'.  The plugin's setting
# ``round_scratch`` (``enable(round_scratch=...)``, or ``LINEAR_LAYOUTS_ROUND_SCRATCH``).
ROUND_SCRATCH_VARIABLE = "LINEAR_LAYOUTS_ROUND_SCRATCH"


def round_scratch_budget() -> int:
    """The setting ``round_scratch`` in bytes (``DEFAULT_ROUND_SCRATCH`` unless set;
    ``lowering.settings``).  A value that is no number of bytes is an error where it is read
    (``passes.drop_in.environment``), naming where it came from."""
    return settings.current().round_scratch


def element_bits_of(bits) -> int:
    """1, 8, 16, 32, 64, or a type name: "i1", "f16", "ptr" (pointers are 64-bit): the
    element's logical bits (see :mod:`.element_type`)."""
    if isinstance(bits, str):
        name = bits.strip()
        bits = 64 if name.lower() in ("ptr", "pointer") else ElementType.of(name).logical_bits
    if bits not in SUPPORTED_BITS:
        raise UnsupportedElementWidth(f"element width {bits} bits is not supported (supported: {SUPPORTED_BITS})")
    return bits


@dataclass(frozen=True)
class PlanInputs:
    """What every candidate plan of one conversion is built from: the two linear layouts (the
    destination aligned to the source), the scope, the element width and the target, which every
    plan carries, and both layouts on the hardware dims with their broadcast registers
    (``*_full``: the registers a plan reads and writes) and without (``*_u``: each element once).
    """
    src: LinearLayout
    dst: LinearLayout
    scope: Scope
    bits: int
    target: Target
    src_full: HardwareLayout
    src_u: HardwareLayout
    dst_full: HardwareLayout
    dst_u: HardwareLayout

    def plan(self, method: Method, output, **parts) -> ConversionPlan:
        """A plan of this conversion by ``method``, its output renaming and its ``parts``
        (``shuffle=``, ``shared=``, ``notes=``)."""
        return ConversionPlan(src=self.src, dst=self.dst, element_bits=self.bits, target=self.target,
                              scope=self.scope, method=method, output=output, **parts)

    def rename(self) -> RegisterRename:
        """The destination's registers from the source's (none/register scope)."""
        return register_rename(self.src_full, self.src_u, self.dst_full, self.dst_u)


def register_rename(src_full: HardwareLayout, src_u: HardwareLayout, dst_full: HardwareLayout,
                     dst_u: HardwareLayout) -> RegisterRename:
    """dst[j] = src[i]: the source register of the same thread holding the element that
    destination register j names (none/register scope: C moves registers only).

    C = dst.invert_and_compose(src) on the unique registers, evaluated at (register u, lane 0,
    warp 0, block 0); its register output is the source's unique register, which we rename to a
    full source register.  Worked example: src registers [1, 2], dst registers [2, 0, 1]: dst
    register 0b100 names element 1 = src register 0b01; dst register 0b010 is a copy of dst
    register 0 (element 0).
    """
    dims = ("register", "lane", "warp", "block")
    s = to_linear_layout({d: src_u.columns(d) for d in dims}, src_u.element_bits)
    d = to_linear_layout({d: dst_u.columns(d) for d in dims}, dst_u.element_bits)
    conversion = d.invert_and_compose(s)
    zero = {name: 0 for name in conversion.in_dim_names}
    sources = []
    for j in range(1 << len(dst_full.register)):
        u = dst_full.canonical_register(j)
        image = conversion.apply({**zero, "register": u})
        sources.append(src_full.full_register(image["register"]))
    return RegisterRename("src", tuple(sources))


def staging_rename(dst: HardwareLayout) -> RegisterRename:
    return RegisterRename("staging", tuple(dst.canonical_register(j) for j in range(1 << len(dst.register))))


def _columns(conversion: LinearLayout, dim: str):
    outs = conversion.out_dim_names
    ri = outs.index("register") if "register" in outs else None
    li = outs.index("lane") if "lane" in outs else None
    regs, lanes = [], []
    for b in conversion.bases.get(dim, ()):
        regs.append(b[ri] if ri is not None else 0)
        lanes.append(b[li] if li is not None else 0)
    return tuple(regs), tuple(lanes)


def _warp_local_columns(conversion: LinearLayout, src_u: HardwareLayout) -> tuple[tuple, tuple] | None:
    """(Cwr, Cwl) when a warp-scope conversion is in fact local to every warp, else None.

    C may send a destination warp bit into source registers or lanes when the source is
    broadcast over warps: every warp holds all the data, and any copy will do.  Adding to C a
    map K into the source's broadcast warp bits (src(K x) = 0, so C + K is still correct) makes
    every thread read its own warp, provided C's warp part is the identity up to broadcast bits.
    Example (blocked, 4 warps): the source broadcasts over both warp bits, the destination's
    warp bit 1 is column 4: C(warp 2) = (lane 1, warp 0); K adds warp 2: warp 2 reads lane 1 of
    its own copy, an intra-warp conversion with the warp-dependent source lane ``... ^ w1``.
    """
    outs = conversion.out_dim_names
    if not conversion.has_in_dim("warp") or "block" in conversion.in_dim_names or "warp" not in outs:
        return None
    wi = outs.index("warp")
    broadcast = sum(1 << i for i, c in enumerate(src_u.warp) if c == 0)
    for dim in ("register", "lane"):
        for b in conversion.bases.get(dim, ()):
            if b[wi] & ~broadcast:
                return None
    for i, b in enumerate(conversion.bases["warp"]):
        if (b[wi] ^ (1 << i)) & ~broadcast:
            return None
    return _columns(conversion, "warp")


def _shuffle_candidates(inputs: PlanInputs, conversion: LinearLayout,
                        warp_columns: tuple[tuple, tuple] = ((), ())) -> list[ConversionPlan]:
    src_full, src_u, dst_u, target = inputs.src_full, inputs.src_u, inputs.dst_u, inputs.target
    if conversion.in_dim_size("lane") != target.warp_size:
        return []
    crr, crl = _columns(conversion, "register")
    clr, cll = _columns(conversion, "lane")
    conv = LaneConversion(len(src_u.register), len(dst_u.register), target.lane_bits, crr, crl, clr, cll,
                          *warp_columns)
    ebits = storage_bits_of(inputs.bits)
    words_per_element = 2 if ebits == 64 else 1
    max_pairs = (32 // ebits).bit_length() - 1 if ebits <= 16 else 0
    pairs_all = packing_pairs(conv, max_pairs)
    plans = []
    for n_pairs in sorted({len(pairs_all), 0}, reverse=True):
        pairs = pairs_all[:n_pairs]
        wconv = word_level(conv, pairs)
        src_words = [tuple(src_full.full_register(u) for u in word)
                     for word in word_registers(conv.src_registers, [a for _, a in pairs])]
        dst_words = word_registers(conv.dst_registers, [b for b, _ in pairs])
        broadcast_lanes = tuple(j for j, c in enumerate(src_u.lane) if c == 0)
        found = plan_shuffles(wconv, src_words, dst_words, 1 << n_pairs, words_per_element, target.warp_size,
                              src_broadcast_lanes=broadcast_lanes, weights=target.weights)
        # Too few destination words for the rounds needed: add phantom registers (thrown away).
        extra = 1
        while found is None and extra <= min(2, wconv.src_registers - wconv.dst_registers):
            padded = with_phantom_registers(wconv, extra)
            if padded is not None:
                phantom_words = dst_words + [()] * ((1 << padded.dst_registers) - len(dst_words))
                found = plan_shuffles(padded, src_words, phantom_words, 1 << n_pairs, words_per_element,
                                      target.warp_size, src_broadcast_lanes=broadcast_lanes,
                                      weights=target.weights)
            extra += 1
        if found is None:
            continue
        shuffle_plan, _ = found
        plans.append(inputs.plan(Method.SHUFFLE, staging_rename(inputs.dst_full), shuffle=shuffle_plan))
    return plans


def _shared_candidates(inputs: PlanInputs, warp_local: bool) -> list[ConversionPlan]:
    src_u, dst_u, bits, target = inputs.src_u, inputs.dst_u, inputs.bits, inputs.target
    rows = cta_space(src_u)
    rows_dst = cta_space(dst_u)
    basis = f2.EchelonBasis(rows)
    if any(not basis.contains(r) for r in rows_dst):
        return []  # the destination needs elements this CTA's source does not hold
    src_local = cta_local(src_u, rows)
    dst_local = cta_local(dst_u, rows)
    plans = []
    output = None     # the same for every pair: made once
    for store_form, load_form in instruction_pairs(target, bits):
        shared = plan_shared_memory(src_local, dst_local, bits, target, inputs.src_full.full_register, warp_local,
                                    store_form, load_form)
        if shared is not None:
            if output is None:
                output = staging_rename(inputs.dst_full)
            plans.append(inputs.plan(Method.SHARED, output, shared=shared))
    return plans


def _cluster_candidates(inputs: PlanInputs) -> list[ConversionPlan]:
    """Cross-CTA conversions through distributed shared memory (sm_90): every CTA stores its
    elements into its own buffer, cluster barrier, every thread loads from the CTA holding the
    element it wants (a load from distributed shared memory), cluster barrier."""
    found = cluster_coordinates(inputs.src_u, inputs.dst_u)
    if found is None:
        return []
    src_c, dst_c, view = found
    shared = plan_shared_memory(src_c, dst_c, inputs.bits, inputs.target, inputs.src_full.full_register, False,
                                cluster=view)
    if shared is None:
        return []
    return [inputs.plan(Method.SHARED, staging_rename(inputs.dst_full), shared=shared,
                        notes=("distributed shared memory: loads read other CTAs' buffers",))]


def plan_candidates(src: LinearLayout, dst: LinearLayout, bits, target) -> tuple[list[ConversionPlan], str]:
    """Every plan the planner can build for this conversion, cheapest first (unverified), and the
    scope.  ``plan_conversion`` is the public entry point; this is for tests and benchmarks.

    Remembered per process (plans are immutable, the planner a pure function of its inputs): in
    a compile with ``ll-assign-layouts``, the cost model prices the candidate conversions and the
    lowering then plans the ones it keeps, the same calls; ``passes.drop_in.process_memory`` forgets
    them for a cold compile."""
    target = target_named(target) if isinstance(target, str) else target
    plans, scope = _plan_candidates(src, dst, element_bits_of(bits), target)
    return list(plans), scope


@functools.lru_cache(maxsize=1024)
def _prepared(src: LinearLayout, dst: LinearLayout, target: Target):
    """What every candidate starts from: (the aligned destination, both layouts on the hardware
    dims with and without broadcast registers, the minimal conversion, its scope)."""
    dst = aligned_pair(src, dst, target.warp_size, target.name)
    order = src.out_dim_names
    src_full = HardwareLayout.of(src, order)
    dst_full = HardwareLayout.of(dst, order)
    src_u, dst_u = src_full.unique_registers(), dst_full.unique_registers()
    conversion = minimal_conversion(src, dst)
    return dst, src_full, dst_full, src_u, dst_u, conversion, scope_of(conversion)


def candidate_methods(src: LinearLayout, dst: LinearLayout, target) -> tuple[Scope, frozenset]:
    """(the conversion's scope, a superset of the methods of the candidates ``plan_candidates``
    can return for it), without building any candidate: what a choice that depends only on the
    scope and the method (``lowering.choosing.fitted_model.could_be_ours``) can be decided from
    before planning.  Example: a warp-scope conversion whose source is not broadcast over warps
    has no warp-local shuffle candidate: ``(Scope.WARP, {shared})``.  Raises what the planner
    raises on invalid input (``INVALID_CONVERSION_ERRORS``)."""
    target = target_named(target) if isinstance(target, str) else target
    _, _, _, src_u, _, conversion, scope = _prepared(src, dst, target)
    if scope is Scope.NONE:
        return scope, frozenset({Method.NOOP})
    if scope is Scope.REGISTER:
        return scope, frozenset({Method.RENAME})
    if scope is Scope.BLOCK:
        return scope, frozenset({Method.SHARED} if target.has_distributed_shared_memory else ())
    shuffles = (conversion.in_dim_size("lane") == target.warp_size if scope is Scope.LANE
                else _warp_local_columns(conversion, src_u) is not None)
    return scope, frozenset({Method.SHARED, Method.SHUFFLE} if shuffles else {Method.SHARED})


@functools.lru_cache(maxsize=1024)
def _plan_candidates(src: LinearLayout, dst: LinearLayout, bits, target) -> tuple[tuple[ConversionPlan, ...], str]:
    """:func:`plan_candidates` with ``bits`` and ``target`` read, the plans as a tuple."""
    dst, src_full, dst_full, src_u, dst_u, conversion, scope = _prepared(src, dst, target)
    inputs = PlanInputs(src, dst, scope, bits, target, src_full, src_u, dst_full, dst_u)
    if scope in (Scope.NONE, Scope.REGISTER):
        return (inputs.plan(Method.NOOP if scope is Scope.NONE else Method.RENAME, inputs.rename()),), scope
    if scope is Scope.BLOCK:
        if not target.has_distributed_shared_memory:
            return (), scope
        return tuple(_cluster_candidates(inputs)), scope
    plans = []
    if scope is Scope.LANE:
        plans += _shuffle_candidates(inputs, conversion)
    elif scope is Scope.WARP:
        warp_columns = _warp_local_columns(conversion, src_u)
        if warp_columns is not None:
            notes = ("warp-local: the source is broadcast over warps, every warp reads its own copy",)
            plans += [replace(p, notes=notes) for p in _shuffle_candidates(inputs, conversion, warp_columns)]
    # A warp barrier is enough when data stays in its warp and no two warps share (broadcast) data:
    # two warps holding copies would store to the same words (Triton's isCvtDimSync(warp)).
    warp_local = scope is Scope.LANE and all(src_u.warp) and all(dst_u.warp)
    plans += _shared_candidates(inputs, warp_local=warp_local)
    # Cheapest first; on a tie the smaller scratch buffer (more rounds), like Triton's tie-break.
    costs = [plan_cost(p) for p in plans]
    keys = [(c.weight, c.scratch_bytes, i) for i, c in enumerate(costs)]
    return tuple(plans[k[2]] for k in sorted(keys)), scope


def plan_conversion(src: LinearLayout, dst: LinearLayout, bits, target, rank: int = 0) -> ConversionPlan | Unsupported:
    """A verified plan converting ``src`` to ``dst`` (distributed layouts of one tensor) for
    elements of ``bits`` bits (1, 8, 16, 32, 64 or "ptr") on ``target`` (a Target or a name such
    as "sm_90", "gfx942"); or ``Unsupported`` with the reason.

    ``rank`` picks a candidate other than the cheapest: the ``rank``-th verified plan in the cost
    model's order (0 = the cheapest).  ``benchmarks/plan_choice.py`` times every rank against each
    other and against stock Triton, to measure how good the cost model's choice is."""
    if rank < 0:
        raise ValueError(f"rank {rank}: expected 0 or more")
    try:
        target = target_named(target) if isinstance(target, str) else target
        plans, scope = plan_candidates(src, dst, bits, target)
    except INVALID_CONVERSION_ERRORS as e:
        return Unsupported(f"invalid conversion: {e}")
    if scope is Scope.BLOCK and not plans:
        why = ("needs distributed shared memory (sm_90 clusters)" if not target.has_distributed_shared_memory
               else "the source's block directions overlap its in-CTA directions")
        return Unsupported(f"cross-CTA conversion: data moves between CTAs of a cluster; {why}; left to Triton",
                           scope)
    return _verified_candidate(plans, scope, rank)


def with_fewer_rounds(plan: ConversionPlan, budget_bytes: int | None = None) -> ConversionPlan:
    """``plan`` doing its shared-memory rounds through a larger buffer, in fewer rounds, where a
    buffer of at most ``budget_bytes`` (default ``round_scratch_budget()``) allows it and the
    verifier passes the result; else ``plan`` itself.

    Triton's swizzle converts in rounds whenever both sides hold a direction in registers that
    is not part of the vector: each round stores, waits at a CTA barrier, loads, and waits again
    before the next round overwrites the buffer.  The same accesses through a buffer twice as
    large need half the rounds.  Worked example (sm_90, i32, 4 warps): ``#ttg.linear`` 32x256 ->
    ``blocked<[1, 4], [8, 4], [2, 2], order [0, 1]>``: Triton's swizzle takes 4 rounds through
    8 KB (16 ``st.shared.v4`` and 16 ``ld.shared.v4`` a thread, 7 barriers); with the default
    16 KB, 2 rounds (the same 32 accesses, 3 barriers); with 32 KB, 1 round (1 barrier).

    Kept apart from ``plan_candidates``: a candidate's rank names a measured plan
    (``lowering.choosing.measured_choices``), so the ranks stay those of Triton's rounds, and the
    choice (``lowering.choosing.lowering_choice``) applies this to the plan it picked."""
    shared = plan.shared if plan else None     # an Unsupported answer has no plan to change
    if (shared is None or plan.method is not Method.SHARED or shared.num_rounds == 1
            or plan.scope not in (Scope.LANE, Scope.WARP)):
        return plan
    if shared.waits_for_its_warp:
        # The data stays in its warp: each round waits at ``bar.warp.sync -1``, which ptxas
        # compiles to a NOP on sm_90 (stock's 2-warp f16 32x128 blocked -> mma v2: 14 in the PTX
        # of its loop, 14 NOPs in the SASS).  Fewer rounds would save no wait and only grow the
        # buffer: on an H100 that conversion in one round through 8 KB ran 1.126x stock's own
        # code in two through 4 KB (benchmarks/results/plan_warp_local_rows.md).
        return plan
    budget = round_scratch_budget() if budget_bytes is None else budget_bytes
    if budget < 2 * shared.scratch_bytes:
        return plan
    return _fewer_rounds(plan, budget) or plan


@functools.lru_cache(maxsize=1024)
def _fewer_rounds(plan: ConversionPlan, budget: int) -> ConversionPlan | None:
    """``plan`` planned again with ``budget`` bytes for its buffer (the same instruction pair
    and barrier scope), verified; None where that saves no round or fails the verifier."""
    ops = plan.shared.ops
    accesses = [op for op in ops if isinstance(op, SharedAccess)]
    store_form = next(op.form for op in accesses if op.kind is AccessKind.STORE)
    load_form = next(op.form for op in accesses if op.kind is AccessKind.LOAD)
    warp_local = plan.shared.waits_for_its_warp
    _, src_full, _, src_u, dst_u, _, _ = _prepared(plan.src, plan.dst, plan.target)
    rows = cta_space(src_u)
    shared = plan_shared_memory(cta_local(src_u, rows), cta_local(dst_u, rows), plan.element_bits, plan.target,
                                src_full.full_register, warp_local, store_form, load_form, round_budget_bytes=budget)
    if shared is None or shared.num_rounds >= plan.shared.num_rounds:
        return None
    note = (f"{shared.num_rounds} round(s) through {shared.scratch_bytes} bytes, where Triton's swizzle takes "
            f"{plan.shared.num_rounds} through {plan.shared.scratch_bytes}")
    fewer = replace(plan, shared=shared, notes=tuple(plan.notes) + (note,))
    return fewer if verify_plan(fewer).ok else None


def _verified_candidate(plans: list, scope: Scope, rank: int) -> ConversionPlan | Unsupported:
    """The ``rank``-th of ``plans`` (cheapest first) that passes the verifier, or why none is."""
    failures = []
    verified = 0
    for plan in plans:
        result = verify_plan(plan)
        if result.ok and verified == rank:
            return plan
        if result.ok:
            verified += 1
        else:
            failures.append(f"{plan.method}: {result.errors[0]}")
    if not plans:
        why = f"no plan found for a {scope}-scope conversion"
    elif verified:
        why = f"candidate {rank} asked for, and only {verified} plans passed the verifier"
    else:
        why = "no plan passed the verifier: " + "; ".join(failures)
    return Unsupported(why, scope)
