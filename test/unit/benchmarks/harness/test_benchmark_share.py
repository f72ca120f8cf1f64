"""benchmarks/ stays a small part of the repository: its Python lines against all the repository's
Python lines (as ``git ls-files '*.py' | xargs wc -l`` counts them), both counted without the
third-party sources carried in ``benchmarks/port_corpus/`` (others' code, carried as written).

Our own benchmarks stay at most 20% of our own Python (measured 19.7%): a new benchmark pays for its
lines by folding older code into ``harness/`` or retiring an answered study (docs/studies.md says
how).  The share with the carried sources counted too is reported in the failure message and
held only under a loose ceiling (measured 23.5%)."""

import subprocess

from support import REPO

SHARE_GOAL = 0.20                  # without the carried sources
LOOSE_CEILING_WITH_CARRIED = 0.30  # with them: reported, held loosely
CARRIED = "benchmarks/port_corpus/"


def _python_lines() -> dict[str, int]:
    names = subprocess.run(["git", "-C", str(REPO), "ls-files", "*.py"], check=True, capture_output=True,
                           text=True).stdout.split()
    return {name: (REPO / name).read_bytes().count(b"\n") for name in names if (REPO / name).is_file()}


def benchmark_shares(lines: dict[str, int]) -> tuple[float, float]:
    """(share with the carried sources, share without them)."""
    total = sum(lines.values())
    carried = sum(n for name, n in lines.items() if name.startswith(CARRIED))
    ours = sum(n for name, n in lines.items() if name.startswith("benchmarks/"))
    return ours / total, (ours - carried) / (total - carried)


def test_benchmarks_hold_their_share_of_the_python_lines():
    with_carried, without_carried = benchmark_shares(_python_lines())
    shares = f"benchmarks/: {without_carried:.1%} of our Python, {with_carried:.1%} with {CARRIED} counted"
    assert without_carried <= SHARE_GOAL, shares
    assert with_carried <= LOOSE_CEILING_WITH_CARRIED, shares


def test_the_share_counts_what_it_says():
    lines = {"lowering/a.py": 60, "benchmarks/b.py": 20, f"{CARRIED}c.py": 20}
    assert benchmark_shares(lines) == (0.4, 0.25)
