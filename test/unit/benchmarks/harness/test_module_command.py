"""A harness module that runs in a child process starts as ``python -m harness.<name>`` from
benchmarks/ (``harness.common.module_command``), so its own ``import harness...`` works with
nothing added to ``sys.path``; any other script starts by its path.  Checked end to end on the
CPU with ``compile_time.py fuzz``'s child: one small conversion compiled for sm_90, stock and ours."""

import os
import sys

import pytest

from support import REPO

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
from harness import common  # noqa: E402

BENCHMARKS = os.path.join(str(REPO), "benchmarks")


def test_a_harness_module_runs_as_a_module_and_a_script_by_its_path(tmp_path):
    argv, cwd = common.module_command(os.path.join(BENCHMARKS, "harness", "gluon_auto_suite.py"))
    assert argv == [sys.executable, "-m", "harness.gluon_auto_suite"]
    assert os.path.realpath(cwd) == os.path.realpath(BENCHMARKS)
    script = tmp_path / "child.py"
    assert common.module_command(str(script))[0] == [sys.executable, str(script)]


def test_compile_time_fuzz_child_starts_as_a_module(tmp_path):
    pytest.importorskip("triton")
    from harness import compile_time_fuzz
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

    blocked = "#ttg.blocked<{{sizePerThread = [1, {0}], threadsPerWarp = [{1}, {2}], warpsPerCTA = [4, 1], order = [1, 0]}}>"
    text = single_convert_ttgir((64, 64), "f32", blocked.format(4, 2, 16), blocked.format(1, 1, 32), 4, "sm_90")
    path = tmp_path / "case.ttgir"
    path.write_text(text)
    for mode in ("stock", "default"):
        result = compile_time_fuzz.compile_in_child(mode, str(path), "sm_90", timeout=300)
        assert result["status"] == "ok", result
        assert result["seconds"] > 0 and "islands" in result   # linear_layouts.stats() of the child


def test_publish_writes_into_a_folder_it_makes(tmp_path, capsys):
    """A GPU run's ``--out $OUT/name`` names a folder that does not exist yet: the report is
    written there (before, the run's results were lost to a FileNotFoundError at the end)."""
    out = tmp_path / "matmul" / "report.md"
    common.publish("| a | b |", str(out))
    assert out.read_text() == "| a | b |\n"
    assert capsys.readouterr().out == "| a | b |\n"
