"""Never a failure where stock Triton compiles: when a stage after our passes fails on a module
with our islands, ``enable()`` compiles the kernel again from Triton's own TTGIR, warns once and
records the fallback (``linear_layouts.stats()``).

The failures are injected by wrapping ``stage_wrappers.run_plugin_pipeline``: its real output is edited so
that one later stage rejects it (a bad PTX instruction for ptxas, a struct of the wrong arity
for the translation to LLVM IR, an exception in our passes)."""

import dataclasses
import warnings

import pytest

triton = pytest.importorskip("triton")
import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import hook, stage_wrappers# noqa: E402
from linear_layouts.passes.ir.parsing import triton_module_from_text  # noqa: E402


# the kernel of the drop-in tests: a 32x32 transpose, whose convert crosses warps (shared memory)
from support.hook_kernel import SOURCE, TARGET  # noqa: E402

# The plan's own barrier in the LLVM IR is an NVVM call after this inline-asm marker
# (lowering.emit.emit_nvidia); made a bad instruction, ptxas rejects the kernel.
ISLAND_BARRIER = '"// island barrier"'


pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


@pytest.fixture(autouse=True)
def islands_as_text(monkeypatch):
    """The text route, whose output these tests edit: the transpose's conversion would otherwise
    be built in Triton's module (``passes.drop_in.in_place``, whose fallbacks test_in_place.py tests)."""
    monkeypatch.setenv("LINEAR_LAYOUTS_IN_PLACE", "0")


def _edit_plugin_output(monkeypatch, edit):
    real = stage_wrappers.run_plugin_pipeline

    def broken(module, config, metadata=None, text=None, plans=None, **more):
        result = real(module, config, metadata, text, plans, **more)
        text = result.module.str()
        return dataclasses.replace(result, module=triton_module_from_text(edit(text), module.context))
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", broken)


def _stock_ptx():
    return triton.compile(SOURCE, target=TARGET).asm["ptx"]


def _stock_cubin():
    return triton.compile(SOURCE, target=TARGET).asm["cubin"]


def _compile_with_plugin():
    linear_layouts.enable()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = triton.compile(SOURCE, target=TARGET)
    linear_layouts.disable()
    return kernel, [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_islands_are_used_when_nothing_fails():
    kernel, caught = _compile_with_plugin()
    assert not caught
    stats = linear_layouts.stats()
    assert stats.kernels == 1 and stats.kernels_with_islands == 1 and stats.fallbacks == []
    assert (stats.conversions, stats.islands) == (1, 1)   # the transpose's one convert is ours
    assert "1 of 1 conversions lowered by us" in stats.summary()
    assert kernel.asm["ptx"] != _stock_ptx()   # our island, not stock's lowering


def test_ptxas_failure_falls_back_to_stock(monkeypatch):
    def bad_instruction(text):
        assert ISLAND_BARRIER in text, "the island of this kernel has a barrier"
        return text.replace(ISLAND_BARRIER, '"bar.nonsense 0;"', 1)
    _edit_plugin_output(monkeypatch, bad_instruction)
    stock = _stock_cubin()
    kernel, caught = _compile_with_plugin()
    # The binary is stock's.  (asm["ptx"] keeps the PTX that ptxas rejected: Triton records
    # each stage's output as it goes.)
    assert kernel.asm["cubin"] == stock
    assert len(caught) == 1 and "transpose_kernel" in str(caught[0].message)
    [fallback] = linear_layouts.stats().fallbacks
    assert fallback.kernel == "transpose_kernel" and fallback.stage == "cubin"
    assert linear_layouts.stats().kernels_with_islands == 0
    assert (linear_layouts.stats().conversions, linear_layouts.stats().islands) == (1, 0)


def test_translation_failure_falls_back_to_stock(monkeypatch):
    def wrong_arity(text):
        # The island's struct gets one field more than Triton's type converter gives the
        # tensor (what happened on triton 3.6 with blocked tiles larger than the tensor): the
        # module parses, and the translation to LLVM IR fails on the unresolved cast.
        import re
        struct = re.search(r"to (!llvm\.struct<\(f32(?:, f32)*\)>)", text).group(1)
        return text.replace(struct, struct.replace("(f32", "(f32, f32", 1))
    _edit_plugin_output(monkeypatch, wrong_arity)
    stock = _stock_ptx()
    kernel, caught = _compile_with_plugin()
    assert kernel.asm["ptx"] == stock
    [fallback] = linear_layouts.stats().fallbacks
    assert fallback.stage == "llir" and fallback.reason
    assert (linear_layouts.stats().conversions, linear_layouts.stats().islands) == (1, 0)
    assert len(caught) == 1


def test_failure_in_our_passes_falls_back_to_stock(monkeypatch):
    def explode(module, config, metadata=None, text=None, plans=None, **more):
        raise ValueError("injected failure")
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", explode)
    stock = _stock_ptx()
    kernel, caught = _compile_with_plugin()
    assert kernel.asm["ptx"] == stock
    [fallback] = linear_layouts.stats().fallbacks
    assert fallback.stage == "our passes" and fallback.reason == "injected failure"
    assert "compiled without them" in linear_layouts.stats().summary()


def test_one_warning_per_kernel(monkeypatch):
    _edit_plugin_output(monkeypatch, lambda text: text.replace(ISLAND_BARRIER, '"bar.nonsense 0;"', 1))
    _, first = _compile_with_plugin()
    _, second = _compile_with_plugin()
    assert len(first) == 1 and not second
    assert len(linear_layouts.stats().fallbacks) == 2   # counted every time


def test_the_drop_in_path_never_forks(monkeypatch):
    import os

    def no_fork():
        raise AssertionError("os.fork() called on the drop-in path")
    monkeypatch.setattr(os, "fork", no_fork)
    kernel, caught = _compile_with_plugin()
    assert not caught and linear_layouts.stats().kernels_with_islands == 1


def test_one_warning_per_specialization_of_a_kernel_name(monkeypatch):
    """Two specializations of one kernel (BLOCK = 32 and 64) that both fall back are two
    compiled kernels: two warnings (once one, keyed by the kernel name alone)."""
    from triton.compiler import ASTSource

    from support.hook_kernel import transpose_kernel

    _edit_plugin_output(monkeypatch, lambda text: text.replace(ISLAND_BARRIER, '"bar.nonsense 0;"', 1))
    wider = ASTSource(fn=transpose_kernel, signature={"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 64})
    linear_layouts.enable()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for source in (SOURCE, wider, SOURCE, wider):
            triton.compile(source, target=TARGET)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 2 and all("transpose_kernel" in m for m in messages)
    assert [f.stage for f in linear_layouts.stats().fallbacks] == ["cubin"] * 4   # counted every time


class FailingStage:
    """A stages hook installed before ours that makes ``stage`` fail for any input, ours and
    stock's alike (as ptxas would on a kernel it cannot assemble at all)."""

    def __init__(self, stage):
        self.stage, self.failures = stage, 0

    def __call__(self, *args):
        if not args:
            return "failing-stage", "failing-stage"
        stages = args[1]

        def fail(src, metadata):
            self.failures += 1
            raise RuntimeError(f"{self.stage} failed, call {self.failures}")
        stages[self.stage] = fail


@pytest.mark.parametrize("stage", ["llir", "ptx", "cubin"])
def test_a_stage_that_fails_for_stock_too_is_not_a_fallback(stage, monkeypatch):
    """The stock recompile fails as well: Triton's own error (the second failure, on stock's
    module) reaches the caller, and neither a fallback nor a warning claims that stock Triton
    compiled the kernel."""
    failing = FailingStage(stage)
    monkeypatch.setattr(triton.knobs.runtime, "add_stages_inspection_hook", failing)
    linear_layouts.enable()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match=f"{stage} failed, call 2") as raised:
            triton.compile(SOURCE, target=TARGET)
    assert failing.failures == 2                              # ours, then stock's
    assert raised.value.__suppress_context__                  # not shown as a failure of ours
    assert linear_layouts.stats().fallbacks == []
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_our_passes_failing_where_stock_fails_too_is_not_a_fallback(monkeypatch):
    def explode(module, config, metadata=None, text=None, plans=None, **more):
        raise ValueError("injected failure")
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", explode)
    monkeypatch.setattr(triton.knobs.runtime, "add_stages_inspection_hook", FailingStage("llir"))
    linear_layouts.enable()
    with pytest.raises(RuntimeError, match="llir failed, call 1"):
        triton.compile(SOURCE, target=TARGET)
    assert linear_layouts.stats().fallbacks == []
