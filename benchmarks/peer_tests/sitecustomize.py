"""Run at the start of every Python process of ``benchmarks/triton_language_tests.py``'s test
runs (this folder is on their ``PYTHONPATH``): pytest's, pytest-xdist's workers and the
processes the tests start themselves (``multiprocessing`` spawns, subprocesses).  With
``LL_PEER_MODE`` set it imports ``linear_layouts`` and, in plugin mode, enables it
(``peer_pytest_plugin.process_start``); without it, nothing.

A ``sitecustomize`` of the Python installation, which this one hides, is run after it.
"""

import importlib.machinery
import importlib.util
import os
import sys


def _run_hidden_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    _run_hidden_sitecustomize()
except Exception as _error:  # the installation's own hook must not stop the run
    sys.stderr.write(f"ll-peer: the installation's sitecustomize failed: {_error}\n")

if os.environ.get("LL_PEER_MODE", "").strip():
    import peer_pytest_plugin

    peer_pytest_plugin.process_start("site")
