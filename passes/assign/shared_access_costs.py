"""What a distributed layout costs an op that moves data between registers and a shared buffer
whose layout is fixed: ``ttg.local_load``, ``ttg.local_store`` / ``ttg.local_alloc`` with a
source, and ``cp.async`` (``ttg.async_copy_global_to_local``).

The buffer's layout is the memdesc's (the author's, or Triton's); only the tensor's is the
assignment's to choose.  Prices use the plans we would emit (``lowering.local_memory``):

* a local load or store costs its cheapest verified plan (vector width, ``ldmatrix`` /
  ``stmatrix``, wavefronts per access: bank conflicts included), per warp, as
  ``layout_costs.plan_work`` prices a conversion's plan;
* ``cp.async`` reads global memory as a load in the same layout does
  (``layout_costs.memory_work``), but one instruction copies one run of elements that is
  consecutive in *both* memories: its vector is also capped by the widest store our plan can
  make into the buffer from that layout.

Example (8192 f32, a swizzle-free 1-D buffer, 4 warps, pointers 16-byte aligned): in
``blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4]}>`` each thread's 4
consecutive registers are 4 consecutive buffer offsets, so ``cp.async`` copies 16 bytes per
instruction and a local load reads them with one ``ld.shared.v4``; with ``sizePerThread = [1]``
both take 4 times the instructions.

A pair our planner cannot plan (a multi-CTA split, a padded buffer, a view with a leading buffer
dim) is priced as one access of every register, no vectors (what Triton's fallback lowering
issues at worst).

Bytes moved in vectors are (un)packed in registers, and Triton emits that work (``_byte_packing``):
it holds each 8-bit element in a register of its own, so an access moving k > 1 bytes costs, on
the ALU, k unpacking ops after a load (``ld.shared.v2.b8`` gives two 16-bit registers, each widened
by a ``cvt.u32.u16`` before its next use; a word of 4 bytes takes a ``prmt`` or ``cvt`` per byte)
and k - words packing ops before a store (3 ``prmt.b32`` per word).  A scalar ``ld.shared.b8`` /
``st.shared.b8`` needs none.  Measured (PTX of triton 3.6 and 3.9, sm_90, one warp): an fp8 8x64
tile copied from a 64-byte-swizzled NVMMA buffer into a transposed one, read in
``sizePerThread = [8, 2], order = [0, 1]``: 64 ``ld.shared.v2.b8`` + 128 ``cvt.u32.u16`` + 161
``prmt.b32`` against 128 ``ld.shared.b8`` + 96 ``prmt.b32`` in ``sizePerThread = [1, 1]`` (same
stores): half the loads, 1.6 times the instructions, 1.098x the run time of the whole kernel on an
H200.  16-bit elements are left unpriced: Triton keeps pairs packed (``add.f16x2`` consumes a
``ld.shared.b32`` with no unpacking, in both releases).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ...dialect import LayoutError
from ...dialect.attributes import PaddedSharedEncoding
from ...lowering.cost_weights import weights_for
from ...lowering.element_type import storage_bits_of
from ...lowering.local_memory import plan_local_load, plan_local_store
from ...lowering.target import Target
from ..ir.layouts import LayoutUnavailable, _memdesc_of_type, tensor_layout_of
from ..ir.types import parse_tensor_type
from .layout_costs import plan_work
from .pipe_time import Work


def _buffer(memdesc_type: str):
    """(one buffer's layout, whether the memdesc is a view of it) or None where our plans do not
    apply (see the module docstring)."""
    tensor_type = parse_tensor_type(memdesc_type)
    try:
        layout = _memdesc_of_type(tensor_type)
    except LayoutUnavailable:
        return None
    if isinstance(layout.encoding, PaddedSharedEncoding):
        return None
    view = layout.view_shape != layout.buffer_shape
    if view and layout.buffers is not None:
        return None
    return layout.buffer, view


def _unplanned(registers: int, target: Target) -> Work:
    w = weights_for(target.name)
    shared = registers * (w.shared_access + w.shared_wavefront)
    return Work(shared=shared, total=shared)


@lru_cache(maxsize=4096)
def local_load_work(encoding: str, shape: tuple, memdesc_type: str, bits: int, target: Target) -> Work:
    """One warp's ``ttg.local_load`` of a tensor of ``shape`` in ``encoding`` from a memdesc of
    type ``memdesc_type``."""
    return _access_work(encoding, shape, memdesc_type, bits, target, load=True)


@lru_cache(maxsize=4096)
def local_store_work(encoding: str, shape: tuple, memdesc_type: str, bits: int, target: Target) -> Work:
    """One warp's ``ttg.local_store`` (or ``local_alloc`` with a source) of a tensor of ``shape``
    in ``encoding`` into a memdesc of type ``memdesc_type``."""
    return _access_work(encoding, shape, memdesc_type, bits, target, load=False)


def _access_work(encoding: str, shape: tuple, memdesc_type: str, bits: int, target: Target, load: bool) -> Work:
    try:
        layout = tensor_layout_of(encoding, shape)
    except (LayoutError, ValueError):
        return Work()
    buffer = _buffer(memdesc_type)
    plan = None
    if buffer is not None:
        planner = plan_local_load if load else plan_local_store
        plan = planner(buffer[0], layout, bits, target, view=buffer[1]) if load else \
            planner(layout, buffer[0], bits, target, view=buffer[1])
    if not plan:
        return _unplanned(layout.in_dim_size("register"), target)
    return plan_work(plan.cost, target) + _byte_packing(plan.shared.ops, bits, target, load)


def _byte_packing(accesses, bits: int, target: Target, load: bool) -> Work:
    """The ALU work Triton emits to unpack (``load``) or pack the bytes of the vector accesses of
    a plan of 8-bit elements (module docstring): k per load of k > 1 bytes, k - words per store."""
    if storage_bits_of(bits) != 8:
        return Work()
    ops = 0
    for access in accesses:
        k = len(getattr(access, "registers", ()))
        if k > 1:
            ops += k if load else k - (k + 3) // 4
    alu = ops * weights_for(target.name).alu_op
    return Work(alu=alu, total=alu)


@lru_cache(maxsize=4096)
def async_copy_vector(encoding: str, shape: tuple, memdesc_type: str, bits: int, target: Target) -> int:
    """The widest run of elements (at most 16 bytes) one thread's ``cp.async`` may copy from a
    tensor in ``encoding`` into the memdesc: the vector of our plan's stores into that buffer
    (1 where there is no plan)."""
    try:
        layout = tensor_layout_of(encoding, shape)
    except (LayoutError, ValueError):
        return 1
    buffer = _buffer(memdesc_type)
    if buffer is None:
        return 1
    plan = plan_local_store(layout, buffer[0], bits, target, view=buffer[1])
    return plan.shared.store_vector if plan else 1


def memdesc_of(op) -> "Optional[object]":
    """The memdesc value a local load, store or alloc, or a ``cp.async``, accesses (None if none)."""
    values = list(op.operands) + list(op.results)
    return next((v for v in values if v.tensor_type is not None and v.tensor_type.is_shared), None)


def buffer_fastest_dim(memdesc_type: str) -> Optional[int]:
    """The tensor dim of the buffer's offset bit 0 (the dim its consecutive elements run along),
    None where our plans do not apply or the buffer holds one element."""
    buffer = _buffer(memdesc_type)
    if buffer is None:
        return None
    layout = buffer[0]
    first = next((basis for basis in layout.bases.get("offset", ()) if any(basis)), None)
    if first is None:
        return None
    moved = [d for d, x in enumerate(first) if x]
    return moved[0] if len(moved) == 1 else None
