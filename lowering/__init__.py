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

from .cost import PlanCost, plan_cost
from .describe import describe_plan
from .plan import ConversionPlan, Unsupported
from .planner import plan_candidates, plan_conversion
from .target import (GFX90A, GFX942, GFX950, GFX1100, GFX1201, SM80, SM86, SM89, SM90, SM100, SM120, TARGETS, Target,
                     UnknownTarget, target_named)
from .verify import VerificationResult, verify_plan

__all__ = ["ConversionPlan", "Unsupported", "PlanCost", "plan_cost", "describe_plan", "plan_candidates",
           "plan_conversion",
           "Target", "TARGETS", "SM80", "SM86", "SM89", "SM90", "SM100", "SM120", "GFX90A", "GFX942", "GFX950",
           "GFX1100", "GFX1201", "UnknownTarget", "target_named",
           "VerificationResult",
           "verify_plan"]
