"""Pipeline strings, MLIR style: passes separated by commas, options in braces separated by
spaces, optionally wrapped in ``builtin.module(...)``::

    ll-attach-layouts,ll-classify-conversions{report=true}

:func:`parse_pipeline` turns one into pass instances (the names come from :mod:`.registry`),
:func:`pipeline_text` writes them back.
"""

from __future__ import annotations

import dataclasses

from .framework import ModulePass
from .options import OptionError


class PipelineError(ValueError):
    """A pipeline string names an unknown pass or option, or is malformed."""


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
    from .registry import registered_passes   # every pass module: only where a pipeline is named

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
        try:
            instance = cls(**kwargs)   # a pass reads typed options into their types (passes.options)
        except OptionError as error:
            raise PipelineError(f"pass '{name}': {error}") from None
        problem = instance.check_options()
        if problem:
            raise PipelineError(f"pass '{name}': {problem}")
        pipeline.append(instance)
    return pipeline


def pipeline_text(pipeline: list[ModulePass]) -> str:
    return ",".join(p.pipeline_text() for p in pipeline)
