"""A small pass framework over :mod:`linear_layouts.passes.ir.snapshot` modules, in the style of xDSL.

A pass is a frozen dataclass: its class attributes ``name`` (kebab-case, as used in pipeline
strings) and ``description`` (one line, for ``ll-opt --list-passes``), its dataclass fields are
its options, with types (bool, int, float, str) and defaults::

    @dataclass(frozen=True)
    class ClassifyConversions(ModulePass):
        name = "ll-classify-conversions"
        description = "Attach ll.scope to every ttg.convert_layout"
        report: bool = False

        def apply(self, module, context): ...

The project's passes are listed in :mod:`.registry`; :mod:`.pipeline` reads pipeline strings.
A pass that cannot do its job raises :class:`PassFailure` naming the op; :func:`run_pipeline`
turns that into a diagnostic ``file:line:col: error: [pass] message`` and stops the pipeline.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Optional, TextIO

from ..lowering.choosing.plan_memory import ModulePlans
from ..lowering.target import Target
from .ir.diagnostics import IRError, PassFailure  # noqa: F401  (PassFailure: the passes import it from here)
from .ir.snapshot import Module


def _format_option(value) -> str:
    """An option value as a pipeline string writes it (a typed option's ``str`` is its word:
    ``lowering.words.Word`` enums, ``passes.options.Methods``; a target by its name)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Target):
        return value.name
    return str(value)


@dataclass(frozen=True)
class ModulePass:
    """Base class of every pass.  Subclasses set ``name`` and ``description`` and implement
    :meth:`apply`; their dataclass fields are their options."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def apply(self, module: Module, context: "PassContext") -> None:
        raise NotImplementedError

    def check_options(self) -> Optional[str]:
        """Why the option values are invalid (naming the option), or None.  Called when the
        pipeline is parsed, so a bad value is an error at once, not at the first module."""
        return None

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls))

    def pipeline_text(self) -> str:
        """This pass as it would be written in a pipeline string (non-default options only)."""
        opts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                opts.append(f"{f.name}={_format_option(value)}")
        return self.name + ("{" + " ".join(opts) + "}" if opts else "")


@dataclass
class PassContext:
    """What passes share with their driver: where reports go, and the IR-dump hook."""

    report_stream: TextIO = field(default_factory=lambda: sys.stderr)
    after_pass: Optional[Callable[[ModulePass, Module], None]] = None
    remarks: bool = False  # passes may explain their decisions (ll-opt --remarks)
    target: Optional[Target] = None  # the driver's target (ll-opt --target): passes that plan for a target use it
    # The compile's memory of plans and choices, where its driver asked questions of the module
    # before the passes ran (the drop-in, ``types_first``); None: each pass run keeps its own.
    plans: Optional[ModulePlans] = None

    def report(self, line: str) -> None:
        print(line, file=self.report_stream)


# --------------------------------------------------------------------------- running

def run_pipeline(module: Module, pipeline: list[ModulePass], context: Optional[PassContext] = None) -> Module:
    """Run the passes in order, committing each pass's edits before the next one.  A failure
    raises :class:`IRError` whose message is the diagnostic (with the op's location)."""
    context = context or PassContext()
    for p in pipeline:
        try:
            p.apply(module, context)
            module.commit()
        except PassFailure as failure:
            where = failure.op.location if failure.op is not None else module.filename
            op_name = f" ({failure.op.name})" if failure.op is not None else ""
            raise IRError(f"{where}: error: [{p.name}]{op_name} {failure.message}") from None
        except IRError as error:
            raise IRError(f"{error}\n  (while running pass '{p.name}')") from None
        if context.after_pass is not None:
            context.after_pass(p, module)
    return module
