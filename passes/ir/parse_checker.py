"""Parse a module first where an abort in Triton cannot take the caller down: in a forked child
where forking is cheap, in a checker process of its own where it is not.

Triton aborts the whole process on some malformed modules (asserts in its parser and verifiers),
so text from outside (a user's file, our own rewrite of a module) is parsed once somewhere else
before the caller parses it for real (:func:`parsing.parse_handle`).

A fork costs what the caller holds.  The child gets a copy of the caller's page tables and the
caller takes a copy-on-write fault for each page it writes afterwards, so a parse's cost grows
with the caller's private memory.  CPU a parse of a small module, caller and child together
(``benchmarks/studies/fork_and_checker.py``, results in ``benchmarks/results/``), against the
checker's:

    private memory          fork        checker
    21 MB  (ll-opt)         18 ms       under 1 ms   (after its start: 0.4 s, once)
    90 MB                   26 ms
    229 MB                  36 ms
    439 MB                  59 ms        (a pytest worker late in the suite; a notebook
                                          that ran a report holds as much)

A long-lived process parses many modules, so there the parse goes to the *checker*: a Python of
its own, started on the first parse that needs it (about 0.4 s: it imports Triton's bindings),
which parses each module (into a context it renews every few dozen parses) and answers whether
Triton accepted it.  Triton's printout goes to a file the caller reads, as a forked child's goes
to a pipe.  If Triton aborts, the checker dies of the signal; the caller reports it exactly as a
forked child's death, and the next parse starts a new checker.  (A checker that dies before its
first answer leaves the module to a forked child, which tells an abort from a checker that
cannot start here; after the latter, the process forks as it did before the checker.)  The
checker serves one process (a forked child of the caller starts its own) and exits when the
caller closes its end (or exits).

A process that runs threads besides the main one does not fork here either: a thread may hold a
lock (in malloc, in CUDA's runtime) that the child would wait on forever.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from typing import Callable, Optional

from .sandbox import ChildOutcome, package_python, run_in_child

# Above this much private memory (resident, not backed by a file) a process is one that lives long
# and parses often (a pytest worker holds 200-1000 MB), and the checker's start pays for itself;
# ll-opt holds about 30 MB after parsing and forks (a few parses a run: the start would not).
FORK_LIMIT_BYTES = 64 << 20

# The checker renews its MLIR context after this many parses (see serve()).
CONTEXT_PARSES = 64


def private_memory() -> Optional[int]:
    """This process's resident memory not backed by a file, in bytes (None where the system does
    not say: no ``/proc``)."""
    try:
        with open("/proc/self/statm") as f:
            _, resident, shared = (int(field) for field in f.read().split()[:3])
    except (OSError, ValueError):
        return None
    return (resident - shared) * os.sysconf("SC_PAGE_SIZE")


def forking_is_cheap() -> bool:
    """Fork for the first parse: one thread, and little private memory (or no way to tell)."""
    if threading.active_count() > 1:
        return False
    private = private_memory()
    return private is None or private <= FORK_LIMIT_BYTES


def parse_first(path: str, parse_in_child: Callable[[], str]) -> ChildOutcome:
    """Parse the module in ``path`` where an abort cannot reach this process: ``parse_in_child``
    in a forked child where forking is cheap, the checker elsewhere.  The outcome is a forked
    child's either way: ``ok`` when Triton accepted the module, ``output`` what it printed,
    ``signal`` what killed the parse, if anything."""
    checker = None if forking_is_cheap() else _checker()
    if checker is None or not checker.usable:
        return run_in_child(parse_in_child, report_exception=False)
    outcome = checker.parse(path)
    if outcome is not None:
        return outcome
    # The checker died before its first answer: Triton aborted on this module, or the checker
    # cannot start here (an interpreter that cannot import the package as this one did).  A
    # forked child tells which, and answers.
    forked = run_in_child(parse_in_child, report_exception=False)
    if forked.ok:
        checker.usable = False      # not the module's doing: fork from now on, as before the checker
    return forked


# --------------------------------------------------------------------------- the caller's side

class Checker:
    """The checker process of this process, started on first use."""

    def __init__(self, context_parses: int = CONTEXT_PARSES):
        self.usable = True            # False once it failed to start (parse_first)
        self._context_parses = context_parses
        self._answered = 0            # by the running process
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self.owner = os.getpid()     # the process it serves
        atexit.register(self.close)

    def _start(self) -> subprocess.Popen:
        return subprocess.Popen(package_python(__name__, "serve_from_argv", str(self._context_parses)),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def parse(self, path: str) -> Optional[ChildOutcome]:
        """The outcome of parsing ``path``; None if the checker died before it answered once."""
        with self._lock:
            if self._process is None:
                self._process, self._answered = self._start(), 0
            fd, printed_path = tempfile.mkstemp(prefix="ll_parse_check_", suffix=".txt")
            os.close(fd)
            try:
                answer = self._ask({"path": path, "printed": printed_path})
                with open(printed_path, "rb") as f:
                    printed = f.read().decode(errors="replace")
            finally:
                os.unlink(printed_path)
            if answer is not None:
                self._answered += 1
                return ChildOutcome("" if answer["ok"] else None, printed, None)
            status, self._process = self._process.wait(), None     # Triton took the checker down
            if not self._answered:
                return None
            return ChildOutcome(None, printed, -status if status < 0 else None)

    def _ask(self, request: dict) -> Optional[dict]:
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except (BrokenPipeError, OSError):
            return None
        return json.loads(line) if line else None

    def close(self) -> None:
        """End the checker (at exit; its stdin closing is its signal to go)."""
        process, self._process = self._process, None
        if process is not None and os.getpid() == self.owner:
            process.stdin.close()
            process.wait()


_the_checker: Optional[Checker] = None


def _checker() -> Checker:
    """This process's checker (a forked child of a process with one makes its own)."""
    global _the_checker
    if _the_checker is None or _the_checker.owner != os.getpid():
        _the_checker = Checker()
    return _the_checker


# --------------------------------------------------------------------------- the checker

def serve_from_argv() -> None:
    """The checker's entry (:meth:`Checker._start`): ``sys.argv[1]`` is its context's parses."""
    serve(int(sys.argv[1]))


def serve(context_parses: int = CONTEXT_PARSES) -> None:
    """The checker's loop: one JSON request a line on stdin (``path``: the module's file,
    ``printed``: where Triton's printout goes), one JSON answer a line on stdout (``ok``)."""
    import faulthandler

    from .bindings import bindings, new_context

    faulthandler.disable()   # an abort is an answer here (PYTHONFAULTHANDLER would print a stack into it)
    answers = os.fdopen(os.dup(1), "w")
    context, parses = new_context(), 0
    for line in sys.stdin:
        request = json.loads(line)
        # One context serves ``context_parses`` parses (a fresh one costs about 5 ms, a small
        # module's parse 0.1 ms); what a parse leaves in it (the attributes and types it made,
        # uniqued) changes no later parse's verdict or diagnostics, and renewing it bounds its memory.
        if parses == context_parses:
            context, parses = new_context(), 0
        parses += 1
        with open(request["printed"], "wb") as printed:
            saved = os.dup(1), os.dup(2)
            os.dup2(printed.fileno(), 1)
            os.dup2(printed.fileno(), 2)
            try:
                bindings().parse_mlir_module(request["path"], context)
                ok = True
            except Exception:       # Triton's diagnostics, printed above, say what is wrong
                ok = False
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(saved[0])
                os.close(saved[1])
        answers.write(json.dumps({"ok": ok}) + "\n")
        answers.flush()
