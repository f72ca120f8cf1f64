"""Triton 3.9's ``glir`` stage: a Gluon kernel's IR before any layout is resolved.

From 3.9, a Gluon source compiles through ``glir`` (the module as the front end built it,
automatic layouts included) and then ``ttgir`` (Triton's resolution and passes), where 3.6 goes
to ``ttgir`` at once.  The drop-in resolves automatic layouts in the ``ttgir`` stage under both:

* ``asm["glir"]`` keeps the automatic layouts, ``asm["ttgir"]`` has none left, and the
  resolution was ours;
* a ``.glir`` file (``asm["glir"]`` written out) compiles with ``triton.compile(path)`` through
  the same resolution, so a user can keep and replay the IR of a Gluon kernel;
* under 3.6 a Gluon kernel has no ``glir`` stage, and nothing changes.
"""

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import hook# noqa: E402
from support.gluon_auto_kernels import TARGET, source  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py

AUTO = "auto_encoding"        # how Gluon prints gl.AutoLayout() (#gluon.auto_encoding)


def _has_glir_stage() -> bool:
    stages: dict = {}
    from triton.compiler.compiler import make_backend

    make_backend(TARGET).add_stages(stages, make_backend(TARGET).parse_options({}), _gluon_language())
    return "glir" in stages


def _gluon_language():
    from triton.backends.compiler import Language

    return Language.GLUON


def test_glir_keeps_the_automatic_layouts_and_ttgir_has_ours():
    linear_layouts.enable()
    kernel = triton.compile(source("transpose"), target=TARGET)
    if not _has_glir_stage():
        assert "glir" not in kernel.asm        # 3.6: straight to ttgir
    else:
        assert AUTO in kernel.asm["glir"]
    assert AUTO not in kernel.asm["ttgir"] and "#ttg.blocked" in kernel.asm["ttgir"]
    assert hook.stats().auto_layouts_resolved == 1 and not hook.stats().fallbacks


def test_a_glir_file_compiles_through_our_resolution(tmp_path):
    if not _has_glir_stage():
        pytest.skip(f"triton {triton.__version__} has no glir stage (3.9 added it)")
    linear_layouts.enable()
    written = triton.compile(source("transpose"), target=TARGET)
    path = tmp_path / "transpose.glir"
    path.write_text(written.asm["glir"])
    hook.reset_stats()
    replayed = triton.compile(str(path), target=TARGET)
    assert hook.stats().auto_layouts_resolved == 1 and not hook.stats().fallbacks
    assert AUTO not in replayed.asm["ttgir"]
    assert replayed.asm["ptx"].count("ld.global") == written.asm["ptx"].count("ld.global")
