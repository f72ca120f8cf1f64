"""The selection rule of the ll-assign-layouts GPU suite (benchmarks/studies/assign_gpu.py), on TTGIR text.

A kernel is selected when stock Triton's TTGIR has a ``ttg.convert_layout``

* **in a loop**: inside the body of an ``scf.for`` or ``scf.while`` (at any depth), or
* **in the epilogue**: after the end of the function's last loop, outside every loop, with a
  ``tt.store`` (or ``tt.descriptor_store``) after it in the same function.

A convert before the first loop only (the prologue), or in a function with no loop at all, does
not select the kernel.  The rule reads the printed IR (with or without ``loc(...)``), so any
Triton's TTGIR works, without parsing it into MLIR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LOOPS = ("scf.for", "scf.while")
STORES = re.compile(r"(^|[\s=])(tt\.store|tt\.descriptor_store)\b")
CONVERT = re.compile(r"\bttg\.convert_layout\b")
_OP = re.compile(r'^(?:%[^=]*=\s*)?"?([A-Za-z_][\w.]*)"?')
_LOC_TAIL = re.compile(r"\s+loc\((?:[^()]|\([^()]*\))*\)\s*$")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass
class ConvertSite:
    line: int            # 1-based line of the convert in the TTGIR text
    function: str
    in_loop: bool
    epilogue: bool
    text: str

    @property
    def where(self) -> str:
        return "loop" if self.in_loop else ("epilogue" if self.epilogue else "prologue/other")


def convert_sites(ttgir: str) -> list[ConvertSite]:
    """Every ``ttg.convert_layout`` of the module with where it sits (loop, epilogue, other)."""
    stack: list[str] = []            # op names of the open regions, innermost last
    function = None
    loop_ends: dict[str, int] = {}   # function -> line where its last loop closes
    stores: dict[str, list[int]] = {}
    raw = []                         # (line, function, in_loop, text)
    for number, full in enumerate(ttgir.splitlines(), start=1):
        line = _LOC_TAIL.sub("", full.strip())
        bare = _STRING.sub('""', line)
        if bare.startswith("}"):
            closed = stack.pop() if stack else None
            if closed in LOOPS and function is not None:
                loop_ends[function] = number
            if closed == "tt.func":
                function = None
            if bare.endswith("{"):       # "} do {", "} else {": the same op's next region
                stack.append(closed)
            continue
        if function is not None and CONVERT.search(bare):
            raw.append((number, function, any(op in LOOPS for op in stack), line))
        if function is not None and STORES.search(bare):
            stores.setdefault(function, []).append(number)
        if bare.endswith("{"):
            m = _OP.match(bare)
            name = m.group(1) if m else "?"
            if name == "tt.func":
                found = re.search(r"@([\w$.-]+)", bare)
                function = found.group(1) if found else "?"
            stack.append(name)
            # a region whose op also closes on this line ("{}" bodies) does not stay open
            if bare.count("{") <= bare.count("}"):
                stack.pop()
    sites = []
    for number, fn, in_loop, text in raw:
        last_loop = loop_ends.get(fn)
        epilogue = (not in_loop and last_loop is not None and number > last_loop
                    and any(s > number for s in stores.get(fn, ())))
        sites.append(ConvertSite(number, fn, in_loop, epilogue, text))
    return sites


def selected(ttgir: str) -> bool:
    """The rule: a convert in a loop or in the epilogue."""
    return any(s.in_loop or s.epilogue for s in convert_sites(ttgir))


def describe(ttgir: str) -> dict:
    """Counts for the selection table: converts in loops, in the epilogue, elsewhere."""
    sites = convert_sites(ttgir)
    return {"converts": len(sites), "in_loop": sum(s.in_loop for s in sites),
            "epilogue": sum(s.epilogue for s in sites),
            "other": sum(not s.in_loop and not s.epilogue for s in sites),
            "selected": any(s.in_loop or s.epilogue for s in sites)}
