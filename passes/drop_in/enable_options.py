"""``enable()``'s options, each declared once: its name, default, type, what it does, and how to
give it through the environment.

Everything else is derived from :data:`ENABLE_OPTIONS`: the signature ``help(linear_layouts.enable)``
shows (:func:`signature`), its docstring's list (:func:`docstring`), the table of options in
docs/using-enable.md (:func:`markdown_table`; a test checks the page against it), the names
``LINEAR_LAYOUTS_OPTIONS`` may hold, and the answer to a misspelt name (:func:`unknown_names_problem`:
the valid names, close matches first).  The values are read into their types in one place too,
``passes.drop_in.plugin_config.config_from`` (``passes.options``).

A new option is an entry of :data:`ENABLE_OPTIONS` and its reading into its type in
``config_from`` (``passes.drop_in.hook.enable`` hands every option on by name); the docs' table is then
regenerated with :func:`markdown_table` (``test_enable_options.py`` says when it is stale).

Like ``passes.drop_in.environment`` this module imports nothing of Triton or of the plugin:
``import linear_layouts`` builds ``enable()``'s signature from it and must cost next to nothing.

Example: ``enable(remark=True)`` is answered ``unknown option 'remark' (did you mean remarks?
valid options: ...)``, as ``enable(remarks="yes")`` is answered ``expected True or False``.
"""

from __future__ import annotations

import difflib
import inspect
import json
import textwrap
from dataclasses import dataclass
from typing import Iterable, Optional

MODE_VARIABLE = "LINEAR_LAYOUTS"
OPTIONS_VARIABLE = "LINEAR_LAYOUTS_OPTIONS"


@dataclass(frozen=True)
class EnableOption:
    """One option of ``enable()``.  ``example``: a value other than the default, as the
    environment spells it (the table's last column); ``annotation``: its type as ``help()``
    shows it."""

    name: str
    default: object
    annotation: str
    does: str
    example: object

    @property
    def environment(self) -> str:
        """How a process that does not call ``enable()`` gets this option (every process of a
        program reads the environment, ``passes.drop_in.environment``)."""
        if self.name == "mode":
            return f"{MODE_VARIABLE}={self.example}"
        return f"{OPTIONS_VARIABLE}='{json.dumps({self.name: self.example})}'"


ENABLE_OPTIONS = (
    EnableOption("mode", "linear", "str", "`linear`: our layout engine; `legacy`: Triton as it was before linear "
                 "layouts, for comparisons", "legacy"),
    EnableOption("only", None, "str | Sequence[Method] | None",
                 "the lowerings we own, e.g. `\"shuffle,shared\"` (as `ll-lower-conversions{only=...}`); "
                 "add `local_load,local_store,local_alloc` for the shared-memory ops (opt-in)", "shuffle,shared"),
    EnableOption("report", False, "bool", "print one line per conversion (its scope and element width)", True),
    EnableOption("remarks", False, "bool", "say on stderr why each conversion was left to Triton", True),
    EnableOption("pipeline", None, "str | None", "replace the whole pipeline (an `ll-opt -p` string)",
                 "ll-lower-conversions"),
    EnableOption("verify", "emitted", "str",
                 "`emitted`: every island is executed by our simulator before it is used; `plan`: the plan "
                 "verifier only (cheaper compiles)", "plan"),
    EnableOption("assign_layouts", False, "bool",
                 "first re-choose each kernel's layouts by modelled cost (`ll-assign-layouts`; opt-in)", True),
    EnableOption("resolve_auto_layouts", True, "bool",
                 "give a Gluon kernel's automatic layouts (`gl.AutoLayout()`, `gl.CoalescedLayout()`) concrete "
                 "ones by modelled cost; `False` leaves them to Triton's own resolution", False),
    EnableOption("apply_advice", False, "bool",
                 "compile each Gluon kernel with the report's layout advice applied (opt-in)", True),
    EnableOption("advice_findings", None, "str | Sequence[str] | None",
                 "with `apply_advice`: apply only the findings of these keys, as the report names them",
                 "tt.store#0:global-access"),
)

NAMES = tuple(option.name for option in ENABLE_OPTIONS)
DEFAULTS = {option.name: option.default for option in ENABLE_OPTIONS}


def signature() -> inspect.Signature:
    """``enable()``'s signature: ``mode`` first (positional or keyword), every other option a
    keyword with its default."""
    params = [inspect.Parameter(o.name, inspect.Parameter.POSITIONAL_OR_KEYWORD if o.name == "mode"
                                else inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=o.annotation)
              for o in ENABLE_OPTIONS]
    return inspect.Signature(params)


def docstring(first_line: str) -> str:
    """``first_line``, then every option with its default and what it does."""
    lines = [first_line, "", "Options (each also settable from the environment; docs/using-enable.md):", ""]
    for o in ENABLE_OPTIONS:
        lines.append(textwrap.fill(f"{o.name}={o.default!r}: {o.does.replace('`', '')}", 96,
                                   subsequent_indent="    "))
    lines += ["", "A misspelt option or a bad value is a PluginError naming the valid ones."]
    return "\n".join(lines)


def markdown_table() -> str:
    """The table of options in docs/using-enable.md."""
    rows = ["| option | default | what it does | from the environment |", "|---|---|---|---|"]
    for o in ENABLE_OPTIONS:
        rows.append(f"| `{o.name}` | `{o.default!r}` | {o.does} | `{o.environment}` |")
    return "\n".join(rows)


def unknown_names_problem(given: Iterable[str], where: str = "enable()") -> Optional[str]:
    """What is wrong with the option names ``given`` (None: all are options): each unknown one,
    with the closest valid names first, then all of them."""
    unknown = [name for name in given if name not in NAMES]
    if not unknown:
        return None
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, NAMES, n=3, cutoff=0.6)
        parts.append(f"unknown option {name!r}" + (f" (did you mean {' or '.join(close)}?)" if close else ""))
    return f"{where}: {'; '.join(parts)}; valid options: {', '.join(NAMES)}"
