"""The resolution's costs as the module will be emitted, not as the solver first writes it.

After the solver picks layouts, two rewrites change what a conversion it placed turns into:

* **rematerialization** (ours, :mod:`.rematerialize`): a conversion of index arithmetic (a
  range, a splat, integer ops on them) becomes the arithmetic recomputed in the layout needed;
* **Triton's canonicalizer** folds a conversion of a ``ttg.local_load``'s result into the load:
  ``%x = local_load %s : -> #A; %y = convert_layout %x : #A -> #B`` becomes
  ``%y = local_load %s : -> #B``.  The shared-memory trip of the conversion disappears, and
  the load now reads in ``#B``, which may be far dearer than in ``#A``.

Example (a transposed NVMMA view of a 64x64 f16 tile, read and stored into another buffer
whose rows run the other way): the solver reads in ``sizePerThread = [8, 1]`` (16-byte
``ld.shared.v4``) and converts to ``[1, 8]`` for the store, pricing the conversion as a trip
through shared memory; the canonicalizer then reads in ``[1, 8]`` directly: 32 scalar
``ld.shared.b16`` a thread, a price the solver never saw.

So :func:`priced_as_emitted` prices each such conversion as what it becomes: the recomputed
arithmetic where that is cheaper, and the load in the conversion's layout (a second load,
where the first keeps other users).  With that price the solver reads in the layout it pays
for; :func:`folded_loads` reads back the module Triton's canonicalizer made and says which
loads it changed all the same (the remarks then describe the module handed on).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..assign.layout_solver import Costs
from ..assign.pipe_time import Work
from ..assign.shared_access_costs import local_load_work
from ..ir.module_lines import ModuleLines
from ..ir.snapshot import Module, Operation
from ...lowering.target import Target
from .rematerialize import recompute_work


def priced_as_emitted(costs: Costs, lines: ModuleLines, target: Target) -> Costs:
    """``costs`` with each conversion priced as the rewrites after the choice emit it (see the
    module docstring): the least of converting and recomputing index arithmetic; for a
    ``local_load``'s result, the load in the layout converted to."""
    # (id(value), dst) -> (its price as emitted, whether that replaces the conversion whatever
    # the conversion costs); computed once, as the solver asks for every pair of candidates
    emitted: dict[tuple[int, str], tuple[Optional[Work], bool]] = {}

    def convert_work(use, src: str, dst: str) -> Work:
        work = costs.conversion_work(use, src, dst)
        if src == dst or work.total == 0:
            return work
        key = (id(use.value), dst)
        if key not in emitted:
            folded = _folded_load_work(use.value.defining_op, dst, target)
            emitted[key] = (folded, True) if folded is not None else \
                (recompute_work(use.value, lines, dst, target), False)
        price, certain = emitted[key]
        if price is not None and (certain or price.total < work.total):
            return price
        return work

    return replace(costs, conversion=lambda use, src, dst: convert_work(use, src, dst).total,
                   conversion_work=convert_work)


def _folded_load_work(op: Optional[Operation], dst: str, target: Target) -> Optional[Work]:
    """What a conversion to ``dst`` of ``op``'s result costs once folded into it: a local load
    in ``dst`` (None: ``op`` is no local load)."""
    if op is None or op.name != "ttg.local_load" or not op.results:
        return None
    tensor, memdesc = op.results[0].tensor_type, op.operands[0]
    return local_load_work(dst, tuple(tensor.shape), memdesc.type, tensor.element.logical_bits, target)


def local_load_layouts(module: Module) -> list[str]:
    """The result layout of every ``ttg.local_load`` of ``module``, in walk order."""
    return [op.results[0].tensor_type.encoding for op in module.walk()
            if op.name == "ttg.local_load" and op.results and op.results[0].tensor_type is not None]


def folded_loads(chosen: list[str], final: list[str]) -> list[tuple[str, str]]:
    """(chosen, final) for each local load whose layout the rewrites after the choice changed
    (a conversion folded into it), given the layouts of :func:`local_load_layouts` before and
    after; nothing where the loads do not line up one to one (a load left dead, or copied)."""
    if len(chosen) != len(final):
        return []
    return [(before, after) for before, after in zip(chosen, final) if before != after]
