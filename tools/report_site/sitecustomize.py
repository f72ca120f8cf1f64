"""Put first on ``PYTHONPATH`` by ``python -m linear_layouts report`` for the processes the
program starts (multiprocessing's spawned workers, subprocesses): when such a process imports
``triton``, ``linear_layouts`` is imported right after it, and with ``LINEAR_LAYOUTS=report``
(set by the command) it records that process's kernels into the same run; the command writes
the report, once.  A process that never imports triton pays nothing.  The ``sitecustomize`` this
one hides, if any, still runs."""

import importlib
import importlib.abc
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


class _ThenLinearLayouts(importlib.abc.Loader):
    """triton's own loader, then ``import linear_layouts``."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self.loader   # triton keeps its own loader
        self.loader.exec_module(module)
        try:
            import linear_layouts  # noqa: F401  (LINEAR_LAYOUTS=report: recording starts)
        except Exception as error:   # recording must never break the program
            print(f"linear-layouts report: this process is not recorded: {error}", file=sys.stderr)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _AfterTriton(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenLinearLayouts(spec.loader)
                return spec
        return None


def _chain() -> None:
    """Run the ``sitecustomize`` that this one shadows on ``sys.path``."""
    ours = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if ours is not None:
            sys.modules["sitecustomize"] = ours


_chain()
if os.environ.get("LINEAR_LAYOUTS", "").strip().lower() == "report" and "triton" not in sys.modules:
    sys.meta_path.insert(0, _AfterTriton())
