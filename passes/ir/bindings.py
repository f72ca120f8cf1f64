"""Triton's MLIR bindings (``triton._C.libtriton``), imported lazily, and the installed release.

Importing triton costs time (``ll-opt --help`` should not pay it), so the bindings are loaded
on first use.  The bindings differ between Triton 3.6 (pybind11) and 3.9 (nanobind); the
modules of :mod:`linear_layouts.passes` that call them keep to what both offer.
"""

from __future__ import annotations

from functools import lru_cache

from ...dialect.conventions import NEWEST, TritonConventions, release_of

_triton_ir = None


def bindings():
    """Triton's ``ir`` bindings module, imported on first use."""
    global _triton_ir
    if _triton_ir is None:
        from triton._C.libtriton import ir
        _triton_ir = ir
    return _triton_ir


def new_context():
    """A fresh MLIR context with every dialect TTGIR may use."""
    ir = bindings()
    ctx = ir.context()
    ir.load_dialects(ctx)
    # TTGIR for NVIDIA (ttng.*) and AMD (amdgpu.*) uses backend dialects; load what exists.
    for backend in ("nvidia", "amd"):
        try:
            module = __import__("triton._C.libtriton." + backend, fromlist=["load_dialects"])
            module.load_dialects(ctx)
        except (ImportError, AttributeError):
            pass
    return ctx


def triton_version() -> str:
    """The installed Triton's version string, e.g. ``3.6.0``."""
    import triton
    return triton.__version__


@lru_cache(maxsize=1)
def installed_triton_version() -> tuple[int, int]:
    """(major, minor) of the installed Triton, e.g. (3, 6); a version string that names no
    release (a source build's) counts as the newest release the plugin knows."""
    return release_of(triton_version()) or NEWEST.release


@lru_cache(maxsize=1)
def installed_conventions() -> TritonConventions:
    """The installed release's conventions, the one value every pass hands to the dialect and
    the lowering where Triton releases differ (see :mod:`linear_layouts.dialect.conventions`)."""
    return TritonConventions(installed_triton_version())


def op_names(module) -> list[str]:
    """The name of every op of a Triton module handle, in walk order (no print of the module)."""
    names: list[str] = []
    module.walk(lambda op: names.append(op.get_name()))
    return names
