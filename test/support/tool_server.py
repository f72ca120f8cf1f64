"""A fork server for the suites: one Python that has imported Triton and our tools once, and
forks a fresh process for each command it is asked to run.

Why: a Python that imports Triton, numpy and our passes spends about 0.6 s of CPU before it
reads its input.  lit runs `ll-opt` about 200 times a release and CI runs lit under four
releases; through this server each of those runs costs a fork and the work itself.

How a command travels (every piece below is in this file):

    lit's RUN line  `ll-opt k.mlir -p ll-attach-layouts | FileCheck k.mlir`
      -> the shim named `ll-opt` first on PATH (a `python -I -S` script, stdlib only, ~20 ms)
         connects to the server's socket and sends argv, cwd, the environment and its
         stdin/stdout/stderr (the descriptors themselves, SCM_RIGHTS)
      -> the server forks a *handler* for the connection; the handler forks the *worker*
      -> the worker takes the descriptors as 0/1/2, the cwd, the environment and argv, runs the
         tool's entry point as its console script would, and exits as a fresh interpreter does
         (atexit, thread shutdown, flushing stdout)
      -> the handler waits for the worker and sends its exit status ("exit 1", "signal 6");
         the shim exits with the same status (re-raising the same signal)

The worker is the same code path as `ll-opt` started from a shell: `main()` of the same module,
same argv, environment, working directory and standard streams, and the package's start-up
reading of the environment run again with the command's.  What differs is only what the server
did before the fork: imports, and one MLIR context (the first one registers every dialect; a
child inherits the registration, as `ll-opt`'s own parse child does); and where a warning says it
came from (the file and line Python prints in front of it).  The console scripts' own
start (the wheel's entry points, the start-up hook) is tested where it matters: `make smoke`
runs every entry point from an installed wheel, and the pytest suites start `ll-opt` directly.

If the server is gone (never started, or exited), the shim runs the real console script: a
command never fails for want of the server.  The server exits when the process that started it
exits, or after IDLE_EXIT_S without a command.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

IDLE_EXIT_S = 900
HEADER = struct.Struct("!I")   # the length of the JSON request that follows


def tool_server_works() -> bool:
    """The server forks, passes descriptors over a Unix socket and waits on a pidfd (Linux 5.3+)."""
    return hasattr(os, "fork") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


# --------------------------------------------------------------------------- the shim

SHIM = '''#!{python} -IS
# {tool}: forwarded to the suite's fork server ({server_module}); the real one if it is gone.
import json, os, signal, socket, struct, sys
SOCKET, REAL = {socket_path!r}, {real!r}
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCKET)
except OSError:
    os.execv(REAL, [REAL] + sys.argv[1:])
fds = []
for fd in (0, 1, 2):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:                      # a closed stream: the worker gets /dev/null, as Python does
        fds.append(os.open(os.devnull, os.O_RDWR))
request = json.dumps({{"tool": {tool!r}, "argv": [{tool!r}] + sys.argv[1:], "cwd": os.getcwd(),
                      "env": dict(os.environ)}}).encode()
socket.send_fds(s, [struct.pack("!I", len(request)) + request], fds)
def forward(number, frame):
    s.sendall(b"%d\\n" % number)
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(number, forward)
reply = b""
while not reply.endswith(b"\\n"):
    try:
        chunk = s.recv(64)
    except InterruptedError:
        continue
    if not chunk:
        sys.exit(70)                     # the server died mid-command: EX_SOFTWARE
    reply += chunk
kind, value = reply.split()
if kind == b"signal":
    signal.signal(int(value), signal.SIG_DFL)
    os.kill(os.getpid(), int(value))
sys.exit(int(value))
'''


def write_shims(directory: str, socket_path: str, tools: dict[str, str], bin_dir: str) -> None:
    """One executable shim per tool name in ``directory``; the real console scripts are in
    ``bin_dir`` (the venv's bin)."""
    for tool in tools:
        path = os.path.join(directory, tool)
        with open(path, "w") as f:
            f.write(SHIM.format(python=sys.executable, tool=tool, socket_path=socket_path,
                                real=os.path.join(bin_dir, tool), server_module=__name__))
        os.chmod(path, 0o755)


# --------------------------------------------------------------------------- starting one

class ToolServer:
    """A running server and the directory of its shims (put it first on PATH)."""

    def __init__(self, tools: dict[str, str], env: dict[str, str], preload: list[str]):
        self.directory = tempfile.mkdtemp(prefix="ll-tool-server-")
        self.socket_path = os.path.join(self.directory, "socket")
        self.shims = os.path.join(self.directory, "bin")
        os.mkdir(self.shims)
        write_shims(self.shims, self.socket_path, tools, os.path.dirname(sys.executable))
        argv = [sys.executable, os.path.abspath(__file__), self.socket_path, json.dumps(tools), json.dumps(preload),
                str(os.getpid())]
        self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        ready = self.process.stdout.readline()
        if ready.strip() != b"ready":
            self.process.wait()
            raise RuntimeError(f"the tool server did not start (exit {self.process.returncode})")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()
        for name in os.listdir(self.shims):
            os.unlink(os.path.join(self.shims, name))
        os.rmdir(self.shims)
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        os.rmdir(self.directory)


# --------------------------------------------------------------------------- the server

def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    if len(data) < HEADER.size:
        raise ConnectionError("short request")
    (length,) = HEADER.unpack_from(data)
    data = data[HEADER.size:]
    while len(data) < length:
        chunk = conn.recv(length - len(data))
        if not chunk:
            raise ConnectionError("truncated request")
        data += chunk
    return json.loads(data), fds


def _relay(conn: socket.socket, worker: int) -> None:
    """The handler: wait for the worker, forward the shim's signals to it, report its status.
    If the shim goes away (killed on a timeout), the worker's process group goes too."""
    done = os.pidfd_open(worker)
    while True:
        readable, _, _ = select.select([done, conn], [], [])
        if done in readable:
            _, status = os.waitpid(worker, 0)
            if os.WIFSIGNALED(status):
                reply = b"signal %d\n" % os.WTERMSIG(status)
            else:
                reply = b"exit %d\n" % os.WEXITSTATUS(status)
            try:
                conn.sendall(reply)
            except OSError:
                pass
            os._exit(0)
        message = conn.recv(64)
        if not message:
            try:
                os.killpg(worker, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(worker, 0)
            os._exit(0)
        for line in message.split():
            try:
                os.killpg(worker, int(line))
            except ProcessLookupError:
                pass


def serve(socket_path: str, parent: int) -> dict:
    """Accept commands until the parent exits; returns only in a worker, with its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    last = time.monotonic()
    while True:
        readable, _, _ = select.select([listener], [], [], 1.0)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        if os.getppid() != parent or time.monotonic() - last > IDLE_EXIT_S:
            sys.exit(0)
        if not readable:
            continue
        conn, _ = listener.accept()
        last = time.monotonic()
        if os.fork() != 0:
            conn.close()
            continue
        # The handler.
        listener.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            os._exit(1)
        worker = os.fork()
        if worker == 0:
            os.setpgid(0, 0)
            conn.close()
            for number, fd in enumerate(fds):
                os.dup2(fd, number)
                if fd > 2:
                    os.close(fd)
            return request
        for fd in fds:
            os.close(fd)
        _relay(conn, worker)


def _fresh_streams() -> None:
    """stdin/stdout/stderr over descriptors 0/1/2 as a fresh interpreter makes them (stdout
    block-buffered on a pipe, stderr line-buffered and backslash-escaping)."""
    encoding = sys.stdout.encoding
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.open(0, "rb", closefd=False), encoding=encoding)
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.open(1, "wb", closefd=False), encoding=encoding,
                                                   line_buffering=os.isatty(1))
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.open(2, "wb", closefd=False), encoding=encoding,
                                                   errors="backslashreplace", line_buffering=True)


def run_request(request: dict, tools: dict[str, str]) -> int:
    """In the worker: become the command and run it (its return value is the exit status)."""
    _fresh_streams()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # What `import linear_layouts` does at a fresh process's start, with the command's environment
    # (LINEAR_LAYOUTS turns the plugin on; a bad setting is a warning): the server imported the
    # package with its own.
    if "linear_layouts" in sys.modules:
        sys.modules["linear_layouts"]._read_environment()
    module_name, function = tools[request["tool"]].split(":")
    return getattr(importlib.import_module(module_name), function)()


def _preload(modules: list[str]) -> None:
    """Import what every command imports, and register the dialects once (what a fork then
    inherits); nothing that starts a thread."""
    for name in modules:
        importlib.import_module(name)
    from linear_layouts.passes.ir.bindings import new_context
    new_context()


if __name__ == "__main__":
    socket_path, tools, preload, parent = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
    del sys.path[0]                      # this file's folder: the worker's imports are the tools' own
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    _preload(preload)
    request = serve(socket_path, parent)
    sys.exit(run_request(request, tools))
