"""Plans for ``ttg.local_load`` (registers of a distributed layout <- a shared buffer whose layout
is fixed by its memdesc) and ``ttg.local_store`` (the same buffer <- registers).

A conversion through shared memory *chooses* its scratch layout (``lowering.shared``); a
``local_load`` reads a buffer someone else laid out: ``buffer`` maps the offset bits (in
elements) to tensor elements, and this plan is only the load half of a conversion.  Everything
else is the same algebra:

* ``inverse(element)`` = the offset holding that element: the buffer's offset columns,
  inverted over F2 (``f2.EchelonBasis.express``).  Composed with the destination layout, the
  offset of register r of lane l of warp w is ``inverse(dst(r)) ^ inverse(dst(l)) ^
  inverse(dst(w))``: affine in the thread ids, so one address per access and thread;
* vectors (``shared.widest_vector``): the longest run of low offset bits that are register
  directions of the destination, with every other direction leaving those bits alone (whole,
  aligned vectors), capped at 128 bits;
* ``ldmatrix`` (+ ``.trans``) where the target has it: the destination's tile (``matrix.py``,
  left division) must be realised by the buffer: its 16-byte row must be the buffer's offset
  bits 0.. and everything else must move whole rows (``shared._matrix_accesses`` checks it).

Worked example: a 16x16 fp16 buffer with row-major offsets (offset bits 0-3 = columns, 4-7 =
rows) read into ``sizePerThread = [1, 8]``, ``threadsPerWarp = [16, 2]`` (one warp): register
bits 0-2 are columns 1, 2, 4 = offset bits 0-2, lane bit 0 is column 8 = offset bit 3: every
lane loads its 8 registers with one 128-bit ``ld.shared.v4.b32``.  A swizzled buffer
(``vec = 8``: rows XOR whole groups of 8 columns) keeps offset bits 0-2 on columns 1, 2, 4, so
the load stays 128-bit; only its address changes.

Every plan returned has passed ``verify.verify_local_load`` (every destination register, every
thread, broadcast copies included); the buffer must hold every element of the tensor in one CTA
(``Unsupported`` otherwise, e.g. multi-CTA splits, which stay Triton's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dialect import f2
from ..dialect.linear_layout import LayoutError, LinearLayout
from .cost import PlanCost, shared_cost
from .element_type import storage_bits_of
from .hardware import HardwareLayout
from .instructions import AccessForm, AccessKind
from .matrix import matrix_tile
from .plan import Method, RegisterRename, SharedMemoryPlan, Unsupported
from .shared import _matrix_accesses, vector_accesses, widest_vector
from .target import Target
from .verify import verify_local_load, verify_local_store

LOCAL_LOAD = Method.LOCAL_LOAD
LOCAL_STORE = Method.LOCAL_STORE
LOCAL_ALLOC = Method.LOCAL_ALLOC   # a local_alloc with a source: planned as a LocalStorePlan


@dataclass(frozen=True)
class LocalLoadPlan:
    """Load the registers of ``dst`` from a buffer laid out by ``buffer`` (in dim ``offset``, in
    elements; out dims those of the tensor).  ``shared``: the loads (no stores, no barriers: the
    buffer was written before, and the barriers around the island are the pass's business),
    ``output``: staging registers -> every destination register (broadcast copies included)."""

    buffer: LinearLayout
    dst: LinearLayout
    element_bits: int
    target: Target
    shared: SharedMemoryPlan
    output: RegisterRename
    form: AccessForm = AccessForm.VECTOR
    method: Method = LOCAL_LOAD
    notes: tuple[str, ...] = field(default=())

    @property
    def src(self) -> LinearLayout:
        """Where the data comes from: the buffer (as ``ConversionPlan.src`` for conversions)."""
        return self.buffer

    @property
    def cost(self) -> PlanCost:
        return PlanCost(**shared_cost(self.shared, self.target))


def buffer_offsets(buffer: LinearLayout) -> list[int]:
    """The flat element index of each offset bit of the buffer (the layout's ``offset`` columns)."""
    if not buffer.has_in_dim("offset"):
        raise LayoutError(f"not a shared-memory layout: in dims {buffer.in_dim_names} have no 'offset'")
    return [buffer._pack(b) for b in buffer.bases["offset"]]


def _inverse(buffer: LinearLayout):
    """``element -> (offset, round 0)`` for a buffer whose offsets reach every element (the
    shape ``shared.vector_accesses`` expects; local loads have one round)."""
    basis = f2.EchelonBasis(buffer_offsets(buffer))

    def inverse(element: int) -> tuple[int, int]:
        offset = basis.express(element)
        if offset is None:
            raise LayoutError(f"element {element} is not in the buffer")
        return offset, 0
    return inverse


def plan_local_load_candidates(buffer: LinearLayout, dst: LinearLayout, element_bits: int,
                               target: Target) -> tuple[list[LocalLoadPlan], str]:
    """Every verified local-load plan (vector loads, ldmatrix, ldmatrix.trans), cheapest first,
    and, when there is none, why."""
    problem, dst = _check_pair(buffer, dst, target)
    if problem:
        return [], problem
    order = buffer.out_dim_names
    offsets = buffer_offsets(buffer)
    dst_full = HardwareLayout.of(dst, order)
    dst_u = dst_full.unique_registers()
    inverse = _inverse(buffer)
    ebits = storage_bits_of(element_bits)
    output = RegisterRename("staging", tuple(dst_full.canonical_register(j) for j in range(1 << len(dst_full.register))))
    size = 1 << len(offsets)

    def plan_of(loads, form: AccessForm, vector: int) -> LocalLoadPlan:
        shared = SharedMemoryPlan(element_bits, size, buffer, 1, tuple(loads), 0, vector)
        return LocalLoadPlan(buffer, dst, element_bits, target, shared, output, form)

    candidates = []
    max_log2 = max(0, (128 // ebits).bit_length() - 1)
    log2_vec, positions = widest_vector([inverse(c)[0] for c in dst_u.register],
                                        [inverse(c)[0] for c in dst_u.lane + dst_u.warp], max_log2)
    loads = vector_accesses(dst_u, inverse, log2_vec, positions, AccessKind.LOAD, lambda u: u, 1)[0]
    candidates.append(plan_of(loads, AccessForm.VECTOR, 1 << log2_vec))
    if target.has_ldmatrix and ebits in (8, 16, 32):
        row = tuple(offsets[:max_log2])
        for form in (AccessForm.MATRIX, AccessForm.MATRIX_TRANS):
            tile = matrix_tile(dst_u, AccessKind.LOAD, form, ebits, row, prefer=row)
            if tile is None:
                continue
            per_round = _matrix_accesses(dst_u, tile, inverse, lambda u: u, 1)
            if per_round is not None:
                candidates.append(plan_of(per_round[0], form, 128 // ebits))
    return _verified(candidates, verify_local_load, "local-load")


def plan_local_load(buffer: LinearLayout, dst: LinearLayout, element_bits: int,
                    target: Target) -> LocalLoadPlan | Unsupported:
    """The cheapest verified plan by the cost model, or ``Unsupported`` saying why."""
    plans, reason = plan_local_load_candidates(buffer, dst, element_bits, target)
    return plans[0] if plans else Unsupported(reason)


# ------------------------------------------------------------------------------- local stores

@dataclass(frozen=True)
class LocalStorePlan:
    """Store the registers of ``src`` into a buffer laid out by ``buffer``.  ``shared``: the
    stores (no loads, no barriers).  Threads that hold the same element (broadcast lanes or
    warps) all store it: the same value to the same bytes, which the verifier allows."""

    src: LinearLayout
    buffer: LinearLayout
    element_bits: int
    target: Target
    shared: SharedMemoryPlan
    form: AccessForm = AccessForm.VECTOR
    method: Method = LOCAL_STORE
    notes: tuple[str, ...] = field(default=())

    @property
    def dst(self) -> LinearLayout:
        """Where the data goes: the buffer (as ``ConversionPlan.dst`` for conversions)."""
        return self.buffer

    @property
    def cost(self) -> PlanCost:
        return PlanCost(**shared_cost(self.shared, self.target))


def plan_local_store_candidates(src: LinearLayout, buffer: LinearLayout, element_bits: int,
                                target: Target) -> tuple[list[LocalStorePlan], str]:
    """Every verified local-store plan (vector stores, stmatrix, stmatrix.trans), cheapest first,
    and, when there is none, why.  The same algebra as ``plan_local_load_candidates``, with the
    source's unique registers (a broadcast register is stored once)."""
    problem, src = _check_pair(buffer, src, target)
    if problem:
        return [], problem
    order = buffer.out_dim_names
    offsets = buffer_offsets(buffer)
    src_full = HardwareLayout.of(src, order)
    src_u = src_full.unique_registers()
    inverse = _inverse(buffer)
    ebits = storage_bits_of(element_bits)
    size = 1 << len(offsets)
    register_name = src_full.full_register   # unique register u -> a full register holding it

    def plan_of(stores, form: AccessForm, vector: int) -> LocalStorePlan:
        shared = SharedMemoryPlan(element_bits, size, buffer, 1, tuple(stores), vector, 0)
        return LocalStorePlan(src, buffer, element_bits, target, shared, form)

    candidates = []
    max_log2 = max(0, (128 // ebits).bit_length() - 1)
    log2_vec, positions = widest_vector([inverse(c)[0] for c in src_u.register],
                                        [inverse(c)[0] for c in src_u.lane + src_u.warp], max_log2)
    stores = vector_accesses(src_u, inverse, log2_vec, positions, AccessKind.STORE, register_name, 1)[0]
    candidates.append(plan_of(stores, AccessForm.VECTOR, 1 << log2_vec))
    if target.has_stmatrix and ebits in (8, 16, 32):
        row = tuple(offsets[:max_log2])
        for form in (AccessForm.MATRIX, AccessForm.MATRIX_TRANS):
            tile = matrix_tile(src_u, AccessKind.STORE, form, ebits, row, prefer=row)
            if tile is None:
                continue
            per_round = _matrix_accesses(src_u, tile, inverse, register_name, 1)
            if per_round is not None:
                candidates.append(plan_of(per_round[0], form, 128 // ebits))
    return _verified(candidates, verify_local_store, "local-store")


def plan_local_store(src: LinearLayout, buffer: LinearLayout, element_bits: int,
                     target: Target) -> LocalStorePlan | Unsupported:
    """The cheapest verified plan by the cost model, or ``Unsupported`` saying why."""
    plans, reason = plan_local_store_candidates(src, buffer, element_bits, target)
    return plans[0] if plans else Unsupported(reason)


def _check_pair(buffer: LinearLayout, layout: LinearLayout, target: Target) -> tuple[str, LinearLayout]:
    """("", ``layout`` with the buffer's out-dim order) when a one-CTA plan between them can
    exist, else (why not, ``layout``)."""
    order = buffer.out_dim_names
    if sorted(layout.out_dim_names) != sorted(order):
        return f"the buffer's dims {order} and the tensor's {layout.out_dim_names} differ", layout
    layout = layout.transpose_outs(order)
    for name in order:
        if buffer.out_dim_size(name) != layout.out_dim_size(name):
            return f"the buffer and the tensor differ in size along '{name}'", layout
    if any(c for c in (buffer.bases.get("block", ()))) or any(any(v) for v in layout.bases.get("block", ())):
        return "a multi-CTA layout (CGA split): left to Triton", layout
    if len(f2.EchelonBasis(buffer_offsets(buffer))) != buffer.total_out_dim_size_log2:
        return "the buffer does not hold every element of the tensor", layout
    lanes = 1 << len(layout.bases.get("lane", ()))
    if layout.has_in_dim("lane") and lanes != target.warp_size:
        return f"the tensor has {lanes} lanes, a {target.name} warp {target.warp_size}", layout
    return "", layout


def _verified(candidates: list, verify, what: str) -> tuple[list, str]:
    verified, failures = [], []
    for plan in candidates:
        check = verify(plan)
        if check:
            verified.append(plan)
        else:
            failures.append(f"{plan.form.name.lower()}: {check.errors[0]}")
    verified.sort(key=lambda p: p.cost.weight)   # stable: vector accesses first on a tie
    if not verified:
        return [], f"no {what} plan passed the verifier (" + "; ".join(failures) + ")"
    return verified, ""
