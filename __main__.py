"""``python -m linear_layouts run|report PROGRAM.py [ARGS...]``: a Triton program with the plugin.

``run``: the mode comes from ``LINEAR_LAYOUTS`` (``1``/``linear``, the default here, or
``legacy``), so an unmodified program gets our layout engine in every kernel it compiles::

    python -m linear_layouts run train.py --steps 10
    LINEAR_LAYOUTS=legacy python -m linear_layouts run bench.py

At exit it prints the plugin's summary on stderr (``linear_layouts.stats().summary()``: kernels
compiled through the plugin, islands, fallbacks); ``run --quiet`` leaves it out.

``report``: the program runs unchanged (stock Triton unless ``--mode linear``) while every
kernel it compiles is recorded; then ``ll-report/index.html`` (or ``-o DIR``) explains each
kernel's layout conversions::

    python -m linear_layouts report -o report/ examples/report_example.py
    python -m linear_layouts report --format md examples/report_example.py

``report kernel.ttgir`` (or ``.mlir``): the report of one TTGIR module (Triton's cache keeps one
per kernel), as if a program had compiled it once.

``-m MODULE`` in place of the program runs a module, as ``python -m`` does
(``report -m linear_layouts.examples.report_example``).  The examples the docs name
(``examples/report_example.py``...) are installed with the package: named so from a directory
that does not hold them, the installed one runs, and a line on stderr says so.
"""

import contextlib
import os
import re
import runpy
import shutil
import sys
import tempfile
import traceback
from dataclasses import asdict

USAGE = ("usage: python -m linear_layouts run PROGRAM.py|-m MODULE [ARGS...]\n"
         "       (LINEAR_LAYOUTS=legacy selects the legacy baseline; --quiet before the program: no summary)\n"
         "       python -m linear_layouts run --help\n"
         "       python -m linear_layouts report [-o DIR] [--format html|md] [--mode stock|linear]\n"
         "              [--pictures N] [--no-compare] [--measure] [--append] PROGRAM.py|-m MODULE [ARGS...]\n"
         "       python -m linear_layouts report [-o DIR] [--format html|md] kernel.ttgir\n"
         "       python -m linear_layouts report --help\n"
         "       python -m linear_layouts port FILE.py:KERNEL --target sm90 --arg NAME=VALUE ... [-o OUT.py] [--check]\n"
         "       python -m linear_layouts --version")
MODULE_SUFFIXES = (".ttgir", ".mlir")   # TTGIR modules, not programs
TTIR_SUFFIX = ".ttir"                   # Triton's IR before layouts: no conversions to report yet
# The folder of the examples installed with the package (linear_layouts.examples).
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")


def _error(message: str) -> int:
    print(f"linear_layouts: error: {message}", file=sys.stderr)
    return 1


def _run_program(program: str, args: list, module: str = None) -> None:
    """Run ``program`` (a file) or ``module`` (``-m``) as ``__main__`` with ``args``."""
    if module is not None:
        sys.argv = [module] + args
        sys.path.insert(0, os.getcwd())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    sys.argv = [program] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")


def installed_example(program: str):
    """The installed copy of an example the docs name (``examples/report_example.py``), where
    ``program`` is not a file here but names one; else None."""
    head, name = os.path.split(os.path.normpath(program))
    if os.path.isfile(program) or head not in ("", "examples") or not name.endswith(".py"):
        return None
    path = os.path.join(EXAMPLES, name)
    return path if name != "__init__.py" and os.path.isfile(path) else None


def is_ttir(program: str, text: str) -> bool:
    """A TTIR module (Triton's IR before it assigns layouts): a ``.ttir`` file, or ``tt.func``
    text without the ``ttg.num-warps`` every TTGIR module carries."""
    return program.endswith(TTIR_SUFFIX) or ("tt.func" in text and "ttg.num-warps" not in text)


TTIR_PROBLEM = ("{program} is a TTIR module (Triton's IR before it assigns layouts), not a Python program: it "
                "has no layout conversions yet; to see them, give the kernel's TTGIR instead "
                "(kernel.asm[\"ttgir\"] saved to a .ttgir file, or the .ttgir in Triton's cache, ~/.triton/cache)")


def not_a_python_program(program: str):
    """Why ``program`` cannot run as Python, in one line, or None.  Asked before anything is
    recorded or written: a TTGIR module run as Python would end in a SyntaxError traceback (and
    ``report`` in an empty report)."""
    if program.endswith(TTIR_SUFFIX):
        return TTIR_PROBLEM.format(program=program)
    if program.endswith(MODULE_SUFFIXES):
        return (f"{program} is a TTGIR module, not a Python program: "
                f"python -m linear_layouts report {program}, or ll-opt {program} -p ll-lower-conversions --remarks")
    try:
        with open(program, "rb") as f:
            compile(f.read(), program, "exec", dont_inherit=True)
    except SyntaxError as e:
        with open(program, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if "tt.func" in text and is_ttir(program, text):
            return TTIR_PROBLEM.format(program=program)
        hint = "; it looks like a TTGIR module: name it .ttgir" if "tt.func" in text else ""
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
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module as the program, as python -m does")
    p.add_argument("program", nargs="?", help="the Triton program (a .py file)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    return p


def _split_module(parser, argv: list):
    """``argv`` up to ``-m MODULE`` (our options), the module, and what follows it (the module's
    own arguments, as ``python -m`` takes them); (argv, None, []) without ``-m``."""
    takes_value = {s for a in parser._actions if a.nargs is None and a.option_strings
                   and a.dest != "module" for s in a.option_strings}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "-m":
            if i + 1 == len(argv):
                return argv, None, []     # argparse says "-m: expected one argument"
            return argv[:i], argv[i + 1], argv[i + 2:]
        if not token.startswith("-"):
            break                         # the program: everything after it is its own
        i += 2 if token in takes_value else 1
    return argv, None, []


def _program_arguments(parser, argv: list):
    """(``argv`` read by ``parser``, None), or (None, what is wrong: a usage error, no such program)."""
    from .tools.cli import UsageError

    ours, module, rest = _split_module(parser, argv)
    try:
        args = parser.parse_args(ours)
    except UsageError as e:
        return None, str(e)
    if module is not None:
        import importlib.util
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return None, f"no such module: {module}"
        args.module, args.program, args.args = module, None, rest
        return args, None
    args.module = None
    if args.program is None:
        return None, f"no program given (a .py file, or -m MODULE)\n{USAGE}"
    example = installed_example(args.program)
    if example:
        print(f"linear_layouts: {args.program} is not here; running the example installed with the package, "
              f"{example}", file=sys.stderr)
        args.program = example
    if not os.path.isfile(args.program):
        return None, (f"no such program: {args.program} (the examples are installed with the package: "
                      f"{', '.join('examples/' + n for n in installed_examples())}, or -m linear_layouts.examples.NAME)")
    return args, None


def installed_examples() -> list:
    """The example programs installed with the package, by file name."""
    return sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".py") and n != "__init__.py")


def run_command(argv: list) -> int:
    args, problem = _program_arguments(run_parser(), argv)
    if problem:
        return _error(problem)
    problem = args.module is None and not_a_python_program(args.program)
    if problem:
        return _error(problem)
    from .passes.drop_in import environment, hook, shared_stats

    environment.set_default(environment.VARIABLE, "linear")
    # The program's workers (torch.compile's, multiprocessing's) compile in processes of their
    # own: each writes its counts into one directory, added up for the summary at exit.
    own_stats_directory = None
    if not args.quiet and shared_stats.directory() is None:
        own_stats_directory = tempfile.mkdtemp(prefix="ll-run-stats-")
        environment.set_setting("stats_dir", own_stats_directory)
    try:
        if hook.active_config() is None:
            hook.enable_from_environment()
    except hook.PluginError as e:
        return _error(str(e))
    try:
        _run_program(args.program, args.args, args.module)
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
    from .tools.report.run import DEFAULT_DIRECTORY, DEFAULT_PICTURES, ENVIRONMENT_HELP

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
    p.add_argument("-m", dest="module", metavar="MODULE",
                   help="run a module as the program, as python -m does (e.g. linear_layouts.examples.report_example)")
    p.add_argument("program", nargs="?",
                   help="the Triton program (a .py file), or a TTGIR module (a .ttgir or .mlir file); the examples "
                        "the docs name (examples/report_example.py) run from anywhere: they are installed with the package")
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
    from .tools.report.launch_timing import LaunchRecorder, MeasureResult, gpu_problem

    problem = gpu_problem()
    if problem:
        options.measured = MeasureResult(note=problem)
        print(f"linear-layouts report: --measure: nothing will be timed: {problem}", file=sys.stderr)
        return None
    launches = LaunchRecorder()
    launches.install()
    return launches


def report_command(argv: list) -> int:
    from .passes.drop_in import environment, recorder
    from .tools.report.run import ReportOptions, ReportSetupError, is_writer, start

    args, problem = _program_arguments(report_parser(), argv)
    if problem:
        return _error(problem)
    if args.pictures < 0:
        return _error(f"--pictures {args.pictures}: expected 0 or more")
    if args.module is None and args.program.endswith(MODULE_SUFFIXES):
        return report_module_command(args)
    problem = args.module is None and not_a_python_program(args.program)
    if problem:
        return _error(problem)
    options = ReportOptions(args.out, args.format, not args.no_compare, args.pictures, append=args.append,
                            measure=args.measure)
    try:
        start(options, args.mode, write_at_exit=False)
    except (ReportSetupError, OSError) as e:
        return _error(f"cannot record into {args.out}: {e}" if isinstance(e, OSError) else str(e))
    # Workers the program starts (multiprocessing's spawn, subprocesses) record into the same run
    # once they import triton (tools/report/site/sitecustomize.py); the report is written here, once.
    site = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "report", "site")
    for name, value in {"LINEAR_LAYOUTS": "report", "LINEAR_LAYOUTS_REPORT_DIR": os.path.abspath(args.out),
                        "LINEAR_LAYOUTS_REPORT_MODE": args.mode, "LINEAR_LAYOUTS_REPORT_APPEND": "1",
                        "PYTHONPATH": os.pathsep.join(filter(None, [site, environment.variable("PYTHONPATH")]))}.items():
        environment.set_variable(name, value)
    launches = _start_measuring(options)
    status, said_why = 0, False
    try:
        with _program_output_to_stderr(args.format == "md"):
            _run_program(args.program, args.args, args.module)
    except SystemExit as e:   # the program's own exit: still write the report of what it compiled
        status = _exit_status(e.code)
    except BaseException as error:     # the program failed (no GPU, a bug): its traceback, then the report
        if _no_gpu(error):
            said_why = _error(NO_GPU.format(program=args.module or args.program))
        else:
            traceback.print_exc()
        status = 130 if isinstance(error, KeyboardInterrupt) else 1
    finally:
        recorder.stop()
        if launches is not None:
            launches.uninstall()
    if not is_writer():       # a forked child of the program: its kernels are recorded, the parent reports
        return status
    if launches is not None:
        from .tools.report.launch_timing import MeasureResult, time_launches
        print(f"linear-layouts report: timing {len(launches.launches)} launch(es) stock and ours (Gluon kernels "
              f"also with their best findings alone and all applied)", file=sys.stderr)
        options.measured = MeasureResult(time_launches(launches))
    return _write_report(options, empty_said=said_why) or status


@contextlib.contextmanager
def _program_output_to_stderr(divert: bool):
    """With ``divert``: everything the program writes to stdout (its ``print``s, its
    subprocesses', its C code's) goes to stderr instead, so that stdout carries the Markdown
    report alone (``report --format md prog.py > report.md``)."""
    if not divert:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 1)
        os.close(saved)


# A program that launches a kernel on a machine without a GPU: Triton finds no driver.
NO_GPU = ("{program} launched a Triton kernel, and this machine has no GPU (Triton found no active driver); "
          "without one, compile the kernels for a target instead of launching them: "
          "triton.compile(ASTSource(kernel, signature, constexprs), target=GPUTarget(\"cuda\", 90, 32)) in the "
          "program, as docs/report.md shows, then report that program")


def _no_gpu(error: BaseException) -> bool:
    """Triton's answer to a launch where no GPU driver is active (3.6 to 3.9)."""
    return isinstance(error, RuntimeError) and "active drivers" in str(error)


def report_module_command(args) -> int:
    """``report kernel.ttgir``: the report of one TTGIR module, read instead of recorded (no
    program runs, so no program arguments, no --measure; --mode is what a program runs with)."""
    from .tools.report.run import ReportOptions, ReportSetupError, check_options, module_record

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


def _write_report(options, records=None, empty_said: bool = False) -> int:
    """Write the report (of ``records``, else of the run's); print it for ``--format md``.
    0, or 1 with one error line where it cannot be written (none more where nothing was recorded
    and ``empty_said``: the error that stopped the program said why)."""
    from .tools.report.run import NothingToReport, write_report

    try:
        path = write_report(options, records)
    except OSError as e:
        return _error(f"cannot write the report: {e}")
    except NothingToReport as e:
        return 1 if empty_said else _error(str(e))
    if options.format == "md":
        with open(path, encoding="utf-8") as f:
            sys.stdout.write(f.read())
    print(f"linear-layouts report: wrote {path}", file=sys.stderr)
    return 0


def help_text() -> str:
    """``--help``: this module's docstring as plain text (no reStructuredText markup), then the usage."""
    text = re.sub(r"``([^`]+)``", r"\1", __doc__.strip())
    text = re.sub(r"::\n", ":\n", text)
    return text + "\n\n" + USAGE


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help", "help"):
        from .tools.cli import print_output
        return print_output(help_text())
    if argv and argv[0] == "--version":
        from .tools.cli import version_text
        print(version_text("python -m linear_layouts"))
        return 0
    if argv and argv[0] == "port":
        from linear_layouts.tools.port.command import main as port_main
        from linear_layouts.tools.cli import end_process
        end_process(port_main(argv[1:]))     # as ll-port: no teardown warnings of Triton's bindings
    if not argv or argv[0] not in ("run", "report"):
        what = f"unknown command '{argv[0]}'" if argv else "no command given"
        return _error(f"{what}\n{USAGE}")
    if len(argv) < 2:
        return _error(f"no program given (a .py file, or -m MODULE)\n{USAGE}")
    if argv[0] == "run":
        return run_command(argv[1:])
    return report_command(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
