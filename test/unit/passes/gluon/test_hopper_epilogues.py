"""Gluon's automatic layouts in the epilogues of Hopper-class kernels, compiled on the CPU
(``support.hopper_gluon_kernels``: each kernel in its expert form, every layout written, and
its automatic form, ``gl.AutoLayout()`` wherever the hardware does not force a layout).

* ``convert_layout(acc, gl.AutoLayout())`` after ``warpgroup_mma`` or an ``mma_v2`` dot is where
  the author asks us to choose: ours resolves it, with no fallback, where Triton's resolution
  fails ("Failed to infer return type");
* the automatic wgmma epilogue stores 16-byte vectors, as the expert form does;
* automatic values that meet the accumulator directly (no conversion written) compile as
  stock compiles them;
* a transposing epilogue through shared memory loads at least as wide as the expert's;
* the remarks and the count of conversions describe the module handed on, after Triton's
  canonicalizer folded a conversion into a ``local_load``."""

import re
import warnings

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from support.hopper_gluon_kernels import KERNELS, source, target  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


def _compile(name: str, auto: bool, ours: bool = True):
    """The kernel compiled for its target; with ours: the warnings it gave and its remarks."""
    if ours:
        linear_layouts.enable(resolve_auto_layouts=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernel = triton.compile(source(name, auto), target=target(name))
    finally:
        if ours:
            linear_layouts.disable()
    return kernel, [str(w.message) for w in caught if "linear-layouts" in str(w.message)]


def _count(ptx: str, instruction: str) -> int:
    """Instructions of ``ptx`` that begin with ``instruction`` (``st.global.v4.b32`` counts as
    ``st.global.v4``; ``ld.shared.v4.b16`` is no ``ld.shared.b16``)."""
    return len(re.findall(re.escape(instruction) + r"(?!\w)", ptx))


def _resolved_alone(kernel) -> None:
    stats = linear_layouts.stats()
    assert stats.auto_layouts_resolved == 1 and stats.fallbacks == []
    assert "#gluon" not in kernel.asm["ttgir"]


@pytest.mark.parametrize("name", ["wgmma_epilogue", "mma_v2_epilogue", "pipelined_matmul"])
def test_a_conversion_into_an_automatic_layout_resolves(name):
    with pytest.raises(Exception):             # Triton: "Failed to infer return type"
        _compile(name, True, ours=False)
    kernel, caught = _compile(name, True)
    assert caught == []
    _resolved_alone(kernel)


@pytest.mark.parametrize("name", ["wgmma_epilogue", "mma_v2_epilogue", "pipelined_matmul"])
def test_the_automatic_epilogue_stores_as_wide_as_the_expert(name):
    expert, _ = _compile(name, False, ours=False)
    automatic, _ = _compile(name, True)
    wide = _count(expert.asm["ptx"], "st.global.v4")
    assert wide > 0
    assert _count(automatic.asm["ptx"], "st.global.v4") == wide
    assert _count(automatic.asm["ptx"], "st.global.b32") == _count(automatic.asm["ptx"], "st.global.b16") == 0


def test_the_wgmma_epilogue_stores_16_byte_vectors():
    kernel, _ = _compile("wgmma_epilogue", True)
    assert _count(kernel.asm["ptx"], "st.global.v4.b32") == 4      # 64x64 f16, 128 threads: 4 x 16 bytes each


def test_values_meeting_the_accumulator_directly_compile_as_stock_does():
    stock, _ = _compile("wgmma_direct_epilogue", True, ours=False)
    ours, caught = _compile("wgmma_direct_epilogue", True)
    assert caught == []
    _resolved_alone(ours)
    for instruction in ("st.global.v4", "st.global.b32", "st.shared.v4", "ldmatrix"):
        assert _count(ours.asm["ptx"], instruction) == _count(stock.asm["ptx"], instruction)


def test_every_kernel_has_both_forms():
    assert set(KERNELS) >= {"pipelined_matmul", "transpose_epilogue", "wgmma_epilogue", "wgmma_direct_epilogue",
                            "mma_v2_epilogue"}
