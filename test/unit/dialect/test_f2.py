"""dialect/f2.py against brute force on small sizes (every subset of a handful of vectors)."""

from __future__ import annotations

from functools import reduce

from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.dialect import f2

vectors = st.lists(st.integers(min_value=0, max_value=(1 << 6) - 1), max_size=7)


def xor_of(vs, mask):
    return reduce(lambda acc, i: acc ^ vs[i], [i for i in range(len(vs)) if mask >> i & 1], 0)


def span(vs) -> set[int]:
    return {xor_of(vs, m) for m in range(1 << len(vs))}


def test_worked_example():
    assert f2.rank([3, 5, 6]) == 2
    assert f2.pivot_columns([3, 5, 6]) == [0, 1]
    assert f2.nullspace([3, 5, 6]) == [0b111]
    assert f2.low_bit(0b10100) == 2


@settings(max_examples=300, deadline=None)
@given(vectors)
def test_rank_is_log_of_span_size(vs):
    assert 1 << f2.rank(vs) == len(span(vs))


@settings(max_examples=300, deadline=None)
@given(vectors)
def test_pivot_columns_are_the_vectors_outside_the_span_of_earlier_ones(vs):
    assert f2.pivot_columns(vs) == [i for i, v in enumerate(vs) if v not in span(vs[:i])]


@settings(max_examples=300, deadline=None)
@given(vectors, st.integers(0, 63))
def test_in_span_and_express(vs, v):
    assert f2.in_span(v, vs) == (v in span(vs))
    combination = f2.EchelonBasis(vs).express(v)
    if v in span(vs):
        assert combination is not None and xor_of(vs, combination) == v
        # only pivot vectors are used (free variables are zero): Triton's choice
        pivots = f2.pivot_columns(vs)
        assert all(i in pivots for i in range(len(vs)) if combination >> i & 1)
    else:
        assert combination is None


def brute_rref(rows: list[int], num_cols: int) -> list[int]:
    """Textbook Gauss-Jordan, column 0 first (the pivot of a row is its lowest set bit)."""
    rows = [r & ((1 << num_cols) - 1) for r in rows]
    out: list[int] = []
    for c in range(num_cols):
        pick = next((r for r in rows if r >> c & 1 and r & ((1 << c) - 1) == 0), None)
        if pick is None:
            continue
        rows.remove(pick)
        rows = [r ^ pick if r >> c & 1 else r for r in rows]
        out = [r ^ pick if r >> c & 1 else r for r in out]
        out.append(pick)
        rows = [r for r in rows if r]
    return sorted(out, key=f2.low_bit)


@settings(max_examples=300, deadline=None)
@given(vectors, st.integers(1, 6))
def test_rref_matches_gauss_jordan(rows, num_cols):
    got = f2.rref(rows, num_cols)
    assert got == brute_rref(rows, num_cols)
    # reduced: every pivot column has exactly one set bit among the rows
    for r in got:
        p = f2.low_bit(r)
        assert sum(q >> p & 1 for q in got) == 1
    assert span(got) == span([r & ((1 << num_cols) - 1) for r in rows])


@settings(max_examples=300, deadline=None)
@given(vectors)
def test_nullspace_spans_every_zero_combination(vs):
    zero = {m for m in range(1 << len(vs)) if xor_of(vs, m) == 0}
    basis = f2.nullspace(vs)
    assert len(basis) == len(vs) - f2.rank(vs)
    assert span(basis) == zero


@settings(max_examples=300, deadline=None)
@given(vectors, vectors)
def test_span_intersection(a, b):
    got = f2.span_intersection(a, b)
    assert f2.rank(got) == len(got)  # a basis: independent
    assert span(got) == span(a) & span(b)


@settings(max_examples=300, deadline=None)
@given(vectors, st.integers(1, 6))
def test_complement_extends_to_a_basis(vs, dim):
    vs = [v & ((1 << dim) - 1) for v in vs]
    extra = f2.complement(vs, dim)
    assert all(e & (e - 1) == 0 for e in extra) and extra == sorted(extra)
    assert f2.rank(vs + extra) == dim
    assert len(extra) == dim - f2.rank(vs)


def test_wide_vectors_have_no_cap():
    vs = [1 << 100, (1 << 100) | 1, 1 << 70]
    assert f2.rank(vs) == 3 and f2.rank(vs + [(1 << 70) | 1 | (1 << 100)]) == 3
    assert f2.in_span(1, vs)


def test_apply_columns_on_ints_and_arrays():
    import numpy as np
    assert f2.apply_columns((3, 5), 0b11) == 6
    assert f2.apply_columns((3, 5), 0b10) == 5
    assert f2.apply_columns((1, 2, 4), 0b1101) == 0b101  # bit 3 has no column: ignored
    assert f2.apply_columns((), 7) == 0
    lanes = np.arange(4, dtype=np.int64)
    assert f2.apply_columns((3, 0), lanes).tolist() == [0, 3, 0, 3]
