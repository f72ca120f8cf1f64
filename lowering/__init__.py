"""linear_layouts.lowering: conversion plans for ``ttg.convert_layout``.

Public entry points (see each module's docstring for the algebra):

* ``plan_conversion(src, dst, bits, target) -> ConversionPlan | Unsupported`` (``planner``): a plan
  that has passed the exhaustive verifier, or the reason there is none;
* ``verify_plan(plan)`` (``verify``), ``plan_cost(plan)`` (``cost``), ``describe_plan(plan)``
  (``describe``: the plan and its cost in the target's instruction names);
* ``target_named("sm_90")`` and the targets ``SM80``, ``SM90``, ``GFX90A``, ``GFX942`` (``target``).

Modules, one idea each: ``instructions`` (the typed, vendor-neutral steps of a plan), ``plan``
(plans as data), ``target``, ``hardware`` (layouts as integer columns), ``conversion`` (minimal
conversion and scope), ``shuffle`` (warp shuffles), ``swizzle`` (the optimal swizzle), ``matrix``
(ldmatrix/stmatrix tiles), ``shared`` (shared-memory plans), ``cost`` (with the bank model),
``verify``, ``planner``, ``describe`` (plans in words); subpackages: ``emit`` (the emitters:
``island_writer`` (what they share), ``emit_nvidia``, ``emit_amd`` (the only modules that spell
instruction names), ``emit_llvm`` (islands)), ``sim`` (the emitted-code simulator) and
``choosing`` (ours or stock's lowering: the fitted gate, measured choices, stock's floor and
hazards).  Imports between them form no cycle (``test_lowering_imports``).
"""

import importlib

# Each name from the module that defines it, imported on first use (PEP 562): ``import
# linear_layouts`` imports ``lowering.settings`` (passes.drop_in.environment fills it) in every
# process where LINEAR_LAYOUTS is set, and must not pay for the planner there.
_FROM = {**dict.fromkeys(("PlanCost", "plan_cost"), "cost"), "describe_plan": "describe",
         **dict.fromkeys(("ConversionPlan", "Unsupported"), "plan"),
         **dict.fromkeys(("plan_candidates", "plan_conversion"), "planner"),
         **dict.fromkeys(("GFX90A", "GFX942", "GFX950", "GFX1100", "GFX1201", "SM80", "SM86", "SM89", "SM90", "SM100",
                          "SM120", "TARGETS", "Target", "UnknownTarget", "target_named"), "target"),
         **dict.fromkeys(("VerificationResult", "verify_plan"), "verify")}

__all__ = ["ConversionPlan", "Unsupported", "PlanCost", "plan_cost", "describe_plan", "plan_candidates",
           "plan_conversion",
           "Target", "TARGETS", "SM80", "SM86", "SM89", "SM90", "SM100", "SM120", "GFX90A", "GFX942", "GFX950",
           "GFX1100", "GFX1201", "UnknownTarget", "target_named",
           "VerificationResult",
           "verify_plan"]


def __getattr__(name):
    if name in _FROM:
        return getattr(importlib.import_module(f".{_FROM[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
