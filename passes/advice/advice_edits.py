"""The edit ``ll-apply-advice`` makes for a set of findings, as an author would make it (the
steps of :mod:`.apply_advice`'s docstring): :func:`advised_module` gives the module with them
applied.  The advice prices each finding with this very edit (``layout_advice``), and the pass
applies it (``apply_advice``), so what the report says of a finding is what applying it does.

Round trips (each print or parse of a large kernel costs milliseconds).  A trial (one set of
findings as one edit) takes one parse and one print, and a round asks for each distinct trial
once (:class:`Trials`):

* the edits are text (Triton's bindings create no ops and change no types), recorded on the
  module's objects too (:class:`_Mirror`, :mod:`..ir.edited_snapshot`): the module the edited
  text stands for is built in Python, rematerialization reads it and adds its edits to the same
  text, and that text is parsed once.  The conversions the edits write carry the location a
  parse would give them (:func:`_located`), so nothing is located in a temporary file and no
  print is needed to read the lines;
* the parsed trial is canonicalized and CSE'd as it is, then printed once to be priced
  (forced: the price is that of the module Triton's canonicalizer makes -- it folds the
  conversions an edit makes redundant, erases the index arithmetic rematerialization left
  dead, and folds what Gluon's own canonicalizer leaves in the kernel as written -- which only
  running it tells, and reading that module takes its text: the bindings read no attribute as
  text and no function argument's ``tt.divisibility``, which the pointer analysis needs);
* the trial a round keeps is the very module priced, handed on as it is.

Where an edit has no counterpart on the objects (an op that reads one value twice) or the built
module does not line up with its text, the edited text is parsed and rematerialization reads
that module: one parse more."""

from __future__ import annotations

import re
from math import prod
from typing import Optional

from ...dialect.attributes import BlockedEncoding
from ...dialect.linear_layout import LayoutError
from ...lowering.target import Target
from ..assign.layout_costs import conversion_cost
from ..assign.backend_requirements import layout_problem, requirement_facts
from ..assign.layout_rules import encoding_of, global_access
from ..assign.layout_seeds import blocked_encoding
from ..ir.diagnostics import IRError
from ..ir.module_lines import ModuleLines, TextMismatch
from ..assign.pointer_contiguity import PointerAnalysis, pointee_bytes
from ..gluon.rematerialize import rematerialize_conversions, rematerialized
from ..ir.edited_snapshot import SnapshotEditor
from ..ir.op_locations import users_of
from ..ir.snapshot import Module, Operation, Value, ops_under, parse_module
from ..ir.text_edits import mlir_string_literal
from ..gluon.kernel_price import kernel_price
from .epilogue_edit import epilogue_trial
from .findings import EPILOGUE_STORE, SHARED_ACCESS, Finding, access_cost, gluon_expression, has_copies, op_keys

_MEMDESC_ENCODING = r"(!ttg\.memdesc<[^,>]*, ){old}"


def advised_module(module: Module, text: str, findings: list[Finding], target: Target,
                   edits: "list[str] | None" = None) -> Module:
    """A new module: ``module`` (printed as ``text``, with debug info) with ``findings`` applied
    as one round of ``ll-apply-advice`` applies them (steps 1-3 of the module docstring, then
    index arithmetic recomputed, canonicalized and CSE'd).  The advice prices each finding on
    this (``layout_advice``), so what it reports is what applying it does.  Epilogue-store
    findings are applied last, on that module (:func:`.epilogue_edit.epilogue_trial`)."""
    edits = [] if edits is None else edits
    layouts, stores = _split(findings)
    edited, built = _edited_and_built(module, text, layouts, target, edits)
    trial = _parsed_trial(module, edited, built)
    return epilogue_trial(trial, stores, target, edits) if stores else trial


def _split(findings: list[Finding]) -> tuple[list[Finding], list[tuple]]:
    """(the findings edited as layouts, (op key, location) of the stores an epilogue-store
    finding converts before: those stores' own global-access findings give way to it)."""
    stores = sorted({(f.op_key, f.location) for f in findings if f.kind == EPILOGUE_STORE})
    converted = {key for key, _ in stores}
    return [f for f in findings if f.kind != EPILOGUE_STORE and f.op_key not in converted], stores


def _edited_and_built(module: Module, text: str, findings: list[Finding], target: Target, edits: list[str]):
    """(:func:`edited_text`, the module it parses to built in Python from ``module`` and the
    edits (:mod:`..ir.edited_snapshot`), or None where an edit has no counterpart there)."""
    editor = SnapshotEditor(module)
    start = len(edits)
    try:
        edited = _located(_one_round(module, text, findings, target, edits, editor), module.filename)
        return edited, editor.build(edited)
    except TextMismatch:
        del edits[start:]
        return edited_text(module, text, findings, target, edits), None


def _parsed_trial(module: Module, edited: str, built: Optional[Module]) -> Module:
    """``edited`` (an :func:`edited_text` of ``module``) as the trial module, parsed once,
    without markers, into the module's context, canonicalized and CSE'd as it is (no copy).
    Index arithmetic is recomputed (``passes.gluon.rematerialize``) on ``built``, the module
    ``edited`` stands for, before the parse: its edits go into the one text parsed.  Where
    there is no ``built`` or its lines do not line up, on the parsed module, read with
    ``edited`` (every line located: no print), whose edits take a parse more."""
    done, final = rematerialized(built, edited) if built is not None else (None, edited)
    trial = parse_module(final, module.filename, safe=module.safe, context=module.context, marked=False)
    if done is None:
        rematerialize_conversions(trial, edited)
    trial.canonicalize()
    trial.cse()
    return trial


class Trials:
    """The trial modules of one round of ``ll-apply-advice`` on ``module`` (printed as ``text``),
    each priced (:func:`.kernel_price.kernel_price`): one parse and one print per distinct
    edited text, however often the round asks for it.  The advice prices each finding alone
    (``layout_advice``), then the round tries them all at once, else each alone again
    (``apply_advice``): with one finding, or on a fallback, the same text comes back, and its
    module and price are taken as they were made (the same text parses to the same module).
    A trial whose text does not read back raises the same error each time it is asked for.
    ``module`` is not to change while the round lasts."""

    def __init__(self, module: Module, text: str, target: Target):
        self.module, self.text, self.target = module, text, target
        self._by_text: dict = {}        # edited text -> (trial, its price) or the error it raised

    def priced(self, findings: list[Finding], edits: "list[str] | None" = None):
        """(trial module, its :class:`~.kernel_price.KernelPrice`) of ``findings`` as one edit
        (:func:`advised_module`); ``edits`` gets the edits' descriptions, as there."""
        edits = [] if edits is None else edits
        layouts, stores = _split(findings)
        edited, built = _edited_and_built(self.module, self.text, layouts, self.target, edits)
        key = (edited, tuple(stores))
        if key not in self._by_text:
            said: list[str] = []
            try:
                trial = _parsed_trial(self.module, edited, built)
                if stores:
                    trial = epilogue_trial(trial, stores, self.target, said)
                self._by_text[key] = (trial, kernel_price(trial, self.target), said)
            except (TextMismatch, IRError, LayoutError) as error:
                self._by_text[key] = error
        made = self._by_text[key]
        if isinstance(made, Exception):
            raise made
        edits += made[2]
        return made[:2]


def edited_text(module: Module, text: str, findings: list[Finding], target: Target, edits: list[str]) -> str:
    """The text :func:`advised_module` parses: ``text`` with one round of edits, every line
    written for them located (:func:`_located`)."""
    return _located(_one_round(module, text, findings, target, edits), module.filename)


# A conversion line ``_give_own_layout`` writes: the operand into the op's own layout
# (``%ll_adviceN_P = ttg.convert_layout ...``) or the result back (``... %ll_adviceN_r ...``).
_WRITTEN_CONVERSION = re.compile(r"^(\s*%[\w$.#-]+ = )ttg\.convert_layout (%ll_advice\d+_r\b|)")
_OWN_OPERAND = re.compile(r"^\s*%ll_advice\d+_\d+ = ")


def _located(text: str, filename: str) -> str:
    """``text`` with each conversion line the edits wrote (they print no ``loc(...)``) located
    where parsing ``text`` would place it, in ``filename``: its line and the column of its op
    name, as MLIR locates an op of a custom form (``"<filename>":line:col``).  Why: an op parsed
    from a line without a location is located in the temporary file the text is parsed from,
    and reading the module's lines then takes a print of it (``has_temporary_locations``); the
    location written here is the one that print gives the op, so the kernel is the same.
    Example: line 12 ``    %ll_advice1_0 = ttg.convert_layout ...`` gets
    ``loc("<kernel>":12:21)``."""
    name = mlir_string_literal(filename)
    out = text.split("\n")
    for number, line in enumerate(out):
        m = _WRITTEN_CONVERSION.match(line)
        if m is None or " loc(" in line or not (m.group(2) or _OWN_OPERAND.match(line)):
            continue
        out[number] = f"{line} loc({name}:{number + 1}:{len(m.group(1)) + 1})"
    return "\n".join(out)


def _one_round(module: Module, text: str, findings: list[Finding], target: Target, edits: list[str],
               editor: Optional[SnapshotEditor] = None) -> str:
    """The module text with one round of edits (steps 1-3 of the module docstring); ``editor``:
    the same edits recorded on the module's objects too (:func:`_edited_and_built`)."""
    findings = _split(findings)[0]      # (an epilogue store's edit is made on the trial: advised_module)
    lines = ModuleLines(module, text)
    keys = op_keys(module)
    ops = {keys[id(op)]: op for op in module.walk()}
    by_op = {f.op_key: f for f in sorted(findings, key=lambda f: f.gain)}      # the larger gain wins
    variable = _variable_choices(by_op, ops)
    for layout in _breaking_requirements(variable, module, lines):
        del variable[layout]        # its loads and stores get their own layouts instead (below)
    own: dict[tuple, str] = {}          # op key -> the layout it gets of its own (step 2)
    pointers = {}
    for key, op in ops.items():
        if op.name not in ("tt.load", "tt.store") or op.operands[0].tensor_type is None:
            continue
        layout = op.operands[0].tensor_type.encoding
        finding = by_op.get(key)
        if layout in variable:
            chosen = variable[layout]
            if finding is not None and finding.layout != chosen and finding.kind != SHARED_ACCESS:
                own[key] = finding.layout
            elif finding is None and _costlier(op, layout, chosen, module, lines, pointers, target):
                own[key] = layout
        elif finding is not None and finding.kind != SHARED_ACCESS:
            own[key] = finding.layout
    for key, layout in list(own.items()):
        if layout != ops[key].operands[0].tensor_type.encoding:      # a suggestion, not the author's kept layout
            old = ops[key].operands[0].tensor_type.encoding
            own[key] = _cheapest_to_convert(ops[key], layout, variable.get(old, old), module, lines, pointers, target)
    for layout, chosen in variable.items():
        gain = max(f.gain for f in by_op.values() if f.layout == chosen)
        edits.append(f"layout {_short(layout)} -> {_short(chosen)} (the variable; modelled {gain:.2f}x)")
    pattern = re.compile("|".join(re.escape(layout) for layout in sorted(variable, key=len, reverse=True))) \
        if variable else None
    kept = {layout for layout in own.values()}
    mirror = _Mirror(editor, module, pattern, variable, kept) if editor is not None else None
    for key, layout in own.items():
        _give_own_layout(lines, ops[key], layout, len(edits), mirror)
        where = by_op[key].location if key in by_op else ops[key].location
        edits.append(f"{key[0]} #{key[1]} at {where}: its own layout {_short(layout)}")
    for f in by_op.values():
        if f.kind == SHARED_ACCESS:
            _swizzle_buffer(lines, ops[f.op_key], module, f.layout, mirror)
            edits.append(f"buffer at {f.location}: {f.suggestion}")
    new_text = lines.text()
    if variable:
        new_text = _substitute_outside(new_text, pattern, variable, kept)
    if mirror is not None:
        mirror.substitute_all()
    return new_text


class _Mirror:
    """The edits of :func:`_one_round` on the module's objects (a :class:`SnapshotEditor`), call
    for call beside the text edits: the conversions :func:`_give_own_layout` writes, the operands
    it renames, the types it and :func:`_swizzle_buffer` change, and last the variable's
    substitution (:func:`_substitute_outside`) on every value's type, with the same protection
    of the kept layouts on the types the lines written for an own op print.  Where an edit of
    the text has no exact counterpart here (an op reading one value twice: the text renames
    one occurrence per conversion), :class:`TextMismatch`, and the trial is parsed to be read
    instead."""

    def __init__(self, editor: SnapshotEditor, module: Module, pattern, variable: dict, kept: set):
        self.editor, self.module, self.pattern, self.variable = editor, module, pattern, variable
        self.protected = {layout: _KEPT.format(i) for i, layout in enumerate(sorted(kept))}
        self.final: set[int] = set()          # ids of values whose type is final already
        self.inserted: list[Value] = []       # the conversions written, in order
        self.back: dict[int, Value] = {}      # id(own load's result) -> the conversion back
        self._users = None

    def final_type(self, type_text: str, protect: bool) -> str:
        """``type_text`` as the variable's substitution leaves it; ``protect``: printed on a line
        written for an own op, where the kept layouts stay."""
        if self.pattern is None:
            return type_text
        if protect:
            for layout, mark in self.protected.items():
                type_text = type_text.replace(layout, mark)
        type_text = self.pattern.sub(lambda m: self.variable[m.group(0)], type_text)
        for layout, mark in self.protected.items():
            type_text = type_text.replace(mark, layout)
        return type_text

    def users(self, value: Value) -> list:
        if self._users is None:
            self._users = users_of(self.module)
        return self._users.get(id(value), [])

    def convert(self, value: Value, result_type: str, protect: bool) -> Value:
        """A conversion written right after ``value``'s definition, reading what the name
        ``value`` prints reads by then (an own load's result: the conversion back)."""
        converted = self.editor.insert_after_definition(value, "ttg.convert_layout", [self.back.get(id(value), value)],
                                                        self.final_type(result_type, protect), _WRITTEN_AT)
        self.inserted.append(converted)
        return converted

    def substitute_all(self) -> None:
        """The variable's substitution on every value of the module not given its final type."""
        for op in self.module.walk():
            values = list(op.results) + [a for region in op.regions for block in region.blocks
                                         for a in block.arguments]
            for value in values:
                if id(value) not in self.final:
                    self.editor.retype(value, self.final_type(self.editor.type_of(value), False))


def _variable_choices(by_op: dict, ops: dict) -> dict[str, str]:
    """Blocked layout -> the suggestion that replaces it everywhere: the largest-gain suggestion
    among the loads and stores (and replicated values) laid out in it directly."""
    best: dict[str, Finding] = {}
    for key, f in by_op.items():
        op = ops[key]
        if f.kind == SHARED_ACCESS or op.name not in ("tt.load", "tt.store"):
            continue
        layout = op.operands[0].tensor_type.encoding
        if layout is None or not layout.startswith("#ttg.blocked"):
            continue
        if layout not in best or f.gain > best[layout].gain:
            best[layout] = f
    return {layout: f.layout for layout, f in best.items() if f.layout != layout}


def _breaking_requirements(variable: dict[str, str], module: Module, lines: ModuleLines) -> list[str]:
    """The layouts of ``variable`` whose replacement the backend would reject: an op it requires
    something of, laid out in one, would break the requirement in its replacement
    (:mod:`..assign.backend_requirements`: a ``cp.async`` copying under 4 bytes a thread, an AMD
    direct-to-LDS load -- ``ttg.async_copy_global_to_local`` or ``amdg.buffer_load_to_local``
    -- of a width the target lacks, a packed f16 / bf16 buffer atomic updating one element at a
    time).  Such a layout stays; the advised loads and stores in it take their suggestions as
    layouts of their own."""
    broken = []
    for function in [op for op in module.walk() if op.name in ("tt.func", "func.func")]:
        pointers = PointerAnalysis.of_function(lines, function)
        for op in ops_under(function):
            facts = requirement_facts(op, pointers)
            layout = encoding_of(global_access(op).addresses) if facts is not None else None
            if layout in variable and layout not in broken and layout_problem(variable[layout], facts) is not None:
                broken.append(layout)
    return broken


def _costlier(op: Operation, layout: str, chosen: str, module: Module, lines: ModuleLines, pointers: dict,
              target: Target) -> bool:
    """Whether the load or store ``op`` would cost more in ``chosen`` than in ``layout``."""
    price = _access_pricer(op, lines, pointers, target)
    return price is not None and price(chosen) > price(layout)


def _access_pricer(op: Operation, lines: ModuleLines, pointers: dict, target: Target):
    """layout -> the cost of the load or store ``op`` in it (its pointers' contiguity read once);
    None where the contiguity is unknown."""
    function = op.parent_op
    while function is not None and function.name not in ("tt.func", "func.func"):
        function = function.parent_op
    if function is None:
        return None
    if id(function) not in pointers:
        pointers[id(function)] = PointerAnalysis.of_function(lines, function)
    contiguity = pointers[id(function)].contiguity(op.operands[0])
    if contiguity is None:
        return None
    tensor = op.operands[0].tensor_type
    bits = 8 * pointee_bytes(tensor.element_type)
    shape = tuple(tensor.shape)
    return lambda layout: access_cost(layout, shape, bits, contiguity.dim, contiguity.vector, target)


def _cheapest_to_convert(op: Operation, layout: str, other: str, module: Module, lines: ModuleLines,
                         pointers: dict, target: Target) -> str:
    """The layout a load or store given its own ``layout`` gets: of ``layout`` and its lane
    variants (``_lane_variants``) that access memory at no higher cost, the one whose data
    converts to or from ``other`` (the rest of the kernel's layout) cheapest; ``layout`` on a tie.
    Why: equally coalesced layouts can differ in the conversion.  A 64x64 f32 transpose loaded in
    ``[1, 4], [2, 16], [4, 1]`` and stored in ``[4, 1], [16, 2], [1, 4]`` shares no register bit
    between the two, so its trip through shared memory is 4-byte accesses; the load's lanes split
    ``[8, 4]`` instead (16-byte rows of 64 bytes: the same sectors) share two register bits with
    the store's, and both sides move 16 bytes per access, as the expert's ``[4, 8]``/``[8, 4]`` pair."""
    price = _access_pricer(op, lines, pointers, target)
    data = op.results[0] if op.name == "tt.load" else op.operands[1] if len(op.operands) > 1 else None
    if price is None or data is None or data.tensor_type is None or other == layout:
        return layout
    shape, bits = tuple(data.tensor_type.shape), data.tensor_type.element.logical_bits
    limit = price(layout)

    def converting(candidate: str) -> float:
        if op.name == "tt.load":
            return conversion_cost(candidate, other, shape, bits, target)
        return conversion_cost(other, candidate, shape, bits, target)
    best, best_cost = layout, converting(layout)
    for candidate in _lane_variants(layout, shape):
        try:
            if price(candidate) > limit:
                continue
            cost = converting(candidate)
        except LayoutError:
            continue
        if cost < best_cost:
            best, best_cost = candidate, cost
    return best


def _lane_variants(encoding: str, shape: tuple) -> list[str]:
    """``encoding`` (a blocked layout) with its lanes dealt otherwise over the dims (powers of
    two, the same count), elements per thread, warps and order kept; those that hold no element
    twice.  Example: ``[1, 4], [2, 16], [4, 1]`` on 64x64 -> lanes ``[4, 8]``, ``[8, 4]``,
    ``[16, 2]`` (``[1, 32]`` tiles 128 columns, ``[32, 1]`` with 4 warps 128 rows: copies)."""
    attr = blocked_encoding(encoding)
    if attr is None:
        return []
    lanes = prod(attr.threads_per_warp)
    out = []
    for split in _power_splits(lanes, attr.rank):
        if list(split) == list(attr.threads_per_warp):
            continue
        text = str(BlockedEncoding(list(attr.size_per_thread), list(split), list(attr.warps_per_cta), list(attr.order)))
        try:
            if not has_copies(text, shape):
                out.append(text)
        except LayoutError:
            continue
    return out


def _power_splits(total: int, rank: int) -> list[tuple]:
    """Every way to write ``total`` (a power of two) as a product of ``rank`` powers of two."""
    if rank == 1:
        return [(total,)]
    out, first = [], 1
    while first <= total:
        out += [(first,) + rest for rest in _power_splits(total // first, rank - 1)]
        first *= 2
    return out


def _tensor_type(value, encoding: str) -> str:
    tensor = value.tensor_type
    return f"tensor<{'x'.join(map(str, tensor.shape))}x{tensor.element_type}, {encoding}>"


# The location the mirror gives a conversion it records (never read: the text the trial is
# parsed from locates it, ``_located``).
_WRITTEN_AT = "unknown"

# An op that keeps a layout the variable's edit replaces prints it as this placeholder until the
# edit is done (the edit is a text substitution of the old layout).
_KEPT = "#ll_kept_layout_{}"


def _give_own_layout(lines: ModuleLines, op: Operation, layout: str, number: int,
                     mirror: Optional[_Mirror] = None) -> None:
    """``op`` (a load or store) in ``layout``: its tensor operands converted to it right after
    they are defined, its result (a load's) converted back right after it (``mirror``: the same
    on the module's objects)."""
    header_index = lines.of[id(op)].header
    header = lines.lines[header_index]
    old = op.operands[0].tensor_type.encoding
    tensors = [operand for operand in op.operands if operand.tensor_type is not None]
    if mirror is not None and len({id(operand) for operand in tensors}) < len(tensors):
        raise TextMismatch(f"{op.name}: reads one value twice")
    for position, operand in enumerate(op.operands):
        if operand.tensor_type is None:
            continue
        name = lines.name_of(operand)
        new_name = f"%ll_advice{number}_{position}"
        lines.insert_after_definition(operand, f"{new_name} = ttg.convert_layout {name} : "
                                               f"{_tensor_type(operand, operand.tensor_type.encoding)} -> "
                                               f"{_tensor_type(operand, layout)}")
        header = re.sub(re.escape(name) + r"(?![\w$.#-])", new_name, header, count=1)
        if mirror is not None:
            mirror.editor.replace_operand(op, operand, mirror.convert(operand, _tensor_type(operand, layout), True))
    head, colon, types = header.rpartition(" : ")
    header = head + colon + types.replace(old, layout)
    if op.results:
        result = op.results[0]
        name = lines.name_of(result)
        loaded = f"%ll_advice{number}_r"
        header = re.sub(r"^(\s*)" + re.escape(name) + " =", r"\1" + loaded + " =", header)
        lines.insert_after_definition(result, f"{name} = ttg.convert_layout {loaded} : {_tensor_type(result, layout)}"
                                              f" -> {_tensor_type(result, result.tensor_type.encoding)}")
        if mirror is not None:
            # the load's result in its own layout; its readers read the conversion back (which
            # takes the result's name), the conversions written before it included
            readers = list(mirror.users(result)) + [v.owner for v in mirror.inserted if result in v.owner.operands]
            mirror.editor.retype(result, mirror.final_type(_tensor_type(result, layout), True))
            mirror.final.add(id(result))
            back = mirror.convert(result, _tensor_type(result, result.tensor_type.encoding), False)
            mirror.back[id(result)] = back
            for reader in readers:
                mirror.editor.replace_operand(reader, result, back)
    lines.lines[header_index] = header


def _swizzle_buffer(lines: ModuleLines, alloc: Operation, module: Module, layout: str,
                    mirror: Optional[_Mirror] = None) -> None:
    """The buffer of ``alloc`` in the shared ``layout``: its allocation and every access (the
    lines that print the buffer's type; ``mirror``: the buffer retyped)."""
    old = alloc.results[0].tensor_type.encoding
    pattern = re.compile(_MEMDESC_ENCODING.format(old=re.escape(old)))
    for op in [alloc] + list(users_of(module).get(id(alloc.results[0]), ())):
        index = lines.of[id(op)].header
        lines.lines[index] = pattern.sub(lambda m: m.group(1) + layout, lines.lines[index])
    if mirror is not None:
        buffer = alloc.results[0]
        mirror.editor.retype(buffer, pattern.sub(lambda m: m.group(1) + layout, mirror.editor.type_of(buffer)))


def _substitute_outside(text: str, pattern: "re.Pattern", variable: dict, kept: set) -> str:
    """Every layout of ``variable`` replaced by its choice, except inside the conversions and
    ops written by :func:`_give_own_layout` for ops that keep the old layout: those lines are
    protected by a placeholder first."""
    protected = {layout: _KEPT.format(i) for i, layout in enumerate(sorted(kept))}
    out = []
    for line in text.split("\n"):
        if "%ll_advice" in line and kept:
            for layout, mark in protected.items():
                line = _protect_own(line, layout, mark)
        out.append(line)
    text = pattern.sub(lambda m: variable[m.group(0)], "\n".join(out))
    for layout, mark in protected.items():
        text = text.replace(mark, layout)
    return text


def _protect_own(line: str, layout: str, mark: str) -> str:
    """In a line written for an op that keeps ``layout``: the types that are that op's own
    (the op's types, a conversion's result side into it, a conversion's source side out of it)."""
    head, colon, types = line.rpartition(" : ")
    if not colon:
        return line
    if " -> " in types and "ttg.convert_layout" in head:
        left, arrow, right = types.partition(" -> ")
        if re.search(r"%ll_advice\d+_r\b", head):          # the result back: from the op's layout
            return head + colon + left.replace(layout, mark) + arrow + right
        return head + colon + left + arrow + right.replace(layout, mark)   # an operand into it
    return head + colon + types.replace(layout, mark)


def _short(layout: str) -> str:
    return gluon_expression(layout) if layout.startswith("#ttg.blocked") else layout
