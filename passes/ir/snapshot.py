"""A TTGIR module as a Python snapshot over a Triton module handle: :class:`Module` with its
:class:`Operation`, :class:`Region`, :class:`Block` and :class:`Value` objects, and its edits.

* :func:`parse_module` turns module text into a :class:`Module` (see :mod:`.parsing`: a
  malformed module is first parsed in a forked child, and Triton's diagnostics become the
  :class:`~.diagnostics.IRError` message);
* :class:`Value` gives its type text and parsed :class:`~.types.TensorType`, its defining op
  or owning block;
* edits: :meth:`Module.set_attribute` (attribute text, exactly as MLIR prints it, committed
  through :mod:`.text_edits`), :meth:`Module.replace_all_uses_with`,
  :meth:`Module.rewrite_text` (the general way: edit the printed module and re-parse it),
  :meth:`Module.canonicalize` / :meth:`Module.cse`;
* :meth:`Module.print` gives the text back (without locations unless asked for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from .bindings import bindings
from .diagnostics import CapturedStderr, IRError, location_text, rewrite_diagnostics
from .parsing import parse_handle, reject_reserved_attributes
from .text_edits import MARKER, add_function_attributes, mlir_string_literal, printed_symbol, replace_markers
from .types import TensorType, alias_pattern, parse_tensor_type

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
    callee: Optional[str] = None          # the function a tt.call calls (None: not a call, or unreadable)
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


def ops_under(op: Operation):
    """The op and every op in its regions, in text order (as ``Module.walk``); iterative, so
    a convert under thousands of nested ``scf.if`` is no deeper for Python than one."""
    work = [op]
    while work:
        current = work.pop()
        yield current
        work.extend(reversed([child for region in current.regions for block in region.blocks
                              for child in block.operations]))


def in_loop(op: Operation) -> bool:
    """Whether the op runs inside an ``scf.for`` or ``scf.while`` (at any depth)."""
    parent = op.parent_op
    while parent is not None:
        if parent.name in ("scf.for", "scf.while"):
            return True
        parent = parent.parent_op
    return False


def parse_module(text: str, filename: str = "<stdin>", first_line: int = 1, safe: bool = True,
                 context=None, printed: bool = False) -> "Module":
    """Parse TTGIR module text.  ``filename`` and ``first_line`` (where the text starts in that
    file, for ``--split-input-file`` chunks) make locations and diagnostics point at the
    user's file.  ``context``: a Triton MLIR context to parse into (the drop-in passes its
    compilation's; default: a fresh one).  ``printed``: the text is MLIR's own print of a
    module (the drop-in's input), so the module's attributes can be read from it without
    printing the module again.  Raises :class:`IRError` with Triton's diagnostics on failure."""
    reject_reserved_attributes(text, filename, first_line)
    handle, ctx, temp_path = parse_handle(text, filename, first_line, safe, context)
    module = Module(handle, ctx, filename, temp_path, safe=safe)
    if printed:
        module._printed_source = text
    return module


def snapshot_of(handle, text: str, filename: str) -> "Module":
    """A read-only snapshot of a module Triton holds (the drop-in's: the module a compilation
    hands to its ``llir`` stage), ``text`` being Triton's own print of it (``handle.str()``).

    No copy is parsed: the snapshot walks the given module and never changes it (no markers, see
    :class:`Module`), so a compile that falls back still gets Triton's exact module.  Text edits
    (``rewrite_text``) start from ``text``; attribute edits and edits through the bindings need
    a copy of its own: ``parse_module``.  Saves a parse and a print of the module per kernel (2 to
    5 ms on the Liger-Kernel corpus)."""
    reject_reserved_attributes(text, filename, 1)
    module = Module(handle, getattr(handle, "context", None), filename, "", safe=False, marked=False)
    module._printed_source = text
    return module


# --------------------------------------------------------------------------- the module

class Module:
    """A TTGIR module: a Python snapshot of its ops over a Triton module handle."""

    def __init__(self, handle, ctx, filename: str, temp_path: str, safe: bool = True, marked: bool = True):
        self._handle = handle
        # marked: every op with results carries our marker attribute (for attribute edits).  A
        # read-only snapshot (snapshot_of) has none: it walks a module that is not ours to change.
        self._marked = marked
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
        self._changed = False   # an edit was made (see has_rewrites)
        self._printed_source: Optional[str] = None   # MLIR's print of the module as parsed
        self._build()

    # -- snapshot ---------------------------------------------------------------------

    def _build(self) -> None:
        """Mark every op that has results and build the Python tree from a post-order walk."""
        ir = bindings()
        builder = ir.builder(self._ctx) if self._marked else None
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
                if self._marked:
                    op._marker = index
                    op.results[0]._handle.set_attr(MARKER, builder.get_int32_attr(index))
                op._location = location_text(str(op.results[0]._handle.get_loc()), self._temp_path, self.filename)
            if name in ("tt.func", "func.func"):
                op.symbol = h.get_str_attr("sym_name")
                op._locate = self._function_location
            elif name == "tt.call":
                op.callee = h.get_flat_symbol_ref_attr("callee") or None
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
        return location_text(aliases.get(ref, f"loc({ref})"), self._temp_path, self.filename)

    @property
    def body(self) -> Operation:
        """The ``builtin.module`` op (last in post-order)."""
        self._parsed()
        return self._ops_postorder[-1]

    def walk(self) -> Iterator[Operation]:
        """All ops in text order (pre-order: a parent before the ops in its regions).

        Iterative, with a stack of the ops still to visit: a recursive walk would end in a
        RecursionError on ops nested about a thousand deep (``scf.if`` in ``scf.if`` ...), which
        Triton's own parser and passes handle."""
        pending = [self.body]
        while pending:
            op = pending.pop()
            yield op
            children = [child for region in op.regions for block in region.blocks for child in block.operations]
            pending.extend(reversed(children))   # the first child is popped next

    def ops_named(self, name: str) -> list[Operation]:
        return [op for op in self.walk() if op.name == name]

    # -- module attributes ----------------------------------------------------------------

    def _module_header(self) -> str:
        """The module's attribute dictionary as printed (read once per snapshot)."""
        self._parsed()
        if self._header is None:
            pattern = r"^module attributes \{(.*)\} \{$"
            # MLIR's print of the unchanged module has the same header line (its locations
            # follow the closing brace): no need to print the module again.
            source = self._printed_source if not self._changed else None
            m = re.search(pattern, source, flags=re.M) if source is not None else None
            if m is None:
                m = re.search(pattern, self.print(), flags=re.M)
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
        it: ``"warp"``, ``#ttg.linear<...>``, ``[#a, #b]``), replacing one of that name the op
        has (a pass run again on its own output).  Takes effect at :meth:`commit`; an invalid
        attribute is reported there, with Triton's diagnostic."""
        self._parsed()
        self._must_own("set an attribute")
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

    def _must_own(self, what: str) -> None:
        """Refuse an edit of a read-only snapshot's module (see :func:`snapshot_of`)."""
        if not self._marked:
            raise IRError(f"{self.filename}: internal error: cannot {what} in a read-only snapshot "
                          "(parse_module makes a module of its own)")

    def _text_with_edits(self, debuginfo: bool = True) -> str:
        """The printed module with pending attributes in place of the markers (and no markers)."""
        self._parsed()
        if not self._marked:   # nothing to replace; Triton's own print when it is at hand
            if debuginfo and self._printed_source is not None:
                return self._printed_source
            return str(self._handle) if debuginfo else self._handle.str_nodebug()
        text = str(self._handle) if debuginfo else self._handle.str_nodebug()
        # Locations that Triton took from our temporary file name point at the user's file.
        text = text.replace(f'"{self._temp_path}"', mlir_string_literal(self.filename))
        text = replace_markers(text, self._pending)
        for symbol, attrs in self._pending_func.items():
            text = add_function_attributes(text, symbol, attrs)
        return text

    def commit(self) -> None:
        """Apply pending attribute edits: print, substitute, re-parse (which validates them)."""
        if self.has_pending_edits:
            self._reparse(self._text_with_edits())

    @property
    def has_rewrites(self) -> bool:
        """Whether the module differs from the text it was parsed from: an edit was committed,
        the text rewritten, Triton's passes run, or attributes are pending."""
        return self._changed or self.has_pending_edits

    def _reparse(self, text: str) -> None:
        self._changed = True
        self._marked = True     # a module of its own from here on
        # Our own edits are checked by a safe parse too: a bad attribute must not crash ll-opt.
        handle, ctx, temp_path = parse_handle(text, self.filename, 1, safe=self.safe)
        self._handle, self._ctx, self._temp_path = handle, ctx, temp_path
        self._pending, self._pending_func = {}, {}
        self._build()

    def rewrite_text(self, transform: Callable[[str], str]) -> None:
        """The general edit: ``transform`` gets the printed module (with locations, without
        markers) and returns new module text, which becomes this module.  The text is parsed
        (and so checked) when the module is next used: by the next pass, or when it is
        printed; :meth:`text_for_triton` hands it to Triton's own parser instead."""
        self._unparsed = transform(self._text_with_edits())
        self._changed = True
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
        self._must_own("replace uses")
        old._handle.replace_all_uses_with(new._handle)
        self.commit_structure()

    def commit_structure(self) -> None:
        """Rebuild the snapshot after an edit made through the bindings."""
        self._reparse(self._text_with_edits())

    def _run_triton_passes(self, *adders) -> None:
        ir = bindings()
        # Markers would keep CSE from merging ops (their values differ): strip them first.
        handle, ctx, temp_path = parse_handle(self._text_with_edits(), self.filename, 1, safe=self.safe)
        self._handle, self._ctx, self._temp_path = handle, ctx, temp_path
        self._changed = True
        self._marked = True     # a module of its own from here on
        self._pending, self._pending_func = {}, {}
        pm = ir.pass_manager(self._ctx)
        for add in adders:
            add(pm)
        with CapturedStderr() as captured:
            try:
                try:
                    pm.run(self._handle, "ll-opt")   # 3.9: run(module, name)
                except TypeError:
                    pm.run(self._handle)             # 3.6: run(module)
                failed = False
            except RuntimeError:
                failed = True
        if failed:
            raise IRError(rewrite_diagnostics(captured.text, self._temp_path, self.filename)
                          or f"{self.filename}: error: Triton's pass pipeline failed")
        self._build()

    def run_triton_passes(self, *adders) -> None:
        """Run Triton's passes (each ``add(pass_manager)``, e.g. ``passes.gluon.add_inliner``)
        over the module; their failure is an :class:`IRError` with Triton's diagnostics."""
        self._run_triton_passes(*adders)

    def canonicalize(self) -> None:
        """Run Triton's canonicalizer (folds no-op conversions, erases dead pure ops)."""
        from triton._C.libtriton import passes
        self._run_triton_passes(passes.common.add_canonicalizer)

    def cse(self) -> None:
        from triton._C.libtriton import passes
        self._run_triton_passes(passes.common.add_cse)

    def canonicalize_and_cse(self) -> None:
        """Both, in one pass manager: one print and one parse where two runs take two of each."""
        from triton._C.libtriton import passes
        self._run_triton_passes(passes.common.add_canonicalizer, passes.common.add_cse)

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
