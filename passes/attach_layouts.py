"""``ll-attach-layouts``: write every tensor's linear layout into the IR.

* an op result of tensor type gets ``ll.layout = #ttg.linear<...>`` on its op; a shared-memory
  descriptor gets ``#ttg.shared_linear<...>``;
* an op with several results gets an array with one entry per result, in result order, and
  ``unit`` for results that are not tensors (so that entry i always belongs to result i);
* tensor block arguments (function arguments, ``scf.for`` iteration arguments, ...) get theirs
  on the op that owns the block, as ``ll.arg_layouts`` (one entry per argument, ``unit`` for
  non-tensors such as the loop induction variable).

The attributes are linear layouts written in Triton's own syntax, so Triton can parse them back
and they read the same whatever the original encoding was (blocked, mma, slice, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from .framework import ModulePass, PassContext, register_pass
from .ir import Module, Value
from .layouts import layout_attribute


def _entry(value: Value, op) -> str:
    return layout_attribute(value, op) if value.tensor_type is not None else "unit"


@register_pass
@dataclass(frozen=True)
class AttachLayouts(ModulePass):
    name = "ll-attach-layouts"
    description = "Attach ll.layout (#ttg.linear / #ttg.shared_linear) to every tensor result and block argument"

    def apply(self, module: Module, context: PassContext) -> None:
        for op in module.walk():
            results = op.results
            if any(r.tensor_type is not None for r in results):
                if len(results) == 1:
                    module.set_attribute(op, "ll.layout", _entry(results[0], op))
                else:
                    module.set_attribute(op, "ll.layout", "[" + ", ".join(_entry(r, op) for r in results) + "]")
            arguments = op.block_arguments
            if any(a.tensor_type is not None for a in arguments):
                module.set_attribute(op, "ll.arg_layouts", "[" + ", ".join(_entry(a, op) for a in arguments) + "]")
