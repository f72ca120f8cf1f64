"""``enable()``'s options are declared once (``passes.drop_in.enable_options``): its signature, its
docstring, the table of docs/using-enable.md and the names ``LINEAR_LAYOUTS_OPTIONS`` takes all
come from that one definition, and a misspelt name is answered with the valid ones."""

import inspect
import json
import re

import pytest
from support import REPO

import linear_layouts
from linear_layouts.passes.drop_in import enable_options, hook
from linear_layouts.passes.drop_in.enable_options import ENABLE_OPTIONS


@pytest.mark.parametrize("function", [linear_layouts.enable, linear_layouts.enabled, hook.enable],
                         ids=["enable", "enabled", "hook.enable"])
def test_the_signature_is_every_option_with_its_default(function):
    """help() used to show ``enable(mode='linear', **options)`` and "see passes.drop_in.hook.enable"."""
    parameters = inspect.signature(function).parameters
    assert [(p.name, p.default) for p in parameters.values()] == [(o.name, o.default) for o in ENABLE_OPTIONS]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(parameters.values())[1:])


def test_the_docstring_lists_every_option():
    doc = inspect.getdoc(linear_layouts.enable)
    assert "passes.drop_in.hook" not in doc
    for option in ENABLE_OPTIONS:
        assert re.search(rf"^{option.name}={re.escape(repr(option.default))}: ", doc, re.M), option.name


def test_the_docs_table_is_the_definitions():
    page = (REPO / "docs" / "using-enable.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- options table:.*?-->\n(.*?)\n<!-- end of options table -->", page, re.S)
    assert table, "docs/using-enable.md has lost its options table"
    assert table.group(1) == enable_options.markdown_table(), \
        "regenerate the table: python -c 'from linear_layouts.passes.drop_in.enable_options import markdown_table; " \
        "print(markdown_table())'"


@pytest.mark.parametrize("given, phrase", [
    ({"remark": True}, "unknown option 'remark' (did you mean remarks?)"),
    ({"asign_layouts": True}, "unknown option 'asign_layouts' (did you mean assign_layouts?)"),
    ({"colour": "red"}, "unknown option 'colour'; valid options: mode, only, report, remarks"),
])
def test_a_misspelt_option_is_answered_with_the_valid_ones(given, phrase):
    """It used to be a bare TypeError ("unexpected keyword argument 'remark'")."""
    before = hook.active_config()
    with pytest.raises(hook.PluginError) as error:
        linear_layouts.enable(**given)
    assert phrase in str(error.value)
    assert str(error.value).endswith("valid options: " + ", ".join(enable_options.NAMES))
    assert hook.active_config() is before


@pytest.mark.parametrize("option", ENABLE_OPTIONS, ids=lambda o: o.name)
def test_each_environment_spelling_names_the_option(option):
    variable, _, value = option.environment.partition("=")
    if option.name == "mode":
        assert variable == "LINEAR_LAYOUTS" and value == option.example
        return
    assert variable == "LINEAR_LAYOUTS_OPTIONS"
    assert json.loads(value.strip("'")) == {option.name: option.example}
    assert enable_options.unknown_names_problem([option.name]) is None
