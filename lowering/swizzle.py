"""The optimal swizzle: a shared-memory layout for a conversion through shared memory.

Paper §4.3 / App. 9.2 and Triton's ``lib/Tools/GenericSwizzling.cpp``.  Work in the flattened
element space of one CTA (k bits: element coordinate x in F2^k).  A shared-memory layout is an
invertible linear map from the scratch offset (k bits, least significant first) to
the element stored there; we build it from three groups of columns:

* ``vector`` - the lowest offset bits: elements that every thread stores *and* loads as one
  vector (both sides hold them in registers along the same directions, up to 128 bits);
* ``bank``   - the next bits: they spread one phase of a warp-wide access over the 32 banks;
* ``segment`` - the rest: which 128-byte window.  A bank conflict is two lanes of one phase that
  differ only in segment bits; so the segment should be spanned by directions that do *not*
  change inside a phase of either access.

Segment choice (Triton's ``computeSegment``): first take unit vectors that neither access varies
within a phase (free for both).  If there are not enough, pair a store-only direction a_i with a
load-only direction b_i and take a_i ^ b_i: it lies in the span of neither access set, so two
lanes of one phase (of either access) never differ by it and never land on the same bank in
different windows.  Only when even that runs out do we take a_i (write conflicts) and b_i (read
conflicts).

Worked example (paper Appendix C): 16x32 fp32, one warp, element x = m + 16 n (m 4 bits, n 5).
Stores: registers = m bits {1,2,4,8}, lanes = n bits {16..256}; loads: lanes = {1,2,4,8,16},
registers = {32,..,256}.  V = {} (no common register direction), bank = 5 bits, segment = 4 bits.
No unit vector is free; A = store-only lane directions {32,64,128,256}, B = load-only
{1,2,4,8}; segment = {33, 66, 132, 264} (m0^n1, m1^n2, ...), bank = the complement
{16,32,64,128,256} = the n bits.  Inverting gives offset(m, n) = 32 m + (n ^ 2m): row m of 32
words, columns xor-ed with 2m; both accesses are conflict-free.

Rounds (``reps``): segment directions that are register directions of *both* sides can be done
one after the other (store, barrier, load, barrier, store ...) through a smaller buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialect import f2


@dataclass(frozen=True)
class Swizzle:
    """Offset bit i -> element direction ``columns[i]`` (vector, then bank, then segment bits);
    ``reps`` are the round-index directions.  Together they form a basis of F2^k."""

    vector: tuple[int, ...]
    bank: tuple[int, ...]
    segment: tuple[int, ...]
    reps: tuple[int, ...]

    @property
    def columns(self) -> tuple[int, ...]:
        return self.vector + self.bank + self.segment

    @property
    def offset_bits(self) -> int:
        return len(self.columns)

    def inverse(self):
        """A function element -> (offset, round).  Bits above the swizzled space (the CTA part
        of an element in cross-CTA conversions, see ``lowering.shared``) are ignored."""
        basis = f2.EchelonBasis(self.columns + self.reps)
        n = self.offset_bits
        mask = (1 << n) - 1
        space = (1 << (n + len(self.reps))) - 1

        known: dict = {}   # the planner asks for the same few directions again and again

        def split(x: int) -> tuple[int, int]:
            result = known.get(x)
            if result is None:
                combo = basis.express(x & space)
                if combo is None:
                    raise ValueError(f"element {x:#x} is outside the swizzled space")
                result = known[x] = (combo & mask, combo >> n)
            return result
        return split


def swizzle_for(vector: list[int], store_set: list[int], load_set: list[int], store_registers: list[int],
                load_registers: list[int], k: int, element_bits: int, num_banks: int = 32,
                bank_bytes: int = 4) -> Swizzle:
    """Triton's optimal swizzle for given vector directions and per-phase access sets.

    ``store_set`` / ``load_set``: the element directions a warp-wide store / load varies inside
    one phase (its lanes' directions; the vector is added here).  ``*_registers``: each side's
    register directions (for the rounds and for widening one side's vectors).
    """
    vector = list(vector)
    wavefront_bits = num_banks * bank_bytes * 8
    vec_bits = (1 << len(vector)) * element_bits
    len_bank = min(max(0, (wavefront_bits // vec_bits).bit_length() - 1), k - len(vector))
    len_segment = k - len(vector) - len_bank

    set_src = {v for v in vector + store_set if v}
    set_dst = {v for v in vector + load_set if v}
    segment: list[int] = []
    taken = f2.EchelonBasis(vector)

    def take(v: int) -> bool:
        if len(segment) < len_segment and v and taken.insert(v):
            segment.append(v)
            return True
        return False

    for i in range(k):  # directions no access varies within a phase: free
        u = 1 << i
        if u not in set_src and u not in set_dst and not f2.in_span(u, list(set_src | set_dst)):
            take(u)
    if len(segment) < len_segment:
        a = sorted(set_src - set_dst)
        b = sorted(set_dst - set_src)
        if len(a) > len(b):
            a, b = b, a
        c = min(max(0, len_segment - len(a) - len(segment)), len(a))
        for i in range(c, len(a)):
            take(a[i] ^ b[i])
        for v in a[:c] + b[:c]:
            take(v)
        for i in range(k):  # whatever is left (only for layouts that are not permutation-like)
            take(1 << i)
    bank = f2.complement(vector + segment, k)

    # Rounds: segment directions that both sides hold in registers (outside the vector).
    both = set(store_registers) & set(load_registers)
    reps = [v for v in segment if v in both and v not in vector]
    segment = [v for v in segment if v not in reps]

    return Swizzle(tuple(vector), tuple(bank), tuple(segment), tuple(reps))


def widened(swizzle: Swizzle, registers: list[int]) -> Swizzle:
    """The same swizzle with ``registers``' directions first among the bank bits, so that this
    side's vectors may extend past the common vector (Triton reorders bank bases the same way
    when the common vector does not fill a bank).  Same banks, same conflicts for the other
    side's phases only if that side does not vary those bits: callers compare costs."""
    regs = [v for v in registers if v in swizzle.bank]
    bank = regs + [v for v in swizzle.bank if v not in regs]
    return Swizzle(swizzle.vector, tuple(bank), swizzle.segment, swizzle.reps)


def common_vector(src_registers: list[int], dst_registers: list[int], element_bits: int) -> list[int]:
    """Directions held in registers by both sides, capped at 128 bits, in an order that is the
    same for a conversion and its inverse.

    The first directions of the vector make the 32-bit words of the buffer: for 16-bit elements
    the first pairs two elements into a word, for 8-bit the first two pack four.  Triton's
    ``getVecBasisLdSt`` orders them as the source holds them; then a conversion A -> B and its
    return B -> A pair B's elements differently (A's first common register, then B's), and
    where B's values only pass through (a round trip in a loop) the words the first loads must
    be unpacked and packed again for the second's stores (in the PTX, two ``mov.b32 {%rs, %rs}``
    a word; one ``PRMT`` each in the SASS).  Ordered instead by how early a direction comes in
    either side's registers (its smaller rank; then its larger rank; then its offset), the words
    are the same both ways and LLVM folds the round trip's unpack and pack.

    Example, 16-bit elements (a held-out conversion, 4096 elements over 2 warps): A = blocked,
    one element a thread, registers [64, 128, 256, 512, 1024, 2048]; B = registers [2, 256,
    2048, 8, 128, 1].  Common: 128 (rank 1 in A, 4 in B), 256 (2 and 1), 2048 (5 and 2).  In A's
    order the vector is [128, 256, 2048] and in B's [256, 2048, 128]: words pair x with x ^ 128
    one way and x ^ 256 the other.  Here both ways it is [256, 128, 2048] (ranks (1, 2), (1, 4),
    (2, 5)).  Where the source's first register is common and the destination's is not (most
    blocked sources), this is Triton's order.

    For 16x32 transposes the vector is empty; for blocked[1,4] -> blocked[1,4] with other lane
    orders it is the 4 consecutive columns."""
    max_vec = max(0, (128 // element_bits).bit_length() - 1)
    rank_src = {v: i for i, v in reversed(list(enumerate(src_registers)))}
    rank_dst = {v: i for i, v in reversed(list(enumerate(dst_registers)))}
    common = [v for v in rank_src if v and v in rank_dst]

    def earliest_first(v):
        ranks = (rank_src[v], rank_dst[v])
        return min(ranks), max(ranks), v

    return sorted(common, key=earliest_first)[:max_vec]
