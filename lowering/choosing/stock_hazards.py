"""Conversions stock Triton's own lowering gets wrong or never finishes: never left to Triton.

The drop-in leaves a conversion to Triton where a measurement or the choice model says stock's
lowering is faster (``lowering.choosing.fitted_model``, ``lowering.choosing.measured_choices``), or where the user asks
for it.  Two kinds of conversion must never go there, whatever the gate says, because stock
does not compile them in finite time or computes them wrong.  Ours are verified exhaustively.

1. **A layout that is not a permutation** (``dialect.encodings.is_permutation_layout``: with
   its zero, broadcast bases removed, every basis a distinct single bit).  Stock's lowering is
   written for such layouts; triton 3.9 rejects any other ``#ttg.linear`` when it parses it
   ("LinearEncodingAttr requires a permutation matrix layout after removing broadcast bases"),
   triton 3.6 accepts it.  There, every conversion inside a warp goes through
   ``getWarpLayoutConvertDecomposition`` (lib/Analysis/Utility.cpp; from
   ``cvtNeedsWarpShuffle``, which the shared-memory allocation analysis asks for every
   conversion), which walks the cycles of the permutation P with ``S = T o P`` (S, T: the two
   layouts' register and lane parts) one single-bit column at a time until it is back where
   it started.  When a basis has two bits set, P is no permutation: the "next" bit it follows
   is not a bijection, some walk enters a cycle that does not hold its start, and the loop
   never ends (docs/stock-bugs.md, 1).  Reproducer (triton 3.6, sm_90)::

       i8 2x16, 1 warp:
       #ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>
       -> #ttg.linear<{register = [[0, 2], [1, 0], [0, 5], [0, 8]],
                       lane = [[0, 0], [0, 0], [0, 0], [0, 1], [0, 0]], warp = [], block = []}>

   The register basis [0, 5] sets bits 0 and 2 of dim 1.  Other scopes do not reach that walk,
   but nothing else in stock's lowering is built for such layouts either: ours takes them all.

2. **A byte swap inside the shuffled words, lost.**  For 8-bit elements (i8, fp8, and i1,
   which stock widens to bytes) stock's warp-shuffle path packs four elements into each word:
   register bits r0 and r1 pick the byte.  It splits the permutation P of register and lane bits
   (``S = T o P`` as above) into a register permutation, a lane permutation and one
   register-lane exchange done by shuffles, and folds the register bits that move next to the
   exchange into byte permutes (``prmt``).  A cycle of P that only swaps r0 and r1 (bytes 1
   and 2 of every word trade places) is next to no exchange, and stock's result never makes
   that swap: elements 1 and 2 of each group of four come out exchanged.  Measured on an H100
   (triton 3.6), stock was wrong on exactly the conversions of this kind, right on the rest,
   including those where r0 and r1 trade places with no register-lane exchange, and the rule
   held on conversions drawn after it was written (tallies, seeds and result files:
   docs/stock-bugs.md, 2).  Reproducer (triton 3.6, sm_90, i8 or i1, one warp; 16-bit and
   wider elements of the same pair are right)::

       i8 64, 1 warp:
       #ttg.linear<{register = [[1], [2], [16]], lane = [[0], [32], [0], [4], [8]], warp = [], block = []}>
       -> #ttg.linear<{register = [[2], [1]], lane = [[16], [0], [4], [8], [32]], warp = [], block = []}>
       (P: r0 <-> r1, r2 <-> l0 exchanged by shuffles; element 1 comes out at 2 and 2 at 1)

   So such a conversion is ours (``lost_byte_swap``), on every release and target: the class
   was measured on 3.6 only, and our plan for it is verified.
"""

from __future__ import annotations

from typing import Optional

from ...dialect.encodings import is_permutation_layout
from ...dialect.linear_layout import LinearLayout
from ..hardware import HardwareLayout, aligned_pair
from .stock_lowering import stock_warp_shuffles
from ..target import target_named

NOT_A_PERMUTATION = ("stock Triton's lowering assumes permutation layouts (3.9 rejects the others when it parses "
                     "them; on 3.6 a conversion inside a warp never finishes compiling)")
LOST_BYTE_SWAP = ("stock Triton's warp shuffles of 8-bit elements lose a swap of the two packed register bits "
                  "(measured wrong on an H100, triton 3.6)")

Slot = tuple[str, int]      # ("register", i) or ("lane", i): one bit of a thread's data index


def register_lane_permutation(src: LinearLayout, dst: LinearLayout, target) -> Optional[dict[Slot, Slot]]:
    """P with ``S = T o P`` on the register and lane bits of a conversion inside a warp, or None
    where the two layouts are no permutations.  Broadcast (zero) register bases are left out
    and the shorter side padded with zero bases; a source bit maps to the destination bit
    holding the same element bit, and the zero bits that do not line up pair off in order.
    Example (the module docstring's reproducer): r0 -> r1, r1 -> r0, r2 -> l0, l0 -> r2, ..."""
    if not (is_permutation_layout(src) and is_permutation_layout(dst)):
        return None
    target = target_named(target) if isinstance(target, str) else target
    dst = aligned_pair(src, dst, target.warp_size, target.name)
    order = src.out_dim_names
    sides = []
    for layout in (src, dst):
        hardware = HardwareLayout.of(layout, order).unique_registers()
        sides.append({"register": list(hardware.register), "lane": list(hardware.lane)})
    source, destination = sides
    for dim in ("register", "lane"):
        size = max(len(source[dim]), len(destination[dim]))
        for side in sides:
            side[dim] += [0] * (size - len(side[dim]))
    slots = [(dim, i) for dim in ("register", "lane") for i in range(len(source[dim]))]
    holder = {destination[d][i]: (d, i) for d, i in slots if destination[d][i]}
    permutation, source_zeros, destination_zeros = {}, [], []
    for d, i in slots:
        s, t = source[d][i], destination[d][i]
        if s:
            permutation[(d, i)] = holder.get(s)
        elif not t:
            permutation[(d, i)] = (d, i)
        else:
            source_zeros.append((d, i))
        if s and not t:
            destination_zeros.append((d, i))
    permutation.update(zip(source_zeros, destination_zeros))
    return permutation


def lost_byte_swap(src: LinearLayout, dst: LinearLayout, bits: int, target) -> bool:
    """Whether stock's warp-shuffle lowering of ``src -> dst`` loses a swap of the two packed
    register bits (the module docstring, 2.): elements of at most 8 bits, stock shuffles with one
    register-lane exchange, at least three register bits (two packed plus the exchanged one),
    and P swaps r0 and r1 with each other."""
    if bits > 8 or stock_warp_shuffles(src, dst, bits, target) is None:
        return False
    permutation = register_lane_permutation(src, dst, target)
    if permutation is None:
        return False
    registers = sum(1 for d, _ in permutation if d == "register")
    exchanged = any(d != e[0] for (d, _), e in permutation.items() if e is not None)
    r0, r1 = ("register", 0), ("register", 1)
    return exchanged and registers >= 3 and permutation.get(r0) == r1 and permutation.get(r1) == r0


def stock_hazard(src: LinearLayout, dst: LinearLayout, bits: int, target) -> str:
    """Why stock Triton's own lowering of ``src -> dst`` (``bits``-bit elements) must not be
    used, or "" where it may.  Example: the module docstring's first reproducer gives
    ``NOT_A_PERMUTATION``, its second ``LOST_BYTE_SWAP``; a blocked -> blocked f32 conversion ""."""
    if not (is_permutation_layout(src) and is_permutation_layout(dst)):
        return NOT_A_PERMUTATION
    if lost_byte_swap(src, dst, bits, target):
        return LOST_BYTE_SWAP
    return ""
