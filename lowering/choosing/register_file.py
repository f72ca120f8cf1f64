"""Conversions whose values do not fit in a thread's registers go to stock Triton.

A conversion holds its source values until they are stored (or shuffled) and its destination
values from the first load on; where the two layouts together hold more 32-bit values a thread
than the target has registers a thread (``Target.registers_per_thread``: 255 on NVIDIA, 512 on
CDNA), the kernel around the conversion spills to local memory whoever lowers it.  Its time is
then decided by where ptxas places those spills, not by the conversion's instructions, and no
cost model of ours sees that: on an H100 (triton 3.6), the islands of 29 such conversions drawn
after this rule was written ran from 0.03x to 3.9x stock, some with exactly stock's instruction
mix, and followed the bytes ptxas spilled, more or fewer than stock's kernel
(``benchmarks/results/register_file_rule.md``).  Stock's code, at least, is what the kernel's
author timed.

Counting: an element of 32 bits or fewer takes one 32-bit register (Triton's LLVM struct holds one
value per element; ptxas packs 16-bit values into one register only where an instruction works on
pairs), a 64-bit element two.

Example (sm_90): a bf16 slice whose lanes hold the same 1,024 registers, to a linear layout of
32: 1,056 values against 255 registers, stock's.  A 64x64 f16 accumulator over one warp (128
registers) to a blocked layout of 128: 256 against 255, stock's.  A 1,024-element i32 slice over
one warp (128 registers) to a blocked layout of 32: 160, planned as any other.
"""

from __future__ import annotations

from ...dialect.linear_layout import LinearLayout
from ..remark_words import detail
from ..target import Target


def registers_held(layout: LinearLayout, bits: int) -> int:
    """32-bit registers a thread holds on ``layout`` for elements of ``bits`` (copies counted)."""
    return layout.in_dims.get("register", 1) * max(1, bits // 32)


def past_register_file(src: LinearLayout, dst: LinearLayout, bits: int, target: Target) -> str:
    """Why this conversion is left to stock because its two layouts hold more values a thread than
    ``target`` has registers ("" when they fit, or the target's register file is unknown)."""
    limit = target.registers_per_thread
    held = registers_held(src, bits) + registers_held(dst, bits)
    if not limit or held <= limit:
        return ""
    return (f"stock Triton's lowering: the two layouts hold {held} 32-bit values a thread "
            f"({registers_held(src, bits)} + {registers_held(dst, bits)}), more than the {limit} registers a "
            f"thread has on {target.name}: the kernel spills whoever lowers the conversion, and where the spills "
            f"go, not the conversion's instructions, decides its time" + detail("lowering/choosing/register_file.py"))
