"""``ll-merge-equivalent-layouts``: one attribute per linear layout.

Triton's layout propagation can leave a module with two attributes that describe the same
layout: e.g. ``#blocked`` with sizePerThread [1, 1] and ``#blocked1`` that differs only in an
``order`` that does not matter for the shapes used.  Conversions between them are no-ops that
still cost a ``ttg.convert_layout`` op (and block other rewrites).

This pass rewrites every use of such an alias ``#A`` into ``#B`` when, for *every* tensor in
the module whose type mentions ``#A`` (directly or inside a ``#ttg.slice``/``#ttg.dot_op``),
the type with ``#B`` in place of ``#A`` has the same linear layout.  Only plain layouts
(``#ttg.blocked``, ``#ttg.linear``) are replaced; the attributes that ops require, such as
``#ttg.nvidia_mma``, ``#ttg.amd_mfma`` and ``#ttg.dot_op``, are kept, and are preferred as the
surviving representative.  Triton's canonicalizer then folds the conversions that became
identities.  With ``report=true`` it prints what it merged and how many conversions went away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .framework import ModulePass, PassContext
from .ir.snapshot import Module
from .ir.types import alias_pattern, parse_tensor_type
from .ir.layouts import LayoutUnavailable, tensor_layout

REPLACEABLE = ("#ttg.blocked<", "#ttg.linear<")
DISTRIBUTED = REPLACEABLE + ("#ttg.nvidia_mma<", "#ttg.amd_mfma<", "#ttg.amd_wmma<", "#ttg.slice<", "#ttg.dot_op<")


def _tensor_types(module: Module) -> set[str]:
    types = set()
    for op in module.walk():
        for v in op.results + op.block_arguments + op.operands:
            if v is not None and v.tensor_type is not None and v.tensor_type.encoding is not None:
                types.add(v.type)
    return types


def _same_everywhere(types: set[str], old: str, new: str) -> bool:
    """Does replacing the expanded text ``old`` by ``new`` keep every type's linear layout?"""
    used = False
    for type_text in types:
        if old not in type_text:
            continue
        used = True
        before, after = parse_tensor_type(type_text), parse_tensor_type(type_text.replace(old, new))
        try:
            if tensor_layout(before) != tensor_layout(after):
                return False
        except LayoutUnavailable:
            return False
    return used


def merge_plan(module: Module) -> dict[str, str]:
    """{alias to remove: alias that replaces it} for the module's equivalent layout aliases."""
    aliases = {n: v for n, v in module.aliases().items() if v.startswith(DISTRIBUTED)}
    names = list(aliases)
    required = [n for n in names if not aliases[n].startswith(REPLACEABLE)]
    # Aliases that ll.* attributes (from ll-attach-layouts) refer to stay: rewriting them would
    # turn an ll.layout's #ttg.linear into some other attribute.
    printed = module.print()
    in_ll_attributes = set(re.findall(r"#[\w$.-]+", " ".join(
        re.findall(r"\bll\.\w+ = (\[[^\]]*\]|#[\w$.-]+)", printed))))
    types = _tensor_types(module)
    plan: dict[str, str] = {}
    for position, old in enumerate(names):
        if old in required or old in in_ll_attributes:
            continue
        # Representatives in order of preference: attributes that ops require, then the
        # earlier plain layouts that survive.
        candidates = required + [n for n in names[:position] if n not in required and n not in plan]
        for new in candidates:
            if _same_everywhere(types, aliases[old], aliases[new]):
                plan[old] = new
                types = {t.replace(aliases[old], aliases[new]) for t in types}
                break
    return plan


def apply_merge_plan(text: str, plan: dict[str, str]) -> str:
    """Rewrite printed module text: uses of each old alias become the new one, and the old
    alias definition is deleted (MLIR rejects two definitions of one alias)."""
    for old, new in plan.items():
        text = re.sub(r"^" + re.escape(old) + r" = .*\n", "", text, flags=re.M)
        text = alias_pattern(old).sub(new, text)
    return text


@dataclass(frozen=True)
class MergeEquivalentLayouts(ModulePass):
    name = "ll-merge-equivalent-layouts"
    description = "Use one attribute for layouts that are the same linear map, and fold the no-op conversions"
    report: bool = False

    def apply(self, module: Module, context: PassContext) -> None:
        plan = merge_plan(module)
        if not plan:
            if self.report:
                context.report(f"{module.filename}: no equivalent layouts to merge")
            return
        before = len(module.ops_named("ttg.convert_layout"))
        module.rewrite_text(lambda text: apply_merge_plan(text, plan))
        module.canonicalize()
        after = len(module.ops_named("ttg.convert_layout"))
        if self.report:
            merged = ", ".join(f"{old} -> {new}" for old, new in plan.items())
            context.report(f"{module.filename}: merged {merged}; removed {before - after} of {before} conversions")
