"""One row per ``ttg.convert_layout``: what it is, how far it moves data, how we would lower it.

``report_conversions(ttgir_text, target)`` reads a TTGIR module (Triton's own output, or a
file), and for every convert asks the planner (``lowering.plan_conversion``) for a verified
plan.  A row says:

* where the convert is (``file:line`` of the user's source) and its types, shortened;
* its scope: the slowest hardware level the data crosses (none, register, lane, warp, block);
* the lowering chosen: none (a no-op), registers (a renaming), shuffle, or shared memory, with
  ``+stmatrix`` / ``+ldmatrix`` when the plan uses those instructions;
* the plan's cost per warp (instruction counts, bank conflicts, scratch bytes);
* verified: "yes" (every plan the planner returns passed the exhaustive verifier), or
  "left to Triton: <reason>" when there is no plan.

``count_instructions(code, vendor)`` counts the data-movement instructions in final PTX or
AMDGCN, for comparing stock Triton's lowering with ours.  ``ll-demo`` uses both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

from linear_layouts.dialect import LayoutError
from linear_layouts.lowering import ConversionPlan, Unsupported, plan_conversion, plan_cost, target_named
from linear_layouts.lowering.emit import emit_amd, emit_nvidia
from linear_layouts.lowering.conversion import conversion_scope
from linear_layouts.lowering.describe import instruction_counts
from linear_layouts.lowering.plan import Scope
from linear_layouts.tools.viewers.plan_view import lowering_name


@dataclass
class ConversionRow:
    """One convert and the planner's answer for it."""

    kernel: str
    location: str              # "kernels.py:82"
    types: str                 # "64x64xf16 #mma -> #blocked1"
    scope: "Scope | str"       # none / register / lane / warp / block (or "?" if unreadable)
    lowering: str              # none / registers / shuffle / shared[+stmatrix][+ldmatrix] / "-" (no plan)
    instructions: str          # "st.shared.b64=8 bar.sync=1 ldmatrix.x4=4" ("-" if none)
    bank_conflicts: Optional[int]
    scratch_bytes: int
    verified: str              # "yes" or "left to Triton: reason"
    plan: Optional[ConversionPlan] = None
    what: str = ""             # the conversion in words, for picture titles

    @property
    def is_noop(self) -> bool:
        return self.scope == Scope.NONE


# ----------------------------------------------------------------------------- short names

_SLICE = re.compile(r"#ttg\.slice<\{dim = (\d+), parent = (#[\w$.-]+)\}>")
_DOT_OP = re.compile(r"#ttg\.dot_op<\{opIdx = (\d+), parent = (#[\w$.-]+)(?:, kWidth = (\d+))?\}>")


def short_encoding(encoding: str) -> str:
    """``#ttg.slice<{dim = 0, parent = #blocked}>`` -> ``#slice0(#blocked)``;
    ``#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>`` -> ``#dot0(#mma)``."""
    encoding = _SLICE.sub(lambda m: f"#slice{m.group(1)}({m.group(2)})", encoding)
    return _DOT_OP.sub(lambda m: f"#dot{m.group(1)}({m.group(2)})", encoding)


def short_types(src_type: str, dst_type: str) -> str:
    """``tensor<64x64xf16, #mma>``, ``tensor<64x64xf16, #blocked1>`` -> ``64x64xf16 #mma -> #blocked1``."""
    def split(text):
        inner = text[text.index("<") + 1:-1] if "<" in text else text
        shape, _, encoding = inner.partition(",")
        return shape.strip(), short_encoding(encoding.strip())
    (shape, src), (_, dst) = split(src_type), split(dst_type)
    return f"{shape} {src} -> {dst}"


def short_location(location: str) -> str:
    """``/path/to/kernels.py:82:5`` -> ``kernels.py:82``."""
    parts = location.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return f"{os.path.basename(parts[0])}:{parts[1]}"
    return location


def _instruction_text(plan: ConversionPlan) -> str:
    counts = instruction_counts(plan_cost(plan), plan.target)
    return " ".join(f"{name}={count}" for name, count in counts.items()) or "-"


# ----------------------------------------------------------------------------- the report

def report_conversions(ttgir_text: str, target, kernel: str = "", filename: str = "<module>") -> list[ConversionRow]:
    """Every ``ttg.convert_layout`` of the module, in order, with the planner's answer for
    ``target`` (a name such as "sm_90" / "gfx942", or a ``lowering.Target``).  Raises
    ``passes.ir.diagnostics.IRError`` if the text does not parse."""
    from linear_layouts.passes.framework import PassFailure
    from linear_layouts.passes.ir.snapshot import parse_module
    from linear_layouts.passes.ir.layouts import value_layout

    target = target_named(target) if isinstance(target, str) else target
    module = parse_module(ttgir_text, filename)
    rows = []
    for op in module.ops_named("ttg.convert_layout"):
        source, result = op.operands[0], op.results[0]
        row = ConversionRow(kernel, short_location(op.location),
                            short_types(module.short_type(source.type), module.short_type(result.type)),
                            scope="?", lowering="-", instructions="-", bank_conflicts=None, scratch_bytes=0,
                            verified="")
        rows.append(row)
        try:
            src, dst = value_layout(source, op), value_layout(result, op)
        except PassFailure as error:
            row.verified = f"left to Triton: {error.message}"
            continue
        bits = result.tensor_type.element.logical_bits
        row.what = f"{row.kernel} {row.location} on {target.name}: {row.types} ({bits}-bit)".strip()
        try:
            row.scope = conversion_scope(src, dst)
        except LayoutError:  # the planner below says what is wrong, in words
            pass
        plan = plan_conversion(src, dst, bits, target)
        if isinstance(plan, Unsupported):
            row.scope = plan.scope or row.scope
            row.verified = f"left to Triton: {plan.reason}"
            continue
        cost = plan_cost(plan)
        row.plan = plan
        row.scope = plan.scope
        row.lowering = lowering_name(plan)
        row.instructions = _instruction_text(plan)
        row.bank_conflicts = cost.bank_conflicts
        row.scratch_bytes = cost.scratch_bytes
        row.verified = "yes"
    return rows


# ----------------------------------------------------------------------------- final code

# What to count in the final code, per vendor (the emitters spell their instructions).
FINAL_CODE_PATTERNS = {"nvidia": emit_nvidia.FINAL_CODE_PATTERNS, "amd": emit_amd.FINAL_CODE_PATTERNS}


def count_instructions(code: str, vendor: str) -> dict[str, int]:
    """Counts of the data-movement instructions (``FINAL_CODE_PATTERNS``) in PTX or AMDGCN."""
    return {name: len(re.findall(pattern, code, flags=re.M))
            for name, pattern in FINAL_CODE_PATTERNS[vendor].items()}


def counts_text(counts: dict[str, int]) -> str:
    """``shfl=2 ld.shared=4`` (zero counts left out; ``-`` when all are zero)."""
    return " ".join(f"{name}={n}" for name, n in counts.items() if n) or "-"


# ----------------------------------------------------------------------------- tables

def format_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Left-aligned columns separated by two spaces, a dashed line under the header; the last
    column is not padded (it may be long: a reason)."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(cells):
        padded = [str(c).ljust(w) for c, w in zip(cells[:-1], widths[:-1])] + [str(cells[-1])]
        return "  ".join(padded).rstrip()
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
