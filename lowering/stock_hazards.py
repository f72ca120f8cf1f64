"""Conversions stock Triton's own lowering gets wrong or never finishes: never left to Triton.

The drop-in leaves a conversion to Triton where a measurement or the choice model says stock's
lowering is faster (``lowering.choice``, ``lowering.measured_choices``), or where the user asks
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
   never ends.  Reproducer (triton 3.6, sm_90; stock did not finish in 120 s, ours 0.3 s)::

       i8 2x16, 1 warp:
       #ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>
       -> #ttg.linear<{register = [[0, 2], [1, 0], [0, 5], [0, 8]],
                       lane = [[0, 0], [0, 0], [0, 0], [0, 1], [0, 0]], warp = [], block = []}>

   The register basis [0, 5] sets bits 0 and 2 of dim 1.  Other scopes do not reach that walk,
   but nothing else in stock's lowering is built for such layouts either: ours takes them all.

2. **i1 through stock's warp shuffles.**  Stock widens i1 to bytes and packs four into each
   shuffled word (byte permutes pick them apart after the shuffle, as for i8).  On an H100
   (triton 3.6) its result for a 16x16 ``nvidia_mma`` v2 -> ``#ttg.linear`` conversion in one
   warp was wrong in 4 of 256 elements (``benchmarks/results/fuzz_case_seed19_701.txt``), ours
   right in all.  So an i1 conversion stock would lower by warp shuffles
   (``lowering.stock_lowering.stock_warp_shuffles``) is ours too.
"""

from __future__ import annotations

from ..dialect.encodings import is_permutation_layout
from ..dialect.linear_layout import LinearLayout
from .stock_lowering import stock_warp_shuffles

NOT_A_PERMUTATION = ("stock Triton's lowering assumes permutation layouts (3.9 rejects the others when it parses "
                     "them; on 3.6 a conversion inside a warp never finishes compiling)")
I1_SHUFFLES = ("stock Triton's warp-shuffle lowering of i1 (four packed to a word) was measured wrong on an H100 "
               "(triton 3.6)")


def stock_hazard(src: LinearLayout, dst: LinearLayout, bits: int, target) -> str:
    """Why stock Triton's own lowering of ``src -> dst`` (``bits``-bit elements) must not be
    used, or "" where it may.  Example: the module docstring's reproducer gives
    ``NOT_A_PERMUTATION``; a blocked -> blocked f32 conversion gives ""."""
    if not (is_permutation_layout(src) and is_permutation_layout(dst)):
        return NOT_A_PERMUTATION
    if bits == 1 and stock_warp_shuffles(src, dst, bits, target) is not None:
        return I1_SHUFFLES
    return ""
