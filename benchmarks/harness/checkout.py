"""Helpers shared by the benchmark scripts (run as ``python benchmarks/<script>.py``).

The GPU machine has Triton and torch but not our package installed, so every script imports
``linear_layouts`` from the checkout it lives in, through a symlink in a temporary directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
from math import exp, log

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(BENCHMARKS)


def make_package_importable() -> None:
    """``import linear_layouts`` from this checkout, without installing anything."""
    try:
        import linear_layouts  # noqa: F401
        if os.path.realpath(os.path.dirname(linear_layouts.__file__)) == os.path.realpath(REPO_ROOT):
            return
    except ImportError:
        pass
    test_dir = os.path.join(REPO_ROOT, "test")   # test/support: the random program generators
    if test_dir not in sys.path:
        sys.path.insert(1, test_dir)
    link_dir = tempfile.mkdtemp(prefix="ll_pkg_")
    os.symlink(REPO_ROOT, os.path.join(link_dir, "linear_layouts"))
    sys.path.insert(0, link_dir)
    for name in [m for m in sys.modules if m == "linear_layouts" or m.startswith("linear_layouts.")]:
        del sys.modules[name]


def geomean(values) -> float:
    """Geometric mean of the positive values (NaN if there are none)."""
    values = [v for v in values if v and v > 0]
    return exp(sum(log(v) for v in values) / len(values)) if values else float("nan")


def publish(text: str, out: str = "") -> None:
    """Print a script's report, and write it to ``out`` as well when one is given (the end of
    most report-writing scripts' ``main``); the file ends with one newline whether ``text`` does
    or not."""
    if out:
        with open(out, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    print(text)
