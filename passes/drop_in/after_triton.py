"""Run a function right after the process imports ``triton``, without importing it ourselves.

Why: ``LINEAR_LAYOUTS=1`` must turn the plugin on in every Python process of a program, the
worker processes that torch.compile (Inductor) starts to compile Triton kernels included, but
a process that never imports triton (a data loader, a shell tool) must pay nothing, and we may
not import triton before the program does (importing it first would change the program's
import order and cost every process a second).  So the package's start-up hook
(``linear_layouts-startup.pth``, installed into site-packages with the package) imports
``linear_layouts`` only when ``LINEAR_LAYOUTS`` is set, and ``linear_layouts`` asks this module
to turn the plugin on once triton is there::

    call_after_triton_import(turn_on)   # triton imported already: turn_on() now
                                        # not yet: turn_on() right after ``import triton`` ends

The mechanism is an import-system finder (:class:`_AfterTritonFinder`, first on
``sys.meta_path``) that answers only for the top-level name ``triton``: it asks the other
finders for triton's own spec and wraps its loader, so triton's ``__init__`` runs exactly as
without us and the callbacks run after it, once.  Then the finder takes itself out.

A callback that raises is reported on stderr in one line and never breaks the program's
``import triton``.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from typing import Callable

_callbacks: list[Callable[[], None]] = []
_lock = threading.Lock()


def call_after_triton_import(callback: Callable[[], None]) -> None:
    """``callback()`` now if triton is imported, else right after the process imports it."""
    if "triton" in sys.modules:
        _run_reporting_errors(callback)
        return
    with _lock:
        _callbacks.append(callback)
        if not any(isinstance(finder, _AfterTritonFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _AfterTritonFinder())


def waiting_callbacks() -> int:
    """How many callbacks wait for triton's import (0 once it happened)."""
    return len(_callbacks)


def _run_reporting_errors(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception as error:   # the program's import of triton must not fail because of us
        print(f"linear-layouts: the plugin stays off in this process: {type(error).__name__}: {error}",
              file=sys.stderr)


def _run_waiting_callbacks() -> None:
    with _lock:
        waiting, _callbacks[:] = list(_callbacks), []
    for callback in waiting:
        _run_reporting_errors(callback)


class _ThenCallbacks(importlib.abc.Loader):
    """triton's own loader, then the waiting callbacks."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self.loader   # triton keeps its own loader
        self.loader.exec_module(module)
        _run_waiting_callbacks()

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _AfterTritonFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of the spec the other finders give ``triton``."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        _remove_finders()
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenCallbacks(spec.loader)
                return spec
        return None


def _remove_finders() -> None:
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _AfterTritonFinder)]
