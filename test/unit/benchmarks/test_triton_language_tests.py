"""benchmarks/triton_language_tests.py (Triton's own tests, stock and with the plugin, compared
per test) without a GPU: each test's outcome from its pytest reports, the comparison of the two
modes, the selection, the checks of a plugin run; and the whole harness on a few made-up tests
under pytest-xdist, where the plugin must be on in every worker and in a process a test starts."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from support import REPO  # noqa: E402

SCRIPT = REPO / "benchmarks" / "triton_language_tests.py"


def load_harness():
    spec = importlib.util.spec_from_file_location("triton_language_tests", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def report(nodeid, when, outcome, xfail=False):
    return {"nodeid": nodeid, "when": when, "outcome": outcome, "xfail": xfail}


def test_the_script_imports_and_its_selection_names_carried_files():
    h = load_harness()
    assert set(h.SELECTION) <= set(h.MANIFEST)
    assert h.SOURCE["commit"] == "4b184cccbb42c3aa5f24e34c39c5358636b3e2bd"
    assert h.MANIFEST["python/test/gluon/test_gluon_core.py"][0] == "python/test/gluon/test_core.py"
    spec = h.selection_spec()
    assert spec["files"][h._U + "test_core.py"][1] == {"group": "scan", "functions": ["test_scan2d"], "sample": 0.3}
    half = h.selection_spec(0.5)
    assert half["files"][h._U + "test_core.py"][1]["sample"] == 0.15
    assert half["files"][h._U + "test_core.py"][0]["sample"] == 0.5    # a rule without a sample gets one


def test_outcome_of_each_test_from_its_reports():
    h = load_harness()
    reports = [
        report("f.py::ok", "setup", "passed"), report("f.py::ok", "call", "passed"),
        report("f.py::ok", "teardown", "passed"),
        report("f.py::bad", "setup", "passed"), report("f.py::bad", "call", "failed"),
        report("f.py::bad", "teardown", "passed"),
        report("f.py::fixture", "setup", "failed"), report("f.py::fixture", "teardown", "passed"),
        report("f.py::skip", "setup", "skipped"), report("f.py::skip", "teardown", "passed"),
        report("f.py::skip_in_call", "setup", "passed"), report("f.py::skip_in_call", "call", "skipped"),
        report("f.py::xf", "setup", "passed"), report("f.py::xf", "call", "skipped", xfail=True),
        report("f.py::xp", "setup", "passed"), report("f.py::xp", "call", "passed", xfail=True),
        report("f.py::td", "setup", "passed"), report("f.py::td", "call", "passed"),
        report("f.py::td", "teardown", "failed"),
        report("f.py::died", "???", "failed"),
        report("f.py::hung", "???", "failed"),
        report("f.py::started", "setup", "passed"),
        report("g.py", "collect", "failed"),
        dict(report("f.py::next", "???", "failed"), message="worker 'gw3' crashed while running 'f.py::next'"),
        dict(report("f.py::other", "???", "failed"), message="worker 'gw4' crashed while running 'f.py::other'"),
    ]
    # gw3 ended itself after a test broke its CUDA context: the test xdist had sent it next did not run
    assert h.outcomes_from_reports(reports, [{"nodeid": "f.py::hung"}], [{"nodeid": "f.py::bad", "worker": "gw3"}]) == {
        "f.py::ok": "passed", "f.py::bad": "failed", "f.py::fixture": "error", "f.py::skip": "skipped",
        "f.py::skip_in_call": "skipped", "f.py::xf": "xfailed", "f.py::xp": "xpassed", "f.py::td": "error",
        "f.py::died": "crashed", "f.py::hung": "timeout", "f.py::started": "crashed", "g.py": "error",
        "f.py::next": "not_run", "f.py::other": "crashed"}
    # the mode's time budget ended the run: the test each worker had in flight (set up, nothing
    # after) did not crash, it did not finish; a test whose worker died on its own still crashed
    cut = h.outcomes_from_reports(reports, cut_by_budget=True)
    assert cut["f.py::started"] == "not_run" and cut["f.py::died"] == "crashed"


def test_comparison_of_the_two_modes():
    h = load_harness()
    stock = {"a": "passed", "b": "passed", "c": "failed", "d": "skipped", "e": "passed", "f": "passed",
             "g": "passed", "h": "passed", "m.py::t1": "passed", "m.py::t2": "skipped", "n": "passed"}
    ours = {"a": "passed", "b": "failed", "c": "passed", "d": "failed", "e": "timeout", "f": "crashed",
            "g": "xpassed", "m.py": "error", "n": "skipped"}
    result = h.compare(stock, ours, selected=["a", "b", "h", "i"])
    # n: skipped with the plugin (as Triton's tests do where a kernel is out of resources)
    assert result["regressions"] == ["b", "e", "f", "m.py::t1", "n"]
    assert result["fixed"] == ["c"]
    assert result["other_differences"] == ["d", "g", "m.py::t2"]
    assert result["not_compared"] == ["h", "m.py"]      # h: cut by the plugin run's budget
    assert result["pairs"]["i"] == ("not_run", "not_run")
    assert result["pairs"]["m.py::t1"] == ("passed", "error")   # its file failed to import with the plugin
    assert result["counts"] == {
        "stock": {"failed": 1, "not_run": 2, "passed": 8, "skipped": 2},
        "plugin": {"crashed": 1, "error": 3, "failed": 2, "not_run": 2, "passed": 2, "skipped": 1, "timeout": 1,
                   "xpassed": 1}}
    assert (result["compared"], result["passed_in_both"]) == (10, 2)


def test_no_regression_where_the_modes_agree_or_the_plugin_does_better():
    h = load_harness()
    result = h.compare({"a": "passed", "b": "failed", "c": "skipped"}, {"a": "passed", "b": "passed", "c": "skipped"})
    assert (result["regressions"], result["fixed"], result["other_differences"]) == ([], ["b"], [])


def test_selection_rules_are_deterministic():
    sys.path.insert(0, str(REPO / "benchmarks" / "peer_tests"))
    import peer_pytest_plugin as plugin

    spec = {"files": {"a.py": [{"functions": ["test_x"], "sample": 0.25},
                               {"functions": ["test_y"], "include": "int", "exclude": "int64"}]}}
    ids = [f"a.py::test_x[{i}]" for i in range(400)]
    kept = [i for i in ids if plugin.keep(spec, "a.py", i.split("::")[1], i)]
    assert len(kept) == 98
    assert kept[:5] == ["a.py::test_x[0]", "a.py::test_x[2]", "a.py::test_x[6]", "a.py::test_x[12]",
                        "a.py::test_x[21]"]
    assert [plugin.keep(spec, "a.py", n, "a.py::" + n) for n in ("test_y[int32]", "test_y[int64]", "test_y[f32]",
                                                                 "test_z[int32]")] == [True, False, False, False]
    assert not plugin.keep(spec, "b.py", "test_x[0]", "b.py::test_x[0]")


def test_which_errors_break_a_cuda_context():
    sys.path.insert(0, str(REPO / "benchmarks" / "peer_tests"))
    import peer_pytest_plugin as plugin

    assert [plugin.breaks_cuda_context(m) for m in (
        "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered",
        "torch.AcceleratorError: CUDA error: device-side assert triggered\nSearch for `cudaErrorAssert'",
        "RuntimeError: CUDA error: misaligned address",
        "AssertionError: assert 'device-side assert' in 'Triton Error [CUDA]: device-side assert triggered'",
        "RuntimeError: Triton Error [CUDA]: out of memory",
        "AssertionError: Tensor-likes are not close!",
        "", None)] == [True, True, True, False, False, False, False, False]


def test_plugin_run_checks_and_exit_status():
    h = load_harness()
    procs = [{"pid": 1, "origin": "site", "active": True, "worker": None},
             {"pid": 1, "origin": "site+pytest", "active": True, "worker": "controller"},
             {"pid": 2, "origin": "site+pytest", "active": True, "worker": "gw0"},
             {"pid": 3, "origin": "pytest", "active": False, "worker": "gw1"},
             {"pid": 4, "origin": "site", "active": True, "worker": None}]
    checked = h.check_processes("plugin", procs)
    assert (checked["ok"], checked["pytest_processes"], checked["workers"]) == (False, 3, ["gw0", "gw1"])
    assert [w["pid"] for w in checked["wrong"]] == [3]
    assert (checked["other_python_processes"], checked["other_python_processes_active"]) == (1, 1)
    assert h.check_processes("stock", [dict(p, active=False) for p in procs])["ok"]

    stats = h.sum_stats([{"kernels": 3, "islands": 2, "fallbacks": [{"kernel": "k", "stage": "ptx", "reason": "r"}]},
                         {"kernels": 4, "islands": 1, "fallbacks": []}])
    assert (stats["kernels"], stats["islands"], stats["fallbacks"], stats["fallback_stages"]) == (7, 3, 1, {"ptx": 1})

    def result(regressions=(), ok=True, kernels=5, compared=3):
        return {"selected": ["a"], "comparison": {"regressions": list(regressions), "compared": compared,
                                                  "passed_in_both": compared, "not_compared": []},
                "modes": {"stock": {"counts": {"passed": 3}},
                          "plugin": {"processes": {"ok": ok}, "stats": {"kernels": kernels}, "counts": {"passed": 3}}}}
    assert h.verdict(result())[0] == 0
    assert h.verdict(result(regressions=["a"]))[0] == 1
    assert h.verdict(result(ok=False))[0] == 2
    assert h.verdict(result(kernels=0))[0] == 2
    assert h.verdict(result(compared=0))[0] == 2
    assert h.verdict(dict(result(), selected=[]))[0] == 3
    stock_only = dict(result(compared=0), modes={"stock": {"counts": {"passed": 3}}})
    assert h.verdict(stock_only) == (0, "stock only, nothing compared: {'passed': 3}")


def test_carried_files_are_checked_by_git_blob_hash(tmp_path):
    h = load_harness()
    assert h.git_blob_hash(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"   # git hash-object
    (tmp_path / "python" / "test").mkdir(parents=True)
    (tmp_path / "python" / "test" / "conftest.py").write_text("changed\n")
    checked = h.check_sources(str(tmp_path))
    assert checked["changed"] == ["python/test/conftest.py"]
    assert len(checked["missing"]) == len(h.MANIFEST) - 1 and not checked["ok"]


FAKE_TESTS = '''
import os
import subprocess
import sys

import pytest


def plugin_on():
    from linear_layouts.passes.drop_in import hook
    return hook.active_config() is not None


def test_plugin_state_matches_mode():
    assert plugin_on() == (os.environ["LL_PEER_MODE"] == "plugin")


def test_passes_only_stock():
    assert not plugin_on()


def test_fails_in_both():
    assert False


def test_skipped():
    pytest.skip("never runs")


def test_a_process_the_test_starts_has_the_plugin_too():
    out = subprocess.run([sys.executable, "-c", "from linear_layouts.passes.drop_in import hook; "
                          "print(hook.active_config() is not None)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(os.environ["LL_PEER_MODE"] == "plugin")


def test_compiles_a_kernel():
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def column_sum(x, y, N: tl.constexpr):
        r = tl.arange(0, N)
        tl.store(y + r, tl.sum(tl.load(x + r[:, None] * N + r[None, :]), axis=0))

    triton.compile(ASTSource(column_sum, {"x": "*fp32", "y": "*fp32", "N": "constexpr"}, constexprs={"N": 64}),
                   target=GPUTarget("cuda", 90, 32))


def test_breaks_the_cuda_context():
    raise RuntimeError("Triton Error [CUDA]: an illegal memory access was encountered")


@pytest.mark.parametrize("i", range(3))
def test_many(i):
    assert i >= 0
'''


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="needs pytest-xdist")
def test_whole_harness_on_made_up_tests_under_xdist(tmp_path):
    pytest.importorskip("triton")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_fake.py").write_text(FAKE_TESTS)
    selection = tmp_path / "selection.json"
    selection.write_text(json.dumps({"files": {"test_fake.py": [{"group": "fake"}]}, "shuffle_seed": 1}))
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LL_PEER_")}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--tests", str(tests), "--selection", str(selection),
                           "--out", str(out), "-n", "1", "--timeout", "60", "--budget", "240", "--mode-budget", "100"],
                          capture_output=True, text=True, env=env, timeout=400)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads((out / "triton_language_tests.json").read_text())
    assert result["comparison"]["regressions"] == ["test_fake.py::test_passes_only_stock"]
    assert result["rerun"] == {"test_fake.py::test_passes_only_stock": ["passed", "failed"]}
    assert result["outcomes"]["test_fake.py::test_fails_in_both"] == ["failed", "failed"]
    # the test that broke its worker's CUDA context fails, and its worker is replaced before the
    # next test (in this run order test_skipped, which xdist reports as crashed: not run)
    assert result["outcomes"]["test_fake.py::test_breaks_the_cuda_context"] == ["failed", "failed"]
    assert result["outcomes"]["test_fake.py::test_skipped"] == ["not_run", "not_run"]
    assert [e["nodeid"] for e in result["modes"]["plugin"]["cuda_errors"]] == ["test_fake.py::test_breaks_the_cuda_context"]
    for name in ("test_plugin_state_matches_mode", "test_a_process_the_test_starts_has_the_plugin_too",
                 "test_compiles_a_kernel", "test_many[2]"):
        assert result["outcomes"][f"test_fake.py::{name}"] == ["passed", "passed"], name
    plugin_run, stock_run = result["modes"]["plugin"], result["modes"]["stock"]
    # the controller and both workers (gw1 replaced gw0) had the plugin on; so had the process a test started
    assert plugin_run["processes"]["ok"] and plugin_run["processes"]["workers"] == ["gw0", "gw1"]
    assert plugin_run["processes"]["pytest_processes"] == 3
    assert plugin_run["processes"]["other_python_processes_active"] == 1
    assert stock_run["processes"]["ok"] and stock_run["processes"]["other_python_processes_active"] == 0
    assert plugin_run["stats"]["kernels"] == 1 and stock_run["stats"]["kernels"] == 0
    assert list(plugin_run["test_stats"]) == ["test_fake.py::test_compiles_a_kernel"]
    assert len(result["selected"]) == 10
    summary = (out / "triton_language_tests.md").read_text()
    assert "**Verdict: 1 test(s) passed stock and failed with the plugin** (exit status 1)" in summary
    assert sorted(os.listdir(out)) == ["pytest-plugin.log", "pytest-rerun.log", "pytest-stock.log",
                                       "triton_language_tests.json", "triton_language_tests.md"]


def test_a_test_that_hangs_ends_its_process_and_is_recorded(tmp_path):
    """The per-test time limit (a hung kernel never returns to Python): the process ends with
    status 86 and ``timeouts.jsonl`` names the test."""
    pytest.importorskip("triton")
    (tmp_path / "test_hang.py").write_text(textwrap.dedent('''
        import time

        def test_hangs():
            time.sleep(60)
    '''))
    records = tmp_path / "records"
    records.mkdir()
    link = tmp_path / "pkg"
    link.mkdir()
    os.symlink(REPO, link / "linear_layouts")
    env = dict(os.environ, LL_PEER_MODE="stock", LL_PEER_OUT=str(records), LL_PEER_TEST_TIMEOUT="1",
               PYTHONPATH=os.pathsep.join([str(REPO / "benchmarks" / "peer_tests"), str(link)]))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "peer_pytest_plugin", "-p", "no:cacheprovider",
                           "test_hang.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 86, proc.stdout[-2000:] + proc.stderr[-2000:]
    timeouts = [json.loads(line) for line in (records / "timeouts.jsonl").read_text().splitlines()]
    assert [(t["nodeid"], t["limit_s"]) for t in timeouts] == [("test_hang.py::test_hangs", 1.0)]
