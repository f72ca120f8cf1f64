"""pytest plugin of ``benchmarks/triton_language_tests.py``: Triton's own tests, stock and with
the plugin on, in every process of the run.

The harness puts this folder on ``PYTHONPATH`` and runs ``python -m pytest -p peer_pytest_plugin``;
the environment says what to do:

``LL_PEER_MODE``          ``plugin`` (``linear_layouts.enable()`` in every process) or ``stock``
                          (``linear_layouts`` imported, nothing enabled: the same conditions
                          otherwise).  Unset: this plugin does nothing.
``LL_PEER_OUT``           folder for the records (below)
``LL_PEER_SELECTION``     JSON file: which tests of each file run (see ``select``)
``LL_PEER_TEST_TIMEOUT``  seconds one test may take (setup, call and teardown) before its
                          process is ended: a hung kernel otherwise stops a worker for good
``LL_PEER_FAKE_TARGET``   ``cuda:90``: answer Triton's and torch's device questions as an sm_90
                          GPU would, so that a machine without a GPU collects (``--list``) the
                          tests an H100 would; nothing can run then

Every process (pytest's, each pytest-xdist worker, and through ``sitecustomize.py`` beside this
file any other Python process the tests start) calls ``process_start`` once.  The records, one
JSON object per line, in ``LL_PEER_OUT``:

``processes.jsonl``  one line per process: pid, worker, mode, whether the plugin is active
``reports.jsonl``    one line per test report (setup, call, teardown) and per collection
                     error, written by the process that sees every report (the xdist
                     controller), so a run ended early still has every finished test
``timeouts.jsonl``   the test a process was running when ``LL_PEER_TEST_TIMEOUT`` ended it
``stats-<pid>.json`` ``linear_layouts.stats()`` of each process that compiled a kernel
``test_stats.jsonl`` (plugin mode) per test that compiled a kernel through the plugin: kernels,
                     islands, conversions, fallbacks
``hook_lost.jsonl``  (plugin mode) tests after which the plugin was no longer Triton's hook
``cuda_errors.jsonl`` tests that left their process's CUDA context unusable (an illegal address,
                     a device-side assert...): the process ends after them, so that later tests
                     run in a fresh one
``collected-<worker>.json`` the selected node ids, in run order (the controller, or gw0)
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import zlib

MODE_VARIABLE = "LL_PEER_MODE"
OUT_VARIABLE = "LL_PEER_OUT"
SELECTION_VARIABLE = "LL_PEER_SELECTION"
TIMEOUT_VARIABLE = "LL_PEER_TEST_TIMEOUT"
FAKE_TARGET_VARIABLE = "LL_PEER_FAKE_TARGET"
MODES = ("stock", "plugin")
TIMEOUT_EXIT_STATUS = 86

_started = None          # the process record once process_start ran
_stats_written = False


def _out_path(name: str):
    folder = os.environ.get(OUT_VARIABLE, "").strip()
    return os.path.join(folder, name) if folder else None


def append_record(name: str, record: dict) -> None:
    """One JSON line, appended in a single write (processes share these files)."""
    path = _out_path(name)
    if path is None:
        return
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def process_start(origin: str, worker: str | None = None) -> dict | None:
    """Import ``linear_layouts`` and, in plugin mode, enable it; record the process.  Once per
    process (later calls return the first record; a later ``worker`` name is recorded too)."""
    global _started
    mode = os.environ.get(MODE_VARIABLE, "").strip()
    if not mode:
        return None
    if mode not in MODES:
        raise RuntimeError(f"{MODE_VARIABLE}={mode!r}: expected one of {', '.join(MODES)}")
    if _started is not None:
        if worker is not None and _started.get("worker") != worker:
            _started = dict(_started, worker=worker, origin=f"{_started['origin']}+{origin}")
            append_record("processes.jsonl", _started)
        return _started
    import linear_layouts
    from linear_layouts.passes.drop_in import hook

    error = None
    if mode == "plugin" and hook.active_config() is None:
        try:
            linear_layouts.enable()
        except Exception as e:  # recorded: the harness fails a plugin run with an inactive process
            error = f"{type(e).__name__}: {e}"
    _started = {"pid": os.getpid(), "ppid": os.getppid(), "origin": origin, "worker": worker, "mode": mode,
                "active": hook.active_config() is not None, "error": error, "argv": sys.argv[:3]}
    append_record("processes.jsonl", _started)
    import atexit
    atexit.register(write_stats)
    return _started


def write_stats() -> None:
    """``linear_layouts.stats()`` of this process, to ``stats-<pid>.json`` (overwritten by a later
    call in the same process: the pytest hooks write it, and the exit handler again)."""
    global _stats_written
    if _started is None:
        return
    path = _out_path(f"stats-{os.getpid()}.json")
    if path is None:
        return
    try:
        from linear_layouts.passes.drop_in import hook
        s = hook.stats()
    except Exception:
        return
    record = {"pid": os.getpid(), "worker": _started.get("worker"), "mode": _started["mode"],
              "active": hook.active_config() is not None, "kernels": s.kernels,
              "kernels_with_islands": s.kernels_with_islands, "conversions": s.conversions, "islands": s.islands,
              "local_loads": s.local_loads, "local_loads_lowered": s.local_loads_lowered,
              "local_writes_lowered": s.local_writes_lowered, "guard_barriers": s.guard_barriers,
              "guard_barriers_dropped": s.guard_barriers_dropped,
              "fallbacks": [{"kernel": f.kernel, "stage": f.stage, "reason": f.reason} for f in s.fallbacks]}
    if not _stats_written and not (record["kernels"] or record["fallbacks"]):
        return      # a process that compiled nothing (most spawned helpers) leaves no file
    tmp = f"{path}.{threading.get_ident()}.tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, sort_keys=True)
    os.replace(tmp, path)
    _stats_written = True


# ----------------------------------------------------------------------------- selection

def matching_rule(spec: dict, relpath: str, name: str, nodeid: str) -> dict | None:
    """The first rule of the selection ``spec`` that keeps the test ``name``
    (``function[params]``) of the file ``relpath`` (relative to the tests' root, '/'-separated),
    or None: the test is not selected.

    ``spec`` is ``{"files": {relpath: [rule, ...]}, "shuffle_seed": ...}``.  A rule:
    ``functions`` (list of function names; absent: all), ``include`` / ``exclude`` (regular
    expressions searched in ``name``), ``sample`` (a fraction: the tests whose CRC32 of the node
    id, mod 1000, is below 1000 * sample - the same choice on every machine and in every
    process).  Other keys (``group``) are for the reader.
    """
    for rule in spec.get("files", {}).get(relpath, ()):
        function = name.split("[", 1)[0]
        if "functions" in rule and function not in rule["functions"]:
            continue
        if rule.get("include") and not re.search(rule["include"], name):
            continue
        if rule.get("exclude") and re.search(rule["exclude"], name):
            continue
        sample = rule.get("sample")
        if sample is not None and zlib.crc32(nodeid.encode()) % 1000 >= round(1000 * sample):
            continue
        return rule
    return None


def keep(spec: dict, relpath: str, name: str, nodeid: str) -> bool:
    return matching_rule(spec, relpath, name, nodeid) is not None


# ----------------------------------------------------------------------------- watchdog

class _Watchdog:
    """Ends the process when one test runs past the time limit (a hung kernel: Python signal
    handlers never run while the process waits on the GPU).  pytest-xdist reports the test of a
    worker that died as failed and starts a new worker; ``timeouts.jsonl`` says it timed out."""

    def __init__(self, limit: float):
        self.limit = limit
        self.nodeid = None
        self.deadline = None
        self.lock = threading.Lock()
        threading.Thread(target=self._run, name="ll-peer-watchdog", daemon=True).start()

    def start(self, nodeid: str) -> None:
        with self.lock:
            self.nodeid, self.deadline = nodeid, time.monotonic() + self.limit

    def stop(self) -> None:
        with self.lock:
            self.nodeid = self.deadline = None

    def _run(self) -> None:
        while True:
            time.sleep(0.5)
            with self.lock:
                nodeid, deadline = self.nodeid, self.deadline
            if deadline is not None and time.monotonic() > deadline:
                append_record("timeouts.jsonl", {"nodeid": nodeid, "pid": os.getpid(), "limit_s": self.limit,
                                                 "worker": (_started or {}).get("worker")})
                try:
                    import faulthandler
                    sys.stderr.write(f"\nll-peer: {nodeid} ran past {self.limit:.0f} s; ending the process\n")
                    faulthandler.dump_traceback(all_threads=True)
                    sys.stderr.flush()
                except Exception:
                    pass
                write_stats()
                os._exit(TIMEOUT_EXIT_STATUS)


_watchdog = None


# ----------------------------------------------------------------------------- fake target

def install_fake_target(value: str) -> None:
    """``cuda:90``: Triton's active driver and torch's capability answer as that GPU would (for
    collection on a machine without one; nothing may run)."""
    backend, _, arch = value.partition(":")
    if backend != "cuda" or not arch.isdigit():
        raise RuntimeError(f"{FAKE_TARGET_VARIABLE}={value!r}: expected cuda:<arch>, e.g. cuda:90")
    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    capability = (int(arch) // 10, int(arch) % 10)
    torch.cuda.get_device_capability = lambda *args, **kwargs: capability
    torch.cuda.get_device_name = lambda *args, **kwargs: f"fake sm_{arch} (collection only)"

    class FakeDriver:
        def get_current_target(self):
            return GPUTarget("cuda", int(arch), 32)

        def get_active_torch_device(self):
            return torch.device("cuda", 0)

        def get_current_device(self):
            return 0

        def __getattr__(self, name):
            raise RuntimeError(f"{FAKE_TARGET_VARIABLE}: a fake {value} driver has no {name} (collection only)")

    triton.runtime.driver.set_active(FakeDriver())


# ----------------------------------------------------------------------------- pytest hooks

def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    worker = config.workerinput.get("workerid") if _is_worker(config) else "controller"
    if not os.environ.get(MODE_VARIABLE):
        return
    fake = os.environ.get(FAKE_TARGET_VARIABLE, "").strip()
    if fake:
        install_fake_target(fake)
    process_start("pytest", worker=worker)
    config._ll_peer_selection = None
    path = os.environ.get(SELECTION_VARIABLE, "").strip()
    if path:
        with open(path) as f:
            config._ll_peer_selection = json.load(f)
    global _watchdog
    limit = float(os.environ.get(TIMEOUT_VARIABLE, "0") or 0)
    if limit > 0 and _watchdog is None:
        _watchdog = _Watchdog(limit)


def pytest_collection_modifyitems(session, config, items):
    spec = getattr(config, "_ll_peer_selection", None)
    if spec is None:
        return
    root = str(config.rootpath)
    kept, dropped = [], []
    for item in items:
        relpath = os.path.relpath(str(item.path), root).replace(os.sep, "/")
        (kept if keep(spec, relpath, item.name, item.nodeid) else dropped).append(item)
    seed = spec.get("shuffle_seed")
    if seed is not None:   # one order everywhere: a run cut short by its budget misses tests of every file
        kept.sort(key=lambda item: zlib.crc32(f"{seed}:{item.nodeid}".encode()))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_collection_finish(session):
    """The tests this run will run (after every deselection, -k included), in run order."""
    worker = (_started or {}).get("worker")
    if worker in ("controller", "gw0") and getattr(session.config, "_ll_peer_selection", None) is not None:
        path = _out_path(f"collected-{worker}.json")
        if path is not None:
            with open(path, "w") as f:
                json.dump([item.nodeid for item in session.items], f)


def pytest_runtest_protocol(item, nextitem):
    global _runs_tests
    _runs_tests = True
    if _sticky_error is not None:
        # the test before this one broke the CUDA context (its reports and its completion are
        # with pytest-xdist's controller by now): a fresh worker runs this one and the rest
        write_stats()
        sys.stdout.flush()
        sys.stderr.flush()
        time.sleep(0.2)
        os._exit(STICKY_EXIT_STATUS)
    if _watchdog is not None:
        _watchdog.start(item.nodeid)
    return None


_runs_tests = False     # this process runs tests (a pytest-xdist worker, or pytest without workers)
_sticky_error = None    # the report of a test that left the process's CUDA context unusable

# Errors after which every later kernel launch of the process fails: its later tests would fail
# for it.  The process ends when it is to run its next test (pytest-xdist reports that one as
# crashed, ``cuda_errors.jsonl`` says why, and starts a new worker for the rest).
STICKY_CUDA_ERRORS = re.compile(
    r"illegal memory access|unspecified launch failure|device-side assert|misaligned address|illegal instruction"
    r"|invalid program counter|hardware stack error|launch timed out|out of range (shared or local )?address",
    re.IGNORECASE)
CUDA_ERROR_PREFIX = re.compile(r"CUDA error|Triton Error \[CUDA\]|CUDA_ERROR_|cudaError|AcceleratorError")
STICKY_EXIT_STATUS = 87


def breaks_cuda_context(message: str | None) -> bool:
    """Whether a failed test's error (pytest's one-line crash message) is a CUDA error that leaves
    the process's context unusable.  An assertion that merely mentions one (a test checking that a
    kernel it ran in another process hit a device-side assert) is not."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    if first.startswith(("AssertionError", "assert ")):
        return False
    return bool(CUDA_ERROR_PREFIX.search(first) and STICKY_CUDA_ERRORS.search(first))


def pytest_runtest_logfinish(nodeid, location):
    if _watchdog is not None:
        _watchdog.stop()
    if _started is not None and _started["mode"] == "plugin":
        _after_test_in_plugin_mode(nodeid)


_last_counts = (0, 0, 0, 0)
_last_stats_write = 0.0


def _after_test_in_plugin_mode(nodeid: str) -> None:
    """What the plugin did in this test (``test_stats.jsonl``: the tests that compiled a kernel
    through it, with how many islands), and whether the test left it on: a test that swaps
    Triton's knobs (``fresh_knobs``) may drop our hook; it is put back and the test named in
    ``hook_lost.jsonl``."""
    global _last_counts
    import triton
    from linear_layouts.passes.drop_in import hook

    global _last_stats_write
    s = hook.stats()
    counts = (s.kernels, s.islands, s.conversions, len(s.fallbacks))
    delta = [a - b for a, b in zip(counts, _last_counts)]
    _last_counts = counts
    if any(delta):
        append_record("test_stats.jsonl", {"nodeid": nodeid, "kernels": delta[0], "islands": delta[1],
                                           "conversions": delta[2], "fallbacks": delta[3]})
        if time.monotonic() - _last_stats_write > 5.0:   # a run its budget ends is killed: no exit handler
            write_stats()
            _last_stats_write = time.monotonic()
    if hook.active_config() is None or triton.knobs.runtime.add_stages_inspection_hook is not hook._stages_hook:
        append_record("hook_lost.jsonl", {"nodeid": nodeid, "pid": os.getpid(),
                                          "worker": (_started or {}).get("worker")})
        import linear_layouts
        linear_layouts.disable()
        linear_layouts.enable()


def _short(longrepr) -> str | None:
    if longrepr is None:
        return None
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(longrepr)
    return text.strip()[:500]


def pytest_runtest_logreport(report):
    global _sticky_error
    if not os.environ.get(MODE_VARIABLE):
        return
    if _runs_tests and report.failed and _sticky_error is None:
        message = _short(report.longrepr) or ""
        if breaks_cuda_context(message):
            _sticky_error = {"nodeid": report.nodeid, "when": report.when, "message": message[:300]}
            append_record("cuda_errors.jsonl", dict(_sticky_error, pid=os.getpid(),
                                                    worker=(_started or {}).get("worker")))
    if (_started or {}).get("worker") not in (None, "controller"):
        return
    node = getattr(report, "node", None)   # pytest-xdist: the worker that ran it
    worker = getattr(node, "gateway", None)
    append_record("reports.jsonl", {
        "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
        "duration": round(getattr(report, "duration", 0.0), 3), "xfail": hasattr(report, "wasxfail"),
        "worker": getattr(worker, "id", None), "message": _short(report.longrepr) if report.failed else None,
        "skip_reason": (str(report.longrepr[2])[:200] if report.skipped and isinstance(report.longrepr, tuple)
                        else None)})


def pytest_collectreport(report):
    if not report.failed or not os.environ.get(MODE_VARIABLE):
        return
    if (_started or {}).get("worker") not in (None, "controller"):
        return
    append_record("reports.jsonl", {"nodeid": report.nodeid, "when": "collect", "outcome": "failed",
                                    "duration": 0.0, "xfail": False, "worker": None,
                                    "message": _short(report.longrepr)})


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get(MODE_VARIABLE):
        write_stats()


def pytest_unconfigure(config):
    if os.environ.get(MODE_VARIABLE):
        write_stats()
