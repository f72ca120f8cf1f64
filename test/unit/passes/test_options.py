"""Each option's allowed values come from one enum (``passes.options``), and every entry point
(``enable()``, a pipeline string, ``lower_text``) reads them through it: the same error, listing
the enum's members, wherever a bad value comes in; and no list of those words anywhere else."""

from __future__ import annotations

import ast
import re

import pytest

from support import REPO  # noqa: E402

from linear_layouts.lowering.plan import Method
from linear_layouts.passes.drop_in.hook import PluginError, enable
from linear_layouts.passes.lower_conversions import LowerConversions, lower_text
from linear_layouts.passes.options import CandidateRanks, Methods, Mode, OptionError, VerifyLevel
from linear_layouts.passes.pipeline import PipelineError, parse_pipeline

OPTIONS = {"mode": Mode, "verify": VerifyLevel, "only": Method}


def _known(message: str) -> list[str]:
    """The values an error message lists as known."""
    m = re.search(r"\(known: ([^)]*)\)", message)
    assert m, message
    return m.group(1).split(", ")


@pytest.mark.parametrize("option", OPTIONS)
def test_every_entry_point_lists_the_enum(option):
    expected = [member.value for member in OPTIONS[option]]
    with pytest.raises(PluginError) as from_enable:
        enable(**({option: "bogus"}))
    with pytest.raises(PipelineError) as from_pipeline:
        parse_pipeline(f"ll-lower-conversions{{{option}=bogus}}")
    with pytest.raises(OptionError) as from_python:
        lower_text("", **{option: "bogus"})
    for error in (from_enable, from_pipeline, from_python):
        assert _known(str(error.value)) == expected


def test_options_are_typed_after_parsing():
    (lower,) = parse_pipeline("ll-lower-conversions{only=shuffle,shared mode=legacy verify=plan target=cuda:90}")
    assert lower.mode is Mode.LEGACY and lower.verify is VerifyLevel.PLAN
    assert isinstance(lower.only, Methods) and tuple(lower.only) == (Method.SHUFFLE, Method.SHARED)
    assert lower.target.name == "sm_90" and isinstance(lower.candidate_for, CandidateRanks)
    # ... and written back as the words they were given in
    assert lower.pipeline_text() == "ll-lower-conversions{only=shuffle,shared target=sm_90 mode=legacy verify=plan}"
    assert LowerConversions(only="shuffle", mode="legacy") == LowerConversions(only=[Method.SHUFFLE], mode=Mode.LEGACY)


def test_enable_keeps_pass_objects():
    from linear_layouts.passes.drop_in import hook
    try:
        config = enable("legacy", only="shuffle", verify="plan", remarks=True)
        (lower,) = config.passes
        assert lower.mode is Mode.LEGACY and tuple(lower.only) == (Method.SHUFFLE,)
        assert config.pipeline == lower.pipeline_text()
        assert not config.owns_local_memory_ops
        assert enable(only="shuffle,local_load").owns_local_memory_ops
    finally:
        hook.disable()


def _word_lists(tree: ast.AST):
    """Every tuple, list or set literal made only of strings, as a set of its strings."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            yield node.lineno, {e.value for e in node.elts}


def test_no_other_list_of_an_options_values():
    """Outside ``passes/options.py`` (and the enums themselves), no literal lists two or more of
    an option's values: such a list is a second place that says what is allowed."""
    offenders = []
    for package in ("passes", "tools", "lowering"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path.name == "options.py":
                continue
            for line, words in _word_lists(ast.parse(path.read_text(encoding="utf-8"))):
                for option, kind in OPTIONS.items():
                    if len(words & {m.value for m in kind}) >= 2:
                        offenders.append(f"{package}/{path.name}:{line} lists {option} values {sorted(words)}")
    assert offenders == []
