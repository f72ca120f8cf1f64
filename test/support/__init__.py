"""Helpers shared by the unit tests (``test/unit``), so that no test module imports another.
On the path through ``[tool.pytest.ini_options] pythonpath`` in pyproject.toml."""

from pathlib import Path

# The repository's root (test/support/__init__.py -> test/support -> test -> root).
REPO = Path(__file__).resolve().parents[2]
# Scripts that ask Triton's C++ for answers, run in subprocesses by the oracle tests (invalid
# input aborts Triton's process): gluon_oracle.py, memdesc_oracle.py, struct_oracle.py,
# triton_ll_oracle.py.
ORACLES = Path(__file__).resolve().parent
