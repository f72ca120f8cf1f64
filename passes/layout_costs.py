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
