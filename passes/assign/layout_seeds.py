"""Candidate layouts that no neighbour implies: reduce-friendly and coalesced blocked layouts.

Propagation (:func:`.layout_graph.propose_candidates`) only moves layouts that some op already
has.  Two kinds of layout that Triton's assignment may never have written are worth offering on
their own, derived from an op's key (its warps, lanes and elements per thread stay as many):

* **reduce-friendly**, for a ``tt.reduce`` along axis ``a`` whose warps split that axis: the
  same blocked layout with every warp moved off ``a``, so the reduction ends inside each warp
  (shuffles) with no cross-warp stage through shared memory and its two barriers.  Example,
  a 64x128 sum along axis 1 with ``warpsPerCTA = [1, 4]`` is offered ``warpsPerCTA = [4, 1]``;
* **coalesced**, for a load or store (with ``memory_ops``): the blocked layout Triton's coalescing
  would give its pointers: the contiguous dimension fastest, as many elements per thread as one
  aligned access of at most 16 bytes reads (the pointer analysis's vector width), lanes and then
  warps along the fastest dimensions first.  Whatever the op's own key (an MMA or dot-operand
  layout a Gluon load took from the operand it feeds included): only its numbers of lanes and
  warps are kept.

Both are only candidates: the cost model prices them (the reduction's rounds and cross-warp
stage, the accesses' sectors) against every conversion they would add.
"""

from __future__ import annotations

from dataclasses import replace
from math import prod
from typing import Optional, Sequence

from ...dialect.attribute_parser import parse_attribute
from ...dialect.attributes import BlockedEncoding
from ...dialect.linear_layout import LayoutError
from ..ir.layouts import tensor_layout_of

MAX_ACCESS_BYTES = 16


def blocked_encoding(encoding: str) -> Optional[BlockedEncoding]:
    """The one-CTA ``#ttg.blocked`` attribute ``encoding`` spells, or None for any other layout."""
    try:
        attr = parse_attribute(encoding)
    except LayoutError:
        return None
    return attr if type(attr) is BlockedEncoding and attr.cga is None else None


def _deal(total: int, dims: Sequence[int], room: Sequence[int]) -> list[int]:
    """Split ``total`` (a power of two) over ``dims`` in that order, each taking at most its
    ``room`` (powers of two); what no dim has room for goes to the first."""
    counts = [1] * len(room)
    left = total
    for d in dims:
        take = min(left, max(1, room[d]))
        counts[d] = take
        left //= take
    if dims:
        counts[dims[0]] *= left
    return counts


def reduce_friendly(key: str, shape: Sequence[int], axis: int) -> Optional[str]:
    """``key`` with its warps moved off ``axis`` (None if it is not a one-CTA blocked layout
    of ``shape``'s rank with warps along ``axis``, or the tensor is 1-D)."""
    attr = blocked_encoding(key)
    if attr is None or attr.rank != len(shape) or attr.rank < 2 or attr.warps_per_cta[axis] == 1:
        return None
    others = [d for d in attr.order if d != axis]
    room = [max(1, shape[d] // (attr.size_per_thread[d] * attr.threads_per_warp[d])) for d in range(attr.rank)]
    room[axis] = 1
    warps = _deal(prod(attr.warps_per_cta), others, room)
    return str(replace(attr, warps_per_cta=warps))


def coalesced(key: str, shape: Sequence[int], contiguous_dim: int, vector: int, element_bytes: int) -> Optional[str]:
    """The coalesced blocked layout for accesses to a tensor of ``shape`` whose ``contiguous_dim``
    is contiguous in memory and aligned to ``vector`` elements, with ``key``'s numbers of lanes
    and warps (None if ``key`` is not a one-CTA layout of that rank).

    ``key`` need not be blocked: a load that Gluon's author reached with an MMA or dot-operand
    layout (``gl.convert_layout(gl.load(p), dot_operand)`` with the load's layout automatic) is
    offered the coalesced layout too, its other dims in row-major order.  Example: a 32x128 f16
    tile, dim 1 contiguous and 16-byte aligned, seeded with an ``mma`` layout of 4 warps:
    ``sizePerThread = [1, 8]``, ``threadsPerWarp = [2, 16]``, ``warpsPerCTA = [4, 1]``."""
    if not 0 <= contiguous_dim < len(shape):
        return None
    attr = blocked_encoding(key)
    if attr is not None:
        if attr.rank != len(shape):
            return None
        lane_count, warp_count = prod(attr.threads_per_warp), prod(attr.warps_per_cta)
        order = [contiguous_dim] + [d for d in attr.order if d != contiguous_dim]
    else:
        counts = _lanes_and_warps(key, shape)
        if counts is None:
            return None
        lane_count, warp_count = counts
        order = [contiguous_dim] + [d for d in reversed(range(len(shape))) if d != contiguous_dim]
    rank = len(shape)
    per_thread = [1] * rank
    per_thread[contiguous_dim] = max(1, min(vector, MAX_ACCESS_BYTES // max(1, element_bytes), shape[contiguous_dim]))
    lanes = _deal(lane_count, order, [max(1, shape[d] // per_thread[d]) for d in range(rank)])
    warps = _deal(warp_count, order, [max(1, shape[d] // (per_thread[d] * lanes[d])) for d in range(rank)])
    return str(BlockedEncoding(per_thread, lanes, warps, order))


def shared_tile(key: str, shape: Sequence[int], fastest_dim: int, element_bytes: int) -> Optional[str]:
    """A blocked layout whose threads each hold a 2-D tile: a 16-byte vector along the buffer's
    ``fastest_dim`` and the rest of their elements along the next dim (up to 16 bytes too),
    with ``key``'s numbers of lanes and warps (None where ``key`` is not a one-CTA layout of
    ``shape``, the tensor is 1-D, or a thread holds no more than one vector).

    For a tile read through one buffer and written to another whose elements run along the
    other dim (a transpose through shared memory), each thread then moves whole vectors on both
    sides, where a layout vectorised for one side moves single elements on the other.  Example:
    64x64 f16, 4 warps, read along dim 0: ``sizePerThread = [8, 4]``, ``threadsPerWarp =
    [8, 4]``, ``warpsPerCTA = [1, 4]``, ``order = [0, 1]``: 16-byte reads and 8-byte writes
    into a buffer whose rows run along dim 1, 4 + 8 accesses a thread where ``[8, 1]`` makes
    4 + 32."""
    if len(shape) < 2 or not 0 <= fastest_dim < len(shape):
        return None
    attr = blocked_encoding(key)
    counts = (prod(attr.threads_per_warp), prod(attr.warps_per_cta)) if attr is not None and attr.rank == len(shape) \
        else _lanes_and_warps(key, shape)
    if counts is None:
        return None
    lane_count, warp_count = counts
    vector = MAX_ACCESS_BYTES // max(1, element_bytes)
    per_thread_elements = prod(shape) // (lane_count * warp_count)
    order = [fastest_dim] + [d for d in reversed(range(len(shape))) if d != fastest_dim]
    per_thread = [1] * len(shape)
    per_thread[fastest_dim] = max(1, min(vector, shape[fastest_dim], per_thread_elements))
    other = order[1]
    per_thread[other] = max(1, min(vector, shape[other], per_thread_elements // per_thread[fastest_dim]))
    if per_thread[other] == 1:
        return None
    lanes = _deal(lane_count, order, [max(1, shape[d] // per_thread[d]) for d in range(len(shape))])
    warps = _deal(warp_count, order, [max(1, shape[d] // (per_thread[d] * lanes[d])) for d in range(len(shape))])
    return str(BlockedEncoding(per_thread, lanes, warps, order))


def _lanes_and_warps(key: str, shape: Sequence[int]) -> Optional[tuple[int, int]]:
    """(lanes per warp, warps) of any one-CTA layout ``key`` of a tensor of ``shape`` (None if
    it does not describe such a tensor)."""
    try:
        layout = tensor_layout_of(key, tuple(shape))
        if len(layout.out_dim_names) != len(shape) or layout.bases.get("block"):
            return None
        return layout.in_dim_size("lane"), layout.in_dim_size("warp")
    except (LayoutError, ValueError, KeyError, IndexError):
        return None
