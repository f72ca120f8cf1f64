"""The one place the package reads the environment: the plugin's settings, typed and checked.

The environment is how a setting reaches every process of a program: the worker processes
torch.compile starts, multiprocessing's spawned workers, subprocesses.  Each of them reads it
when it imports ``linear_layouts`` (the package's start-up hook imports it in every Python
process where ``LINEAR_LAYOUTS`` is set; see ``passes.drop_in.after_triton``).  No other module
of the package reads or writes ``os.environ`` (``test_import_graph.py`` checks it): the
variables of other programs that we need (Triton's and Inductor's cache directories,
``PYTHONPATH`` for a child) go through :func:`variable` and :func:`set_variable` here too.

``LINEAR_LAYOUTS``:

======================  =================================================================================
unset, ``""``, ``0``    off (also ``off``, ``false``)
``1``                   ``enable()`` (also ``on``, ``true``, ``linear``)
``legacy``              ``enable("legacy")``: our lowering of the plans Triton made before linear layouts
``report``              record every kernel for ``python -m linear_layouts report``
======================  =================================================================================

``LINEAR_LAYOUTS_OPTIONS``: ``enable()``'s keyword arguments as a JSON object, e.g.
``{"only": "shuffle,shared", "remarks": true}``.  ``enable()`` writes both variables itself
(and ``disable()`` puts back what was there), so that a process started after ``enable()``
compiles its kernels as the process that started it does.

**Settings.**  Some of ``enable()``'s options are settings of the whole process, read where they
are used rather than built into the pipeline (``enable_options.SETTINGS``: ``in_place``,
``stock_gate``, ``round_scratch``, ``strict_check``, ``island_cache``, ``island_cache_dir``,
``stats_dir``).  :func:`settings` gives them typed (:class:`Settings`), each from the first of:

1. ``enable()``'s keyword in this process (:func:`use_given_settings`);
2. the variable that spelt it before it was an option (``LINEAR_LAYOUTS_STOCK_GATE=off`` ...:
   ``EnableOption.variable``), still read for the scripts and suites written for them;
3. its field in ``LINEAR_LAYOUTS_OPTIONS`` (``{"stock_gate": false}``);
4. its default.

A value that is not one of the setting's is a :class:`SettingError` naming where it came from,
the value and what is expected.  ``lowering/`` cannot import this module, nor can a pass (they
never import the drop-in): the settings lowering reads and the passes' alike are read through ``lowering.settings.current()``, whose source this
module installs when it is imported (``import linear_layouts`` imports it).

This module imports nothing of Triton or of the plugin: a process that reads the environment
and never imports triton pays a dictionary lookup.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional

from . import enable_options
from ...lowering import settings as lowering_settings

VARIABLE = "LINEAR_LAYOUTS"
OPTIONS_VARIABLE = "LINEAR_LAYOUTS_OPTIONS"

OFF_VALUES = ("", "0", "off", "false")
ON_VALUES = ("1", "on", "true")      # the default mode, linear


class SettingError(ValueError):
    """A value of ``LINEAR_LAYOUTS``, ``LINEAR_LAYOUTS_OPTIONS`` or a setting we cannot read."""


def requested_mode(environ: Mapping[str, str] = os.environ) -> Optional[str]:
    """``None`` (off), ``"linear"`` for the words that mean on, else the word itself, lower case
    (``"legacy"``, ``"report"``; ``passes.drop_in.hook`` checks it against the modes it knows)."""
    value = environ.get(VARIABLE, "").strip().lower()
    if value in OFF_VALUES:
        return None
    return "linear" if value in ON_VALUES else value


def mode_problem(mode: Optional[str]) -> Optional[str]:
    """What is wrong with a mode :func:`requested_mode` gave (None: nothing).  Only a word other
    than the default's and ``report`` costs the import of the modes (``passes.options``)."""
    if mode is None or mode == "linear" or mode == "report":
        return None
    from ..options import Mode

    modes = [m.value for m in Mode]
    if mode in modes:
        return None
    return f"{VARIABLE}={mode!r}: expected 1, {', '.join(modes)} or report (0 or unset: off)"


def requested_options(environ: Mapping[str, str] = os.environ) -> dict:
    """``enable()``'s keyword arguments from ``LINEAR_LAYOUTS_OPTIONS`` ({} when unset)."""
    text = environ.get(OPTIONS_VARIABLE, "").strip()
    if not text:
        return {}
    import json

    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingError(f"{OPTIONS_VARIABLE}={text!r}: not JSON ({error.msg})") from None
    if not isinstance(options, dict):
        raise SettingError(f"{OPTIONS_VARIABLE}={text!r}: expected a JSON object of enable()'s keyword arguments")
    return options


# What the two variables were before the first export (None: unset), put back by unexport().
_before_export: Optional[dict] = None


def export(mode: str, options: Mapping[str, object]) -> None:
    """Write ``mode`` and ``options`` (JSON-able values) for processes started from now on, as
    one JSON; the settings ``LINEAR_LAYOUTS_OPTIONS`` held before the first export are kept where
    ``options`` does not name them.  A process recording for ``report`` keeps ``LINEAR_LAYOUTS=report``: its
    children record too."""
    global _before_export
    if os.environ.get(VARIABLE, "").strip().lower() == "report":
        return
    if _before_export is None:
        _before_export = {name: os.environ.get(name) for name in (VARIABLE, OPTIONS_VARIABLE)}
    os.environ[VARIABLE] = mode
    try:     # the settings the environment gave this process stay for its children (enable()'s win)
        before = requested_options({OPTIONS_VARIABLE: _before_export[OPTIONS_VARIABLE] or ""})
    except SettingError:
        before = {}
    options = {**{name: before[name] for name in enable_options.SETTING_NAMES if name in before}, **options}
    if options:
        import json

        os.environ[OPTIONS_VARIABLE] = json.dumps(dict(options), sort_keys=True)
    else:
        os.environ.pop(OPTIONS_VARIABLE, None)


def unexport() -> None:
    """Put back the two variables as they were before the first :func:`export`."""
    global _before_export
    if _before_export is None:
        return
    saved, _before_export = _before_export, None
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# --------------------------------------------------------------------------- the settings

Settings = lowering_settings.Settings   # the typed settings (defined in the lowest layer that reads one)


ON_WORDS = ("1", "on", "true", "yes")
OFF_WORDS = ("0", "off", "false", "no")


def _flag(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ON_WORDS + OFF_WORDS:
        return value.strip().lower() in ON_WORDS
    raise SettingError(f"{where}={value!r}: expected true or false (1, on, true, yes; 0, off, false, no)")


def _optional_flag(value: object, where: str) -> Optional[bool]:
    return None if value is None else _flag(value, where)


def _bytes(value: object, where: str) -> int:
    number = -1
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number < 0:
        raise SettingError(f"{where}={value!r}: expected a number of bytes, 0 or more (0: Triton's rounds only)")
    return number


def _directory(value: object, where: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value if value is None else value.strip()
    raise SettingError(f"{where}={value!r}: expected a directory (a string) or null")


# How each setting's value is read into its type (the same from enable(), the JSON and a variable).
_READERS = {"in_place": _optional_flag, "stock_gate": _flag, "round_scratch": _bytes, "strict_check": _flag,
            "island_cache": _flag, "island_cache_dir": _directory, "stats_dir": _directory}


def read_setting(name: str, value: object, where: Optional[str] = None) -> object:
    """``value`` of setting ``name`` in its type; ``where`` (default: ``name``) names it in the error."""
    return _READERS[name](value, where or name)


# The settings enable() was given in this process (typed), over the environment's.
_given: dict = {}


def use_given_settings(given: Mapping[str, object]) -> None:
    """From now on, :func:`settings` answers ``given`` (typed values, by name) over the
    environment (``passes.drop_in.hook`` passes what ``enable()`` was given; ``{}`` on ``disable()``)."""
    global _given
    _given = dict(given)


def _variable_value(option) -> Optional[str]:
    """The older variable of a setting as set (None: unset; "" is unset but for a directory,
    where it means "none": ``LINEAR_LAYOUTS_CACHE_DIR=`` keeps verdicts in memory only)."""
    value = os.environ.get(option.variable)
    if value is None or (not value.strip() and _READERS[option.name] is not _directory):
        return None
    return value


_last: tuple = (None, None)   # (what settings() read, the Settings it gave)


def settings(given: Optional[Mapping[str, object]] = None) -> Settings:
    """The settings in force in this process, typed (see the module's docstring for where each
    comes from); ``given``: instead of those ``enable()`` was given (``hook.enable`` checks the
    environment's before it switches).  Read anew whenever the environment changed since the
    last call (a test, a benchmark switching a setting for one compile), else the same object.
    A bad value is a :class:`SettingError` naming it."""
    global _last
    given = _given if given is None else given
    json_text = os.environ.get(OPTIONS_VARIABLE)
    variables = tuple(_variable_value(option) for option in enable_options.SETTINGS)
    key = (json_text, variables, tuple(sorted(given.items())))
    if _last[0] == key:
        return _last[1]
    options = requested_options()
    values = {}
    for option, variable_value in zip(enable_options.SETTINGS, variables):
        name = option.name
        if name in given:
            values[name] = given[name]
        elif variable_value is not None:
            values[name] = read_setting(name, variable_value, option.variable)
        elif name in options:
            values[name] = read_setting(name, options[name], f"{OPTIONS_VARIABLE} {name}")
    result = Settings(**values)
    _last = (key, result)
    return result


def set_setting(name: str, value: object) -> None:
    """Set a setting for this process and those it starts: its field of ``LINEAR_LAYOUTS_OPTIONS``
    (``python -m linear_layouts run`` names the directory its program's processes count into)."""
    import json

    read_setting(name, value)
    options = requested_options()
    options[name] = value
    os.environ[OPTIONS_VARIABLE] = json.dumps(options, sort_keys=True)


lowering_settings.read_from(settings)   # every layer reads them through lowering.settings.current()


# --------------------------------------------------------------------------- other variables

def variable(name: str, default: Optional[str] = None) -> Optional[str]:
    """A variable other than the plugin's settings, as this process has it: another program's
    (``TRITON_CACHE_DIR``, ``TORCHINDUCTOR_CACHE_DIR``, ``PYTHONPATH``, pytest-xdist's run id),
    or one of our tools' own (``ll-opt``'s ``LL_OPT_TRACEBACK``, the report's ``LINEAR_LAYOUTS_REPORT_*``)."""
    return os.environ.get(name, default)


def set_variable(name: str, value: Optional[str]) -> None:
    """Set ``name`` for this process and those it starts (None: unset it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def set_default(name: str, value: str) -> None:
    """Set ``name`` unless it is set (``TRITON_DEFAULT_FP_FUSION=1``: Triton 3.9's default, without its notice)."""
    os.environ.setdefault(name, value)
