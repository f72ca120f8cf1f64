"""linear_layouts.enable(): our passes run inside triton.compile, and never share a cache entry
with stock Triton (3.7+: the hook's cache key; 3.6: a private cache directory)."""

import hashlib
import os
import re
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import hook, stage_wrappers# noqa: E402
from linear_layouts.passes.drop_in.plugin_config import in_place_by_default  # noqa: E402

from support import REPO  # noqa: E402

ROOT = str(REPO)
REPORTING = "ll-classify-conversions{report=true}"


from support.hook_kernel import SOURCE, TARGET  # noqa: E402


pytestmark = pytest.mark.usefixtures("private_triton_cache")  # conftest.py


def compile_and_capture(capfd):
    kernel = triton.compile(SOURCE, target=TARGET)
    return kernel, capfd.readouterr().err


def test_enabled_pipeline_runs_inside_triton_compile(capfd):
    stock, err = compile_and_capture(capfd)
    assert "scope=" not in err
    config = linear_layouts.enable(pipeline=REPORTING)
    assert hook.active_config() == config
    ours, err = compile_and_capture(capfd)
    # The transpose's convert_layout crosses warps: our pass saw it inside Triton's pipeline.
    assert "tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>: scope=warp bits=32" in err
    assert "ptx" in ours.asm


def test_plugin_and_stock_never_share_a_cache_entry(capfd):
    compile_and_capture(capfd)                       # stock, now cached
    linear_layouts.enable(pipeline=REPORTING)
    _, err = compile_and_capture(capfd)
    assert "scope=warp" in err, "a stock cache entry was served to the plugin"
    _, err = compile_and_capture(capfd)              # the plugin's own entry may be reused
    linear_layouts.disable()
    _, err = compile_and_capture(capfd)
    assert "scope=" not in err, "the plugin's cache entry was served to stock Triton"
    assert hook.active_config() is None


def test_cache_key_hook_protocol():
    assert hook._stages_hook() == ("", "")
    config = linear_layouts.enable(pipeline=REPORTING)
    key, digest = hook._stages_hook()
    assert key == config.cache_key and key.startswith("linear_layouts-")
    assert digest == config.cache_hash
    other = linear_layouts.enable(mode="legacy", pipeline="ll-attach-layouts")
    assert other.cache_key != key


@pytest.mark.parametrize("switch, value, mark", [
    ("LINEAR_LAYOUTS_STOCK_GATE", "off", "-stock-gate-off"),
    ("LINEAR_LAYOUTS_OPTIONS", '{"stock_gate": false}', "-stock-gate-off"),
    ("LINEAR_LAYOUTS_OPTIONS", '{"round_scratch": 0}', "-round-scratch-0"),
    ("LINEAR_LAYOUTS_IN_PLACE", *(("0", "-text-islands") if in_place_by_default() else ("1", "-in-place"))),
    ("linear_layouts.lowering.emit.emit_nvidia.BYTES_AS_VECTORS", True, "-byte-vectors"),           # study switches
    ("linear_layouts.lowering.emit.emit_nvidia.SHARED_ACCESS_FORM", "asm", "-shared-asm"),
    ("linear_layouts.lowering.choosing.fitted_model.SHARED_PICKS_KEPT", True, "-shared-picks")])
def test_cache_key_names_the_switches_that_change_the_code(monkeypatch, switch, value, mark):
    # A kernel compiled with the gate off (or bytes packed as vectors) is another kernel: a run
    # without the switch must not find it in Triton's cache.  A setting from the environment or a
    # study's switch set in its process alike.
    for name in ("LINEAR_LAYOUTS_STOCK_GATE", "LINEAR_LAYOUTS_IN_PLACE", "LINEAR_LAYOUTS_OPTIONS"):
        monkeypatch.delenv(name, raising=False)
    config = linear_layouts.enable()
    plain = config.cache_key
    assert "-stock-gate-off" not in plain and "-byte-vectors" not in plain and "-shared-" not in plain
    assert "-text-islands" not in plain and "-in-place" not in plain and "-round-scratch" not in plain
    if switch.startswith("LINEAR_LAYOUTS"):
        monkeypatch.setenv(switch, value)
    else:
        monkeypatch.setattr(switch, value)
    assert config.cache_key == plain + mark and config.cache_hash != hashlib.sha256(plain.encode()).hexdigest()


def test_a_setting_given_to_enable_is_in_the_cache_key(monkeypatch):
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
    assert linear_layouts.enable(stock_gate=False).cache_key.endswith("-stock-gate-off")
    assert not linear_layouts.enable().cache_key.endswith("-stock-gate-off")


def test_private_cache_dir_on_triton_3_6(tmp_path):
    before = triton.knobs.cache.dir
    linear_layouts.enable(pipeline=REPORTING)
    if hook.hook_consulted_for_cache_key():
        assert triton.knobs.cache.dir == before
    else:
        assert triton.knobs.cache.dir.startswith(os.path.join(before, "linear_layouts"))
    linear_layouts.disable()
    assert triton.knobs.cache.dir == before


@pytest.mark.parametrize("environment", ["set", "unset"])
def test_cache_dir_follows_the_environment_after_disable(monkeypatch, tmp_path, environment):
    """Triton 3.6: the plugin points Triton's cache at a directory of its own while it is on.
    After ``disable()`` the knob must follow ``TRITON_CACHE_DIR`` again (as before ``enable()``),
    not stay pinned to the directory of that moment: a later change of the variable (a test's
    fresh cache, a user's) was ignored, so a kernel compiled earlier came back from the old cache
    and the plugin never ran on it."""
    vars(triton.knobs.cache).pop("dir", None)
    if environment == "set":
        monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "first"))
    else:
        monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    linear_layouts.enable(pipeline=REPORTING)
    linear_layouts.disable()
    assert "dir" not in vars(triton.knobs.cache)
    assert os.environ.get("TRITON_CACHE_DIR") == (str(tmp_path / "first") if environment == "set" else None)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "second"))
    assert triton.knobs.cache.dir == str(tmp_path / "second")


def test_a_pinned_cache_dir_stays_pinned(tmp_path):
    """A cache directory set in Python (``triton.knobs.cache.dir = ...``) is put back as it was."""
    triton.knobs.cache.dir = str(tmp_path / "pinned")
    try:
        linear_layouts.enable(pipeline=REPORTING)
        linear_layouts.disable()
        assert vars(triton.knobs.cache)["dir"] == str(tmp_path / "pinned")
    finally:
        vars(triton.knobs.cache).pop("dir", None)


@pytest.mark.parametrize("before", ["environment", "pinned"])
def test_a_tests_private_cache_is_undone_exactly(tmp_path, before):
    """The tests' own cache helper (support/triton_cache.py) leaves the knob as it found it: one
    that followed ``TRITON_CACHE_DIR`` follows it again.  (``monkeypatch.setattr`` on the knob
    pinned it to the old value, and a later test's fresh ``TRITON_CACHE_DIR`` was ignored: its
    compile came from an earlier test's cache and the plugin never ran.)"""
    from support.triton_cache import use_private_triton_cache

    with pytest.MonkeyPatch.context() as outer:
        use_private_triton_cache(outer, tmp_path / "outer")
        if before == "environment":
            vars(triton.knobs.cache).pop("dir")          # the outer test's knob follows the environment
        with pytest.MonkeyPatch.context() as inner:
            use_private_triton_cache(inner, tmp_path / "inner")
            assert triton.knobs.cache.dir == str(tmp_path / "inner")
            assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "inner")
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "outer")
        assert ("dir" in vars(triton.knobs.cache)) == (before == "pinned")
        outer.setenv("TRITON_CACHE_DIR", str(tmp_path / "later"))
        expected = tmp_path / ("outer" if before == "pinned" else "later")
        assert triton.knobs.cache.dir == str(expected)


def test_context_manager_restores_stock():
    with linear_layouts.enabled(pipeline=REPORTING) as config:
        assert hook.active_config() == config
        assert triton.knobs.runtime.add_stages_inspection_hook is hook._stages_hook
    assert hook.active_config() is None
    assert triton.knobs.runtime.add_stages_inspection_hook is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="fast"), "unknown mode 'fast'"),
    (dict(pipeline="ll-no-such-pass"), "ll-no-such-pass"),
    (dict(pipeline="ll-classify-conversions{bogus=1}"), "bogus"),
])
def test_bad_configuration_is_refused(kwargs, message):
    with pytest.raises(hook.PluginError, match=message):
        linear_layouts.enable(**kwargs)
    assert hook.active_config() is None


def test_environment_variable_values(monkeypatch):
    monkeypatch.setenv("LINEAR_LAYOUTS", "0")
    assert hook.enable_from_environment() is None
    monkeypatch.setenv("LINEAR_LAYOUTS", "sometimes")
    with pytest.raises(hook.PluginError, match="expected 1, linear, legacy or report"):
        hook.enable_from_environment()


def test_module_runner_usage_errors():
    result = subprocess.run([sys.executable, "-m", "linear_layouts"], capture_output=True, text=True)
    assert result.returncode == 1 and "usage: python -m linear_layouts run" in result.stderr
    result = subprocess.run([sys.executable, "-m", "linear_layouts", "run", "/no/such/prog.py"],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "no such program: /no/such/prog.py" in result.stderr


@pytest.mark.parametrize("target", [GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)],
                         ids=["sm_90", "gfx942"])
def test_default_pipeline_lowers_the_conversion(target, capfd):
    """enable() with no pipeline: ll-lower-conversions replaces the transpose's convert by a
    verified island; remarks say so; the kernel still compiles to the final ISA."""
    stock = triton.compile(SOURCE, target=target)
    with linear_layouts.enabled(remarks=True) as config:
        assert config.pipeline == "ll-lower-conversions{remarks=true}"
        ours = triton.compile(SOURCE, target=target)
    err = capfd.readouterr().err
    assert "remark: [ll-lower-conversions] lowered: shared" in err
    if target.backend == "cuda":
        # The island is in the final code: the LLVM IR is not stock's (its shared accesses are
        # plain loads and stores, as stock's, so no instruction count tells them apart).
        assert ours.asm["llir"] != stock.asm["llir"]
        assert "ld.shared" in ours.asm["ptx"] or "ldmatrix" in ours.asm["ptx"]
    else:
        assert "ds_write" in ours.asm["amdgcn"] and "ds_read" in ours.asm["amdgcn"]


def test_stats_count_what_the_assignment_left(tmp_path):
    """Triton's asm["ttgir"] is the TTGIR before our passes, so an assignment's effect is counted
    in stats(): loop-invariant.mlir's one conversion is gone after ll-assign-layouts (its lit
    test shows the same), and a kernel the assignment keeps is not counted."""
    lit = os.path.join(ROOT, "test", "lit", "assign-layouts")
    with open(os.path.join(lit, "loop-invariant.mlir")) as f:
        changed = "\n".join(line for line in f.read().splitlines() if not line.startswith("//"))
    path = tmp_path / "loop_invariant.ttgir"
    path.write_text(changed)
    hook.reset_stats()
    with linear_layouts.enabled(assign_layouts=True):
        compiled = triton.compile(str(path), target=TARGET)
        triton.compile(SOURCE, target=TARGET)       # a transpose: Triton's layouts kept
    stats = linear_layouts.stats()
    assert compiled.asm["ttgir"].count("ttg.convert_layout") == 1      # Triton's view: before us
    assert (stats.kernels, stats.conversions) == (2, 2)
    assert (stats.kernels_assigned, stats.conversions_after_assignment) == (1, 0)


# -- bad configuration: a clear ValueError naming the option, at once -------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"only": "nonsense"}, "only='nonsense'"),
    ({"only": "shuffle},ll-attach-layouts{"}, "only="),
    ({"only": ""}, "only=''"),
    ({"pipeline": 123}, "pipeline must be a pipeline string"),
    ({"pipeline": "ll-lower-conversions{target=bogus}"}, "target='bogus'"),
    ({"pipeline": "ll-lower-conversions{verify=maybe}"}, "verify='maybe'"),
    ({"verify": "nothing"}, "verify level 'nothing'"),
])
def test_enable_checks_every_option_when_given(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        linear_layouts.enable(**kwargs)
    assert hook.active_config() is None


def test_bad_environment_value_warns_at_import_and_fails_the_runner(tmp_path):
    env = dict(os.environ, LINEAR_LAYOUTS="garbage")
    imported = subprocess.run([sys.executable, "-c", "import linear_layouts, triton; from linear_layouts.passes.drop_in import hook; print(hook.active_config())"],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
    assert imported.returncode == 0 and "Traceback" not in imported.stderr
    assert "linear-layouts stays off" in imported.stderr and "None" in imported.stdout
    program = tmp_path / "prog.py"
    program.write_text("print('ran')\n")
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "run", str(program)], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr and "'garbage'" in run.stderr
    assert "ran" not in run.stdout


# -- beside other tools: another stages hook keeps working --------------------------------------

def test_chains_to_an_existing_hook_and_restores_it(capfd):
    seen = {"stages": 0, "key": 0}

    def profiler_hook(*args):
        if not args:
            seen["key"] += 1
            return "profiler", "p" * 64
        seen["stages"] += 1
        args[1]["llir"] = _tagged(args[1]["llir"])
        return None

    def _tagged(stage):
        def run(src, metadata):
            seen["llir_by_profiler"] = True
            return stage(src, metadata)
        return run

    triton.knobs.runtime.add_stages_inspection_hook = profiler_hook
    try:
        linear_layouts.enable(pipeline=REPORTING)
        kernel, err = compile_and_capture(capfd)
        assert "scope=warp" in err                       # ours ran
        assert seen["stages"] == 1 and seen.get("llir_by_profiler")  # and theirs
        if hook.hook_consulted_for_cache_key():
            key, digest = triton.knobs.runtime.add_stages_inspection_hook()
            assert key.startswith("profiler|linear_layouts-") and digest != "p" * 64
            assert seen["key"] >= 1
        linear_layouts.disable()
        assert triton.knobs.runtime.add_stages_inspection_hook is profiler_hook
    finally:
        triton.knobs.runtime.add_stages_inspection_hook = None


# -- any order of enable / disable / enabled() and other tools' hooks ----------------------------
#
# Triton has one stages-hook slot, so tools chain their hooks: each installs over whatever is
# there and calls it first.  Ours must work under every order of installs, and of
# our own switches, with every hook run once per compile and our pipeline once while on.

class ThirdPartyHook:
    """A profiler-style stages hook: it wraps the hook it finds in Triton's slot, calls it first,
    counts its own calls, and (3.7+) extends its cache key."""

    def __init__(self, name="profiler"):
        self.name, self.below, self.calls, self.key_calls = name, None, 0, 0

    def install(self):
        self.below = triton.knobs.runtime.add_stages_inspection_hook
        triton.knobs.runtime.add_stages_inspection_hook = self
        return self

    def uninstall(self):
        """Put back what it found (a well-behaved tool does this while it is the hook in the slot)."""
        triton.knobs.runtime.add_stages_inspection_hook = self.below

    def __call__(self, *args):
        if not args:
            self.key_calls += 1
            key, digest = self.below() if self.below is not None else ("", "")
            return f"{key}|{self.name}", f"{digest}|{self.name}"
        self.calls += 1
        return self.below(*args) if self.below is not None else None


@pytest.fixture
def pipeline_runs(monkeypatch):
    """The pipeline of every compile our hook asked about its conversions (the real functions
    run too): with a conversion in the kernel, the llir stage first asks them from their types
    (``types_first``), with the active configuration, then runs the pipeline where one could be
    ours, or where the configuration's pipeline cannot be asked from the types."""
    runs = []
    real_first, real_pipeline = stage_wrappers.every_conversion_is_stocks, stage_wrappers.run_plugin_pipeline

    def asked_first(module, config, plans=None):
        runs.append(config.pipeline)
        return real_first(module, config, plans)

    def counted(module, config, metadata=None, text=None, plans=None, **more):
        if not runs or runs[-1] != config.pipeline:    # a pipeline not asked from the types
            runs.append(config.pipeline)
        return real_pipeline(module, config, metadata, text, plans, **more)
    monkeypatch.setattr(stage_wrappers, "every_conversion_is_stocks", asked_first)
    monkeypatch.setattr(stage_wrappers, "run_plugin_pipeline", counted)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    yield runs
    triton.knobs.runtime.add_stages_inspection_hook = None


KEY_CALLS_PER_COMPILE = 1 if hook.hook_consulted_for_cache_key() else 0   # 3.7+: the no-argument call
SHUFFLE_ONLY = "ll-lower-conversions{only=shuffle}"
LEGACY = "ll-lower-conversions{mode=legacy}"
LINEAR = "ll-lower-conversions"


def compile_once(runs, *hooks, expect):
    """One compile of the test kernel: every hook in ``hooks`` ran once, our pipeline once with
    the pipeline ``expect`` (or not at all: None)."""
    before = [(h.calls, h.key_calls) for h in hooks]
    del runs[:]
    triton.compile(SOURCE, target=TARGET)
    assert runs == ([expect] if expect else [])
    for h, (calls, key_calls) in zip(hooks, before):
        assert (h.calls - calls, h.key_calls - key_calls) == (1, KEY_CALLS_PER_COMPILE), h.name


def test_enable_again_under_a_hook_that_wraps_ours(pipeline_runs):
    """enable(), a profiler wraps our hook, enable(only=...): the wrapper must not be recorded as
    the hook below ours (the failure guarded against: every compile recursed until
    RecursionError)."""
    linear_layouts.enable()
    profiler = ThirdPartyHook().install()
    linear_layouts.enable(only="shuffle")
    assert triton.knobs.runtime.add_stages_inspection_hook is profiler   # theirs stays on top
    compile_once(pipeline_runs, profiler, expect=SHUFFLE_ONLY)
    if hook.hook_consulted_for_cache_key():
        key, _ = triton.knobs.runtime.add_stages_inspection_hook()
        assert hook.active_config().cache_key in key and key.endswith("|profiler")
    linear_layouts.disable()
    assert triton.knobs.runtime.add_stages_inspection_hook is profiler   # never unhooked by us
    compile_once(pipeline_runs, profiler, expect=None)                    # ours passes through
    if hook.hook_consulted_for_cache_key():
        assert "linear_layouts" not in triton.knobs.runtime.add_stages_inspection_hook()[0]
    linear_layouts.enable()
    compile_once(pipeline_runs, profiler, expect=LINEAR)


def test_leaving_an_enabled_block_under_a_hook_that_wraps_ours(pipeline_runs):
    linear_layouts.enable()
    profiler = ThirdPartyHook().install()
    with linear_layouts.enabled("legacy"):
        compile_once(pipeline_runs, profiler, expect=LEGACY)
    compile_once(pipeline_runs, profiler, expect=LINEAR)
    assert triton.knobs.runtime.add_stages_inspection_hook is profiler


def test_nested_enabled_blocks_over_a_hook_installed_before_ours(pipeline_runs):
    profiler = ThirdPartyHook().install()
    with linear_layouts.enabled():
        compile_once(pipeline_runs, profiler, expect=LINEAR)
        with linear_layouts.enabled("legacy"):
            with linear_layouts.enabled(only="shuffle"):
                compile_once(pipeline_runs, profiler, expect=SHUFFLE_ONLY)
            compile_once(pipeline_runs, profiler, expect=LEGACY)
        compile_once(pipeline_runs, profiler, expect=LINEAR)
    compile_once(pipeline_runs, profiler, expect=None)
    assert triton.knobs.runtime.add_stages_inspection_hook is profiler   # exactly what was there
    assert hook.active_config() is None


def test_hooks_installed_and_removed_inside_an_enabled_block(pipeline_runs):
    """A tool that wraps ours inside the block and leaves before it ends; another that stays."""
    with linear_layouts.enabled():
        passing = ThirdPartyHook("passing").install()
        compile_once(pipeline_runs, passing, expect=LINEAR)
        passing.uninstall()
        staying = ThirdPartyHook("staying").install()
    compile_once(pipeline_runs, staying, expect=None)
    assert triton.knobs.runtime.add_stages_inspection_hook is staying
    staying.uninstall()
    linear_layouts.disable()                       # off already: takes our pass-through out
    assert triton.knobs.runtime.add_stages_inspection_hook is None


def test_a_chain_that_leads_back_to_ours_runs_every_hook_once(pipeline_runs):
    """A tool that wrapped ours, left, and came back with its stale view of the slot (it calls
    the trampoline it wrapped before); enable() then puts ours over it: ours -> theirs -> ours."""
    linear_layouts.enable()
    stale = ThirdPartyHook("stale").install()
    stale.uninstall()
    linear_layouts.disable()                       # ours was on top: taken out, the slot is empty
    assert triton.knobs.runtime.add_stages_inspection_hook is None
    triton.knobs.runtime.add_stages_inspection_hook = stale   # still calls our trampoline
    linear_layouts.enable()
    assert triton.knobs.runtime.add_stages_inspection_hook is hook._stages_hook
    compile_once(pipeline_runs, stale, expect=LINEAR)
    if hook.hook_consulted_for_cache_key():
        triton.knobs.runtime.add_stages_inspection_hook()   # no RecursionError


def test_a_hook_that_dropped_ours_does_not_keep_the_plugin_off(pipeline_runs):
    """A tool installed before us that leaves by putting back what it had found (None) drops
    our hook with it; the next enable() puts ours back rather than trusting it is still there."""
    early = ThirdPartyHook("early").install()
    linear_layouts.enable()
    early.uninstall()                              # the slot is None again: ours is gone
    linear_layouts.enable(only="shuffle")
    assert triton.knobs.runtime.add_stages_inspection_hook is hook._stages_hook
    compile_once(pipeline_runs, expect=SHUFFLE_ONLY)


@pytest.mark.parametrize("seed", range(12))
def test_random_orders_of_switches_and_hooks(seed, monkeypatch):
    """Random sequences of enable / disable / enabled() blocks (nested) and other tools' hooks
    installed and removed (each while it is the hook in the slot).  After every step, one
    compile as Triton assembles it (the slot's hook with the stages, and the 3.7+ key call):
    every installed hook runs once, our stages are wrapped once with the setting in force, or
    not at all while off."""
    import random

    rng = random.Random(seed)
    monkeypatch.setattr(hook, "forget_jit_kernels", lambda: None)   # nothing compiled here; keeps it fast
    wrapped = []
    monkeypatch.setattr(hook, "_wrap_stages", lambda stages, config: wrapped.append(config))
    settings = [dict(mode="linear"), dict(mode="legacy"), dict(mode="linear", only="shuffle")]
    expected, blocks, tools = None, [], []
    try:
        for step in range(40):
            action = rng.choice(["enable", "disable", "enter", "exit", "install", "uninstall"])
            if action == "enable":
                expected = linear_layouts.enable(**rng.choice(settings))
            elif action == "disable":
                linear_layouts.disable()
                expected = None
            elif action == "enter":
                block = linear_layouts.enabled(**rng.choice(settings))
                blocks.append((block, expected))
                expected = block.__enter__()
            elif action == "exit" and blocks:
                block, expected = blocks.pop()
                block.__exit__(None, None, None)
            elif action == "install":
                tools.append(ThirdPartyHook(f"tool{step}").install())
            elif action == "uninstall" and tools and triton.knobs.runtime.add_stages_inspection_hook is tools[-1]:
                tools.pop().uninstall()
            assert hook.active_config() == expected, (step, action)
            counts = [(t.calls, t.key_calls) for t in tools]
            del wrapped[:]
            slot = triton.knobs.runtime.add_stages_inspection_hook
            if slot is not None:
                key, _ = slot()
                slot(None, {"llir": None}, None, None, None)
                assert (expected.cache_key in key) if expected else ("linear_layouts" not in key), (step, action)
            assert wrapped == ([expected] if expected else []), (step, action)
            assert [(t.calls - c, t.key_calls - k) for t, (c, k) in zip(tools, counts)] == [(1, 1)] * len(tools)
        # Everything undone in order: the slot is as it was before the first step.
        while blocks:
            blocks.pop()[0].__exit__(None, None, None)
        while tools:
            tools.pop().uninstall()
        linear_layouts.disable()
        assert triton.knobs.runtime.add_stages_inspection_hook is None
    finally:
        triton.knobs.runtime.add_stages_inspection_hook = None


def test_enable_leaves_the_opt_in_subsystems_unimported():
    """``enable()`` with its defaults imports neither the layout assignment, nor the advice, nor
    Gluon's automatic-layout resolution (most of the plugin's import time, paid before a process's
    first compile: benchmarks/studies/first_compile.py); asking for them imports them."""
    child = (
        "import sys, linear_layouts\n"
        "linear_layouts.enable()\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('linear_layouts.passes.assign', "
        "'linear_layouts.passes.advice', 'linear_layouts.passes.gluon', 'linear_layouts.passes.registry')))\n"
        "print('LOADED', loaded)\n"
        "linear_layouts.enable(assign_layouts=True)\n"
        "print('ASSIGN', 'linear_layouts.passes.assign.assign_layouts' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              filter(None, [str(REPO.parent), os.environ.get("PYTHONPATH")]))})
    assert "LOADED []" in done.stdout, done.stdout + done.stderr[-2000:]
    assert "ASSIGN True" in done.stdout, done.stdout + done.stderr[-2000:]


def test_the_assignment_pass_is_named_as_the_hook_expects():
    from linear_layouts.passes.assign.assign_layouts import AssignLayouts
    assert hook.ASSIGN_LAYOUTS == AssignLayouts.name


def test_switching_survives_dead_weak_proxies_among_the_objects():
    # torch keeps weak proxies whose objects are gone; isinstance() on one raises ReferenceError
    # (enable() after `import torch` failed so on an H100)
    import weakref

    class Referent:
        pass

    referent = Referent()
    proxies = [weakref.proxy(referent)]
    del referent
    try:
        linear_layouts.enable()
        linear_layouts.disable()
    finally:
        hook.disable()
    assert len(proxies) == 1
