"""The drop-in asks each conversion from its types before printing Triton's module
(``passes.drop_in.types_first``): where every conversion goes to stock that way, the pipeline would have
made no island, so the hook compiles Triton's own module without a print or a snapshot.

What must hold: wherever the types say "stock's, every one", the pipeline run on the module
makes no island (on the corpora, under the release installed and, for the measured model of
sm_90, as triton 3.6 decides); the question is asked only of the default pipeline; and it is
not vacuous (the FLA corpus under 3.9 is answered from the types throughout)."""

import glob
import os

import pytest

triton = pytest.importorskip("triton")

from linear_layouts.passes import lower_conversions; from linear_layouts.passes.drop_in import stage_wrappers# noqa: E402
from linear_layouts.passes.drop_in.hook import Mode, PluginConfig  # noqa: E402
from linear_layouts.passes.ir.bindings import bindings, new_context  # noqa: E402
from linear_layouts.passes.lower_conversions import LowerConversions  # noqa: E402
from linear_layouts.passes.drop_in.plugin_pipeline import run_plugin_pipeline  # noqa: E402
from linear_layouts.passes.drop_in.types_first import every_conversion_is_stocks  # noqa: E402

from support import REPO  # noqa: E402

CORPORA = REPO / "test" / "lit" / "corpus"
DEFAULT = PluginConfig(Mode.LINEAR, (LowerConversions(),))


@pytest.fixture(autouse=True)
def shared_picks_kept(monkeypatch):
    """Shared-memory picks in Triton's rounds kept ours (the study switch ``SHARED_PICKS_KEPT``): under
    triton 3.6 the default sends them to stock (``fitted_model.shared_memory_in_tritons_rounds``),
    and this module's subject is how such islands are built and spliced."""
    monkeypatch.setattr("linear_layouts.lowering.choosing.fitted_model.SHARED_PICKS_KEPT", True)


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the stock gate off (conftest.py); this is about the default."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


def _modules(folder: str):
    """(file name, Triton's module) of each file of a corpus folder with a conversion that the
    installed Triton parses."""
    for path in sorted(glob.glob(str(CORPORA / folder / "*.ttgir"))):
        if "ttg.convert_layout" not in open(path).read():
            continue
        context = new_context()
        try:
            module = bindings().parse_mlir_module(path, context)
        except RuntimeError:      # ops newer than this Triton
            continue
        module.context = context
        yield os.path.basename(path), module


@pytest.mark.parametrize("release", ["installed", "3.6.0"])
@pytest.mark.parametrize("folder", ["fla", "liger_kernel", "cuda90", "cuda80", "gfx942"])
def test_stocks_from_the_types_means_no_island(monkeypatch, folder, release):
    if release != "installed":
        monkeypatch.setattr(lower_conversions, "triton_version", lambda: release)
    checked = 0
    for name, module in _modules(folder):
        if every_conversion_is_stocks(module, DEFAULT):
            result = run_plugin_pipeline(module, DEFAULT, {"name": name})
            assert result.ops_replaced == 0, (folder, name)
            checked += 1
    assert checked or folder in ("cuda90", "liger_kernel") and release == "3.6.0"


def test_the_held_out_corpus_is_answered_from_the_types_under_3_9(monkeypatch):
    """Under 3.9 nothing of FLA's is ours (docs/compile-time.md): every kernel with a conversion
    is answered before any print."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.9.0")
    modules = list(_modules("fla"))
    assert len(modules) >= 30
    assert all(every_conversion_is_stocks(module, DEFAULT) for _, module in modules)


def test_a_kernel_with_an_island_is_not_answered_from_the_types(monkeypatch):
    """Under 3.6 on sm_90 the measured rule keeps FLA's ldmatrix islands: such a kernel goes
    through the pipeline, which makes them."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")
    found = 0
    for name, module in _modules("fla"):
        if not every_conversion_is_stocks(module, DEFAULT):
            found += run_plugin_pipeline(module, DEFAULT, {"name": name}).ops_replaced > 0
    assert found >= 5


def test_the_pass_takes_the_answers_the_types_gave(monkeypatch):
    """The drop-in hands the pass the memory its question from the types used
    (``plan_memory.ModulePlans``): each conversion asked there is not asked again, and the
    islands are those of a pass that asks everything itself, character for character."""
    from linear_layouts.lowering.choosing import lowering_choice
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")
    asked = []
    real = lowering_choice._choose_conversion
    monkeypatch.setattr(lowering_choice, "_choose_conversion",
                        lambda conversion, policy, plans: asked.append(conversion) or real(conversion, policy, plans))
    compared = 0
    for name, module in _modules("fla"):
        asked.clear()
        alone = run_plugin_pipeline(module, DEFAULT, {"name": name})
        asked_alone = len(asked)
        asked.clear()
        plans = LowerConversions.module_plans()
        if every_conversion_is_stocks(module, DEFAULT, plans):
            continue
        asked_first = len(asked)
        shared = run_plugin_pipeline(module, DEFAULT, {"name": name}, plans=plans)
        asked_in_pass = len(asked) - asked_first
        assert asked_first >= 1
        assert asked_in_pass == asked_alone - asked_first, name
        assert str(shared.module) == str(alone.module), name
        compared += 1
    assert compared >= 5


@pytest.mark.parametrize("config", [
    PluginConfig(Mode.LINEAR, (LowerConversions(),), remarks=True),
    PluginConfig(Mode.LINEAR, (LowerConversions(remarks=True),)),
    PluginConfig(Mode.LINEAR, (LowerConversions(only="shuffle,shared,local_load"),)),
], ids=["remarks", "pass-remarks", "local-ops"])
def test_only_the_default_pipeline_is_answered_from_the_types(monkeypatch, config):
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.9.0")
    _, module = next(_modules("fla"))
    assert every_conversion_is_stocks(module, DEFAULT)
    assert not every_conversion_is_stocks(module, config)


def test_the_gate_off_keeps_every_kernel_on_the_pipeline(monkeypatch):
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    assert not any(every_conversion_is_stocks(module, DEFAULT) for _, module in _modules("fla"))


def test_the_hook_skips_the_print_where_the_types_answer(monkeypatch):
    """The llir stage compiles Triton's own module, never printing it, where the types answer."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.9.0")
    name, module = next(_modules("fla"))
    printed = []
    calls = []

    class Watched:
        def __getattr__(self, attribute):
            if attribute == "str":
                printed.append(attribute)
            return getattr(module, attribute)

    wrapped = stage_wrappers._WrappedStages({"llir": lambda src, metadata: calls.append(src) or "llir"},
                                            DEFAULT)
    assert wrapped.llir(Watched(), {}) == "llir"
    assert not printed and len(calls) == 1


@pytest.mark.parametrize("in_place", ["1", "0"])
def test_the_hook_hands_the_pass_the_memory_its_question_used(monkeypatch, in_place):
    """Where the types do not answer, the llir stage builds in place (``passes.drop_in.in_place``) or
    runs the pipeline with the very memory of plans and choices its question from the types
    filled."""
    monkeypatch.setattr(lower_conversions, "triton_version", lambda: "3.6.0")
    monkeypatch.setenv("LINEAR_LAYOUTS_IN_PLACE", in_place)
    module = next(m for _, m in _modules("fla") if not every_conversion_is_stocks(m, DEFAULT))
    memories = []
    real_first, real_pipeline = stage_wrappers.every_conversion_is_stocks, stage_wrappers.run_plugin_pipeline

    def asked_first(handle, config, plans=None):
        memories.append(plans)
        return real_first(handle, config, plans)

    def pipeline(handle, config, metadata=None, text=None, plans=None, **more):
        memories.append(plans)
        return real_pipeline(handle, config, metadata, text, plans, **more)

    def built_in_place(handle, text, name, lowering, plans):
        memories.append(plans)
        return real_in_place(handle, text, name, lowering, plans)

    def built_from_types(handle, config, plans):
        memories.append(plans)
        return real_from_types(handle, config, plans)
    real_in_place, real_from_types = stage_wrappers.lower_in_place, stage_wrappers.lower_in_place_from_types
    monkeypatch.setattr(stage_wrappers, "every_conversion_is_stocks", asked_first)
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", pipeline)
    monkeypatch.setattr(stage_wrappers, "lower_in_place", built_in_place)
    monkeypatch.setattr(stage_wrappers, "lower_in_place_from_types", built_from_types)
    wrapped = stage_wrappers._WrappedStages({"llir": lambda src, metadata: "llir"}, DEFAULT)
    wrapped.llir(module, {})
    assert len(memories) >= 2 and memories[0] is not None and all(m is memories[0] for m in memories)
    assert memories[0]._choices      # the question filled it
