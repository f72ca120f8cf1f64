"""``ll-classify-conversions``: how far does each ``ttg.convert_layout`` move data?

Every convert gets ``ll.scope``: "none" (the two layouts are the same linear map: a no-op),
"register" (a renaming inside each thread), "lane" (across lanes of a warp), "warp" (across
warps of a CTA: shared memory and a barrier) or "block" (across CTAs).  The computation is
:func:`linear_layouts.lowering.conversion.minimal_conversion`, the same as Triton's lowering.
With ``report=true`` one line per conversion goes to the report stream (stderr in ll-opt).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialect import LayoutError
from ..lowering.conversion import conversion_scope
from .framework import ModulePass, PassContext, PassFailure
from .ir.snapshot import Module
from .ir.layouts import value_layout


@dataclass(frozen=True)
class ClassifyConversions(ModulePass):
    name = "ll-classify-conversions"
    description = "Attach ll.scope (none/register/lane/warp/block) to every ttg.convert_layout"
    report: bool = False

    def apply(self, module: Module, context: PassContext) -> None:
        converts = module.ops_named("ttg.convert_layout")
        if self.report and not converts:   # a report that says nothing would read as a failure
            context.report(f"{self.name}: 0 conversions (no ttg.convert_layout in this module)")
        for op in converts:
            source, result = op.operands[0], op.results[0]
            src, dst = value_layout(source, op), value_layout(result, op)
            try:
                scope = conversion_scope(src, dst)
            except LayoutError as error:  # e.g. the source does not cover the destination's elements
                raise PassFailure(op, f"cannot compute the conversion: {error}") from None
            module.set_attribute(op, "ll.scope", f'"{scope}"')
            if self.report:
                bits = result.tensor_type.element.logical_bits
                context.report(f"{op.location}: {module.short_type(source.type)} -> "
                               f"{module.short_type(result.type)}: scope={scope} bits={bits}")
