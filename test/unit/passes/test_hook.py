"""linear_layouts.enable(): our passes run inside triton.compile, and never share a cache entry
with stock Triton (3.7+: the hook's cache key; 3.6: a private cache directory)."""

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
from linear_layouts.passes import hook  # noqa: E402

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


def test_private_cache_dir_on_triton_3_6(tmp_path):
    before = triton.knobs.cache.dir
    linear_layouts.enable(pipeline=REPORTING)
    if hook.hook_consulted_for_cache_key():
        assert triton.knobs.cache.dir == before
    else:
        assert triton.knobs.cache.dir.startswith(os.path.join(before, "linear_layouts"))
    linear_layouts.disable()
    assert triton.knobs.cache.dir == before


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
    with pytest.raises(hook.PluginError, match="expected 1, linear or legacy"):
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
        # Our islands speak inline PTX: more `asm sideeffect` blocks than stock's own lowering.
        assert ours.asm["llir"].count("asm sideeffect") > stock.asm["llir"].count("asm sideeffect")
        assert "ld.shared" in ours.asm["ptx"] or "ldmatrix" in ours.asm["ptx"]
    else:
        assert "ds_write" in ours.asm["amdgcn"] and "ds_read" in ours.asm["amdgcn"]


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
    imported = subprocess.run([sys.executable, "-c", "import linear_layouts; print(linear_layouts.passes.hook.active_config())"],
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
