"""Translation validation of the islands that replace ``ttg.local_load`` and ``ttg.local_store``.

The same execution as ``island_sim.check_emitted`` (every thread of the CTA, element ids as bit
patterns over as many passes as the width needs, undefined values, races, guards), with the
memdesc's buffer as the other side: a load must read, through the descriptor's base pointer, the
element the buffer's layout puts at every offset and deliver the destination layout's element in
every output field; a store must write the source's elements to exactly the offsets the buffer's
layout names (and, for a subslice view, nothing outside the view).  Split from ``island_sim`` so
that each module holds one checker; the machine and the op semantics are ``island_sim``'s.
"""

from __future__ import annotations

import numpy as np

from ..emit.emit_llvm import IslandSite, memdesc_struct_type
from ..hardware import xor_table
# The checker's internals, shared with the conversion checker: the common set-up and the
# output, struct and guard checks; and the island runner.
from .island_sim import (_check_guards, _check_struct, _CheckSetup, _compare_output, _element_ids,
                         _read_output, _set_up)
from .sim_llvm import _Island
from .sim_machine import SCRATCH_BASE, Machine, Scalar, SimulationError, mask, mix
from ..verify import VerificationResult

def check_emitted_local_load(island_text: str, plan, site: IslandSite, rank: int) -> VerificationResult:
    """Execute an island that replaced a ``ttg.local_load`` (``emit_llvm.emit_local_load_island``)
    for every thread: the memdesc's buffer starts with the element its layout names at every
    offset (stored before the island, so ordered before it), the island must read it through the
    descriptor's base pointer and put the destination layout's element in every output field.

    For a subslice view (``plan.view``) the island runs once per start o of
    ``SubsliceView.checked_starts``, with o in the descriptor's offset fields (as
    ``ttg.memdesc_subslice`` leaves them), and must deliver view element c from buffer
    coordinate ``c xor o``: the island's own arithmetic on the offsets is what is checked, not
    the plan's.  A whole buffer's descriptor has zero offsets (Triton's reads ignore them)."""
    try:
        _check_local_load(island_text, plan, site, rank)
    except SimulationError as error:
        return VerificationResult(False, (str(error),))
    return VerificationResult(True)


def _check_local_load(island_text: str, plan, site: IslandSite, rank: int) -> None:
    order = plan.buffer.out_dim_names
    setup = _set_up(island_text, plan, site, plan.dst, order, "load")
    lines, element, dst_regs, (B, W, L) = setup.lines, setup.element, setup.regs, setup.shape
    offsets = tuple(plan.buffer.pack(b) for b in plan.buffer.bases["offset"])
    buffer_ids = xor_table(offsets).astype(np.uint64)           # element at every offset
    expected = _element_ids(setup.hw, dst_regs)
    value_bits = element.logical_bits
    nbytes = element.storage_bits // 8
    passes = setup.passes
    descriptor_type = memdesc_struct_type(rank)
    view = plan.view
    for start in ([None] if view is None else view.checked_starts()):
        fields = _descriptor_fields(order, start, rank)
        wanted = expected if start is None else expected ^ int(view.element(start))
        try:
            _run_local_load(lines, plan, site, machine_shape=(B, W, L), buffer_ids=buffer_ids, nbytes=nbytes,
                            value_bits=value_bits, passes=passes, fields=fields, descriptor_type=descriptor_type,
                            element=element, dst_count=len(dst_regs), expected=wanted)
        except SimulationError as error:
            if start is None:
                raise
            raise SimulationError(f"view start {list(start)}: {error}") from None


def _descriptor_fields(order, start, rank: int) -> list[int]:
    """The offset fields of a rank-``rank`` memdesc descriptor holding the view start ``start``
    (given in the buffer's out-dim order ``order``: field 1 + d is dim d's), as
    ``ttg.memdesc_subslice`` leaves them; zeros for a whole buffer (``start`` None)."""
    fields = [0] * rank
    if start is not None:
        if len(order) != rank:
            raise SimulationError(f"a view with dims {order} accessed through a rank-{rank} descriptor")
        for name, o in zip(order, start):
            fields[int(name[3:])] = o
    return fields


def _run_local_load(lines, plan, site, machine_shape, buffer_ids, nbytes, value_bits, passes, fields,
                    descriptor_type, element, dst_count, expected) -> None:
    """One run of a local load's island with the descriptor offsets ``fields``."""
    B, W, L = machine_shape
    got = np.zeros_like(expected, dtype=np.uint64)
    for p in range(passes):
        machine = Machine(B, W, L, plan.target.vendor, site.threads)
        machine.alloc(len(buffer_ids) * nbytes)
        tags = mix((buffer_ids >> np.uint64(p * value_bits)) & mask(value_bits), value_bits)
        for byte in range(nbytes):   # little-endian, every CTA's copy of the buffer alike
            machine.smem[:, byte::nbytes] = ((tags >> np.uint64(8 * byte)) & np.uint64(0xFF))[None, :]
        machine.written[:] = True    # stored before the island (writer -1, epoch -1: ordered)
        descriptor = [machine.full(64, SCRATCH_BASE)] + [machine.full(32, o) for o in fields]
        island = _Island(lines, machine, descriptor, site)
        island.run()
        if p == 0:
            if island.input_type is None or island.input_type.strip() != descriptor_type:
                raise SimulationError(f"the memdesc is cast to {island.input_type}, Triton's descriptor struct "
                                      f"is {descriptor_type}")
            _check_struct("destination", island.output_type, element, dst_count)
            _check_guards(machine, site)
        _read_output(island, machine, got, value_bits, [p])
    _compare_output(got, expected, machine)


# ----------------------------------------------------------------------------- local stores

def check_emitted_local_store(island_text: str, plan, site: IslandSite, rank: int) -> VerificationResult:
    """Execute an island that replaced a ``ttg.local_store`` (``emit_llvm.emit_local_store_island``)
    for every thread on an empty buffer: afterwards every byte of the buffer must hold the
    element its layout names at that offset (stored, defined, no race).

    For a subslice view (``plan.view``) the island runs once per start o of
    ``SubsliceView.checked_starts``, with o in the descriptor's offset fields: afterwards every
    byte of the view's region (buffer elements at coordinates ``o <= e < o + shape``) must hold
    view element ``e xor o``, and no other byte may have been written.  The island's own
    arithmetic on the offsets is what is checked, not the plan's."""
    try:
        _check_local_store(island_text, plan, site, rank)
    except SimulationError as error:
        return VerificationResult(False, (str(error),))
    return VerificationResult(True)


def _check_local_store(island_text: str, plan, site: IslandSite, rank: int) -> None:
    order = plan.buffer.out_dim_names
    setup = _set_up(island_text, plan, site, plan.src, order, "store")
    lines, element, src_regs, (B, W, L) = setup.lines, setup.element, setup.regs, setup.shape
    src_ids = _element_ids(setup.hw, src_regs)
    wanted = xor_table(tuple(plan.buffer.pack(b) for b in plan.buffer.bases["offset"])).astype(np.uint64)
    view = plan.view
    for start in ([None] if view is None else view.checked_starts()):
        fields = _descriptor_fields(order, start, rank)
        inside = np.ones(len(wanted), dtype=bool)
        expected = wanted
        if start is not None:
            inside = np.asarray(view.contains(wanted.astype(np.int64), start), dtype=bool)
            expected = wanted ^ np.uint64(view.element(start))
        try:
            _run_local_store(lines, plan, site, rank, setup, src_ids, fields, inside, expected)
        except SimulationError as error:
            if start is None:
                raise
            raise SimulationError(f"view start {list(start)}: {error}") from None


def _run_local_store(lines, plan, site, rank, setup: _CheckSetup, src_ids, fields, inside, wanted) -> None:
    """One run of a local store's island with the descriptor offsets ``fields``: the elements
    ``inside`` must end up holding ``wanted``, the others never be written."""
    B, W, L = setup.shape
    element, src_count = setup.element, len(setup.regs)
    value_bits = element.logical_bits
    nbytes = element.storage_bits // 8
    for p in range(setup.passes):
        machine = Machine(B, W, L, plan.target.vendor, site.threads)
        machine.alloc(len(wanted) * nbytes)
        slice_ = (src_ids.astype(np.uint64) >> np.uint64(p * value_bits)) & mask(value_bits)
        tagged = mix(slice_, value_bits)
        source = [Scalar(value_bits, tagged[:, i].copy(), np.ones(machine.T, dtype=bool)) for i in range(src_count)]
        island = _Island(lines, machine, source, site, has_result=False, buffer_rank=rank, buffer_fields=fields)
        island.run()
        if p == 0:
            _check_struct("source", island.input_type, element, src_count)
            if island.buffer_type is None:
                raise SimulationError(f"the island never casts the memdesc {site.buffer} to its descriptor")
            _check_guards(machine, site)
        inside_bytes = np.repeat(inside, nbytes)[None, :]
        missing = ~machine.written & inside_bytes
        if missing.any():
            b, byte = (int(x) for x in np.argwhere(missing)[0])
            raise SimulationError(f"byte {byte} of block {b}'s buffer (element offset {byte // nbytes}) is never stored")
        outside = machine.written & ~inside_bytes
        if outside.any():
            b, byte = (int(x) for x in np.argwhere(outside)[0])
            raise SimulationError(f"byte {byte} of block {b}'s buffer (element offset {byte // nbytes}) is outside "
                                  f"the view, and is stored")
        expected = mix((wanted >> np.uint64(p * value_bits)) & mask(value_bits), value_bits)
        stored = np.zeros((B, len(wanted)), dtype=np.uint64)
        for byte in range(nbytes):
            stored |= machine.smem[:, byte::nbytes].astype(np.uint64) << np.uint64(8 * byte)
        wrong = (stored != (expected & mask(nbytes * 8))[None, :]) & inside[None, :]
        if wrong.any():
            b, offset = (int(x) for x in np.argwhere(wrong)[0])
            raise SimulationError(f"{int(wrong.sum())} buffer elements hold the wrong value; first: block {b} "
                                  f"offset {offset}")
