"""What the studies share: reading a run's rows, a mode's ratio over stock in the worse timed
context, the geometric mean, a report's command line, the installed package or one line saying
how to install it, and a report printed and written.

A study imports the installed package and its neighbours here, not ``benchmarks/harness`` (the
scripts' helpers one folder up), so these few lines live beside the studies that read
``benchmarks/results/<run>.json.gz``: ``matrix_use_rule.py``, ``register_file_rule.py``,
``measured_mix_dominance.py``, ``one_warp_choice.py``; ``require_package`` and ``publish`` (as
``harness/common.py`` has them) serve ``floor_first.py``, ``stock_dominance.py`` and
``i1_forwarding.py`` too.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import math
import os
import sys

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
INSTALL_HINT = ("linear_layouts is not installed in this Python: from a clone run `make` or `pip install -e .`; "
                "on a machine without network, build the wheel elsewhere (`python -m pip wheel --no-deps "
                "--wheel-dir dist .`) and `python3 -m pip install --no-deps dist/linear_layouts-*.whl`")


def require_package() -> None:
    """``import linear_layouts`` (the installed package), or exit with one line saying how to install it."""
    try:
        import linear_layouts  # noqa: F401
    except ImportError as error:
        if getattr(error, "name", None) not in ("linear_layouts", None):
            raise                      # the package is there; something it imports is not
        raise SystemExit(f"{os.path.basename(sys.argv[0]) or 'benchmarks'}: {INSTALL_HINT}") from None


def publish(text: str, out: str = "") -> None:
    """Print a report, and write it to ``out`` as well when one is given; the file ends with one
    newline whether ``text`` does or not; its folder is made where it does not exist yet."""
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    print(text)


def rows_of(stem: str) -> list:
    """The rows of ``benchmarks/results/<stem>.json.gz``."""
    with gzip.open(os.path.join(RESULTS, stem + ".json.gz"), "rt") as f:
        return json.load(f)["rows"]


def worst_ratio(row, mode: str, base: str = "stock"):
    """``mode``'s time over ``base``'s in the worse of the two timed contexts (chain, latency), or
    None where either context is missing for either mode."""
    ratios = []
    for context in ("chain", "latency"):
        mine = ((row["modes"].get(mode) or {}).get(context) or {}).get("us")
        theirs = ((row["modes"].get(base) or {}).get(context) or {}).get("us")
        if not mine or not theirs:
            return None
        ratios.append(mine / theirs)
    return max(ratios)


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def write_report(doc: str, report, argv=None) -> int:
    """A study's command line: ``--out FILE`` writes ``report()``'s lines there; they are printed
    either way."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", default="", help="write the report here (default: print it)")
    args = parser.parse_args(argv)
    text = "\n".join(report()) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text, end="")
    return 0


@contextlib.contextmanager
def rules_taken_out(module, *names: str):
    """While the block runs, ``module``'s rules ``names`` (functions of a plan) answer False, as
    if not shipped: a study scores a rule by deciding the same rows with it and without it."""
    shipped = {name: getattr(module, name) for name in names}
    for name in names:
        setattr(module, name, lambda plan: False)
    try:
        yield
    finally:
        for name, rule in shipped.items():
            setattr(module, name, rule)
