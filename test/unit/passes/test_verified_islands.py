"""Remembered simulator verdicts (``passes.islands.verified_islands``) and the compile-time fast paths:
a verdict is reused only for the very text it was given for, rejections are never remembered,
the memory survives on disk, and a module without conversions costs the drop-in nothing."""

from __future__ import annotations

import os

import pytest

from linear_layouts.lowering.sim import island_sim
from linear_layouts.tools.fuzz.testcases import single_convert_ttgir
from linear_layouts.lowering.verify import VerificationResult
from linear_layouts.lowering.choosing import plan_memory
from linear_layouts.lowering.choosing.plan_memory import PROCESS_PLANS
from linear_layouts.passes.islands import verified_islands
from linear_layouts.passes.ir.snapshot import parse_module
from linear_layouts.passes.lower_conversions import lower_module, lower_text
from support.triton_cache import use_private_triton_cache

BLOCKED_A = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
BLOCKED_B = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"
KERNEL = single_convert_ttgir((64, 64), "f32", BLOCKED_A, BLOCKED_B, 4)


@pytest.fixture
def remembering(tmp_path, monkeypatch):
    """Verdicts remembered, in memory and in a private directory; simulator runs counted."""
    monkeypatch.setenv(verified_islands.CACHE_SWITCH, "on")
    monkeypatch.setenv(verified_islands.CACHE_DIR_VARIABLE, str(tmp_path / "verified"))
    verified_islands.forget_in_memory()
    PROCESS_PLANS.forget()
    runs = []
    real = island_sim.check_emitted

    def counting(text, plan, site):
        runs.append(text)
        return real(text, plan, site)
    monkeypatch.setattr(island_sim, "check_emitted", counting)
    yield runs, tmp_path / "verified"
    verified_islands.forget_in_memory()
    PROCESS_PLANS.forget()


def test_second_lowering_reuses_the_verdict_and_prints_the_same_code(remembering):
    runs, directory = remembering
    first, outcomes = lower_text(KERNEL)
    assert len(runs) == 1 and outcomes[0].lowered and outcomes[0].emitted_check
    second, outcomes = lower_text(KERNEL)
    assert len(runs) == 1, "the same island for the same plan and site is not simulated twice"
    assert outcomes[0].lowered and outcomes[0].emitted_check
    assert first == second
    assert len(os.listdir(directory)) == 1


def test_the_disk_remembers_across_processes(remembering):
    runs, directory = remembering
    lower_text(KERNEL)
    verified_islands.forget_in_memory()          # as a new process would start
    lower_text(KERNEL)
    assert len(runs) == 1
    verified_islands.forget_in_memory()
    os.remove(os.path.join(directory, os.listdir(directory)[0]))
    lower_text(KERNEL)
    assert len(runs) == 2, "without the file the island is simulated again"


def test_another_element_type_or_site_is_simulated_again(remembering):
    runs, _ = remembering
    lower_text(KERNEL)
    lower_text(single_convert_ttgir((64, 64), "f16", BLOCKED_A, BLOCKED_B, 4))
    assert len(runs) == 2
    # the same conversion in a loop is another site (its thread id is read differently)
    lower_text(KERNEL.replace("convert_kernel", "other_name"))
    assert len(runs) == 2, "the kernel's name is not part of what the verdict depends on"


def test_a_conversion_repeated_in_one_kernel_is_planned_and_simulated_once(monkeypatch):
    """Within one module the second of two identical conversions takes the first one's plan and
    verdict, with the memory across compiles off (as in a first compile); both are lowered."""
    monkeypatch.setenv(verified_islands.CACHE_SWITCH, "off")
    runs, plans = [], []
    real_check, real_plan = island_sim.check_emitted, plan_memory.plan_conversion

    def counting_check(text, plan, site):
        runs.append(text)
        return real_check(text, plan, site)

    def counting_plan(*args):
        plans.append(args)
        return real_plan(*args)
    monkeypatch.setattr(island_sim, "check_emitted", counting_check)
    monkeypatch.setattr(plan_memory, "plan_conversion", counting_plan)
    convert = "    %c = ttg.convert_layout %v : tensor<64x64xf32, #src> -> tensor<64x64xf32, #dst>\n"
    assert KERNEL.count(convert) == 1
    # Three in a row: the first needs no guard (nothing touches shared memory before it), the
    # second and third a guard before (the island before them): two sites, one of them twice.
    thrice = KERNEL.replace(convert, convert + convert.replace("%c =", "%c2 =") + convert.replace("%c =", "%c3 =")
                            ).replace("tt.store %d_p, %c :", "tt.store %d_p, %c3 :")
    lowered, outcomes = lower_text(thrice)
    assert [o.lowered for o in outcomes] == [True, True, True]
    assert len(plans) == 1 and len(runs) == 2
    assert "ttg.convert_layout" not in lowered
    lower_text(thrice)
    assert len(plans) == 2 and len(runs) == 4, "nothing is remembered from one module to the next"


def test_a_rejection_is_never_remembered(remembering, monkeypatch):
    runs, directory = remembering
    monkeypatch.delenv("LINEAR_LAYOUTS_STRICT_CHECK", raising=False)
    monkeypatch.setattr(island_sim, "check_emitted", lambda *a: VerificationResult(False, ("injected",)))
    _, outcomes = lower_text(KERNEL)
    assert not outcomes[0].lowered and "injected" in outcomes[0].reason
    assert not directory.exists() or not os.listdir(directory)
    _, outcomes = lower_text(KERNEL)
    assert not outcomes[0].lowered, "a rejected island stays rejected"


def test_off_means_every_island_is_simulated(remembering, monkeypatch):
    runs, directory = remembering
    monkeypatch.setenv(verified_islands.CACHE_SWITCH, "off")
    lower_text(KERNEL)
    lower_text(KERNEL)
    assert len(runs) == 2 and not directory.exists()


def test_an_unwritable_directory_is_not_an_error(remembering, monkeypatch, tmp_path):
    runs, _ = remembering
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv(verified_islands.CACHE_DIR_VARIABLE, str(tmp_path / "file" / "below"))
    _, outcomes = lower_text(KERNEL)
    assert outcomes[0].lowered


def test_the_key_names_everything_the_verdict_depends_on():
    from linear_layouts.lowering.emit.emit_llvm import IslandSite
    from linear_layouts.lowering.planner import plan_conversion
    from linear_layouts.lowering.target import target_named
    from linear_layouts.dialect import to_linear_layout

    src, dst = to_linear_layout(BLOCKED_A, [64, 64]), to_linear_layout(BLOCKED_B, [64, 64])
    plan = plan_conversion(src, dst, 32, target_named("sm_90"))
    site = IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                       element_type="f32")
    key = verified_islands.verdict_key("text", plan, site, "3.6.0")
    assert key == verified_islands.verdict_key("text", plan, site, "3.6.0")
    assert key != verified_islands.verdict_key("text ", plan, site, "3.6.0")
    assert key != verified_islands.verdict_key("text", plan, site, "3.9.0")
    assert key != verified_islands.verdict_key("text", plan, IslandSite(**{**site.__dict__, "in_loop": True}),
                                               "3.6.0")
    other = plan_conversion(dst, src, 32, target_named("sm_90"))
    assert key != verified_islands.verdict_key("text", other, site, "3.6.0")


def test_two_islands_of_one_module_get_their_own_names():
    text = KERNEL.replace("    tt.return", "    %again = ttg.convert_layout %v : tensor<64x64xf32, #src> -> "
                                            "tensor<64x64xf32, #dst>\n    tt.return")
    assert text != KERNEL
    module = parse_module(text)
    outcomes = lower_module(module)
    assert [o.lowered for o in outcomes] == [True, True]
    spliced = module.text_for_triton()
    assert "%ll0_" in spliced and "%ll1_" in spliced and "%llX_" not in spliced
    assert module.print().count("ttg.local_alloc") == 2   # parses: every SSA name defined once


def test_rewritten_text_is_checked_when_the_module_is_next_used():
    from linear_layouts.passes.ir.diagnostics import IRError

    module = parse_module(KERNEL)
    module.rewrite_text(lambda text: text.replace("tt.return", "tt.return %nothing : f32"))
    assert "%nothing" in module.text_for_triton(), "handed over as written, Triton's parser checks it"
    with pytest.raises(IRError):
        module.print()


def test_a_kernel_without_conversions_never_reaches_our_passes(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import linear_layouts
    from linear_layouts.passes.drop_in import hook, stage_wrappers

    @triton.jit
    def add(X, Y, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(Y + offsets, tl.load(X + offsets) + 1.0)

    def no_passes(*args, **kwargs):
        raise AssertionError("the pipeline ran on a module without ttg.convert_layout")
    use_private_triton_cache(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", no_passes)
    hook.reset_stats()
    linear_layouts.enable()
    try:
        kernel = triton.compile(ASTSource(fn=add, signature={"X": "*fp32", "Y": "*fp32"}, constexprs={"N": 256}),
                                target=GPUTarget("cuda", 90, 32))
    finally:
        linear_layouts.disable()
    assert "ld.global" in kernel.asm["ptx"]
    assert linear_layouts.stats().kernels == 1 and not linear_layouts.stats().fallbacks


def test_the_source_fingerprint_sees_every_subpackage_and_table(tmp_path):
    """A change to a module in a subpackage (lowering/emit/, passes/gluon/, ...) or to a table
    (lowering/choosing/measured_choices.json) must change the fingerprint that keys compiled
    kernels and remembered verdicts: before, only the top-level files of the three folders were
    read, so a changed emitter could reuse kernels an older one compiled."""
    from linear_layouts.passes.islands.verified_islands import _shaping_files, fingerprint_of
    import pathlib
    repo = pathlib.Path(verified_islands.__file__).resolve().parents[2]
    names = {str(pathlib.Path(p).relative_to(repo)) for p in _shaping_files(str(repo))}
    assert {"lowering/emit/emit_llvm.py", "passes/gluon/resolve_auto_layouts.py",
            "lowering/choosing/measured_choices.json", "dialect/linear_layout.py"} <= names
    assert verified_islands.source_fingerprint() == fingerprint_of(str(repo))   # read from the package's root
    for folder in ("dialect", "lowering/emit", "passes"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "lowering" / "emit" / "emit.py").write_text("A = 1\n")
    before = fingerprint_of(str(tmp_path))
    (tmp_path / "lowering" / "emit" / "emit.py").write_text("A = 2\n")
    assert fingerprint_of(str(tmp_path)) != before
