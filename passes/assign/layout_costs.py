"""What a layout costs a kernel: the cost model of ``ll-assign-layouts``.

All costs are in the units of :attr:`linear_layouts.lowering.cost.PlanCost.weight` (one
conflict-free 32-bit shared access = 1.5, with the target's calibrated constants) per warp, for
one execution; the graph multiplies them by how often the op runs (its loop weight).

* **A conversion** costs what the lowering we would pick costs: the cheapest plan of our planner
  (``lowering.planner.plan_candidates``), 0 when the two layouts are the same linear layout (a
  no-op).  A conversion our planner cannot build (cross-CTA, unsupported widths) is priced as a
  conversion through shared memory of the whole tile twice (a store and a load of every
  register, and two CTA barriers): such a conversion is never made cheaper by adding another.
* **Elementwise work** costs one ALU op per distinct register a thread holds: a layout that
  replicates data across lanes or warps (a slice held by every lane) does the same work in more
  threads; copies within one thread's registers are computed once (:func:`registers`).
* **A reduction** combines within a thread, then across lanes with one shuffle round per lane
  bit along the axis, then across warps through shared memory (a store, a CTA barrier, a load
  per warp along the axis, a second barrier): counted from the operand's linear layout.

Example (64x128 f32, 4 warps): a reduction along axis 1 of ``blocked<{sizePerThread = [1, 4],
threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>``: 16 registers, 4 along the axis (3 in-thread
combines per output, 4 outputs), 3 lane bits along the axis (3 shuffle rounds x 4 outputs),
no warp along it: 12 ALU + 12 shuffles + 12 ALU.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...lowering.cost import plan_cost
from ...lowering.cost_weights import weights_for
from ...lowering.planner import plan_candidates
from ...lowering.target import Target, Vendor
from ..ir.layouts import tensor_layout_of
from .pipe_time import Work
from ..ir.types import TensorType

MAX_UNPLANNED_REGISTERS = 1 << 16


def element_bits(tensor_type: TensorType) -> int:
    element = tensor_type.element
    return element.logical_bits


def registers(encoding: str, shape: tuple[int, ...]) -> int:
    """Distinct registers (elements) a thread holds of a tensor of ``shape`` in ``encoding``.

    A layout whose tile is larger than the tensor along some dimension (``sizePerThread = [1, 4]``
    on a ``32x1`` column of row offsets) repeats each element in registers of its own.  Triton 3.6
    keeps those copies in the linear layout (zero register bases), later releases drop them; either
    way a thread computes each distinct element once (Triton's elementwise lowering deduplicates
    the copies), so only the distinct ones are counted and the price does not depend on the release.
    Example: ``32x1`` in ``blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32],
    warpsPerCTA = [4, 1]}>``: 8 registers, not 32."""
    layout = tensor_layout_of(encoding, shape)
    return 1 << sum(1 for basis in layout.bases.get("register", ()) if any(basis))


def conversion_cost(src: str, dst: str, shape: tuple[int, ...], bits: int, target: Target) -> float:
    """Cost of converting a tensor of ``shape`` with ``bits``-bit elements from ``src`` to
    ``dst`` (encoding texts): 0 for the same linear layout."""
    return conversion_work(src, dst, shape, bits, target).total


@lru_cache(maxsize=8192)
def conversion_work(src: str, dst: str, shape: tuple[int, ...], bits: int, target: Target) -> Work:
    """:func:`conversion_cost` per pipe: the work of the cheapest plan (the one we would emit)."""
    src_layout, dst_layout = tensor_layout_of(src, shape), tensor_layout_of(dst, shape)
    if src_layout == dst_layout:
        return Work()
    try:
        plans, _scope = plan_candidates(src_layout, dst_layout, bits, target)
    except Exception:   # any layout the planner rejects is priced as unplanned below
        plans = []
    if plans:
        return plan_work(min((plan_cost(plan) for plan in plans), key=lambda cost: cost.weight), target)
    return unplanned_work(src_layout.in_dim_size("register"), dst_layout.in_dim_size("register"), target)


def plan_work(cost, target: Target) -> Work:
    """A plan's counts (``lowering.cost.PlanCost``) per pipe: shuffles and shared accesses with
    their wavefronts on the shared pipe, selects and packs on the ALU, barriers as a wait."""
    w = weights_for(target.name)
    shared = (w.shuffle * cost.shuffles + w.shared_access * (cost.shared_stores + cost.shared_loads)
              + w.shared_wavefront * (cost.store_wavefronts + cost.load_wavefronts))
    alu = w.alu_op * (cost.selects + cost.packs)
    total = cost.weight
    return Work(shared, alu, max(0.0, total - shared - alu), total)


def unplanned_work(src_registers: int, dst_registers: int, target: Target) -> Work:
    """A conversion left to Triton: every register stored and loaded once, two CTA barriers."""
    w = weights_for(target.name)
    accesses = min(src_registers + dst_registers, MAX_UNPLANNED_REGISTERS)
    shared, sync = accesses * (w.shared_access + w.shared_wavefront), 2 * w.cta_barrier
    return Work(shared=shared, sync=sync, total=shared + sync)


def elementwise_work(encoding: str, shape: tuple[int, ...], target: Target) -> Work:
    alu = registers(encoding, shape) * weights_for(target.name).alu_op
    return Work(alu=alu, total=alu)


def reduction_cost(encoding: str, shape: tuple[int, ...], axis: int, target: Target, redux: bool = False,
                   operands: int = 1, combine_ops: int = 1) -> float:
    """Cost of ``tt.reduce`` along ``axis`` of a tensor of ``shape`` in ``encoding`` (one operand).
    ``redux``: the combiner is one Triton lowers with ``redux.sync`` (``layout_rules.combiner_is_redux``)."""
    return reduction_work(encoding, shape, axis, target, redux, operands, combine_ops).total


def uses_redux(lane_rounds: int, target: Target, group_bits: int = 0, partial_warps: bool = False) -> int:
    """How many ``redux.sync`` Triton spends per output to reduce across a warp (0: it shuffles
    instead), for the combiners of ``layout_rules.combiner_is_redux``.  ``lane_rounds``: lane
    bits along the reduced axis; ``group_bits``: lane bits that hold other outputs (neither
    reduced nor copies).  Triton 3.6 uses one where the reduction spans every lane of the warp,
    on NVIDIA sm_80 and later (its ``TargetInfo::warpReduce``).  Later releases
    (``partial_warps``) also reduce part of a warp: at least 4 lanes with no other group in the
    warp, or at least 16 lanes and one other group, with two ``redux.sync`` (one per group, the
    other's lanes given the identity).  Example: i32 row sums of 8x512 in
    ``blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 8]}>``: 8
    ``redux.sync``, where 5 rounds of shuffles and adds would be 40 of each."""
    if not (target.vendor is Vendor.NVIDIA and isinstance(target.triton_arch, int) and target.triton_arch >= 80):
        return 0
    warp_bits = target.warp_size.bit_length() - 1
    if lane_rounds == warp_bits:
        return 1
    if not partial_warps or lane_rounds == 0 or group_bits > 1:
        return 0
    if (1 << lane_rounds) < (16 if group_bits else 4):
        return 0
    return 2 if group_bits else 1


def partial_warp_redux() -> bool:
    """Whether the installed Triton reduces part of a warp with ``redux.sync`` (3.9 and later;
    ``test_pipe_time``'s oracle checks it against Triton's PTX on both releases we support)."""
    from ..ir.bindings import installed_triton_version
    return installed_triton_version() >= (3, 9)


@lru_cache(maxsize=4096)
def reduction_work(encoding: str, shape: tuple[int, ...], axis: int, target: Target, redux: bool = False,
                   operands: int = 1, combine_ops: int = 1) -> Work:
    """:func:`reduction_cost` per pipe: combines on the ALU, shuffles and the cross-warp stage's
    shared accesses on the shared pipe, its two barriers as a wait.  ``operands``: values
    reduced together (argmax: 2, each shuffled and stored); ``combine_ops``: the combiner's ops
    (argmax's compare, tie-break and selects), each run per combine."""
    layout = tensor_layout_of(encoding, shape)
    w = weights_for(target.name)
    dim = layout.out_dim_names[axis] if axis >= 0 else layout.out_dim_names[0]

    def along(in_dim: str) -> int:
        return sum(1 for basis in layout.bases.get(in_dim, []) if basis[layout.out_dim_names.index(dim)] != 0)

    register_bits = len(layout.bases.get("register", []))
    outputs = 1 << (register_bits - along("register"))
    in_thread = (1 << register_bits) - outputs
    lane_rounds = along("lane")
    warps_along = 1 << along("warp")
    combine, move = combine_ops * w.alu_op, operands
    lanes = layout.bases.get("lane", [])
    group_bits = sum(1 for basis in lanes if any(basis)) - lane_rounds
    reduxes = uses_redux(lane_rounds, target, group_bits, partial_warp_redux()) if redux else 0
    if reduxes:                      # redux.sync per output (priced as a shuffle), no combines
        alu, shared = in_thread * combine, reduxes * outputs * w.shuffle
    else:
        alu = (in_thread + lane_rounds * outputs) * combine
        shared = lane_rounds * outputs * w.shuffle * move
    sync = 0.0
    if warps_along > 1:
        # Across warps, as Triton lowers it: every warp stores its partial results (one store
        # per output), a barrier; the CTA's threads share the partials out, each loads its
        # share, combines across the warps along the axis by shuffles (within a warp: never
        # 32 lanes, so never redux) and stores the result; a barrier; every thread loads its
        # outputs.  Example (8 rows of 512, 8 warps along the rows, 256 threads): 8 stores,
        # 64 partials in all, so 1 load, 3 shuffle rounds and 1 store per thread, then 8 loads.
        rank = len(layout.out_dim_names)
        results = 1
        for d, size in enumerate(shape):
            if d != layout.out_dim_names.index(dim) and d < rank:
                results *= size
        threads = 1 << (len(layout.bases.get("lane", [])) + len(layout.bases.get("warp", [])))
        share = max(1, -(-results * warps_along // threads))
        rounds = along("warp")
        shared += ((2 * outputs + 2 * share) * (w.shared_access + w.shared_wavefront) + share * rounds * w.shuffle) * move
        alu += share * rounds * combine
        sync = 2 * w.cta_barrier
    return Work(shared, alu, sync, shared + alu + sync)


# A 32-byte sector of global memory traffic, in the units above.  Estimated, not measured: a
# conflict-free 128-byte shared wavefront costs 0.5, and an H100 moves about six times fewer
# bytes per second through L2 than through shared memory, so 32 bytes cost 0.5 / 4 * 6 = 0.75.
SECTOR_WEIGHT = 0.75
SECTOR_BYTES = 32


def _span(bases, indices: np.ndarray, rank: int) -> np.ndarray:
    """The coordinates of ``indices`` (an array of ints) under the XOR-linear map with these
    bases: one row per index."""
    coords = np.zeros((len(indices), rank), dtype=np.int64)
    for bit, basis in enumerate(bases):
        chosen = ((indices >> bit) & 1).astype(bool)
        coords[chosen] ^= np.asarray(basis, dtype=np.int64)
    return coords


def _sectors_touched(registers, lanes, rank: int, instructions: int, vector: int, contiguous_dim: int,
                     element_bytes: int) -> int:
    """The 32-byte sectors a warp's ``instructions`` accesses touch, summed over instructions
    (each instruction's distinct sectors over its lanes).  An instruction moves ``vector``
    elements along ``contiguous_dim`` from the register index ``instruction * vector``; lane
    ``l`` adds the lane bases' image of ``l`` (XOR).  A sector is named by the coordinates off
    the contiguous dim and the byte offset // 32 along it.

    Example: one instruction, vector 1, f32, lanes along the contiguous dim 0..31: bytes
    0..127, sectors 0..3 of one row: 4."""
    bases = _span(registers, np.arange(instructions, dtype=np.int64) * vector, rank)    # (I, rank)
    offsets = _span(lanes, np.arange(1 << len(lanes), dtype=np.int64), rank)           # (L, rank)
    coords = bases[:, None, :] ^ offsets[None, :, :]                                    # (I, L, rank)
    first = coords[..., contiguous_dim] * element_bytes
    first_sector, last_sector = first // SECTOR_BYTES, (first + vector * element_bytes - 1) // SECTOR_BYTES
    row = np.zeros(first.shape, dtype=np.int64)       # the coordinates off the contiguous dim, as one int
    for d in range(rank):
        if d != contiguous_dim:
            row = row * (int(coords[..., d].max()) + 1) + coords[..., d]
    width = int(last_sector.max()) + 1
    spans = int((last_sector - first_sector).max()) + 1
    keys = np.concatenate([row * width + np.minimum(first_sector + k, last_sector) for k in range(spans)], axis=1)
    keys.sort(axis=1)
    return int(keys.shape[0] + np.count_nonzero(np.diff(keys, axis=1), axis=None))


def access_vector(layout, contiguous_dim: int, known_vector: int, bits: int) -> int:
    """Elements one thread accesses at once: its run of consecutive registers along
    ``contiguous_dim`` (zero, repeated registers left out), at most ``known_vector`` (what the
    addresses' alignment allows) and 16 bytes.  Example: ``sizePerThread = [1, 8]`` f16 with dim 1
    contiguous and 16-byte aligned: 8."""
    rank = len(layout.out_dim_names)
    run = 1
    for basis in (b for b in layout.bases.get("register", ()) if any(b)):
        if basis[contiguous_dim] == run and all(basis[d] == 0 for d in range(rank) if d != contiguous_dim):
            run *= 2
        else:
            break
    return max(1, min(run, known_vector, max(1, 128 // max(bits, 8))))


def memory_cost(encoding: str, shape: tuple[int, ...], bits: int, contiguous_dim: int, known_vector: int,
                target: Target) -> float:
    return memory_work(encoding, shape, bits, contiguous_dim, known_vector, target).total


# An L1 wavefront carries 128 bytes: four 32-byte sectors (the data path shared memory uses too).
SECTORS_PER_WAVEFRONT = 4


@lru_cache(maxsize=4096)
def memory_work(encoding: str, shape: tuple[int, ...], bits: int, contiguous_dim: int, known_vector: int,
                target: Target) -> Work:
    """Cost of one warp's global loads or stores of a tensor in ``encoding``: instructions times
    their issue, plus 32-byte sectors times ``SECTOR_WEIGHT``.

    Addresses are modelled as the stock layout vouches for them: elements consecutive along
    ``contiguous_dim`` (aligned to ``known_vector`` elements), every other index in sectors of
    its own.  A thread's vector is its run of consecutive registers along that dim, at most
    ``known_vector`` and 16 bytes.  Lanes holding copies touch the same sectors.

    Example (128x64 f16 stored from an mma v2 accumulator, 4 warps): 2 consecutive columns per
    register pair (32-bit stores), 4 lanes along a row: 16 bytes of a row per instruction and 8
    rows, 8 sectors for 128 bytes; from ``blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8]}>``:
    16-byte stores, 8 lanes along a row: 4 rows of 128 bytes, 16 sectors for 512 bytes.
    """
    layout = tensor_layout_of(encoding, shape)
    rank = len(layout.out_dim_names)
    # Registers that repeat others (zero bases: Triton 3.6 keeps them for a tile larger than the
    # tensor) write the same addresses again; they are left out so that the price does not
    # depend on the release.
    registers = [basis for basis in layout.bases.get("register", ()) if any(basis)]
    lanes = layout.bases.get("lane", ())
    vector = access_vector(layout, contiguous_dim, known_vector, bits)
    element_bytes = max(bits, 8) // 8
    instructions = (1 << len(registers)) // vector
    sectors = _sectors_touched(registers, lanes, rank, instructions, vector, contiguous_dim, element_bytes)
    w = weights_for(target.name)
    # Per pipe: the instructions and their sectors' L1 wavefronts take the shared pipe; what the
    # data costs beyond L1 is the DRAM floor's (passes/assign/dram_floor.py).
    shared = instructions * w.shared_access + sectors / SECTORS_PER_WAVEFRONT * w.shared_wavefront
    return Work(shared=shared, total=instructions * w.shared_access + sectors * SECTOR_WEIGHT)
