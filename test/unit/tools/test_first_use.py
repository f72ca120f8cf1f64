"""What a new user types on a first afternoon: ``--version`` on every command, help that reads as
text, counts that include the Gluon work, a Markdown report alone on stdout, programs and modules
found from anywhere, and the TTIR answer given once."""

import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from linear_layouts import __version__
from linear_layouts.passes.drop_in.plugin_stats import Fallback, PluginStats

BIN = Path(sys.executable).parent
COMMANDS = [[str(BIN / name)] for name in ("ll-opt", "ll-viz", "ll-demo", "ll-fuzz")] + \
           [[sys.executable, "-m", "linear_layouts"]]


def run(command, cwd, *args, timeout=120):
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST")}
    env.update(TRITON_CACHE_DIR=str(Path(cwd) / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: Path(c[-1]).name)
def test_every_command_has_version(command, tmp_path):
    done = run(command, tmp_path, "--version")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    line = done.stdout.strip()
    assert f" {__version__} " in line and f"triton {metadata.version('triton')}" in line, line


def test_the_modules_help_is_text_not_markup(tmp_path):
    done = run(COMMANDS[-1], tmp_path, "--help")
    assert done.returncode == 0
    assert "``" not in done.stdout and "::\n" not in done.stdout
    assert "python -m linear_layouts report --format md examples/report_example.py" in done.stdout


def test_ll_fuzz_explains_each_option(tmp_path):
    done = run(COMMANDS[3], tmp_path, "--help")
    assert done.returncode == 0
    for option in ("--cases", "--seed", "--jobs", "--compile", "--targets"):
        lines = [line for line in done.stdout.splitlines() if line.strip().startswith(option)]
        text = done.stdout[done.stdout.index(lines[0]):].split("\n  -")[0]
        assert len(text.split()) > 3, f"{option} has no help: {text!r}"


# ----------------------------------------------------------------------------- stats().summary()

def test_the_summary_counts_the_gluon_work():
    """After enable(apply_advice=True) on one Gluon kernel the summary read "1 kernels, 0 with
    islands, 0 of 0 conversions": the advice applied and the layouts resolved were not counted."""
    text = PluginStats(kernels=2, advice_applied=1, auto_layouts_resolved=1).summary()
    assert text == ("linear-layouts: 2 kernels, 0 with islands, 0 of 0 conversions lowered by us, "
                    "0 kernels compiled without them after a failure; Gluon: automatic layouts resolved in "
                    "1 kernel, layout advice applied in 1")


def test_the_summary_gives_each_fallbacks_reason():
    stats = PluginStats(kernels=1, conversions=3, islands=2, kernels_with_islands=1,
                        fallbacks=[Fallback("k", "ptx", "ptxas failed")])
    lines = stats.summary().splitlines()
    assert lines[0].startswith("linear-layouts: 1 kernel, 1 with islands, 2 of 3 conversions lowered by us, "
                               "1 kernel compiled without them after a failure")
    assert lines[1:] == ["  k: ptx: ptxas failed"]


# ----------------------------------------------------------------------------- report and run

PRINTING_PROGRAM = "print('the program talks')\n"
# A program that prints and compiles one small kernel for sm_90 (a report needs a kernel).
COMPILING_PROGRAM = PRINTING_PROGRAM + """
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def copy(x, y, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.load(x + offs))

triton.compile(ASTSource(copy, {"x": "*fp32", "y": "*fp32", "N": "constexpr"}, {"N": 128}),
               target=GPUTarget("cuda", 90, 32))
"""


def test_report_md_writes_the_report_alone_to_stdout(tmp_path):
    (tmp_path / "prog.py").write_text(COMPILING_PROGRAM)
    done = run(COMMANDS[-1], tmp_path, "report", "--format", "md", "prog.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# linear-layouts report"), done.stdout[:200]
    assert "the program talks" not in done.stdout and "the program talks" in done.stderr


@pytest.mark.parametrize("command", ["run", "report"])
def test_a_module_runs_as_python_m_runs_it(command, tmp_path):
    (tmp_path / "mine.py").write_text("import sys\nprint('module ran with', sys.argv[1:])\n")
    done = run(COMMANDS[-1], tmp_path, command, "-m", "mine", "--flag", "x")
    assert "module ran with ['--flag', 'x']" in done.stdout + done.stderr
    if command == "run":
        assert done.returncode == 0, done.stderr
    else:   # the module compiles no kernel: nothing to report, said in one line
        assert done.returncode == 1 and "the program compiled no Triton kernel" in done.stderr


def test_an_unknown_module_is_one_error_line(tmp_path):
    done = run(COMMANDS[-1], tmp_path, "report", "-m", "no_such_module_here")
    assert done.returncode == 1
    assert done.stderr == "linear_layouts: error: no such module: no_such_module_here\n"


def test_a_missing_program_names_the_installed_examples(tmp_path):
    done = run(COMMANDS[-1], tmp_path, "report", "nothing_here.py")
    assert done.returncode == 1
    assert "no such program: nothing_here.py" in done.stderr
    assert "examples/report_example.py" in done.stderr and "-m linear_layouts.examples.NAME" in done.stderr


def test_an_example_the_docs_name_runs_from_anywhere(tmp_path, monkeypatch):
    """``examples/report_example.py`` from a directory without it: the installed example runs
    (the commands of the docs, run from elsewhere: test_doc_commands)."""
    from linear_layouts import __main__ as cli
    monkeypatch.chdir(tmp_path)
    found = cli.installed_example("examples/report_example.py")
    assert found and os.path.samefile(found, Path(cli.__file__).parent / "examples" / "report_example.py")
    assert cli.installed_example("elsewhere/report_example.py") is None
    assert cli.installed_example("examples/__init__.py") is None


TTIR = textwrap.dedent("""\
    module {
      tt.func public @k(%arg0: !tt.ptr<f32>) {
        tt.return
      }
    }
""")


@pytest.mark.parametrize("name", ["kernel.ttir", "kernel.py"])
def test_ttir_gets_one_answer(name, tmp_path):
    """A TTIR module is refused as TTIR, under any name (a .ttir used to be told to be renamed
    .ttgir, then be refused as TTIR)."""
    (tmp_path / name).write_text(TTIR)
    done = run(COMMANDS[-1], tmp_path, "report", name)
    assert done.returncode == 1
    assert done.stderr.startswith(f"linear_layouts: error: {name} is a TTIR module"), done.stderr
    assert "name it .ttgir" not in done.stderr and "give the kernel's TTGIR" in done.stderr


def test_the_suite_runs_in_a_clone_named_like_the_repository():
    """``git clone .../linear-layouts`` gives a folder whose name is no Python name.  pytest then
    imports the repository's ``__init__.py`` (the root is a package) as a top-level module named
    ``__init__``; with relative imports there every test errored at setup (``attempted relative
    import with no known parent package``).  Imported that way it must load."""
    repo = Path(__file__).resolve().parents[3]
    code = textwrap.dedent(f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("__init__", {str(repo / "__init__.py")!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(module.__version__)
    """)
    env = {k: v for k, v in os.environ.items() if k != "LINEAR_LAYOUTS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == __version__
