"""Registers as a hard limit of ``ll-assign-layouts``: an assignment may not make the data a loop
carries need more registers than the hardware gives a thread, where Triton's own layouts need no
more than that.

A layout decides how many elements of a tensor each thread holds, and a loop's iteration
arguments are all live at once at its back edge, with those of the loops around it.  Past the
per-thread limit (``Target.registers_per_thread``: 255 32-bit registers on NVIDIA, 512 VGPRs and
AGPRs together on AMD CDNA, 256 VGPRs on RDNA) the compiler spills to local memory, which costs
far more than any conversion an assignment saves.

**A lower bound, so the rule only rejects what surely spills.**  Counting every tensor value live
at a point would overstate badly: Triton's splats, broadcasts, ranges and pointer tensors are
mostly not held element by element (ptxas folds a splat to one register and rebuilds addresses
from a base and offsets); such a count gives Triton's own matmuls several times the limit, and
they do not spill (docs/layout-assignment.md, 'What the model rests on').  So only what a thread must hold counts: the data
the loops carry (iteration arguments that are not pointers), each value as its distinct elements
per thread (the layout's register bases that are not zero: a copy within a thread is free) times
its bits over 32 (16- and 8-bit elements may share a register; booleans count as bits).
Everything else (addresses, loads in flight, temporaries) only adds to the true need, so an
assignment whose count exceeds the limit surely spills.  Where Triton's layouts exceed it too, the
kernel spills anyway and nothing is rejected.

Worked example (sm_90, 4 warps): a loop carrying a 128x128 f32 accumulator in
``blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1]}>`` holds
128 x 128 / 128 threads = 128 registers per thread.  Carried instead in a layout whose warp
bases are all zero (every warp holds the whole tile, as a layout replicated across warps does)
it holds 128 x 128 / 32 lanes = 512 per thread: over 255, so an assignment choosing that keeps
Triton's layouts, and the remark says how many registers and where.
"""

from __future__ import annotations

from typing import Optional

from ...lowering.target import Target
from .layout_graph import LayoutGraph
from ..ir.layouts import tensor_layout_of
from ..ir.snapshot import Operation, Value, ops_under

LOOPS = ("scf.for", "scf.while")


def value_registers(encoding: Optional[str], value: Value) -> float:
    """32-bit registers a thread needs at least for ``value`` in ``encoding`` (0 for what is
    not a distributed tensor, and for pointers): distinct elements per thread x bits / 32."""
    tensor_type = value.tensor_type
    if encoding is None or tensor_type is None or tensor_type.element_type.startswith("!tt.ptr"):
        return 0.0
    layout = tensor_layout_of(encoding, tuple(tensor_type.shape))
    if not layout.has_in_dim("register"):
        return 0.0
    distinct = 1 << sum(1 for basis in layout.bases["register"] if any(basis))
    return distinct * tensor_type.element.logical_bits / 32.0


def carried_values(loop: Operation) -> list[Value]:
    """The values ``loop`` carries from one trip to the next: an ``scf.for``'s iteration
    arguments (its body's arguments after the induction variable), an ``scf.while``'s
    arguments of its first region."""
    if not loop.regions or not loop.regions[0].blocks:
        return []
    arguments = loop.regions[0].blocks[0].arguments
    return list(arguments[1:] if loop.name == "scf.for" else arguments)


def peak_registers(graph: LayoutGraph, keys: list[str]) -> tuple[float, Optional[Operation]]:
    """The most registers per thread the data carried by a loop and the loops around it needs
    under the assignment ``keys`` (module docstring), and that loop (None: no loop carries data)."""
    peak, where = 0.0, None
    own: dict[int, float] = {}
    for op in ops_under(graph.function):
        if op.name not in LOOPS:
            continue
        own[id(op)] = sum(value_registers(graph.value_encoding(v, keys), v) for v in carried_values(op))
        total, parent = own[id(op)], op.parent_op
        while parent is not None:
            total += own.get(id(parent), 0.0)
            parent = parent.parent_op
        if total > peak:
            peak, where = total, op
    return peak, where


def register_overflow(graph: LayoutGraph, keys: list[str], target: Target) -> Optional[str]:
    """Why the assignment ``keys`` surely spills where Triton's layouts do not, or None (also
    where the target's limit is unknown)."""
    limit = target.registers_per_thread
    if limit <= 0:
        return None
    peak, where = peak_registers(graph, keys)
    if peak <= limit:
        return None
    stock_peak, _ = peak_registers(graph, graph.stock_keys())
    if stock_peak > limit:
        return None
    return (f"the data its loop at {where.location} carries needs at least {peak:.0f} registers per thread, "
            f"over {target.name}'s {limit} (with Triton's layouts {stock_peak:.0f}): it would spill")
