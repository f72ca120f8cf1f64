"""How often each ``ttg.convert_layout`` of a kernel runs: the loops around it, read from the TTGIR.

A conversion inside ``scf.for`` loops runs once per iteration of each: its weight is the product
of their trip counts.  A loop whose bounds and step are constants (``arith.constant``, as Triton
prints them for ``range(8)`` or ``range(0, 16, 4)``) has a static trip count; any other loop
(bounds from kernel arguments, ``scf.while``) counts as ``ASSUMED_TRIPS`` iterations, and the
report says so.  Code outside loops runs once per program instance.

Read from the text (Triton's printed TTGIR, one op per line): regions open with a line ending
in ``{`` and close with a line starting with ``}``; braces inside a line (attributes, types) are
balanced and cancel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...passes.assign.layout_graph import ASSUMED_TRIPS, trip_count   # one assumption for the report and the pass

_CONSTANT = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (-?\d+) : (?:i\d+|index)\b")
_FOR = re.compile(r"\bscf\.for (%[\w.$-]+) = (%[\w.$-]+) to (%[\w.$-]+) step (%[\w.$-]+)")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass(frozen=True)
class LoopWeight:
    """How often one conversion runs per program instance."""

    runs: int                 # product of the trip counts (assumed ones included)
    loops: tuple = ()         # per enclosing loop, innermost last: its trip count text
    assumed: bool = False     # some loop's trip count is ASSUMED_TRIPS, not read from the IR

    def text(self) -> str:
        """``1``, ``x8``, ``x8 x16?`` (``?``: an assumed trip count)."""
        return " ".join(self.loops) if self.loops else "1"


def _trips(lower: str, upper: str, step: str, constants: dict) -> int | None:
    if lower not in constants or upper not in constants or step not in constants:
        return None
    return trip_count(constants[lower], constants[upper], constants[step])


def conversion_weights(ttgir: str) -> list[LoopWeight]:
    """One ``LoopWeight`` per ``ttg.convert_layout`` of ``ttgir``, in text order."""
    constants: dict[str, int] = {}
    stack: list[tuple[str, int | None]] = []   # per open region: ("for"/"while"/"other", trips)
    weights = []
    for raw in ttgir.splitlines():
        line = _STRING.sub('""', raw)
        stripped = line.strip()
        if stripped.startswith("tt.func"):
            constants = {}
        match = _CONSTANT.match(line)
        if match:
            constants[match.group(1)] = int(match.group(2))
        if "ttg.convert_layout" in line and "=" in line.split("ttg.convert_layout")[0]:
            loops = [(kind, trips) for kind, trips in stack if kind in ("for", "while")]
            runs, texts, assumed = 1, [], False
            for kind, trips in loops:
                if trips is None:
                    runs *= ASSUMED_TRIPS
                    texts.append(f"x{ASSUMED_TRIPS}?")
                    assumed = True
                else:
                    runs *= trips
                    texts.append(f"x{trips}")
            weights.append(LoopWeight(runs, tuple(texts), assumed))
        opens, closes = line.count("{"), line.count("}")
        # "} else {", "} do {": a region closes and the next one of the same op opens
        if stripped.startswith("}") and stripped.endswith("{") and opens == closes:
            continue
        for _ in range(max(0, closes - opens)):
            if stack:
                stack.pop()
        if opens > closes:
            found = _FOR.search(line)
            if found:
                stack.append(("for", _trips(found.group(2), found.group(3), found.group(4), constants)))
            elif "scf.while" in line:
                stack.append(("while", None))
            else:
                stack.append(("other", 1))
    return weights
