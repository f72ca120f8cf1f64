"""Check a plan independently of the plan verifier: emit it as an island and run the island's
text for every thread with the emitted-code simulator (``lowering.sim.island_sim``)."""

from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_island
from linear_layouts.lowering.sim.island_sim import check_emitted

ELEMENT_TYPES = {1: "i1", 8: "i8", 16: "f16", 32: "f32", 64: "i64"}


def simulate(plan) -> None:
    """Raise AssertionError (with the first wrong output) unless the island of ``plan`` is right."""
    site = IslandSite(result="%r", source="%s", src_type="tensor<src>", dst_type="tensor<dst>",
                       element_type=ELEMENT_TYPES[plan.element_bits], in_loop=False)
    check = check_emitted(emit_island(plan, site).text, plan, site)
    assert check, f"{check.errors[0]}\nsrc={plan.src}\ndst={plan.dst}"
