"""What an op asks of the lowering, read from the IR: a ``ttg.convert_layout`` becomes a
:class:`~linear_layouts.lowering.choosing.lowering_choice.Conversion`, a ``ttg.local_load``,
``ttg.local_store`` or ``ttg.local_alloc`` with a source a
:class:`~linear_layouts.lowering.choosing.lowering_choice.LocalAccess`; or the reason it cannot
be asked at all (a layout we cannot read, an element type the emitter does not know, a buffer
our islands do not address, a module whose warp size is not the target's).

Any producer of a memdesc will do (an allocation, ``ttg.memdesc_index``, a
``ttg.memdesc_subslice`` view, a loop's block argument): Triton (3.6 and 3.9) reads a memdesc
from its type and its descriptor struct only, ``(base pointer, one i32 offset per dim)``.  For
a whole-buffer type it accesses the element at ``L^-1(c)`` and ignores the offsets (zero by
construction); for a subslice view type (``!ttg.memdesc<32x8xf64, ..., 32x16>``) it reads the
offsets o, the view's start in its allocation, and accesses ``L^-1(c) xor L^-1(o)``.  Our
islands do the same (``lowering.local_memory``: ``SubsliceView``), so they are right whoever
made the value.  Example: the fp64 mma v2 loop reads ``memdesc_subslice %arg[0, 8]`` of a
loop-carried buffer; its island XORs offset 8 into its addresses when field 2 of the
descriptor has bit 3 set.
"""

from __future__ import annotations

from typing import Optional, Union

from ..dialect.attributes import PaddedSharedEncoding
from ..lowering.choosing.lowering_choice import Conversion, LocalAccess
from ..lowering.emit.emit_llvm import EmitError, island_element_type
from ..lowering.local_memory import LOCAL_ALLOC, LOCAL_LOAD, LOCAL_STORE
from ..lowering.target import Target
from .framework import PassFailure
from .ir.layouts import memdesc_layout, value_layout
from .ir.operations import Value
from .ir.snapshot import Module, Operation

# The op each lowering method replaces.
OP_OF_METHOD = {LOCAL_LOAD: "ttg.local_load", LOCAL_STORE: "ttg.local_store", LOCAL_ALLOC: "ttg.local_alloc"}


def read_conversion(module: Module, op: Operation, target: Target) -> Union[Conversion, str]:
    """The conversion ``op`` (a ``ttg.convert_layout``) asks for, or why it cannot be read."""
    return conversion_between(op.operands[0], op.results[0], module.threads_per_warp, target, op)


def conversion_between(source: Value, result: Value, threads_per_warp: Optional[int], target: Target,
                       op: Optional[Operation] = None) -> Union[Conversion, str]:
    """The conversion from ``source`` to ``result`` (a ``ttg.convert_layout``'s operand and
    result, known by their types) in a module of ``threads_per_warp``, or why it cannot be read."""
    try:
        src, dst = value_layout(source, op), value_layout(result, op)
        element = island_element_type(result.tensor_type.element_type)
    except (PassFailure, EmitError) as error:
        return getattr(error, "message", str(error))
    if result.tensor_type.shape != source.tensor_type.shape:
        return "source and result shapes differ"
    return warp_size_problem(threads_per_warp, target) or \
        Conversion(src, dst, element.logical_bits, target, str(source.tensor_type.encoding or ""),
                   str(result.tensor_type.encoding or ""))


def read_local_access(module: Module, op: Operation, target: Target) -> Union[LocalAccess, str]:
    """The access a ``ttg.local_load`` (the registers are its result), ``ttg.local_store`` or
    ``ttg.local_alloc`` with a source (the registers are its first operand) asks for, or why it
    cannot be read."""
    if op.name == "ttg.local_load":
        registers, memdesc = op.results[0], op.operands[0]
    else:
        registers, memdesc = op.operands[0], (op.operands[1] if op.name == "ttg.local_store" else op.results[0])
        if op.name == "ttg.local_alloc" and len(memdesc.tensor_type.shape) != len(registers.tensor_type.shape):
            return "the allocation's shape differs from its source's"
    try:
        view, problem = memdesc_access(memdesc, op)
        layout, buffer = value_layout(registers, op), value_layout(memdesc, op)
        element = island_element_type(registers.tensor_type.element_type)
    except (PassFailure, EmitError) as error:
        return getattr(error, "message", str(error))
    return problem or warp_size_problem(module.threads_per_warp, target) or \
        LocalAccess(layout, buffer, element.logical_bits, target, view, str(registers.tensor_type.encoding or ""))


def warp_size_problem(threads_per_warp: Optional[int], target: Target) -> str:
    """Why islands for ``target`` cannot go into a module of ``threads_per_warp`` ("" if they can)."""
    if (threads_per_warp or target.warp_size) != target.warp_size:
        return f"the module has {threads_per_warp} threads per warp, {target.name} has {target.warp_size}"
    return ""


def memdesc_access(memdesc, op: Operation) -> tuple[bool, str]:
    """(whether ``memdesc`` is a subslice view, why its local load or store is left to Triton or
    "").  Left to Triton: views with a leading buffer dim, and ``padded_shared`` buffers and
    views.  A ``padded_shared`` layout maps offsets to elements *before* padding: Triton then
    moves offset ``x`` to ``x + (x >> log2 I) * P`` for every interval ``[I:+P]`` (``[16:+4]``:
    element 16 sits at 20; for a view, the sum ``L^-1(c) xor L^-1(o)`` as a whole), which our
    islands do not do."""
    layout = memdesc_layout(memdesc, op)
    padded = isinstance(layout.encoding, PaddedSharedEncoding)
    if layout.view_shape == layout.buffer_shape:
        return False, (f"a padded_shared buffer ({layout.encoding}): our islands do not pad offsets; left to Triton"
                       if padded else "")
    shape = "x".join(map(str, layout.view_shape)) + " of " + "x".join(map(str, layout.buffer_shape))
    if layout.buffers is not None:
        return True, f"a view ({shape}) with a leading buffer dim: left to Triton"
    return True, f"a padded_shared view ({shape}): left to Triton" if padded else ""


def values_joined_at_region_ends(module: Module) -> set[int]:
    """ids of the values that meet another incoming value at a block argument once ``scf``
    becomes ``cf``: what an ``scf.yield`` or ``scf.condition`` hands out of its region, and the
    initial values of an ``scf.for`` or ``scf.while``.  On AMD, Triton's axis analysis (run by
    its conversion to LLVM) forwards an ``unrealized_conversion_cast``'s operand info to its
    result: the island's struct, whose rank is not the tensor's, and joining it with the
    tensor's at the block argument fails an assertion (``AxisInfo::join``: "Mismatched ranks";
    triton 3.6 and 3.9, CDNA and RDNA alike).
    Where the result meets an ordinary op first (an add, a store, a call) the op's own analysis
    starts afresh and nothing fails, so only these uses are left to Triton.

    Example: ``%r = scf.for ... { %c = ttg.convert_layout %s ...; scf.yield %c }`` - %c is
    joined with the loop's initial value at the loop's iteration argument; so is a converted
    ``%init`` in ``scf.for ... iter_args(%acc = %init)`` with what the body yields."""
    joined = set()
    for op in module.walk():
        if op.name in ("scf.yield", "scf.condition", "scf.while"):
            joined.update(id(value) for value in op.operands)
        elif op.name == "scf.for":            # lower bound, upper bound, step, then the initial values
            joined.update(id(value) for value in op.operands[3:])
    return joined
