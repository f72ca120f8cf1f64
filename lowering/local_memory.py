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
  bits 0.. and everything else must move whole rows (``shared.matrix_accesses`` checks it).

Worked example: a 16x16 fp16 buffer with row-major offsets (offset bits 0-3 = columns, 4-7 =
rows) read into ``sizePerThread = [1, 8]``, ``threadsPerWarp = [16, 2]`` (one warp): register
bits 0-2 are columns 1, 2, 4 = offset bits 0-2, lane bit 0 is column 8 = offset bit 3: every
lane loads its 8 registers with one 128-bit ``ld.shared.v4.b32``.  A swizzled buffer
(``vec = 8``: rows XOR whole groups of 8 columns) keeps offset bits 0-2 on columns 1, 2, 4, so
the load stays 128-bit; only its address changes.

Subslice views (``ttg.memdesc_subslice``).  A view of shape V into a buffer of shape A has the
buffer's layout L (``dialect.memdesc``), and its start o (one offset per dim, each a multiple of
the view's size in that dim, so bit-disjoint from every view coordinate) lives only in Triton's
descriptor struct, at run time.  View coordinate c is buffer coordinate ``c xor o``, at offset
``L^-1(c) xor L^-1(o)``.  So a load from a view is a load from the whole buffer whose
destination covers only part of it (``dst`` padded out to A, coordinates below V), plus one
run-time XOR of ``L^-1(o)`` into every address: ``SubsliceView`` records, per dim, the offset
``L^-1`` gives each bit of o that can be set (``start_images``).  Those offsets move addresses
like thread ids do, so vectors and ldmatrix rows must be moved whole by them too.  Worked
example: the fp64 mma v2 operand ``32x8`` view at ``[0, 8]`` of a ``32x16`` buffer with
``#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>``: o's only
possible bit is column 8, ``L^-1((0, 8)) = 8``.  Lane 0's register 0 holds view element (0, 0),
buffer element (0, 8): offset 0 xor 8 = 8.  Lane 4's register 0 holds view element (1, 0): the
plan's address for it is 20 (row 1 is offset 16, and its swizzle phase 1 moves column 0 to 4),
and 20 xor 8 = 28 = 16 + (8 xor 4) is buffer element (1, 8), the swizzle applied to the
buffer's column 8, as it must be.  Only a destination that is a view may be smaller than the
buffer (``_check_pair``).  A store into a view is the mirror image: its source covers only the
view, every store address XORs ``L^-1(o)``, and ``verify.verify_local_store`` checks per start
that the view's elements are written and nothing outside it (``LocalStorePlan.view``).

Every plan returned has passed ``verify.verify_local_load`` (every destination register, every
thread, broadcast copies included, and for a view every possible start); the buffer must hold
every element of the tensor in one CTA (``Unsupported`` otherwise, e.g. multi-CTA splits, which
stay Triton's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Optional

from ..dialect import f2
from ..dialect.linear_layout import LayoutError, LinearLayout
from .cost import PlanCost, shared_cost
from .element_type import storage_bits_of
from .hardware import HardwareLayout
from .instructions import AccessForm, AccessKind
from .matrix import matrix_tile
from .plan import Method, RegisterRename, SharedMemoryPlan, Unsupported
from .shared import matrix_accesses, vector_accesses, widest_vector
from .target import Target
from .verify import verify_local_load, verify_local_store

LOCAL_LOAD = Method.LOCAL_LOAD
LOCAL_STORE = Method.LOCAL_STORE
LOCAL_ALLOC = Method.LOCAL_ALLOC   # a local_alloc with a source: planned as a LocalStorePlan


# Every start of a view is verified (plan and emitted island) when there are at most this many;
# beyond, the zero start, each single start bit and all of them together (see
# ``SubsliceView.checked_starts``).
ALL_STARTS_CHECKED = 64


@dataclass(frozen=True)
class SubsliceView:
    """A ``ttg.memdesc_subslice`` view of shape ``shape`` into a buffer of shape
    ``buffer_shape`` (both in the buffer's out-dim order, ``dim0, dim1, ...``).

    ``start_images[d][j]``: the buffer offset holding element ``2^j`` of dim d (``L^-1`` of
    it), for the bits j of dim d's start that can be set: ``log2(shape[d]) <= j <
    log2(buffer_shape[d])`` (0 for the bits below).  The view starting at o reads every address
    XOR ``start_offset(o)``.  Example: view 32x8 of a 32x16 buffer: ``start_images = ((0, 0, 0,
    0, 0), (0, 0, 0, 8))`` for the row-major or the fp64 swizzled layout of the module docstring
    (dim 0 cannot move; bit 3 of dim 1's start, column 8, is offset 8)."""

    shape: tuple[int, ...]
    buffer_shape: tuple[int, ...]
    start_images: tuple[tuple[int, ...], ...]

    def start_offset(self, start) -> int:
        """``L^-1(o)`` for the start ``o`` (one element offset per dim)."""
        offset = 0
        for images, o in zip(self.start_images, start):
            for j, image in enumerate(images):
                if o >> j & 1:
                    offset ^= image
        return offset

    @property
    def start_mask(self) -> int:
        """Every offset bit a start can set."""
        mask = 0
        for images in self.start_images:
            for image in images:
                mask |= image
        return mask

    def starts(self) -> list[tuple[int, ...]]:
        """Every start Triton allows: each dim a multiple of the view's size inside the buffer."""
        return list(product(*(range(0, a, v) for v, a in zip(self.shape, self.buffer_shape))))

    def checked_starts(self) -> list[tuple[int, ...]]:
        """The starts the verifier and the island simulator run: all of them up to
        ``ALL_STARTS_CHECKED``; beyond, zero, every single start bit, and all bits at once.
        A correct address is ``f(thread, register) xor L^-1(o)``, linear in o, so each bit
        alone exercises its image; an island that adds where it should XOR fails on the bit
        whose image meets the added constant."""
        every = self.starts()
        if len(every) <= ALL_STARTS_CHECKED:
            return every
        rank = len(self.shape)
        picked = {tuple([0] * rank), tuple(a - v for v, a in zip(self.shape, self.buffer_shape))}
        for d, (v, a) in enumerate(zip(self.shape, self.buffer_shape)):
            j = v
            while j < a:
                start = [0] * rank
                start[d] = j
                picked.add(tuple(start))
                j <<= 1
        return sorted(picked)

    def contains(self, elements, start):
        """Which flat buffer elements (an int or a numpy array of them) lie in the view at
        ``start``: every dim's coordinate in ``[o, o + shape)``."""
        inside, shift = True, 0
        for o, v, a in zip(start, self.shape, self.buffer_shape):
            bits = a.bit_length() - 1
            coordinate = (elements >> shift) & (a - 1)
            inside = inside & (coordinate >= o) & (coordinate < o + v)
            shift += bits
        return inside

    def element(self, start) -> int:
        """The flat buffer element (``LinearLayout._pack`` order) of coordinate ``start``: the
        element tags of a view read at ``o`` are the view's own tags XOR this."""
        flat, shift = 0, 0
        for o, a in zip(start, self.buffer_shape):
            flat |= o << shift
            shift += a.bit_length() - 1
        return flat


@dataclass(frozen=True)
class LocalLoadPlan:
    """Load the registers of ``dst`` from a buffer laid out by ``buffer`` (in dim ``offset``, in
    elements; out dims those of the tensor).  ``shared``: the loads (no stores, no barriers: the
    buffer was written before, and the barriers around the island are the pass's business),
    ``output``: staging registers -> every destination register (broadcast copies included).
    ``view``: set when the memdesc is a subslice view; ``dst`` then has the buffer's out-dim
    sizes (its coordinates stay inside the view) and every address is XORed at run time with
    the view start's offset (``SubsliceView``)."""

    buffer: LinearLayout
    dst: LinearLayout
    element_bits: int
    target: Target
    shared: SharedMemoryPlan
    output: RegisterRename
    form: AccessForm = AccessForm.VECTOR
    method: Method = LOCAL_LOAD
    notes: tuple[str, ...] = field(default=())
    view: Optional[SubsliceView] = None

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
    return [buffer.pack(b) for b in buffer.bases["offset"]]


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


def subslice_view(buffer: LinearLayout, view_shape) -> SubsliceView:
    """The ``SubsliceView`` of shape ``view_shape`` (in ``buffer``'s out-dim order) into the
    buffer: each start bit's offset, ``L^-1`` of it (raises ``LayoutError`` when a size is not
    a power of two no larger than the buffer's)."""
    inverse = _inverse(buffer)
    images, sizes = [], []
    shift = 0
    for name, v in zip(buffer.out_dim_names, view_shape):
        a = buffer.out_dim_size(name)
        if v > a or v & (v - 1) or v < 1:
            raise LayoutError(f"a view of {v} along '{name}' in a buffer of {a}")
        v_log2, a_log2 = v.bit_length() - 1, a.bit_length() - 1
        images.append(tuple(inverse(1 << (shift + j))[0] if j >= v_log2 else 0 for j in range(a_log2)))
        sizes.append(a)
        shift += a_log2
    return SubsliceView(tuple(view_shape), tuple(sizes), tuple(images))


def _start_offsets(window: Optional[SubsliceView]) -> list[int]:
    """The offsets a view's start can move every address by (none for a whole buffer).  They
    act like thread ids: vectors and ldmatrix/stmatrix rows must stay whole under them (a start
    offset of 2 would split a 4-element vector)."""
    return [] if window is None else [image for images in window.start_images for image in images if image]


def _splits_a_matrix_row(start_offsets: list[int], row_log2: int) -> bool:
    """Whether a start offset moves part of a 16-byte ldmatrix/stmatrix row (offset bits below
    ``row_log2``): such a view gets vector accesses only."""
    return any(offset & ((1 << row_log2) - 1) for offset in start_offsets)


def plan_local_load_candidates(buffer: LinearLayout, dst: LinearLayout, element_bits: int,
                               target: Target, view: bool = False) -> tuple[list[LocalLoadPlan], str]:
    """Every verified local-load plan (vector loads, ldmatrix, ldmatrix.trans), cheapest first,
    and, when there is none, why.  ``view``: the memdesc is a subslice view of ``buffer`` whose
    shape is ``dst``'s (module docstring); its start is read from the descriptor at run time."""
    problem, dst, window = _check_pair(buffer, dst, target, view)
    if problem:
        return [], problem
    order = buffer.out_dim_names
    offsets = buffer_offsets(buffer)
    dst_full = HardwareLayout.of(dst, order)
    dst_u = dst_full.unique_registers()
    inverse = _inverse(buffer)
    start_offsets = _start_offsets(window)
    ebits = storage_bits_of(element_bits)
    output = RegisterRename("staging", tuple(dst_full.canonical_register(j) for j in range(1 << len(dst_full.register))))
    size = 1 << len(offsets)

    def plan_of(loads, form: AccessForm, vector: int) -> LocalLoadPlan:
        shared = SharedMemoryPlan(element_bits, size, buffer, 1, tuple(loads), 0, vector)
        return LocalLoadPlan(buffer, dst, element_bits, target, shared, output, form, view=window)

    candidates = []
    max_log2 = max(0, (128 // ebits).bit_length() - 1)
    log2_vec, positions = widest_vector([inverse(c)[0] for c in dst_u.register],
                                        [inverse(c)[0] for c in dst_u.lane + dst_u.warp] + start_offsets, max_log2)
    loads = vector_accesses(dst_u, inverse, log2_vec, positions, AccessKind.LOAD, lambda u: u, 1)[0]
    candidates.append(plan_of(loads, AccessForm.VECTOR, 1 << log2_vec))
    if target.has_ldmatrix and ebits in (8, 16, 32) and not _splits_a_matrix_row(start_offsets, max_log2):
        row = tuple(offsets[:max_log2])
        for form in (AccessForm.MATRIX, AccessForm.MATRIX_TRANS):
            tile = matrix_tile(dst_u, AccessKind.LOAD, form, ebits, row, prefer=row)
            if tile is None:
                continue
            per_round = matrix_accesses(dst_u, tile, inverse, lambda u: u, 1)
            if per_round is not None:
                candidates.append(plan_of(per_round[0], form, 128 // ebits))
    return _verified(candidates, verify_local_load, "local-load")


def plan_local_load(buffer: LinearLayout, dst: LinearLayout, element_bits: int,
                    target: Target, view: bool = False) -> LocalLoadPlan | Unsupported:
    """The cheapest verified plan by the cost model, or ``Unsupported`` saying why (``view``: as
    for ``plan_local_load_candidates``)."""
    plans, reason = plan_local_load_candidates(buffer, dst, element_bits, target, view)
    return plans[0] if plans else Unsupported(reason)


# ------------------------------------------------------------------------------- local stores

@dataclass(frozen=True)
class LocalStorePlan:
    """Store the registers of ``src`` into a buffer laid out by ``buffer``.  ``shared``: the
    stores (no loads, no barriers).  Threads that hold the same element (broadcast lanes or
    warps) all store it: the same value to the same bytes, which the verifier allows.
    ``view``: set when the memdesc is a subslice view; ``src`` then has the buffer's out-dim
    sizes (its coordinates stay inside the view), every address is XORed at run time with the
    view start's offset (``SubsliceView``), and only the view's elements are written."""

    src: LinearLayout
    buffer: LinearLayout
    element_bits: int
    target: Target
    shared: SharedMemoryPlan
    form: AccessForm = AccessForm.VECTOR
    method: Method = LOCAL_STORE
    notes: tuple[str, ...] = field(default=())
    view: Optional[SubsliceView] = None

    @property
    def dst(self) -> LinearLayout:
        """Where the data goes: the buffer (as ``ConversionPlan.dst`` for conversions)."""
        return self.buffer

    @property
    def cost(self) -> PlanCost:
        return PlanCost(**shared_cost(self.shared, self.target))


def plan_local_store_candidates(src: LinearLayout, buffer: LinearLayout, element_bits: int,
                                target: Target, view: bool = False) -> tuple[list[LocalStorePlan], str]:
    """Every verified local-store plan (vector stores, stmatrix, stmatrix.trans), cheapest first,
    and, when there is none, why.  The same algebra as ``plan_local_load_candidates``, with the
    source's unique registers (a broadcast register is stored once).  ``view``: the memdesc is a
    subslice view of ``buffer`` whose shape is ``src``'s; its start is read from the descriptor
    at run time, and the store writes the view's elements and nothing else (module docstring:
    view element c goes to ``L^-1(c) xor L^-1(o)``)."""
    problem, src, window = _check_pair(buffer, src, target, view)
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
    start_offsets = _start_offsets(window)

    def plan_of(stores, form: AccessForm, vector: int) -> LocalStorePlan:
        shared = SharedMemoryPlan(element_bits, size, buffer, 1, tuple(stores), vector, 0)
        return LocalStorePlan(src, buffer, element_bits, target, shared, form, view=window)

    candidates = []
    max_log2 = max(0, (128 // ebits).bit_length() - 1)
    log2_vec, positions = widest_vector([inverse(c)[0] for c in src_u.register],
                                        [inverse(c)[0] for c in src_u.lane + src_u.warp] + start_offsets, max_log2)
    stores = vector_accesses(src_u, inverse, log2_vec, positions, AccessKind.STORE, register_name, 1)[0]
    candidates.append(plan_of(stores, AccessForm.VECTOR, 1 << log2_vec))
    if target.has_stmatrix and ebits in (8, 16, 32) and not _splits_a_matrix_row(start_offsets, max_log2):
        row = tuple(offsets[:max_log2])
        for form in (AccessForm.MATRIX, AccessForm.MATRIX_TRANS):
            tile = matrix_tile(src_u, AccessKind.STORE, form, ebits, row, prefer=row)
            if tile is None:
                continue
            per_round = matrix_accesses(src_u, tile, inverse, register_name, 1)
            if per_round is not None:
                candidates.append(plan_of(per_round[0], form, 128 // ebits))
    return _verified(candidates, verify_local_store, "local-store")


def plan_local_store(src: LinearLayout, buffer: LinearLayout, element_bits: int,
                     target: Target, view: bool = False) -> LocalStorePlan | Unsupported:
    """The cheapest verified plan by the cost model, or ``Unsupported`` saying why (``view``: as
    for ``plan_local_store_candidates``)."""
    plans, reason = plan_local_store_candidates(src, buffer, element_bits, target, view)
    return plans[0] if plans else Unsupported(reason)


def _check_pair(buffer: LinearLayout, layout: LinearLayout, target: Target,
                view: bool = False) -> tuple[str, LinearLayout, Optional[SubsliceView]]:
    """("", ``layout`` with the buffer's out-dim order, None) when a one-CTA plan between them
    can exist, else (why not, ``layout``, None).  With ``view`` the tensor may be smaller than
    the buffer (a subslice view; nowhere else: a whole-buffer load must read every element, a
    whole-buffer store write every one):
    then ``layout`` comes back with the buffer's out-dim sizes (the same bases; its coordinates
    stay below the view's) and the third item is the ``SubsliceView``."""
    order = buffer.out_dim_names
    if sorted(layout.out_dim_names) != sorted(order):
        return f"the buffer's dims {order} and the tensor's {layout.out_dim_names} differ", layout, None
    layout = layout.transpose_outs(order)
    window = None
    sizes = [layout.out_dim_size(name) for name in order]
    if view and any(v != buffer.out_dim_size(name) for name, v in zip(order, sizes)):
        for name, v in zip(order, sizes):
            if v > buffer.out_dim_size(name):
                return f"the view is larger than its buffer along '{name}'", layout, None
        window = subslice_view(buffer, sizes)
        layout = LinearLayout(list(layout.bases.items()), [(name, buffer.out_dim_size(name)) for name in order],
                              require_surjective=False)
    for name in order:
        if buffer.out_dim_size(name) != layout.out_dim_size(name):
            return f"the buffer and the tensor differ in size along '{name}'", layout, None
    if any(c for c in (buffer.bases.get("block", ()))) or any(any(v) for v in layout.bases.get("block", ())):
        return "a multi-CTA layout (CGA split): left to Triton", layout, None
    if len(f2.EchelonBasis(buffer_offsets(buffer))) != buffer.total_out_dim_size_log2:
        return "the buffer does not hold every element of the tensor", layout, None
    lanes = 1 << len(layout.bases.get("lane", ()))
    if layout.has_in_dim("lane") and lanes != target.warp_size:
        return f"the tensor has {lanes} lanes, a {target.name} warp {target.warp_size}", layout, None
    return "", layout, window


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
