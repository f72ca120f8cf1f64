"""What the environment asks of the plugin: ``LINEAR_LAYOUTS`` and ``LINEAR_LAYOUTS_OPTIONS``.

The environment is how a setting reaches every process of a program: the worker processes
torch.compile starts, multiprocessing's spawned workers, subprocesses.  Each of them reads it
when it imports ``linear_layouts`` (the package's start-up hook imports it in every Python
process where ``LINEAR_LAYOUTS`` is set; see ``passes.drop_in.after_triton``).

``LINEAR_LAYOUTS``:

======================  ===========================================================
unset, ``""``, ``0``    off (also ``off``, ``false``)
``1``                   ``enable()`` (also ``on``, ``true``, ``linear``)
``legacy``              ``enable("legacy")``: Triton as it was before linear layouts
``report``              record every kernel for ``python -m linear_layouts report``
======================  ===========================================================

``LINEAR_LAYOUTS_OPTIONS``: ``enable()``'s keyword arguments as a JSON object, e.g.
``{"only": "shuffle,shared", "remarks": true}``.  ``enable()`` writes both variables itself
(and ``disable()`` puts back what was there), so that a process started after ``enable()``
compiles its kernels as the process that started it does.

This module imports nothing of Triton or of the plugin: a process that reads the environment
and never imports triton pays a dictionary lookup.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional

VARIABLE = "LINEAR_LAYOUTS"
OPTIONS_VARIABLE = "LINEAR_LAYOUTS_OPTIONS"

OFF_VALUES = ("", "0", "off", "false")
ON_VALUES = ("1", "on", "true")      # the default mode, linear


class SettingError(ValueError):
    """A value of ``LINEAR_LAYOUTS`` or ``LINEAR_LAYOUTS_OPTIONS`` we cannot read."""


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
    """Write ``mode`` and ``options`` (JSON-able values) for processes started from now on.
    A process recording for ``report`` keeps ``LINEAR_LAYOUTS=report``: its children record too."""
    global _before_export
    if os.environ.get(VARIABLE, "").strip().lower() == "report":
        return
    if _before_export is None:
        _before_export = {name: os.environ.get(name) for name in (VARIABLE, OPTIONS_VARIABLE)}
    os.environ[VARIABLE] = mode
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
