"""The simulator's shared-memory accesses derive the rows of an access of every thread once per
width (``Machine._access_rows``, recognizing ``Machine.all_threads``) and keep flat views of
their bookkeeping.  Differential test: on random shared-memory islands, right and broken (a
barrier dropped, a store moved after the loads, an address off by one element, the buffer
halved), the verdicts and messages are those of the path that derives everything afresh for
every access (what the simulator did before)."""

from __future__ import annotations

import random
import re

import pytest

from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_island
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.sim import sim_machine
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.tools.fuzz.random_layouts import random_case

ELEMENT_TYPES = {1: "i1", 8: "i8", 16: "f16", 32: "f32", 64: "i64"}


def _site(bits):
    return IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                       element_type=ELEMENT_TYPES[bits], guard_before=True, guard_after=True)


def _shared_islands(count: int, seed: int):
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        src, dst, bits, target = random_case(rng)
        if target.name != "sm_90":
            continue
        plan = plan_conversion(src, dst, bits, target)
        if not plan or str(plan.method) != "shared" or str(plan.scope) == "block":
            continue
        site = _site(bits)
        found.append((plan, site, emit_island(plan, site).text))
    return found


def _broken(text: str) -> list[str]:
    """Wrong versions of a shared-memory island's text (those that differ from it)."""
    lines = text.splitlines()
    out = []
    barriers = [i for i, line in enumerate(lines) if "bar.sync" in line or "bar.warp.sync" in line]
    if barriers:
        out.append("\n".join(line for i, line in enumerate(lines) if i != barriers[len(barriers) // 2]))
    stores = [i for i, line in enumerate(lines) if re.search(r"st\.shared|stmatrix|llvm\.store ", line)]
    loads = [i for i, line in enumerate(lines) if re.search(r"ld\.shared|ldmatrix|llvm\.load ", line)]
    if stores and loads and stores[0] < loads[-1]:
        out.append("\n".join(lines[:stores[0]] + lines[stores[0] + 1:loads[-1] + 1] + [lines[stores[0]]]
                             + lines[loads[-1] + 1:]))
    out.append(re.sub(r"memdesc<(\d+)xi8", lambda m: f"memdesc<{max(16, int(m.group(1)) // 2)}xi8", text))
    return [t for t in out if t != text]


def _fresh_rows(monkeypatch):
    """Every access derives its rows afresh (a copy of the thread ids is never ``all_threads``)."""
    real = sim_machine.Machine._access_rows
    monkeypatch.setattr(sim_machine.Machine, "_access_rows",
                        lambda self, nbytes, threads: real(self, nbytes, threads.copy()))


def test_the_same_verdicts_as_rows_derived_for_every_access(monkeypatch):
    islands = _shared_islands(30, seed=4)
    cases = [(plan, site, text) for plan, site, text in islands] + \
            [(plan, site, wrong) for plan, site, text in islands for wrong in _broken(text)]
    fast = [check_emitted(text, plan, site) for plan, site, text in cases]
    _fresh_rows(monkeypatch)
    fresh = [check_emitted(text, plan, site) for plan, site, text in cases]
    assert [(r.ok, r.errors) for r in fast] == [(r.ok, r.errors) for r in fresh]
    right, wrong = fast[:len(islands)], fast[len(islands):]
    assert all(r.ok for r in right)
    assert len(wrong) >= 60 and sum(not r.ok for r in wrong) >= 50   # broken islands are caught


@pytest.mark.parametrize("nbytes", [1, 2, 4])
def test_rows_of_every_thread_are_the_rows_of_those_threads(nbytes):
    machine = sim_machine.Machine(2, 4, 32, "nvidia")
    machine.alloc(1024)
    cached = machine._access_rows(nbytes, machine.all_threads)
    assert machine._access_rows(nbytes, machine.all_threads) is cached
    fresh = machine._access_rows(nbytes, machine.all_threads.copy())
    assert fresh is not cached
    for a, b in zip(cached, fresh):
        assert (a == b).all()
