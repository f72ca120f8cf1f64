"""What the backend's lowering requires of an op's distributed layout: requirements a layout
choice must meet, not costs.  A candidate that breaks one is never chosen (by
``ll-assign-layouts``, by ``ll-resolve-auto-layouts``, nor suggested by the advice): the
lowering would reject the kernel, whatever the cost model says of it.

``cp.async`` (``ttg.async_copy_global_to_local``).  Triton's lowering
(``AsyncCopyGlobalToLocalOpConversion``, the same in 3.6 and 3.9) copies, per instruction, one
run of elements that is at once

* consecutive in one thread's registers along the layout's ``order[0]`` (Triton reads the order
  off the linear layout: the dim of its first register basis, else the last dim);
* consecutive and aligned in global memory along that dim: at most the pointers' contiguity
  along it and their divisibility over the element size (Triton's AxisInfo, which reads
  ``tt.divisibility`` of the arguments; here :mod:`.pointer_contiguity`, which claims no more);
* under one mask bit: at most the mask's constancy along that dim;
* consecutive in the shared buffer (registers to offsets, the buffer's own layout).

A run under 4 bytes is an error ("cp.async does not support transfers smaller than 4 bytes");
4, 8 and 16 bytes are one instruction (``cp.async.ca`` 4 / 8, ``cp.async.cg`` 16), longer runs
several 16-byte ones.  So for f16: pointers known 16-byte aligned along a row, a buffer whose
rows are consecutive, ``sizePerThread = [1, 8]`` copies 16 bytes; ``[1, 1]`` copies 2 bytes and
is rejected; and with no alignment known (no ``tt.divisibility``) every layout is rejected: the
pointers are only known 2-byte aligned.  Elements of 4 bytes or more always meet it.

Where this analysis cannot read the pointers, the mask or the buffer, it claims one element a
copy: a sub-4-byte element type then has no valid layout here, and the op is left to Triton.

``ttg.async_copy_global_to_local`` on AMD (Gluon's ``cdna4.async_copy.global_to_shared``;
targets ``hip:...``) is no ``cp.async`` but a direct-to-LDS load (``global_load_lds_dword*``),
with other rules (``LoadStoreOpToLLVM.cpp`` of ``third_party/amd``, ``AsyncCopyGlobalToLocalOpConversion``
and ``canCoalesceWriteIntoSharedMemory`` in ``Utility.cpp``; ``TargetInfo::supportsDirectToLdsLoadBitWidth``).
One instruction writes one vector a lane, and a warp's lanes write one run of shared memory:

* the vector is the run of registers consecutive in the buffer (``getNumConsecutiveInOut`` of
  registers to shared offsets), at most 16 bytes and what the pointers' alignment and the mask
  allow; where those allow less than the run, the lowering would write shared memory with a
  stride, and rejects the copy;
* its width must be one the target's direct-to-LDS loads have: 4 bytes on gfx942 (CDNA3), 4 or
  16 on gfx950 (CDNA4), 4, 8 or 16 on gfx1250;
* lane ``i`` of the layout moves ``vector * 2**i`` elements in the buffer (the warp's lanes
  write one consecutive run).

So on gfx942, f16 in an unswizzled row-major buffer: ``sizePerThread = [1, 2]`` (4 bytes) is
the only valid run, ``[1, 8]`` (16 bytes, what a coalesced load would take) is rejected; on
gfx950 ``[1, 8]`` is valid, ``[1, 4]`` (8 bytes) is not.  Elements of 4 bytes on gfx942: one
a thread.  The checks of the lowering not modelled here (the swizzle of a warp's rows staying
inside the warp, ``doesSwizzleInsideWarp``) leave a kernel to fail in Triton as it would
without us.

AMD's other buffer ops take any layout: ``amdg.buffer_load`` and ``amdg.buffer_store`` (Gluon's
``cdna3.buffer_load`` / ``buffer_store``) split each thread's registers into vectors the
hardware has, whatever their length (``BufferEmitter::getBufferOpType`` in
``BufferOpsEmitter.cpp`` picks a 1- to 16-byte type for the vector the lowering computes from
the layout and the offsets' alignment), as ``tt.load`` does.  ``amdg.buffer_load_to_local``
(Gluon's ``cdna4.async_copy.buffer_load_to_shared``, lowered to ``buffer_load_dword* ... lds``)
is a direct-to-LDS load with the rules above, its pointers the base plus the offsets: on gfx942
f16 ``[1, 2]`` only, on gfx950 ``[1, 2]`` or ``[1, 8]``, as for the copy through pointers.  MFMA
and WMMA operands are fixed layouts the assignment never changes.

AMD's buffer atomics (``amdg.buffer_atomic_rmw``: Gluon's ``cdna3`` / ``cdna4.buffer_atomic_add``,
``_max``, ...; ``amdg.buffer_atomic_cas`` from Triton's ``tt.atomic_cas``) update one element a
thread at a time (``BufferAtomicRMWOpConversion`` and ``BufferAtomicCASOpConversion`` in
``LoadStoreOpToLLVM.cpp``, the same in 3.6 and 3.9), except f16 and bf16, which the hardware
updates in pairs only (``buffer_atomic_pk_add_f16``, no single-element form): the lowering
takes the vector of a buffer store (the thread's run of consecutive registers along the layout's
``order[0]``, at most what the offsets' contiguity and the base's alignment allow), asserts that
it is at least 2 and issues 2-element atomics, then narrows them to the mask's constancy.  So a
packed atomic needs a run of 2 elements consecutive in a thread's registers, in memory (4-byte
aligned) and under one mask bit.  Example (f16, 64 x 64 row-major offsets, base 16-byte
aligned, mask ``offsets < n`` with ``n`` a multiple of 16): ``sizePerThread = [1, 2]`` and wider
compile to ``buffer_atomic_pk_add_f16``; ``[1, 1]`` fails Triton's assertion (``vec >= 2``); a
mask that may change every element (``n`` of unknown divisibility) leaves no layout: LLVM
cannot select a 1-element f16 buffer atomic.  Every other element type takes any layout, one
element an atomic (the price of ``.layout_costs.memory_work`` with that vector).

Triton's own atomics through a tensor of pointers (``tt.atomic_rmw``: Gluon's ``gl.atomic_add``,
``_max``, ``_min``, ``_and``, ``_or``, ``_xor``, ``_xchg``; ``tt.atomic_cas``: ``gl.atomic_cas``)
take any layout.  Both lowerings (``AtomicRMWOpConversion`` and ``AtomicCASOpConversion`` in the
NVIDIA and the AMD ``LoadStoreOpToLLVM.cpp``) take the vector of a store (the run the pointers'
contiguity, the layout and the mask allow) and cut it to what one instruction updates
(:func:`atomic_elements`): on NVIDIA sm_90 and later an ``fadd`` of f32, f16 or bf16 updates up
to 16 bytes (``atom.global.v4.f32.add``, ``.v8.f16``), on older targets f16 goes in pairs
(``atom.add.noftz.f16x2``), everything else one element; on AMD f16 and bf16 go in pairs
(``global_atomic_pk_add_f16`` / ``_bf16``; a lone element is paired with the next lane's through
DPP, no assertion), everything else one element; a ``cas`` is one element everywhere.  A narrower
run issues more instructions, never an error: compiling Gluon kernels of 1024 elements in
``BlockedLayout([s])``, s = 1, 2, 4, for f32 and f16 (add, masked add, max, xchg, cas) and i32
and bf16 (add, cas) for sm_90, sm_80, gfx942 and gfx950 on the CPU, every layout compiles under
triton 3.9 and 3.6 (f16 max / xchg are rejected by the front end whatever the layout; so are
3.6's float cas on AMD, ``llvm.cmpxchg`` of a float), with one exception: Triton 3.6's AMD
lowering of a tensor ``tt.atomic_cas`` reads the i-th element's old value from field i of the
i-th ``cmpxchg``'s (value, success) pair, so it compiles only where each thread holds one
element (256 i32 on gfx942, 4 warps: ``[1]`` compiles, ``[2]`` and ``[4]`` fail to verify;
1024 i32: every layout fails).  3.7 and 3.8 compile the 256 in ``[2]`` too, 3.9 the 1024 in
every layout: :class:`OneElementCasFacts` says so for 3.6 only.

Other requirements of the backend are met by construction, not checked here: ``ldmatrix`` /
``stmatrix`` and vector widths of local loads and stores are chosen by the lowering from any
layout (our plans too, :mod:`lowering.local_memory`); MMA operands and results, TMA copies
(which take no distributed layout) and memory descriptors are fixed ops the assignment never
changes (:mod:`.layout_rules`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ...dialect import LayoutError
from ..ir.layouts import tensor_layout_of
from .layout_rules import ATOMIC_CAS, BUFFER_ATOMICS, BUFFER_ATOMIC_RMW, DIRECT_TO_SHARED_OPS, global_access
from .pointer_contiguity import Contiguity, PointerAnalysis
from .shared_access_costs import _buffer

# The fewest bytes one cp.async may copy.
MIN_ASYNC_COPY_BYTES = 4
# The widths (bytes) of one lane's direct-to-LDS load per AMD architecture
# (TargetInfo::supportsDirectToLdsLoadBitWidth); an architecture not named: the 4 bytes every
# one of them has.
DIRECT_TO_LDS_BYTES = {"gfx942": (4,), "gfx950": (4, 16), "gfx1250": (4, 8, 16)}
# Element types AMD's buffer atomics update in pairs only, and the pair.
PACKED_ATOMIC_TYPES = frozenset({"f16", "bf16"})
PACKED_ATOMIC_ELEMENTS = 2
# NVIDIA's vectorized atomics (``atom.global.v2 / .v4 / .v8``, sm_90 and later, ``fadd`` only):
# their element types (bytes) and the most bytes one instruction updates.
VECTOR_ATOMIC_CAPABILITY = 90
VECTOR_ATOMIC_TYPES = {"f32": 4, "f16": 2, "bf16": 2}
VECTOR_ATOMIC_BYTES = 16


@dataclass(frozen=True)
class AsyncCopyFacts:
    """What a ``cp.async``'s vector depends on besides its layout."""

    shape: tuple                       # the pointers' shape
    element_bytes: int
    pointer: Optional[Contiguity]      # the contiguous dim and aligned vector (None: unread)
    mask_constancy: Optional[tuple]    # per dim (None: no mask)
    memdesc_type: str                  # the shared destination's type
    target: str = ""                   # the module's ttg.target ("cuda:90", "hip:gfx942"; "": cuda)
    op_name: str = "ttg.async_copy_global_to_local"      # or amdg.buffer_load_to_local

    @property
    def amd_architecture(self) -> Optional[str]:
        """``gfx942`` for ``hip:gfx942``; None on NVIDIA (a ``cp.async``)."""
        return self.target[len("hip:"):] if self.target.startswith("hip:") else None

    @classmethod
    def of(cls, op, pointers: PointerAnalysis) -> "AsyncCopyFacts":
        """The facts of one ``ttg.async_copy_global_to_local`` (operands: pointers, buffer,
        then mask and other if present) or ``amdg.buffer_load_to_local`` (buffer, base,
        offsets, then mask, other, stride if present: :func:`.layout_rules.global_access`)."""
        access = global_access(op)
        buffer = next(v for v in op.operands if v.tensor_type is not None and v.tensor_type.is_shared)
        masks = [v for v in op.operands if v is not access.addresses and v.tensor_type is not None
                 and v.tensor_type.element_type == "i1"]
        return cls(access.shape, access.element_bytes, pointers.contiguity(access.addresses, access.base),
                   pointers.constancy(masks[0]) if masks else None, buffer.type,
                   module_target_text(pointers.lines.lines), op.name)


_TARGET = re.compile(r'^module attributes \{.*ttg\.target = "([^"]*)"')


def module_target_text(lines: list) -> str:
    """The ``ttg.target`` of a printed module ("" where it has none): its module line, after
    the attribute aliases."""
    for line in lines:
        if line.startswith("module"):
            found = _TARGET.match(line)
            return found.group(1) if found else ""
    return ""


def first_register_dim(layout) -> int:
    """Triton's ``order[0]`` of a distributed linear layout: the dim its first moving register
    basis moves along (the last dim where no register moves)."""
    for basis in layout.bases.get("register", ()):
        for dim, x in enumerate(basis):
            if x:
                return dim
    return len(layout.out_dim_names) - 1


def contiguous_registers(layout, dim: int) -> int:
    """How many consecutive registers of a thread hold consecutive elements along ``dim``
    (Triton's ``getContigPerThread``): the leading register bases 1, 2, 4, ... along it."""
    run = 1
    for basis in layout.bases.get("register", ()):
        if basis[dim] != run or any(x for d, x in enumerate(basis) if d != dim):
            break
        run *= 2
    return run


@lru_cache(maxsize=4096)
def async_copy_elements(key: str, facts: AsyncCopyFacts) -> int:
    """The elements one thread's ``cp.async`` copies at once with its pointers in ``key``, as
    Triton's lowering computes it (see the module docstring); 1 where unread."""
    try:
        layout = tensor_layout_of(key, facts.shape)
    except (LayoutError, ValueError):
        return 1
    buffer = _buffer(facts.memdesc_type)
    if facts.pointer is None or buffer is None or buffer[1]:
        return 1
    dim = first_register_dim(layout)
    pointer_run = facts.pointer.vector if dim == facts.pointer.dim else 1
    mask_run = facts.mask_constancy[dim] if facts.mask_constancy is not None else pointer_run
    try:
        shared_run = layout.invert_and_compose(buffer[0]).num_consecutive_in_out()
    except (LayoutError, ValueError):
        return 1
    return max(1, min(contiguous_registers(layout, dim), pointer_run, mask_run, shared_run))


def async_copy_problem(key: str, facts: AsyncCopyFacts) -> Optional[str]:
    """Why ``key`` is not a layout the backend accepts for this ``cp.async``, or on AMD this
    direct-to-LDS load (None: it is)."""
    if facts.amd_architecture is not None:
        return direct_to_lds_problem(key, facts)
    if facts.element_bytes >= MIN_ASYNC_COPY_BYTES:
        return None
    copied = async_copy_elements(key, facts) * facts.element_bytes
    if copied >= MIN_ASYNC_COPY_BYTES:
        return None
    return f"cp.async would copy {copied} bytes per instruction (at least {MIN_ASYNC_COPY_BYTES} needed): " + \
        limiting_fact(facts)


def limiting_fact(facts: AsyncCopyFacts) -> str:
    """The fact that keeps a ``cp.async`` of sub-4-byte elements narrow, in words."""
    if facts.pointer is None:
        return "its pointers are not an affine function this analysis reads"
    if _buffer(facts.memdesc_type) is None or _buffer(facts.memdesc_type)[1]:
        return "its buffer's layout is not one this analysis reads"
    if facts.pointer.vector * facts.element_bytes < MIN_ASYNC_COPY_BYTES:
        return (f"its pointers are known {facts.pointer.vector * facts.element_bytes}-byte aligned only "
                f"(tt.divisibility of the base and strides)")
    if facts.mask_constancy is not None and facts.mask_constancy[facts.pointer.dim] * facts.element_bytes < \
            MIN_ASYNC_COPY_BYTES:
        run = facts.mask_constancy[facts.pointer.dim]
        return f"its mask may change every {run} element(s) along dim {facts.pointer.dim}"
    return (f"no layout runs along dim {facts.pointer.dim} (its pointers' contiguous dim) in both memories: "
            f"the buffer's consecutive elements run another way, or are swizzled apart")


def best_async_copy_vector(facts: AsyncCopyFacts) -> int:
    """The widest run (elements, at most 16 bytes) the pointers and the mask allow along the
    pointers' contiguous dim: the vector of the coalesced layout offered for a ``cp.async``; on
    AMD the widest of those a direct-to-LDS load of the target has (1 where none fits)."""
    if facts.pointer is None:
        return 1
    vector = min(facts.pointer.vector, 16 // max(1, facts.element_bytes))
    if facts.mask_constancy is not None:
        vector = min(vector, facts.mask_constancy[facts.pointer.dim])
    if facts.amd_architecture is not None:
        fitting = [width // facts.element_bytes for width in direct_to_lds_widths(facts.amd_architecture)
                   if width % max(1, facts.element_bytes) == 0 and width // max(1, facts.element_bytes) <= vector]
        return max(fitting, default=1)
    return max(1, vector)


# --------------------------------------------------------------------------- AMD: direct to LDS

def direct_to_lds_widths(architecture: str) -> tuple:
    """The bytes one lane's direct-to-LDS load may move on ``architecture`` (``gfx942``)."""
    return DIRECT_TO_LDS_BYTES.get(architecture, (MIN_ASYNC_COPY_BYTES,))


@dataclass(frozen=True)
class DirectToLds:
    """How the lowering would copy one lane's registers: the run consecutive in the buffer
    (elements), the vector its loads take (elements), and whether a warp's lanes write one
    consecutive run of it; None where this analysis cannot read the layout or the buffer."""

    shared_run: int
    vector: int
    lanes_consecutive: bool


@lru_cache(maxsize=4096)
def direct_to_lds(key: str, facts: AsyncCopyFacts) -> Optional[DirectToLds]:
    """The direct-to-LDS copy of ``facts`` with its pointers in ``key``, as the AMD lowering
    computes it (see the module docstring)."""
    try:
        layout = tensor_layout_of(key, facts.shape)
    except (LayoutError, ValueError):
        return None
    buffer = _buffer(facts.memdesc_type)
    if buffer is None or buffer[1]:
        return None
    try:
        to_shared = layout.invert_and_compose(buffer[0])
        shared_run = to_shared.num_consecutive_in_out()
    except (LayoutError, ValueError):
        return None
    dim = first_register_dim(layout)
    pointer_run = facts.pointer.vector if facts.pointer is not None and dim == facts.pointer.dim else 1
    mask_run = facts.mask_constancy[dim] if facts.mask_constancy is not None else pointer_run
    vector = max(1, min(shared_run, pointer_run, mask_run, 16 // max(1, facts.element_bytes)))
    lanes = to_shared.bases.get("lane", ())
    consecutive = all(basis[0] == shared_run << i for i, basis in enumerate(lanes))
    return DirectToLds(shared_run, vector, consecutive)


def direct_to_lds_problem(key: str, facts: AsyncCopyFacts) -> Optional[str]:
    """Why the AMD lowering would reject ``key`` for this direct-to-LDS load (None: it would
    not).  Example (gfx942, f16, pointers 16-byte aligned, a row-major unswizzled buffer):
    ``sizePerThread = [1, 8]`` -> "... would load 16 bytes a lane (gfx942 has 4)"."""
    architecture = facts.amd_architecture
    widths = direct_to_lds_widths(architecture)
    copy = direct_to_lds(key, facts)
    name = f"the direct-to-LDS load ({facts.op_name} on {architecture})"
    if copy is None:
        return None if facts.element_bytes in widths else \
            f"{name}: its layout or buffer is not one this analysis reads ({facts.element_bytes}-byte elements)"
    loaded = copy.vector * facts.element_bytes
    if copy.vector < copy.shared_run:
        return (f"{name} would load {loaded} bytes a lane into {copy.shared_run * facts.element_bytes} consecutive "
                f"bytes of shared memory (a strided write): " + _narrowing_fact(facts, copy))
    if loaded not in widths:
        supported = " or ".join(str(w) for w in widths)
        return f"{name} would load {loaded} bytes a lane ({architecture} has {supported})"
    if not copy.lanes_consecutive:
        return f"{name}: a warp's lanes would not write consecutive shared memory (its buffer's rows run another way)"
    return None


def _narrowing_fact(facts: AsyncCopyFacts, copy: DirectToLds) -> str:
    """Why a lane's direct-to-LDS vector is shorter than its run in the buffer, in words."""
    if copy.shared_run * facts.element_bytes > 16:
        return "more than 16 bytes consecutive in one lane"
    if facts.pointer is None:
        return "its pointers are not an affine function this analysis reads"
    if facts.pointer.vector < copy.shared_run:
        return (f"its pointers are known {facts.pointer.vector * facts.element_bytes}-byte aligned only "
                f"(tt.divisibility of the base and strides)")
    return f"its mask may change within {copy.shared_run} elements"


# --------------------------------------------------------------------------- atomics: what one instruction updates

def buffer_atomic_elements(op) -> int:
    """The most elements one atomic instruction of the buffer atomic ``op`` updates, whatever
    its layout: 2 for f16 and bf16 (packed), 1 for every other element type."""
    value = op.results[0].tensor_type if op.results else None
    packed = value is not None and value.element_type in PACKED_ATOMIC_TYPES
    return PACKED_ATOMIC_ELEMENTS if packed else 1


_RMW_KIND = re.compile(r"\btt\.atomic_rmw\s+(\w+)")
_CUDA_CAPABILITY = re.compile(r"^cuda:(\d+)")


def atomic_elements(op, header: str, target: str) -> int:
    """The most elements one instruction of Triton's atomic ``op`` (``tt.atomic_rmw`` /
    ``tt.atomic_cas``; ``header``: its printed first line) updates on ``target`` (the module's
    ``ttg.target``), as the lowering issues it from a long enough run of consecutive, aligned
    elements (module docstring): 16 bytes of an f32 / f16 / bf16 ``fadd`` on sm_90 and later,
    2 elements of an f16 ``rmw`` on older NVIDIA targets and of an f16 / bf16 one on AMD, else 1
    (every ``cas``).  Example: ``tt.atomic_rmw fadd`` of f32 on ``cuda:90``: 4."""
    value = op.results[0].tensor_type if op.results else None
    if op.name != "tt.atomic_rmw" or value is None:
        return 1
    element, kind = value.element_type, _RMW_KIND.search(header)
    capability = _CUDA_CAPABILITY.match(target)
    if target.startswith("hip:"):
        return PACKED_ATOMIC_ELEMENTS if element in PACKED_ATOMIC_TYPES else 1
    if capability and int(capability.group(1)) >= VECTOR_ATOMIC_CAPABILITY and kind and kind.group(1) == "fadd" \
            and element in VECTOR_ATOMIC_TYPES:
        return VECTOR_ATOMIC_BYTES // VECTOR_ATOMIC_TYPES[element]
    return PACKED_ATOMIC_ELEMENTS if element == "f16" else 1


# --------------------------------------------------------------------------- AMD: packed buffer atomics

@dataclass(frozen=True)
class BufferAtomicFacts:
    """What a packed (f16, bf16) ``amdg.buffer_atomic_rmw``'s vector depends on besides its layout."""

    shape: tuple                       # the offsets' shape
    element_type: str
    pointer: Optional[Contiguity]      # base plus offsets: the contiguous dim and aligned vector
    mask_constancy: Optional[tuple]    # per dim (None: no mask)
    op_name: str = BUFFER_ATOMIC_RMW

    @classmethod
    def of(cls, op, pointers: PointerAnalysis) -> Optional["BufferAtomicFacts"]:
        """The facts of a buffer atomic whose lowering requires something of its layout (one of
        packed elements), None for any other op."""
        access = global_access(op) if op.name in BUFFER_ATOMICS else None
        if access is None or buffer_atomic_elements(op) < PACKED_ATOMIC_ELEMENTS:
            return None
        masks = [v for v in op.operands if v is not None and v is not access.addresses and v.tensor_type is not None
                 and v.tensor_type.element_type == "i1"]
        return cls(access.shape, op.results[0].tensor_type.element_type,
                   pointers.contiguity(access.addresses, access.base),
                   pointers.constancy(masks[0]) if masks else None, op.name)


@lru_cache(maxsize=4096)
def packed_atomic_run(key: str, facts: BufferAtomicFacts) -> Optional[int]:
    """The elements the lowering finds consecutive for one atomic with the offsets in ``key``:
    the thread's run of registers along the layout's ``order[0]``, as far as the offsets'
    alignment and the mask allow (None: a layout this analysis cannot read)."""
    try:
        layout = tensor_layout_of(key, facts.shape)
    except (LayoutError, ValueError):
        return None
    dim = first_register_dim(layout)
    pointer_run = facts.pointer.vector if facts.pointer is not None and dim == facts.pointer.dim else 1
    mask_run = facts.mask_constancy[dim] if facts.mask_constancy is not None else pointer_run
    return max(1, min(contiguous_registers(layout, dim), pointer_run, mask_run))


def buffer_atomic_problem(key: str, facts: BufferAtomicFacts) -> Optional[str]:
    """Why the AMD lowering would reject ``key`` for this packed buffer atomic (None: it would
    not).  Example (f16, ``sizePerThread = [1, 1]``): "the packed buffer atomic
    (amdg.buffer_atomic_rmw of f16) would update 1 element at a time (2 needed): 1 consecutive
    in a thread's registers"."""
    run = packed_atomic_run(key, facts)
    if run is None or run >= PACKED_ATOMIC_ELEMENTS:
        return None
    name = f"the packed buffer atomic ({facts.op_name} of {facts.element_type})"
    layout = tensor_layout_of(key, facts.shape)
    dim = first_register_dim(layout)
    if contiguous_registers(layout, dim) < PACKED_ATOMIC_ELEMENTS:
        why = f"1 element consecutive in a thread's registers along dim {dim}"
    elif facts.pointer is None:
        why = "its offsets are not an affine function this analysis reads"
    elif facts.pointer.dim != dim:
        why = f"its offsets are contiguous along dim {facts.pointer.dim}, the layout's registers along dim {dim}"
    elif facts.pointer.vector < PACKED_ATOMIC_ELEMENTS:
        why = (f"its base and offsets are known {facts.pointer.vector * 2}-byte aligned only "
               f"(tt.divisibility of the base and strides)")
    else:
        why = f"its mask may change every element along dim {dim}"
    return f"{name} would update 1 element at a time ({PACKED_ATOMIC_ELEMENTS} needed): {why}"


# --------------------------------------------------------------------------- AMD: tt.atomic_cas in Triton 3.6

# The first release whose AMD lowering of a tensor tt.atomic_cas takes any layout.
ONE_ELEMENT_CAS_FIXED = (3, 7)


@dataclass(frozen=True)
class OneElementCasFacts:
    """A tensor ``tt.atomic_cas`` that Triton 3.6's AMD lowering compiles only where each thread
    holds one element (module docstring)."""

    shape: tuple                       # the pointers' shape
    op_name: str = ATOMIC_CAS

    @classmethod
    def of(cls, op, pointers: PointerAnalysis, release: Optional[tuple] = None) -> Optional["OneElementCasFacts"]:
        """The facts of a tensor ``tt.atomic_cas`` on AMD where the lowering of ``release``
        ((major, minor); None: the installed Triton's) takes one element a thread; None otherwise."""
        if op.name != ATOMIC_CAS or not module_target_text(pointers.lines.lines).startswith("hip:"):
            return None
        if release is None:
            from ..ir.bindings import installed_triton_version
            release = installed_triton_version()
        access = global_access(op)
        return cls(access.shape) if release < ONE_ELEMENT_CAS_FIXED and access is not None else None


def one_element_cas_problem(key: str, facts: OneElementCasFacts) -> Optional[str]:
    """Why Triton 3.6's AMD lowering would reject ``key`` for this ``tt.atomic_cas`` (None: it
    would not).  Example (256 elements, 4 warps of 64 lanes): ``sizePerThread = [2]`` ->
    "... takes one element a thread; this layout gives each thread 2"."""
    try:
        layout = tensor_layout_of(key, facts.shape)
    except (LayoutError, ValueError):
        return None
    registers = 1 << len(layout.bases.get("register", ()))
    if registers == 1:
        return None
    return (f"Triton 3.6's AMD lowering of {facts.op_name} takes one element a thread; this layout gives each "
            f"thread {registers}")


# --------------------------------------------------------------------------- any op

def requirement_facts(op, pointers: PointerAnalysis):
    """What the backend's requirement of ``op``'s layout depends on, for :func:`layout_problem`:
    :class:`AsyncCopyFacts` of a global load straight into shared memory, :class:`BufferAtomicFacts`
    of a packed buffer atomic, :class:`OneElementCasFacts` of a ``tt.atomic_cas`` on AMD under
    Triton 3.6; None for an op that takes any layout (or whose addresses are no tensor:
    :func:`.layout_rules.global_access`)."""
    if global_access(op) is None:
        return None
    if op.name in DIRECT_TO_SHARED_OPS:
        return AsyncCopyFacts.of(op, pointers)
    if op.name == ATOMIC_CAS:
        return OneElementCasFacts.of(op, pointers)
    return BufferAtomicFacts.of(op, pointers)


def layout_problem(key: str, facts) -> Optional[str]:
    """Why the backend would reject ``key`` for the op of ``facts`` (:func:`requirement_facts`);
    None: it would not."""
    if isinstance(facts, AsyncCopyFacts):
        return async_copy_problem(key, facts)
    if isinstance(facts, BufferAtomicFacts):
        return buffer_atomic_problem(key, facts)
    if isinstance(facts, OneElementCasFacts):
        return one_element_cas_problem(key, facts)
    return None
