"""linear_layouts.passes: the IR adapter over Triton's bindings, the pass framework and the passes.

    from linear_layouts.passes import parse_module, parse_pipeline, run_pipeline
    module = parse_module(open("kernel.ttgir").read(), "kernel.ttgir")
    run_pipeline(module, parse_pipeline("ll-attach-layouts,ll-classify-conversions"))
    print(module.print())

Only :mod:`.ir` touches ``triton._C``; Triton is imported lazily, when a module is parsed.
"""

from .framework import (ModulePass, PassContext, PassFailure, PipelineError, parse_pipeline, register_pass,
                        registered_passes, run_pipeline)
from .ir import IRError, Module, Operation, TensorType, Value, parse_module

__all__ = ["IRError", "Module", "ModulePass", "Operation", "PassContext", "PassFailure", "PipelineError",
           "TensorType", "Value", "parse_module", "parse_pipeline", "register_pass", "registered_passes",
           "run_pipeline"]
