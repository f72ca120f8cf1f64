"""``ll-port`` (and ``python -m linear_layouts port``): a Triton kernel ported to Gluon.

    ll-port kernels.py:softmax_kernel --target sm90 --num-warps 4 \\
        --arg out_ptr='*fp32' --arg in_ptr='*fp32' --arg in_stride=i32 --arg out_stride=i32 \\
        --arg n_cols=i32 --arg BLOCK=1024 -o softmax_gluon.py
    ll-port kernels.py:softmax_kernel ... --check      # also compile it and compare with the original
    ll-port kernels.py:softmax_kernel ... --report port-report/   # report.txt and index.html

``FILE.py:KERNEL`` names a ``@triton.jit`` function (also one under ``@triton.autotune``:
``--config N`` picks the configuration).  Each ``--arg NAME=VALUE`` gives one argument: a
Triton type (``*fp16``, ``i32``, ``fp32``) or, for a ``tl.constexpr``, its value (an int, a
float, ``True``/``False``, or a dtype such as ``tl.float16``).  The port is written to ``-o``
(or printed); on any error one line says what is wrong and nothing is written.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys

from ..cli import ArgumentParser, UsageError, end_process


def _parser() -> ArgumentParser:
    parser = ArgumentParser(prog="ll-port", description="Port a @triton.jit kernel to Gluon, "
                                     "every layout chosen by Triton's compile of it and written out.")
    parser.add_argument("kernel", help="FILE.py:KERNEL, the @triton.jit function to port")
    parser.add_argument("--target", default="sm90", help="sm80, sm90, sm100, sm120, gfx942 or gfx950 (default sm90)")
    parser.add_argument("--num-warps", type=int, default=None, help="warps of the launch (default 4)")
    parser.add_argument("--num-stages", type=int, default=None, help="stages of the launch (default 3)")
    parser.add_argument("--config", type=int, default=None, help="under @triton.autotune: the configuration's index")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="an argument's type ('*fp16', 'i32') or a constexpr's value (repeat per argument)")
    parser.add_argument("--check", action="store_true", help="compile the port and compare it with the original")
    parser.add_argument("--no-pipeline", action="store_true", help="write each tl.dot loop as it stands (each "
                        "iteration loads, then multiplies), where Triton's compile pipelines it")
    parser.add_argument("--report", metavar="DIR", help="write the port's report here (report.txt, index.html "
                        "with a picture of each layout)")
    parser.add_argument("-o", "--output", help="write the Gluon module here (default: print it)")
    return parser


def _value(text: str):
    """A --arg value: a Triton type string stays a string; numbers, booleans and tl dtypes are values."""
    if text.startswith("*") or text in ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                                        "fp16", "bf16", "fp32", "fp64"):
        return text
    if text.startswith(("tl.", "triton.language.")):
        import triton.language as tl
        return getattr(tl, text.rsplit(".", 1)[1])
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _load_kernel(spec: str):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ValueError(f"{spec!r}: give FILE.py:KERNEL")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_name = os.path.splitext(os.path.basename(path))[0]
    loader = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    try:
        loader.loader.exec_module(module)
    except Exception as error:
        raise ValueError(f"{path} does not import: {type(error).__name__}: {error}") from None
    if not hasattr(module, name):
        raise ValueError(f"{path} has no {name!r}")
    return getattr(module, name)


def main(argv=None) -> int:
    try:
        args = _parser().parse_args(argv)
    except UsageError as error:
        print(f"ll-port: error: {error}", file=sys.stderr)
        return 1
    from ...passes.port.port import PortError, port
    try:
        kernel = _load_kernel(args.kernel)
        arguments = {}
        for item in args.arg:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise ValueError(f"--arg {item!r}: give NAME=VALUE")
            arguments[name.strip()] = _value(value.strip())
        made = port(kernel, args.target, num_warps=args.num_warps, num_stages=args.num_stages, config=args.config,
                    check=args.check, details=True, pipeline=not args.no_pipeline, **arguments)
    except (PortError, ValueError) as error:
        print(f"ll-port: error: {error}", file=sys.stderr)
        return 1
    if args.check:
        print(made.check.summary(), file=sys.stderr)
        if not made.check.ok:
            print("ll-port: error: the port does not hold against the original (above); nothing written",
                  file=sys.stderr)
            return 1
    if args.report:
        from .report import write_report
        written = write_report(made, kernel, args.report)
        print(f"ll-port: report in {args.report} ({len(written)} files)", file=sys.stderr)
    if args.output:
        with open(args.output, "w") as out:
            out.write(made.source)
        print(f"ll-port: wrote {args.output} ({made.kernel_name} for {made.launch.describe()})", file=sys.stderr)
    else:
        sys.stdout.write(made.source)
    return 0


def console_main() -> None:
    """The ``ll-port`` console script (no teardown warnings of Triton's bindings: ``cli.end_process``)."""
    end_process(main())


if __name__ == "__main__":
    console_main()
