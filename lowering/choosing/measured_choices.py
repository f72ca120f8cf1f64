"""Choices made by measurement: conversions where a GPU run showed the cost model's pick to be
beaten by another verified candidate, or by stock Triton's own lowering.

The cost model (``lowering.cost``) ranks candidates by counted instructions; it cannot see
latency chains, register pressure or how ptxas schedules an island, and on some conversions it
picks a plan that runs measurably slower than another candidate.  ``benchmarks/plan_choice.py``
times every verified candidate of a conversion, and stock Triton's lowering, side by side in one
run; ``--write-choices`` turns the conversions where the model's pick was more than 3% slower
than the fastest into the table ``measured_choices.json`` next to this module:

    {"measured_on": "NVIDIA H100 80GB HBM3", "triton": "3.6.0", "choices": {KEY: ENTRY, ...}}

KEY names the conversion exactly (target, element bits, and both linear layouts: the same
conversion in any kernel has the same key); ENTRY says what was fastest: ``{"fastest": "stock"}``
or ``{"fastest": K}`` (the planner's K-th verified candidate), plus the instruction mixes of the
model's pick and of candidate K at the time, and the measured times.

An entry is used only while it still describes what the planner builds: if the planner's pick
(or candidate K) no longer has the recorded instruction mix, the planner changed since the
measurement and the entry is ignored.  A "stock" entry is used only with the Triton release it
was measured with (stock's lowering changes between releases; ours does not).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ...dialect.conventions import release_of
from ..plan import STOCK, Stock
from ..remark_words import detail

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "measured_choices.json")


def conversion_key(src, dst, bits: int, target_name: str) -> str:
    """A short, exact name for a conversion: a hash of the target, the element width and both
    layouts' bases (``repr`` of a LinearLayout lists every basis vector)."""
    text = f"{target_name}|{bits}|{src!r}|{dst!r}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class MeasuredChoice:
    fastest: "int | Stock"          # STOCK or the rank of the fastest verified candidate
    model_pick_mix: dict            # instruction mix of the cost model's pick when measured
    fastest_mix: Optional[dict]     # ... of candidate ``fastest`` (None for stock)
    model_pick_ms: float
    fastest_ms: float
    measured_on: str
    triton: str

    def explain(self) -> str:
        what = "stock Triton's lowering" if self.fastest is STOCK else f"candidate {self.fastest}"
        return (f"measured on {self.measured_on} with triton {self.triton}: {what} took {self.fastest_ms:.4f} ms "
                f"where the cost model's pick took {self.model_pick_ms:.4f} ms"
                + detail("lowering/choosing/measured_choices.json, from benchmarks/plan_choice.py"))


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[dict, str, str]:
    if not os.path.exists(path):
        return {}, "", ""
    with open(path) as f:
        data = json.load(f)
    return data.get("choices", {}), data.get("measured_on", ""), data.get("triton", "")


def lookup(src, dst, bits: int, target_name: str, path: Optional[str] = None) -> Optional[MeasuredChoice]:
    """The recorded measurement for this conversion (from ``path``, default the table beside this
    module), or None."""
    choices, measured_on, triton = _load(path or TABLE)
    entry = choices.get(conversion_key(src, dst, bits, target_name))
    if entry is None:
        return None
    fastest = STOCK if entry["fastest"] == STOCK.value else int(entry["fastest"])
    return MeasuredChoice(fastest, entry["model_pick_mix"], entry.get("fastest_mix"),
                          entry["model_pick_ms"], entry["fastest_ms"], measured_on, triton)


def same_release(measured: str, installed: str) -> bool:
    """Stock entries hold for the release (major.minor) they were measured with: ``"3.6.0"``
    and ``"3.6.1+git..."`` are one release; a table that names none matches no release."""
    release = release_of(measured)
    return release is not None and release == release_of(installed)
