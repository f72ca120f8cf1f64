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
regenerated with :func:`markdown_table` (``test_enable_options.py`` says when it is stale).  A
*setting* (an entry with a ``variable``: it holds for the whole process and is read where it is
used) is instead a field of ``lowering.settings.Settings`` with its reader in
``passes.drop_in.environment`` (``_READERS``), the one module that reads the environment.

Like ``passes.drop_in.environment`` this module imports nothing of Triton or of the plugin:
``import linear_layouts`` builds ``enable()``'s signature from it and must cost next to nothing.

Example: ``enable(remark=True)`` is answered ``unknown option 'remark' (did you mean remarks?
valid options: ...)``, as ``enable(report="yes")`` is answered ``expected True or False``.
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
    # A setting of the whole process (read where it is used, through ``passes.drop_in.environment
    # .settings()``) rather than of the pipeline: the variable that spelt it before it was an option,
    # still read (see ``environment``).  "" for the pipeline's options.
    variable: str = ""
    variable_example: str = ""

    @property
    def is_setting(self) -> bool:
        return bool(self.variable)

    @property
    def environment(self) -> str:
        """How a process that does not call ``enable()`` gets this option (every process of a
        program reads the environment, ``passes.drop_in.environment``)."""
        if self.name == "mode":
            return f"{MODE_VARIABLE}={self.example}"
        return f"{OPTIONS_VARIABLE}='{json.dumps({self.name: self.example})}'"


ENABLE_OPTIONS = (
    EnableOption("mode", "linear", "str", "`linear`: our layout engine; `legacy`: our lowering of the conversion "
                 "plans Triton made before linear layouts, a baseline for comparisons (not stock Triton: that is "
                 "`disable()`; its kernels count as ours in `stats()`)", "legacy"),
    EnableOption("only", None, "str | Sequence[Method] | None",
                 "the lowerings we own, e.g. `\"shuffle,shared\"` (as `ll-lower-conversions{only=...}`); "
                 "add `local_load,local_store,local_alloc` for the shared-memory ops (opt-in)", "shuffle,shared"),
    EnableOption("report", False, "bool", "print one line per conversion (its scope and element width)", True),
    EnableOption("remarks", False, "bool | str", "say on stderr why each conversion was left to Triton, in words; "
                 "`\"detail\"` adds our internals (the cost model's counts by name, the deciding rule's source "
                 "file)", True),
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
    # The settings of the whole process (each read where it is used: environment.settings()).
    EnableOption("in_place", None, "bool | None",
                 "one-round shared-memory islands built as Triton's own ops in Triton's module (`True`), or every "
                 "island spliced as text (`False`); `None`: the release's default (in place under triton 3.6)",
                 False, "LINEAR_LAYOUTS_IN_PLACE", "0"),
    EnableOption("stock_gate", True, "bool",
                 "leave to Triton the conversions the lowering choice gives it (docs/lowering-choice.md); `False`: "
                 "every conversion we can lower is ours (the unit tests' setting)", False,
                 "LINEAR_LAYOUTS_STOCK_GATE", "off"),
    EnableOption("round_scratch", 16384, "int",
                 "the bytes of shared memory a plan may take to convert in fewer rounds than Triton's swizzle "
                 "(`0`: Triton's rounds)", 65536, "LINEAR_LAYOUTS_ROUND_SCRATCH", "65536"),
    EnableOption("strict_check", False, "bool",
                 "an island the simulator rejects is an error instead of a hand-back to Triton (the test suites' "
                 "setting)", True, "LINEAR_LAYOUTS_STRICT_CHECK", "1"),
    EnableOption("island_cache", True, "bool",
                 "remember verified islands across compiles (`False`: every island is simulated anew)", False,
                 "LINEAR_LAYOUTS_CACHE", "off"),
    EnableOption("island_cache_dir", None, "str | None",
                 "where verified islands are remembered (`None`: under Triton's cache directory; `\"\"`: in memory "
                 "only)", "/tmp/ll-verified", "LINEAR_LAYOUTS_CACHE_DIR", "/tmp/ll-verified"),
    EnableOption("stats_dir", None, "str | None",
                 "a directory where every process of the program writes its counts, added up by "
                 "`python -m linear_layouts run` (which sets it)", "/tmp/ll-stats", "LINEAR_LAYOUTS_STATS_DIR",
                 "/tmp/ll-stats"),
)

NAMES = tuple(option.name for option in ENABLE_OPTIONS)
DEFAULTS = {option.name: option.default for option in ENABLE_OPTIONS}
SETTINGS = tuple(option for option in ENABLE_OPTIONS if option.is_setting)
SETTING_NAMES = tuple(option.name for option in SETTINGS)


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
        older = f" (or `{o.variable}={o.variable_example}`)" if o.is_setting else ""
        rows.append(f"| `{o.name}` | `{o.default!r}` | {o.does} | `{o.environment}`{older} |")
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
