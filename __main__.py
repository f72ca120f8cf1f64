"""``python -m linear_layouts run|report PROGRAM.py [ARGS...]``: a Triton program with the plugin.

``run``: the mode comes from ``LINEAR_LAYOUTS`` (``1``/``linear``, the default here, or
``legacy``), so an unmodified program gets our layout engine in every kernel it compiles::

    python -m linear_layouts run train.py --steps 10
    LINEAR_LAYOUTS=legacy python -m linear_layouts run bench.py

At exit it prints the plugin's summary on stderr (``linear_layouts.stats().summary()``: kernels
compiled through the plugin, islands, fallbacks); ``run --quiet`` leaves it out.

``report``: the program runs unchanged (stock Triton unless ``--mode linear``) while every
kernel it compiles is recorded; then ``ll-report/index.html`` (or ``-o DIR``) explains each
kernel's layout conversions (``tools.report``)::

    python -m linear_layouts report -o report/ examples/report_example.py
    python -m linear_layouts report --format md examples/report_example.py

``report kernel.ttgir`` (or ``.mlir``): the report of one TTGIR module (Triton's cache keeps one
per kernel), as if a program had compiled it once.
"""

import os
import runpy
import shutil
import sys
import tempfile
import traceback
from dataclasses import asdict

USAGE = ("usage: python -m linear_layouts run PROGRAM.py [ARGS...]\n"
         "       (LINEAR_LAYOUTS=legacy selects the legacy baseline; --quiet before the program: no summary)\n"
         "       python -m linear_layouts run --help\n"
         "       python -m linear_layouts report [-o DIR] [--format html|md] [--mode stock|linear]\n"
         "              [--pictures N] [--no-compare] [--measure] [--append] PROGRAM.py [ARGS...]\n"
         "       python -m linear_layouts report [-o DIR] [--format html|md] kernel.ttgir\n"
         "       python -m linear_layouts report --help")
MODULE_SUFFIXES = (".ttgir", ".mlir")   # TTGIR modules, not programs


def _error(message: str) -> int:
    print(f"linear_layouts: error: {message}", file=sys.stderr)
    return 1


def _run_program(program: str, args: list) -> None:
    sys.argv = [program] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")


def not_a_python_program(program: str):
    """Why ``program`` cannot run as Python, in one line, or None.  Asked before anything is
    recorded or written: a TTGIR module run as Python would end in a SyntaxError traceback (and
    ``report`` in an empty report)."""
    if program.endswith(MODULE_SUFFIXES):
        return (f"{program} is a TTGIR module, not a Python program: "
                f"python -m linear_layouts report {program}, or ll-opt {program} -p ll-lower-conversions --remarks")
    try:
        with open(program, "rb") as f:
            compile(f.read(), program, "exec", dont_inherit=True)
    except SyntaxError as e:
        with open(program, encoding="utf-8", errors="replace") as f:
            looks_like_ttgir = "tt.func" in f.read()
        hint = "; it looks like a TTGIR module: name it .ttgir" if looks_like_ttgir else ""
        return f"{program}:{e.lineno}: not a Python program: {e.msg}{hint}"
    except ValueError as e:   # null bytes (Python 3.11 and older)
        return f"{program}: not a Python program: {e}"
    return None


def run_parser():
    import argparse

    from .tools.cli import ArgumentParser

    p = ArgumentParser(prog="python -m linear_layouts run",
                       description="Run a Triton program with linear_layouts' lowering in every kernel it compiles "
                                   "(LINEAR_LAYOUTS=legacy: the legacy baseline instead).",
                       epilog="Options go before the program; everything after it is the program's own.")
    p.add_argument("--quiet", action="store_true",
                   help="do not print the plugin's summary (kernels, islands, fallbacks) on stderr at exit")
    p.add_argument("program", help="the Triton program (a .py file)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    return p


def _program_arguments(parser, argv: list):
    """(``argv`` read by ``parser``, None), or (None, what is wrong: a usage error, no such program)."""
    from .tools.cli import UsageError

    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        return None, str(e)
    if not os.path.isfile(args.program):
        return None, f"no such program: {args.program}"
    return args, None


def run_command(argv: list) -> int:
    args, problem = _program_arguments(run_parser(), argv)
    if problem:
        return _error(problem)
    problem = not_a_python_program(args.program)
    if problem:
        return _error(problem)
    from .passes import hook, shared_stats

    os.environ.setdefault("LINEAR_LAYOUTS", "linear")
    # The program's workers (torch.compile's, multiprocessing's) compile in processes of their
    # own: each writes its counts into one directory, added up for the summary at exit.
    own_stats_directory = None
    if not args.quiet and shared_stats.directory() is None:
        own_stats_directory = tempfile.mkdtemp(prefix="ll-run-stats-")
        os.environ[shared_stats.STATS_DIR_VARIABLE] = own_stats_directory
    try:
        if hook.active_config() is None:
            hook.enable_from_environment()
    except hook.PluginError as e:
        return _error(str(e))
    try:
        _run_program(args.program, args.args)
    finally:   # however the program ends (sys.exit, an exception): what the plugin did
        if not args.quiet:
            shared_stats.write_snapshot(asdict(hook.stats()))   # this process's last counts
            print_summary(hook.combined_stats(shared_stats.directory()))
        if own_stats_directory:
            shutil.rmtree(own_stats_directory, ignore_errors=True)
    return 0


def print_summary(stats) -> None:
    """``linear_layouts.stats().summary()`` of every process of the program, on stderr, with
    what it cannot count."""
    print(stats.summary(), file=sys.stderr)
    if stats.kernels == 0:
        # Only compiles reach the plugin: a kernel Triton serves from its cache does not.
        print("linear-layouts: (kernels served from Triton's cache are not counted; "
              "TRITON_ALWAYS_COMPILE=1 compiles every kernel again)", file=sys.stderr)


def report_parser():
    import argparse

    from .tools.cli import ArgumentParser
    from .tools.report import DEFAULT_DIRECTORY, DEFAULT_PICTURES, ENVIRONMENT_HELP

    p = ArgumentParser(prog="python -m linear_layouts report",
                       description="Run a Triton program, record every kernel it compiles, and explain "
                                   "their layout conversions.",
                       epilog=f"Programs started otherwise: {ENVIRONMENT_HELP}.")
    p.add_argument("-o", "--out", default=DEFAULT_DIRECTORY, help=f"report directory (default {DEFAULT_DIRECTORY})")
    p.add_argument("--format", choices=["html", "md"], default="html",
                   help="html: index.html, a page per kernel, pictures; md: report.md, also printed")
    p.add_argument("--mode", choices=["stock", "linear"], default="stock",
                   help="what the program runs with: stock Triton (default) or linear_layouts.enable()")
    p.add_argument("--pictures", type=int, default=DEFAULT_PICTURES, metavar="N",
                   help=f"pictures for the N costliest conversions of each kernel that move data "
                        f"(default {DEFAULT_PICTURES})")
    p.add_argument("--no-compare", action="store_true",
                   help="do not recompile each kernel stock and with our lowering to count final-code instructions")
    p.add_argument("--measure", action="store_true",
                   help="with a GPU: time each kernel the program launched, stock and ours (Gluon kernels also with "
                        "their best findings alone and all applied, and the fastest beyond the noise chosen), with "
                        "the program's own arguments (inputs cloned at the launch); without one the report says so")
    p.add_argument("--append", action="store_true",
                   help="keep the kernels of earlier runs recorded into the same directory (default: a fresh report)")
    p.add_argument("program", help="the Triton program (a .py file), or a TTGIR module (a .ttgir or .mlir file)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    return p


def _exit_status(code) -> int:
    """``sys.exit(code)``'s status, its message printed as Python prints it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _start_measuring(options):
    """``--measure``: record the program's launches (a ``LaunchRecorder``), or say why not."""
    if not options.measure:
        return None
    from .tools.launch_timing import LaunchRecorder, MeasureResult, gpu_problem

    problem = gpu_problem()
    if problem:
        options.measured = MeasureResult(note=problem)
        print(f"linear-layouts report: --measure: nothing will be timed: {problem}", file=sys.stderr)
        return None
    launches = LaunchRecorder()
    launches.install()
    return launches


def report_command(argv: list) -> int:
    from .passes import recorder
    from .tools.report import ReportOptions, ReportSetupError, is_writer, start

    args, problem = _program_arguments(report_parser(), argv)
    if problem:
        return _error(problem)
    if args.pictures < 0:
        return _error(f"--pictures {args.pictures}: expected 0 or more")
    if args.program.endswith(MODULE_SUFFIXES):
        return report_module_command(args)
    problem = not_a_python_program(args.program)
    if problem:
        return _error(problem)
    options = ReportOptions(args.out, args.format, not args.no_compare, args.pictures, append=args.append,
                            measure=args.measure)
    try:
        start(options, args.mode, write_at_exit=False)
    except (ReportSetupError, OSError) as e:
        return _error(f"cannot record into {args.out}: {e}" if isinstance(e, OSError) else str(e))
    # Workers the program starts (multiprocessing's spawn, subprocesses) record into the same run
    # once they import triton (tools/report_site/sitecustomize.py); the report is written here, once.
    site = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "report_site")
    os.environ.update({"LINEAR_LAYOUTS": "report", "LINEAR_LAYOUTS_REPORT_DIR": os.path.abspath(args.out),
                       "LINEAR_LAYOUTS_REPORT_MODE": args.mode, "LINEAR_LAYOUTS_REPORT_APPEND": "1",
                       "PYTHONPATH": os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")]))})
    launches = _start_measuring(options)
    status = 0
    try:
        _run_program(args.program, args.args)
    except SystemExit as e:   # the program's own exit: still write the report of what it compiled
        status = _exit_status(e.code)
    except BaseException:     # the program failed (no GPU, a bug): its traceback, then the report
        traceback.print_exc()
        status = 130 if isinstance(sys.exc_info()[1], KeyboardInterrupt) else 1
    finally:
        recorder.stop()
        if launches is not None:
            launches.uninstall()
    if not is_writer():       # a forked child of the program: its kernels are recorded, the parent reports
        return status
    if launches is not None:
        from .tools.launch_timing import MeasureResult, time_launches
        print(f"linear-layouts report: timing {len(launches.launches)} launch(es) stock and ours (Gluon kernels "
              f"also with their best findings alone and all applied)", file=sys.stderr)
        options.measured = MeasureResult(time_launches(launches))
    return _write_report(options) or status


def report_module_command(args) -> int:
    """``report kernel.ttgir``: the report of one TTGIR module, read instead of recorded (no
    program runs, so no program arguments, no --measure; --mode is what a program runs with)."""
    from .tools.report import ReportOptions, ReportSetupError, check_options, module_record

    if args.args:
        return _error(f"{args.program} is a TTGIR module: it takes no arguments (got: {' '.join(args.args)})")
    if args.measure or args.mode != "stock":
        option = "--measure" if args.measure else f"--mode {args.mode}"
        return _error(f"{option} is for a program that runs; {args.program} is a TTGIR module, read as it is")
    options = ReportOptions(args.out, args.format, not args.no_compare, args.pictures)
    try:
        check_options(options, "stock")
        record = module_record(args.program)
    except (ReportSetupError, OSError, UnicodeDecodeError) as e:
        return _error(str(e))
    return _write_report(options, [record])


def _write_report(options, records=None) -> int:
    """Write the report (of ``records``, else of the run's); print it for ``--format md``.
    0, or 1 with one error line where it cannot be written."""
    from .tools.report import write_report

    try:
        path = write_report(options, records)
    except OSError as e:
        return _error(f"cannot write the report: {e}")
    if options.format == "md":
        with open(path, encoding="utf-8") as f:
            sys.stdout.write(f.read())
    print(f"linear-layouts report: wrote {path}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help", "help"):
        print(__doc__.strip() + "\n\n" + USAGE)
        return 0
    if not argv or argv[0] not in ("run", "report"):
        what = f"unknown command '{argv[0]}'" if argv else "no command given"
        return _error(f"{what}\n{USAGE}")
    if len(argv) < 2:
        return _error(f"no program given\n{USAGE}")
    if argv[0] == "run":
        return run_command(argv[1:])
    return report_command(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
