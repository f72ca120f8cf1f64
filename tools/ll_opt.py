"""ll-opt: run linear-layout passes over TTGIR files, shaped like triton-opt / mlir-opt.

    ll-opt kernel.ttgir -p ll-attach-layouts,ll-classify-conversions{report=true}
    ll-opt - --split-input-file -p ll-merge-equivalent-layouts < cases.mlir
    ll-opt kernel.ttgir -p ll-classify-conversions --emit ptx -o kernel.ptx
    ll-opt dump.txt --from-dump-after tritongpu-remove-layout-conversions   # MLIR_ENABLE_DUMP=1's stderr
    ll-opt --list-passes

Errors (unreadable or malformed input, unknown pass or option, a failing pass) print
``ll-opt: error: <location>: <message>`` on stderr and exit with status 1; no output file is
written unless every module succeeded.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass

from ..lowering.target import UnknownTarget, known_target_names, target_named
from ..passes.ir.backend import EMIT_STAGES
from .cli import ArgumentParser, UsageError, decode_utf8
from .mlir_dump import DumpError, dumped_modules, is_dump, pick_module

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)


def _target_argument(name: str):
    """``--target``'s value: any spelling ``lowering.target`` knows (``sm_90``, ``cuda:90``)."""
    try:
        return target_named(name)
    except UnknownTarget as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _argument_parser() -> ArgumentParser:
    p = ArgumentParser(prog="ll-opt", description="Run linear-layout passes over TritonGPU IR (like triton-opt).")
    p.add_argument("input", nargs="?", default="-", help="input .ttgir/.mlir file, or - for stdin (default)")
    p.add_argument("-p", "--pass-pipeline", dest="pipeline", default="",
                   help="comma-separated passes with options, e.g. 'll-attach-layouts,ll-classify-conversions{report=true}'")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--split-input-file", action="store_true",
                   help="treat '// -----' lines as separators between independent modules")
    p.add_argument("--print-ir-after-all", action="store_true", help="print the IR to stderr after every pass")
    p.add_argument("--list-passes", action="store_true", help="list the passes and their options, then exit")
    p.add_argument("--target", type=_target_argument, metavar="TARGET",
                   help="the target to plan and emit for (ll-lower-conversions plans for it; default: the "
                        "module's ttg.target): " + known_target_names())
    dump = p.add_mutually_exclusive_group()
    dump.add_argument("--from-dump-before", metavar="PASS",
                      help="the input is an MLIR_ENABLE_DUMP=1 dump: take the module printed before PASS "
                           "(class name or argument, e.g. ConvertTritonGPUToLLVM or convert-triton-gpu-to-llvm; "
                           "default: the dump's last TTGIR module)")
    dump.add_argument("--from-dump-after", metavar="PASS",
                      help="the input is an MLIR_ENABLE_DUMP=1 dump: take the module as PASS left it")
    p.add_argument("--emit", choices=("ttgir",) + EMIT_STAGES, default="ttgir",
                   help="ttgir (default), or hand the result to Triton's back end: llir, ptx, amdgcn")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations in the output IR")
    p.add_argument("--remarks", nargs="?", const=True, default=False, choices=(True, "detail"), metavar="detail",
                   help="passes print remarks on stderr (e.g. why a convert is left to Triton)")
    return p


@dataclass
class Chunk:
    text: str
    first_line: int


def split_input(text: str, split: bool) -> list[Chunk]:
    """The modules of the input; with ``split``, separated by ``// -----`` lines (as in MLIR)."""
    if not split:
        return [Chunk(text, 1)]
    chunks, current, first_line = [], [], 1
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if SPLIT_MARKER.match(line):
            chunks.append(Chunk("".join(current), first_line))
            current, first_line = [], number + 1
        else:
            current.append(line)
    chunks.append(Chunk("".join(current), first_line))
    return chunks


def _error_lines(message: str) -> str:
    """``file:3:4: error: msg`` -> ``ll-opt: error: file:3:4: msg``; other lines (notes) kept."""
    out = []
    for line in message.strip().splitlines():
        m = re.match(r"^(.*?): error: (.*)$", line)
        if m:
            out.append(f"ll-opt: error: {m.group(1)}: {m.group(2)}")
        elif line.startswith("error: "):
            out.append("ll-opt: " + line)
        elif not out:
            out.append("ll-opt: error: " + line)
        else:
            out.append("  " + line)
    return "\n".join(out)


def _emit_target(given, module, where: str, emit: str):
    """The target of ``--emit``: ``--target`` (resolved already), else the module's ``ttg.target``."""
    from ..lowering.target import target_from_triton_name
    from ..passes.ir.diagnostics import IRError

    if given is not None:
        return given
    if module.target is None:
        raise IRError(f"{where}: error: --emit {emit} needs a target: the module has no "
                      "ttg.target attribute; pass --target")
    try:
        return target_from_triton_name(module.target)
    except UnknownTarget as error:
        raise IRError(str(error)) from None


def _check_is_ttgir(module, where: str, emit: str) -> None:
    """Triton's back end needs TTGIR (layouts assigned, ``ttg.num-warps`` set); given TTIR, the
    step before it, Triton fails on an internal assertion, so say what the input is instead."""
    from ..passes.ir.diagnostics import IRError

    if module.num_warps is None:
        raise IRError(f"{where}: error: --emit {emit} needs TTGIR, but the module is TTIR (no ttg.num-warps "
                      "attribute: Triton has not assigned layouts yet); take the kernel's TTGIR: "
                      "kernel.asm[\"ttgir\"], or the .ttgir file in Triton's cache directory (~/.triton/cache)")


def module_warp_size(module) -> "tuple[int, str] | None":
    """(lanes per warp the module was made for, where that is read), or None if it says nothing:
    the ``ttg.threads-per-warp`` attribute, else the lanes of its blocked layouts."""
    if module.threads_per_warp is not None:
        return module.threads_per_warp, f"ttg.threads-per-warp = {module.threads_per_warp}"
    for lanes in re.findall(r"threadsPerWarp = \[([\d, ]+)\]", module.print()):
        product = 1
        for size in lanes.split(","):
            product *= int(size)
        return product, f"its layouts' threadsPerWarp = [{lanes}]"
    return None


def _check_warp_size(module, target, where: str) -> None:
    """A module's layouts spread each warp over its lanes: compiled for a target whose warps
    have another number of lanes, the code would be wrong (Triton does not check)."""
    from ..passes.ir.diagnostics import IRError

    found = module_warp_size(module)
    if found is None or found[0] == target.warp_size:
        return
    lanes, source = found
    raise IRError(f"{where}: error: the module is made for {lanes}-lane warps ({source}) but target "
                  f"{target.name} ({target.triton_name}) has {target.warp_size} lanes per warp; compile the "
                  f"kernel for {target.name} to get its TTGIR, or pass a --target with {lanes}-lane warps")


def _list_passes() -> str:
    from ..passes.options import option_values
    from ..passes.registry import registered_passes
    lines = ["Available passes:"]
    for name, cls in registered_passes().items():
        lines.append(f"  {name:32} {cls.description}")
        for option in cls.options():
            type_name = option_values(option)
            default = option.default
            default = ("true" if default else "false") if isinstance(default, bool) else default
            lines.append(f"      {option.name}={type_name} (default {default})")
    return "\n".join(lines) + "\n"


def run(argv: list[str]) -> int:
    try:
        args = _argument_parser().parse_args(argv)
    except UsageError as error:
        print(f"ll-opt: error: {error}", file=sys.stderr)
        return 1
    if args.list_passes:
        sys.stdout.write(_list_passes())
        return 0
    if args.target is not None and args.emit not in ("ttgir", "llir", args.target.assembly_stage):
        print(f"ll-opt: error: --emit {args.emit} is not available for target {args.target.triton_name} "
              f"(its assembly is --emit {args.target.assembly_stage})", file=sys.stderr)
        return 1

    from ..passes.pipeline import PipelineError, parse_pipeline

    try:
        pipeline = parse_pipeline(args.pipeline)
    except PipelineError as error:
        print(f"ll-opt: error: invalid pipeline: {error}", file=sys.stderr)
        return 1
    from ..passes.drop_in import environment
    try:
        environment.settings()     # a bad setting is named before any module is read
    except environment.SettingError as error:
        print(f"ll-opt: error: {error}", file=sys.stderr)
        return 1

    name = "<stdin>" if args.input == "-" else args.input
    text = read_input(args.input, name)
    chunks = None if text is None else input_modules(text, name, args)
    if chunks is None:
        return 1
    outputs = run_on_modules(chunks, name, pipeline, args)
    if outputs is None:
        return 1

    result = "// -----\n".join(o if o.endswith("\n") or not o else o + "\n" for o in outputs)
    if args.output == "-":
        sys.stdout.write(result)
        sys.stdout.flush()
        return 0
    return write_output(args.output, result)


def read_input(path: str, name: str) -> "str | None":
    """The input's text (``-``: stdin), or None after printing why it cannot be read."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
        return decode_utf8(data)
    except OSError as error:
        print(f"ll-opt: error: cannot read '{name}': {error.strerror or error}", file=sys.stderr)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        print(f"ll-opt: error: {name}:{line}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
              f"{error.start}); ll-opt reads TTGIR as UTF-8 text", file=sys.stderr)
    return None


_MODULE_WORDS = re.compile(r"\b(module|tt\.func|builtin\.module)\b")
_PYTHON_START = re.compile(r"(import |from \S+ import |def |class |@|\"\"\"|'\'\'|#!)")


def not_a_module(text: str, name: str) -> "str | None":
    """Why ``text`` is no TTGIR at all (empty, or without a module or a function: a Python file,
    notes), or None; MLIR's own parser explains what is wrong inside a module."""
    content = [line for line in text.splitlines() if line.strip() and not line.strip().startswith("//")]
    where = ("Triton writes one per kernel: its cache holds a .ttgir file for each, and "
             "compiled.asm['ttgir'] is the same text in Python")
    if not content:
        return f"{name} is empty: ll-opt reads a TTGIR module ({where})"
    python = name.endswith(".py") or bool(_PYTHON_START.match(content[0]))
    if _MODULE_WORDS.search(text) and not python:
        return None
    hint = (" For the kernels of a Python program: python -m linear_layouts report FILE.py reports them, "
            "ll-port FILE.py:KERNEL ports one to Gluon." if python else "")
    what = "Python, not TTGIR" if python else "not a TTGIR module (no 'module' or 'tt.func' in it)"
    return f"{name}:1:1: {what}: ll-opt reads TTGIR ({where}).{hint}"


def input_modules(text: str, name: str, args) -> "list[Chunk] | None":
    """The modules to run on: the input's (split on ``// -----`` with --split-input-file), or
    the one picked from an MLIR_ENABLE_DUMP dump; None after printing why there is none."""
    dump_option = ("--from-dump-before" if args.from_dump_before else
                   "--from-dump-after" if args.from_dump_after else None)
    if not is_dump(text):
        if dump_option is not None:
            print(f"ll-opt: error: {dump_option}: {name} is not an MLIR_ENABLE_DUMP=1 dump (no "
                  "'// -----// IR Dump' header lines)", file=sys.stderr)
            return None
        problem = not_a_module(text, name)
        if problem:
            print(f"ll-opt: error: {problem}", file=sys.stderr)
            return None
        return split_input(text, args.split_input_file)
    if args.split_input_file:
        print(f"ll-opt: error: {name} is an MLIR_ENABLE_DUMP=1 dump, not '// -----'-separated modules: drop "
              "--split-input-file (ll-opt takes one module of a dump; --from-dump-before/--from-dump-after "
              "name which)", file=sys.stderr)
        return None
    try:
        module = pick_module(dumped_modules(text), before=args.from_dump_before, after=args.from_dump_after)
    except DumpError as error:
        where = name if error.line is None else f"{name}:{error.line}"
        print(f"ll-opt: error: {where}: {error}", file=sys.stderr)
        return None
    printed = f"printed {module.when.lower()} {module.pass_name}"
    if args.from_dump_after and module.when == "Before":
        printed = f"as {args.from_dump_after} left it ({printed})"
    print(f"ll-opt: note: {name}:{module.first_line}: reading the module {printed}", file=sys.stderr)
    return [Chunk(module.text, module.first_line)]


def run_on_modules(chunks: list[Chunk], name: str, pipeline, args) -> "list[str] | None":
    """Each module through the pipeline, then printed or compiled (--emit); the outputs, or
    None if any module failed (each failure printed)."""
    from ..passes.barriers.guard_barriers import guard_pruning
    from ..passes.drop_in import environment
    from ..passes.ir.backend import compile_module
    from ..passes.ir.diagnostics import IRError
    from ..passes.framework import PassContext, run_pipeline
    from ..passes.ir.snapshot import parse_module

    def dump_after(p, module):
        print(f"// -----// IR Dump After {p.name} //----- //", file=sys.stderr)
        sys.stderr.write(module.print(debuginfo=args.mlir_print_debuginfo))
        sys.stderr.flush()

    # The target is resolved once, by argparse (--target's type).
    context = PassContext(report_stream=sys.stderr, after_pass=dump_after if args.print_ir_after_all else None,
                          target=args.target)
    context.remarks = args.remarks  # read by passes that explain their decisions (ll-lower-conversions)
    outputs, failed = [], False
    for chunk in chunks:
        if args.split_input_file and not chunk.text.strip():
            outputs.append("")
            continue
        where = name if chunk.first_line == 1 else f"{name}:{chunk.first_line}"
        try:
            module = parse_module(chunk.text, name, chunk.first_line)
            if args.emit != "ttgir":
                _check_is_ttgir(module, where, args.emit)
            target = args.target if args.emit == "ttgir" else _emit_target(args.target, module, where, args.emit)
            if target is not None:
                _check_warp_size(module, target, where)
            run_pipeline(module, pipeline, context)
            if args.emit == "ttgir":
                outputs.append(module.print(debuginfo=args.mlir_print_debuginfo))
            else:
                environment.set_default("TRITON_DEFAULT_FP_FUSION", "1")   # Triton 3.9's default, without its notice
                outputs.append(compile_module(module, target, args.emit, around=guard_pruning))
        except IRError as error:
            print(_error_lines(str(error)), file=sys.stderr)
            failed = True
        sys.stderr.flush()
    return None if failed else outputs


def write_output(path: str, text: str) -> int:
    """Write ``text`` where a shell redirection ``> path`` would put it; 0, or 1 with a message.

    A regular file (new, existing, or the target of a symlink) is written to a temporary file
    next to it and renamed over it, so an error never leaves a partial file; the symlink stays
    a symlink.  Anything else that exists (``/dev/null``, a FIFO, a terminal) is written in
    place: replacing it would destroy it.
    """
    target = os.path.realpath(path)
    try:
        if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
            return 0
    except OSError as error:
        print(f"ll-opt: error: cannot write '{path}': {error.strerror or error}", file=sys.stderr)
        return 1
    directory = os.path.dirname(target)
    temp = os.path.join(directory, f".{os.path.basename(target)}.ll-opt-{os.getpid()}")
    try:
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
        if os.path.exists(target):
            shutil.copymode(target, temp)
        os.replace(temp, target)
    except OSError as error:
        print(f"ll-opt: error: cannot write '{path}': {error.strerror or error}", file=sys.stderr)
        if os.path.exists(temp):
            os.unlink(temp)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    from ..passes.drop_in import environment

    environment.set_default("TRITON_DEFAULT_FP_FUSION", "1")  # silence 3.9's FP-fusion notice
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        print("ll-opt: error: interrupted", file=sys.stderr)
        return 1
    except Exception as error:  # a bug of ours: say so in one line (LL_OPT_TRACEBACK=1 for details)
        if environment.variable("LL_OPT_TRACEBACK"):
            raise
        print(f"ll-opt: error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
