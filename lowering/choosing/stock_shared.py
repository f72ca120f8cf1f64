"""Which shared-memory instructions stock Triton's lowering of a conversion uses, and whether our
plan is the same code: a *twin* of stock's, which can only tie with it (or lose, where LLVM
schedules our island worse) while its island costs compile time.

Triton's NVIDIA lowering of a conversion through shared memory (``transferWithinBlockSwizzling``,
``optimalSwizzling`` in ``lib/Tools/GenericSwizzling.cpp``) tries instruction pairs, a store
form of the source and a load form of the destination, each a *tile*: which lane bits of the
warp hold consecutive 16-byte rows (``laneContig``) and which give the rows' addresses
(``laneAddr``):

=================  =================  =============  ==========================
instruction        laneContig         laneAddr       where
=================  =================  =============  ==========================
st/ld.shared.v4    -                  lanes 0, 1, 2  always
stmatrix/ldmatrix  lanes 0, 1         lanes 2, 3, 4  elements of 8 to 32 bits
``.trans``         lanes 2, 3, 4      lanes 0, 1     16-bit elements
=================  =================  =============  ==========================

A pair fits (``optimalSwizzlingTile``) when the two layouts share enough register directions to
fill 128 bits less what the tile's contiguous lanes hold, the tile lanes are not broadcast, and
each side's contiguous lanes land on the other side's registers or on the same contiguous lanes.
Among the pairs that fit Triton picks the fewest bank conflicts; when none does, it stores and
loads with ``st.shared``/``ld.shared`` vectors of the directions both sides hold in registers
(``optimalSwizzlingLdSt``).

``stock_matrix_pairs`` answers the first question from the two layouts.  Our planner builds its
own candidate for each pair the same way (``lowering.shared``), so where no matrix pair fits and
our pick is the plain-vector candidate with stock's vector width, our island is stock's code:
``is_stock_twin``.  Worked example (4 warps, f32 64x16): ``nvidia_mma`` v3 (instrShape 16x16) ->
``blocked<[1, 4], [8, 4], [4, 1]>``: the two share one register direction (column 1), so
``st.shared.v4`` does not fit (it needs two), and ``stmatrix`` needs the destination's lanes 0, 1
on source registers or lanes, which they are not: stock stores and loads ``.v2.b32`` (64 bits).
Our plain-vector candidate does the same: a twin.  Our ``stmatrix`` candidate (a plan Triton
does not build for this pair) is not.

Checked against Triton's PTX: ``benchmarks/plan_choice.py stock-shared``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...dialect.linear_layout import LinearLayout
from ..element_type import storage_bits_of
from ..hardware import HardwareLayout
from ..instructions import AccessForm, MemorySpace
from ..plan import Method, Scope, SharedAccess
from ..target import Target
from .stock_lowering import stock_warp_shuffles


@dataclass(frozen=True)
class Tile:
    """One instruction's tile: the lane bits of its contiguous rows and of its row addresses."""

    name: str
    lane_contig: tuple[int, ...]
    lane_addr: tuple[int, ...]

    @property
    def is_matrix(self) -> bool:
        return bool(self.lane_contig)


VECTOR_TILE = Tile("vector", (), (0, 1, 2))
MATRIX_TILE = Tile("matrix", (0, 1), (2, 3, 4))
MATRIX_TRANS_TILE = Tile("matrix.trans", (2, 3, 4), (0, 1))


def tiles_for(target: Target, element_bits: int, store: bool) -> list[Tile]:
    """The tiles Triton tries for a side (``getSrcDstTiles``): the plain vector always, the
    matrix instruction where the target has it and the elements are 8 to 32 bits, its
    transposed form for 16-bit elements."""
    tiles = [VECTOR_TILE]
    if (target.has_stmatrix if store else target.has_ldmatrix) and element_bits <= 32:
        tiles.append(MATRIX_TILE)
        if element_bits == 16:
            tiles.append(MATRIX_TRANS_TILE)
    return tiles


def _flat(layout: LinearLayout, dim: str) -> list[int]:
    """The directions of ``dim``'s bases, flattened (``HardwareLayout``: the first out dim lowest,
    as Triton's ``flattenOuts``)."""
    return list(HardwareLayout.of(layout).columns(dim))


def _vector_bases(element_bits: int) -> int:
    """log2 of the elements in 128 bits: the widest vector (and tile) Triton's search builds."""
    return max(0, (128 // element_bits).bit_length() - 1)


def _common_registers(regs_a: list[int], regs_b: list[int]) -> Optional[list[int]]:
    """The register directions both sides hold, in ``regs_a``'s order (Triton's
    ``intersectionBasis`` for single-bit directions); None where a direction is not a single
    bit (then Triton intersects the spans, which this module does not follow)."""
    if any(c & (c - 1) for c in regs_a + regs_b):
        return None
    others = set(regs_b)
    return [c for c in regs_a if c in others]


def _pair_fits(a: LinearLayout, b: LinearLayout, tile_a: Tile, tile_b: Tile, total: int) -> Optional[bool]:
    """Triton's ``optimalSwizzlingTile`` and ``getTile`` for one pair; None where not followed."""
    regs_a, regs_b = total - len(tile_a.lane_contig), total - len(tile_b.lane_contig)
    if regs_a < regs_b:                   # the side whose tile holds more registers first
        a, b, tile_a, tile_b, regs_a, regs_b = b, a, tile_b, tile_a, regs_b, regs_a
    common = _common_registers(_flat(a, "register"), _flat(b, "register"))
    if common is None:
        return None
    if len(common) < regs_b or not _tile_lanes_fit(a, b, tile_a, tile_b, regs_a - regs_b):
        return False
    vector = common[:regs_b] + [_flat(b, "lane")[i] for i in tile_b.lane_contig]
    # getTile: the row addresses not given by lanes come from registers outside the vector
    return all(len([r for r in _flat(side, "register") if r not in vector]) >= 3 - len(tile.lane_addr)
               for side, tile in ((a, tile_a), (b, tile_b)))


def _tile_lanes_fit(a: LinearLayout, b: LinearLayout, tile_a: Tile, tile_b: Tile, extra: int) -> bool:
    """The tiles' contiguous lanes hold data (no broadcast), ``b``'s first ``extra`` of them land
    on ``a``'s registers and the rest on ``a``'s contiguous lanes, in order."""
    lanes_a, lanes_b = _flat(a, "lane"), _flat(b, "lane")
    if len(lanes_a) < 5 or len(lanes_b) < 5 or any(lanes_a[i] == 0 for i in tile_a.lane_contig) \
            or any(lanes_b[i] == 0 for i in tile_b.lane_contig):
        return False
    b_to_a = b.invert_and_compose(a)      # b's hardware coordinates -> a's holding the same element
    on_registers = all(b_to_a.get_basis("lane", tile_b.lane_contig[i], "register") != 0 for i in range(extra))
    tail = tile_b.lane_contig[len(tile_b.lane_contig) - len(tile_a.lane_contig):] if tile_a.lane_contig else ()
    on_lanes = all(b_to_a.get_basis("lane", lane_b, "lane") == 1 << lane_a
                   for lane_a, lane_b in zip(tile_a.lane_contig, tail))
    return on_registers and on_lanes


def stock_matrix_pairs(src: LinearLayout, dst: LinearLayout, bits: int, target: Target) -> Optional[list[tuple[str, str]]]:
    """The (store, load) instruction pairs with a matrix side that fit stock Triton's tile
    search for ``src -> dst`` (empty: stock stores and loads plain vectors); None where the
    layouts' register directions are not single bits (not followed here)."""
    element_bits = storage_bits_of(bits)
    src = src.remove_zero_bases_along_dim("register")
    dst = dst.remove_zero_bases_along_dim("register")
    total = _vector_bases(element_bits)
    pairs = []
    for store in tiles_for(target, element_bits, store=True):
        for load in tiles_for(target, element_bits, store=False):
            if not (store.is_matrix or load.is_matrix):
                continue
            fits = _pair_fits(src, dst, store, load, total)
            if fits is None:
                return None
            if fits:
                pairs.append((store.name, load.name))
    return pairs


def stock_vector_elements(src: LinearLayout, dst: LinearLayout, bits: int) -> Optional[int]:
    """Elements per ``st.shared``/``ld.shared`` in stock's plain-vector lowering: the register
    directions both sides hold, up to 128 bits (``getVbasis`` as triton 3.6 has it); None where
    not followed."""
    element_bits = storage_bits_of(bits)
    regs_src = _flat(src.remove_zero_bases_along_dim("register"), "register")
    regs_dst = _flat(dst.remove_zero_bases_along_dim("register"), "register")
    common = _common_registers(regs_src, regs_dst)
    if common is None:
        return None
    return 1 << min(len(common), _vector_bases(element_bits))


def is_stock_twin(plan) -> bool:
    """Whether ``plan`` is stock Triton's own shared-memory code for its conversion: a plan of
    plain vector stores and loads within the CTA, for a conversion stock moves through shared
    memory too (not one it moves with warp shuffles: ``stock_lowering``), where no matrix pair
    fits stock's search and both vectors are stock's width (``stock_vector_elements``), in
    stock's rounds (a plan that moved rounds into a larger buffer, ``rounds_merged``, waits at
    fewer barriers than stock).  False wherever this module does not follow stock (then nothing
    is claimed)."""
    shared = plan.shared
    if plan.method is not Method.SHARED or shared is None or plan.scope not in (Scope.LANE, Scope.WARP):
        return False
    if shared.rounds_merged:
        return False
    accesses = [op for op in shared.ops if isinstance(op, SharedAccess)]
    if any(op.form is not AccessForm.VECTOR or op.space is not MemorySpace.SHARED for op in accesses) or \
            (plan.scope is Scope.LANE and
             stock_warp_shuffles(plan.src, plan.dst, plan.element_bits, plan.target) is not None):
        return False
    pairs = stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target)
    width = stock_vector_elements(plan.src, plan.dst, plan.element_bits)
    return pairs == [] and width is not None and shared.store_vector == width and shared.load_vector == width
