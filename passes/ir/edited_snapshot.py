"""The snapshot a text edit would parse to, built in Python from the snapshot before the edit:
one parse saved per edit that a pass only reads before it edits again.

A pass that edits a module's text (:class:`.module_lines.ModuleLines`) and then reads the
result (the Gluon resolution: the solver reads the seeded module, rematerialization the chosen
one) would parse that text only to walk it.  :class:`SnapshotEditor` records the same edits on
the snapshot's objects, call for call beside the text edits, and :meth:`SnapshotEditor.build`
gives a read-only :class:`~.snapshot.Module` over new Python objects, lined up with the edited
text as a parse of it would be: the same ops in the same order, each value with the type its
line prints.  It has no Triton handle: it can be walked and read with that text
(``ModuleLines(module, text)``), never printed without locations, edited or handed to Triton.

The edits are those the text editor makes, with its placement rules:

* :meth:`~SnapshotEditor.retype`: a value's type (its op's line printing another encoding);
* :meth:`~SnapshotEditor.insert_after_definition`: a new one-result op right after a value is
  defined (after its op; for a block argument at the start of the region that defines it, as
  ``ModuleLines.insert_after_definition`` places the line); ops inserted after one definition
  keep the order they were inserted in;
* :meth:`~SnapshotEditor.replace_operand`: an op reads a new value where it read an old one
  (``ModuleLines.rename_operand``: every operand of that name);
* :meth:`~SnapshotEditor.move_after_definition`: an op renamed and moved to right after its
  operand's definition (its old line emptied; ops inserted after its results still go where
  its line was).

Worked example (the seeding of a copy; ``A`` Gluon's automatic encoding, ``B`` a blocked one)::

    %0 = tt.make_range ... : tensor<128xi32, A>        retype(%0, tensor<128xi32, B>)
    %1 = tt.load %p        : tensor<128xf32, A>        retype(%1, tensor<128xf32, B>)
    %2 = gluon.set_auto_layout %1 : A -> #L             move_after_definition(set_auto_layout,
                                                          %1, "ttg.convert_layout", location)

gives, as parsing the edited text would, ``make_range``, ``load``, ``convert_layout`` (its
operand ``%1`` of type ``tensor<128xf32, B>``), and the ops after it reading its result.
"""

from __future__ import annotations

from typing import Optional

from .module_lines import TextMismatch
from .operations import Block, Operation, Region, Value
from .snapshot import Module, built_snapshot


class SnapshotEditor:
    """The edits of one text, recorded on the objects of ``module`` (see the module docstring)."""

    def __init__(self, module: Module):
        self._module = module
        self._types: dict[int, str] = {}                        # id(value) -> new type
        self._after: dict[tuple, list[Operation]] = {}           # anchor -> ops inserted there, in order
        self._operands: dict[tuple[int, int], Value] = {}        # (id(op), id(old value)) -> new value
        self._moved: dict[int, Operation] = {}                   # id(op) -> the op, renamed, at its new place
        self._moved_from: dict[int, Operation] = {}              # id(moved op) -> the op it was
        self._temporary_locations = False

    # -- edits --------------------------------------------------------------------------

    def retype(self, value: Value, new_type: str) -> None:
        self._types[id(value)] = new_type

    def type_of(self, value: Value) -> str:
        """The value's type with the retypes so far."""
        return self._types.get(id(value), value.type)

    def insert_after_definition(self, value: Value, name: str, operands: list[Value], result_type: str,
                                location: Optional[str]) -> Value:
        """A new op ``name`` reading ``operands`` (values of the snapshot or ones inserted
        before), with one result of ``result_type``; ``location``: as the op's location reads
        (``file:line:col``), or None where its line prints none (a parse would then locate it
        in the temporary file it parses from).  Returns its result."""
        op = Operation(name, operands=list(operands), _location=location or "unknown")
        op.results.append(Value(result_type, op, 0))
        self._temporary_locations |= location is None
        self._after.setdefault(_anchor(value), []).append(op)
        return op.results[0]

    def replace_operand(self, op: Operation, old: Value, new: Value) -> None:
        """(The first replacement of ``old`` in ``op`` holds, as the text's first rename does.)"""
        self._operands.setdefault((id(op), id(old)), new)

    def move_after_definition(self, op: Operation, new_name: str, location: str) -> None:
        """``op`` becomes ``new_name`` at ``location``, right after its first operand is
        defined."""
        moved = Operation(new_name, _location=location)
        self._moved[id(op)] = moved
        self._moved_from[id(moved)] = op
        self._after.setdefault(_anchor(op.operands[0]), []).append(moved)

    # -- the result ---------------------------------------------------------------------

    def build(self, text: str) -> Module:
        """The edited snapshot, ``text`` being the edited text (see the module docstring);
        :class:`~.module_lines.TextMismatch` where an edit reads a value the module does not
        define."""
        values: dict[int, Value] = {}
        operands_of: list[tuple[Operation, list[Value], int]] = []    # (new op, operands to map, edit key)

        def results_of(source: Operation, op: Operation) -> None:
            for r in source.results:
                clone = Value(self._types.get(id(r), r.type), op, r.index)
                op.results.append(clone)
                values[id(r)] = clone

        def clone_of(source: Operation) -> Operation:
            op = Operation(source.name, symbol=source.symbol, callee=source.callee, _location=source._location)
            if source._location is None and source._locate is not None:
                op._locate = lambda _op, s=source: s.location     # (a function: read from the original)
            results_of(source, op)
            operands_of.append((op, source.operands, id(source)))
            return op

        def insert_at(anchor: tuple, block: Block) -> None:
            for op in self._after.get(anchor, []):
                source = self._moved_from.get(id(op))
                if source is not None:          # a moved op: its results are the source's
                    op = Operation(op.name, _location=op._location)
                    results_of(source, op)
                    operands_of.append((op, source.operands, id(source)))
                else:
                    for r in op.results:
                        values[id(r)] = r
                    operands_of.append((op, op.operands, id(op)))
                op.parent = block
                block.operations.append(op)

        # pass 1: the tree, every value defined; pass 2: the operands (a graph region may read a
        # value defined after it)
        top = clone_of(self._module.body)
        work = [(self._module.body, top)]
        while work:
            source, op = work.pop()
            for ri, region in enumerate(source.regions):
                new_region = Region(parent=op)
                op.regions.append(new_region)
                for bi, block in enumerate(region.blocks):
                    new_block = Block(parent=new_region)
                    new_region.blocks.append(new_block)
                    for a in block.arguments:
                        clone = Value(self._types.get(id(a), a.type), new_block, a.index)
                        new_block.arguments.append(clone)
                        values[id(a)] = clone
                    if bi == 0 and (ri == 0 or source.name == "scf.while"):
                        insert_at(("start", id(source), ri), new_block)
                    for child in block.operations:
                        if id(child) not in self._moved:
                            child_op = clone_of(child)
                            child_op.parent = new_block
                            new_block.operations.append(child_op)
                            work.append((child, child_op))
                        insert_at(("after", id(child)), new_block)
        for op, operands, key in operands_of:
            mapped = []
            for v in operands:
                v = self._operands.get((key, id(v)), v)
                if id(v) not in values:
                    raise TextMismatch(f"{op.name}: an edit reads a value the module does not define")
                mapped.append(values[id(v)])
            op.operands = mapped
        return built_snapshot(top, text, self._module.filename, self._temporary_locations)


def _anchor(value: Value) -> tuple:
    """Where ``ModuleLines.insert_after_definition`` puts a line after ``value``'s definition."""
    if not value.is_block_argument:
        return ("after", id(value.owner))
    block = value.owner
    owner = block.parent.parent
    if owner.name == "scf.while" and block.parent is not owner.regions[0]:
        return ("start", id(owner), 1)
    return ("start", id(owner), 0)
