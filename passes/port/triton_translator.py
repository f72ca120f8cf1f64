"""Triton's own translator, for comparison only (the port never builds on it).

Triton ships a Triton -> Gluon translator for functional testing: one fixed layout for every
tensor (one element a thread, every lane on the last dimension) and a ``convert_layout`` around
every broadcast, reduction and dot.  Its module is ``triton.tools.triton_to_gluon_translater``
in 3.6 and 3.7 (no target argument) and ``triton.tools.triton_to_gluon_translator`` from 3.8
(``target=TranslatorTarget(...)``).  :func:`triton_translation` gives its source, or the reason
it gives none (an exception in the translator, an empty result).
"""

from __future__ import annotations

import importlib


def _translator():
    for name in ("triton.tools.triton_to_gluon_translator.translator", "triton.tools.triton_to_gluon_translater.translator"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def triton_translation(jit_fn, target: str) -> tuple:
    """(source, "") of Triton's translation of ``jit_fn`` for ``target``, or (None, why)."""
    module = _translator()
    if module is None:
        return None, "this Triton has no translator"
    try:
        try:
            from triton.tools.triton_to_gluon_translator.target import TranslatorTarget
            source = module.convert_triton_to_gluon([jit_fn], target=TranslatorTarget(target))
        except ImportError:
            source = module.convert_triton_to_gluon([jit_fn])
    except Exception as error:   # the translator's own failure is the answer
        return None, f"the translator fails: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    if not source or f"def {jit_fn.fn.__name__}" not in source:
        return None, "the translator gives no kernel"
    return source, ""
