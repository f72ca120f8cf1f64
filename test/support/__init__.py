"""Helpers shared by the unit tests (``test/unit``), so that no test module imports another.
On the path through ``[tool.pytest.ini_options] pythonpath`` in pyproject.toml."""

from pathlib import Path

# The repository's root (test/support/__init__.py -> test/support -> test -> root).
REPO = Path(__file__).resolve().parents[2]
# Scripts that ask Triton's C++ for answers, run in subprocesses by the oracle tests (invalid
# input aborts Triton's process): gluon_oracle.py, memdesc_oracle.py, struct_oracle.py,
# triton_ll_oracle.py.
ORACLES = Path(__file__).resolve().parent


def cuda_gpu_missing():
    """Why a test that launches kernels cannot run here (None: torch sees a CUDA GPU)."""
    try:
        import torch
    except ImportError:
        return "needs torch and a CUDA GPU (torch is not installed)"
    if not torch.cuda.is_available():
        return "needs a CUDA GPU (none visible to torch)"
    return None
