"""What stock Triton's own lowering of a conversion does, predicted from the two layouts.

The choice between our plan and stock's (``lowering/choosing/fitted_model.py``) is better made knowing what
stock would do with the pair.  This module predicts the part of Triton 3.6's
``convert_layout`` lowering that decides the conversions the choice was measured on: whether
stock moves the data with warp shuffles, and how many.  The rules were read off stock's PTX in
the training and fresh runs (``benchmarks/results/plan_*.json.gz``: the shuffle count of stock's
round trip A -> B -> A, ``chain_mix``), not from Triton's source; ``benchmarks/studies/choice_signal.py``
checks them against every measured row, and ``benchmarks/studies/stock_lowering_oracle.py``
against Triton 3.6's PTX on pairs never seen: exact but for rare misses, where stock shuffles more
than rule 3 predicts (tallies: docs/lowering-choice.md, 'What the rules rest on').

Terms.  C is the minimal conversion (``lowering.conversion``) of a lane-scope pair: for each
destination (register, lane) bit, the source (register, lane) bits holding that element.  Crl
is its destination-register -> source-lane part, Clr its destination-lane -> source-register
part, Cll its lane -> lane part.

1. **Shuffles or shared memory.**  Stock shuffles when the data stays inside a warp and at most
   one register bit trades places with one lane bit: rank(Crl) <= 1 and rank(Clr) <= 1 (any
   permutation of registers and of lanes around that one swap).  Anything more goes through
   shared memory.
2. **How many words move.**  R = 2^(register bits of the larger side, broadcast registers
   left out).  A shuffle moves 32 bits: 64-bit elements take two; 8- and 16-bit elements are
   packed along register bits that do not take part in the swap (up to 32 / bits elements per
   word).  Stock shuffles every word once...
3. **...or half of them, in place.**  When every lane bit other than the swapped one stays
   where it is (Cll maps it to itself, or it is broadcast), the swap is a butterfly: each lane
   trades one word of each pair of registers with its partner lane, one shuffle per pair.

Worked examples (4 warps, i32):

* ``blocked<[1, 8], [2, 16]> -> blocked<[1, 4], [2, 16]>`` on 32x16: destination lane bit 1
  reads source lane bit 0 (a lane permutation besides the swap), so not in place: R = 64
  registers, 64 shuffles; our planner's plan needs 32;
* the same sizes on 64x8 with ``threadsPerWarp = [4, 8]``: the other lanes stay put, in place:
  32 shuffles, as many as ours (ours can still be faster there: not every gain is the shuffle
  count, so the gate only counts on the clear case; the timings of both: docs/lowering-choice.md,
  'What the rules rest on').
"""

from __future__ import annotations

from typing import Optional

from ...dialect import f2
from ...dialect.linear_layout import LinearLayout
from ..conversion import minimal_conversion, scope_of
from ..element_type import storage_bits_of
from ..hardware import HardwareLayout, aligned_pair
from ..plan import Scope
from ..target import Target, target_named


def _columns(conversion: LinearLayout, in_dim: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The images of ``in_dim``'s bits: (their source-register parts, their source-lane parts)."""
    outs = conversion.out_dim_names
    register = outs.index("register") if "register" in outs else None
    lane = outs.index("lane") if "lane" in outs else None
    bases = conversion.bases.get(in_dim, ())
    return (tuple(b[register] if register is not None else 0 for b in bases),
            tuple(b[lane] if lane is not None else 0 for b in bases))


def _rank(columns: tuple[int, ...]) -> int:
    return len(f2.EchelonBasis([c for c in columns if c]))


def stock_warp_shuffles(src: LinearLayout, dst: LinearLayout, bits: int, target="sm_90") -> Optional[int]:
    """Warp shuffles per thread in stock Triton's lowering of ``src -> dst`` (``bits``-bit
    elements), or None where stock does not use warp shuffles (another scope, or more than one
    register/lane swap: shared memory).  Rules and examples: the module docstring."""
    target = target_named(target) if isinstance(target, str) else target
    dst = aligned_pair(src, dst, target.warp_size, target.name)
    conversion = minimal_conversion(src, dst)
    if scope_of(conversion) is not Scope.LANE:
        return None
    _, register_to_lane = _columns(conversion, "register")
    lane_to_register, lane_to_lane = _columns(conversion, "lane")
    swaps = max(_rank(register_to_lane), _rank(lane_to_register))
    if swaps > 1:
        return None
    order = src.out_dim_names
    register_bits = max(len(HardwareLayout.of(layout, order).unique_registers().register) for layout in (src, dst))
    element_bits = storage_bits_of(bits)
    if element_bits >= 32:
        words = (1 << register_bits) * (element_bits // 32)
    else:
        packable_bits = min(register_bits - swaps, (32 // element_bits).bit_length() - 1)
        words = 1 << (register_bits - packable_bits)
    swapped_lanes = {j for j, column in enumerate(lane_to_register) if column}
    in_place = all(column == 0 if j in swapped_lanes else column in (0, 1 << j)
                   for j, column in enumerate(lane_to_lane))
    if swaps and in_place:
        words //= 2
    return words


def stock_moves_nothing(src: LinearLayout, dst: LinearLayout, bits: int, target="sm_90",
                        unique_struct: bool = True) -> Optional[Scope]:
    """``Scope.NONE`` or ``Scope.REGISTER`` where stock Triton's lowering of ``src -> dst``
    issues no instruction for ``bits``-bit elements; None otherwise.  Triton picks its lowering by
    the in dims of the same minimal conversion (``minimalCvtLayout``; ``lowering.conversion``):
    none left, the two layouts are one map and the op is replaced by its source; registers
    only, the source's values are handed on in a new order (``transferWithinThread``).  Either way
    the values are forwarded, as our no-op and rename islands forward them.

    One exception, i1 where a side holds copies of a register (a register basis is zero: a
    tensor smaller than the layout's tile) and the release's LLVM struct keeps every copy
    (``unique_struct`` False: ``TritonConventions.struct_holds_unique_registers``, before triton
    3.9): stock's kernel then widens and narrows each copy (a ``selp`` and an ``and`` per copy)
    where our island forwards each distinct register once.  Example (sm_80, triton 3.6):
    ``blocked<[8, 2], [4, 8]> -> blocked<[8, 2], [8, 4]>`` of a 1x1 i1 tensor, one warp: stock 16
    selects, ours 1.  Everywhere else stock's i1 kernel and ours are the same instructions
    (``benchmarks/studies/i1_forwarding.py``: 130 pairs a release, identical but for such copies)."""
    if bits == 1 and not unique_struct and (holds_register_copies(src) or holds_register_copies(dst)):
        return None
    target = target_named(target) if isinstance(target, str) else target
    dst = aligned_pair(src, dst, target.warp_size, target.name)
    scope = scope_of(minimal_conversion(src, dst))
    return scope if scope in (Scope.NONE, Scope.REGISTER) else None


def holds_register_copies(layout: LinearLayout) -> bool:
    """Whether two registers of a thread hold the same element (a zero register basis)."""
    return layout.has_in_dim("register") and any(not any(basis) for basis in layout.bases["register"])
