"""``ll-attach-layouts``: write every tensor's linear layout into the IR.

* an op result of tensor type gets ``ll.layout = #ttg.linear<...>`` on its op; a shared-memory
  descriptor gets ``#ttg.shared_linear<...>``;
* an op with several results gets an array with one entry per result, in result order, and
  ``unit`` for results that are not tensors (so that entry i always belongs to result i);
* tensor block arguments (function arguments, ``scf.for`` iteration arguments, ...) get theirs
  on the op that owns the block, as ``ll.arg_layouts`` (one entry per argument, ``unit`` for
  non-tensors such as the loop induction variable).  The arguments of a ``ttg.warp_specialize``'s
  partitions get none: they are the values it captures, whose layouts are on their own ops.

A shared-memory descriptor's entry is the layout of **one buffer** as Triton translates the
type (see ``dialect/memdesc.py``): a view (``memdesc_subslice``) gets the layout of the buffer it
looks into.  A pipelined allocation (``!ttg.memdesc<3x64x64xbf16, #s, ...>`` with a rank-2
``#s``) also gets its buffer count, ``ll.buffers = 3`` (``ll.buffers = [unit, 3]`` /
``ll.arg_buffers`` beside an array of layouts), whatever the count: with 3 buffers no linear
layout covers the whole allocation, and one spelling serves every count.

The attributes are linear layouts written in Triton's own syntax, so Triton can parse them back
and they read the same whatever the original encoding was (blocked, mma, slice, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from .framework import ModulePass, PassContext, PassFailure
from .ir.snapshot import Module, Value
from .ir.layouts import layout_attribute, memdesc_layout
from .ir.module_lines import WARP_PARTITIONS


def _entry(value: Value, op, context: PassContext, what: str) -> str:
    """The value's layout attribute; ``unit`` for a non-tensor, and for a tensor whose layout we
    cannot translate (with a remark naming it: one such value never fails the whole file).  A
    tensor with no encoding at all means the module is not TTGIR: that stays an error."""
    if value.tensor_type is None:
        return "unit"
    if value.tensor_type.encoding is None:
        return layout_attribute(value, op)
    try:
        return layout_attribute(value, op)
    except PassFailure as failure:
        context.report(f"{op.location}: remark: [ll-attach-layouts] no layout for {what}: {failure.message}")
        return "unit"


def _buffers(value: Value, op) -> str:
    """The buffer count of a pipelined allocation as attribute text, ``unit`` for any other value."""
    tensor_type = value.tensor_type
    if tensor_type is None or not tensor_type.is_shared or tensor_type.encoding is None:
        return "unit"
    try:
        buffers = memdesc_layout(value, op).buffers
    except PassFailure:
        return "unit"  # _entry has reported it
    return "unit" if buffers is None else str(buffers)


def _set_buffers(module: Module, op, name: str, values, single: bool) -> None:
    entries = [_buffers(v, op) for v in values]
    if all(e == "unit" for e in entries):
        return
    module.set_attribute(op, name, entries[0] if single else "[" + ", ".join(entries) + "]")


@dataclass(frozen=True)
class AttachLayouts(ModulePass):
    name = "ll-attach-layouts"
    description = "Attach ll.layout (#ttg.linear / #ttg.shared_linear) to every tensor result and block argument"

    def apply(self, module: Module, context: PassContext) -> None:
        for op in module.walk():
            results = op.results
            if any(r.tensor_type is not None for r in results):
                entries = [_entry(r, op, context, f"result {i}") for i, r in enumerate(results)]
                if len(results) == 1:
                    if entries[0] != "unit":
                        module.set_attribute(op, "ll.layout", entries[0])
                else:
                    module.set_attribute(op, "ll.layout", "[" + ", ".join(entries) + "]")
                _set_buffers(module, op, "ll.buffers", results, single=len(results) == 1)
            # A ttg.warp_specialize's partitions op has no results and so no attribute of its own;
            # its regions' arguments are the values the warp_specialize captures (its operands,
            # one to one, of the same types), whose layouts are on the ops that define them.
            arguments = op.block_arguments if op.name != WARP_PARTITIONS else []
            if any(a.tensor_type is not None for a in arguments):
                entries = [_entry(a, op, context, f"block argument {i}") for i, a in enumerate(arguments)]
                module.set_attribute(op, "ll.arg_layouts", "[" + ", ".join(entries) + "]")
                _set_buffers(module, op, "ll.arg_buffers", arguments, single=False)
