"""Whether the pipeline could put an island into a Triton module, asked before the module is
printed: each ``ttg.convert_layout``'s conversion is read from its operand's and its result's
types (Triton's bindings print a type with its encoding written out) and put to the one decision
point, ``lowering_choice.choose_conversion``, as the pass puts it.

Why: where every conversion goes to stock the pass makes no island, yet to ask its first
question it needs Triton's print of the whole module and a snapshot of it (every op's Python
twin).  Under triton 3.9 that is every flash-linear-attention kernel, where the print and the
snapshot were about half of the plugin's own time (docs/compile-time.md, "Held-out kernels").
Asked from the types, a kernel pays for its conversions' layouts alone.

The answer is the pass's own.  The pass asks the same question of each conversion, and what it
knows beyond the types only ever sends a conversion to stock (``lower_conversions``: the warps
of a warp-specialized partition, AMD's values joined at region ends, the warps a plan needs, a
module without a known target).  So where every conversion is stock's from its types, the pass
would make no island, and the hook compiles Triton's own module, unprinted.  Where one could be
ours, the pipeline runs as before; the layouts and plans read here are remembered by the caches
it reads them from, and the drop-in hands the pass this question's memory of plans and choices
(``plan_memory.ModulePlans``), so a conversion asked here is not asked again.

The same answers, every conversion's (``conversion_choices``), are what the drop-in builds its
shared-memory islands in place from where the module has no warp-specialized region and no call
(``in_place.lower_in_place_from_types``): there the pass would see nothing the types do not say.

Only for the default pipeline: ``ll-lower-conversions`` alone, without remarks or reports and
owning no local-memory op (those need the module; so does every other pass).  Example: FLA's
``gla_fwd_o`` kernel for sm_80 under triton 3.9 holds 9 conversions, each a no-op stock forwards
or a warp-scope one no plan of ours beats on stock's floor: no print, no snapshot.
"""

from __future__ import annotations

from typing import Optional

from ...lowering.choosing.lowering_choice import LoweringChoice, choose_conversion, stock
from ...lowering.choosing.plan_memory import ModulePlans
from ...lowering.target import Target, UnknownTarget
from ..ir.module_target import target_of
from ..ir.operations import Value
from ..lower_conversions import LowerConversions
from ..op_requests import conversion_between
from .plugin_config import PluginConfig


def lowering_asked_first(config: PluginConfig) -> Optional[LowerConversions]:
    """The pipeline's one pass where its questions can be asked from the types (see the module
    docstring); None otherwise."""
    if len(config.passes) != 1 or type(config.passes[0]) is not LowerConversions:
        return None
    lowering = config.passes[0]
    if config.remarks or config.reports or lowering.remarks or lowering.owns_local_memory_ops:
        return None
    return lowering


def every_conversion_is_stocks(handle, config: PluginConfig, plans: Optional[ModulePlans] = None) -> bool:
    """Whether the pipeline of ``config`` would leave every ``ttg.convert_layout`` of Triton's
    module ``handle`` to Triton, known from the conversions' types; False where that is not
    known so (another pipeline, a module whose attributes cannot be read) or some conversion
    could be ours.  ``plans``: the compile's memory of plans and choices, for the pass to take
    the answers given here (default: one of this question's own)."""
    answered = conversion_choices(handle, config, plans, until_ours=True)
    return answered is not None and not any(choice.ours for _, choice in answered)


def conversion_choices(handle, config: PluginConfig, plans: Optional[ModulePlans] = None,
                       until_ours: bool = False) -> Optional[list[tuple[object, LoweringChoice]]]:
    """Each ``ttg.convert_layout`` op of ``handle`` (Triton's op handle) with the pass's choice for
    it, asked from the types (twins of stock's code not yet kept among islands:
    ``lowering_choice.kept_among_islands``); None where the question cannot be asked so.
    ``until_ours``: stop after the first conversion that could be ours."""
    lowering = lowering_asked_first(config)
    if lowering is None:
        return None
    target = _target(handle, lowering)
    if target is None:
        return None
    threads_per_warp = handle.get_int_attr("ttg.threads-per-warp")
    converts = []
    handle.walk(lambda op: converts.append(op) if op.get_name() == "ttg.convert_layout" else None)
    policy, plans = lowering.policy(gate_first=True), plans or lowering.module_plans()
    answered = []
    for op in converts:
        source = Value(str(op.get_operand(0).get_type()), None, 0)
        result = Value(str(op.get_result(0).get_type()), None, 0)
        request = conversion_between(source, result, threads_per_warp, target)
        choice = stock(request) if isinstance(request, str) else choose_conversion(request, policy, plans)
        answered.append((op, choice))
        if until_ours and choice.ours:
            break
    return answered


def _target(handle, lowering: LowerConversions) -> Optional[Target]:
    """The target the pass plans for (``ir.module_target``: its option, else the module's
    ``ttg.target``); None where neither names one (the pass then says why; that takes the module)."""
    try:
        return target_of(lowering.target, lambda: handle.get_operation().get_str_attr("ttg.target"))
    except (UnknownTarget, AttributeError, RuntimeError, TypeError, ValueError):
        return None
