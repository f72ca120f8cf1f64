"""What ``ll-resolve-auto-layouts`` did to one module, as remarks and as a record: per group of
tied automatic values, the layout it got and why (the author's fixed layout, the coalesced
layout its pointers allow, the cheapest of the candidates, what limited its vectors), and the
module's modelled cost against Triton's own resolution.

The record travels in the kernel's metadata (``METADATA_KEY``), so that the report and the
advice read what the resolution chose even from Triton's cache.  Example remark::

    group 1 (3 ops, tt.load at k.py:12:17): #ttg.blocked<{sizePerThread = [4], ...}>:
        coalesced for its pointers (dim 0 contiguous, 4 elements per access)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...dialect.attribute_parser import parse_attribute
from ...dialect.attributes import SliceEncoding
from ...dialect.linear_layout import LayoutError
from ..assign.layout_rules import GLOBAL_ACCESS_OPS, global_access
from ..assign.layout_seeds import coalesced
from .auto_seeds import Seeding
from .layout_expression import gluon_layout_expression


@dataclass
class GroupRemark:
    """One group of automatic values tied together (their layouts decided as one), named by an
    op of it: a load, store or reduction first."""

    ops: int
    op: str                    # the anchor op's name, ``tt.load``
    location: str              # its source location, ``path:line:col``
    layout: str                # the layout the anchor got (attribute text)
    why: str
    # the group's loads and stores that got another layout (not a slice of it): (op, location, layout, why)
    others: list = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"{self.op} at {self.location}"

    @property
    def gluon(self) -> Optional[str]:
        """The layout as a Gluon expression, where one exists (``gl.BlockedLayout(...)``)."""
        return gluon_layout_expression(self.layout)


# The key of the kernel's metadata under which the hook keeps a Resolution's record (what
# ``python -m linear_layouts report`` shows; Triton writes the metadata into its cache, so a
# cache hit brings it back).
METADATA_KEY = "ll_auto_layouts"


@dataclass
class Resolution:
    """What the pass did to one module."""

    resolved: bool = False
    reason: str = ""
    groups: list[GroupRemark] = field(default_factory=list)
    conversions: int = 0             # conversions added (the module's less the author's)
    recomputed: int = 0              # conversions of index arithmetic recomputed instead (.rematerialize)
    # the resolved module's modelled cost; None where it was not priced: pricing it prints the
    # canonicalized module, so the drop-in prices it only for the remarks or the report
    cost_ours: Optional[float] = None
    cost_triton: Optional[float] = None
    triton_error: str = ""
    compared: bool = False           # Triton's resolution was run (compare=True)

    def versus_triton(self) -> str:
        """Triton's side of the comparison, in words."""
        if self.cost_triton is not None:
            return f"Triton's resolution {self.cost_triton:.1f}"
        if self.triton_error:
            return f"Triton's resolution fails: {self.triton_error}"
        return "Triton's not run"

    def remarks(self) -> list[str]:
        if not self.resolved:
            return [f"not resolved: {self.reason}"]
        out = [f"group {i + 1} ({g.ops} ops, {g.anchor}): {g.layout}: {g.why}"
               + "".join(f"; {op} at {location} gets {layout}: {why}" for op, location, layout, why in g.others)
               for i, g in enumerate(self.groups)]
        recomputed = f" (index arithmetic recomputed for {self.recomputed} more)" if self.recomputed else ""
        out.append(f"resolved {len(self.groups)} group(s) of automatic layouts; conversions added: "
                   f"{self.conversions}{recomputed}; modelled cost (loop-weighted) {self.costs()}")
        return out

    def costs(self) -> str:
        """The modelled costs in words: ``ours 71.7, Triton's resolution 71.7``."""
        if self.cost_ours is None:
            return "not priced"
        return f"ours {self.cost_ours:.1f}, {self.versus_triton()}"

    def record(self) -> dict:
        """A JSON-able record (the kernel's metadata carries it: :data:`METADATA_KEY`)."""
        return {"resolved": self.resolved, "reason": self.reason,
                "groups": [{"ops": g.ops, "op": g.op, "location": g.location, "layout": g.layout, "why": g.why,
                            "others": [list(other) for other in g.others]} for g in self.groups],
                "conversions": self.conversions, "recomputed": self.recomputed, "cost_ours": self.cost_ours,
                "cost_triton": self.cost_triton, "triton_error": self.triton_error, "compared": self.compared}

    @classmethod
    def from_record(cls, record: dict) -> "Resolution":
        groups = [GroupRemark(int(g["ops"]), str(g["op"]), str(g["location"]), str(g["layout"]), str(g["why"]),
                              [tuple(str(x) for x in other) for other in g.get("others", ())])
                  for g in record.get("groups", ())]
        cost_ours, cost_triton = record.get("cost_ours"), record.get("cost_triton")
        return cls(bool(record.get("resolved")), str(record.get("reason", "")), groups,
                   int(record.get("conversions", 0)), int(record.get("recomputed", 0)),
                   None if cost_ours is None else float(cost_ours), None if cost_triton is None else float(cost_triton),
                   str(record.get("triton_error", "")), bool(record.get("compared")))



def group_remarks(graph, keys: list[str], seeding: Seeding, original_of: dict, located: dict) -> list[GroupRemark]:
    """Per group: its anchor's layout and why; ``located`` gives the locations of ops without
    results (a store), which the parsed module does not hold."""
    node_of = {}
    for node in graph.nodes:
        source = original_of.get(id(node.op))
        if source is not None:
            node_of[(id(source), node.position)] = node.index
    remarks = []
    for group in seeding.groups:
        members = [u for u in group if u.rule.kind != "convert"]
        if not members:
            continue
        anchor = next((u for u in members if u.op.name in GLOBAL_ACCESS_OPS or u.op.name == "tt.reduce"), members[0])
        index = node_of.get((id(anchor.op), anchor.position))
        layout = keys[index] if index is not None else anchor.key
        node = graph.nodes[index] if index is not None else None
        choices = len(node.candidates) if node is not None else 1
        among = f", the cheapest of {choices} candidates by the cost model" if choices > 1 else ""
        fixed = [u for u in group if u.rule.kind == "convert" and u.why == "set_auto_layout" and u.key == layout]
        contiguity = _coalesced_for(node) if node is not None else None
        limit = _alignment_limit(node) if node is not None else None
        if fixed:
            why = f"the layout the author fixed at {fixed[0].op.location} (set_auto_layout){among}"
        elif contiguity is not None and contiguity[0] == layout:
            per_access = limit or f"{contiguity[2]} elements per access"
            why = f"coalesced for its pointers (dim {contiguity[1]} contiguous, {per_access}){among}"
        elif choices > 1:
            why = among[2:] + (f"; {limit}" if limit else "")
        else:
            why = "the only layout its rules allow"
        remark = GroupRemark(len({id(u.op) for u in members}), anchor.op.name,
                             located.get(id(anchor.op), anchor.op.location), layout, why)
        remark.others = _other_layouts(members, layout, graph, keys, node_of, located)
        remarks.append(remark)
    return remarks


def _other_layouts(members, layout: str, graph, keys: list[str], node_of: dict,
                   located: dict) -> list[tuple[str, str, str, str]]:
    """(op, location, layout, why) of each load or store of the group whose layout is not the
    anchor's nor a slice of it (a conversion inside the group separates them), the first op
    with each such layout.  Example: a transpose's load gets the coalesced layout of its
    pointers, its store that of the other pointers."""
    seen = {root_layout(layout)}
    others = []
    for unit in members:
        index = node_of.get((id(unit.op), unit.position))
        if unit.op.name not in GLOBAL_ACCESS_OPS or index is None:
            continue
        root = root_layout(keys[index])
        if root not in seen:
            seen.add(root)
            contiguity = _coalesced_for(graph.nodes[index])
            limit = _alignment_limit(graph.nodes[index])
            why = (f"coalesced for its pointers (dim {contiguity[1]} contiguous, "
                   f"{limit or f'{contiguity[2]} elements per access'})"
                   if contiguity is not None and contiguity[0] == keys[index]
                   else "the cheapest by the cost model" + (f"; {limit}" if limit else ""))
            others.append((unit.op.name, located.get(id(unit.op), unit.op.location), keys[index],
                           why + "; converted from the group's layout"))
    return others


def root_layout(layout: str):
    """The layout a slice (of a slice ...) is taken from: the layout itself for any other."""
    try:
        attr = parse_attribute(layout)
    except LayoutError:
        return layout
    while isinstance(attr, SliceEncoding):
        attr = attr.parent
    return attr


def _coalesced_for(node) -> Optional[tuple[str, int, int]]:
    """(the coalesced layout, contiguous dim, vector) of a load's or store's node."""
    if node.op.name not in GLOBAL_ACCESS_OPS or node.contiguity is None:
        return None
    access = global_access(node.op)           # pointers, or a buffer op's offsets
    layout = coalesced(node.stock_key, access.shape, node.contiguity.dim, node.contiguity.vector, access.element_bytes)
    return layout, node.contiguity.dim, min(node.contiguity.vector, 16 // max(1, access.element_bytes))


def _alignment_limit(node) -> Optional[str]:
    """Where a load's or store's vector is limited by what its pointers are known aligned to
    (not by the tensor or by 16 bytes), that in words; else None."""
    if node.op.name not in GLOBAL_ACCESS_OPS or node.contiguity is None:
        return None
    access = global_access(node.op)
    return alignment_limit(node.contiguity, access.shape, access.element_bytes)


def alignment_limit(contiguity, shape: tuple, element_bytes: int) -> Optional[str]:
    """What limits the vector of accesses through pointers of this ``contiguity``
    (``passes.assign.pointer_contiguity``), in words, where it is their alignment: the run along
    the contiguous dim is longer than the vector and 16 bytes would fit, but a run's start is
    known aligned to fewer bytes (no ``tt.divisibility``, or a row stride not known a multiple of
    16 bytes); None otherwise.  Example: f16 rows with no divisibility: "its pointers' alignment
    is not known: 2-byte accesses at most".  The resolution's remarks and the advice say it alike."""
    allowed = min(contiguity.vector * element_bytes, 16)
    if allowed >= 16 or contiguity.vector >= shape[contiguity.dim]:
        return None
    known = "its pointers' alignment is not known" if contiguity.vector == 1 else \
        f"its pointers are known {allowed}-byte aligned only"
    return f"{known}: {allowed}-byte accesses at most"
