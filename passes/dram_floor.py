"""The least time a kernel's global-memory traffic takes: the DRAM floor of ``ll-assign-layouts``.

A kernel whose time is its memory traffic does not run faster when its conversions get cheaper:
the warps wait for DRAM either way, and the saved shuffles or shared-memory round trips were
hidden behind the loads.  Measured on an H100 (``benchmarks/assign_reduce_gpu.py``,
``benchmarks/assign_gpu.py --only argmax``): every kernel whose layouts the assignment changed
for a modelled gain of 10-40% in conversions and reductions ran 2-3% *slower*, and each moves
more bytes per warp than its modelled instructions can hide.

So the assignment compares the two sides of a roofline, per warp and in the cost model's units
(:mod:`.layout_costs`: one conflict-free 128-byte shared wavefront costs ``shared_wavefront``,
about one cycle of an SM's shared-memory pipe)::

    modelled time = max(DRAM floor, modelled instruction cost)
    DRAM floor    = sum over global loads and stores of (loop weight x bytes) / warps
                    x shared_wavefront / (DRAM bytes per SM cycle)

Every warp of an SM shares that SM's slice of DRAM bandwidth and its issue slots alike, so the
comparison holds per warp whatever the occupancy.  Where the rate was measured
(``benchmarks/dram_rate.py``: what Triton's own copy and read kernels reach, stored as the
target's ``dram_byte`` constant) the floor uses it; elsewhere the published peak
(``Target.dram_bytes_per_cycle``), which no kernel reaches, so the floor there is lower than it
should be.  The floor counts every byte a load or store
names (a broadcast vector that every program reads, which L2 serves, is counted as DRAM bytes;
masked-off elements are counted too): it errs towards calling a kernel memory-bound, that is,
towards keeping Triton's layouts.  The instruction cost covers only what the assignment models
(conversions, reductions, elementwise work, loads' issue); dots and address arithmetic are left
out, which errs the same way.

Worked example (``benchmarks/assign_reduce_gpu.py``'s 8 rows x 1024 f32 reduction, 8 warps, on
sm_90): the tile load moves 32 KiB, 4 KiB per warp; at 12.8 bytes per SM cycle and a wavefront
weight of 1.07 that is 4096 x 1.07 / 12.8 = 342 units per warp, above the ~250 units of its
loads, reduction and stores in either layout: memory-bound, no gain from re-laying it out.
"""

from __future__ import annotations

from typing import Iterable

from ..lowering.target import Target
from .layout_graph import loop_weight
from .layout_text import ModuleLines
from .pointer_contiguity import pointee_bytes
from .snapshot import Operation
from .types import TensorType

# Ops that move data between global memory and the SM (loads, stores, asynchronous and TMA
# copies, atomics).  Local (shared-memory) loads and stores are not DRAM traffic.
GLOBAL_MEMORY_OPS = frozenset({
    "tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas",
    "tt.descriptor_load", "tt.descriptor_store", "tt.descriptor_gather", "tt.descriptor_scatter",
    "ttg.async_copy_global_to_local",
    "ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
    "ttng.async_tma_gather", "ttng.async_tma_scatter",
    "amdgpu.buffer_load", "amdgpu.buffer_store", "amdgpu.buffer_load_to_local",   # as 3.6 prints them
    "amdg.buffer_load", "amdg.buffer_store", "amdg.buffer_load_to_local",         # as 3.9 prints them
})
# An atomic reads and writes its bytes.
READ_AND_WRITE = frozenset({"tt.atomic_rmw", "tt.atomic_cas"})


def _tensor_bytes(tensor_type: TensorType) -> int:
    count = 1
    for size in tensor_type.shape:
        count *= size
    if tensor_type.element_type.startswith("!tt.ptr"):
        return count * pointee_bytes(tensor_type.element_type)
    return count * max(8, tensor_type.element.logical_bits) // 8


def bytes_moved(op: Operation) -> int:
    """Bytes of global memory one execution of ``op`` reads or writes (0 for a scalar access).

    A tensor of pointers names its bytes (``tensor<64x!tt.ptr<f16>>``: 128); otherwise the
    largest tensor or shared buffer among the op's operands and results is the data (a
    descriptor load's result, a TMA copy's buffer), masks (``i1``) aside.
    """
    values = list(op.operands) + list(op.results)
    types = [v.tensor_type for v in values if v is not None]
    types = [t for t in types if t is not None]
    pointers = [t for t in types if t.element_type.startswith("!tt.ptr")]
    if pointers:
        moved = max(_tensor_bytes(t) for t in pointers)
    else:
        data = [t for t in types if t.element_type != "i1"]
        moved = max((_tensor_bytes(t) for t in data), default=0)
    return 2 * moved if op.name in READ_AND_WRITE else moved


def dram_floor(ops: Iterable[Operation], lines: ModuleLines, num_warps: int, target: Target) -> float:
    """The DRAM floor (module docstring) of the ops of one function, per warp, loop-weighted."""
    weighted_bytes = sum(loop_weight(op, lines) * bytes_moved(op) for op in ops if op.name in GLOBAL_MEMORY_OPS)
    return weighted_bytes / max(1, num_warps) * dram_byte_cost(target)


def dram_byte_cost(target: Target) -> float:
    """What one byte of DRAM traffic costs an SM, in the cost model's units: measured where
    ``benchmarks/dram_rate.py`` ran (``dram_byte`` of the target's constants), else from the
    published rate: a wavefront's cost over the DRAM bytes per cycle."""
    weights = target.weights
    if weights.dram_byte > 0:
        return weights.dram_byte
    if target.dram_bytes_per_cycle <= 0:
        return 0.0
    return weights.shared_wavefront / target.dram_bytes_per_cycle
