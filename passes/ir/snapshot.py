"""A TTGIR module as a Python snapshot over a Triton module handle: :class:`Module` with its
:class:`Operation`, :class:`Region`, :class:`Block` and :class:`Value` objects, and its edits.

* :func:`parse_module` turns module text into a :class:`Module` (see :mod:`.parsing`: a
  malformed module is first parsed in a forked child, and Triton's diagnostics become the
  :class:`~.diagnostics.IRError` message);
* :class:`Value` gives its type text and parsed :class:`~.types.TensorType`, its defining op
  or owning block;
* edits: :meth:`Module.set_attribute` (attribute text, exactly as MLIR prints it, committed
  through :mod:`.text_edits`), :meth:`Module.replace_all_uses_with`,
  :meth:`Module.rewrite_text` / :meth:`Module.replace_text` (the general way: edit the printed
  module and re-parse it), :meth:`Module.copy_location`, :meth:`Module.canonicalize` /
  :meth:`Module.cse`;
* :meth:`Module.print` gives the text back (without locations unless asked for);
  :meth:`Module.handle_for` the module as a Triton module, for the drop-in to hand back.

Round trips (print, edit, parse) are what the edits cost: a module is printed at most once
while it does not change (the print is kept), its module attributes are read from the text it
was parsed from, a text edit is parsed once when the module is next used, and a module parsed
with ``marked=False`` runs Triton's passes as it is and can be handed to Triton without a
print and a parse more (``test/unit/passes/gluon/test_stage_round_trips.py`` counts them).
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Optional

from .bindings import bindings
from .diagnostics import CapturedStderr, IRError, location_text, rewrite_diagnostics
from .parsing import parse_handle, reject_reserved_attributes
from .text_edits import MARKER, add_function_attributes, mlir_string_literal, printed_symbol, replace_markers
from .operations import (Block, Operation, Region, Value, functions_with_bodies, in_loop,  # noqa: F401
                         ops_under)  # (the snapshot's API)
from .types import alias_pattern

def parse_module(text: str, filename: str = "<stdin>", first_line: int = 1, safe: bool = True,
                 context=None, printed: bool = False, marked: bool = True) -> "Module":
    """Parse TTGIR module text.  ``filename`` and ``first_line`` (where the text starts in that
    file, for ``--split-input-file`` chunks) make locations and diagnostics point at the
    user's file.  ``context``: a Triton MLIR context to parse into (the drop-in passes its
    compilation's; default: a fresh one).  ``printed``: the text is MLIR's own print of a
    module (the drop-in's input), so the module's attributes can be read from it without
    printing the module again.  ``marked=False``: no marker attribute on the ops until an
    attribute edit needs them (:meth:`Module.set_attribute`), so that Triton's passes run on the
    parsed module as it is and the module can be handed to Triton (:meth:`Module.handle_for`)
    without a print and a parse more.  Raises :class:`IRError` with Triton's diagnostics on
    failure."""
    reject_reserved_attributes(text, filename, first_line)
    handle, ctx, temp_path = parse_handle(text, filename, first_line, safe, context)
    module = Module(handle, ctx, filename, temp_path, safe=safe, marked=marked, own=True)
    if printed:
        module._printed_source = module._source = text
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
    module = Module(handle, getattr(handle, "context", None), filename, "", safe=False, marked=False, own=False)
    module._printed_source = text
    module._source = text
    return module


def inline_calls_in_place(handle) -> bool:
    """Run Gluon's inliner (``gluon-inline``) on a module Triton holds, in place, where it has a
    ``tt.call``; whether it had one.  For the drop-in's Gluon ``ttgir`` stage only: that stage's
    own first pass is this inliner on this very module (Triton 3.6 and 3.9, NVIDIA and AMD), so
    the stage, ours or Triton's on a fallback, sees what it would have made itself, and the
    resolution gets a module without calls to print once (no copy parsed to inline, no print of
    the copy).  The inliner's failure is a RuntimeError, as in Triton's own stage."""
    names: list[str] = []
    handle.walk(lambda op: names.append(op.get_name()))
    if "tt.call" not in names:
        return False
    from triton._C.libtriton import passes
    pm = bindings().pass_manager(handle.context)
    passes.gluon.add_inliner(pm)
    try:
        pm.run(handle, "gluon-inline")   # 3.9: run(module, name)
    except TypeError:
        pm.run(handle)                   # 3.6: run(module)
    return True


def built_snapshot(root: Operation, text: str, filename: str, temporary_locations: bool = False) -> "Module":
    """A read-only snapshot over ops built in Python (``root``: the ``builtin.module`` op; see
    :mod:`.edited_snapshot`), ``text`` the module text they stand for: no Triton handle, so it
    is walked and read with ``text`` (``ModuleLines(module, text)``, the module attributes), and
    :meth:`Module.print` with locations gives ``text``; anything else that needs a module of
    Triton's (a print without locations, a pass, an edit) is an internal error.
    ``temporary_locations``: an op's line prints no location (see
    :attr:`Module.has_temporary_locations`)."""
    module = Module.__new__(Module)
    module._handle, module._ctx, module.filename, module._temp_path = None, None, filename, ""
    module._marked = module._marks_on_parse = module._own = module.safe = False
    module._pending, module._pending_func, module._unparsed, module._changed = {}, {}, None, False
    module._printed_source = module._source = text
    module._temp_locations = temporary_locations
    postorder: list[Operation] = []
    pending = [(root, False)]
    while pending:                          # children before their op, the ops of a block in order
        op, children_done = pending.pop()
        if children_done:
            postorder.append(op)
            continue
        pending.append((op, True))
        pending.extend((child, False) for region in reversed(op.regions) for block in reversed(region.blocks)
                       for child in reversed(block.operations))
    module._ops_postorder = postorder
    module._printed_with_locations, module._header, module._prints = None, None, {}
    return module


# --------------------------------------------------------------------------- the module

class Module:
    """A TTGIR module: a Python snapshot of its ops over a Triton module handle."""

    def __init__(self, handle, ctx, filename: str, temp_path: str, safe: bool = True, marked: bool = True,
                 own: bool = True):
        self._handle = handle
        # marked: every op with results carries our marker attribute (for attribute edits).  A
        # read-only snapshot (snapshot_of) has none: it walks a module that is not ours to change
        # (own=False).  A module of its own parsed with marked=False gets its markers when an
        # attribute edit first needs them (_ensure_marked); re-parses keep the choice.
        self._marked = marked
        self._marks_on_parse = marked
        self._own = own
        # safe: every re-parse of our own edits runs first in a forked child (ll-opt).  The
        # drop-in (``passes.drop_in.hook``) parses with safe=False: it runs inside a process that may
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
        # The text the module was last parsed from, where that is MLIR's print or our edit of
        # one: the module attributes are read from it without a print.  None once Triton's
        # passes have run (they may add module attributes).
        self._source: Optional[str] = None
        self._temp_locations = False   # an op's location names the temporary file (see handle_for)
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
        self._temp_locations = False
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
                raw = str(op.results[0]._handle.get_loc())
                if self._temp_path and self._temp_path in raw:
                    self._temp_locations = True
                op._location = location_text(raw, self._temp_path, self.filename)
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
        # print() of the module as it is now, by debuginfo: a module is printed once however
        # often passes read its text (every change of the module rebuilds the snapshot)
        self._prints: dict[bool, str] = {}

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
            # MLIR's print of the unchanged module, or the text it was parsed from (our edits
            # never touch the module's attributes), has the same header line (its locations
            # follow the closing brace): no need to print the module again.
            source = (self._printed_source if not self._changed else self._source) or \
                self._prints.get(True) or self._prints.get(False)
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

    def aliases(self, printed: Optional[str] = None) -> dict[str, str]:
        """Attribute aliases of the printed module, name -> fully expanded text, in print
        order: ``{"#blocked": "#ttg.blocked<{...}>", "#mma": "#ttg.nvidia_mma<{...}>"}``.
        ``printed``: the module as printed, with or without locations, where the caller has it
        (the aliases are read from it, without printing the module again; location aliases,
        ``#loc...``, are not attribute aliases and are left out)."""
        if printed is None:
            self._parsed()
            printed = self._handle.str_nodebug()
        raw = {name: value for name, value in re.findall(r"^(#[\w$.-]+) = (.*)$", printed, flags=re.M)
               if not name.startswith("#loc")}
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
        self._ensure_marked()
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

    def _ensure_marked(self) -> None:
        """Put the marker attribute on every op with results now (a module parsed with
        ``marked=False``): the ops stay as they are, no re-parse."""
        if self._marked:
            return
        builder = bindings().builder(self._ctx)
        for index, op in enumerate(self._ops_postorder):
            if op.results:
                op._marker = index
                op.results[0]._handle.set_attr(MARKER, builder.get_int32_attr(index))
        self._marked = True

    def _must_own(self, what: str) -> None:
        """Refuse an edit of a read-only snapshot's module (see :func:`snapshot_of`)."""
        if not self._own:
            raise IRError(f"{self.filename}: internal error: cannot {what} in a read-only snapshot "
                          "(parse_module makes a module of its own)")

    def _text_with_edits(self, debuginfo: bool = True) -> str:
        """The printed module with pending attributes in place of the markers (and no markers)."""
        self._parsed()
        if not self._own:   # nothing to replace; Triton's own print when it is at hand
            if debuginfo and self._printed_source is not None:
                return self._printed_source
            if self._handle is None:
                raise IRError(f"{self.filename}: internal error: a snapshot built in Python has no print "
                              "without locations")
            return str(self._handle) if debuginfo else self._handle.str_nodebug()
        text = str(self._handle) if debuginfo else self._handle.str_nodebug()
        # Locations that Triton took from our temporary file name point at the user's file.
        if self._temp_path:
            text = text.replace(f'"{self._temp_path}"', mlir_string_literal(self.filename))
        if self._marked:
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
        self._own = True        # a module of its own from here on
        self._marked = self._marks_on_parse
        # Our own edits are checked by a safe parse too: a bad attribute must not crash ll-opt.
        # The module's context is reused (the drop-in's: the compilation's own, where the result
        # is handed back): loading every dialect into a fresh one costs about 2 ms.
        handle, ctx, temp_path = parse_handle(text, self.filename, 1, safe=self.safe, context=self._ctx)
        self._handle, self._ctx, self._temp_path = handle, ctx, temp_path
        self._pending, self._pending_func = {}, {}
        self._source = text
        self._header = None
        self._build()

    def rewrite_text(self, transform: Callable[[str], str]) -> None:
        """The general edit: ``transform`` gets the printed module (with locations, without
        markers) and returns new module text, which becomes this module.  The text is parsed
        (and so checked) when the module is next used: by the next pass, or when it is
        printed; :meth:`text_for_triton` hands it to Triton's own parser instead."""
        self._unparsed = transform(self._text_with_edits())
        self._changed = True
        self._pending, self._pending_func = {}, {}   # they are in the text now

    def replace_text(self, text: str) -> None:
        """The module becomes ``text`` (module text a pass wrote from this module's print, with
        locations), parsed when the module is next used, as after :meth:`rewrite_text`, but
        without printing the module for a transform that does not read it.  Attribute edits
        still pending would be lost: they are refused."""
        if self.has_pending_edits:
            raise IRError(f"{self.filename}: internal error: replace_text with attribute edits pending")
        self._unparsed = text
        self._changed = True

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

    def handle_for(self, context):
        """The module as a Triton module in ``context``, to hand back to Triton's pipeline (the
        drop-in's path): the module's own handle where it can be (a module of its own, parsed
        into that context, with no marker, no pending edit and no location naming our
        temporary file), which saves a print and a parse; else :meth:`text_for_triton` parsed
        into ``context``.  The module is not to be used after."""
        if self._unparsed is None and self._own and not self._marked and not self.has_pending_edits \
                and self._ctx is context and not self._temp_locations:
            return self._handle
        from .parsing import triton_module_from_text
        return triton_module_from_text(self.text_for_triton(), context)

    def copy_location(self, source: Operation, op: Operation) -> None:
        """``op`` takes ``source``'s location (the same location attribute), through the
        bindings: no print, no parse.  Both need results (the bindings reach an op's location
        through its results only)."""
        self._parsed()
        self._must_own("set a location")
        op.results[0]._handle.set_loc(source.results[0]._handle.get_loc())
        op._location = source.location
        self._changed = True
        self._prints = {}
        self._printed_with_locations = None

    def adopt(self, other: "Module") -> None:
        """This module becomes ``other`` (a module of its own parsed from this one's edited text,
        in this module's context: a trial a pass priced and keeps), its handle and snapshot
        taken over as they are: no print and no parse of its text again.  ``other`` is not
        to be used after."""
        other._parsed()
        if not other._own or other._ctx is not self._ctx:
            raise IRError(f"{self.filename}: internal error: adopt a module of another context")
        self._handle, self._ctx, self._temp_path = other._handle, other._ctx, other._temp_path
        self._own, self._marked, self._changed = True, other._marked, True
        self._pending, self._pending_func = other._pending, other._pending_func
        self._unparsed, self._source = None, other._source
        self._ops_postorder, self._temp_locations = other._ops_postorder, other._temp_locations
        self._printed_with_locations, self._header, self._prints = None, None, dict(other._prints)
        for op in self._ops_postorder:
            if op._locate is not None:
                op._locate = self._function_location

    @property
    def has_temporary_locations(self) -> bool:
        """Whether an op's location names the temporary file the module was parsed from: a line
        of the text without ``loc(...)`` (an op a pass wrote).  Its print then says where
        (``"<file>":line:col``), which that text does not: a pass that reads the module's
        lines takes them from the print, not from the text (which then would locate the op
        anew where it is parsed next)."""
        self._parsed()
        return self._temp_locations

    @property
    def context(self):
        """The Triton MLIR context the module lives in (the compilation's, in the drop-in)."""
        return self._ctx

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
        self._parsed()
        if not self._own or self._marked or self.has_pending_edits:
            # A copy of our own first (Triton's module is not ours to change), without markers:
            # they would keep CSE from merging ops (their values differ).  A module of its own
            # with none runs the passes as it is: no print and no parse.
            handle, ctx, temp_path = parse_handle(self._text_with_edits(), self.filename, 1, safe=self.safe,
                                                  context=self._ctx)
            self._handle, self._ctx, self._temp_path = handle, ctx, temp_path
            self._marked = self._marks_on_parse
        self._changed = True
        self._own = True        # a module of its own from here on
        self._source = None     # (the text it was parsed from is not this module any more)
        self._header = None
        self._pending, self._pending_func = {}, {}
        self._prints = {}
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
        if debuginfo not in self._prints:
            self._prints[debuginfo] = self._text_with_edits(debuginfo).rstrip("\n") + "\n"
        return self._prints[debuginfo]

    def __str__(self) -> str:
        return self.print()
