"""The optimal swizzle (paper §4.3, Triton's GenericSwizzling): known answers and brute force."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.dialect import f2
from linear_layouts.lowering.swizzle import common_vector, swizzle_for


def conflicts(columns, access_lanes, element_bytes=4, banks=32):
    """Max over banks of distinct words hit by one phase (all 2^len(access_lanes) lane
    combinations), for a swizzle given as offset bit -> element columns."""
    basis = f2.EchelonBasis(columns)
    n = len(columns)

    def offset(x):
        return basis.express(x) & ((1 << n) - 1)
    words = set()
    per_bank = {}
    for bits in itertools.product((0, 1), repeat=len(access_lanes)):
        x = 0
        for b, v in zip(bits, access_lanes):
            if b:
                x ^= v
        word = offset(x) * element_bytes // 4
        if word not in words:
            words.add(word)
            per_bank[word % banks] = per_bank.get(word % banks, 0) + 1
    return max(per_bank.values())


def test_appendix_c_segment_and_bank():
    # element x = m + 16 n; store lanes = n bits, load lanes = m bits and n bit 0
    store_lanes = [16, 32, 64, 128, 256]
    load_lanes = [1, 2, 4, 8, 16]
    sw = swizzle_for([], store_lanes, load_lanes, [1, 2, 4, 8], [32, 64, 128, 256], 9, 32)
    assert sw.vector == ()
    assert sorted(sw.segment) == [33, 66, 132, 264]  # m0^n1, m1^n2, m2^n3, m3^n4
    assert sorted(sw.bank) == [16, 32, 64, 128, 256]
    assert sw.reps == ()
    assert conflicts(sw.columns, store_lanes) == 1
    assert conflicts(sw.columns, load_lanes) == 1


def test_row_major_would_conflict_16_way():
    # the unswizzled buffer: offset = 32 m + n, i.e. columns n bits first, then m bits
    row_major = [16, 32, 64, 128, 256, 1, 2, 4, 8]
    assert conflicts(row_major, [1, 2, 4, 8, 16]) == 16


def test_common_vector_is_capped_at_128_bits():
    assert common_vector([1, 2, 4, 8], [1, 2, 4, 8], 16) == [1, 2, 4]
    assert common_vector([1, 2, 4, 8], [1, 2, 4, 8], 32) == [1, 2]
    assert common_vector([1, 2], [2, 4], 32) == [2]
    assert common_vector([1, 2, 4], [1, 2, 4], 8) == [1, 2, 4]


def test_common_vector_is_the_same_for_a_conversion_and_its_inverse():
    # the worked example of common_vector: 16-bit, A = one element a thread over 4096
    a = [64, 128, 256, 512, 1024, 2048]
    b = [2, 256, 2048, 8, 128, 1]
    assert common_vector(a, b, 16) == common_vector(b, a, 16) == [256, 128, 2048]
    # the source's first register common, the destination's not: Triton's (source) order
    assert common_vector([1, 2, 4, 8], [16, 4, 2, 1], 16) == [1, 2, 4]
    # both sides' first registers common, each as late in the other side: the smaller offset first
    assert common_vector([1, 2, 4, 8], [8, 4, 2, 1], 16) == common_vector([8, 4, 2, 1], [1, 2, 4, 8], 16) == [1, 8, 2]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0] + [1 << i for i in range(12)]), max_size=8),
       st.lists(st.sampled_from([0] + [1 << i for i in range(12)]), max_size=8),
       st.sampled_from([8, 16, 32, 64]))
def test_common_vector_property(src, dst, bits):
    """Symmetric in the two sides, made of directions both hold (no zero, none twice), capped at
    128 bits, and as long as the common set allows."""
    vector = common_vector(src, dst, bits)
    assert vector == common_vector(dst, src, bits)
    common = {v for v in src if v} & set(dst)
    assert set(vector) <= common and len(set(vector)) == len(vector)
    assert len(vector) == min(len(common), (128 // bits).bit_length() - 1)


def test_rounds_are_register_directions_of_both_sides():
    # 2 warps x 32 lanes x 4 registers; registers 256 in both: a round direction
    sw = swizzle_for([1], [2, 4, 8, 16, 32], [64, 128, 2, 4, 8], [1, 256], [1, 256], 9, 32)
    assert 256 in sw.reps
    assert set(sw.columns).isdisjoint(sw.reps)
    assert f2.rank(list(sw.columns) + list(sw.reps)) == 9


def test_random_permutation_layouts_are_conflict_free_when_possible():
    """When the two lane sets (with the vector) leave enough free directions, both accesses are
    conflict-free: check with brute force on random permutation-like layouts."""
    rng = random.Random(3)
    for _ in range(200):
        k = rng.randint(6, 10)
        units = [1 << i for i in range(k)]
        store = rng.sample(units, 5)
        load = rng.sample(units, 5)
        sw = swizzle_for([], store, load, [], [], k, 32)
        assert f2.rank(sw.columns) == k
        a = set(store) - set(load)
        b = set(load) - set(store)
        free = k - len(set(store) | set(load))
        len_segment = k - 5
        if free + min(len(a), len(b)) >= len_segment:
            assert conflicts(sw.columns, store) == 1
            assert conflicts(sw.columns, load) == 1
