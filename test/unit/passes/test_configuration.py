"""The plugin's settings, one typed configuration (``passes.drop_in.environment``): each declared
once in ``enable_options.ENABLE_OPTIONS`` (and so a keyword of ``enable()``), read into its type
in one place from ``enable()``, the older per-setting variable or ``LINEAR_LAYOUTS_OPTIONS``, a
bad value a clear error, and a process's settings reaching the processes it starts as one JSON.
That no other module reads the environment: ``test_import_graph.py``."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from support import REPO

from linear_layouts.lowering import settings as lowering_settings
from linear_layouts.passes.drop_in import enable_options, environment

SETTING_VARIABLES = [option.variable for option in enable_options.SETTINGS]


@pytest.fixture
def clean_environment(monkeypatch):
    """No setting from the suite's environment (its conftest sets three of the older variables)."""
    for name in SETTING_VARIABLES + [environment.OPTIONS_VARIABLE]:
        monkeypatch.delenv(name, raising=False)
    environment.use_given_settings({})


def test_every_setting_is_an_option_with_the_defaults_of_the_typed_settings():
    fields = {field.name: field.default for field in dataclasses.fields(lowering_settings.Settings)}
    assert fields == {option.name: option.default for option in enable_options.SETTINGS}
    assert all(option.variable.startswith("LINEAR_LAYOUTS_") for option in enable_options.SETTINGS)
    assert set(enable_options.SETTING_NAMES) <= set(enable_options.NAMES)      # keywords of enable()


def test_defaults_without_any_setting(clean_environment):
    assert environment.settings() == lowering_settings.Settings()
    assert lowering_settings.current() == lowering_settings.Settings()      # what lowering/ and the passes read


def test_each_source_in_its_order(clean_environment, monkeypatch):
    """enable()'s keyword, then the older variable, then the JSON, then the default."""
    monkeypatch.setenv(environment.OPTIONS_VARIABLE, json.dumps({"stock_gate": False, "round_scratch": 0,
                                                                 "island_cache_dir": ""}))
    current = environment.settings()
    assert (current.stock_gate, current.round_scratch, current.island_cache_dir) == (False, 0, "")
    monkeypatch.setenv("LINEAR_LAYOUTS_ROUND_SCRATCH", "65536")
    assert environment.settings().round_scratch == 65536 and lowering_settings.current().round_scratch == 65536
    environment.use_given_settings({"round_scratch": 4096, "stock_gate": True})
    try:
        assert (lowering_settings.current().round_scratch, lowering_settings.current().stock_gate) == (4096, True)
    finally:
        environment.use_given_settings({})
    assert environment.settings().stock_gate is False


@pytest.mark.parametrize("source, value, message", [
    ("variable", "16k", "LINEAR_LAYOUTS_ROUND_SCRATCH='16k': expected a number of bytes, 0 or more"),
    ("json", "16k", "LINEAR_LAYOUTS_OPTIONS round_scratch='16k': expected a number of bytes, 0 or more"),
    ("json", -1, "LINEAR_LAYOUTS_OPTIONS round_scratch=-1: expected a number of bytes"),
    ("json", True, "LINEAR_LAYOUTS_OPTIONS round_scratch=True: expected a number of bytes"),
])
def test_a_bad_value_names_where_it_came_from_and_what_is_expected(clean_environment, monkeypatch, source, value,
                                                                   message):
    if source == "variable":
        monkeypatch.setenv("LINEAR_LAYOUTS_ROUND_SCRATCH", value)
    else:
        monkeypatch.setenv(environment.OPTIONS_VARIABLE, json.dumps({"round_scratch": value}))
    with pytest.raises(environment.SettingError, match=message):
        environment.settings()


def test_a_bad_flag_lists_the_words(clean_environment, monkeypatch):
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "sometimes")
    with pytest.raises(environment.SettingError, match=r"LINEAR_LAYOUTS_STOCK_GATE='sometimes': expected true or "
                                                       r"false \(1, on, true, yes; 0, off, false, no\)"):
        environment.settings()


def test_enable_names_a_bad_setting_and_stays_as_it_was(clean_environment):
    pytest.importorskip("triton")
    from linear_layouts.passes.drop_in import hook

    with pytest.raises(hook.PluginError, match="strict_check='yes please': expected true or false"):
        hook.enable(strict_check="yes please")
    assert hook.active_config() is None
    assert environment.settings() == lowering_settings.Settings()


def test_ll_opt_names_a_bad_setting_in_one_line(monkeypatch):
    env = {**os.environ, "LINEAR_LAYOUTS_OPTIONS": '{"in_place": "maybe"}'}
    run = subprocess.run([sys.executable, "-m", "linear_layouts.tools.ll_opt",
                          str(REPO / "test" / "lit" / "lower-conversions" / "fewer-rounds.mlir")],
                         capture_output=True, text=True, env=env, cwd=REPO.parent)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.strip() == ("ll-opt: error: LINEAR_LAYOUTS_OPTIONS in_place='maybe': expected true or false "
                                  "(1, on, true, yes; 0, off, false, no)")


def test_enable_hands_its_settings_to_later_processes_as_one_json():
    """A setting given to enable() wins over the environment's in this process and reaches a
    process started afterwards in ``LINEAR_LAYOUTS_OPTIONS``, with the settings the JSON had."""
    code = """
        import json, os, subprocess, sys
        import triton, linear_layouts
        from linear_layouts.lowering import settings
        linear_layouts.enable(remarks=True, stock_gate=True, round_scratch=0)
        print(settings.current().stock_gate, settings.current().round_scratch, settings.current().strict_check)
        print(json.dumps(json.loads(os.environ["LINEAR_LAYOUTS_OPTIONS"]), sort_keys=True))
        child = ("import triton, linear_layouts; from linear_layouts.lowering import settings; "
                 "s = settings.current(); print(s.stock_gate, s.round_scratch, s.strict_check)")
        env = {k: v for k, v in os.environ.items() if k != "LINEAR_LAYOUTS_STOCK_GATE"}
        print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True,
                             env=env).stdout.strip())
        linear_layouts.disable()
        print(settings.current().stock_gate, os.environ.get("LINEAR_LAYOUTS_OPTIONS"))
    """
    import textwrap

    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS")}
    env.update({"LINEAR_LAYOUTS_STOCK_GATE": "off", "LINEAR_LAYOUTS_OPTIONS": '{"strict_check": true}',
                "PYTHONPATH": os.pathsep.join([str(REPO / "test")] + [p for p in [os.environ.get("PYTHONPATH")] if p])})
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "True 0 True"
    assert lines[1] == '{"remarks": true, "round_scratch": 0, "stock_gate": true, "strict_check": true}'
    assert lines[2] == "True 0 True"
    assert lines[3] == 'False {"strict_check": true}'


def test_study_switches_are_no_settings():
    """The switches that exist only for studies are module constants a study sets in its own
    process, not settings: no variable of theirs is read, and each marks the cache key."""
    from linear_layouts.lowering.choosing import fitted_model
    from linear_layouts.lowering.emit import emit_nvidia

    assert (fitted_model.SHARED_PICKS_KEPT, emit_nvidia.SHARED_ACCESS_FORM, emit_nvidia.BYTES_AS_VECTORS) == (
        False, "llvm", False)
    for gone in ("LINEAR_LAYOUTS_SHARED_PICKS", "LINEAR_LAYOUTS_SHARED_ACCESS", "LINEAR_LAYOUTS_BYTE_VECTORS"):
        assert gone not in {option.variable for option in enable_options.ENABLE_OPTIONS}
