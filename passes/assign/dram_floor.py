"""The least time a kernel's global-memory traffic takes: the DRAM floor of ``ll-assign-layouts``.

A kernel whose time is its memory traffic does not run faster when its conversions get cheaper:
the warps wait for DRAM either way, and the saved shuffles or shared-memory round trips were
hidden behind the loads.  A modelled gain in conversions and reductions shows only where the
kernel's bytes per warp do not already take longer than its modelled instructions: without this
floor the assignment re-laid out memory-bound kernels that then ran slightly *slower*
(measured: docs/layout-assignment.md, 'What the model rests on').

So the assignment compares the two sides of a roofline, per warp and in the cost model's units
(:mod:`.layout_costs`: one conflict-free 128-byte shared wavefront costs ``shared_wavefront``,
about one cycle of an SM's shared-memory pipe)::

    modelled time = max(DRAM floor, modelled instruction cost)
    DRAM floor    = sum over global loads and stores of (loop weight x bytes) / warps
                    x shared_wavefront / (DRAM bytes per SM cycle)

Every warp of an SM shares that SM's slice of DRAM bandwidth and its issue slots alike, so the
comparison holds per warp whatever the occupancy.  Where the rate was measured
(``benchmarks/studies/dram_rate.py``: what Triton's own copy and read kernels reach, stored as the
target's ``dram_byte`` constant) the floor uses it; elsewhere the published peak
(``Target.dram_bytes_per_cycle``), which no kernel reaches, so the floor there is lower than it
should be.  The floor counts every byte a load or store
names (a broadcast vector that every program reads, which L2 serves, is counted as DRAM bytes;
masked-off elements are counted too): it errs towards calling a kernel memory-bound, that is,
towards keeping Triton's layouts.  The instruction cost covers only what the assignment models
(conversions, reductions, elementwise work, loads' issue); dots and address arithmetic are left
out, which errs the same way.

**Data the whole grid shares is L2's, not DRAM's.**  A load whose address does not depend on
the program id reads the same bytes in every program: after the first program, L2 serves them,
at L2's rate, well above DRAM's (``l2_byte``, measured by ``benchmarks/studies/dram_rate.py``;
docs/studies.md).  :func:`grid_shared_bytes` follows each ``tt.load``'s pointer back through the
ops that compute it: ``tt.get_program_id`` makes it per program; a loop's induction
variable makes it one of as many addresses as the loop has iterations (static bounds) or of
``c`` where it only enters through a remainder by a constant ``c`` (``i % 4``, and likewise
``pid % 4``: a remainder takes at most ``c`` values whatever its input); an iteration
argument or a ``scf.while`` argument is not followed (per program, to be safe).  The shared
loads count at L2's rate only while their working set (bytes per access x distinct addresses,
summed) fits the target's L2 (``Target.l2_bytes``), and only where ``l2_byte`` was measured;
otherwise as DRAM bytes, as before.  Example (the row-sum study of docs/studies.md, "Where DRAM is not the bound?": every
program reads ``X + (i % 4) * BLOCK_M * N``, tiles of 8x512 f32, 16 KiB, 8 warps): the loads
are shared; ``i % 4`` is a signed remainder, so at most 7 distinct tiles, 112 KiB, fit L2; the
floor falls from 192,938 units per warp to 85,564, below the loop's modelled time, and the
model's trade can show (it did: docs/layout-assignment.md, 'What the model rests on').

Worked example (``benchmarks/studies/assign_reduce_gpu.py``'s 8 rows x 1024 f32 reduction, 8 warps, on
sm_90): the tile load moves 32 KiB, 4 KiB per warp; at 12.8 bytes per SM cycle and a wavefront
weight of 1.07 that is 4096 x 1.07 / 12.8 = 342 units per warp, above the ~250 units of its
loads, reduction and stores in either layout: memory-bound, no gain from re-laying it out.
"""

from __future__ import annotations

from math import prod
from typing import Iterable

from ...lowering.target import Target
from .layout_graph import _CONSTANT, _static_trips, loop_weight
from ..ir.module_lines import ModuleLines
from .pointer_contiguity import pointee_bytes
from ..ir.snapshot import Operation
from ..ir.types import TensorType

# Ops that move data between global memory and the SM (loads, stores, asynchronous and TMA
# copies, atomics).  Local (shared-memory) loads and stores are not DRAM traffic.
GLOBAL_MEMORY_OPS = frozenset({
    "tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas",
    "tt.descriptor_load", "tt.descriptor_store", "tt.descriptor_gather", "tt.descriptor_scatter",
    "ttg.async_copy_global_to_local",
    "ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
    "ttng.async_tma_gather", "ttng.async_tma_scatter",
    "amdgpu.buffer_load", "amdgpu.buffer_store", "amdgpu.buffer_load_to_local",   # as 3.6 prints them
    "amdgpu.buffer_atomic_rmw", "amdgpu.buffer_atomic_cas",
    "amdg.buffer_load", "amdg.buffer_store", "amdg.buffer_load_to_local",         # as 3.9 prints them
    "amdg.buffer_atomic_rmw", "amdg.buffer_atomic_cas",
})
# AMD's buffer ops (a scalar base and a tensor of offsets), in either spelling.
BUFFER_OP_NAMES = frozenset(name for name in GLOBAL_MEMORY_OPS if ".buffer_" in name)
# An atomic reads and writes its bytes.
READ_AND_WRITE = frozenset({"tt.atomic_rmw", "tt.atomic_cas", "amdgpu.buffer_atomic_rmw", "amdgpu.buffer_atomic_cas",
                            "amdg.buffer_atomic_rmw", "amdg.buffer_atomic_cas"})


def _buffer_bytes(op: Operation):
    """The bytes an AMD buffer op names: as many of its base's elements as it has offsets (the
    operand after the scalar base); None where it has no such operands."""
    operands = list(op.operands)
    for i, v in enumerate(operands[:-1]):
        if v is not None and v.tensor_type is None and v.type.startswith("!tt.ptr<"):
            offsets = operands[i + 1].tensor_type if operands[i + 1] is not None else None
            if offsets is None or offsets.is_shared:
                return None
            return prod(offsets.shape) * pointee_bytes(v.type)
    return None


def _tensor_bytes(tensor_type: TensorType) -> int:
    count = 1
    for size in tensor_type.shape:
        count *= size
    if tensor_type.element_type.startswith("!tt.ptr"):
        return count * pointee_bytes(tensor_type.element_type)
    return count * max(8, tensor_type.element.logical_bits) // 8


def bytes_moved(op: Operation) -> int:
    """Bytes of global memory one execution of ``op`` reads or writes (0 for a scalar access).

    A tensor of pointers names its bytes (``tensor<64x!tt.ptr<f16>>``: 128), and so do AMD's
    buffer ops' offsets from a scalar base (``!tt.ptr<f16>`` and ``tensor<64xi32>``: 128, not
    the 256 bytes of the offsets); otherwise the largest tensor or shared buffer among the op's
    operands and results is the data (a descriptor load's result, a TMA copy's buffer), masks
    (``i1``) aside.
    """
    values = list(op.operands) + list(op.results)
    types = [v.tensor_type for v in values if v is not None]
    types = [t for t in types if t is not None]
    pointers = [t for t in types if t.element_type.startswith("!tt.ptr")]
    buffer = _buffer_bytes(op) if op.name in BUFFER_OP_NAMES else None
    if pointers:
        moved = max(_tensor_bytes(t) for t in pointers)
    elif buffer is not None:
        moved = buffer
    else:
        data = [t for t in types if t.element_type != "i1"]
        moved = max((_tensor_bytes(t) for t in data), default=0)
    return 2 * moved if op.name in READ_AND_WRITE else moved


def dram_floor(ops: Iterable[Operation], lines: ModuleLines, num_warps: int, target: Target) -> float:
    """The DRAM floor (module docstring) of the ops of one function, per warp, loop-weighted:
    DRAM bytes at DRAM's rate, bytes the grid shares (:func:`grid_shared_bytes`) at L2's."""
    memory_ops = [op for op in ops if op.name in GLOBAL_MEMORY_OPS]
    shared = grid_shared_bytes(memory_ops, lines, target)
    dram_bytes = l2_bytes = 0.0
    for op in memory_ops:
        weighted = loop_weight(op, lines) * bytes_moved(op)
        if id(op) in shared:
            l2_bytes += weighted
        else:
            dram_bytes += weighted
    return (dram_bytes * dram_byte_cost(target) + l2_bytes * target.weights.l2_byte) / max(1, num_warps)


# What a value's computation depends on (see _dependence): the program id, something not
# followed (an iteration argument), a loop's induction variable, or a count of distinct values.
_PER_PROGRAM, _NOT_FOLLOWED = "program id", "not followed"
UNBOUNDED = float("inf")        # a loop whose trip count is not static: as many values as it likes
PROGRAM_ID_OPS = frozenset({"tt.get_program_id"})
REMAINDER_OPS = frozenset({"arith.remsi", "arith.remui"})


def grid_shared_bytes(memory_ops: list[Operation], lines: ModuleLines, target: Target) -> set[int]:
    """``id``s of the ``tt.load``s whose bytes the whole grid shares and L2 holds (module
    docstring): the pointer does not depend on the program id, and the working set of all such
    loads, bytes per access times the distinct addresses each takes, fits ``target.l2_bytes``.
    Empty where the target has no measured L2 rate or no known L2 size."""
    if target.weights.l2_byte <= 0 or target.l2_bytes <= 0:
        return set()
    memo: dict[int, frozenset] = {}
    shared, working_set = set(), 0
    for op in memory_ops:
        if op.name != "tt.load" or not op.operands:
            continue
        dependence = _dependence(op.operands[0], lines, memo)
        if _PER_PROGRAM in dependence or _NOT_FOLLOWED in dependence:
            continue
        distinct = 1
        for count in dependence:
            distinct *= count
        if distinct == UNBOUNDED:
            continue
        shared.add(id(op))
        working_set += distinct * bytes_moved(op)
    return shared if working_set <= target.l2_bytes else set()


def _dependence(value, lines: ModuleLines, memo: dict) -> frozenset:
    """What ``value`` depends on: a set holding ``_PER_PROGRAM``, ``_NOT_FOLLOWED``, or counts
    ``n`` (an integer: a factor of at most n distinct values, from a loop's induction variable
    or a remainder).  Worked example: ``%t = arith.remsi %i, %c4`` inside ``scf.for %i = 0 to
    1024``: ``%i`` gives {1024}, ``%t`` {4} (a remainder by 4 takes at most 4 values whatever its
    input; 7 for a signed one, -3..3); ``%p = tt.addptr %X, %t`` with ``%X`` a function argument:
    {4}; with ``tt.get_program_id`` anywhere in the chain: {program id}."""
    key = id(value)
    if key in memo:
        return memo[key]
    memo[key] = frozenset({_NOT_FOLLOWED})       # a cycle is not followed
    producer = value.defining_op
    if producer is None:
        result = _argument_dependence(value, lines, memo)
    elif producer.name in PROGRAM_ID_OPS:
        result = frozenset({_PER_PROGRAM})
    elif producer.name == "arith.constant":
        result = frozenset()
    elif producer.name in REMAINDER_OPS and _constant(producer.operands[1], lines):
        # x % c takes at most c values (2c - 1 signed) whatever x is, in every program alike
        divisor = abs(_constant(producer.operands[1], lines))
        result = frozenset({divisor if producer.name == "arith.remui" else 2 * divisor - 1})
    else:
        result = frozenset()
        for operand in producer.operands:
            result = result | _dependence(operand, lines, memo)
    memo[key] = result
    return result


def _argument_dependence(value, lines: ModuleLines, memo: dict) -> frozenset:
    """A block argument: a function's argument is the same in every program; an ``scf.for``'s
    induction variable takes one value per iteration; anything else is not followed."""
    block = value.owner
    owner = block.parent.parent if block.parent is not None else None
    if owner is None or owner.name == "tt.func":
        return frozenset()
    if owner.name == "scf.for" and value.index == 0:
        lower, upper, step = owner.operands[:3]
        trips = _static_trips(owner, lines)
        bounds = _dependence(lower, lines, memo) | _dependence(step, lines, memo) | _dependence(upper, lines, memo)
        return bounds | {trips if trips is not None else UNBOUNDED}
    return frozenset({_NOT_FOLLOWED})


def _constant(value, lines: ModuleLines):
    """The integer an ``arith.constant`` defines, or None."""
    producer = value.defining_op if value is not None else None
    if producer is None or producer.name != "arith.constant" or id(producer) not in lines.of:
        return None
    m = _CONSTANT.search(lines.header(producer))
    return int(m.group(1)) if m else None


def dram_byte_cost(target: Target) -> float:
    """What one byte of DRAM traffic costs an SM, in the cost model's units: measured where
    ``benchmarks/studies/dram_rate.py`` ran (``dram_byte`` of the target's constants), else from the
    published rate: a wavefront's cost over the DRAM bytes per cycle."""
    weights = target.weights
    if weights.dram_byte > 0:
        return weights.dram_byte
    if target.dram_bytes_per_cycle <= 0:
        return 0.0
    return weights.shared_wavefront / target.dram_bytes_per_cycle
