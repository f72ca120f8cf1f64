"""The first parse of a module, where an abort cannot take the caller down
(``passes/ir/parse_checker.py``): the checker process answers exactly as a forked child does
(accepted or not, what Triton printed, the signal of an abort), a dead checker is replaced, and
the rule sends big or threaded processes to the checker and small ones to a fork."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from linear_layouts.passes.ir import parse_checker
from linear_layouts.passes.ir.bindings import bindings, new_context
from linear_layouts.passes.ir.diagnostics import IRError
from linear_layouts.passes.ir.sandbox import run_in_child
from linear_layouts.passes.ir.snapshot import parse_module

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="compares with a forked child (POSIX only)")

VALID = ('module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 32 : i32} {\n'
         '  tt.func public @f(%x: tensor<64xf32, #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], '
         'warpsPerCTA = [1], order = [0]}>>) {\n    tt.return\n  }\n}\n')
# A syntax error: Triton prints a diagnostic and the bindings raise.
MALFORMED = VALID.replace("tt.return", "tt.return %nothing : f32")
# A #ttg.linear that misses half the elements: Triton's parser hits an LLVM fatal error (abort).
ABORTS = VALID.replace("#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>",
                       "#ttg.linear<{register = [[64]], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>")


def _parse_in_child(path: str):
    """What parsing.parse_handle hands to parse_first: a parse in a fresh context."""
    def parse() -> str:
        bindings().parse_mlir_module(path, new_context())
        return ""
    return parse


def _forked(path: str):
    return run_in_child(_parse_in_child(path), report_exception=False)


@pytest.fixture
def checker():
    made = parse_checker.Checker()
    yield made
    made.close()


@pytest.mark.parametrize("name", ["valid", "malformed", "aborts"])
def test_the_checker_answers_as_a_forked_child(name, checker, tmp_path):
    path = tmp_path / f"{name}.mlir"
    path.write_text({"valid": VALID, "malformed": MALFORMED, "aborts": ABORTS}[name])
    (tmp_path / "first.mlir").write_text(VALID)
    assert checker.parse(str(tmp_path / "first.mlir")).ok     # (a death before the first answer: below)
    forked, checked = _forked(str(path)), checker.parse(str(path))
    assert checked == forked
    assert checked.ok == (name == "valid")
    assert (checked.signal is not None) == (name == "aborts")
    if name == "malformed":
        assert "error:" in checked.output and str(path) in checked.output
    if name == "aborts":
        assert "surjective" in checked.output


def test_a_context_that_served_earlier_parses_answers_alike(tmp_path):
    """The checker keeps its context over a number of parses (here 2), then renews it: the
    answers are a fresh child's all along."""
    checker = parse_checker.Checker(context_parses=2)
    paths = []
    for name, text in (("valid", VALID), ("malformed", MALFORMED), ("valid", VALID.replace("@f", "@g"))):
        paths.append(tmp_path / f"{name}_{len(paths)}.mlir")
        paths[-1].write_text(text)
    try:
        for path in paths * 3:
            assert checker.parse(str(path)) == _forked(str(path))
    finally:
        checker.close()


def test_a_checker_that_triton_took_down_is_replaced(checker, tmp_path):
    (tmp_path / "aborts.mlir").write_text(ABORTS)
    (tmp_path / "valid.mlir").write_text(VALID)
    assert checker.parse(str(tmp_path / "valid.mlir")).ok
    first = checker._process.pid
    assert checker.parse(str(tmp_path / "aborts.mlir")).signal is not None
    assert checker._process is None
    assert checker.parse(str(tmp_path / "valid.mlir")).ok
    assert checker._process.pid != first


@pytest.fixture
def big_process(monkeypatch):
    """parse_first's rule says "checker"; a fresh checker for the test."""
    monkeypatch.setattr(parse_checker, "forking_is_cheap", lambda: False)
    made = parse_checker.Checker()
    monkeypatch.setattr(parse_checker, "_checker", lambda: made)
    yield made
    made.close()


def test_an_abort_on_a_fresh_checkers_first_parse_is_the_forked_childs_answer(big_process, tmp_path):
    path = tmp_path / "aborts.mlir"
    path.write_text(ABORTS)
    outcome = parse_checker.parse_first(str(path), _parse_in_child(str(path)))
    assert outcome == _forked(str(path)) and outcome.signal is not None
    assert big_process.usable                      # the module's doing: the checker serves on
    (tmp_path / "valid.mlir").write_text(VALID)
    assert parse_checker.parse_first(str(tmp_path / "valid.mlir"), _parse_in_child(str(tmp_path / "valid.mlir"))).ok
    assert big_process._process is not None


def test_a_checker_that_cannot_start_leaves_every_parse_to_a_fork(big_process, tmp_path, monkeypatch):
    """An interpreter that cannot run the checker (here: one that exits at once) costs one
    failed start; the process then forks, as it did before the checker."""
    starts = []
    monkeypatch.setattr(parse_checker.Checker, "_start", lambda self: starts.append(1) or subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.exit(3)"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    for name, text in (("valid", VALID), ("malformed", MALFORMED), ("valid2", VALID)):
        path = tmp_path / f"{name}.mlir"
        path.write_text(text)
        assert parse_checker.parse_first(str(path), _parse_in_child(str(path))) == _forked(str(path))
    assert starts == [1] and not big_process.usable


def test_the_rule_forks_only_a_small_single_threaded_process(monkeypatch):
    monkeypatch.setattr(parse_checker, "private_memory", lambda: 10 << 20)
    assert parse_checker.forking_is_cheap()
    monkeypatch.setattr(parse_checker, "private_memory", lambda: parse_checker.FORK_LIMIT_BYTES + 1)
    assert not parse_checker.forking_is_cheap()
    monkeypatch.setattr(parse_checker, "private_memory", lambda: None)      # no /proc: fork, as ever
    assert parse_checker.forking_is_cheap()
    waiting = threading.Event()
    thread = threading.Thread(target=waiting.wait)
    thread.start()
    try:
        assert not parse_checker.forking_is_cheap()
    finally:
        waiting.set()
        thread.join()


def test_private_memory_reads_this_process():
    before = parse_checker.private_memory()
    if before is None:
        pytest.skip("this system has no /proc/self/statm")
    ballast = bytearray(64 << 20)
    ballast[::4096] = b"x" * len(ballast[::4096])    # touch every page
    assert parse_checker.private_memory() - before >= 60 << 20


@pytest.mark.parametrize("limit", [0, 1 << 40], ids=["checker", "fork"])
def test_parse_module_reports_either_way_alike(limit, monkeypatch):
    """What a user sees (the error of an abort, a module that parses) does not depend on the way."""
    monkeypatch.setattr(parse_checker, "FORK_LIMIT_BYTES", limit)
    monkeypatch.setattr(parse_checker, "private_memory", lambda: 1 << 30)
    monkeypatch.setattr(parse_checker.threading, "active_count", lambda: 1)   # (pytest-xdist runs a thread)
    used = []
    monkeypatch.setattr(parse_checker.Checker, "parse",
                        lambda self, path, real=parse_checker.Checker.parse: used.append(path) or real(self, path))
    with pytest.raises(IRError) as error:
        parse_module(ABORTS, "abort.mlir")
    assert str(error.value).startswith("abort.mlir:1:1: error: Triton aborted while parsing the module")
    assert "surjective" in str(error.value)
    assert len(parse_module(VALID, "valid.mlir").ops_named("tt.return")) == 1
    assert len(used) == (2 if limit == 0 else 0)


def test_a_forked_child_of_the_caller_gets_a_checker_of_its_own():
    mine = parse_checker._checker()
    outcome = run_in_child(lambda: "same" if parse_checker._checker() is mine else "own")
    assert outcome.returned == "own"
