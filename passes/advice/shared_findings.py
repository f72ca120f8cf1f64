"""The advice on shared-memory buffers a kernel reads and writes through distributed layouts:
the bank conflicts of those accesses, against the best ``gl.SwizzledSharedLayout``.

A buffer counts when every use is a ``ttg.local_alloc`` of a tensor, a ``ttg.local_load`` or a
``ttg.local_store`` of the whole buffer: views, MMAs and asynchronous copies choose their own
layouts, which are not the author's to pick here.
"""

from __future__ import annotations

from ...dialect.attribute_parser import parse_attribute
from ...dialect.linear_layout import LayoutError
from ...lowering.shared_conflicts import access_conflicts
from ...lowering.target import Target
from ..ir.layouts import tensor_layout_of
from ..ir.snapshot import Operation
from .findings import SHARED_ACCESS, Finding, gluon_expression


MMA_READERS = ("ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled", "ttng.async_tma_copy_global_to_local",
               "ttng.async_tma_copy_local_to_global", "ttg.async_copy_global_to_local")
VIEWS = ("ttg.memdesc_index", "ttg.memdesc_subview", "ttg.memdesc_subslice", "ttg.memdesc_trans",
         "ttg.memdesc_reshape", "ttg.memdesc_reinterpret")


def shared_buffer_findings(module, users: dict, target: Target) -> list[tuple[Operation, Finding]]:
    """For each ``ttg.local_alloc`` read and written only by distributed loads and stores of the
    whole buffer, the bank conflicts of those accesses against the best swizzled layout."""
    out = []
    for alloc in module.ops_named("ttg.local_alloc"):
        memdesc = alloc.results[0]
        accesses = _whole_buffer_accesses(alloc, memdesc, users)
        if not accesses:
            continue
        encoding = memdesc.tensor_type.encoding
        shape = tuple(memdesc.tensor_type.shape)
        bits = memdesc.tensor_type.element.logical_bits
        try:
            now = _shared_cost(encoding, shape, bits, accesses, target)
        except (LayoutError, ValueError):
            continue
        best, best_cost = _best_swizzle(encoding, shape, bits, accesses, target)
        if best is None or best_cost >= now[0]:
            continue
        kinds = ", ".join(sorted({name for name, _ in accesses}))
        _, extra_then, accesses_then = _shared_cost(best[1], shape, bits, accesses, target)
        finding = (f"{now[1]} extra wavefronts (bank conflicts) over {now[2]} accesses ({kinds}) of a "
                   f"{'x'.join(map(str, shape))} buffer in {gluon_expression(encoding)} (the suggestion: "
                   f"{extra_then} extra wavefronts over {accesses_then} accesses)")
        out.append((alloc, Finding(alloc.location, alloc.name, SHARED_ACCESS, finding, best[0], now[0] / best_cost,
                                   layout=best[1], changes=(encoding,) + tuple(e for _, e in accesses))))
    return out


def _whole_buffer_accesses(alloc: Operation, memdesc, users: dict) -> list[tuple[str, str]]:
    """(op name, distributed encoding) of every access to the buffer; [] where any use is a view,
    an MMA or an async copy (their layouts are not the author's to pick here) or not distributed."""
    accesses = []
    if alloc.operands and alloc.operands[0].tensor_type is not None:
        accesses.append(("ttg.local_alloc", alloc.operands[0].tensor_type.encoding))
    for user in users.get(id(memdesc), ()):
        if user.name == "ttg.local_load":
            accesses.append((user.name, user.results[0].tensor_type.encoding))
        elif user.name == "ttg.local_store":
            accesses.append((user.name, user.operands[0].tensor_type.encoding))
        elif user.name == "ttg.local_dealloc":
            continue
        else:
            return []
    return accesses if all(encoding for _, encoding in accesses) and len(accesses) >= 1 else []


def _shared_cost(encoding: str, shape: tuple, bits: int, accesses: list, target: Target) -> tuple[int, int, int]:
    """(instructions + extra wavefronts, extra wavefronts, instructions) of the accesses."""
    shared = tensor_layout_of(encoding, shape)
    extra = instructions = 0
    for _, access in accesses:
        _, more, count = access_conflicts(shared, tensor_layout_of(access, shape), bits, target)
        extra += more
        instructions += count
    return instructions + extra, extra, instructions


def _best_swizzle(encoding: str, shape: tuple, bits: int, accesses: list, target: Target):
    """The ``gl.SwizzledSharedLayout`` ((its expression, its attribute), its cost) cheapest for the accesses, over
    vectors of 1 to 16 bytes' worth of elements, phases and repeats up to 8 (the fastest dims in
    the buffer's order kept); (None, inf) where no candidate translates."""
    attr = parse_attribute(encoding)
    order = list(getattr(attr, "order", None) or range(len(shape) - 1, -1, -1))
    best, best_cost = None, float("inf")
    element_bytes = max(bits, 8) // 8
    for vec in (v for v in (1, 2, 4, 8, 16) if v * element_bytes <= 16):
        for per_phase in (1, 2, 4):
            for max_phase in (1, 2, 4, 8):
                text = (f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, maxPhase = {max_phase}, "
                        f"order = {order}}}>")
                try:
                    cost = _shared_cost(text, shape, bits, accesses, target)[0]
                except (LayoutError, ValueError):
                    continue
                if cost < best_cost:
                    best, best_cost = (f"gl.SwizzledSharedLayout({vec}, {per_phase}, {max_phase}, {order})", text), cost
    return best, best_cost
