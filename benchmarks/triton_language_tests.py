"""Triton's own language tests, stock and with the plugin on in every process, compared per test.

    python benchmarks/triton_language_tests.py --out "$OUT"                      # GPU machine
    python benchmarks/triton_language_tests.py --list --assume-target cuda:90    # CPU: the selection

The tests are Triton's (``python/test/...`` and the Gluon tutorials of the release the GPU
machine has, 3.6.0), carried in ``.peer-tests/triton/`` (not part of this repository: MANIFEST
below says where each file comes from; the harness checks their git blob hashes).  A selection
of them (SELECTION: convert_layout, reductions, scans, histogram, gather, trans/permute/reshape,
join/split, dot, shared memory, Gluon layouts and warp specialization; large parametrizations
sampled, the same way on every machine) runs twice, each time as
``python -m pytest -n <workers> -p peer_pytest_plugin`` with a fresh ``TRITON_CACHE_DIR``:

* ``stock``: ``linear_layouts`` imported in every process, not enabled;
* ``plugin``: ``linear_layouts.enable()`` in every process - pytest's, each pytest-xdist worker's
  (``pytest_configure``) and any other Python process the tests start (``sitecustomize.py`` in
  ``benchmarks/peer_tests/``, on the runs' ``PYTHONPATH``).

Each test's outcome (passed, failed, error, skipped, xfailed, xpassed, crashed, timeout, or
not_run when a mode's time budget ended first) is compared between the modes.  A regression is
a test that passed stock and failed, errored, crashed, timed out or was skipped (Triton's tests
skip a kernel that runs out of resources) with the plugin; they are run
once more in both modes (``rerun``) when time is left, to tell a reproducible failure from a
flaky test.  The plugin run is also checked to be one: every pytest process must have had the
plugin active, and kernels must have gone through it (``linear_layouts.stats()`` of every
process, summed; per test in ``test_stats.jsonl``).

Writes ``triton_language_tests.json`` (per-test outcomes of both modes, counts, differences,
plugin stats, versions, GPU) and ``triton_language_tests.md`` (summary), plus the tail of each
mode's pytest output, to ``--out``.  Exit status: 0 no regression; 1 a test passed stock and
failed with the plugin; 2 the plugin run was not one (an inactive process, no kernel through the
plugin, nothing run); 3 nothing to run (tests not carried, collection failed).

Needs pytest and pytest-xdist in the interpreter that runs it (the GPU machine gets them from
carried wheels: ``pip install --no-index --no-deps --target /tmp/site .whl/*.whl`` and
``PYTHONPATH=/tmp/site``), torch, numpy, triton and the installed ``linear_layouts``
(``harness/common.py`` says how to install it), which every test process imports.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER_DIR = os.path.join(REPO_ROOT, "benchmarks", "peer_tests")
DEFAULT_TESTS = os.path.join(REPO_ROOT, ".peer-tests", "triton")

# The pytest plugin the runs load (``-p peer_pytest_plugin``, PEER_DIR on their PYTHONPATH), read
# here for its variables' names: loaded from its file, under the name the runs give it.
plugin = sys.modules.get("peer_pytest_plugin")
if plugin is None:
    _spec = importlib.util.spec_from_file_location("peer_pytest_plugin", os.path.join(PEER_DIR, "peer_pytest_plugin.py"))
    plugin = sys.modules["peer_pytest_plugin"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(plugin)

MODES = ("stock", "plugin")

# ------------------------------------------------------------------------------ the tests' source

# Triton's tests for the installed release.  The release branch (release/3.6.x) was cut from
# main; its Python tree (python/triton, the NVIDIA/AMD backends' Python, proton) is byte for byte
# that of main at SOURCE_COMMIT - and of every main commit back to e7fb841 (2025-11-19), between
# which no file under python/test changed - except the version string and one cherry-pick
# (knobs.py, #8945).  The tests below are main's at SOURCE_COMMIT; release-branch cherry-picks
# to tests, if any, are not in them.  Check: compare the wheel's .py files with a checkout.
SOURCE = {
    "repository": "triton-lang/triton",
    "commit": "4b184cccbb42c3aa5f24e34c39c5358636b3e2bd",
    "commit_date": "2025-11-21",
    "release": "3.6.0",
    "how_identified": "the triton 3.6.0 wheel's Python files equal python/triton/** (and backend Python) at this "
                      "commit except __init__.py (version) and knobs.py (cherry-pick #8945); no python/test file "
                      "changed between e7fb8414 (2025-11-19) and this commit",
}
# carried path (relative to the tests' root) -> (path in the repository, git blob hash)
MANIFEST = {
    "python/test/conftest.py": ("python/test/conftest.py", "17c44ae26fdb88a6e8476e5716db29cf373a946b"),
    "python/test/unit/language/test_core.py":
        ("python/test/unit/language/test_core.py", "d9446fc5ca9bfd381005998c53c4d348ef475860"),
    "python/test/unit/language/test_standard.py":
        ("python/test/unit/language/test_standard.py", "d2d3d3d5c43b2f19c44e4c6dcc2e613c3b1293d9"),
    "python/test/unit/language/test_matmul.py":
        ("python/test/unit/language/test_matmul.py", "3049cf9a9dc3035187ddb1fb886bd299e25e2302"),
    "python/test/unit/language/test_mxfp.py":
        ("python/test/unit/language/test_mxfp.py", "3e0d6c050e94a7045dfd5b940752fffdf279491f"),
    "python/test/unit/language/test_warp_specialization.py":
        ("python/test/unit/language/test_warp_specialization.py", "5cdf7504a4726a7ca7c5843449b765ada475dc69"),
    "python/test/gluon/test_lowerings.py":
        ("python/test/gluon/test_lowerings.py", "f2dc457defc10c21e89b26a6a8b583a21c4cbc99"),
    # renamed: pytest's default import mode needs unique basenames (unit/language has a test_core.py)
    "python/test/gluon/test_gluon_core.py":
        ("python/test/gluon/test_core.py", "66daf1082b4029d4846102b72507d015b7be7a70"),
    "python/test/gluon/test_consan.py":
        ("python/test/gluon/test_consan.py", "7d91ba1679bc8bf20fda0377f1331459b47434a9"),
    "python/tutorials/gluon/03-async-copy.py":
        ("python/tutorials/gluon/03-async-copy.py", "0abe84359d0e2dea579635104be9c1a82e9ad999"),
    "python/tutorials/gluon/04-tma.py": ("python/tutorials/gluon/04-tma.py", "bad046fadc7482041c59e36462ba6b705d930d4b"),
    "python/tutorials/gluon/05-wgmma.py":
        ("python/tutorials/gluon/05-wgmma.py", "bc0f976818724063b35cbaa2f20a766270e8488f"),
    "python/tutorials/gluon/07-persistence.py":
        ("python/tutorials/gluon/07-persistence.py", "634415723b6c23e4d4c17db1c2dee0a6c397020d"),
    "python/tutorials/gluon/08-warp-specialization.py":
        ("python/tutorials/gluon/08-warp-specialization.py", "56032b091b55ae4cd524bff63ae556d96a134b38"),
}

# ------------------------------------------------------------------------------ the selection

_U = "python/test/unit/language/"
_G = "python/test/gluon/"
_T = "python/tutorials/gluon/"
# file -> rules (peer_pytest_plugin.matching_rule); ``sample`` bounds the large parametrizations.
# Left out on purpose: tests on fresh_knobs (they swap Triton's knobs, our hook with them), AMD-only
# and Blackwell-only ones stay in where cheap (they skip on an H100).
SELECTION = {
    _U + "test_core.py": [
        {"group": "reduce", "functions": [
            "test_reduce1d", "test_reduce", "test_sum_dtype", "test_max_returns_zero", "test_max_min_with_nan",
            "test_generic_reduction", "test_optimize_thread_locality", "test_no_rematerialization_op",
            "test_side_effectful_reduction", "test_side_effectful_reduction_2d", "test_chained_reductions"]},
        {"group": "scan", "functions": ["test_scan2d"], "sample": 0.3},
        {"group": "scan", "functions": ["test_scan_1d", "test_side_effectful_scan", "test_cumsum_dtype"]},
        {"group": "histogram", "functions": [
            "test_histogram", "test_histogram_mask", "test_histogram_silent_data_corruption"]},
        {"group": "gather", "functions": ["test_gather"]},
        {"group": "trans/permute/reshape", "functions": [
            "test_permute", "test_trans_2d", "test_trans_4d", "test_transpose", "test_trans_reshape", "test_reshape",
            "test_expand_dims", "test_broadcast", "test_unsplat", "test_index1d"]},
        {"group": "join/split", "functions": [
            "test_join", "test_join_scalars", "test_join_with_mma", "test_interleave", "test_interleave_scalars",
            "test_split", "test_split_to_scalar", "test_cat"]},
        {"group": "dot", "functions": ["test_dot"], "sample": 0.3},
        {"group": "dot", "functions": ["test_dot3d"], "sample": 0.3},
        {"group": "dot", "functions": [
            "test_dot_mulbroadcasted", "test_dot_without_load", "test_dot_multidim", "test_dot_max_num_imprecise_acc"]},
        {"group": "dot", "functions": ["test_scaled_dot"], "sample": 0.1},
        {"group": "shared memory", "functions": ["test_masked_load_shared_memory"]},
    ],
    _U + "test_standard.py": [
        {"group": "sort/flip", "functions": ["test_sort", "test_flip", "test_flip_inf", "test_ravel", "test_swizzle2d"]},
    ],
    _U + "test_matmul.py": [
        {"group": "matmul", "functions": ["test_simple_matmul"], "sample": 0.1},
        {"group": "matmul", "functions": ["test_simple_persistent_matmul"]},
    ],
    _U + "test_warp_specialization.py": [{"group": "warp specialization"}],
    _G + "test_lowerings.py": [
        {"group": "gluon convert_layout", "functions": ["test_convert2d_layouts"], "sample": 0.3},
        {"group": "gluon convert_layout", "functions": ["test_convert1d_layouts"], "sample": 0.3},
        {"group": "gluon convert_layout", "functions": ["test_convert_warp_local_layouts"], "sample": 0.5},
        {"group": "gluon convert_layout", "functions": ["test_convert_mma2mma_layouts"]},
        {"group": "gluon reduce/scan", "functions": ["test_reduce_layouts"], "sample": 0.2},
        {"group": "gluon reduce/scan", "functions": ["test_scan_layouts"]},
        {"group": "gluon shared memory", "functions": ["test_local_load_store_2d_layouts"], "sample": 0.5},
        {"group": "gluon shared memory", "functions": [
            "test_local_load_store_3d_layouts", "test_memdesc_subslice", "test_store_layouts"]},
        {"group": "gluon histogram/gather", "functions": ["test_histogram", "test_gather_layouts"]},
    ],
    _G + "test_gluon_core.py": [
        {"group": "gluon core", "functions": ["test_mma_shared_inputs"], "sample": 0.03},
        {"group": "gluon core", "exclude": r"^(test_mma_shared_inputs|test_amd_)"},
    ],
    _G + "test_consan.py": [{"group": "gluon warp specialization", "include": r"^test_ws_"}],
    _T + "04-tma.py": [{"group": "gluon tutorials"}],
    _T + "05-wgmma.py": [{"group": "gluon tutorials"}],
    _T + "07-persistence.py": [{"group": "gluon tutorials"}],
    _T + "08-warp-specialization.py": [{"group": "gluon warp specialization"}],
}
SHUFFLE_SEED = 36   # one fixed run order (shuffled: a budget that runs out cuts every group alike)

# outcomes of one test in one mode
FAILING = ("failed", "error", "crashed", "timeout")
PASSING = ("passed", "xpassed")
# what a test that passed stock must not become with the plugin: a failure, or a skip (Triton's
# tests skip where a kernel runs out of resources - shared memory, registers - when it launches;
# a skip that does not depend on the compiled kernel is the same in both modes)
REGRESSED = FAILING + ("skipped", "xfailed")


# ============================================================================== pure logic

def git_blob_hash(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_sources(tests_root: str) -> dict:
    """Which carried files are missing or differ from MANIFEST."""
    missing, changed = [], []
    for carried, (_, blob) in MANIFEST.items():
        path = os.path.join(tests_root, carried)
        if not os.path.exists(path):
            missing.append(carried)
            continue
        with open(path, "rb") as f:
            if git_blob_hash(f.read()) != blob:
                changed.append(carried)
    return {"missing": missing, "changed": changed, "ok": not missing and not changed}


def selection_spec(extra_sample: float = 1.0) -> dict:
    """The selection as the pytest plugin reads it; ``extra_sample`` scales every rule's sample
    (and gives rules without one a sample), to run fewer tests."""
    files = {}
    for path, rules in SELECTION.items():
        out = []
        for rule in rules:
            rule = dict(rule)
            if extra_sample != 1.0:
                rule["sample"] = min(1.0, rule.get("sample", 1.0) * extra_sample)
            out.append(rule)
        files[path] = out
    return {"files": files, "shuffle_seed": SHUFFLE_SEED}


def group_of(spec: dict, nodeid: str) -> str:
    relpath, _, name = nodeid.partition("::")
    rule = plugin.matching_rule(spec, relpath, name, nodeid)
    return rule.get("group", relpath) if rule else "(not selected)"


def outcomes_from_reports(reports: list[dict], timeouts: list[dict] = (), cuda_errors: list[dict] = (),
                          cut_by_budget: bool = False) -> dict[str, str]:
    """Each test's outcome from its reports (setup / call / teardown, as pytest reports them;
    pytest-xdist reports a test whose worker died with ``when`` = '???'): passed, failed, error
    (setup or teardown failed, or collection), skipped, xfailed, xpassed, crashed (its process
    died), timeout (``timeouts``: its process was ended by the per-test time limit), not_run (its
    worker had ended itself after another test broke its CUDA context, ``cuda_errors``: xdist
    reports the next test it had sent that worker as crashed; or the mode's time budget ended
    the run while it ran, ``cut_by_budget``: one test per worker was in flight, not crashed)."""
    ended = {e.get("worker") for e in cuda_errors}
    phases: dict[str, dict] = {}
    for r in reports:
        phases.setdefault(r["nodeid"], {})[r["when"]] = r
    out = {}
    for nodeid, p in phases.items():
        setup, call, teardown = p.get("setup"), p.get("call"), p.get("teardown")
        if "collect" in p:
            outcome = "error"
        elif "???" in p and call is None:
            match = re.search(r"worker '([^']+)' crashed", p["???"].get("message") or "")
            outcome = "not_run" if match and match.group(1) in ended else "crashed"
        elif setup is not None and setup["outcome"] == "failed":
            outcome = "error"
        elif setup is not None and setup["outcome"] == "skipped":
            outcome = "xfailed" if setup.get("xfail") else "skipped"
        elif call is not None:
            if call["outcome"] == "passed":
                outcome = "xpassed" if call.get("xfail") else "passed"
            elif call["outcome"] == "skipped":
                outcome = "xfailed" if call.get("xfail") else "skipped"
            else:
                outcome = "failed"
        else:   # a setup that passed and nothing after it: its process died, or the budget ended it
            outcome = "not_run" if cut_by_budget else "crashed"
        if outcome in ("passed", "xpassed", "skipped", "xfailed") and teardown is not None \
                and teardown["outcome"] == "failed":
            outcome = "error"
        out[nodeid] = outcome
    for t in timeouts:
        if t.get("nodeid"):
            out[t["nodeid"]] = "timeout"
    return out


def compare(stock: dict[str, str], ours: dict[str, str], selected: list[str] = ()) -> dict:
    """Per test id, the two modes' outcomes; ``selected`` (the collected ids) adds ``not_run``
    for a selected test a mode did not report (``error`` where its file failed to import in that
    mode: pytest reports that under the file's id).  ``regressions``: passed stock, failed / error /
    crashed / timeout / skipped / xfailed with the plugin.  ``fixed``: the other way round.  ``other_differences``:
    any other pair of different outcomes where both modes ran the test.  ``not_compared``: a
    test one mode did not run."""
    ids = sorted(set(stock) | set(ours) | set(selected))

    def outcome(outcomes: dict, nodeid: str) -> str:
        if nodeid in outcomes:
            return outcomes[nodeid]
        # a file that failed to import (collection error, reported under the file's id) in this
        # mode: its tests are errors here, not "not run"
        path = nodeid.partition("::")[0]
        return "error" if outcomes.get(path) == "error" and path != nodeid else "not_run"

    pairs = {i: (outcome(stock, i), outcome(ours, i)) for i in ids}
    regressions = [i for i, (s, o) in pairs.items() if s in PASSING and o in REGRESSED]
    fixed = [i for i, (s, o) in pairs.items() if s in FAILING and o in PASSING]
    not_compared = [i for i, (s, o) in pairs.items() if (s == "not_run") != (o == "not_run")]
    other = [i for i, (s, o) in pairs.items()
             if s != o and "not_run" not in (s, o) and i not in regressions and i not in fixed]
    counts = {mode: dict(sorted(Counter(p[k] for p in pairs.values()).items()))
              for k, mode in enumerate(MODES)}
    both = [p for p in pairs.values() if "not_run" not in p]
    return {"pairs": pairs, "counts": counts, "regressions": regressions, "fixed": fixed,
            "other_differences": other, "not_compared": not_compared,
            "compared": len(both), "passed_in_both": sum(1 for s, o in both if s in PASSING and o in PASSING)}


def check_processes(mode: str, processes: list[dict]) -> dict:
    """The processes of one mode's run (last record per pid): every pytest process (controller
    and workers) must have the plugin active in plugin mode and inactive in stock mode."""
    last = {}
    for p in processes:
        last[p["pid"]] = p
    pytest_procs = [p for p in last.values() if "pytest" in p.get("origin", "")]
    others = [p for p in last.values() if "pytest" not in p.get("origin", "")]
    want = mode == "plugin"
    wrong = [p for p in pytest_procs if bool(p.get("active")) != want]
    workers = sorted({p.get("worker") for p in pytest_procs if p.get("worker") not in (None, "controller")})
    return {"pytest_processes": len(pytest_procs), "workers": workers,
            "other_python_processes": len(others),
            "other_python_processes_active": sum(1 for p in others if p.get("active")),
            "wrong": [{k: p.get(k) for k in ("pid", "worker", "origin", "active", "error")} for p in wrong],
            "ok": bool(pytest_procs) and not wrong}


def sum_stats(records: list[dict]) -> dict:
    """linear_layouts.stats() of every process, summed; fallbacks listed (at most 50)."""
    keys = ("kernels", "kernels_with_islands", "conversions", "islands", "local_loads", "local_loads_lowered",
            "local_writes_lowered", "guard_barriers", "guard_barriers_dropped")
    total = {k: sum(r.get(k, 0) for r in records) for k in keys}
    fallbacks = [f for r in records for f in r.get("fallbacks", [])]
    total["fallbacks"] = len(fallbacks)
    total["fallback_examples"] = fallbacks[:50]
    total["fallback_stages"] = dict(Counter(f["stage"] for f in fallbacks))
    total["processes"] = len(records)
    return total


def verdict(result: dict) -> tuple[int, str]:
    """Exit status and one line for a finished comparison (see the module docstring)."""
    cmp, plugin_run = result["comparison"], result["modes"].get("plugin", {})
    if not result["selected"]:
        return 3, "nothing ran: no test selected or collection failed"
    if cmp["regressions"]:
        return 1, f"{len(cmp['regressions'])} test(s) passed stock and failed with the plugin"
    if plugin_run and not plugin_run.get("processes", {}).get("ok"):
        return 2, "the plugin run was not one: a pytest process ran without the plugin active"
    if plugin_run and not plugin_run.get("stats", {}).get("kernels"):
        return 2, "the plugin run was not one: no kernel went through the plugin"
    if len(result["modes"]) == 1:
        mode, = result["modes"]
        return 0, f"{mode} only, nothing compared: {result['modes'][mode]['counts']}"
    if not cmp["compared"]:
        return 2, "no test ran in both modes"
    return 0, (f"no regression: {cmp['compared']} tests ran in both modes, {cmp['passed_in_both']} passed in both"
               + (f"; {len(cmp['not_compared'])} ran in one mode only (time budget)" if cmp["not_compared"] else ""))


# ============================================================================== running pytest

def read_jsonl(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass    # a line cut by a killed process
    return out


class Workspace:
    """Temporary folders of one harness run: a copy of the tests, selection,
    pytest.ini, caches, records.  The tests run from a copy outside this repository: its root is
    the package ``linear_layouts`` (an ``__init__.py``), which pytest would otherwise make a
    package node above Triton's test folders (and import to set it up)."""

    def __init__(self, spec: dict, tests_root: str, keep_dir: str | None = None):
        self.root = keep_dir or tempfile.mkdtemp(prefix="ll_peer_")
        os.makedirs(self.root, exist_ok=True)
        self.tests = os.path.join(self.root, "tests")
        shutil.rmtree(self.tests, ignore_errors=True)
        shutil.copytree(tests_root, self.tests, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        self.selection = os.path.join(self.root, "selection.json")
        with open(self.selection, "w") as f:
            json.dump(spec, f, indent=1)
        self.ini = os.path.join(self.root, "pytest.ini")
        with open(self.ini, "w") as f:   # Triton's tests under their own (empty) configuration, not ours
            f.write("[pytest]\n")

    def records(self, name: str) -> str:
        path = os.path.join(self.root, f"records-{name}")
        os.makedirs(path, exist_ok=True)
        return path

    def cache(self, mode: str) -> str:
        return os.path.join(self.root, f"cache-{mode}")


def pytest_env(ws: Workspace, mode: str, records: str, timeout: float, fake_target: str | None,
               strict: bool) -> dict:
    env = dict(os.environ)
    env.pop("LINEAR_LAYOUTS", None)   # the modes decide, not the caller's environment
    # no plugin of the installation loaded behind our back (the command names each one it uses)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update({
        plugin.MODE_VARIABLE: mode, plugin.OUT_VARIABLE: records, plugin.SELECTION_VARIABLE: ws.selection,
        plugin.TIMEOUT_VARIABLE: str(timeout), "TRITON_CACHE_DIR": ws.cache(mode),
        # (an empty entry, as "export PYTHONPATH=/tmp/site:$PYTHONPATH" leaves, would put the cwd on the path)
        "PYTHONPATH": os.pathsep.join([PEER_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                                 if p]),
    })
    if fake_target:
        env[plugin.FAKE_TARGET_VARIABLE] = fake_target
    else:
        env.pop(plugin.FAKE_TARGET_VARIABLE, None)
    if strict and mode == "plugin":
        env["LINEAR_LAYOUTS_STRICT_CHECK"] = "1"
    return env


def pytest_command(ws: Workspace, tests_root: str, files: list[str], workers: int, collect_only: bool = False,
                   keyword: str | None = None, node_ids: list[str] | None = None, extra: list[str] = ()) -> list[str]:
    cmd = [sys.executable, "-m", "pytest"]
    cmd += node_ids if node_ids is not None else [f for f in files if os.path.exists(os.path.join(tests_root, f))]
    cmd += ["-p", "peer_pytest_plugin", "-p", "no:cacheprovider", "-p", "no:randomly", "-c", ws.ini,
            "--rootdir", tests_root, "-q", "--tb=short", "-rfE", "-W", "ignore::DeprecationWarning",
            "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    if collect_only:
        cmd += ["--collect-only"]
    elif workers > 0:
        cmd += ["-p", "xdist.plugin", "-n", str(workers), "--max-worker-restart", str(max(64, 4 * workers))]
    if keyword:
        cmd += ["-k", keyword]
    return cmd + list(extra)


def run_pytest(cmd: list[str], env: dict, cwd: str, log_path: str, budget: float) -> dict:
    """Run one pytest process group; end it (SIGTERM, then SIGKILL) when ``budget`` seconds pass."""
    start = time.monotonic()
    with open(log_path, "ab") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        cut = False
        try:
            status = proc.wait(timeout=max(1.0, budget))
        except subprocess.TimeoutExpired:
            cut = True
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            status = proc.poll()
            log.write(f"\nll-peer: ended after the budget of {budget:.0f} s\n".encode())
    return {"exit_status": status, "wall_s": round(time.monotonic() - start, 1), "cut_by_budget": cut,
            "budget_s": round(budget, 1)}


def read_mode_records(records: str) -> dict:
    collected = []
    for name in ("collected-gw0.json", "collected-controller.json"):
        path = os.path.join(records, name)
        if os.path.exists(path):
            with open(path) as f:
                collected = json.load(f)
            break
    stats = []
    for name in sorted(os.listdir(records)):
        if name.startswith("stats-") and name.endswith(".json"):
            with open(os.path.join(records, name)) as f:
                stats.append(json.load(f))
    return {"reports": read_jsonl(os.path.join(records, "reports.jsonl")),
            "timeouts": read_jsonl(os.path.join(records, "timeouts.jsonl")),
            "processes": read_jsonl(os.path.join(records, "processes.jsonl")),
            "test_stats": read_jsonl(os.path.join(records, "test_stats.jsonl")),
            "hook_lost": read_jsonl(os.path.join(records, "hook_lost.jsonl")),
            "cuda_errors": read_jsonl(os.path.join(records, "cuda_errors.jsonl")),
            "collected": collected, "stats": stats}


def summarize_mode(mode: str, run: dict, rec: dict) -> dict:
    outcomes = outcomes_from_reports(rec["reports"], rec["timeouts"], rec["cuda_errors"],
                                     cut_by_budget=bool(run.get("cut_by_budget")))
    outcomes = {k: v for k, v in outcomes.items() if v != "not_run"}
    messages = {}
    for r in rec["reports"]:
        if r.get("message") and r["nodeid"] not in messages:
            messages[r["nodeid"]] = r["message"]
    return dict(run, mode=mode, outcomes=outcomes, messages=messages,
                counts=dict(sorted(Counter(outcomes.values()).items())),
                processes=check_processes(mode, rec["processes"]), stats=sum_stats(rec["stats"]),
                timeouts=[t.get("nodeid") for t in rec["timeouts"]],
                cuda_errors=[{k: e.get(k) for k in ("nodeid", "worker", "message")} for e in rec["cuda_errors"]],
                hook_lost=sorted({h["nodeid"] for h in rec["hook_lost"]}),
                test_stats={t["nodeid"]: {k: t[k] for k in ("kernels", "islands", "conversions", "fallbacks")}
                            for t in rec["test_stats"]},
                collected=len(rec["collected"]))


# ============================================================================== report

def environment() -> dict:
    env = {"python": platform.python_version(), "host_cpus": os.cpu_count()}
    for name in ("triton", "torch", "pytest", "xdist"):
        try:
            module = __import__(name)
            env[name] = getattr(module, "__version__", "?")
        except Exception as e:  # noqa: BLE001
            env[name] = f"unavailable ({type(e).__name__})"
    try:
        import torch
        env["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
        if env["gpu"]:
            env["capability"] = list(torch.cuda.get_device_capability(0))
    except Exception as e:  # noqa: BLE001
        env["gpu"] = None
        env["gpu_error"] = f"{type(e).__name__}: {e}"
    return env


def markdown(result: dict) -> str:
    env, cmp, pairs = result["environment"], result["comparison"], result["outcomes"]
    lines = ["# Triton's language tests, stock and with the plugin", "",
             f"- GPU: {env.get('gpu')}; triton {env.get('triton')}; torch {env.get('torch')}; python "
             f"{env.get('python')}; pytest {env.get('pytest')}, xdist {env.get('xdist')}, {result['workers']} workers",
             f"- tests: {SOURCE['repository']} @ {SOURCE['commit'][:12]} ({SOURCE['commit_date']}, the Python tree "
             f"of release {SOURCE['release']}); carried files "
             + {True: "match the manifest", None: result["sources"].get("note", "")}.get(
                 result["sources"]["ok"], f"DIFFER: {result['sources']}"),
             f"- selection: {len(result['selected'])} tests (`SELECTION` in benchmarks/triton_language_tests.py; "
             "large parametrizations sampled by node id)",
             f"- command: `{result['command']}`", "",
             f"**Verdict: {result['verdict']}** (exit status {result['exit_status']})", "",
             "| mode | wall s | budget cut | " + " | ".join(OUTCOME_ORDER) + " |",
             "|---|---|---|" + "---|" * len(OUTCOME_ORDER)]
    for mode in MODES:
        m = result["modes"].get(mode)
        if not m:
            continue
        counts = cmp["counts"][mode]
        lines.append(f"| {mode} | {m['wall_s']} | {'yes' if m['cut_by_budget'] else 'no'} | "
                     + " | ".join(str(counts.get(k, 0)) for k in OUTCOME_ORDER) + " |")
    pm = result["modes"].get("plugin", {})
    st = pm.get("stats", {})
    ts = pm.get("test_stats", {})
    with_islands = [n for n, t in ts.items() if t["islands"]]
    passed_with_islands = [n for n in with_islands if _passed_both(pairs.get(n))]
    lines += ["", "## The plugin run", "",
              f"- processes: {pm.get('processes', {}).get('pytest_processes')} pytest processes (controller and "
              f"workers {', '.join(pm.get('processes', {}).get('workers', []))}), plugin active in "
              + ("all" if pm.get("processes", {}).get("ok") else f"NOT all: {pm.get('processes', {}).get('wrong')}")
              + f"; {pm.get('processes', {}).get('other_python_processes', 0)} other Python processes started by "
                f"tests ({pm.get('processes', {}).get('other_python_processes_active', 0)} with the plugin active)",
              f"- linear_layouts.stats(), all processes: {st.get('kernels')} kernels, {st.get('kernels_with_islands')} "
              f"with islands, {st.get('islands')} of {st.get('conversions')} conversions lowered by us, "
              f"{st.get('local_loads_lowered')} of {st.get('local_loads')} local loads, "
              f"{st.get('fallbacks')} kernels compiled without our islands after a failure "
              f"({st.get('fallback_stages')})",
              f"- tests that compiled a kernel through the plugin: {len(ts)}; with at least one island: "
              f"{len(with_islands)}, of which {len(passed_with_islands)} passed in both modes",
              f"- tests after which the plugin was no longer Triton's hook (put back): {len(pm.get('hook_lost', []))}"]
    for f in st.get("fallback_examples", [])[:10]:
        lines.append(f"  - fallback: `{f['kernel']}` {f['stage']}: {f['reason'][:160]}")
    lines += ["", f"## Regressions (passed stock, failed with the plugin): {len(cmp['regressions'])}", ""]
    for nodeid in cmp["regressions"][:100]:
        rerun = result.get("rerun", {}).get(nodeid)
        message = " ".join((pm.get("messages", {}).get(nodeid) or "").split())
        lines.append(f"- `{nodeid}`: {pairs[nodeid][1]}: {message[:200]}"
                     + (f" (rerun: stock {rerun[0]}, plugin {rerun[1]})" if rerun else ""))
    lines += ["", f"## Other differences: {len(cmp['other_differences'])} differing, {len(cmp['fixed'])} failed stock "
                  f"and passed with the plugin, {len(cmp['not_compared'])} run in one mode only", ""]
    for nodeid in (cmp["fixed"] + cmp["other_differences"])[:40]:
        s, o = pairs[nodeid]
        lines.append(f"- `{nodeid}`: stock {s}, plugin {o}")
    for mode in MODES:
        m = result["modes"].get(mode, {})
        if m.get("timeouts") or m.get("cuda_errors"):
            lines += ["", f"{mode}: tests ended by the time limit: {m.get('timeouts')}; tests after which the "
                          f"worker's CUDA context was unusable (the worker was replaced): "
                          f"{[e['nodeid'] for e in m.get('cuda_errors', [])]}"]
    by_group: dict[str, list[str]] = {}
    for nodeid in result["selected"]:
        by_group.setdefault(group_of(result["spec"], nodeid), []).append(nodeid)
    lines += ["", "## Selection by group", "", "| group | tests | passed in both | with islands |", "|---|---|---|---|"]
    for g, ids in sorted(by_group.items()):
        both = sum(1 for i in ids if _passed_both(pairs.get(i)))
        isl = sum(1 for i in ids if ts.get(i, {}).get("islands"))
        lines.append(f"| {g} | {len(ids)} | {both} | {isl} |")
    return "\n".join(lines) + "\n"


def _passed_both(pair) -> bool:
    return bool(pair) and pair[0] in PASSING and pair[1] in PASSING


OUTCOME_ORDER = ("passed", "failed", "error", "crashed", "timeout", "skipped", "xfailed", "xpassed", "not_run")


def copy_log_tail(src: str, dst: str, limit: int = 4 << 20) -> None:
    if not os.path.exists(src):
        return
    size = os.path.getsize(src)
    with open(src, "rb") as f, open(dst, "wb") as out:
        if size > limit:
            f.seek(size - limit)
            out.write(b"[... %d bytes cut ...]\n" % (size - limit))
        shutil.copyfileobj(f, out)


# ============================================================================== main

def list_selection(args, ws: Workspace, spec: dict) -> int:
    records = ws.records("list")
    env = pytest_env(ws, "stock", records, 0, args.assume_target, False)
    cmd = pytest_command(ws, ws.tests, list(spec["files"]), 0, collect_only=True, keyword=args.keyword, extra=args.extra)
    log = os.path.join(ws.root, "list.log")
    run = run_pytest(cmd, env, ws.tests, log, args.budget)
    rec = read_mode_records(records)
    selected = rec["collected"]
    errors = [r for r in rec["reports"] if r["when"] == "collect"]
    by_group = Counter(group_of(spec, n) for n in selected)
    by_function = Counter(f"{n.partition('::')[0]}::{n.partition('::')[2].split('[')[0]}" for n in selected)
    print(f"selected: {len(selected)} tests ({run['wall_s']} s to collect; pytest exit status {run['exit_status']})")
    for g, n in sorted(by_group.items()):
        print(f"  {n:6d}  {g}")
    if args.verbose:
        for f, n in sorted(by_function.items()):
            print(f"  {n:6d}  {f}")
    for e in errors:
        print(f"collection error: {e['nodeid']}: {e['message']}")
    if args.dry_run:
        for mode in MODES:
            print(f"{mode}: " + " ".join(pytest_command(ws, ws.tests, list(spec["files"]), args.workers,
                                                        keyword=args.keyword, extra=args.extra)))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "triton_language_tests_selection.json"), "w") as f:
            json.dump({"selected": selected, "by_group": by_group, "by_function": by_function,
                       "collection_errors": errors, "assume_target": args.assume_target}, f, indent=1)
    if errors or not selected:
        print(open(log).read()[-3000:], file=sys.stderr)
        return 3
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="folder for the JSON, the summary and the pytest logs")
    parser.add_argument("--tests", default=DEFAULT_TESTS, help="root of the carried Triton tests (default: %(default)s)")
    parser.add_argument("--mode", choices=("both",) + MODES, default="both")
    parser.add_argument("-n", "--workers", type=int, default=min(16, os.cpu_count() or 1),
                        help="pytest-xdist workers per mode (0: none; default: %(default)s)")
    parser.add_argument("--budget", type=float, default=500.0,
                        help="seconds for everything the harness runs, both modes and reruns (default: %(default)s)")
    parser.add_argument("--mode-budget", type=float, default=235.0,
                        help="seconds at most for one mode's pytest run (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds one test may take before its process is ended (default: %(default)s)")
    parser.add_argument("--sample", type=float, default=1.0, help="scale every rule's sample, to run fewer tests")
    parser.add_argument("--selection", metavar="JSON",
                        help="a selection of one's own instead of SELECTION ({'files': {path: [rule, ...]}}, paths "
                             "relative to --tests); the carried files are then not checked against MANIFEST")
    parser.add_argument("-k", "--keyword", help="a pytest -k expression, on top of the selection")
    parser.add_argument("--pytest-args", default="",
                        help="more pytest arguments, one string (e.g. '--device cpu' with TRITON_INTERPRET=1)")
    parser.add_argument("--concurrent", action="store_true",
                        help="run the two modes at the same time, half the workers each")
    parser.add_argument("--strict", action="store_true",
                        help="plugin mode with LINEAR_LAYOUTS_STRICT_CHECK=1 (an island that fails its check is an "
                             "error, not a hand-back to Triton)")
    parser.add_argument("--no-rerun", action="store_true", help="do not run regressions again")
    parser.add_argument("--list", action="store_true", help="collect the selection and print its size; run nothing")
    parser.add_argument("--dry-run", action="store_true", help="--list, and print the pytest commands")
    parser.add_argument("--assume-target", metavar="cuda:90",
                        help="with --list on a machine without a GPU: collect as on that target")
    parser.add_argument("--keep", metavar="DIR", help="keep the work folder (caches, records) in DIR")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("linear_layouts") is None:   # every test process imports it
        from harness.common import INSTALL_HINT
        print(f"triton_language_tests: {INSTALL_HINT}", file=sys.stderr)
        return 3
    start = time.monotonic()
    args.tests = os.path.abspath(args.tests)
    args.extra = shlex.split(args.pytest_args)
    if not os.path.isdir(args.tests):
        print(f"no tests folder {args.tests} (see MANIFEST in {__file__})", file=sys.stderr)
        return 3
    if args.out:
        args.out = os.path.abspath(args.out)
    if args.selection:
        with open(args.selection) as f:
            spec = json.load(f)
        sources = {"missing": [], "changed": [], "ok": None, "note": f"own selection {args.selection}"}
    else:
        spec = selection_spec(args.sample)
        sources = check_sources(args.tests)
        if sources["missing"] == list(MANIFEST):
            print(f"no carried Triton tests under {args.tests} (see MANIFEST in {__file__})", file=sys.stderr)
            return 3
        if not sources["ok"]:
            print(f"warning: carried tests differ from the manifest: {sources}", file=sys.stderr)
    if args.workers > 0 and importlib.util.find_spec("xdist") is None:
        print("pytest-xdist is not installed (-n 0 runs without it)", file=sys.stderr)
        return 3
    ws = Workspace(spec, args.tests, args.keep)
    try:
        if args.list or args.dry_run:
            return list_selection(args, ws, spec)
        if not args.out:
            parser.error("--out is required for a run")
        os.makedirs(args.out, exist_ok=True)
        return run_both(args, ws, spec, sources, start)
    finally:
        if not args.keep:
            shutil.rmtree(ws.root, ignore_errors=True)


def run_both(args, ws: Workspace, spec: dict, sources: dict, start: float) -> int:
    modes = MODES if args.mode == "both" else (args.mode,)
    reserve = 15.0
    results, logs = {}, {}
    workers = max(1, args.workers // 2) if args.concurrent and args.workers > 1 and len(modes) > 1 else args.workers

    def launch(mode):
        records = ws.records(mode)
        env = pytest_env(ws, mode, records, args.timeout, None, args.strict)
        cmd = pytest_command(ws, ws.tests, list(spec["files"]), workers, keyword=args.keyword, extra=args.extra)
        logs[mode] = os.path.join(ws.root, f"pytest-{mode}.log")
        return records, env, cmd

    if args.concurrent and len(modes) > 1:
        import threading
        budget = min(args.mode_budget, args.budget - (time.monotonic() - start) - reserve)
        runs = {}

        def go(mode):
            records, env, cmd = launch(mode)
            runs[mode] = (run_pytest(cmd, env, ws.tests, logs[mode], budget), records, cmd)
        threads = [threading.Thread(target=go, args=(m,)) for m in modes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        runs = {}
        for mode in modes:
            budget = min(args.mode_budget, args.budget - (time.monotonic() - start) - reserve)
            records, env, cmd = launch(mode)
            print(f"{mode}: running ({budget:.0f} s at most)", flush=True)
            runs[mode] = (run_pytest(cmd, env, ws.tests, logs[mode], budget), records, cmd)
    for mode, (run, records, cmd) in runs.items():
        results[mode] = summarize_mode(mode, run, read_mode_records(records))
        print(f"{mode}: {results[mode]['counts']} in {run['wall_s']} s"
              + (" (cut by the budget)" if run["cut_by_budget"] else ""), flush=True)

    selected = []
    for mode in modes:
        rec = read_mode_records(ws.records(mode))
        if len(rec["collected"]) > len(selected):
            selected = rec["collected"]
    stock = results.get("stock", {}).get("outcomes", {})
    ours = results.get("plugin", {}).get("outcomes", {})
    comparison = compare(stock, ours, selected)

    rerun = {}
    left = args.budget - (time.monotonic() - start) - reserve
    if comparison["regressions"] and not args.no_rerun and len(modes) == 2 and left > 30:
        ids = comparison["regressions"][:64]
        outcomes = {}
        for mode in ("plugin", "stock"):
            records = ws.records(f"rerun-{mode}")
            env = pytest_env(ws, mode, records, args.timeout, None, args.strict)
            # a few tests: one process (no pytest-xdist start-up); more: workers
            cmd = pytest_command(ws, ws.tests, [], 0 if len(ids) <= 4 else min(len(ids), args.workers),
                                 node_ids=ids, extra=args.extra)
            log = os.path.join(ws.root, "pytest-rerun.log")
            logs["rerun"] = log
            budget = min(120.0, (args.budget - (time.monotonic() - start) - reserve) / (2 if mode == "plugin" else 1))
            rerun_run = run_pytest(cmd, env, ws.tests, log, budget)
            rec = read_mode_records(records)
            outcomes[mode] = outcomes_from_reports(rec["reports"], rec["timeouts"], rec["cuda_errors"],
                                                   cut_by_budget=rerun_run["cut_by_budget"])
        rerun = {i: (outcomes["stock"].get(i, "not_run"), outcomes["plugin"].get(i, "not_run")) for i in ids}

    result = {
        "tool": "benchmarks/triton_language_tests.py", "environment": environment(), "workers": workers,
        "command": " ".join(["python", "benchmarks/triton_language_tests.py"] + sys.argv[1:]),
        "source": SOURCE, "manifest": {k: {"path": v[0], "blob": v[1]} for k, v in MANIFEST.items()},
        "sources": sources, "spec": spec, "selected": selected,
        "modes": {m: {k: v for k, v in r.items() if k != "outcomes"} for m, r in results.items()},
        "comparison": {k: v for k, v in comparison.items() if k != "pairs"},
        # test id -> [stock outcome, plugin outcome]
        "outcomes": {i: list(p) for i, p in comparison["pairs"].items()},
        "rerun": {i: list(p) for i, p in rerun.items()},
    }
    status, line = verdict(result)
    result["exit_status"], result["verdict"] = status, line
    result["wall_s"] = round(time.monotonic() - start, 1)
    md = markdown(result)
    with open(os.path.join(args.out, "triton_language_tests.json"), "w") as f:
        json.dump(result, f, indent=1, default=list)
    with open(os.path.join(args.out, "triton_language_tests.md"), "w") as f:
        f.write(md)
    for name, path in logs.items():
        copy_log_tail(path, os.path.join(args.out, f"pytest-{name}.log"))
    print(md)
    print(f"{line} (exit status {status}; {result['wall_s']} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
