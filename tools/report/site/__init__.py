"""A folder put first on ``PYTHONPATH`` by ``python -m linear_layouts report`` (its
``sitecustomize`` runs in the program's child processes); a package so that it is installed, and
so that other start-up files can share :func:`run_shadowed_sitecustomize`."""

import importlib
import os
import sys


def run_shadowed_sitecustomize(folder: str) -> None:
    """Run the ``sitecustomize`` that the one in ``folder`` hides on ``sys.path`` (Python imports
    only the first it finds; a distribution's own, Debian's or a virtual environment's, must
    still run)."""
    ours = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != os.path.abspath(folder)]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if ours is not None:
            sys.modules["sitecustomize"] = ours
