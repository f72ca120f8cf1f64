"""An op's island, emitted and proved before it replaces the op.

Every island is executed by the emitted-code simulator (``lowering.sim.island_sim``) for every
thread of the CTA: the text we print, not the plan, must put the right element in every
destination register (broadcast copies included), with no race, undefined value or
out-of-bounds access.  An island that fails is not used: the op is left to Triton with a remark
naming the first wrong register; with ``LINEAR_LAYOUTS_STRICT_CHECK=1`` in the environment (the
test suites set it) such a failure is an error instead.  ``verify=plan`` skips the simulation.

A verdict depends only on the island's text, its plan and its site, so :class:`IslandChecks`
remembers the verdicts of one module's lowering (a kernel often converts the same layouts twice)
and accepted ones across compiles (``passes.islands.verified_islands``).  Islands are emitted with one
SSA prefix (``%llX_7``) so that the same conversion anywhere has the same text; each is given its
own prefix when it goes into the module.
"""

from __future__ import annotations

from typing import Optional

from ...lowering.emit.emit_llvm import (IslandSite, EmitError, Island, emit_island, emit_local_load_island,
                                       emit_local_store_island)
from ...lowering import settings
from ...lowering.local_memory import LOCAL_LOAD, LOCAL_STORE
from ..barriers.guard_placement import GuardPlacement
from ..framework import PassFailure
from ..ir.bindings import installed_conventions, triton_version
from ..ir.snapshot import Operation, in_loop
from .island_splicing import allocation_around
from ..options import VerifyLevel

STRICT_CHECK_VARIABLE = "LINEAR_LAYOUTS_STRICT_CHECK"   # the older spelling of the setting strict_check
CACHEABLE_PREFIX = "llX"    # the SSA prefix islands are emitted with; renamed to ``%ll<number>_`` on splicing


def strict_check() -> bool:
    """The setting ``strict_check``: a rejected island is an error (the suites set it)."""
    return settings.current().strict_check


def stores_registers(op: Operation) -> bool:
    """The op's island stores registers into a buffer (a local store; an allocation with a
    source is a store into a fresh buffer); the others load registers (a convert, a local load)."""
    return op.name in ("ttg.local_store", "ttg.local_alloc")


def memdesc_rank(op: Operation) -> int:
    """The rank of the buffer a local load, store or allocation accesses (0 for a convert)."""
    memdesc = {"ttg.local_load": lambda: op.operands[0], "ttg.local_store": lambda: op.operands[1],
               "ttg.local_alloc": lambda: op.results[0]}.get(op.name)
    return 0 if memdesc is None else len(memdesc().tensor_type.shape)


def site_for(op: Operation, threads, guards: GuardPlacement) -> IslandSite:
    """Where the island goes: placeholders for the op's SSA names and types (filled in when it
    is spliced), its element type, its guards, and the warps that run it (``threads``: None for
    the whole CTA)."""
    storing = stores_registers(op)
    allocating = op.name == "ttg.local_alloc"
    value = op.operands[0] if storing else op.results[0]
    buffer = f"%{CACHEABLE_PREFIX}_buffer" if allocating else "%BUFFER"
    site = IslandSite(result="" if storing else "%RESULT", source="%SOURCE", src_type="@SRC_TYPE@",
                       dst_type="" if storing else "@DST_TYPE@", element_type=value.tensor_type.element_type,
                       buffer=buffer if storing else "", buffer_type="@BUFFER_TYPE@" if storing else "",
                       guard_before=guards.before(op), guard_after=guards.after(op),
                       guard_before_alone=guards.before_alone(op),
                       prefix=CACHEABLE_PREFIX,
                       unique_struct=installed_conventions().struct_holds_unique_registers, in_loop=in_loop(op),
                       threads=threads)
    if guards.async_fence(op):
        site.async_fence = True
    return site


class IslandChecks:
    """Emits and proves the islands of one module's lowering, remembering verdicts."""

    def __init__(self, verify: VerifyLevel):
        self.verify = verify
        self.verdicts: dict[str, object] = {}

    def checked_island(self, op: Operation, plan, site: IslandSite) -> tuple[Optional[Island], object, str]:
        """(the op's island or None, the simulator's verdict or None where it did not run, why
        there is no island).  A failure is an error instead under ``LINEAR_LAYOUTS_STRICT_CHECK``."""
        rank = memdesc_rank(op)
        try:
            if op.name == "ttg.local_load":
                island = emit_local_load_island(plan, site, rank)
            elif stores_registers(op):
                island = emit_local_store_island(plan, site, rank)
            else:
                island = emit_island(plan, site)
        except EmitError as error:
            return None, None, str(error)
        check = self._simulated(island.text, plan, site, rank) if self.verify == VerifyLevel.EMITTED else None
        if check is not None and not check:
            message = f"the emitted island failed the simulator: {check.errors[0]}"
            if strict_check():
                raise PassFailure(op, f"internal error: {message}")
            return None, check, message
        if op.name == "ttg.local_alloc":
            island.text = allocation_around(island.text, site.buffer, rank)
        return island, check, ""

    def _simulated(self, island_text: str, plan, site: IslandSite, rank: int):
        """The simulator's verdict on ``island_text``: remembered if it accepted this very text
        for this plan and site before, else a fresh run.  ``rank``: the memdesc's rank for a
        local load's or store's island (0 for a convert's)."""
        from ...lowering.sim.island_sim import check_emitted
        from ...lowering.sim.sim_local_memory import check_emitted_local_load, check_emitted_local_store
        from ...lowering.verify import VerificationResult
        from . import verified_islands

        key = verified_islands.verdict_key(island_text, plan, site, triton_version())
        if key in self.verdicts:
            return self.verdicts[key]
        if verified_islands.is_accepted(key):
            return VerificationResult(True)
        if plan.method == LOCAL_LOAD:
            check = check_emitted_local_load(island_text, plan, site, rank)
        elif plan.method == LOCAL_STORE:
            check = check_emitted_local_store(island_text, plan, site, rank)
        else:
            check = check_emitted(island_text, plan, site)
        if check:
            verified_islands.remember_accepted(key)
        self.verdicts[key] = check
        return check
