"""The edit of an epilogue-store finding (``layout_advice``'s ``EPILOGUE_STORE``): a store whose
value is in a layout the hardware forces (an MMA accumulator's) converted first to a layout it
stores wider in, with the work between them and the store's addresses laid out anew.

Where the value comes from an accumulator, its layout is no variable the author can change
(``advice_edits``' edit changes a variable everywhere it is used): the author converts, with
``y = gl.convert_layout(y, L)``, and builds the indices in ``L``'s slices.  Where to convert
(right after the accumulator, or after the bias and the activation) and which ``L`` are choices
of cost, and ``ll-resolve-auto-layouts`` makes exactly these choices for the automatic form of
such an epilogue.  So the edit is made as an author asks for it in Gluon: every op between the
forced values and the store that only feeds the store (elementwise work, loads of operands such
as a bias, constants, the address chain -- ``tt.make_range``, ``tt.splat``, ``tt.expand_dims``,
``tt.broadcast``, ``tt.addptr`` -- and the mask) is given ``#gluon.auto_encoding``, each value
it reads from outside is converted into it (``gl.convert_layout(v, gl.AutoLayout())``), and
:func:`..gluon.resolve_auto_layouts.resolve_module` chooses every layout and where the
conversion runs, by the model ``kernel_price`` prices (the same cost).  Example: the direct
epilogue of ``benchmarks/studies/epilogue_store.py`` (bias add and ReLU in the ``wgmma``
layout, 4-byte stores) becomes a conversion right after ``acc.to(gl.float16)``, the bias loaded
coalesced, and 16-byte stores: the expert's converted epilogue.
"""

from __future__ import annotations

from ...lowering.target import Target
from ..gluon.epilogue_stores import (AUTO, FORCING_OPS, MMA_ENCODINGS, MOVABLE, epilogue_region,  # noqa: F401
                                     forced_layout, write_auto_epilogue)
from ..gluon.resolve_auto_layouts import resolve_module
from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.op_locations import users_of
from ..ir.snapshot import Module, parse_module


class EpilogueUnresolved(TextMismatch):
    """The epilogue's automatic form did not resolve (the edit is no advice then)."""


def epilogue_trial(module: Module, stores: list[tuple], target: Target, edits: list[str]) -> Module:
    """A new module: ``module`` (a trial of its own, in the context of the kernel) with each
    store of ``stores`` ((op key, location): ``("tt.store", k)`` and where the finding places it) and the work that only feeds it laid out
    by ``ll-resolve-auto-layouts`` (module docstring; the text written by
    :func:`..gluon.epilogue_stores.write_auto_epilogue`, which the resolution's own alternative
    for automatic stores writes too).  Raises :class:`EpilogueUnresolved` where the resolution
    gives up."""
    from .findings import op_keys
    text = module.print(debuginfo=True)
    lines = ModuleLines(module, text)
    keys = op_keys(module)
    by_key = {keys[id(op)]: op for op in module.walk()}
    chosen = [by_key[k] for k, _ in stores if k in by_key]
    if len(chosen) != len(stores):
        raise EpilogueUnresolved("an advised store is not in the trial")
    laid_out = write_auto_epilogue(module, lines, chosen, users_of(module))
    trial = parse_module(lines.text(), module.filename, safe=module.safe, context=module.context, marked=False)
    resolution = resolve_module(trial, target, compare=False, price=False)
    if not resolution.resolved:
        raise EpilogueUnresolved(f"the epilogue's automatic form did not resolve: {resolution.reason}")
    for (key, where) in stores:
        edits.append(f"{key[0]} #{key[1]} at {where}: its value converted before it, "
                     f"{laid_out} op(s) feeding it laid out by ll-resolve-auto-layouts")
    return trial
