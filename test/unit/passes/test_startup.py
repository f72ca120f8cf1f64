"""The plugin in every process of a program: the start-up hook, ``LINEAR_LAYOUTS`` and
``LINEAR_LAYOUTS_OPTIONS``, ``enable()`` reaching processes started after it, cache directories
of the plugin's own (Triton 3.6's and torch.compile's), counts across processes, remarks on
Triton cache hits, and torch.compile's compile workers.

Every scenario runs in a fresh interpreter (what a worker process is), with the environment
the test gives it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import textwrap

import pytest
from support import REPO

from linear_layouts.passes.drop_in import cache_dirs, environment, shared_stats

STARTUP_LINE = (REPO / "tools" / "install" / "linear_layouts_startup.pth").read_text()
HOOK_INSTALLED = os.path.exists(os.path.join(sysconfig.get_paths()["purelib"], "linear_layouts_startup.pth"))


def python(code: str, env: dict | None = None, cwd=None, timeout: int = 600) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS") or k in (
        "LINEAR_LAYOUTS_STRICT_CHECK", "LINEAR_LAYOUTS_CACHE", "LINEAR_LAYOUTS_STOCK_GATE")}
    clean["PYTHONPATH"] = os.pathsep.join([str(REPO / "test")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**clean, **(env or {})}, cwd=cwd, timeout=timeout)


def python_file(path, code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``code`` run as a program file (``@triton.jit`` reads its kernels' source from their file)."""
    path.write_text(textwrap.dedent(code))
    return python(f"import runpy; runpy.run_path({str(path)!r}, run_name='__main__')", env=env)


# -- the start-up hook's line and the package's import ---------------------------------------------

def test_startup_line_imports_nothing_without_the_variable():
    run = python(STARTUP_LINE + "\nimport sys; print('linear_layouts' in sys.modules, 'triton' in sys.modules)")
    assert run.returncode == 0 and run.stdout.split() == ["False", "False"], run.stderr


@pytest.mark.parametrize("value", ["0", "off", ""])
def test_startup_line_off_values(value):
    run = python(STARTUP_LINE + "\nimport sys; print('linear_layouts' in sys.modules)", env={"LINEAR_LAYOUTS": value})
    assert run.stdout.split() == ["False"], run.stderr


def test_startup_line_turns_the_plugin_on_after_triton_and_not_before():
    run = python(STARTUP_LINE + """
import sys
print('linear_layouts' in sys.modules, 'triton' in sys.modules, 'numpy' in sys.modules)
import triton
from linear_layouts.passes.drop_in import hook
print(hook.active_config().mode.value)
""", env={"LINEAR_LAYOUTS": "1"})
    assert run.returncode == 0, run.stderr
    # imported, but neither triton nor numpy: a process that never imports triton pays a small import
    assert run.stdout.split() == ["True", "False", "False", "linear"]


def test_startup_line_never_breaks_the_process():
    # linear_layouts cannot be imported: one line on stderr, the program runs on
    run = python("import sys; sys.modules['linear_layouts'] = None\n" + STARTUP_LINE + "\nprint('ran')",
                 env={"LINEAR_LAYOUTS": "1"})
    assert run.returncode == 0 and run.stdout.strip() == "ran"
    assert "linear-layouts: the start-up hook could not import linear_layouts" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_failing_turn_on_never_breaks_import_triton():
    run = python("""
        from linear_layouts.passes.drop_in.after_triton import call_after_triton_import
        def broken():
            raise RuntimeError("broken on purpose")
        call_after_triton_import(broken)
        import triton
        print("imported", triton.__version__ is not None)
    """)
    assert run.returncode == 0 and "imported True" in run.stdout
    assert "the plugin stays off in this process: RuntimeError: broken on purpose" in run.stderr


@pytest.mark.skipif(not HOOK_INSTALLED, reason="the start-up hook is not installed in this environment "
                                               "(make installs it; tools/install/startup_hook.py install)")
def test_installed_startup_hook_reaches_a_plain_python_process():
    run = python("""
        import sys
        assert 'triton' not in sys.modules
        import triton
        from linear_layouts.passes.drop_in import hook
        print(hook.active_config().mode.value, hook.active_config().remarks)
    """, env={"LINEAR_LAYOUTS": "legacy", "LINEAR_LAYOUTS_OPTIONS": '{"remarks": true}'})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["legacy", "true"]        # remarks in words (RemarkLevel.WORDS)


# -- the environment ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, mode", [("1", "linear"), ("on", "linear"), ("linear", "linear"), ("LEGACY", "legacy"),
                                         ("report", "report"), ("0", None), ("", None), ("false", None),
                                         ("sometimes", "sometimes")])
def test_requested_mode(value, mode):
    assert environment.requested_mode({"LINEAR_LAYOUTS": value}) == mode


def test_bad_settings_name_the_variable():
    with pytest.raises(environment.SettingError, match=re.escape("LINEAR_LAYOUTS_OPTIONS='{remarks': not JSON")):
        environment.requested_options({"LINEAR_LAYOUTS_OPTIONS": "{remarks"})
    with pytest.raises(environment.SettingError, match="expected a JSON object"):
        environment.requested_options({"LINEAR_LAYOUTS_OPTIONS": "[1]"})


def test_bad_options_warn_at_import_and_leave_the_plugin_off():
    run = python("""
        import linear_layouts, triton
        from linear_layouts.passes.drop_in import hook
        print(hook.active_config())
    """, env={"LINEAR_LAYOUTS": "1", "LINEAR_LAYOUTS_OPTIONS": '{"colour": "red"}'})
    assert run.returncode == 0 and run.stdout.strip() == "None" and "Traceback" not in run.stderr
    assert "linear-layouts stays off: LINEAR_LAYOUTS_OPTIONS: unknown option 'colour'" in run.stderr


def test_enable_writes_the_environment_for_later_processes_and_disable_restores_it():
    run = python("""
        import json, os, subprocess, sys
        import triton, linear_layouts
        linear_layouts.enable(only="shuffle,shared", remarks=True)
        print(os.environ["LINEAR_LAYOUTS"], json.loads(os.environ["LINEAR_LAYOUTS_OPTIONS"]) ==
              {"only": "shuffle,shared", "remarks": True})
        child = ("import triton; from linear_layouts.passes.drop_in import hook; c = hook.active_config(); "
                 "print(c.remarks, c.pipeline)")
        print(subprocess.run([sys.executable, "-c", "import linear_layouts; " + child], capture_output=True,
                             text=True, check=True).stdout.strip())
        linear_layouts.disable()
        print(os.environ.get("LINEAR_LAYOUTS"), os.environ.get("LINEAR_LAYOUTS_OPTIONS"))
    """)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "linear True"
    assert lines[1] == "true ll-lower-conversions{only=shuffle,shared remarks=true}"
    assert lines[2] == "None None"


def test_a_report_process_keeps_recording_in_its_children(tmp_path):
    # enable() inside a process that records (LINEAR_LAYOUTS=report) must not turn its children
    # from recording into plain plugin runs
    run = python("""
        import os, triton, linear_layouts
        linear_layouts.enable()
        print(os.environ["LINEAR_LAYOUTS"])
    """, env={"LINEAR_LAYOUTS": "report", "LINEAR_LAYOUTS_REPORT_DIR": str(tmp_path / "r")})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["report"]


# -- cache directories ---------------------------------------------------------------------------

def test_plugin_directory_is_never_nested():
    ours = cache_dirs.plugin_directory("/tmp/c", "0123456789abcdef" * 4)
    assert ours == os.path.join("/tmp/c", "linear_layouts", "0123456789abcdef")
    assert cache_dirs.plugin_directory(ours, "fedcba9876543210" * 4) == os.path.join(
        "/tmp/c", "linear_layouts", "fedcba9876543210")
    assert cache_dirs.stock_directory(ours) == "/tmp/c"
    assert cache_dirs.stock_directory("/tmp/linear_layouts/not-a-hash") == "/tmp/linear_layouts/not-a-hash"


def test_torch_compile_cache_is_the_plugins_own_while_on(tmp_path):
    run = python("""
        import os, triton, linear_layouts
        config = linear_layouts.enable()
        print(os.environ["TORCHINDUCTOR_CACHE_DIR"])
        print(config.cache_hash[:16])
        linear_layouts.disable()
        print(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    """, env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")})
    assert run.returncode == 0, run.stderr
    on, key, off = run.stdout.split()
    assert on == str(tmp_path / "inductor" / "linear_layouts" / key)
    assert off == str(tmp_path / "inductor")


def test_a_child_process_uses_its_parents_cache_directories(tmp_path):
    # Triton's (its own under 3.6) and torch.compile's: the same directories as the parent's, never nested ones
    run = python("""
        import os, subprocess, sys
        import triton, linear_layouts
        from linear_layouts.passes.drop_in import hook
        linear_layouts.enable()
        print(hook.hook_consulted_for_cache_key())
        print(triton.knobs.cache.dir, os.environ["TORCHINDUCTOR_CACHE_DIR"])
        child = ("import os, triton, linear_layouts; from linear_layouts.passes.drop_in import hook; "
                 "print(triton.knobs.cache.dir, os.environ['TORCHINDUCTOR_CACHE_DIR'])")
        print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout.strip())
    """, env={"TRITON_CACHE_DIR": str(tmp_path / "triton"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")})
    assert run.returncode == 0, run.stderr
    keyed_by_hook, parent, child = run.stdout.splitlines()
    assert parent == child
    triton_dir, inductor_dir = parent.split()
    assert inductor_dir.startswith(str(tmp_path / "inductor" / "linear_layouts") + os.sep)
    if keyed_by_hook == "True":     # 3.7+: Triton's key names the plugin; its directory stays
        assert triton_dir == str(tmp_path / "triton")
    else:
        assert triton_dir.startswith(str(tmp_path / "triton" / "linear_layouts") + os.sep)


# -- counts across processes --------------------------------------------------------------------

COMPILE_ONE = """
    import os, sys, triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import linear_layouts

    @triton.jit
    def transpose(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tl.load(X + offs[:, None] * BLOCK + offs[None, :]))

    def compile_one(block):
        triton.compile(ASTSource(transpose, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": block}),
                       target=GPUTarget("cuda", 90, 32))
"""


def test_counts_of_every_process_add_up(tmp_path):
    stats_dir = tmp_path / "stats"
    run = python_file(tmp_path / "prog.py", COMPILE_ONE + """
    linear_layouts.enable()
    compile_one(32)
    pid = os.fork()
    if pid == 0:              # a forked worker: its own kernel only, not its parent's again
        compile_one(64)
        os._exit(0)
    os.waitpid(pid, 0)
    from linear_layouts.passes.drop_in import hook
    total = hook.combined_stats(os.environ["LINEAR_LAYOUTS_STATS_DIR"])
    print(total.kernels, len(os.listdir(os.environ["LINEAR_LAYOUTS_STATS_DIR"])))
    """, env={"LINEAR_LAYOUTS_STATS_DIR": str(stats_dir), "TRITON_CACHE_DIR": str(tmp_path / "cache"),
              "TRITON_ALWAYS_COMPILE": "1"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "2"]


def test_read_snapshots_skips_what_is_not_a_snapshot(tmp_path):
    (tmp_path / "1.json").write_text('{"kernels": 3}')
    (tmp_path / "2.json").write_text("{half")
    (tmp_path / "notes.txt").write_text("x")
    assert shared_stats.read_snapshots(str(tmp_path)) == [{"kernels": 3, "pid": "1"}]


# -- remarks for kernels from Triton's cache ------------------------------------------------------

def test_remarks_say_when_a_kernel_came_from_the_cache(tmp_path):
    code = COMPILE_ONE + """
    linear_layouts.enable(remarks=True)
    compile_one(32)
    """
    env = {"TRITON_CACHE_DIR": str(tmp_path / "cache")}
    program = tmp_path / "prog.py"
    first, second = python_file(program, code, env=env), python_file(program, code, env=env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    message = "linear-layouts: kernel transpose: taken from Triton's cache, not compiled"
    assert message not in first.stderr
    assert message in second.stderr and "TRITON_ALWAYS_COMPILE=1" in second.stderr


# -- torch.compile's compile workers ----------------------------------------------------------------

POOL = """
    import os, sys
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "2")
    import torch
    from torch._inductor import async_compile
    import triton, linear_layouts
    from support.plugin_probe import plugin_state

    def in_a_worker():
        return async_compile.AsyncCompile.process_pool().submit(plugin_state).result(timeout=300)

    print("before", in_a_worker()[1])          # the pool is up, started without the plugin
    linear_layouts.enable(remarks=True)
    print("after", *in_a_worker()[1:])         # enable() restarted it: its workers compile with the plugin
    linear_layouts.disable()
    print("disabled", in_a_worker()[1])
"""


@pytest.mark.parametrize("start", ["subprocess", "fork", "spawn"])
def test_enable_reaches_torch_compile_workers_started_before_it(start):
    pytest.importorskip("torch", reason="torch is not installed: the compile-worker test needs torch's Inductor")
    if not HOOK_INSTALLED:
        pytest.skip("the start-up hook is not installed in this environment (make installs it)")
    run = python(POOL, env={"TORCHINDUCTOR_WORKER_START": start}, cwd=str(REPO / "test"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-3:] == ["before None", "after linear True", "disabled None"]


def test_startup_hook_installer_says_where_and_refuses_a_bad_command():
    script = str(REPO / "tools" / "install" / "startup_hook.py")
    status = subprocess.run([sys.executable, script, "status"], capture_output=True, text=True)
    assert status.returncode == 0
    assert status.stdout.strip() == (f"{os.path.join(sysconfig.get_paths()['purelib'], 'linear_layouts_startup.pth')}: "
                                     f"{'installed' if HOOK_INSTALLED else 'not installed'}")
    wrong = subprocess.run([sys.executable, script, "instal"], capture_output=True, text=True)
    assert wrong.returncode == 1 and "usage:" in wrong.stderr and "Traceback" not in wrong.stderr
