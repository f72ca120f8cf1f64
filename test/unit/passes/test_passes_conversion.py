"""The minimal conversion and its scope (lowering/conversion.py), on small layouts by hand."""

from __future__ import annotations

import pytest

from linear_layouts.dialect import LinearLayout
from linear_layouts.lowering.conversion import conversion_scope, minimal_conversion, scope_of


def layout(register, lane, warp=(), block=()):
    return LinearLayout.from_bases({"register": [list(b) for b in register], "lane": [list(b) for b in lane],
                                    "warp": [list(b) for b in warp], "block": [list(b) for b in block]}, ["dim0"])


LANES = [[1], [2], [4], [8], [16]]


def test_identical_layouts_need_nothing():
    a = layout([[32]], LANES, [[64]])
    assert minimal_conversion(a, a).in_dim_names == [] and conversion_scope(a, a) == "none"


def test_register_permutation():
    a = layout([[1], [2]], [[4], [8], [16], [32], [64]])
    b = layout([[2], [1]], [[4], [8], [16], [32], [64]])
    c = minimal_conversion(a, b)
    assert c.in_dim_names == ["register"] and c.out_dim_names == ["register"]
    assert conversion_scope(a, b) == "register"


def test_lane_exchange_keeps_register_and_lane():
    a = layout([[1]], [[2], [4], [8], [16], [32]])
    b = layout([[32]], LANES)
    assert minimal_conversion(a, b).in_dim_names == ["register", "lane"]
    assert conversion_scope(a, b) == "lane"


def test_warp_and_block():
    a = layout([], LANES, [[32], [64]])
    b = layout([], LANES, [[64], [32]])
    assert conversion_scope(a, b) == "warp"
    c = layout([], LANES, [], [[32]])
    d = layout([], [[2], [4], [8], [16], [32]], [], [[1]])
    assert conversion_scope(c, d) == "block"


def test_register_broadcast_is_not_data_to_move():
    with_copy = layout([[0]], LANES)
    without = layout([], LANES)
    assert conversion_scope(with_copy, without) == "none"
    assert conversion_scope(without, with_copy) == "none"


def test_lane_broadcast_is_data_to_move():
    half = layout([[16]], [[1], [2], [4], [8], [0]])
    full = layout([], LANES)
    assert conversion_scope(half, full) == "lane"


def test_quotient_stops_at_the_first_level_that_moves_data():
    # lanes move, but warps and blocks stay identical: only warp and block are quotiented out
    a = layout([[1]], [[2], [4], [8], [16], [32]], [[64]], [[128]])
    b = layout([[32]], [[1], [2], [4], [8], [16]], [[64]], [[128]])
    assert minimal_conversion(a, b).in_dim_names == ["register", "lane"]


@pytest.mark.parametrize("dims,scope", [([], "none"), (["register"], "register"), (["register", "lane"], "lane"),
                                        (["lane", "warp"], "warp"), (["register", "block"], "block")])
def test_scope_of_names_the_widest_level(dims, scope):
    conversion = LinearLayout.from_bases({d: [] for d in dims}, dims) if dims else LinearLayout.empty()
    assert scope_of(conversion) == scope


def test_a_source_that_does_not_hold_every_element_is_an_error():
    small = layout([], [[1], [2], [4], [8], [0]])  # 16 distinct elements
    big = layout([], LANES)                         # 32
    with pytest.raises(Exception):
        conversion_scope(small, big)
