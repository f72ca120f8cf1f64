"""Put first on ``PYTHONPATH`` by ``python -m linear_layouts report`` for the processes the
program starts (multiprocessing's spawned workers, subprocesses), for a package not installed
from its wheel (which brings a start-up hook that does the same in every process): with
``LINEAR_LAYOUTS=report`` (set by the command) it imports ``linear_layouts``, which records the
process's kernels into the same run once it imports ``triton``; the command writes the report,
once.  A process that never imports triton pays the import of a small package.  The ``sitecustomize`` this
one hides, if any, still runs."""

import importlib
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


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
if os.environ.get("LINEAR_LAYOUTS", "").strip().lower() == "report":
    try:   # a cheap import: recording starts right after the process imports triton (passes/after_triton.py)
        import linear_layouts  # noqa: F401
    except Exception as error:   # recording must never break the program
        print(f"linear-layouts report: this process is not recorded: {error}", file=sys.stderr)
