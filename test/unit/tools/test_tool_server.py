"""The suites' fork server (test/support/tool_server.py): a command run through its shim must
be indistinguishable from the console script run directly: the same stdout, stderr and exit
status, for input from a file or stdin, relative paths, the caller's environment, an error, a
death by signal; a shim killed on a timeout takes its command with it; with the server gone the
shim runs the real console script."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from support import tool_server

pytestmark = pytest.mark.skipif(not tool_server.tool_server_works(),
                                reason="the tool server needs fork, descriptor passing and pidfds (Linux)")

MODULE = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32, ttg.target = "cuda:90"} {
  tt.func @f(%a: tensor<32x32xf16, #blocked>) -> tensor<32x32xf16, #blocked1> {
    %b = ttg.convert_layout %a : tensor<32x32xf16, #blocked> -> tensor<32x32xf16, #blocked1>
    tt.return %b : tensor<32x32xf16, #blocked1>
  }
}
"""

TOOLS = {"ll-opt": "linear_layouts.tools.ll_opt:main", "abort": "os:abort", "pause": "signal:pause"}


@pytest.fixture(scope="module")
def server():
    env = dict(os.environ, LINEAR_LAYOUTS_CACHE="off")
    started = tool_server.ToolServer(tools=TOOLS, env=env, preload=["linear_layouts.tools.ll_opt"])
    yield started
    started.stop()


def _direct(argv, **kwargs):
    return subprocess.run([sys.executable, "-m", "linear_layouts.tools.ll_opt"] + argv, capture_output=True,
                          timeout=120, **kwargs)


def _served(server, argv, tool="ll-opt", **kwargs):
    return subprocess.run([os.path.join(server.shims, tool)] + argv, capture_output=True, timeout=120, **kwargs)


def _without_warning_locations(stderr: bytes) -> bytes:
    """A warning's ``file:line: `` prefix, and the source line Python prints under it, name the
    frame that imported the package: runpy's for ``python -m`` (no source), the server's in a
    worker."""
    stderr = re.sub(rb"(?m)^.*?:\d+: (\w+Warning: .*\n)(  .*\n)?", rb"\1", stderr)
    return stderr


def _same(served, direct):
    assert (served.returncode, served.stdout, _without_warning_locations(served.stderr)) == \
        (direct.returncode, direct.stdout, _without_warning_locations(direct.stderr))


def test_a_file_with_a_relative_path_in_the_callers_directory(server, tmp_path):
    (tmp_path / "k.mlir").write_text(MODULE)
    argv = ["k.mlir", "-p", "ll-attach-layouts,ll-classify-conversions{report=true}"]
    served, direct = _served(server, argv, cwd=tmp_path), _direct(argv, cwd=tmp_path)
    assert served.returncode == 0 and b"ll.scope" in served.stdout
    _same(served, direct)


def test_stdin_and_an_output_file(server, tmp_path):
    argv = ["-", "-p", "ll-attach-layouts", "-o", "out.mlir"]
    served = _served(server, argv, input=MODULE.encode(), cwd=tmp_path)
    served_text = (tmp_path / "out.mlir").read_text()
    direct = _direct(argv, input=MODULE.encode(), cwd=tmp_path)
    _same(served, direct)
    assert served.returncode == 0 and served_text == (tmp_path / "out.mlir").read_text() and "#ttg" in served_text


def test_an_error_exits_1_with_the_same_message(server, tmp_path):
    argv = ["-", "-p", "ll-no-such-pass"]
    served, direct = _served(server, argv, input=MODULE.encode()), _direct(argv, input=MODULE.encode())
    assert served.returncode == 1 and b"ll-no-such-pass" in served.stderr
    _same(served, direct)


def test_the_callers_environment_is_the_commands(server):
    """A setting present only in the caller's environment (not the server's) decides the run."""
    env = dict(os.environ, LINEAR_LAYOUTS_OPTIONS="{not json")
    argv = ["-", "-p", "ll-attach-layouts"]
    served, direct = _served(server, argv, input=MODULE.encode(), env=env), _direct(argv, input=MODULE.encode(), env=env)
    assert served.returncode == 1 and b"LINEAR_LAYOUTS_OPTIONS" in served.stderr
    assert b"RuntimeWarning: linear-layouts stays off" in served.stderr      # the start-up's reading
    _same(served, direct)


def test_a_death_by_signal_is_the_callers_death_by_the_same_signal(server):
    assert _served(server, [], tool="abort").returncode == -signal.SIGABRT


def test_a_signal_to_the_shim_reaches_the_command(server):
    shim = subprocess.Popen([os.path.join(server.shims, "pause")])
    time.sleep(1.0)                                   # connected and forked
    shim.send_signal(signal.SIGTERM)
    assert shim.wait(timeout=30) == -signal.SIGTERM


def _descendants(pid: int) -> set[int]:
    found, frontier = set(), [pid]
    while frontier:
        parent = frontier.pop()
        for task in os.listdir(f"/proc/{parent}/task"):
            with open(f"/proc/{parent}/task/{task}/children") as f:
                children = [int(c) for c in f.read().split()]
            found.update(children)
            frontier.extend(children)
    return found


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads process trees from /proc (Linux)")
def test_a_shim_killed_on_a_timeout_takes_its_command_with_it(server):
    before = _descendants(server.process.pid)
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([os.path.join(server.shims, "pause")], timeout=1.0)
    deadline = time.monotonic() + 30
    while _descendants(server.process.pid) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _descendants(server.process.pid) - before


def test_without_the_server_the_shim_runs_the_real_command(tmp_path):
    stopped = tool_server.ToolServer(tools={"ll-opt": TOOLS["ll-opt"]}, env=dict(os.environ), preload=[])
    shim = os.path.join(stopped.shims, "ll-opt")
    kept = str(tmp_path / "ll-opt")
    os.replace(shim, kept)                            # stop() removes the shims: keep one
    stopped.stop()
    result = subprocess.run([kept, "--list-passes"], capture_output=True, timeout=120)
    assert result.returncode == 0 and b"ll-attach-layouts" in result.stdout
