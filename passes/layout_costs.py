"""What a layout costs a kernel: the cost model of ``ll-assign-layouts``.

All costs are in the units of :attr:`linear_layouts.lowering.cost.PlanCost.weight` (one
conflict-free 32-bit shared access = 1.5, with the target's calibrated constants) per warp, for
one execution; the graph multiplies them by how often the op runs (its loop weight).

* **A conversion** costs what the lowering we would pick costs: the cheapest plan of our planner
  (``lowering.planner.plan_candidates``), 0 when the two layouts are the same linear layout (a
  no-op).  A conversion our planner cannot build (cross-CTA, unsupported widths) is priced as a
  conversion through shared memory of the whole tile twice (a store and a load of every
  register, and two CTA barriers): such a conversion is never made cheaper by adding another.
* **Elementwise work** costs one ALU op per register a thread holds: a layout that replicates
  data (a slice held by every lane) does the same work on more registers.
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

from ..lowering.cost import plan_cost
from ..lowering.cost_weights import weights_for
from ..lowering.planner import plan_candidates
from ..lowering.target import Target
from .layouts import tensor_layout_of
from .types import TensorType

MAX_UNPLANNED_REGISTERS = 1 << 16


def element_bits(tensor_type: TensorType) -> int:
    element = tensor_type.element
    return element.logical_bits


def registers(encoding: str, shape: tuple[int, ...]) -> int:
    """Registers (elements) a thread holds of a tensor of ``shape`` in ``encoding``."""
    return tensor_layout_of(encoding, shape).in_dim_size("register")


@lru_cache(maxsize=8192)
def conversion_cost(src: str, dst: str, shape: tuple[int, ...], bits: int, target: Target) -> float:
    """Cost of converting a tensor of ``shape`` with ``bits``-bit elements from ``src`` to
    ``dst`` (encoding texts): 0 for the same linear layout."""
    src_layout, dst_layout = tensor_layout_of(src, shape), tensor_layout_of(dst, shape)
    if src_layout == dst_layout:
        return 0.0
    try:
        plans, _scope = plan_candidates(src_layout, dst_layout, bits, target)
    except Exception:   # any layout the planner rejects is priced as unplanned below
        plans = []
    if plans:
        return min(plan_cost(plan).weight for plan in plans)
    return unplanned_cost(src_layout.in_dim_size("register"), dst_layout.in_dim_size("register"), target)


def unplanned_cost(src_registers: int, dst_registers: int, target: Target) -> float:
    """A conversion left to Triton: every register stored and loaded once, two CTA barriers."""
    w = weights_for(target.name)
    accesses = min(src_registers + dst_registers, MAX_UNPLANNED_REGISTERS)
    return accesses * (w.shared_access + w.shared_wavefront) + 2 * w.cta_barrier


def elementwise_cost(encoding: str, shape: tuple[int, ...], target: Target) -> float:
    return registers(encoding, shape) * weights_for(target.name).alu_op


@lru_cache(maxsize=4096)
def reduction_cost(encoding: str, shape: tuple[int, ...], axis: int, target: Target) -> float:
    """Cost of ``tt.reduce`` along ``axis`` of a tensor of ``shape`` in ``encoding`` (one operand)."""
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
    cost = in_thread * w.alu_op + lane_rounds * outputs * (w.shuffle + w.alu_op)
    if warps_along > 1:
        cost += outputs * (1 + warps_along) * (w.shared_access + w.shared_wavefront) \
            + 2 * w.cta_barrier + outputs * (warps_along - 1) * w.alu_op
    return cost


# A 32-byte sector of global memory traffic, in the units above.  Estimated, not measured: a
# conflict-free 128-byte shared wavefront costs 0.5, and an H100 moves about six times fewer
# bytes per second through L2 than through shared memory, so 32 bytes cost 0.5 / 4 * 6 = 0.75.
SECTOR_WEIGHT = 0.75
SECTOR_BYTES = 32


def _apply(bases, index: int, rank: int) -> list[int]:
    coords = [0] * rank
    bit = 0
    while index:
        if index & 1:
            coords = [c ^ b for c, b in zip(coords, bases[bit])]
        index >>= 1
        bit += 1
    return coords


@lru_cache(maxsize=4096)
def memory_cost(encoding: str, shape: tuple[int, ...], bits: int, contiguous_dim: int, known_vector: int,
                target: Target) -> float:
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
    run = 1
    for basis in registers:
        if basis[contiguous_dim] == run and all(basis[d] == 0 for d in range(rank) if d != contiguous_dim):
            run *= 2
        else:
            break
    vector = max(1, min(run, known_vector, max(1, 128 // max(bits, 8))))
    element_bytes = max(bits, 8) // 8
    lane_coords = [_apply(lanes, lane, rank) for lane in range(1 << len(lanes))]
    instructions = (1 << len(registers)) // vector
    sectors = 0
    for instruction in range(instructions):
        base = _apply(registers, instruction * vector, rank)
        touched = set()
        for offset in lane_coords:
            coords = [b ^ o for b, o in zip(base, offset)]
            first = coords[contiguous_dim] * element_bytes
            last = first + vector * element_bytes - 1
            rest = tuple(c for d, c in enumerate(coords) if d != contiguous_dim)
            touched.update((rest, s) for s in range(first // SECTOR_BYTES, last // SECTOR_BYTES + 1))
        sectors += len(touched)
    w = weights_for(target.name)
    return instructions * w.shared_access + sectors * SECTOR_WEIGHT
