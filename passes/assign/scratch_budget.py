"""Shared memory as a hard limit of ``ll-assign-layouts``: an assignment may add a conversion only
where its scratch fits beside the kernel's own buffers.

A conversion that moves data across warps goes through shared memory: Triton (or our island)
needs scratch for it, allocated where the conversion runs.  In a kernel whose pipelined loads
already hold most of the SM's shared memory (a 4-stage matmul: 4 x (128x64 + 64x128) f16 =
128 KiB of sm_90's 227 KiB), a new 128x128 f32 conversion (64 KiB) would not fit: Triton would
fail to allocate, and a kernel that stock compiles must compile with the plugin on.

So before an assignment is accepted, every conversion it adds (one that Triton's assignment
does not have at the same use) is checked against ``Target.shared_memory_bytes`` minus the
bytes of every ``ttg.local_alloc`` of the function.  All of them count, as if all were live
where the conversion runs (Triton's allocator reuses the space of buffers that are dead by
then, so this errs towards keeping Triton's layouts).  A conversion within warps (registers or
lane shuffles) needs no scratch; one across warps is charged its whole tensor (Triton's
scratch for a convert holds at most that; our plans may need less).  Worked example: sm_90,
buffers 3 x 32 KiB = 96 KiB, limit 227 KiB: a new conversion of a 128x128 f32 tensor across
warps (64 KiB) fits (160 KiB); with 4 x 48 KiB = 192 KiB of buffers it does not (256 KiB), and
the function keeps Triton's layouts (the remark names the conversion and the bytes).
"""

from __future__ import annotations

from typing import Iterable, Optional

from ...lowering.conversion import conversion_scope
from ...lowering.plan import Scope
from ...lowering.target import Target
from .layout_graph import LayoutGraph
from ..ir.layouts import tensor_layout_of
from ..ir.snapshot import Operation

WITHIN_WARPS = (Scope.NONE, Scope.REGISTER, Scope.LANE)


def buffer_bytes(ops: Iterable[Operation]) -> int:
    """Bytes of every ``ttg.local_alloc`` among ``ops`` (its memdesc's allocation shape)."""
    total = 0
    for op in ops:
        if op.name != "ttg.local_alloc" or not op.results:
            continue
        memdesc = op.results[0].tensor_type
        if memdesc is None:
            continue
        count = 1
        for size in memdesc.alloc_shape or memdesc.shape:
            count *= size
        total += count * max(8, memdesc.element.storage_bits) // 8
    return total


def conversion_scratch(src: str, dst: str, shape: tuple[int, ...], bits: int) -> int:
    """Scratch bytes a conversion of ``shape`` from ``src`` to ``dst`` is charged: 0 within
    warps, the whole tensor across warps (module docstring)."""
    if src == dst:
        return 0
    scope = conversion_scope(tensor_layout_of(src, shape), tensor_layout_of(dst, shape))
    if scope in WITHIN_WARPS:
        return 0
    count = 1
    for size in shape:
        count *= size
    return count * max(8, bits) // 8


def scratch_overflow(graph: LayoutGraph, keys: list[str], ops: list[Operation], target: Target) -> Optional[str]:
    """Why the assignment ``keys`` does not fit the target's shared memory, or None where it
    does (or the target's size is unknown)."""
    if target.shared_memory_bytes <= 0:
        return None
    stock = graph.stock_keys()
    buffers = buffer_bytes(ops)
    for use in graph.uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        if provided == required:
            continue
        if (graph.value_encoding(use.value, stock), graph.requirement(use, stock)) == (provided, required):
            continue                      # Triton's own conversion: it fits, stock compiles
        tensor_type = use.value.tensor_type
        if tensor_type is None:
            continue
        bits = 64 if tensor_type.element_type.startswith("!tt.ptr") else tensor_type.element.logical_bits
        scratch = conversion_scratch(provided, required, tensor_type.shape, bits)
        if scratch and buffers + scratch > target.shared_memory_bytes:
            return (f"a conversion it adds ({'x'.join(map(str, tensor_type.shape))}, across warps) needs "
                    f"{scratch} bytes of scratch beside the kernel's {buffers} bytes of shared buffers, over "
                    f"{target.name}'s {target.shared_memory_bytes}")
    return None
