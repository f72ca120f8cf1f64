"""A small pass framework over :mod:`linear_layouts.passes.ir` modules, in the style of xDSL.

A pass is a frozen dataclass: its class attributes ``name`` (kebab-case, as used in pipeline
strings) and ``description`` (one line, for ``ll-opt --list-passes``), its dataclass fields are
its options, with types (bool, int, float, str) and defaults::

    @register_pass
    @dataclass(frozen=True)
    class ClassifyConversions(ModulePass):
        name = "ll-classify-conversions"
        description = "Attach ll.scope to every ttg.convert_layout"
        report: bool = False

        def apply(self, module, context): ...

Pipelines are MLIR-style strings: passes separated by commas, options in braces separated by
spaces, optionally wrapped in ``builtin.module(...)``::

    ll-attach-layouts,ll-classify-conversions{report=true}

A pass that cannot do its job raises :class:`PassFailure` naming the op; :func:`run_pipeline`
turns that into a diagnostic ``file:line:col: error: [pass] message`` and stops the pipeline.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Optional, TextIO

from .ir import IRError, Module, Operation


class PipelineError(ValueError):
    """A pipeline string names an unknown pass or option, or is malformed."""


class PassFailure(Exception):
    """Raised by a pass when it cannot transform ``op``: the pipeline stops with a diagnostic."""

    def __init__(self, op: Optional[Operation], message: str):
        super().__init__(message)
        self.op = op
        self.message = message


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
    target: Optional[str] = None  # the driver's target (ll-opt --target): passes that plan for a target use it

    def report(self, line: str) -> None:
        print(line, file=self.report_stream)


PASS_REGISTRY: dict[str, type[ModulePass]] = {}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make ``cls`` available in pipeline strings under ``cls.name``."""
    if not cls.name or cls.name != cls.name.lower() or " " in cls.name:
        raise ValueError(f"pass class {cls.__name__} needs a kebab-case name, got '{cls.name}'")
    if cls.name in PASS_REGISTRY and PASS_REGISTRY[cls.name] is not cls:
        raise ValueError(f"two passes are named '{cls.name}'")
    PASS_REGISTRY[cls.name] = cls
    return cls


def registered_passes() -> dict[str, type[ModulePass]]:
    from . import library  # noqa: F401  (registers the project's passes on import)
    return dict(sorted(PASS_REGISTRY.items()))


# --------------------------------------------------------------------------- pipeline strings

def _format_option(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _convert_option(pass_cls: type[ModulePass], option: dataclasses.Field, text: str):
    kind = option.type if isinstance(option.type, type) else {"bool": bool, "int": int, "float": float,
                                                              "str": str}.get(str(option.type), str)
    if kind is bool:
        if text.lower() in ("true", "1", "on"):
            return True
        if text.lower() in ("false", "0", "off"):
            return False
        raise PipelineError(f"option '{option.name}' of pass '{pass_cls.name}' expects true or false, got '{text}'")
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            raise PipelineError(f"option '{option.name}' of pass '{pass_cls.name}' expects "
                                f"{'an integer' if kind is int else 'a number'}, got '{text}'") from None
    return text


def _split_passes(text: str) -> list[str]:
    """Split on commas outside braces and parentheses; check that brackets balance."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '{ch}' at column {i + 1} of pipeline '{text}'")
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise PipelineError(f"unclosed brace or parenthesis in pipeline '{text}'")
    items.append(text[start:])
    return [item.strip() for item in items]


def parse_pipeline(text: str) -> list[ModulePass]:
    """``"a,b{opt=1 flag=true}"`` -> [A(), B(opt=1, flag=True)]; raises :class:`PipelineError`."""
    passes_by_name = registered_passes()
    text = text.strip()
    for wrapper in ("builtin.module(", "any("):
        if text.startswith(wrapper) and text.endswith(")"):
            text = text[len(wrapper):-1].strip()
    if not text:
        return []
    pipeline = []
    for item in _split_passes(text):
        if not item:
            raise PipelineError(f"empty pass name in pipeline '{text}'")
        name, _, rest = item.partition("{")
        name = name.strip()
        if name not in passes_by_name:
            known = ", ".join(passes_by_name)
            raise PipelineError(f"unknown pass '{name}' (known passes: {known})")
        cls = passes_by_name[name]
        kwargs = {}
        if rest:
            if not rest.rstrip().endswith("}"):
                raise PipelineError(f"options of pass '{name}' must end with '}}': '{item}'")
            fields = {f.name: f for f in cls.options()}
            for assignment in rest.rstrip()[:-1].split():
                key, eq, value = assignment.partition("=")
                if key not in fields:
                    valid = ", ".join(fields) or "none"
                    raise PipelineError(f"pass '{name}' has no option '{key}' (its options: {valid})")
                if key in kwargs:
                    raise PipelineError(f"option '{key}' of pass '{name}' is given twice: '{item}'")
                if not eq:
                    # a bare flag, as in MLIR: `{report}` means report=true
                    if _convert_option(cls, fields[key], "true") is not True:
                        raise PipelineError(f"option '{key}' of pass '{name}' needs a value")
                    value = "true"
                kwargs[key] = _convert_option(cls, fields[key], value)
        instance = cls(**kwargs)
        problem = instance.check_options()
        if problem:
            raise PipelineError(f"pass '{name}': {problem}")
        pipeline.append(instance)
    return pipeline


def pipeline_text(pipeline: list[ModulePass]) -> str:
    return ",".join(p.pipeline_text() for p in pipeline)


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
