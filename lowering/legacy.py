"""The legacy planner: Triton as it was *before* linear layouts, as a baseline for benchmarks.

``plan_legacy_conversion(src, dst, bits, target, encodings)`` returns ordinary plans
(``lowering.plan``) that the exhaustive verifier checks and the emitters print, but it plans the
way Triton did up to 3.0 (``getScratchConfigForCvt`` in lib/Analysis/Allocation.cpp and
``ConvertLayoutOpToLLVM``'s ``processReplica``; the paper's §5 baseline):

* two *identical* attributes (same text): no-op (legacy folded the convert away);
* a register-only conversion: a register rename (no instructions);
* everything else, including two *different* attributes that describe the same layout: through
  shared memory.  No warp shuffles, no matrix accesses (ldmatrix/stmatrix), no swizzling, CTA
  barriers even when the data stays inside a warp;
* cross-CTA conversions: unsupported (left to Triton).

The scratch buffer (legacy ``getScratchConfigForCvt``):

* row-major over the CTA's tile in the destination's ``order`` (fastest dim first), the same
  linearisation for stores and loads;
* ``inVec`` = the source's contiguous elements per thread along its fastest dim, ``outVec`` =
  the destination's; legacy could only vectorise along the tensor's *last* dim (its "TODO: fix
  the legacy issue"): ``inVec = 1`` unless both orders start with the last dim, ``outVec = 1``
  unless the destination's does (except from an NVIDIA mma to a blocked layout, where
  ``outVec`` stays the destination's contiguity);
* padding: the padded dim is the destination's fastest dim if the destination is ``blocked``,
  otherwise the last dim; it grows by ``pad = max(inVec, outVec)`` elements (always, for rank
  >= 2; at least one element).

Worked example of the padding: a 32x64 f16 tensor, destination blocked with order [1, 0]
(dim1 fastest), inVec = 8, outVec = 4.  Each row of 64 elements is followed by 8 unused ones,
so element (m, n) lives at ``m * (64 + 8) + n``.  Writing x = 64 m + n (the unpadded row-major
offset, F2-linear in the element's bits) that is ``x + (x >> 6) * 8``: row length 2^6, pad 8.
A padded dim that is *not* the fastest one generalises the same way: with dims (d0 fastest, d1,
d2) of sizes (S0, S1, S2) and d1 padded by p, the offset is ``x + (x >> log2(S0 S1)) * p S0``.
``ThreadAffine`` carries exactly this (``pad_row_log2``, ``pad_elements``) on top of its
F2-affine part; the verifier, the cost model and the emitters apply it.

Differences from legacy Triton (so benchmarks can say what the baseline is):

* one round: the whole CTA tile goes through the buffer at once.  Legacy Triton split the
  conversion into *repetitions* of ``max(srcShapePerCTATile, dstShapePerCTATile)`` (per dim),
  with a barrier between them, and so used less scratch when a layout repeats over registers;
  the instruction mix per element is the same;
* the orders and contiguities are read off the linear layouts (the dims in which register, then
  lane, then warp bases first appear; the run of register bases 1, 2, 4, ... along a dim),
  which is what the attributes say for blocked, mma, slice and dot operand layouts;
* vectors are capped at 128 bits (legacy did too, via ``ld/st.shared.v4.b32``).

Local loads and stores (``plan_legacy_local_load`` / ``plan_legacy_local_store``): the buffer's
layout is fixed by its memdesc, so legacy and linear differ only in the instructions.  Legacy
Triton read the operands of an mma dot with ``ldmatrix`` (its hand-written
``SharedToDotOperandMMAv2``, ``.trans`` included) and every other local load, and every local
store, with vector ``ld.shared`` / ``st.shared`` along the buffer's contiguous dim
(``loadSharedToDistributed`` / ``storeDistributedToShared``): no ``ldmatrix`` into other
layouts and no ``stmatrix``, which came with linear layouts.  So the legacy plans are the
linear planner's verified candidates of those forms.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ..dialect.linear_layout import LinearLayout
from .conversion import minimal_conversion, scope_of
from .hardware import HardwareLayout, aligned_pair
from .instructions import AccessForm, AccessKind, BarrierScope
from .plan import Barrier, ConversionPlan, Method, Scope, SharedMemoryPlan, Unsupported
from .planner import INVALID_CONVERSION_ERRORS, PlanInputs, staging_rename, element_bits_of
from .element_type import storage_bits_of
from .local_memory import LocalLoadPlan, LocalStorePlan, plan_local_load_candidates, plan_local_store_candidates
from .shared import cta_space, side_vector, vector_accesses
from .target import target_named
from .verify import verify_plan

_KIND = re.compile(r"#(?:ttg|triton_gpu)\.(\w+)")


def attribute_kind(encoding: str | None) -> str:
    """``"blocked"``, ``"nvidia_mma"``, ``"slice"``, ... from an encoding's text ("" if unknown)."""
    m = _KIND.search(encoding or "")
    return m.group(1) if m else ""


def _dim_index(name: str) -> int:
    digits = "".join(ch for ch in name if ch.isdigit())
    return int(digits) if digits else 0


class _Dims:
    """Where each tensor dim lives in the flat element index of ``HardwareLayout.of(l, names)``:
    dim ``names[i]`` occupies the bits ``[offset[i], offset[i] + log2 size[i])``."""

    def __init__(self, layout: LinearLayout):
        self.names = list(layout.out_dim_names)
        self.rank = len(self.names)
        self.log2 = [layout.out_dim_size_log2(n) for n in self.names]
        self.offset = [sum(self.log2[:i]) for i in range(self.rank)]

    def dims_of(self, flat: int) -> list[int]:
        """Tensor dim indices (``dimK`` -> K) that the flat element ``flat`` has non-zero
        coordinates in, lowest bit first."""
        out = []
        for bit in range(flat.bit_length()):
            if flat >> bit & 1:
                d = self.dim_at_bit(bit)
                if d not in out:
                    out.append(d)
        return out

    def dim_at_bit(self, bit: int) -> int:
        for i in range(self.rank):
            if self.offset[i] <= bit < self.offset[i] + self.log2[i]:
                return _dim_index(self.names[i])
        raise ValueError(f"bit {bit} is outside the tensor")

    def bit_of(self, dim: int, k: int) -> int:
        """Flat bit of coordinate bit k of tensor dim ``dim``."""
        i = [_dim_index(n) for n in self.names].index(dim)
        return self.offset[i] + k


def layout_order(layout: HardwareLayout, dims: _Dims) -> list[int]:
    """Tensor dims, fastest first: the order in which register, then lane, then warp bases first
    touch each dim, then the remaining dims last-to-first (Triton's default order)."""
    order: list[int] = []
    for column in layout.register + layout.lane + layout.warp:
        for d in dims.dims_of(column):
            if d not in order:
                order.append(d)
    order += [d for d in reversed(range(dims.rank)) if d not in order]
    return order


def contiguity(layout: HardwareLayout, dims: _Dims, dim: int) -> int:
    """Consecutive elements along ``dim`` that one thread holds: 2^m for the longest run of
    register bases 1, 2, 4, ..., 2^(m-1) along ``dim`` (Triton's ``getUniqueContigPerThread``)."""
    registers = set(layout.register)
    m = 0
    while m < dims.log2[[_dim_index(n) for n in dims.names].index(dim)] and \
            (1 << dims.bit_of(dim, m)) in registers:
        m += 1
    return 1 << m


@dataclass(frozen=True)
class ScratchSide:
    """One side of a conversion as legacy ``getScratchConfigForCvt`` read it: its tensor dims
    fastest first, the consecutive elements a thread holds along the fastest, and its attribute's
    kind (``attribute_kind``; "" where unknown)."""
    order: list[int]
    contiguity: int
    kind: str = ""

    @classmethod
    def of(cls, layout: HardwareLayout, dims: _Dims, kind: str = "") -> "ScratchSide":
        order = layout_order(layout, dims)
        return cls(order, contiguity(layout, dims, order[0]), kind)


def legacy_vectors(src: ScratchSide, dst: ScratchSide, rank: int) -> tuple[int, int]:
    """(inVec, outVec) as legacy ``getScratchConfigForCvt`` chose them: vectorise only along the
    last dim (the "legacy issue" its TODO mentions), except mma -> blocked loads."""
    inner = rank - 1
    in_vec = src.contiguity if dst.order[0] == inner and src.order[0] == inner else 1
    out_vec = dst.contiguity if dst.order[0] == inner else 1
    if src.kind == "nvidia_mma" and dst.kind == "blocked":
        out_vec = dst.contiguity
    return in_vec, out_vec


def _legacy_shared_plan(inputs: PlanInputs, kinds: tuple[str, str]) -> tuple[SharedMemoryPlan, str]:
    """The padded, unswizzled, one-round shared-memory plan and a one-line description
    (``kinds``: the two attributes' kinds)."""
    src_u, dst_u, dims = inputs.src_u, inputs.dst_u, _Dims(inputs.src)
    src_side, dst_side = ScratchSide.of(src_u, dims, kinds[0]), ScratchSide.of(dst_u, dims, kinds[1])
    rows = cta_space(src_u)
    pivots = [r & -r for r in rows]  # element bit that stands for each direction of the CTA tile
    dst_order, dst_kind = dst_side.order, dst_side.kind
    # Scratch bit i <- pivot bit, sorted by (dim's place in the destination order, bit): the
    # row-major linearisation of the CTA's tile with the destination's fastest dim lowest.
    place = {d: i for i, d in enumerate(dst_order)}
    scratch_pivots = sorted(pivots, key=lambda p: (place[dims.dim_at_bit(p.bit_length() - 1)], p))

    def to_scratch(element: int) -> int:
        # Elements of the tile are combinations of ``rows``; in RREF form the bit at each pivot
        # says whether that row is in the combination, so these bits are its coordinates.
        return sum(1 << i for i, p in enumerate(scratch_pivots) if element & p)

    k = len(scratch_pivots)
    bits = inputs.bits
    ebits = storage_bits_of(bits)
    max_vector = max(1, 128 // ebits)
    in_vec, out_vec = legacy_vectors(src_side, dst_side, dims.rank)
    in_vec, out_vec = min(in_vec, max_vector), min(out_vec, max_vector)

    # Padding: the padded dim gets ``pad`` more elements per row; see the module docstring.
    pad_row_log2 = pad_elements = 0
    if dims.rank >= 2:
        padded_dim = dst_order[0] if dst_kind in ("blocked", "") else dims.rank - 1
        pad = max(in_vec, out_vec)
        bits_in = [sum(1 for p in scratch_pivots if dims.dim_at_bit(p.bit_length() - 1) == d) for d in dst_order]
        j = dst_order.index(padded_dim)
        pad_row_log2 = sum(bits_in[:j + 1])
        pad_elements = pad << sum(bits_in[:j])
    elements = (1 << k) + ((1 << k) >> pad_row_log2) * pad_elements if pad_elements else 1 << k

    def one_round(element: int) -> tuple[int, int]:
        return to_scratch(element), 0

    st_log2, st_pos = side_vector(src_u, to_scratch, in_vec.bit_length() - 1)
    ld_log2, ld_pos = side_vector(dst_u, to_scratch, out_vec.bit_length() - 1)
    [stores] = vector_accesses(src_u, one_round, st_log2, st_pos, AccessKind.STORE, inputs.src_full.full_register, 1,
                               pad_row_log2=pad_row_log2, pad_elements=pad_elements)
    [loads] = vector_accesses(dst_u, one_round, ld_log2, ld_pos, AccessKind.LOAD, lambda u: u, 1,
                              pad_row_log2=pad_row_log2, pad_elements=pad_elements)
    barrier = Barrier(BarrierScope.CTA)
    # The unpadded (linear) part of the scratch layout: scratch bit i -> CTA-local element
    # coordinate (the row index of its pivot), as the swizzled plans' ``smem_layout``.
    local = [1 << pivots.index(p) for p in scratch_pivots]
    smem = LinearLayout([("offset", [(c,) for c in local])], [("dim0", 1 << max(k, 0))], require_surjective=False)
    plan = SharedMemoryPlan(bits, elements, smem, 1, tuple(stores) + (barrier,) + tuple(loads),
                            1 << st_log2, 1 << ld_log2)
    note = (f"legacy: row-major scratch in order {dst_order}, rows of {1 << pad_row_log2} elements padded by "
            f"{pad_elements}, inVec={in_vec} outVec={out_vec}, one round") if pad_elements else \
        f"legacy: row-major scratch in order {dst_order}, unpadded (rank 1), inVec={in_vec} outVec={out_vec}"
    return plan, note


def plan_legacy_conversion(src: LinearLayout, dst: LinearLayout, bits, target,
                           encodings: tuple[str, str] = ("", "")) -> ConversionPlan | Unsupported:
    """A verified legacy plan (see the module docstring), or ``Unsupported`` with the reason.

    ``encodings``: the two attributes as printed, where known.  The same text makes the convert
    a no-op; the attributes' names (``attribute_kind``: "blocked", "nvidia_mma", ...) pick the
    padded dim and the mma -> blocked vector rule as legacy Triton did ("" = unknown: treated
    like blocked).
    """
    try:
        target = target_named(target) if isinstance(target, str) else target
        bits = element_bits_of(bits)
        dst = aligned_pair(src, dst, target.warp_size, target.name)
        order = src.out_dim_names
        src_full, dst_full = HardwareLayout.of(src, order), HardwareLayout.of(dst, order)
        scope = scope_of(minimal_conversion(src, dst))
    except INVALID_CONVERSION_ERRORS as e:
        return Unsupported(f"invalid conversion: {e}")
    if scope is Scope.BLOCK:
        return Unsupported("cross-CTA conversion: legacy mode has no distributed shared memory; left to Triton",
                           scope)
    inputs = PlanInputs(src, dst, scope, bits, target, src_full, src_full.unique_registers(), dst_full,
                        dst_full.unique_registers())
    plan = _legacy_plan(inputs, encodings)
    result = verify_plan(plan) if plan else None
    if result is not None and not result.ok:
        return Unsupported(f"legacy plan failed the verifier: {result.errors[0]}", scope)
    return plan


def _legacy_plan(inputs: PlanInputs, encodings: tuple[str, str]) -> ConversionPlan | Unsupported:
    """The unverified legacy plan of an in-CTA conversion: a no-op or a register renaming where
    legacy Triton made one, else through padded shared memory."""
    scope = inputs.scope
    same_attribute = bool(encodings[0]) and encodings[0] == encodings[1]
    if same_attribute and scope not in (Scope.NONE, Scope.REGISTER):
        return Unsupported(f"the attributes are the same text but the layouts differ ({scope} scope)", scope)
    if same_attribute or scope is Scope.REGISTER:
        return inputs.plan(Method.NOOP if same_attribute else Method.RENAME, inputs.rename(),
                           notes=("legacy: same attribute, no-op",) if same_attribute else ())
    shared, note = _legacy_shared_plan(inputs, (attribute_kind(encodings[0]), attribute_kind(encodings[1])))
    return inputs.plan(Method.SHARED, staging_rename(inputs.dst_full), shared=shared, notes=(note,))


def _reads_mma_operand(dst_encoding: str | None) -> bool:
    """A dot operand whose parent is an mma layout: the only local load legacy Triton did with
    ``ldmatrix`` (an FMA dot's operands, ``parent = #ttg.blocked``, were plain loads)."""
    return (attribute_kind(dst_encoding) == "dot_op"
            and re.search(r"parent = #ttg\.(nvidia_mma|mma)", dst_encoding or "") is not None)


def plan_legacy_local_load(buffer: LinearLayout, dst: LinearLayout, bits: int, target,
                           dst_encoding: str | None = None, view: bool = False) -> LocalLoadPlan | Unsupported:
    """A ``ttg.local_load`` as Triton lowered it before linear layouts (module docstring):
    ``ldmatrix`` for mma dot operands where the buffer allows it, vector loads otherwise
    (``view``: the memdesc is a subslice view, as for ``plan_local_load_candidates``)."""
    plans, reason = plan_local_load_candidates(buffer, dst, bits, target, view)
    if not plans:
        return Unsupported(reason)
    vector = next(p for p in plans if p.form is AccessForm.VECTOR)
    matrix = [p for p in plans if p.form is not AccessForm.VECTOR]
    if not _reads_mma_operand(dst_encoding):
        pick, note = vector, "legacy: vector loads"
    elif matrix:
        pick, note = matrix[0], "legacy: ldmatrix for an mma operand"
    else:
        pick, note = vector, "legacy: vector loads (the buffer gives no ldmatrix tile)"
    return dataclasses.replace(pick, notes=pick.notes + (note,))


def plan_legacy_local_store(src: LinearLayout, buffer: LinearLayout, bits: int, target,
                            view: bool = False) -> LocalStorePlan | Unsupported:
    """A ``ttg.local_store`` (or the fill of a ``ttg.local_alloc``) as Triton lowered it before
    linear layouts: vector stores, never ``stmatrix`` (``view``: the memdesc is a subslice view,
    as for ``plan_local_store_candidates``)."""
    plans, reason = plan_local_store_candidates(src, buffer, bits, target, view)
    if not plans:
        return Unsupported(reason)
    pick = next(p for p in plans if p.form is AccessForm.VECTOR)
    return dataclasses.replace(pick, notes=pick.notes + ("legacy: vector stores",))
