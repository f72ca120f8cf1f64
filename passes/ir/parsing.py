"""Module text into a Triton module handle: through a temporary file (the bindings parse
files only), first in a forked child when asked (an abort inside Triton's C++ then kills only
the child), with Triton's diagnostics rewritten to point at the user's file."""

from __future__ import annotations

import os
import re
import tempfile

from .bindings import bindings, new_context
from .diagnostics import CapturedStderr, IRError, rewrite_diagnostics
from .parse_checker import parse_first
from .text_edits import MARKER

# Attributes our passes use for their own bookkeeping while they rewrite a module: never read
# from input.  (An input convert carrying ``ll.island = 0`` would otherwise be replaced by
# island 0's code although the pass left it to Triton.)
RESERVED_ATTRIBUTES = (MARKER, "ll.island")
_RESERVED = re.compile(r"(?<![\w.])(" + "|".join(re.escape(a) for a in RESERVED_ATTRIBUTES) + r")\s*=")


def reject_reserved_attributes(text: str, filename: str, first_line: int) -> None:
    if not any(name in text for name in RESERVED_ATTRIBUTES):
        return   # (every kernel the drop-in sees: no line to look at)
    for number, line in enumerate(text.splitlines(), start=first_line):
        code = line.split("//", 1)[0]
        m = _RESERVED.search(code)
        if m:
            raise IRError(f"{filename}:{number}:{m.start() + 1}: error: attribute '{m.group(1)}' is reserved for "
                          f"linear-layouts' own bookkeeping and may not appear in the input")


def parse_handle(text: str, filename: str, first_line: int, safe: bool, context=None):
    """(module handle, its context, the temporary file's path) for module text; ``safe``
    parses in a forked child first.  ``context``: an existing Triton MLIR context with the
    dialects loaded (the drop-in passes the compilation's own: loading every dialect into a
    fresh context costs about 2 ms a kernel); None makes a fresh one.  Raises
    :class:`IRError` with Triton's diagnostics."""
    # Blank lines in front keep Triton's line numbers equal to the lines of the user's file.
    padded = "\n" * (first_line - 1) + text
    fd, temp_path = tempfile.mkstemp(suffix=".mlir", prefix="ll_opt_")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(padded)
        # The context first: the first one a process makes registers every dialect (about 0.3 s),
        # and a child forked after that inherits the registration instead of paying it again
        # (ll-opt parses each input in a child: about 0.3 s less a run, most of a small file's parse).
        ctx = new_context() if context is None else context
        if safe and hasattr(os, "fork"):
            ok, diagnostics = _parse_file_first(temp_path, text)
            if not ok:
                raise IRError(rewrite_diagnostics(diagnostics, temp_path, filename)
                              or f"{filename}: error: Triton could not parse the module")
        return parse_file_into(temp_path, ctx, filename), ctx, temp_path
    finally:
        os.unlink(temp_path)


# Regions nested this deep (``scf.if`` in ``scf.if`` ...) are worth naming when Triton's parser
# crashes: its recursive descent runs out of stack a few thousand levels down (about 4,000 with
# an 8 MiB stack), while our own walks are iterative and have no such limit.
DEEP_NESTING = 2000


def _nesting_depth(text: str) -> int:
    """The deepest ``{`` nesting of module text (regions, plus the odd attribute dictionary)."""
    depth = deepest = 0
    for brace in re.finditer(r"[{}]", text):
        depth += 1 if brace.group() == "{" else -1
        deepest = max(deepest, depth)
    return deepest


def _parse_file_first(path: str, text: str) -> tuple[bool, str]:
    """Parse ``path`` (holding ``text``) in a forked child, or in the checker where forking costs
    more (``parse_checker``): (ok, diagnostics).  If Triton aborts on the input, only the child
    or the checker dies."""
    def parse() -> str:
        bindings().parse_mlir_module(path, new_context())
        return ""

    # Triton's diagnostics say what is wrong; the exception the bindings raise adds nothing.
    outcome = parse_first(path, parse)
    diagnostics = outcome.output
    if outcome.signal is not None:
        # An abort has no MLIR location: say so first, then what Triton printed, if anything.
        message = f"Triton aborted while parsing the module (signal {outcome.signal})"
        depth = _nesting_depth(text)
        if depth >= DEEP_NESTING:
            message += (f"; the module nests regions {depth} deep: Triton's parser recurses once per "
                        f"level and may have run out of stack")
        printed = f"; what it printed follows\n{diagnostics}" if diagnostics.strip() else ""
        diagnostics = f"loc(\"{path}\":1:1): error: {message}{printed}"
    return outcome.ok, diagnostics


def parse_file_into(path: str, ctx, filename: str):
    """Parse the module in ``path`` into the Triton context ``ctx``; Triton's diagnostics become
    an :class:`IRError` whose locations name ``filename``."""
    with CapturedStderr() as captured:
        try:
            handle = bindings().parse_mlir_module(path, ctx)
        except RuntimeError:
            handle = None
    if handle is None:
        raise IRError(rewrite_diagnostics(captured.text, path, filename)
                      or f"{filename}: error: Triton could not parse the module")
    handle.context = ctx  # keep the context alive as long as the module (as triton.compile does)
    return handle


def triton_module_from_text(text: str, context):
    """Parse module text into a Triton module living in ``context`` (an existing Triton MLIR
    context, e.g. the one a compilation runs in), for handing back to Triton's pipeline."""
    fd, path = tempfile.mkstemp(suffix=".ttgir", prefix="ll_hook_")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return parse_file_into(path, context, "<plugin output>")
    finally:
        os.unlink(path)


def parse_type(text: str, context):
    """The MLIR type printed as ``text`` (e.g. ``tensor<64x64xi8, #ttg.blocked<{...}>>``), made
    in ``context``, the context of the module it is used in; an :class:`IRError` where the text
    is no type.

    Why a parse: Triton's bindings make a tensor type with a given encoding only from an
    encoding attribute, and give none back from a value; Gluon's Python layouts do
    (``get_gluon_layout_from_tensor``), at the cost of importing Gluon's language (about 20 ms
    on the first compile of a process).  A one-function module parsed in the same context costs
    under a millisecond, and the type it yields is the context's own (types are uniqued per
    context), so ops built with it are of the module's types."""
    module = triton_module_from_text(
        "module {\n  tt.func private @type_of(%%value: %s) {\n    tt.return\n  }\n}\n" % text, context)
    returns = []
    module.walk(lambda op: returns.append(op) if op.get_name() == "tt.return" else None)
    return returns[0].get_block().arg(0).get_type()
