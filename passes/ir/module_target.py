"""The one place a module's target is resolved: the target a caller names, else the module's
``ttg.target`` attribute (``cuda:90`` -> sm_90, ``hip:gfx942`` -> gfx942).

Example: ``module_target(module, None)`` on a module printed with ``ttg.target = "cuda:90"`` is
``target_named("sm_90")``; ``module_target(module, "gfx942")`` ignores the attribute.
"""

from __future__ import annotations

from typing import Optional, Union

from ...lowering.target import Target, UnknownTarget, target_named
from .snapshot import Module


def module_target(module: Module, target: Union[str, Target, None] = None) -> Target:
    """The target to plan ``module`` for; ``UnknownTarget`` naming what is wrong where there is none."""
    return target_of(target, lambda: module.target)


def target_of(target: Union[str, Target, None], attribute) -> Target:
    """``target`` (a caller's option), else the target the module's ``ttg.target`` names, read by
    ``attribute()`` only when needed (a snapshot's header, or Triton's module through its
    bindings: ``passes.drop_in.types_first``); ``UnknownTarget`` where neither names one."""
    if isinstance(target, Target):
        return target
    name = target or attribute()
    if not name:
        raise UnknownTarget("the module has no ttg.target attribute (pass target=...)")
    return target_named(name)


def target_or_why(module: Module, target: Union[str, Target, None] = None) -> tuple[Optional[Target], str]:
    """(the target, "") or (None, why there is none): for passes that leave every op to Triton,
    with that reason as the remark, rather than fail."""
    try:
        return module_target(module, target), ""
    except UnknownTarget as error:
        return None, str(error)
