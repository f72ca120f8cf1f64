"""LinearLayout: Triton's worked examples, error messages, and the algebra's laws (hypothesis).

The worked examples come from Triton's unit tests (unittest/Tools/LinearLayoutTest.cpp) and the
header comments of include/triton/Tools/LinearLayout.h.  Operations Triton's Python binding does not expose
(division, reshape, sublayout, quotient, free variables, ...) are tested here by their laws;
the bound ones are also compared with Triton itself in test_linear_layout_oracle.py.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from linear_layouts.dialect import f2
from linear_layouts.dialect.linear_layout import LayoutError, LinearLayout, lstsq, supremum

L = LinearLayout
identity = LinearLayout.identity_1d
zeros = LinearLayout.zeros_1d


def every_input(layout: LinearLayout):
    """Every input of a small layout, as apply() mappings."""
    names = layout.in_dim_names
    for values in itertools.product(*(range(layout.in_dim_size(n)) for n in names)):
        yield dict(zip(names, values))


# ------------------------------------------------------------------------------ worked examples

def test_in_dim_size_or_one_is_one_where_the_dim_is_absent():
    layout = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4]]}, ["dim0"])
    assert layout.in_dim_size_or_one("register") == 4 and layout.in_dim_size_or_one("lane") == 2
    assert layout.in_dim_size_or_one("warp") == 1
    with pytest.raises(LayoutError):
        layout.in_dim_size("warp")


def test_invert_and_compose_permutation():  # triton.md §1.7
    l1 = L.from_bases({"in1": [[2], [1], [4]]}, ["out"])
    l2 = L.from_bases({"in2": [[4], [1], [2]]}, ["out"])
    assert l1.invert_and_compose(l2) == L.from_bases({"in1": [[4], [2], [1]]}, {"in2": 8})


def test_invert_and_compose_non_injective():  # triton.md §1.7
    l1 = L.from_bases({"in1": [[2], [1], [4]]}, ["out"])
    l2 = L.from_bases({"in2": [[0], [2], [1], [4]]}, ["out"])
    c = l1.invert_and_compose(l2)
    assert c == L.from_bases({"in1": [[2], [4], [8]]}, {"in2": 16}, require_surjective=False)
    assert not c.is_surjective()
    assert c.compose(l2) == l1


def test_compose():  # triton.md §1.7
    l1 = L.from_bases({"in1": [[1, 1], [0, 1]], "in2": [[1, 0], [1, 2]]}, ["out1", "out2"])
    l2 = L.from_bases({"out1": [[2, 2], [1, 0]], "out2": [[1, 1], [2, 1]]}, ["out3", "out4"])
    c = l1.compose(l2)
    assert c == L.from_bases({"in1": [[3, 3], [1, 1]], "in2": [[2, 2], [0, 3]]}, {"out3": 4, "out4": 4},
                             require_surjective=False)
    assert not c.is_surjective()


def test_concat_ins_stacks_in_dims_over_the_same_outs():
    # register bit 0 -> x 1, lane bits -> x 2, 4: the layout of 8 elements over 2 registers x 4 lanes
    registers = L.from_bases({"register": [[1]]}, {"x": 8}, require_surjective=False)
    lanes = L.from_bases({"lane": [[2], [4]]}, {"x": 8}, require_surjective=False)
    both = registers.concat_ins(lanes)
    assert both == L.from_bases({"register": [[1]], "lane": [[2], [4]]}, ["x"])
    assert both.in_dim_names == ["register", "lane"]
    assert both.apply({"register": 1, "lane": 3}) == {"x": 7}
    with pytest.raises(LayoutError, match=r"concat_ins: in dims \['register'\] appear in both layouts"):
        both.concat_ins(registers)
    with pytest.raises(LayoutError, match="concat_ins: out dims differ"):
        registers.concat_ins(L.from_bases({"lane": [[1]]}, {"y": 2}))


def test_concat_outs_joins_components_of_the_same_ins():
    rows = L.from_bases({"lane": [[1], [0]]}, {"row": 2}, require_surjective=False)
    cols = L.from_bases({"lane": [[0], [1]]}, {"col": 2}, require_surjective=False)
    grid = rows.concat_outs(cols)
    assert grid == L.from_bases({"lane": [[1, 0], [0, 1]]}, ["row", "col"])
    assert [grid.apply({"lane": i}) for i in range(4)] == [
        {"row": 0, "col": 0}, {"row": 1, "col": 0}, {"row": 0, "col": 1}, {"row": 1, "col": 1}]
    with pytest.raises(LayoutError, match=r"concat_outs: out dims \['row'\] appear in both layouts"):
        grid.concat_outs(rows)
    with pytest.raises(LayoutError, match="concat_outs: in dims differ"):
        rows.concat_outs(L.from_bases({"lane": [[1]]}, {"col": 2}))


@given(st.integers(0, 2 ** 16 - 1), st.integers(1, 3), st.integers(1, 3))
def test_concat_outs_then_ins_agree_with_apply(seed, in_bits, out_bits):
    """Property: a concatenation applies as its parts do (ins: XOR of the parts' images; outs:
    the parts' images side by side)."""
    rng = random.Random(seed)
    a = L.from_bases({"i": [[rng.randrange(1 << out_bits)] for _ in range(in_bits)]}, {"p": 1 << out_bits},
                     require_surjective=False)
    b = L.from_bases({"i": [[rng.randrange(1 << out_bits)] for _ in range(in_bits)]}, {"q": 1 << out_bits},
                     require_surjective=False)
    c = L.from_bases({"j": [[rng.randrange(1 << out_bits)] for _ in range(in_bits)]}, {"p": 1 << out_bits},
                     require_surjective=False)
    outs, ins = a.concat_outs(b), a.concat_ins(c)
    for i in range(1 << in_bits):
        assert outs.apply({"i": i}) == {**a.apply({"i": i}), **b.apply({"i": i})}
        for j in range(1 << in_bits):
            assert ins.apply({"i": i, "j": j}) == {"p": a.apply({"i": i})["p"] ^ c.apply({"j": j})["p"]}


def test_reshape_outs():  # triton.md §1.7
    layout = L.from_bases({"in1": [[1], [4], [8]], "in2": [[3]]}, ["out"])
    assert layout.out_dims == {"out": 16}
    assert layout.reshape_outs({"out2": 2, "out3": 8}) == L.from_bases(
        {"in1": [[1, 0], [0, 2], [0, 4]], "in2": [[1, 1]]}, {"out2": 2, "out3": 8}, require_surjective=False)


def test_free_variable_masks():  # triton.md §1.7
    layout = identity(2, "in", "out") * zeros(4, "in", "out") * identity(4, "in", "out") * zeros(2, "in", "out")
    assert layout.free_variable_masks() == {"in": 0b100110}


@pytest.mark.parametrize("bases, expected", [([[1], [2], [4], [9]], 1), ([[1], [2], [4], [10]], 2),
                                             ([[1], [4], [2]], 2)])
def test_num_consecutive_in_out(bases, expected):  # triton.md §1.7
    assert L.from_bases({"in": bases}, ["out"]).num_consecutive_in_out() == expected


def test_apply():  # triton.md §1.7
    layout = L.from_bases({"in1": [[4, 2], [2, 1], [1, 0]], "in2": [[1, 2], [2, 1]]}, {"out1": 8, "out2": 4},
                          require_surjective=False)  # rank 4 of 5 out bits
    assert layout.apply({"in1": 1, "in2": 0}) == {"out1": 4, "out2": 2}
    assert layout.apply({"in2": 1, "in1": 0}) == {"out1": 1, "out2": 2}


def test_empty_str():
    assert str(L.empty()) == "\n(empty layout)"
    assert str(L.from_bases({}, {"o": 4}, require_surjective=False)) == "\n(empty layout with out-dims [o (size 4)])"


def test_str_format():  # triton.md §1.6
    layout = L.from_bases({"register": [[0, 1], [8, 0]], "lane": [[0, 2]], "block": []}, {"dim0": 16, "dim1": 4},
                          require_surjective=False)
    assert str(layout) == ("\n - register=1 -> (0, 1)\n   register=2 -> (8, 0)\n - lane=1 -> (0, 2)\n"
                           " - block is a size 1 dimension\nwhere out dims are: [dim0 (size 16), dim1 (size 4)]")


def test_product_header_examples():  # triton.md §1.5
    assert identity(4, "i", "o") * identity(2, "i", "o") == identity(8, "i", "o")
    mod4 = identity(4, "i", "o") * zeros(2, "i", "o")
    assert [mod4.apply({"i": x})["o"] for x in range(8)] == [x % 4 for x in range(8)]
    half = zeros(2, "i", "o") * identity(4, "i", "o")
    assert [half.apply({"i": x})["o"] for x in range(8)] == [x // 2 for x in range(8)]
    two_outs = identity(4, "in", "out1") * identity(8, "in", "out2")
    assert two_outs.bases == {"in": ((1, 0), (2, 0), (0, 1), (0, 2), (0, 4))}
    assert identity(1, "i", "o") != L.empty() and identity(1, "i", "o").in_dims == {"i": 1}


def test_inferred_sizes_are_next_power_of_two_strictly_greater():  # triton.md §1.3
    layout = L.from_bases({"in": [[4, 0], [3, 1], [0, 2], [1, 0], [2, 0]]}, ["a", "b"])
    assert layout.out_dims == {"a": 8, "b": 4}
    assert L.from_bases({"in": [[0]]}, ["o"]).out_dims == {"o": 1}


def test_figure1_of_the_paper():
    layout = L.from_bases({"register": [[0, 1], [8, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                           "warp": [[0, 8]]}, ["dim0", "dim1"])
    assert layout.apply({"register": 0, "lane": 5, "warp": 0}) == {"dim0": 1, "dim1": 2}
    assert layout.apply({"register": 3, "lane": 5, "warp": 0}) == {"dim0": 9, "dim1": 3}
    assert layout.is_invertible()


def test_invert_and_compose_identity_dims_need_disjoint_bits():
    """Triton 3.9's broadcasting heuristic: an in dim with identical bases maps to itself only
    if no other in dim of either layout touches its output bits (see the oracle tests)."""
    this = L.from_bases({"warp": [[2]]}, {"o": 4}, require_surjective=False)
    disjoint = L.from_bases({"lane": [[1]], "warp": [[2]]}, ["o"])
    overlapping = L.from_bases({"lane": [[1], [2]], "warp": [[2]]}, ["o"])
    assert this.invert_and_compose(disjoint).bases == {"warp": ((0, 1),)}  # warp -> warp
    assert this.invert_and_compose(overlapping).bases == {"warp": ((2, 0),)}  # warp 1 -> lane 2
    # this layout's other dims count too (values checked against triton 3.9's binding)
    outer = L.from_bases({"lane": [[1]], "warp": [[2], [2]]}, ["o"])
    same = L.from_bases({"lane": [[1]], "warp": [[2], [2]]}, ["o"])
    mixing = L.from_bases({"lane": [[3]], "warp": [[2], [2]]}, ["o"])
    assert same.invert_and_compose(outer).bases == {"lane": ((1, 0),), "warp": ((0, 1), (0, 2))}
    assert mixing.invert_and_compose(outer).bases == {"lane": ((1, 1),), "warp": ((0, 1), (0, 1))}
    # both layouts broadcast over block: block maps to itself, not all to block 0
    src = L.from_bases({"lane": [[1], [2]], "block": [[0]]}, ["o"])
    dst = L.from_bases({"lane": [[2], [1]], "block": [[0]]}, ["o"])
    assert src.invert_and_compose(dst).bases == {"lane": ((2, 0), (1, 0)), "block": ((0, 1),)}


def test_supremum():
    assert supremum(["register", "lane"], ["lane", "warp"]) == ["register", "lane", "warp"]
    assert supremum(["a", "c"], ["b", "c"]) == ["a", "b", "c"]
    with pytest.raises(LayoutError, match="contradict"):
        supremum(["a", "b"], ["b", "a"])


# ------------------------------------------------------------------------------ errors

@pytest.mark.parametrize("make, match", [
    (lambda: L.from_bases({"in": [[1]]}, {"out": 3}), "out-dim 'out' has size 3"),
    (lambda: L.from_bases({"in": [[1, 0]]}, ["out"]), "basis 0 of in-dim 'in'.*one component per out dim"),
    (lambda: L.from_bases({"in": [[1], [2]]}, {"out": 2}), "basis 1 of in-dim 'in'.*component 2.*'out'.*less than"),
    (lambda: L.from_bases({"in": [[-1]]}, {"out": 2}), "basis 0 of in-dim 'in'.*non-negative"),
    (lambda: L.from_bases({"in": [[0], [2]]}, ["out"]), "surjective"),
    (lambda: L.from_bases({"in": [[1]]}, {"out": 4}), "surjective"),
    (lambda: L.from_bases([("in", [[1]]), ("in", [[1]])], {"out": 2}), "duplicate in-dim"),
    (lambda: identity(4, "i", "o").compose(identity(4, "x", "y")), "compose: out dims \\['o'\\]"),
    (lambda: identity(8, "i", "o").compose(identity(4, "o", "p")), "out-dim 'o' has size 8"),
    (lambda: identity(4, "i", "o").invert_and_compose(identity(4, "i", "p")), "invert_and_compose: out dims"),
    (lambda: identity(8, "i", "o").invert_and_compose(identity(4, "j", "o")), "out-dim 'o' has size 8"),
    (lambda: identity(4, "i", "o").invert_and_compose(zeros(4, "j", "o", 4)), "does not cover"),
    (lambda: identity(4, "i", "o").apply({"j": 1}), "apply needs exactly the in dims"),
    (lambda: zeros(4, "i", "o", 4).invert(), "not invertible"),
    (lambda: identity(4, "i", "o").transpose_ins(["j"]), "not a permutation"),
    (lambda: identity(4, "i", "o").reshape_ins({"a": 3}), "size 3 of in-dim 'a'"),
])
def test_bad_input_raises_layout_error_naming_the_culprit(make, match):
    with pytest.raises(LayoutError, match=match):
        make()


def test_non_surjective_allowed_when_asked():
    layout = L.from_bases({"in": [[1]]}, {"out": 4}, require_surjective=False)
    assert not layout.is_surjective() and layout.is_injective()


# ------------------------------------------------------------------------------ hypothesis strategies

IN_NAMES = ["register", "lane", "warp", "block"]
OUT_NAMES = ["dim0", "dim1", "dim2"]


@st.composite
def layouts(draw, in_names=None, out_dims=None, max_in_bits=3, max_out_bits=3, surjective=False):
    """Small layouts (<= 3 in dims x max_in_bits bits) from the three families: permutation-like
    (unit bases), broadcasting (some zero bases) and dense XOR mixes."""
    if in_names is None:
        in_names = draw(st.lists(st.sampled_from(IN_NAMES[:3]), min_size=1, max_size=3, unique=True))
    if out_dims is None:
        names = draw(st.lists(st.sampled_from(OUT_NAMES[:2]), min_size=1, max_size=2, unique=True))
        out_dims = {n: 1 << draw(st.integers(0, max_out_bits)) for n in names}
    family = draw(st.sampled_from(["perm", "bcast", "dense"]))
    outs = list(out_dims.items())
    bits = [(j, k) for j, (_, s) in enumerate(outs) for k in range(s.bit_length() - 1)]
    bases = {}
    for name in in_names:
        n = draw(st.integers(0, max_in_bits))
        bs = []
        for _ in range(n):
            basis = [0] * len(outs)
            if family == "dense":
                basis = [draw(st.integers(0, s - 1)) for _, s in outs]
            elif bits and not (family == "bcast" and draw(st.booleans())):
                j, k = draw(st.sampled_from(bits))
                basis[j] = 1 << k
            bs.append(basis)
        bases[name] = bs
    layout = L.from_bases(bases, dict(outs), require_surjective=False)
    if surjective:
        assume(layout.is_surjective())
    return layout


SETTINGS = settings(max_examples=150, deadline=None)


# ------------------------------------------------------------------------------ laws

@SETTINGS
@given(st.data())
def test_divide_left_undoes_product(data):
    ins = data.draw(st.lists(st.sampled_from(IN_NAMES), min_size=1, max_size=3, unique=True))
    outs = data.draw(st.lists(st.sampled_from(OUT_NAMES), min_size=1, max_size=2, unique=True))
    b = data.draw(layouts(in_names=ins, out_dims={o: 1 << data.draw(st.integers(0, 2)) for o in outs}))
    c = data.draw(layouts(in_names=ins, out_dims={o: 1 << data.draw(st.integers(0, 2)) for o in outs}))
    assert (b * c).divide_left(b) == c


@SETTINGS
@given(st.data())
def test_divide_right_undoes_product(data):
    ins = data.draw(st.lists(st.sampled_from(IN_NAMES), min_size=1, max_size=3, unique=True))
    outs = data.draw(st.lists(st.sampled_from(OUT_NAMES), min_size=1, max_size=2, unique=True))
    b = data.draw(layouts(in_names=ins, out_dims={o: 1 << data.draw(st.integers(0, 2)) for o in outs}))
    c = data.draw(layouts(in_names=ins, out_dims={o: 1 << data.draw(st.integers(0, 2)) for o in outs}))
    assert (c * b).divide_right(b) == c


@SETTINGS
@given(layouts(), layouts())
def test_product_is_apply_of_stacked_bits(inner, outer):
    """(inner * outer)(x) puts outer(x's high bits) above inner(x's low bits), per dim."""
    try:
        prod = inner * outer
    except LayoutError:  # contradictory dim orders
        return
    for x in itertools.islice(every_input(prod), 64):
        lo = {n: v % inner.in_dim_size(n) if inner.has_in_dim(n) else 0 for n, v in x.items()}
        hi = {n: v >> inner.in_dim_size_log2(n) if inner.has_in_dim(n) else v for n, v in x.items()}
        a = inner.apply({n: lo[n] for n in inner.in_dim_names})
        b = outer.apply({n: hi[n] for n in outer.in_dim_names})
        expected = {d: a.get(d, 0) | (b.get(d, 0) << (inner.out_dim_size_log2(d) if d in a else 0))
                    for d in prod.out_dim_names}
        assert prod.apply(x) == expected


@SETTINGS
@given(st.data())
def test_compose_agrees_with_apply_on_every_input(data):
    inner = data.draw(layouts())
    mid = list(inner.out_dims.items())
    data.draw(st.randoms()).shuffle(mid)
    outer = data.draw(layouts(in_names=[], out_dims={"x": 4, "y": 2}))
    outer_bases = {}
    for name, size in mid:  # outer's in dims: inner's out dims, possibly larger
        k = size.bit_length() - 1 + data.draw(st.integers(0, 1))
        outer_bases[name] = [[data.draw(st.integers(0, 3)), data.draw(st.integers(0, 1))] for _ in range(k)]
    outer = L.from_bases(outer_bases, {"x": 4, "y": 2}, require_surjective=False)
    composed = inner.compose(outer)
    for x in every_input(inner):
        assert composed.apply(x) == outer.apply(inner.apply(x))


@SETTINGS
@given(st.data())
def test_invert_and_compose_solves_the_equation(data):
    this = data.draw(layouts())
    outer = data.draw(layouts(in_names=data.draw(st.lists(st.sampled_from(IN_NAMES), min_size=1, max_size=3,
                                                           unique=True)),
                              out_dims={d: s * data.draw(st.sampled_from([1, 2])) for d, s in this.out_dims.items()},
                              max_in_bits=5))
    try:
        c = this.invert_and_compose(outer)
    except LayoutError:
        # Only when outer does not cover this's image, or the identity dims (identical bases)
        # leave a part that lstsq cannot solve.
        identical = [n for n in this.in_dim_names if outer.has_in_dim(n)
                     and outer.transpose_outs(this.out_dim_names).bases[n] == this.bases[n]]
        assert lstsq(outer, this) is None or identical
        return
    assert c.in_dims == this.in_dims and c.out_dims == outer.in_dims
    for x in every_input(this):
        assert outer.apply(c.apply(x)) == this.apply(x)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(layouts(surjective=True, max_in_bits=4))
def test_pseudoinvert_is_a_right_inverse(layout):
    p = layout.pseudoinvert()
    assert p.in_dims == layout.out_dims
    for y in every_input(p):
        assert layout.apply(p.apply(y)) == y
    if layout.is_invertible():
        assert layout.invert() == p and p.compose(layout) == LinearLayout.from_bases(
            {d: [[1 << i if e == d else 0 for e in layout.out_dim_names] for i in range(s.bit_length() - 1)]
             for d, s in layout.out_dims.items()}, layout.out_dim_names)


@SETTINGS
@given(layouts(), st.randoms())
def test_lstsq_minimal_solution(layout, rnd):
    """lstsq(a, a) maps every pivot column to itself and every free column to its pivots."""
    x = lstsq(layout, layout)
    assert x is not None
    free = layout.free_variable_masks()
    for n, bs in x.bases.items():
        for i, b in enumerate(bs):
            unit = tuple((1 << i) if m == n else 0 for m in x.out_dim_names)
            assert (b == unit) == (not free[n] >> i & 1)


@SETTINGS
@given(layouts(), st.randoms())
def test_transposes_round_trip(layout, rnd):
    ins, outs = layout.in_dim_names, layout.out_dim_names
    ins2, outs2 = ins[:], outs[:]
    rnd.shuffle(ins2)
    rnd.shuffle(outs2)
    moved = layout.transpose_ins(ins2).transpose_outs(outs2)
    assert moved.transpose_ins(ins).transpose_outs(outs) == layout
    for x in itertools.islice(every_input(layout), 32):
        assert moved.apply(x) == layout.apply(x)


@SETTINGS
@given(layouts(), st.randoms())
def test_reshape_and_flatten_preserve_apply_on_flat_indices(layout, rnd):
    flat_in = layout.flatten_ins()
    flat_out = layout.flatten_outs()
    # a random split of the in and out bits into new dims
    k_in, k_out = layout.total_in_dim_size_log2, layout.total_out_dim_size_log2
    cut_in = sorted(rnd.randint(0, k_in) for _ in range(2))
    cut_out = sorted(rnd.randint(0, k_out) for _ in range(2))
    new_in = {"a": 1 << cut_in[0], "b": 1 << (cut_in[1] - cut_in[0]), "c": 1 << (k_in - cut_in[1])}
    new_out = {"p": 1 << cut_out[0], "q": 1 << (k_out - cut_out[0])}
    reshaped = layout.reshape_ins(new_in).reshape_outs(new_out)
    for x in range(min(1 << k_in, 64)):
        y = layout.apply_flat(x)
        assert flat_in.apply_flat(x) == y and flat_out.apply_flat(x) == y and reshaped.apply_flat(x) == y
    if layout.in_dim_names:
        assert flat_in.in_dims == {layout.in_dim_names[0]: layout.total_in_dim_size}
    assert flat_out.out_dims == {layout.out_dim_names[0]: layout.total_out_dim_size}


@SETTINGS
@given(layouts())
def test_free_variables_are_the_columns_in_the_span_of_earlier_ones(layout):
    cols = layout.flat_columns
    masks = layout.free_variable_masks()
    c = 0
    for n, size in layout.in_dims.items():
        for i in range(size.bit_length() - 1):
            in_span = f2.in_span(cols[c], cols[:c])
            assert bool(masks[n] >> i & 1) == in_span
            c += 1
    assert (not any(masks.values())) == layout.is_injective()


@SETTINGS
@given(layouts())
def test_queries_match_brute_force(layout):
    image = {layout.apply_flat(x) for x in range(layout.total_in_dim_size)}
    assert layout.is_surjective() == (len(image) == layout.total_out_dim_size)
    assert layout.is_injective() == (len(image) == layout.total_in_dim_size)
    assert layout.rank() == len(image).bit_length() - 1
    rows = layout.matrix()
    assert len(rows) == layout.total_out_dim_size_log2
    for c, col in enumerate(layout.flat_columns):
        assert sum(rows[r][c] << r for r in range(len(rows))) == col


@SETTINGS
@given(layouts(max_in_bits=4))
def test_num_consecutive_in_out_definition(layout):
    s = layout.num_consecutive_in_out()
    i, o = layout.in_dim_names[0], layout.out_dim_names[0]
    assert layout.divide_left(identity(s, i, o)) is not None
    if 2 * s <= min(layout.in_dim_size(i), layout.out_dim_size(o)):
        assert layout.divide_left(identity(2 * s, i, o)) is None
    # meaning: L(a*s + v, ...) = L(a*s, ...) + (v, 0, ...)
    for x in itertools.islice(every_input(layout), 64):
        v = x[i] % s
        base = layout.apply({**x, i: x[i] - v})
        assert layout.apply(x) == {**base, o: base[o] + v}


@SETTINGS
@given(layouts(in_names=["register", "lane"], out_dims={"dim0": 4, "dim1": 2}),
       st.integers(0, 2), st.booleans())
def test_quotient_and_is_trivial_over(rest, block_bits, trivial):
    block = identity(1 << block_bits, "block", "block")
    layout = rest * block
    assert layout.is_trivial_over(["block"])
    assert layout.quotient(["block"]) == rest
    if block_bits and not trivial:  # let block touch dim0: no longer trivial
        bases = {n: [list(b) for b in bs] for n, bs in layout.bases.items()}
        bases["block"][0][0] = 1
        touched = L.from_bases(bases, layout.out_dims, require_surjective=False)
        assert not touched.is_trivial_over(["block"]) and touched.quotient(["block"]) is None
    assert identity(4, "i", "o").quotient(["block"]) is None


@SETTINGS
@given(layouts(), layouts())
def test_hash_and_eq_are_consistent(a, b):
    again = L.from_bases(list(a.bases.items()), a.out_dims, require_surjective=False)
    assert again == a and hash(again) == hash(a)
    if a == b:
        assert hash(a) == hash(b)
    if a.in_dim_names != b.in_dim_names or a.out_dims != b.out_dims:
        assert a != b
    assert len({a, again, b}) == (1 if a == b else 2)


def test_layouts_larger_than_64_bits():
    """No 64-bit cap: an 80-bit permutation inverts, composes and reports its queries."""
    rnd = random.Random(7)
    perm = list(range(80))
    rnd.shuffle(perm)
    bases = {"register": [[1 << p if p < 40 else 0, 1 << (p - 40) if p >= 40 else 0] for p in perm[:50]],
             "lane": [[1 << p if p < 40 else 0, 1 << (p - 40) if p >= 40 else 0] for p in perm[50:]]}
    big = L.from_bases(bases, ["dim0", "dim1"])
    assert big.out_dims == {"dim0": 1 << 40, "dim1": 1 << 40} and big.is_invertible()
    inv = big.invert()
    x = {"register": (1 << 50) - 12345, "lane": 0b1010101}
    assert inv.apply(big.apply(x)) == x
    assert inv.invert_and_compose(inv) == identity(1 << 40, "dim0", "dim0") * identity(1 << 40, "dim1", "dim1")
    assert len(big.matrix()) == 80 and len(big.matrix()[0]) == 80
    assert (big * big).total_in_dim_size_log2 == 160
    assert big.free_variable_masks() == {"register": 0, "lane": 0}


# -- every invalid input raises LayoutError (a ValueError), naming what is wrong ---------------

_L = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4]]}, ["dim0"])


@pytest.mark.parametrize("call, message", [
    (lambda: LinearLayout.from_bases({"r": 5}, ["dim0"]), "list of lists"),
    (lambda: LinearLayout.from_bases({"r": "ab"}, ["dim0"]), "list of lists"),
    (lambda: LinearLayout.from_bases(7, ["dim0"]), "bases must map"),
    (lambda: LinearLayout.from_bases({None: [[1]]}, ["dim0"]), "bases must map"),
    (lambda: LinearLayout.from_bases({"": [[1]]}, ["dim0"]), "non-empty strings"),
    (lambda: LinearLayout.from_bases({"register": [[1]]}, [None]), "non-empty strings"),
    (lambda: LinearLayout.from_bases({"register": [[1]]}, "dim0"), "list of names"),
    (lambda: LinearLayout.from_bases({"register": [[True]]}, ["dim0"]), "non-negative integer"),
    (lambda: LinearLayout.from_bases({"register": [[1]]}, {"dim0": True}), "power"),
    (lambda: _L.get_basis("register", 10), "has 2 bases"),
    (lambda: _L.get_basis("register", "0"), "has 2 bases"),
    (lambda: _L.transpose_outs(None), "list of names"),
    (lambda: _L.transpose_ins("register"), "list of names"),
    (lambda: _L.reshape_outs([("a", 2), ("a", 4)]), "duplicate"),
    (lambda: _L.reshape_ins([("a", True), ("b", 4)]), "power of 2"),
    (lambda: _L.reshape_ins(None), "pairs"),
    (lambda: _L.apply({"register": -1, "lane": 0}), "non-negative integer"),
    (lambda: _L.apply({"register": 1.5, "lane": 0}), "non-negative integer"),
    (lambda: LinearLayout.identity_1d(True, "a", "b"), "integers"),
    (lambda: LinearLayout.zeros_1d(False, "a", "b"), "integer"),
])
def test_invalid_input_raises_layout_error(call, message):
    with pytest.raises(LayoutError, match=message):
        call()
