"""``python -m linear_layouts report PROG.py``: what layout conversions a user's own program has.

The recorder (``passes.drop_in.recorder``) stores every kernel the program compiled.  This module runs
the report: the data model (``tools.report.model``) turns the records into an explanation,
kernel by kernel, and a renderer (``tools.report.markdown``, ``tools.report.html_pages``) writes it:

1. merge the records of every process (``pytest -n`` workers each write their own file) and
   keep one entry per distinct kernel (name, target, TTGIR), counting how often it compiled;
2. for each ``ttg.convert_layout``: where it is in the user's source, its layouts, how far the
   data moves, the plan ours would emit and its cost per warp (``tools.report.conversion_report``), and
   what ``ll-lower-conversions`` does with it: owns it, or leaves it to Triton and why
   (``passes.lower_conversions.plan_module``, measured choices included);
3. compile each kernel's TTGIR stock and with our lowering, and count the data-movement
   instructions of the final PTX / AMDGCN, per kernel and per conversion (``--no-compare`` skips this);
4. with ``--measure`` and a GPU, time each kernel stock and ours with the program's own launches;
5. write the result: ``index.html`` + one page per kernel + pictures (``tools.report.html_pages``), or
   ``report.md`` (``--format md``, also printed, for terminals and CI logs).

Everything here is linear in the number of conversions; pictures are drawn only for the first
``max_pictures`` conversions of each kernel.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
from typing import Optional

from linear_layouts.passes.drop_in import environment, recorder
from linear_layouts.tools.report import html_pages
from linear_layouts.tools.report.model import (DEFAULT_DIRECTORY, DEFAULT_PICTURES, ReportOptions,
                                               attach_measurements, build_kernels, write_atomically)
from linear_layouts.tools.report.markdown import markdown


def write_report(options: ReportOptions, records: Optional[list[dict]] = None) -> str:
    """Write the report of ``options.directory``'s records (or ``records``); returns the path of
    the main file.  Processes writing into one directory take turns (a lock file), and each
    writes everything recorded so far, so the last one to finish leaves the complete report."""
    if records is None and not recorder.read_records(options.directory, None if options.append else options.run):
        raise NothingToReport("the program compiled no Triton kernel: there is nothing to report (a kernel "
                              "compiles when it is first launched, or through triton.compile)")
    os.makedirs(options.directory, exist_ok=True)
    with _directory_lock(options.directory):
        if records is None:
            records = recorder.read_records(options.directory, None if options.append else options.run)
        kernels = build_kernels(records, options)
        attach_measurements(kernels, options.measured)
        if options.format == "md":
            path = os.path.join(options.directory, "report.md")
            write_atomically(path, markdown(kernels, options))
            return path
        return html_pages.write_html(kernels, options)


MODULE_MODE = "ttgir"   # a record's mode when it was read from a TTGIR file, not recorded from a run


def module_record(path: str) -> dict:
    """The record of a TTGIR module read from ``path`` (a ``.ttgir`` from Triton's cache,
    ``kernel.asm["ttgir"]`` saved to a file), as the recorder would have made it when the
    kernel compiled: the report of a module is the report of a run that compiled it once.
    Raises ``ReportSetupError`` where the text is no TTGIR module the report can read."""
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.ir.snapshot import parse_module

    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        module = parse_module(text, path)
    except IRError as error:
        raise ReportSetupError(f"{path}: not a TTGIR module Triton can parse: {str(error).splitlines()[0]}")
    if module.target is None or ":" not in module.target:
        raise ReportSetupError(f"{path}: no ttg.target attribute: a module after Triton's ttgir stage has one "
                               "(a TTIR module, before layouts are assigned, has no conversions to report)")
    backend, arch = module.target.split(":", 1)
    functions = [op.symbol for op in module.ops_named("tt.func") if op.symbol]
    name = functions[0] if functions else os.path.splitext(os.path.basename(path))[0]
    return {"name": name, "backend": backend, "arch": int(arch) if arch.isdigit() else arch,
            "warp_size": module.threads_per_warp, "num_warps": module.num_warps, "specialization": path,
            "cache_hit": False, "pid": os.getpid(), "run": None, "mode": MODULE_MODE, "ttgir": text,
            "auto_layouts": None}


class _directory_lock:
    """An exclusive ``flock`` on ``DIR/.lock`` (where flock exists; elsewhere no lock)."""

    def __init__(self, directory: str):
        self.path = os.path.join(directory, ".lock")
        self.handle = None

    def __enter__(self):
        self.handle = open(self.path, "a")
        try:
            import fcntl
            fcntl.flock(self.handle, fcntl.LOCK_EX)
        except ImportError:
            pass
        return self

    def __exit__(self, *exc):
        self.handle.close()   # closing releases the lock


# ----------------------------------------------------------------------------- environment mode

ENVIRONMENT_HELP = ("LINEAR_LAYOUTS=report records every kernel and writes a report when the process ends; "
                    "LINEAR_LAYOUTS_REPORT_DIR (default ll-report), LINEAR_LAYOUTS_REPORT_MODE (stock or linear: "
                    "what runs), LINEAR_LAYOUTS_REPORT_FORMAT (html or md), LINEAR_LAYOUTS_REPORT_PICTURES (N), "
                    "LINEAR_LAYOUTS_REPORT_COMPARE (1 or 0), LINEAR_LAYOUTS_REPORT_APPEND (1: keep earlier runs)")
# A run: one id for a process and everything it starts (inherited through the environment), or
# for one pytest-xdist session; the process that started the run writes the report (WRITER).
RUN_VARIABLE = "LINEAR_LAYOUTS_REPORT_RUN"
WRITER_VARIABLE = "LINEAR_LAYOUTS_REPORT_WRITER"


class ReportSetupError(ValueError):
    """A report option (from the command line or the environment) that makes no sense."""


class NothingToReport(Exception):
    """A run that recorded no kernel: no report is written."""


def options_from_environment() -> tuple[ReportOptions, str]:
    """(report options, mode) from the ``LINEAR_LAYOUTS_REPORT_*`` variables."""
    env = environment.variable
    mode = env("LINEAR_LAYOUTS_REPORT_MODE", "stock").strip().lower() or "stock"
    fmt = env("LINEAR_LAYOUTS_REPORT_FORMAT", "html").strip().lower() or "html"
    pictures = env("LINEAR_LAYOUTS_REPORT_PICTURES", str(DEFAULT_PICTURES)).strip()
    compare = env("LINEAR_LAYOUTS_REPORT_COMPARE", "1").strip().lower()
    append = env("LINEAR_LAYOUTS_REPORT_APPEND", "0").strip().lower()
    if not pictures.isdigit():
        raise ReportSetupError(f"LINEAR_LAYOUTS_REPORT_PICTURES={pictures!r}: expected a number of pictures")
    if compare not in ("0", "1", "true", "false", "on", "off"):
        raise ReportSetupError(f"LINEAR_LAYOUTS_REPORT_COMPARE={compare!r}: expected 1 or 0")
    if append not in ("0", "1", "true", "false", "on", "off"):
        raise ReportSetupError(f"LINEAR_LAYOUTS_REPORT_APPEND={append!r}: expected 1 or 0")
    options = ReportOptions(env("LINEAR_LAYOUTS_REPORT_DIR", DEFAULT_DIRECTORY) or DEFAULT_DIRECTORY, fmt,
                            compare in ("1", "true", "on"), int(pictures), append=append in ("1", "true", "on"))
    check_options(options, mode)
    return options, mode


def check_options(options: ReportOptions, mode: str) -> None:
    if mode not in ("stock", "linear"):
        raise ReportSetupError(f"report mode {mode!r}: expected stock or linear")
    if options.format not in ("html", "md"):
        raise ReportSetupError(f"report format {options.format!r}: expected html or md")
    if os.path.exists(options.directory) and not os.path.isdir(options.directory):
        raise ReportSetupError(f"report directory {options.directory!r} exists and is not a directory")


def start(options: ReportOptions, mode: str, write_at_exit: bool) -> None:
    """Record from now on (and, for ``mode="linear"``, run our lowering); with
    ``write_at_exit``, write the report when the process ends."""
    from linear_layouts.passes.drop_in import hook

    check_options(options, mode)
    if mode == "linear" and hook.active_config() is None:
        hook.enable("linear")
    inherited = environment.variable(RUN_VARIABLE)
    xdist = environment.variable("PYTEST_XDIST_TESTRUNUID")
    if inherited:
        options.run = inherited
    elif xdist:
        options.run = f"xdist-{xdist}"            # every worker of one pytest -n session
    else:
        options.run = f"{os.getpid()}-{time.time_ns()}"
        # children (forks, multiprocessing's spawned workers, subprocesses) are of this run, and
        # this process writes the report
        environment.set_variable(RUN_VARIABLE, options.run)
        environment.set_variable(WRITER_VARIABLE, str(os.getpid()))
    recorder.start(options.directory, progress=options.progress, run=options.run, append=options.append)
    if write_at_exit:
        atexit.register(_write_at_exit, options)


def is_writer() -> bool:
    """Whether this process writes the report: not a child (fork, spawned worker) of the process
    that started the run; every pytest-xdist worker writes (the last one leaves the whole report)."""
    writer = environment.variable(WRITER_VARIABLE)
    return not writer or writer == str(os.getpid())



def start_from_environment() -> None:
    """``LINEAR_LAYOUTS=report``: called when ``linear_layouts`` is imported."""
    options, mode = options_from_environment()
    start(options, mode, write_at_exit=True)


def _write_at_exit(options: ReportOptions) -> None:
    if recorder.recording_directory() is None or not is_writer():
        return
    recorder.stop()
    try:
        path = write_report(options)
        print(f"linear-layouts report: wrote {path}", file=sys.stderr)
    except Exception as error:   # at exit, a traceback would hide the program's own output
        print(f"linear-layouts report: could not write the report: {error}", file=sys.stderr)
