"""The IR adapter: the one module of the project that touches Triton's MLIR bindings.

Triton's Python bindings (``triton._C.libtriton.ir``) can parse a module (from a *file path*
only), walk its operations, read result types as text, set attributes on the op that defines
a value, redirect uses (RAUW) and run Triton's own passes.  They cannot create arbitrary ops,
erase ops or retype values, and they differ in details between Triton 3.6 (pybind11) and 3.9
(nanobind).  Everything else in this project goes through the small, stable API here:

* :func:`parse_module` turns module text into a :class:`Module` (safely: a malformed module
  is first parsed in a forked child, so that an abort inside Triton's C++ cannot kill us, and
  Triton's diagnostics are captured into the :class:`IRError` message);
* :class:`Module` gives a Python snapshot of the IR: :class:`Operation` (name, operands,
  results, regions, location), :class:`Region`, :class:`Block` (arguments, operations) and
  :class:`Value` (type text, parsed :class:`TensorType`, defining op or owning block);
* edits: :meth:`Module.set_attribute` (attribute text, exactly as MLIR prints it),
  :meth:`Module.replace_all_uses_with`, :meth:`Module.rewrite_text` (the general way: edit the
  printed module and re-parse it), :meth:`Module.canonicalize` / :meth:`Module.cse`;
* :meth:`Module.print` gives the text back (without locations unless asked for).

How attribute edits work (the bindings can only build a handful of attribute kinds, and no
``#ttg.linear`` arrays): when a module is parsed, every op that has results gets a marker
attribute ``ll.op_id = N : i32`` through the bindings.  The printer writes the marker where
MLIR itself prints an op's attributes, so committing edits is a text substitution of each
marker by the new attributes (or by nothing), followed by a re-parse that validates the result.
Markers never appear in printed output.
"""

from __future__ import annotations

import faulthandler
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator, Optional

MARKER = "ll.op_id"


class IRError(Exception):
    """A module could not be parsed, verified or transformed; ``str()`` is the user message,
    starting with a location (``file:line:col: error: ...``) when one is known."""


# --------------------------------------------------------------------------- Triton bindings

_triton_ir = None


def _bindings():
    """Import Triton's bindings lazily (importing triton costs time; ``--help`` should not)."""
    global _triton_ir
    if _triton_ir is None:
        from triton._C.libtriton import ir
        _triton_ir = ir
    return _triton_ir


def _new_context():
    from triton._C.libtriton import ir
    ctx = ir.context()
    ir.load_dialects(ctx)
    # TTGIR for NVIDIA (ttng.*) and AMD (amdgpu.*) uses backend dialects; load what exists.
    for backend in ("nvidia", "amd"):
        try:
            module = __import__("triton._C.libtriton." + backend, fromlist=["load_dialects"])
            module.load_dialects(ctx)
        except (ImportError, AttributeError):
            pass
    return ctx


def triton_version() -> str:
    import triton
    return triton.__version__


def adapt_attribute_text(text: str) -> str:
    """Make layout attribute text parseable by the installed Triton.  ``#ttg.generic_linear``
    (a linear layout whose bases move along several tensor dims) exists from Triton 3.8; older
    releases accept the same bases under ``#ttg.linear``."""
    if text.startswith("#ttg.generic_linear<") and _triton_before((3, 8)):
        return "#ttg.linear<" + text[len("#ttg.generic_linear<"):]
    return text


@lru_cache(maxsize=1)
def installed_triton_version() -> tuple[int, int]:
    """(major, minor) of the installed Triton, e.g. (3, 6)."""
    m = re.match(r"(\d+)\.(\d+)", triton_version())
    return (int(m.group(1)), int(m.group(2))) if m else (3, 9)


def _triton_before(version: tuple[int, int]) -> bool:
    return installed_triton_version() < tuple(version)


# --------------------------------------------------------------------------- types

_ELEMENT_BITS = {"f64": 64, "f32": 32, "tf32": 32, "f16": 16, "bf16": 16, "index": 64}


def element_bits(element_type: str) -> int:
    """Bit width of an element type as printed: i1 -> 1, f16 -> 16, f8E4M3FN -> 8, pointers -> 64."""
    if element_type.startswith("!tt.ptr"):
        return 64
    if element_type in _ELEMENT_BITS:
        return _ELEMENT_BITS[element_type]
    m = re.fullmatch(r"[iuf](\d+)", element_type) or re.fullmatch(r"f(\d+)E\w+", element_type)
    if m:
        return int(m.group(1))
    raise IRError(f"unknown element type '{element_type}'")


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside any <>, (), [], {} or string; e.g. the parts of a tensor type."""
    parts, depth, start, in_string = [], 0, 0, False
    for i, ch in enumerate(text):
        if in_string:
            if ch == '"' and text[i - 1] != "\\":
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            if not (ch == ">" and i > 0 and text[i - 1] == "-"):  # '->' is not a bracket
                depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor (``tensor<64x64xf32, #enc>``) or shared-memory descriptor
    (``!ttg.memdesc<64x64xf16, #shared, #smem, mutable>``) with its encoding as text."""

    kind: str                  # "tensor" or "memdesc"
    shape: tuple[int, ...]
    element_type: str
    encoding: Optional[str]    # the attribute text (aliases expanded), None if absent
    text: str                  # the whole type as printed

    @property
    def element_bits(self) -> int:
        return element_bits(self.element_type)

    @property
    def is_shared(self) -> bool:
        return self.kind == "memdesc"

    def encoding_attribute(self):
        """The encoding as a :mod:`linear_layouts.dialect` attribute object (None if absent);
        raises the dialect's ``LayoutError`` for text it cannot read."""
        if self.encoding is None:
            return None
        from ..dialect.attributes import parse_attribute
        return parse_attribute(self.encoding)


@lru_cache(maxsize=8192)
def parse_tensor_type(text: str) -> Optional[TensorType]:
    """A :class:`TensorType` for tensor and memdesc types, None for any other type."""
    text = text.strip()
    for prefix, kind in (("tensor<", "tensor"), ("!ttg.memdesc<", "memdesc")):
        if text.startswith(prefix) and text.endswith(">"):
            parts = split_top_level(text[len(prefix):-1])
            dims = parts[0].split("x")
            # shape is the leading integers; the element type is the rest (may contain 'x',
            # as in !tt.ptr<f32>, so rejoin it)
            shape = []
            while dims and dims[0].isdigit():
                shape.append(int(dims.pop(0)))
            element = "x".join(dims)
            encoding = parts[1] if len(parts) > 1 and parts[1].startswith("#") else None
            return TensorType(kind, tuple(shape), element, encoding, text)
    return None


def alias_pattern(alias: str) -> "re.Pattern":
    """Matches uses of an attribute alias (``#blocked1`` but not ``#blocked12``)."""
    return re.compile(re.escape(alias) + r"(?![\w$.-])")


# --------------------------------------------------------------------------- IR snapshot

@dataclass(eq=False)
class Value:
    """An SSA value: an op result or a block argument.  ``type`` is the type as printed by
    MLIR with every encoding alias expanded."""

    type: str
    owner: "Operation | Block"
    index: int
    _handle: object = field(repr=False, default=None)

    @property
    def is_block_argument(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def tensor_type(self) -> Optional[TensorType]:
        return parse_tensor_type(self.type)

    @property
    def defining_op(self) -> "Optional[Operation]":
        return None if self.is_block_argument else self.owner


@dataclass(eq=False)
class Block:
    arguments: list[Value] = field(default_factory=list)
    operations: list["Operation"] = field(default_factory=list)
    parent: "Optional[Region]" = None


@dataclass(eq=False)
class Region:
    blocks: list[Block] = field(default_factory=list)
    parent: "Optional[Operation]" = None


@dataclass(eq=False)
class Operation:
    name: str
    operands: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    symbol: Optional[str] = None          # sym_name of functions
    parent: Optional[Block] = None
    _marker: Optional[int] = field(default=None, repr=False)
    _handle: object = field(default=None, repr=False)
    _location: Optional[str] = field(default=None, repr=False)
    _locate: Optional[Callable[["Operation"], str]] = field(default=None, repr=False)

    @property
    def location(self) -> str:
        """``file:line:col`` of the op in the user's file (or ``unknown``)."""
        if self._location is None:
            self._location = self._locate(self) if self._locate is not None else "unknown"
        return self._location

    @property
    def parent_op(self) -> "Optional[Operation]":
        if self.parent is None or self.parent.parent is None:
            return None
        return self.parent.parent.parent

    @property
    def block_arguments(self) -> list[Value]:
        """Arguments of every block of every region of this op (function arguments, loop
        iteration arguments, ...)."""
        return [a for r in self.regions for b in r.blocks for a in b.arguments]

    def __str__(self) -> str:
        return f"'{self.name}' at {self.location}"


# --------------------------------------------------------------------------- parsing

_LOC_DIAG = re.compile(r'^loc\((?P<loc>.*?)\):\s*(?P<rest>(error|warning|note|remark):.*)$')
_FILE_LINE_COL = re.compile(r'"(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def _rewrite_diagnostics(text: str, temp_path: str, display_name: str) -> str:
    """Triton prints ``loc("/tmp/x.mlir":4:25): error: ...`` (or a named location such as
    ``loc("x"("k.py":3:9))``); users want ``in.mlir:4:25: error: ...``."""
    lines = []
    for line in text.splitlines():
        m = _LOC_DIAG.match(line.strip())
        if m:
            positions = list(_FILE_LINE_COL.finditer(m.group("loc")))
            if positions:
                p = positions[-1]
                f = display_name if p.group("file") == temp_path else p.group("file")
                line = f"{f}:{p.group('line')}:{p.group('col')}: {m.group('rest')}"
            else:
                line = f"{display_name}: {m.group('rest')}"
        if line.strip():
            lines.append(line)
    return "\n".join(lines)


class _CapturedStderr:
    """Redirect the process-level stderr (fd 2, where MLIR's C++ prints diagnostics) to a file."""

    def __enter__(self):
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace")
        self._file.close()
        return False


def _parse_file_in_child(path: str) -> tuple[bool, str]:
    """Parse ``path`` in a forked child: (ok, diagnostics).  If Triton aborts or crashes on the
    input, only the child dies.  fork() after the bindings are loaded is cheap (copy on write)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report diagnostics through the pipe, exit status says ok or not
        ok = False
        try:
            os.close(read_fd)
            os.dup2(write_fd, 2)
            # An abort is an answer here, not a crash to report: keep Python's fault handler
            # (on under pytest) from printing the child's stack into the diagnostics.
            faulthandler.disable()
            ctx = _new_context()
            _bindings().parse_mlir_module(path, ctx)
            ok = True
        except BaseException:
            pass
        finally:
            os._exit(0 if ok else 1)
    os.close(write_fd)
    chunks = []
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    diagnostics = b"".join(chunks).decode(errors="replace")
    if os.WIFSIGNALED(status):
        # An abort has no MLIR location: say so first, then what Triton printed.
        diagnostics = (f"loc(\"{path}\":1:1): error: Triton aborted while parsing the module "
                       f"(signal {os.WTERMSIG(status)}); what it printed follows\n{diagnostics}")
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, diagnostics


def parse_module(text: str, filename: str = "<stdin>", first_line: int = 1, safe: bool = True) -> "Module":
    """Parse TTGIR module text.  ``filename`` and ``first_line`` (where the text starts in that
    file, for ``--split-input-file`` chunks) make locations and diagnostics point at the
    user's file.  Raises :class:`IRError` with Triton's diagnostics on failure."""
    _reject_reserved_attributes(text, filename, first_line)
    _bindings()
    handle, ctx, temp_path = _parse_handle(text, filename, first_line, safe)
    return Module(handle, ctx, filename, temp_path, safe=safe)


# Attributes our passes use for their own bookkeeping while they rewrite a module: never read
# from input.  (An input convert carrying ``ll.island = 0`` would otherwise be replaced by
# island 0's code although the pass left it to Triton.)
RESERVED_ATTRIBUTES = (MARKER, "ll.island")
_RESERVED = re.compile(r"(?<![\w.])(" + "|".join(re.escape(a) for a in RESERVED_ATTRIBUTES) + r")\s*=")


def _reject_reserved_attributes(text: str, filename: str, first_line: int) -> None:
    for number, line in enumerate(text.splitlines(), start=first_line):
        code = line.split("//", 1)[0]
        m = _RESERVED.search(code)
        if m:
            raise IRError(f"{filename}:{number}:{m.start() + 1}: error: attribute '{m.group(1)}' is reserved for "
                          f"linear-layouts' own bookkeeping and may not appear in the input")


def _parse_handle(text: str, filename: str, first_line: int, safe: bool):
    # Blank lines in front keep Triton's line numbers equal to the lines of the user's file.
    padded = "\n" * (first_line - 1) + text
    fd, temp_path = tempfile.mkstemp(suffix=".mlir", prefix="ll_opt_")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(padded)
        if safe and hasattr(os, "fork"):
            ok, diagnostics = _parse_file_in_child(temp_path)
            if not ok:
                raise IRError(_rewrite_diagnostics(diagnostics, temp_path, filename)
                              or f"{filename}: error: Triton could not parse the module")
        ctx = _new_context()
        return _parse_file_into(temp_path, ctx, filename), ctx, temp_path
    finally:
        os.unlink(temp_path)


def _parse_file_into(path: str, ctx, filename: str):
    """Parse the module in ``path`` into the Triton context ``ctx``; Triton's diagnostics become
    an :class:`IRError` whose locations name ``filename``."""
    with _CapturedStderr() as captured:
        try:
            handle = _bindings().parse_mlir_module(path, ctx)
        except RuntimeError:
            handle = None
    if handle is None:
        raise IRError(_rewrite_diagnostics(captured.text, path, filename)
                      or f"{filename}: error: Triton could not parse the module")
    handle.context = ctx  # keep the context alive as long as the module (as triton.compile does)
    return handle


def _location_text(loc: str, temp_path: str, filename: str) -> str:
    """``loc("file":3:5)`` -> ``file:3:5``; named locations keep the innermost file position."""
    m = re.search(r'"([^"]*)":(\d+):(\d+)', loc)
    if not m:
        return "unknown"
    f = filename if m.group(1) == temp_path else m.group(1)
    return f"{f}:{m.group(2)}:{m.group(3)}"


# --------------------------------------------------------------------------- the module

class Module:
    """A TTGIR module: a Python snapshot of its ops over a Triton module handle."""

    def __init__(self, handle, ctx, filename: str, temp_path: str, safe: bool = True):
        self._handle = handle
        # safe: every re-parse of our own edits runs first in a forked child (ll-opt).  The
        # drop-in (``passes.hook``) parses with safe=False: it runs inside a process that may
        # hold CUDA state and threads, where fork() is unsafe.
        self.safe = safe
        self._ctx = ctx
        self.filename = filename
        self._temp_path = temp_path
        self._pending: dict[int, dict[str, str]] = {}   # op marker -> {attr name: attr text}
        self._pending_func: dict[str, dict[str, str]] = {}  # function symbol -> attrs
        # Text from rewrite_text that has not been parsed yet: parsed on the first use of the
        # module, or handed to Triton as it is (text_for_triton), which parses it anyway.
        self._unparsed: Optional[str] = None
        self._build()

    # -- snapshot ---------------------------------------------------------------------

    def _build(self) -> None:
        """Mark every op that has results and build the Python tree from a post-order walk."""
        ir = _bindings()
        builder = ir.builder(self._ctx)
        handles = []
        self._handle.walk(lambda op: handles.append(op))
        value_by_id: dict[int, Value] = {}
        ops: list[Operation] = []
        block_by_id: dict[int, Block] = {}
        region_by_id: dict[int, Region] = {}

        def block_for(block_handle) -> Block:
            key = block_handle.id()
            if key not in block_by_id:
                block = Block()
                for i in range(block_handle.get_num_arguments()):
                    arg = block_handle.get_argument(i)
                    v = Value(str(arg.get_type()), block, i, arg)
                    block.arguments.append(v)
                    value_by_id[arg.id()] = v
                block_by_id[key] = block
                region_key = block_handle.get_parent().id()
                region = region_by_id.setdefault(region_key, Region())
                region.blocks.append(block)
                block.parent = region
            return block_by_id[key]

        # Post-order: children before parents, and ops of a block in order.  A block (with its
        # arguments) is created when its first op is visited, so operands defined earlier are
        # already known, except values defined later (graph regions): resolved afterwards.
        unresolved = []
        for index, h in enumerate(handles):
            name = h.get_name()
            op = Operation(name, _handle=h)
            for i in range(h.get_num_results()):
                r = h.get_result(i)
                v = Value(str(r.get_type()), op, i, r)
                op.results.append(v)
                value_by_id[r.id()] = v
            if op.results:
                op._marker = index
                op.results[0]._handle.set_attr(MARKER, builder.get_int32_attr(index))
                op._location = _location_text(str(op.results[0]._handle.get_loc()), self._temp_path, self.filename)
            if name in ("tt.func", "func.func"):
                op.symbol = h.get_str_attr("sym_name")
                op._locate = self._function_location
            if name != "builtin.module":  # (creating the block registers its arguments)
                op.parent = block_for(h.get_block())
                op.parent.operations.append(op)
            for i in range(h.get_num_operands()):
                operand = h.get_operand(i)
                v = value_by_id.get(operand.id())
                if v is None:
                    unresolved.append((op, i, operand))
                op.operands.append(v)
            for i in range(h.get_num_regions()):
                op.regions.append(region_by_id.setdefault(h.get_region(i).id(), Region()))
                op.regions[-1].parent = op
            ops.append(op)
        for op, i, operand in unresolved:
            op.operands[i] = value_by_id.get(operand.id()) or Value(str(operand.get_type()), op, -1, operand)
        self._ops_postorder = ops
        self._printed_with_locations = None
        self._header = None

    def _function_location(self, op: Operation) -> str:
        """Functions have no result to ask for a location: find the ``loc(...)`` printed after
        the closing brace of their body (computed on demand: printing costs time)."""
        self._parsed()
        if self._printed_with_locations is None:
            self._printed_with_locations = str(self._handle)
        text = self._printed_with_locations
        aliases = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", text, flags=re.M))
        m = re.search(r"^\s*tt\.func[^\n]*" + re.escape(printed_symbol(op.symbol)) + r"\(", text, flags=re.M)
        if not m:
            return "unknown"
        # the body's '{' is the last one on the header line (after any attribute dict)
        depth, i = 0, text.rindex("{", m.start(), text.index("\n", m.end()))
        while i < len(text):
            depth += text[i] == "{"
            depth -= text[i] == "}"
            i += 1
            if depth == 0:
                break
        loc = re.match(r" loc\((#loc\d*|\"[^\"]*\":\d+:\d+)\)", text[i:])
        if not loc:
            return "unknown"
        ref = loc.group(1)
        return _location_text(aliases.get(ref, f"loc({ref})"), self._temp_path, self.filename)

    @property
    def body(self) -> Operation:
        """The ``builtin.module`` op (last in post-order)."""
        self._parsed()
        return self._ops_postorder[-1]

    def walk(self) -> Iterator[Operation]:
        """All ops in text order (pre-order: a parent before the ops in its regions)."""
        def visit(op):
            yield op
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        yield from visit(child)
        return visit(self.body)

    def ops_named(self, name: str) -> list[Operation]:
        return [op for op in self.walk() if op.name == name]

    # -- module attributes ----------------------------------------------------------------

    def _module_header(self) -> str:
        """The module's attribute dictionary as printed (read once per snapshot)."""
        self._parsed()
        if self._header is None:
            m = re.search(r"^module attributes \{(.*)\} \{$", self.print(), flags=re.M)
            self._header = m.group(1) if m else ""
        return self._header

    @property
    def num_warps(self) -> Optional[int]:
        m = re.search(r'"ttg\.num-warps" = (\d+)', self._module_header())
        return int(m.group(1)) if m else None

    @property
    def threads_per_warp(self) -> Optional[int]:
        m = re.search(r'"ttg\.threads-per-warp" = (\d+)', self._module_header())
        return int(m.group(1)) if m else None

    @property
    def target(self) -> Optional[str]:
        """``cuda:90``, ``hip:gfx942``, ... from the module attribute ``ttg.target``."""
        m = re.search(r'ttg\.target = "([^"]*)"', self._module_header())
        return m.group(1) if m else None

    # -- attribute aliases ---------------------------------------------------------------

    def aliases(self) -> dict[str, str]:
        """Attribute aliases of the printed module, name -> fully expanded text, in print
        order: ``{"#blocked": "#ttg.blocked<{...}>", "#mma": "#ttg.nvidia_mma<{...}>"}``."""
        self._parsed()
        text = self._handle.str_nodebug()
        raw = dict(re.findall(r"^(#[\w$.-]+) = (.*)$", text, flags=re.M))
        expanded = {}
        for name, value in raw.items():
            # aliases may refer to earlier aliases (e.g. a dot_op's parent): expand them
            for other in sorted(expanded, key=len, reverse=True):
                value = alias_pattern(other).sub(lambda _m, o=other: expanded[o], value)
            expanded[name] = value
        return expanded

    def short_type(self, type_text: str) -> str:
        """A type with expanded encodings written back as their aliases (for messages)."""
        for name, value in sorted(self.aliases().items(), key=lambda kv: len(kv[1]), reverse=True):
            type_text = type_text.replace(value, name)
        return type_text

    # -- edits ---------------------------------------------------------------------------

    def set_attribute(self, op: Operation, name: str, attribute_text: str) -> None:
        """Set discardable attribute ``name`` of ``op`` to ``attribute_text`` (as MLIR prints
        it: ``"warp"``, ``#ttg.linear<...>``, ``[#a, #b]``).  Takes effect at :meth:`commit`;
        an invalid attribute is reported there, with Triton's diagnostic."""
        self._parsed()
        if op._marker is not None:
            self._pending.setdefault(op._marker, {})[name] = attribute_text
        elif op.symbol is not None:
            self._pending_func.setdefault(op.symbol, {})[name] = attribute_text
        else:
            raise IRError(f"{op.location}: error: cannot set attribute '{name}' on {op.name}: "
                          "only ops with results and functions can carry attributes here")

    @property
    def has_pending_edits(self) -> bool:
        return bool(self._pending or self._pending_func)

    def _text_with_edits(self, debuginfo: bool = True) -> str:
        """The printed module with pending attributes in place of the markers (and no markers)."""
        self._parsed()
        text = str(self._handle) if debuginfo else self._handle.str_nodebug()
        # Locations that Triton took from our temporary file name point at the user's file.
        text = text.replace(f'"{self._temp_path}"', mlir_string_literal(self.filename))
        text = _replace_markers(text, self._pending)
        for symbol, attrs in self._pending_func.items():
            text = _add_function_attributes(text, symbol, attrs)
        return text

    def commit(self) -> None:
        """Apply pending attribute edits: print, substitute, re-parse (which validates them)."""
        if self.has_pending_edits:
            self._reparse(self._text_with_edits())

    def _reparse(self, text: str) -> None:
        # Our own edits are checked by a safe parse too: a bad attribute must not crash ll-opt.
        handle, ctx, temp_path = _parse_handle(text, self.filename, 1, safe=self.safe)
        self._handle, self._ctx, self._temp_path = handle, ctx, temp_path
        self._pending, self._pending_func = {}, {}
        self._build()

    def rewrite_text(self, transform: Callable[[str], str]) -> None:
        """The general edit: ``transform`` gets the printed module (with locations, without
        markers) and returns new module text, which becomes this module.  The text is parsed
        (and so checked) when the module is next used: by the next pass, or when it is
        printed; :meth:`text_for_triton` hands it to Triton's own parser instead."""
        self._unparsed = transform(self._text_with_edits())
        self._pending, self._pending_func = {}, {}   # they are in the text now

    def _parsed(self) -> None:
        """Parse text left by :meth:`rewrite_text`, if any, into this module."""
        if self._unparsed is not None:
            text, self._unparsed = self._unparsed, None
            self._reparse(text)

    def text_for_triton(self) -> str:
        """The module as text with locations, for Triton to parse into its own context (the
        drop-in's path).  Text a pass just wrote is returned as it is: parsing it here and
        printing it again would cost a round trip (about 20 ms a kernel), and Triton's parser
        checks it all the same."""
        if self._unparsed is not None and not self.has_pending_edits:
            return self._unparsed
        return self.print(debuginfo=True)

    def replace_all_uses_with(self, old: Value, new: Value) -> None:
        self._parsed()
        old._handle.replace_all_uses_with(new._handle)
        self.commit_structure()

    def commit_structure(self) -> None:
        """Rebuild the snapshot after an edit made through the bindings."""
        self._reparse(self._text_with_edits())

    def _run_triton_passes(self, *adders) -> None:
        from triton._C.libtriton import ir
        # Markers would keep CSE from merging ops (their values differ): strip them first.
        handle, ctx, temp_path = _parse_handle(self._text_with_edits(), self.filename, 1, safe=self.safe)
        self._handle, self._ctx, self._temp_path = handle, ctx, temp_path
        self._pending, self._pending_func = {}, {}
        pm = ir.pass_manager(self._ctx)
        for add in adders:
            add(pm)
        with _CapturedStderr() as captured:
            try:
                try:
                    pm.run(self._handle, "ll-opt")   # 3.9: run(module, name)
                except TypeError:
                    pm.run(self._handle)             # 3.6: run(module)
                failed = False
            except RuntimeError:
                failed = True
        if failed:
            raise IRError(_rewrite_diagnostics(captured.text, self._temp_path, self.filename)
                          or f"{self.filename}: error: Triton's pass pipeline failed")
        self._build()

    def canonicalize(self) -> None:
        """Run Triton's canonicalizer (folds no-op conversions, erases dead pure ops)."""
        from triton._C.libtriton import passes
        self._run_triton_passes(passes.common.add_canonicalizer)

    def cse(self) -> None:
        from triton._C.libtriton import passes
        self._run_triton_passes(passes.common.add_cse)

    # -- printing --------------------------------------------------------------------------

    def print(self, debuginfo: bool = False) -> str:
        """The module as MLIR text (with pending edits applied); locations only if asked for,
        and then pointing at the user's file."""
        self._parsed()
        if self.has_pending_edits:
            self.commit()
        text = self._text_with_edits(debuginfo)
        return text.rstrip("\n") + "\n"

    def __str__(self) -> str:
        return self.print()


_MARKER_USE = re.compile(re.escape(MARKER) + r" = (\d+) : i32")


def _replace_markers(text: str, pending: dict[int, dict[str, str]]) -> str:
    """Put each op's pending attributes where its marker is, and drop markers without any.

    A marker sits in an op's attribute dictionary in one of four places, e.g. for marker 7
    and pending ``{ll.layout = X}``:

        ... attributes {ll.op_id = 7 : i32}      ->  ... attributes {ll.layout = X}   (or nothing)
        ... {ll.op_id = 7 : i32} : ...           ->  ... {ll.layout = X} : ...        (or nothing)
        {ll.op_id = 7 : i32, axis = 0 : i32}     ->  {ll.layout = X, axis = 0 : i32}
        {axis = 0 : i32, ll.op_id = 7 : i32}     ->  {axis = 0 : i32, ll.layout = X}

    The scan starts at the marker's literal text, so megabytes of lowered LLVM-dialect code
    (structs of thousands of fields on one line) cost one pass.
    """
    pieces, done = [], 0
    for m in _MARKER_USE.finditer(text):
        start, end = m.span()
        attrs = pending.get(int(m.group(1)))
        body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items())) if attrs else ""
        if text.startswith("}", end) and text.endswith(" attributes {", 0, start):
            start, end, new = start - len(" attributes {"), end + 1, f" attributes {{{body}}}" if body else ""
        elif text.startswith("}", end) and text.endswith(" {", 0, start):
            start, end, new = start - 2, end + 1, f" {{{body}}}" if body else ""
        elif text.startswith(", ", end):
            end, new = end + 2, f"{body}, " if body else ""
        elif text.endswith(", ", 0, start):
            start, new = start - 2, f", {body}" if body else ""
        else:
            new = body
        pieces.append(text[done:start])
        pieces.append(new)
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def mlir_string_literal(text: str) -> str:
    """``text`` as MLIR prints a string literal: UTF-8 bytes, with ``\\`` for a backslash and
    ``\\XX`` (two upper-case hex digits) for '"' and every byte that is not printable ASCII.
    For example ``back\\slash "ü".mlir`` prints as ``"back\\\\slash \\22\\C3\\BC\\22.mlir"``."""
    out = []
    for byte in text.encode("utf-8", errors="surrogateescape"):
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and byte != 0x22:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


_BARE_SYMBOL = re.compile(r"[A-Za-z_][\w$.]*\Z", re.ASCII)


def printed_symbol(symbol: str) -> str:
    """A symbol reference as MLIR prints it: ``@name``, or ``@"..."`` for any other name
    (``@"tr\\C3\\A4nspose"`` for ``tränspose``)."""
    return "@" + symbol if _BARE_SYMBOL.match(symbol) else "@" + mlir_string_literal(symbol)


def _add_function_attributes(text: str, symbol: str, attrs: dict[str, str]) -> str:
    """Add discardable attributes to ``tt.func @symbol`` in printed text."""
    body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items()))
    pattern = re.compile(r"^(\s*tt\.func[^\n]*" + re.escape(printed_symbol(symbol)) + r"\([^\n]*?)( \{)?$", re.M)
    m = pattern.search(text)
    if not m:
        raise IRError(f"error: function @{symbol} not found in the printed module")
    line = m.group(1)
    if " attributes {" in line:
        line = line.replace(" attributes {", f" attributes {{{body}, ", 1)
    else:  # the header ends with the signature (the function's own loc follows its body)
        line = line + f" attributes {{{body}}}"
    return text[:m.start()] + line + (m.group(2) or "") + text[m.end():]


# --------------------------------------------------------------------------- Triton's back end

TARGETS = {"cuda:80": ("cuda", 80, 32), "cuda:90": ("cuda", 90, 32),
           "hip:gfx942": ("hip", "gfx942", 64), "hip:gfx90a": ("hip", "gfx90a", 64)}
EMIT_STAGES = {"llir": ("cuda", "hip"), "ptx": ("cuda",), "amdgcn": ("hip",)}


def run_forked(function: Callable[[], str]) -> str:
    """Run ``function`` in a forked child and return its text result; its stderr and any
    exception come back in an :class:`IRError`.  Triton's back end may abort the process on
    bad input: then only the child dies."""
    result_file = tempfile.TemporaryFile(mode="w+b")
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(err_read)
            os.dup2(err_write, 2)
            os.dup2(err_write, 1)
            text = function()
            result_file.write(text.encode())
            result_file.flush()
            status = 0
        except BaseException as error:  # reported through the pipe
            os.write(err_write, f"{type(error).__name__}: {error}\n".encode(errors="replace"))
        finally:
            os._exit(status)
    os.close(err_write)
    chunks = []
    while True:
        chunk = os.read(err_read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(err_read)
    _, status = os.waitpid(pid, 0)
    result_file.seek(0)
    result = result_file.read().decode(errors="replace")
    result_file.close()
    messages = b"".join(chunks).decode(errors="replace")
    if os.WIFSIGNALED(status):
        raise IRError(f"Triton's back end crashed (signal {os.WTERMSIG(status)})\n{messages}".rstrip())
    if os.WEXITSTATUS(status) != 0:
        raise IRError(messages.strip() or "Triton's back end failed")
    return result


def compile_module(module: Module, target: str, stage: str) -> str:
    """Hand the module to Triton's own later stages (make_llir, make_ptx / make_amdgcn) for
    ``target`` (a key of :data:`TARGETS`) and return the text of ``stage``."""
    if target not in TARGETS:
        raise IRError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    backend, arch, warp_size = TARGETS[target]
    if backend not in EMIT_STAGES.get(stage, ()):
        raise IRError(f"--emit {stage} is not available for target {target}")
    text = module.print(debuginfo=True)
    # Triton reads the target from the module too: keep the two in agreement.
    if re.search(r'ttg\.target = "[^"]*"', text):
        text = re.sub(r'ttg\.target = "[^"]*"', f'ttg.target = "{target}"', text, count=1)
    threads = module.threads_per_warp or warp_size

    def compile_in_child() -> str:
        import triton
        from triton.backends.compiler import GPUTarget
        import shutil
        directory = tempfile.mkdtemp(prefix="ll_opt_emit_")
        try:
            path = os.path.join(directory, "module.ttgir")
            with open(path, "w") as f:
                f.write(text)
            os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # silence 3.9's notice
            # A private cache: concurrent ll-opt runs never race on Triton's shared cache, and
            # an output always comes from this compilation.
            os.environ["TRITON_CACHE_DIR"] = os.path.join(directory, "cache")
            kernel = triton.compile(path, target=GPUTarget(backend, arch, threads))
            asm = kernel.asm[stage]
            return asm if isinstance(asm, str) else asm.decode()
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    return run_forked(compile_in_child)


def triton_module_from_text(text: str, context):
    """Parse module text into a Triton module living in ``context`` (an existing Triton MLIR
    context, e.g. the one a compilation runs in), for handing back to Triton's pipeline."""
    _bindings()
    fd, path = tempfile.mkstemp(suffix=".ttgir", prefix="ll_hook_")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return _parse_file_into(path, context, "<plugin output>")
    finally:
        os.unlink(path)
