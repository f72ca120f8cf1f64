"""``python -m linear_layouts run|report`` given what is not a Python program, and ``run``'s own
options: ``report kernel.ttgir`` reports the module (it used to run the IR as Python: a
SyntaxError traceback, then an empty report); a file that is not Python leaves no report behind;
``run --help`` is run's usage (it used to answer "no such program: --help"); ``run`` prints the
plugin's summary at exit, ``--quiet`` leaves it out."""

import os
import subprocess
import sys
import textwrap

import pytest

triton = pytest.importorskip("triton")

PROGRAM = textwrap.dedent("""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource


    @triton.jit
    def transpose(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tile = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
        tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tile)


    kernel = triton.compile(ASTSource(transpose, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 32}),
                            target=GPUTarget("cuda", 90, 32))
    with open("transpose.ttgir", "w") as f:
        f.write(kernel.asm["ttgir"])
""")


def linear_layouts(tmp_path, *args):
    """``python -m linear_layouts ARGS`` in ``tmp_path``, with a Triton cache of its own (so the
    plugin compiles: a kernel served from the cache never reaches it)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST")}
    env.update(TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    return subprocess.run([sys.executable, "-m", "linear_layouts", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)


def assert_one_error_line(run, *phrases):
    assert run.returncode == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("linear_layouts: error: "), run.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


@pytest.fixture(scope="module")
def ttgir_file(tmp_path_factory):
    """A TTGIR module as Triton's cache keeps it: the transpose's, compiled for sm_90."""
    folder = tmp_path_factory.mktemp("ttgir")
    (folder / "program.py").write_text(PROGRAM)
    run = linear_layouts(folder, "run", "--quiet", "program.py")
    assert run.returncode == 0, run.stderr
    return folder / "transpose.ttgir"


# ----------------------------------------------------------------------------- report on a module

def test_report_of_a_ttgir_module(ttgir_file, tmp_path):
    run = linear_layouts(tmp_path, "report", "--format", "md", "--no-compare", "-o", "out", str(ttgir_file))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "1 kernel (1 compile), 1 with layout conversions; 1 conversion" in run.stdout
    assert "## transpose on sm_90" in run.stdout
    assert f"Read from a TTGIR file: {ttgir_file} (no program ran)." in run.stdout
    assert (tmp_path / "out" / "report.md").is_file()


def test_report_of_a_ttgir_module_as_html(ttgir_file, tmp_path):
    run = linear_layouts(tmp_path, "report", "--no-compare", "--pictures", "0", "-o", "out", str(ttgir_file))
    assert run.returncode == 0, run.stderr
    assert "transpose" in (tmp_path / "out" / "index.html").read_text()


@pytest.mark.parametrize("options, phrase", [
    (["--measure"], "--measure is for a program that runs"),
    (["--mode", "linear"], "--mode linear is for a program that runs"),
])
def test_a_module_takes_no_program_options(ttgir_file, tmp_path, options, phrase):
    run = linear_layouts(tmp_path, "report", "-o", "out", *options, str(ttgir_file))
    assert_one_error_line(run, phrase)
    assert not (tmp_path / "out").exists()


def test_a_module_takes_no_arguments(ttgir_file, tmp_path):
    run = linear_layouts(tmp_path, "report", "-o", "out", str(ttgir_file), "--steps", "3")
    assert_one_error_line(run, "it takes no arguments (got: --steps 3)")
    assert not (tmp_path / "out").exists()


def test_a_module_without_a_target_is_refused(tmp_path):
    """TTIR (before Triton's ttgir stage) has no layouts and no ttg.target."""
    (tmp_path / "kernel.mlir").write_text("module {\n  tt.func @f() {\n    tt.return\n  }\n}\n")
    run = linear_layouts(tmp_path, "report", "-o", "out", "kernel.mlir")
    assert_one_error_line(run, "kernel.mlir: no ttg.target attribute")
    assert not (tmp_path / "out").exists()


def test_a_module_triton_cannot_parse_is_refused(tmp_path):
    (tmp_path / "kernel.ttgir").write_text("this is not MLIR\n")
    run = linear_layouts(tmp_path, "report", "-o", "out", "kernel.ttgir")
    assert_one_error_line(run, "kernel.ttgir: not a TTGIR module Triton can parse")
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- not Python

def test_a_file_that_is_not_python_leaves_no_report(ttgir_file, tmp_path):
    """TTGIR under a .py name, and plain bad Python: one line naming the file and line, exit 1,
    no report directory (it used to be a SyntaxError traceback and an empty report)."""
    (tmp_path / "kernel.py").write_text(ttgir_file.read_text())
    run = linear_layouts(tmp_path, "report", "-o", "out", "kernel.py")
    assert_one_error_line(run, "kernel.py:", "not a Python program", "it looks like a TTGIR module: name it .ttgir")
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    run = linear_layouts(tmp_path, "report", "-o", "out", "broken.py")
    assert_one_error_line(run, "broken.py:1: not a Python program")
    assert not (tmp_path / "out").exists()


def test_run_refuses_a_module(ttgir_file, tmp_path):
    run = linear_layouts(tmp_path, "run", str(ttgir_file))
    assert_one_error_line(run, "is a TTGIR module, not a Python program", "python -m linear_layouts report")


# ----------------------------------------------------------------------------- run's options

@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_run_help_is_runs_usage(tmp_path, flag):
    run = linear_layouts(tmp_path, "run", flag)
    assert run.returncode == 0 and run.stderr == ""
    assert run.stdout.startswith("usage: python -m linear_layouts run [-h] [--version] [--quiet] [-m MODULE]")
    assert "--quiet" in run.stdout and "no such program" not in run.stdout


def test_run_prints_the_plugins_summary_unless_quiet(tmp_path):
    (tmp_path / "program.py").write_text(PROGRAM)
    run = linear_layouts(tmp_path, "run", "program.py")
    assert run.returncode == 0, run.stderr
    assert "linear-layouts: 1 kernel, 1 with islands, 1 of 1 conversions lowered by us" in run.stderr
    quiet = linear_layouts(tmp_path, "run", "--quiet", "program.py")
    assert quiet.returncode == 0 and "linear-layouts:" not in quiet.stderr, quiet.stderr


def test_run_counts_the_kernels_of_the_programs_workers(tmp_path):
    """A kernel compiled in a process the program starts is in the summary (LINEAR_LAYOUTS_STATS_DIR)."""
    (tmp_path / "worker.py").write_text("import linear_layouts\n" + PROGRAM)
    (tmp_path / "program.py").write_text("import subprocess, sys\n"
                                         "subprocess.run([sys.executable, 'worker.py'], check=True)\n")
    run = linear_layouts(tmp_path, "run", "program.py")
    assert run.returncode == 0, run.stderr
    assert "linear-layouts: 1 kernel, 1 with islands" in run.stderr


def test_run_says_what_the_summary_cannot_count(tmp_path):
    """Nothing compiled in this process: the summary says why that may read 0."""
    (tmp_path / "program.py").write_text("print('no kernels')\n")
    run = linear_layouts(tmp_path, "run", "program.py")
    assert run.returncode == 0 and "no kernels" in run.stdout
    assert "linear-layouts: 0 kernels" in run.stderr and "TRITON_ALWAYS_COMPILE=1" in run.stderr


def test_a_programs_arguments_are_its_own(tmp_path):
    """After the program, --help and --quiet are the program's."""
    (tmp_path / "program.py").write_text("import sys\nprint(sys.argv[1:])\n")
    run = linear_layouts(tmp_path, "run", "program.py", "--help", "--quiet")
    assert run.returncode == 0 and "['--help', '--quiet']" in run.stdout
    assert "linear-layouts: 0 kernels" in run.stderr


def test_the_summary_is_printed_when_the_program_exits_with_a_status(tmp_path):
    (tmp_path / "program.py").write_text("import sys\nsys.exit(3)\n")
    run = linear_layouts(tmp_path, "run", "program.py")
    assert run.returncode == 3 and "linear-layouts: 0 kernels" in run.stderr


def test_a_program_that_compiles_no_kernel_gets_one_line_and_no_report(tmp_path):
    program = tmp_path / "empty.py"
    program.write_text("x = 1\n")
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "-o", str(out), str(program)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip() == ("linear_layouts: error: the program compiled no Triton kernel: there is nothing to "
                                  "report (a kernel compiles when it is first launched, or through triton.compile)")
    assert not (out / "index.html").exists()


def _gpu_driver_active() -> bool:
    try:
        from triton.runtime import driver
        driver.active.get_current_target()
        return True
    except Exception:
        return False


@pytest.mark.skipif(_gpu_driver_active(), reason="a GPU is present: the launch runs")
def test_a_program_launching_a_kernel_without_a_gpu_gets_one_line_with_the_way_out(tmp_path):
    program = tmp_path / "launch.py"
    program.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def fill(x, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x + offs, offs, mask=offs < n)

        fill[(1,)](0, 4, BLOCK=128)
    """))
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "-o", str(out), str(program)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("linear_layouts: error: ") and "launch.py launched a Triton kernel" in lines[0]
    assert 'target=GPUTarget("cuda", 90, 32)' in lines[0] and not (out / "index.html").exists()
