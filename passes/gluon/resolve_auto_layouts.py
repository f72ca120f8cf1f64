"""``ll-resolve-auto-layouts``: Gluon's automatic layouts chosen by modelled cost.

Gluon (``triton.experimental.gluon``) lets an author leave layouts out: ``gl.AutoLayout()``
(``#gluon.auto_encoding``) and ``gl.CoalescedLayout()`` (``#gluon.coalesced_encoding``).
Triton resolves them by propagation alone (``gluon-resolve-auto-encodings``): no cost, a value
no fixed layout reaches is an error ("Failed to infer return type"), and two fixed layouts
meeting at one value are an error ("found conflicting encodings for value").

This pass gives every automatic value a concrete layout, on the TTGIR of Gluon's ``ttgir``
stage before Triton's resolution (after ``gluon-inline``, which it runs where a call takes
automatic layouts):

1. a first legal layout for every automatic value (:mod:`.auto_seeds`): the author's layouts
   spread through the ops, loads and stores not reached get the coalesced layout their pointers
   allow, the rest one element per thread; ``set_auto_layout`` becomes ``ttg.convert_layout``
   and every conflict a conversion;
2. the assignment of ``ll-assign-layouts`` over that module (:mod:`.layout_graph`: the same
   rules, candidates, costs and solver; loads, stores and reductions may change layout), with
   every op the author laid out pinned to its layout: the solver picks each automatic value's
   layout and where each conversion runs (once, outside a loop, where that is cheapest), each
   conversion priced as the rewrites after the choice emit it (:mod:`.priced_as_emitted`);
3. the module rewritten; conversions of index arithmetic recomputed in the layout they are
   needed in instead (:mod:`.rematerialize`), then canonicalized (no-op conversions fold away).

Every conversion left is an ordinary ``ttg.convert_layout``: ``ll-lower-conversions`` plans,
verifies and simulates it like any other.  Remarks give, per group of tied automatic values,
the layout it got and why, and the function's modelled cost against Triton's own resolution
(run on a copy in a subprocess: it may abort) where that succeeds.

Example (a copy written with no layout, 128 x f32, 4 warps): Triton fails ("'tt.make_range'
op Failed to infer return type"); this pass gives the load, the store and the index vector
``#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>``
(16-byte accesses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ...lowering.target import Target, UnknownTarget
from ..assign.assign_layouts import make_costs, rewrite
from ..assign.layout_rules import SHAPE_KINDS
from .auto_seeds import AUTO_ENCODINGS, SET_AUTO_LAYOUT, Seeding, Unresolvable, is_auto, seed_layouts, touches_auto
from ..ir.diagnostics import IRError
from ..framework import ModulePass, PassContext, PassFailure
from ..assign.layout_graph import build_graph, enforce_requirements, propose_candidates
from ..assign.layout_solver import solve
from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.module_target import module_target
from . import backend_check, stock_resolution
from .epilogue_stores import met_stores, write_auto_epilogue
from .kernel_price import kernel_price, modelled_cost
from .resolution_record import Resolution, group_remarks
from .priced_as_emitted import folded_loads, local_load_layouts, priced_as_emitted
from .rematerialize import rematerialize_conversions, rematerialized
from ..ir.op_locations import no_result_locations
from ..ir.op_locations import users_of
from ..ir.edited_snapshot import SnapshotEditor
from ..ir.snapshot import Module, Operation, Value, functions_with_bodies, parse_module

INSERTED = "ll-resolve-auto"          # the location of the conversions step 1 inserts
INSERTED_AT = f"{INSERTED}:0:0"       # (as an op's location reads it)
_AUTO_TYPE = re.compile(r"tensor<((?:[^<>]|<[^<>]*>)*?), #gluon\.(?:auto|coalesced)_encoding>")


def has_auto_layouts(text: str) -> bool:
    return any(encoding in text for encoding in AUTO_ENCODINGS)


# --------------------------------------------------------------------------- step 1: text

def _base(value) -> str:
    return _AUTO_TYPE.match(value.type).group(1)


def _write_seeding(lines: ModuleLines, editor: SnapshotEditor, seeding: Seeding, counter: list[int]) -> None:
    """Write the first layouts into ``lines``: types, conversions, set_auto_layout renamed;
    ``editor`` records the same edits on the module's snapshot (the seeded module, unparsed)."""
    printed: dict[tuple[int, int], str] = {}            # (id(op), operand) -> encoding printed
    added: dict[tuple[int, str], tuple[str, Value]] = {}
    for value_id, encoding in seeding.encoding.items():
        editor.retype(seeding.values[value_id], f"tensor<{_base(seeding.values[value_id])}, {encoding}>")
    for value, op, operand, provided, needed in seeding.conversions:
        slot = (id(value), needed)
        if slot not in added:
            name = f"%ll_resolve{counter[0]}"
            counter[0] += 1
            lines.insert_after_definition(value, f"{name} = ttg.convert_layout {lines.name_of(value)} : "
                                                 f"tensor<{_base(value)}, {provided}> -> tensor<{_base(value)}, {needed}>"
                                                 f' loc("{INSERTED}":0:0)')
            added[slot] = name, editor.insert_after_definition(value, "ttg.convert_layout", [value],
                                                               f"tensor<{_base(value)}, {needed}>", INSERTED_AT)
        lines.rename_operand(op, lines.name_of(value), added[slot][0])
        editor.replace_operand(op, value, added[slot][1])
        printed[(id(op), operand)] = needed
    ops = {id(u.op): u.op for u in seeding.units}
    for unit in seeding.units:
        for value, op, _operand in unit.uses:
            ops[id(op)] = op
    for op in ops.values():
        entries = [(_base(v), printed.get((id(op), i), seeding.encoding[id(v)])) for i, v in enumerate(op.operands)
                   if is_auto(v)]
        entries += [(_base(v), seeding.encoding[id(v)]) for v in op.results if is_auto(v)]
        _retype(lines, op, entries)
        if op.name == "scf.while":          # its after region's arguments: the carried values
            _retype(lines, op, [(_base(v), seeding.encoding[id(v)]) for v in op.results if is_auto(v)], after_label=True)
        if op.name == SET_AUTO_LAYOUT:
            _hoist_set_auto_layout(lines, op)
            editor.move_after_definition(op, "ttg.convert_layout", INSERTED_AT)


_LOCATION = re.compile(r"\s+loc\(.*\)\s*$")


def _hoist_set_auto_layout(lines: ModuleLines, op: Operation) -> None:
    """``%a = gluon.set_auto_layout %v`` becomes ``%a = ttg.convert_layout %v``, moved to right
    after ``%v`` is defined (outside any loop ``%v`` comes from) and marked as ours: the
    solver then decides where the value meets the author's layout, and the conversion runs
    once where ``%v`` is defined, or nowhere if ``%v`` takes that layout."""
    index = lines.of[id(op)].header
    line = lines.lines[index].strip().replace(SET_AUTO_LAYOUT, "ttg.convert_layout", 1)
    lines.lines[index] = ""
    lines.insert_after_definition(op.operands[0], _LOCATION.sub("", line) + f' loc("{INSERTED}":0:0)')


def _retype(lines: ModuleLines, op: Operation, entries: list[tuple[str, str]], after_label: bool = False) -> None:
    """Each automatic type the op prints, in order, takes the encoding of the next of its
    values with that shape and element type (operands, then results; a type printed once for
    several values takes the first's)."""
    position = [0]
    last: dict[str, str] = {}

    def choose(base: str) -> str:
        for i in range(position[0], len(entries)):
            if entries[i][0] == base:
                position[0] = i + 1
                last[base] = entries[i][1]
                return f"tensor<{base}, {entries[i][1]}>"
        if base in last:
            return f"tensor<{base}, {last[base]}>"
        raise TextMismatch(f"{op.name} at {op.location}: a type with automatic layout matches none of its values")

    lines.replace_each_type(op, _AUTO_TYPE, choose, after_label)


# --------------------------------------------------------------------------- the driver

def _conversions(module: Module, fixed_only: bool = False) -> int:
    """The module's ``ttg.convert_layout`` ops; ``fixed_only``: those into a layout the author
    wrote (a conversion into an automatic layout asks us to choose: it is ours to place or drop,
    and counts as one we added where it remains)."""
    return sum(1 for op in module.walk() if op.name == "ttg.convert_layout"
               and not (fixed_only and is_auto(op.results[0])))


def _inline_if_needed(module: Module) -> bool:
    """Inline every call, as the ``ttgir`` stage's first pass (``gluon-inline``) does anyway: a
    callee's automatic values then take layouts for the warps that run them (a function
    called from a 2-warp partition resolved alone would get the module's warps).  Whether the
    module changed."""
    if any(op.name == "tt.call" for op in module.walk()):
        from triton._C.libtriton import passes
        module.run_triton_passes(passes.gluon.add_inliner)
        return True
    return False


def resolve_module(module: Module, target: "str | Target | None" = None, compare: bool = True,
                   price: bool = True, epilogues: bool = True) -> Resolution:
    """Resolve every automatic layout of ``module`` in place (see the module docstring).
    ``compare``: price Triton's own resolution too (a subprocess); ``price``: the resolved
    module's modelled cost (``Resolution.cost_ours``; always where ``compare``), which costs a
    print of it (below): the drop-in asks for it only for the remarks or the report.

    Round trips (each print or parse of a large kernel costs milliseconds).  Given a read-only
    snapshot of a module without calls (the drop-in's ``snapshot_of``, printed already; its
    stage inlines calls first, ``inline_calls_in_place``), the resolution parses once and, not
    priced, prints nothing:

    * step 1 (the seeding) and step 2 (the solver's choice) edit text and read the modules those
      texts stand for, built in Python (:mod:`..ir.edited_snapshot`): no parse; rematerialization
      reads the chosen module so built and adds its edits to the same text;
    * that text is parsed once; the backend check reads that module with that text, before
      the canonicalizer (which changes neither the layouts of the checked ops' operands nor the
      function's arguments: its verdict is the same either way); canonicalizer and CSE then
      run on that module, no copy;
    * priced (``price`` or ``compare``): the canonicalized module is printed once (forced: the
      modelled cost reads the module Triton's canonicalizer made, and reading it takes its
      text: the bindings read no attribute as text and no block argument's attributes; 3.6's
      ops offer ``get_str_attr``, ``get_bool_attr`` and ``get_flat_symbol_ref_attr`` only (3.9
      adds ``get_int_attr`` and ``get_constant_value``), so a function argument's
      ``tt.divisibility`` (the pointer analysis) is out of reach in both, and in 3.6 a
      reduction's ``axis`` and a constant's value (trip counts, index arithmetic) too; the
      canonicalizer makes constants of its own, so the chosen text does not stand in);
    * only where a conversion step 1 inserted survives and its user has no result (a
      ``tt.store``): one print (where not priced) and one parse more (its location, the
      user's, is written into the text: the bindings set an op's location only from another
      op's result).

    Where a built module does not line up with its text, that text is parsed instead (one parse
    more, as before); where the parsed module does not line up with it, the backend check reads
    the canonicalized module's print (one print, shared with the price).  With calls to inline
    (``ll-opt``, a module of its own): one parse (the copy the inliner runs on) and one print
    more.  The drop-in then hands the last module parsed to Triton as it is
    (``Module.handle_for``).

    ``epilogues``: where a store's pointers were automatic and meet a value in a layout the
    hardware forces (an accumulator's) only by a ``gluon.set_auto_layout`` (:mod:`.epilogue_stores`),
    the alternative too -- the store and the work that only feeds it automatic behind one
    conversion of the forced value -- resolved on a copy (a parse and a resolution more, only for
    such modules); the module becomes the one of the two the whole kernel's price
    (:mod:`.kernel_price`) says is cheaper, and the result describes the module so kept."""
    result = Resolution()
    original = module.print(debuginfo=True)
    if not has_auto_layouts(original):
        result.reason = "no automatic layouts"
        return result
    try:
        hw_target = module_target(module, target)
    except UnknownTarget as error:
        raise PassFailure(None, f"ll-resolve-auto-layouts: {error}") from None
    alternative = _epilogue_alternative(module, original, hw_target) if epilogues else None
    authors = _conversions(module, fixed_only=True)
    triton = stock_resolution.triton_resolution(original, module.filename) if compare else None
    _resolve_in_place(module, original, hw_target, result, authors, price or compare)
    if alternative is not None:
        _keep_the_cheaper(module, result, alternative, hw_target)
    if result.resolved and triton is not None:
        _price_triton_resolution(result, triton, module, hw_target)
    return result


def _resolve_in_place(module: Module, original: str, hw_target: Target, result: Resolution, authors: int,
                      price: bool) -> None:
    """Steps 1 to 3 on ``module``; ``result`` says what was done (or why not)."""
    try:
        _choose_check_and_canonicalize(module, original, hw_target, result)
    except (Unresolvable, TextMismatch, IRError) as error:
        result.reason = str(error).splitlines()[0]
        return
    conversions = _conversions(module) - authors
    # (priced before the locations are set, which it does not read: the print, where made, is
    # the one _locate_inserted_conversions reads)
    cost = modelled_cost(module, hw_target) if price else None
    try:
        _locate_inserted_conversions(module)
    except (TextMismatch, IRError) as error:
        result.reason = str(error).splitlines()[0]
        return
    result.resolved = True
    result.conversions, result.cost_ours = conversions, cost


def _epilogue_alternative(module: Module, original: str, hw_target: Target) -> Optional[tuple[Module, Resolution]]:
    """The module with its stores that meet an accumulator only by a ``set_auto_layout``
    (:func:`.epilogue_stores.met_stores`) written automatic behind a conversion, resolved on a
    copy: (that module, its resolution); None where there are no such stores or it does not
    resolve.  Made before ``module`` is resolved in place (it reads the original's ops)."""
    stores = met_stores(module)
    if not stores:
        return None
    try:
        lines = ModuleLines(module, original)
        write_auto_epilogue(module, lines, stores, users_of(module))
        trial = parse_module(lines.text(), module.filename, safe=module.safe, context=module.context, marked=False)
    except (TextMismatch, IRError):
        return None
    resolution = resolve_module(trial, hw_target, compare=False, price=True, epilogues=False)
    return (trial, resolution) if resolution.resolved else None


def _keep_the_cheaper(module: Module, result: Resolution, alternative: tuple[Module, Resolution],
                      hw_target: Target) -> None:
    """``module`` (resolved in place, ``result``) becomes the alternative where the whole
    kernel's price is lower there and it spills no more (or where ``module`` did not resolve);
    ``result`` then describes the alternative, its stores' groups saying why."""
    trial, resolution = alternative
    if result.resolved:
        kept, other = kernel_price(module, hw_target), kernel_price(trial, hw_target)
        if not other.cost < kept.cost or other.spills_where(kept, hw_target):
            return
        why = (f"; stored behind a conversion from the accumulator's layout: the whole kernel's modelled "
               f"cost {other.cost:.1f}, {kept.cost:.1f} stored in the accumulator's layout")
    else:
        why = f"; stored behind a conversion from the accumulator's layout (stored in it: {result.reason})"
    module.replace_text(trial.text_for_triton())
    for name in ("resolved", "reason", "groups", "conversions", "recomputed", "cost_ours"):
        setattr(result, name, getattr(resolution, name))
    for group in result.groups:
        if group.op == "tt.store":
            group.why += why
        group.others = [(op, location, layout, reason + why if op == "tt.store" else reason)
                        for op, location, layout, reason in group.others]


def _choose_check_and_canonicalize(module: Module, original: str, hw_target: Target, result: Resolution) -> None:
    """Steps 1 and 2 and rematerialization, on the text; the chosen text parsed into ``module``,
    checked against the backend's requirements, canonicalized (see ``resolve_module``)."""
    inlined = _inline_if_needed(module)
    seeded = _seed(module, module.print(debuginfo=True) if inlined else original)
    new_text, chosen = _choose(module, seeded, hw_target, result)
    result.recomputed, new_text = rematerialized(chosen, new_text) if chosen is not None else (None, new_text)
    module.replace_text(new_text)
    if result.recomputed is None:       # (the chosen module could not be built: parsed to read)
        result.recomputed = rematerialize_conversions(module, new_text)
        if result.recomputed:           # (its edits are not in new_text)
            new_text = None
    # the backend check on the module as parsed, read with the text it was parsed from (no
    # print): the canonicalizer changes neither the layouts of the checked ops' operands (its
    # patterns replace a conversion by an op of the same result type) nor the function's
    # arguments
    checked = backend_check.check_on_parsed_text(module, new_text)
    chosen_loads = local_load_layouts(module)
    module.canonicalize_and_cse()
    _describe_folds(result, folded_loads(chosen_loads, local_load_layouts(module)))
    if not checked:
        # on the canonicalized module as printed, before the locations of the conversions step 1
        # inserted are set (which it does not read): a text edit there leaves a module to parse
        backend_check.check_backend_requirements(module, ModuleLines(module, module.print(debuginfo=True)))


def _describe_folds(result: Resolution, folds: list[tuple[str, str]]) -> None:
    """Where Triton's canonicalizer folded a conversion into a local load after the choice
    (:mod:`.priced_as_emitted` prices the fold, so the solver should not leave one to fold),
    the remark of the load's group names the layout the load ends with, not the one chosen."""
    for before, after in folds:
        for group in result.groups:
            if group.op == "ttg.local_load" and group.layout == before:
                group.layout = after
                group.why += f"; Triton's canonicalizer folded the conversion after it into it (chosen: {before})"


def _price_triton_resolution(result: Resolution, triton: tuple, module: Module, hw_target: Target) -> None:
    """Record Triton's own resolution of the module (its text, or why it failed) and its
    modelled cost, beside ours."""
    result.compared = True
    resolved_text, error = triton
    if resolved_text is not None:
        result.cost_triton = modelled_cost(parse_module(resolved_text, module.filename, safe=module.safe), hw_target)
    else:
        result.triton_error = error


@dataclass
class Seeded:
    """Step 1's result: the module text with first layouts; per op of the original's walk,
    (op, whether it had automatic layouts, which of its results were automatic); per function,
    its :class:`~.auto_seeds.Seeding`."""

    text: str
    walk: list
    seedings: list
    located: dict = field(default_factory=dict)   # id(op) -> location of the original's ops without results
    module: Optional[Module] = None               # the seeded module as its text parses, built in Python


def _seed(module: Module, original: str) -> Seeded:
    """Step 1 over every function (see :class:`Seeded`); ``original``: the module printed with
    locations."""
    lines = ModuleLines(module, original)
    editor = SnapshotEditor(module)
    counter = [0]
    seedings = []
    lanes = module.threads_per_warp or 32
    for function in functions_with_bodies(module):
        seeding = seed_layouts(function, lines, module.num_warps or 4, lanes)
        _write_seeding(lines, editor, seeding, counter)
        seedings.append(seeding)
    walk = [(op, touches_auto(op) and op.name != SET_AUTO_LAYOUT,
             {i for i, v in enumerate(op.results) if is_auto(v)}) for op in module.walk()]
    text = lines.text()
    try:
        seeded_module = editor.build(text)
    except TextMismatch:
        seeded_module = None        # (parsed instead)
    return Seeded(text, walk, seedings, no_result_locations(module, original), seeded_module)


def _choose(module: Module, seeded: Seeded, target: Target, result: Resolution) -> tuple[str, Optional[Module]]:
    """Step 2: the solver over the seeded module, automatic ops free, the rest pinned; returns
    the rewritten text and, where it could be built, the module that text parses to, built in
    Python (for rematerialization).  The seeded module is the one step 1 built in Python, read
    with the seeded text itself: no parse, no print.  Where it could not be built, or its lines
    do not line up, the seeded text parsed, read with that text; where that leaves an op's
    location out, with the parsed module as MLIR prints it."""
    if seeded.module is not None and not seeded.module.has_temporary_locations:
        groups = len(result.groups)
        editor = SnapshotEditor(seeded.module)
        try:
            text = _choose_on(seeded.module, ModuleLines(seeded.module, seeded.text), seeded, target, result, editor)
            try:
                return text, editor.build(text)
            except TextMismatch:
                return text, None
        except TextMismatch:
            del result.groups[groups:]
    seeded_module = parse_module(seeded.text, module.filename, safe=module.safe, context=module.context,
                                 marked=False)
    if not seeded_module.has_temporary_locations:
        groups = len(result.groups)
        try:
            return _choose_on(seeded_module, ModuleLines(seeded_module, seeded.text), seeded, target, result), None
        except TextMismatch:
            del result.groups[groups:]
    return _choose_on(seeded_module, ModuleLines(seeded_module, seeded_module.print(debuginfo=True)), seeded,
                      target, result), None


def _choose_on(seeded_module: Module, lines: ModuleLines, seeded: Seeded, target: Target, result: Resolution,
               editor: Optional[SnapshotEditor] = None) -> str:
    free_ops, free_loop_positions, original_of = _free_ops(seeded_module, seeded.walk)
    counter = [0]
    for function, seeding in zip(functions_with_bodies(seeded_module), seeded.seedings):
        graph = build_graph(function, lines, reorder_reductions=True, memory_ops=True, shared_ops=True)
        pinned = frozenset(n.index for n in graph.nodes
                           if not (id(n.op) in free_ops if n.position < 0
                                   else n.position in free_loop_positions.get(id(n.op), ())))
        propose_candidates(graph, pinned)
        for node, why in enforce_requirements(graph, pinned):
            raise Unresolvable(node.op, f"no layout the backend accepts: {why} (left to Triton's resolution)")
        costs = priced_as_emitted(make_costs(graph, target), lines, target)
        solution = solve(graph, costs)
        # not optimal: each node's first candidate (its own key, where the backend accepts it)
        keys = solution.keys if solution.optimal else [node.candidates[0] for node in graph.nodes]
        result.groups += group_remarks(graph, keys, seeding, original_of, seeded.located)
        rewrite(graph, keys, lines, counter)
        if editor is not None:
            _record_rewrite(editor, graph, keys)
    return lines.text()


def _retyped(value: Value, encoding: str) -> str:
    """``value``'s tensor type with ``encoding`` (as ``assign_layouts.rewrite`` writes it)."""
    tensor_type = value.tensor_type
    return f"tensor<{'x'.join(str(d) for d in tensor_type.shape)}x{tensor_type.element_type}, {encoding}>"


def _record_rewrite(editor: SnapshotEditor, graph, keys: list[str]) -> None:
    """``assign_layouts.rewrite``'s edits of the text, recorded on the seeded snapshot (the
    chosen module, unparsed, for rematerialization): each op's line with the key's encoding in
    place of the stock one (so its results' types), a conversion after a value for each layout
    a use needs that it does not have, the uses renamed to it, a conversion's own types."""
    def replace(value, old: str, new: str) -> None:
        editor.retype(value, editor.type_of(value).replace(old, new))

    for node, key in zip(graph.nodes, keys):
        if key == node.stock_key or node.rule.kind == "convert":
            continue
        op = node.op
        if node.position >= 0:
            carried = [op.results[node.position]]
            if op.name == "scf.for":
                carried.append(op.regions[0].blocks[0].arguments[1 + node.position])
            elif op.name == "scf.while":
                carried += [region.blocks[0].arguments[node.position] for region in op.regions]
            for value in carried:
                replace(value, node.stock_key, key)
        elif node.rule.kind in ("trans",) + SHAPE_KINDS:
            for value in op.results:
                replace(value, node.rule.result(node.stock_key), node.rule.result(key))
        else:
            for value in op.results:
                replace(value, node.stock_key, key)
    added: dict[tuple[int, str], Value] = {}
    for use in graph.uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        if use.private:
            editor.retype(use.op.results[0], _retyped(use.op.results[0], required))
            continue
        if provided == required:
            continue
        slot = (id(use.value), required)
        if slot not in added:
            # (its location, the using op's, is read by no one before the module is parsed)
            added[slot] = editor.insert_after_definition(use.value, "ttg.convert_layout", [use.value],
                                                         _retyped(use.value, required), "unknown")
        editor.replace_operand(use.op, use.value, added[slot])


def _free_ops(seeded_module: Module, walk: list) -> tuple[set, dict, dict]:
    """Line the seeded module's ops up with the original's (the conversions step 1 inserted
    are the extra ones): which ops had automatic layouts, which positions of loops and branches,
    and each op's original."""
    free, loops, original_of = set(), {}, {}
    originals = iter(walk)
    for op in seeded_module.walk():
        if op.name == "ttg.convert_layout" and op.location.startswith(INSERTED + ":"):
            free.add(id(op))
            continue
        source, had_auto, auto_results = next(originals)
        while source.name == SET_AUTO_LAYOUT:        # moved: one of the marked conversions
            source, had_auto, auto_results = next(originals)
        expected = source.name
        if op.name != expected:
            raise TextMismatch(f"the seeded module does not line up with the original ({op.name} for {expected})")
        original_of[id(op)] = source
        if had_auto:
            free.add(id(op))
        if op.name in ("scf.for", "scf.if", "scf.while"):
            loops[id(op)] = auto_results
    return free, loops, original_of


_TRAILING_LOCATION = re.compile(r"\sloc\((?:[^()]|\([^()]*\))*\)\s*$")


def _locate_inserted_conversions(module: Module) -> bool:
    """A conversion step 1 inserted carries the marker location ``ll-resolve-auto``; once the
    layouts are chosen it takes the location of the op that uses it, so that remarks and the
    report point at the source line that needs it (``tt.store at k.py:33:5``), not at the
    printed module.  Whether the module was changed.

    Where every such user has results (and no regions, whose first line prints no location),
    the bindings copy the user's location onto the conversion: no print, no parse.  A user
    without results (a ``tt.store``) has no location the bindings can read: the module is then
    printed, the locations are written into the text, which the module becomes (one parse
    more, when next used)."""
    marked = [op for op in module.walk() if op.name == "ttg.convert_layout" and op.location.startswith(INSERTED + ":")]
    if not marked:
        return False
    users = users_of(module)
    inserted = [(op, next(iter(users.get(id(op.results[0]), [])), None)) for op in marked]
    inserted = [(op, user) for op, user in inserted if user is not None and not user.regions]
    if not inserted:
        return False
    if all(user.results for _op, user in inserted):
        for op, user in inserted:
            module.copy_location(user, op)
        return True
    lines = ModuleLines(module, module.print(debuginfo=True))
    for op, user in inserted:
        placed, found = lines.of.get(id(op)), _TRAILING_LOCATION.search(lines.header(user))
        if placed is not None and found:
            line = lines.lines[placed.header]
            lines.lines[placed.header] = _TRAILING_LOCATION.sub(" " + found.group(0).strip(), line)
    module.replace_text(lines.text())
    return True


# --------------------------------------------------------------------------- the pass

@dataclass(frozen=True)
class ResolveAutoLayouts(ModulePass):
    name = "ll-resolve-auto-layouts"
    description = "Give Gluon's automatic layouts (AutoLayout, CoalescedLayout) concrete ones by modelled cost"
    compare: bool = True          # price Triton's own resolution too, for the remarks (a subprocess per module)
    report: bool = False

    def apply(self, module: Module, context: PassContext) -> None:
        # Triton's resolution is priced only for the remarks: without them no one reads it, and
        # its subprocess (a second Python with Triton) is most of a small module's time
        told = context.remarks or self.report
        resolution = resolve_module(module, context.target, compare=self.compare and told)
        if not resolution.resolved and resolution.reason != "no automatic layouts":
            if told:       # why, also where Triton's resolution fails too
                context.report(f"{module.filename}: remark: [{self.name}] {resolution.remarks()[0]}")
            raise PassFailure(None, resolution.reason)
        if told:
            for line in resolution.remarks():
                context.report(f"{module.filename}: remark: [{self.name}] {line}")
