"""Shared pytest configuration.

``LINEAR_LAYOUTS_STRICT_CHECK=1``: see below.  Tests marked ``@pytest.mark.gpu`` need a GPU; where there is none (CI, the dev machines) they
are skipped with a visible reason.  Tests marked ``@pytest.mark.oracle`` use Triton's C++ through
its Python bindings, always in a subprocess (invalid input aborts Triton's process).
"""

import os
import shutil
import subprocess

import pytest

# Every island a test lowers is executed by the emitted-code simulator (ll-lower-conversions
# does that by default); in the tests a failing island is an error, not a silent hand-back to
# Triton.  Subprocesses (ll-opt, compile workers) inherit it.
os.environ.setdefault("LINEAR_LAYOUTS_STRICT_CHECK", "1")
# ... and simulated every time: no verdict is taken from an earlier compile (passes.islands.verified_islands;
# test_verified_islands.py turns the memory on where it tests it).
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", "off")
# ... and lowered by us: the stock gate (lowering/choosing/fitted_model.py, fitted for triton 3.6 on sm_90) would
# leave most conversions to Triton under 3.6, and these tests are about our islands.  The gate's
# own tests (test_choice.py, test_stock_gate.py) turn it back on.
os.environ.setdefault("LINEAR_LAYOUTS_STOCK_GATE", "off")


def _gpu_reason() -> str | None:
    """None when a GPU is usable, else why not."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return "no GPU: torch is not installed"
    import torch

    if torch.cuda.is_available():
        return None
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0:
        return "an NVIDIA GPU is present but torch cannot use it"
    return "no GPU on this machine"


def pytest_collection_modifyitems(config, items):
    if "release_independent" in (config.option.markexpr or ""):
        # (reading every module's imports costs each xdist worker seconds: only where a run
        # selects by the mark, as make test-compat does)
        _mark_release_independent(items)
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"GPU test skipped: {reason}")
    for item in gpu_items:
        item.add_marker(skip)


def _mark_release_independent(items) -> None:
    """``release_independent``: the test's module reaches nothing of the installed Triton
    (``support.release_independence``); ``make test-compat`` leaves these out, ``make test`` runs them."""
    from support.release_independence import is_release_independent
    marker = pytest.mark.release_independent
    for item in items:
        if is_release_independent(str(item.path)):
            item.add_marker(marker)


@pytest.fixture
def private_triton_cache(tmp_path, monkeypatch):
    """Compiles of this test in a Triton cache of its own (nothing served from another test's
    compile, with or without the plugin), fp fusion on as Triton's default, and the plugin off
    afterwards.  Modules that compile use it with ``pytestmark = pytest.mark.usefixtures(...)``."""
    from linear_layouts.passes.drop_in import hook
    from support.triton_cache import use_private_triton_cache

    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    yield
    hook.disable()


@pytest.fixture
def every_compile_counted(private_triton_cache, monkeypatch):
    """``private_triton_cache``, and every compile runs (``TRITON_ALWAYS_COMPILE``) with the
    plugin's counters at zero before it: for tests that read ``stats()`` after compiling (a
    compile served from the cache would leave them at zero)."""
    from linear_layouts.passes.drop_in import hook

    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    hook.reset_stats()
    yield
    hook.reset_stats()
