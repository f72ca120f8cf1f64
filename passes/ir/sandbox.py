"""Run a function in a forked child, so that an abort inside Triton's C++ kills only the child.

Triton aborts the whole process on some malformed input (in its parser and in its back end).
``ll-opt`` must answer such input with an error message, so the risky call runs in a child made
by ``fork()`` (cheap after the bindings are loaded: copy on write): the child's stdout and
stderr, where MLIR prints its diagnostics, go through a pipe to the parent, and the function's
text result through a temporary file (it may be megabytes of PTX).

Never used on the drop-in's path (``passes.drop_in.hook``): a process that holds CUDA state and
threads must not fork.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Optional

from .diagnostics import IRError


@dataclass(frozen=True)
class ChildOutcome:
    """How a function run by :func:`run_in_child` ended."""

    returned: Optional[str]   # the function's text result; None if it raised or the child died
    output: str               # what the child printed to stdout and stderr
    signal: Optional[int]     # the signal that killed the child (an abort: SIGABRT), or None

    @property
    def ok(self) -> bool:
        return self.returned is not None


def run_in_child(function: Callable[[], str], report_exception: bool = True) -> ChildOutcome:
    """Call ``function`` in a forked child.  With ``report_exception``, an exception it raises
    is added to the output as ``Type: message`` (callers that print Triton's diagnostics
    instead leave it out: they have a better message)."""
    result_file = tempfile.TemporaryFile(mode="w+b")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only os._exit leaves this block
        status = 1
        try:
            os.close(read_fd)
            os.dup2(write_fd, 2)
            os.dup2(write_fd, 1)
            # An abort is an answer here, not a crash to report: keep Python's fault handler
            # (on under pytest) from printing the child's stack into the output.
            faulthandler.disable()
            text = function()
            result_file.write(text.encode())
            result_file.flush()
            status = 0
        except BaseException as error:  # everything, SystemExit included: the child must reach os._exit
            if report_exception:
                os.write(write_fd, f"{type(error).__name__}: {error}\n".encode(errors="replace"))
        finally:
            os._exit(status)
    os.close(write_fd)
    chunks = []
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    result_file.seek(0)
    returned = result_file.read().decode(errors="replace")
    result_file.close()
    output = b"".join(chunks).decode(errors="replace")
    if os.WIFSIGNALED(status):
        return ChildOutcome(None, output, os.WTERMSIG(status))
    return ChildOutcome(returned if os.WEXITSTATUS(status) == 0 else None, output, None)


def run_forked(function: Callable[[], str]) -> str:
    """Run ``function`` in a forked child and return its text result; what it printed and any
    exception come back in an :class:`IRError`."""
    outcome = run_in_child(function)
    if outcome.signal is not None:
        raise IRError(f"Triton's back end crashed (signal {outcome.signal})\n{outcome.output}".rstrip())
    if not outcome.ok:
        raise IRError(outcome.output.strip() or "Triton's back end failed")
    return outcome.returned


def package_python(module: str, function: str, *arguments: str) -> list[str]:
    """The command line of a new Python that calls ``function()`` of ``module`` (a module of this
    package, as its ``__name__`` names it), with ``arguments`` as ``sys.argv[1:]``.  The child
    imports the package from where this process did (an installed copy, or a checkout some
    folder above maps): that folder goes where PYTHONPATH would put it."""
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    script = f"import sys\nsys.path.insert(1, sys.argv.pop(1))\nfrom {module} import {function}\n{function}()\n"
    return [sys.executable, "-c", script, package_parent, *arguments]
