"""Puts ``benchmarks/`` on ``sys.path`` for the studies in this folder.

A study runs as ``python benchmarks/studies/<name>.py``, so Python puts this folder first on the
path; its imports of ``harness`` (``harness.checkout``: the package from this checkout) and of
the maintained harnesses (``paper_kernels``, ``kernels``, ``plan_choice``, ...) live one folder up.
``RESULTS`` is where the studies write by default, as the harnesses do.
"""

import os
import sys

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCHMARKS)
RESULTS = os.path.join(BENCHMARKS, "results")

if BENCHMARKS not in sys.path:
    sys.path.insert(1, BENCHMARKS)
TEST = os.path.join(REPO, "test")   # test/support: the random layout and program generators
if TEST not in sys.path:
    sys.path.insert(2, TEST)
