"""Helpers shared by the benchmark scripts (run as ``python benchmarks/<script>.py``, which puts
``benchmarks/`` first on the path, so ``import harness.<module>`` needs nothing more).

The scripts measure the installed ``linear_layouts``: from a clone, ``make`` (or
``pip install -e .``); on a machine without network (the GPU machine), the wheel built from
the checkout (``python -m pip wheel --no-deps --wheel-dir dist .``), then
``python3 -m pip install --no-deps --force-reinstall dist/linear_layouts-*.whl``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from math import exp, log

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(BENCHMARKS)
INSTALL_HINT = ("linear_layouts is not installed in this Python: from a clone run `make` or `pip install -e .`; "
                "on a machine without network, build the wheel elsewhere (`python -m pip wheel --no-deps "
                "--wheel-dir dist .`) and `python3 -m pip install --no-deps dist/linear_layouts-*.whl`")


def scratch_directory(prefix: str) -> str:
    """A fresh temporary directory, removed when this process exits (not before: gluon.jit reads
    a kernel's source from its file whenever it compiles, and Triton's cache lives as long as the
    process).  A forked child that exits leaves it to the process that made it."""
    path = tempfile.mkdtemp(prefix=prefix)
    maker = os.getpid()
    atexit.register(lambda: os.getpid() == maker and shutil.rmtree(path, ignore_errors=True))
    return path


def require_package() -> None:
    """``import linear_layouts`` (the installed package), or exit with one line saying how to install it."""
    try:
        import linear_layouts  # noqa: F401
    except ImportError as error:
        if getattr(error, "name", None) not in ("linear_layouts", None):
            raise                      # the package is there; something it imports is not
        raise SystemExit(f"{os.path.basename(sys.argv[0]) or 'benchmarks'}: {INSTALL_HINT}") from None


def module_command(path: str) -> tuple[list[str], str]:
    """How to start ``path`` (a script of ``benchmarks/`` or a module of ``harness/``) in a fresh
    Python process: ``(argv, cwd)``.  A ``harness`` module runs as ``python -m harness.<name>``
    from ``benchmarks/`` (so its own ``import harness...`` works); any other file by its path."""
    path = os.path.abspath(path)
    if os.path.dirname(path) == os.path.join(BENCHMARKS, "harness"):
        return [sys.executable, "-m", "harness." + os.path.splitext(os.path.basename(path))[0]], BENCHMARKS
    return [sys.executable, path], os.getcwd()


def geomean(values) -> float:
    """Geometric mean of the positive values (NaN if there are none)."""
    values = [v for v in values if v and v > 0]
    return exp(sum(log(v) for v in values) / len(values)) if values else float("nan")


def save_chart(fig, path: str, dpi: int = 120) -> None:
    """Save a matplotlib chart as a PNG of at most 128 colours: a bar chart has a few dozen, and
    the palette makes the file about a third of matplotlib's RGBA (``benchmarks/results`` stays
    under its size limit, ``test_regenerate_results.LIMIT_BYTES``).  Pillow comes with matplotlib."""
    from PIL import Image
    fig.savefig(path, dpi=dpi)
    with Image.open(path) as picture:
        palette = picture.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    palette.save(path, optimize=True)


def publish(text: str, out: str = "") -> None:
    """Print a script's report, and write it to ``out`` as well when one is given (the end of
    most report-writing scripts' ``main``); the file ends with one newline whether ``text`` does
    or not; its folder is made where it does not exist yet."""
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    print(text)
