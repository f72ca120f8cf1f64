"""``identity_standard_nd`` builds the product of 1-D identities at once; it must equal the
product itself (the definition) for every shape and order, size-1 dims included."""

import itertools
import random

from linear_layouts.dialect import encodings_common
from linear_layouts.dialect.linear_layout import LinearLayout


def _by_products(in_dim, shape, order):
    names = encodings_common.dim_names(len(shape))
    layout = LinearLayout.empty()
    for d in order:
        layout = layout * LinearLayout.identity_1d(shape[d], in_dim, names[d])
    return layout


def test_equals_the_product_of_one_dimensional_identities():
    rng = random.Random(0)
    cases = 0
    for rank in (1, 2, 3, 4):
        for order in itertools.permutations(range(rank)):
            for _ in range(6):
                shape = [1 << rng.randint(0, 4) for _ in range(rank)]
                for in_dim in ("register", "lane", "warp"):
                    fast = encodings_common.identity_standard_nd(in_dim, shape, list(order))
                    slow = _by_products(in_dim, shape, order)
                    assert fast == slow and fast.out_dim_names == slow.out_dim_names, (in_dim, shape, order)
                    assert repr(fast) == repr(slow)
                    cases += 1
    assert cases > 500


def test_what_the_fast_path_does_not_take_still_works():
    """Rank 0 (no out dims) and a size that is not a power of two go through the products."""
    assert encodings_common.identity_standard_nd("register", [], []) == LinearLayout.empty()
    try:
        encodings_common.identity_standard_nd("register", [3, 4], [1, 0])
    except Exception as error:    # the dialect's LayoutError, as before
        assert "power" in str(error)
    else:
        raise AssertionError("a size of 3 was accepted")
