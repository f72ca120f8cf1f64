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


def parse_type(text: str, context):
    """The MLIR type printed as ``text`` (e.g. ``tensor<64x64xi8, #ttg.blocked<{...}>>``), made
    in ``context``, the context of the module it is used in.

    Why a parse: Triton's bindings make a tensor type with a given encoding only from an
    encoding attribute, and give none back from a value; Gluon's Python layouts do
    (``get_gluon_layout_from_tensor``), at the cost of importing Gluon's language (about 20 ms
    on the first compile of a process).  A one-function module parsed in the same context costs
    under a millisecond, and the type it yields is the context's own (types are uniqued per
    context), so ops built with it are of the module's types."""
    import os
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="ll_type_")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write("module {\n  tt.func private @type_of(%%value: %s) {\n    tt.return\n  }\n}\n" % text)
        module = bindings().parse_mlir_module(path, context)
    finally:
        os.unlink(path)
    returns = []
    module.walk(lambda op: returns.append(op) if op.get_name() == "tt.return" else None)
    return returns[0].get_block().arg(0).get_type()
