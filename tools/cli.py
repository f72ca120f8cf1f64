"""What every command-line tool here shares: usage errors are one line and exit status 1.

argparse's own ``error`` prints the whole usage block and exits with status 2; our tools
promise status 1 and one ``PROG: error: ...`` line for every bad input, usage errors included
(``--max-copies all``, an unknown flag, a choice that does not exist).  Each tool builds its
parser from :class:`ArgumentParser` and turns :class:`UsageError` into that line::

    try:
        args = build_parser().parse_args(argv)
    except UsageError as error:
        print(f"ll-viz: error: {error}", file=sys.stderr)
        return 1
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys


class UsageError(Exception):
    """A command line argparse rejected; the message says which argument and why."""


def version_text(prog: str) -> str:
    """What ``--version`` prints: the package's version and the Triton it runs with, e.g.
    ``ll-opt 0.1.0 (linear-layouts; triton 3.9.0)``.  Triton's version is read from its installed
    metadata, not by importing it (``--version`` stays instant)."""
    from importlib import metadata

    from ..passes.version import __version__

    try:
        triton = f"triton {metadata.version('triton')}"
    except metadata.PackageNotFoundError:
        triton = "triton not installed"
    return f"{prog} {__version__} (linear-layouts; {triton})"


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with our usage errors (:class:`UsageError`) and a ``--version`` option."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_argument("--version", action="version", version=version_text(self.prog),
                          help="print the package's version and the Triton it runs with, then exit")

    def error(self, message):  # argparse would print the usage block and exit 2
        raise UsageError(f"{message} (see {self.prog} --help)")


def decode_utf8(data: bytes) -> str:
    """An input file's bytes as text: UTF-8, with a byte-order mark at the start dropped (some
    editors write one; MLIR's parser stops at it as an unexpected character).  A
    ``UnicodeDecodeError`` counts its positions in ``data``, the mark included, so that a
    message's byte offset is the file's."""
    mark = codecs.BOM_UTF8
    if not data.startswith(mark):
        return data.decode("utf-8")
    try:
        return data[len(mark):].decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnicodeDecodeError(error.encoding, data, error.start + len(mark), error.end + len(mark),
                                 error.reason) from None


def print_output(text: str) -> int:
    """Print a tool's output; a reader that stops early (``ll-viz ... | head``) ends it quietly,
    exit status 0, with no ``BrokenPipeError`` traceback (Python's documented recipe: stdout is
    pointed at devnull so that the flush at exit does not fail again)."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def end_process(code: int) -> None:
    """Exit with ``code`` without Python's teardown, for a console script that compiled Gluon:
    Triton's Gluon keeps layout attributes in module-level caches, and nanobind then prints a
    page of "leaked instance" warnings at exit that concern no user."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
