"""The passes that pipeline strings can name: the project's own, listed here, and any that a
program or test adds with :func:`register_pass`.

The list is explicit (no registration by import side effect): the pass modules import the
framework, and only this module imports the pass modules, so no import goes in a circle.
"""

from __future__ import annotations

from .advice.apply_advice import ApplyAdvice
from .assign.assign_layouts import AssignLayouts
from .attach_layouts import AttachLayouts
from .classify_conversions import ClassifyConversions
from .framework import ModulePass
from .lower_conversions import LowerConversions
from .merge_layouts import MergeEquivalentLayouts
from .gluon.resolve_auto_layouts import ResolveAutoLayouts

PROJECT_PASSES: tuple[type[ModulePass], ...] = (ApplyAdvice, AssignLayouts, AttachLayouts, ClassifyConversions, MergeEquivalentLayouts,
                                                LowerConversions, ResolveAutoLayouts)

_REGISTRY: dict[str, type[ModulePass]] = {}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Make ``cls`` available in pipeline strings under ``cls.name`` (usable as a class decorator)."""
    if not cls.name or cls.name != cls.name.lower() or " " in cls.name:
        raise ValueError(f"pass class {cls.__name__} needs a kebab-case name, got '{cls.name}'")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"two passes are named '{cls.name}'")
    _REGISTRY[cls.name] = cls
    return cls


for _pass in PROJECT_PASSES:
    register_pass(_pass)


def registered_passes() -> dict[str, type[ModulePass]]:
    """Every pass by name, sorted by name."""
    return dict(sorted(_REGISTRY.items()))
