"""A one-CTA blocked layout's bases written down at once (``encodings_distributed._blocked_in_one_cta``)
are the layout of the general path (the products and fits of Triton's ``toLinearLayout``), for
random blocked layouts and shapes, tiles smaller and larger than the tensor, under both
register conventions (Triton 3.6 keeps a larger tile's duplicate registers, 3.9 drops them)."""

import random

import pytest

from linear_layouts.dialect import encodings_distributed as E
from linear_layouts.dialect.attributes import BlockedEncoding
from linear_layouts.dialect.conventions import TritonConventions


def _general(attr, shape, conventions):
    """The general path, with the direct one turned off."""
    real = E._blocked_in_one_cta
    E._blocked_in_one_cta = lambda *args: None
    try:
        return E._blocked(attr, shape, conventions)
    finally:
        E._blocked_in_one_cta = real


def _split(rng, total_bits, rank):
    parts = [0] * rank
    for _ in range(total_bits):
        parts[rng.randrange(rank)] += 1
    return [1 << p for p in parts]


@pytest.mark.parametrize("release", [(3, 6), (3, 9)])
def test_the_same_layout_as_the_general_path(release):
    conventions = TritonConventions(release)
    rng = random.Random(release[1])
    for _ in range(600):
        rank = rng.choice([1, 2, 2, 3])
        attr = BlockedEncoding(size_per_thread=tuple(_split(rng, rng.randint(0, 4), rank)),
                               threads_per_warp=tuple(_split(rng, rng.choice([5, 6]), rank)),
                               warps_per_cta=tuple(_split(rng, rng.randint(0, 3), rank)),
                               order=tuple(rng.sample(range(rank), rank)))
        shape = [1 << rng.randint(0, 8) for _ in range(rank)]
        direct = E._blocked_in_one_cta(attr, shape, conventions.blocked_keeps_duplicate_registers)
        assert direct is not None
        general = _general(attr, shape, conventions)
        assert direct == general and repr(direct) == repr(general), (attr, shape)
        assert direct.in_dim_names == general.in_dim_names and direct.out_dims == general.out_dims


def test_multi_cta_layouts_take_the_general_path():
    from linear_layouts.dialect.attributes import CGALayout
    attr = BlockedEncoding(size_per_thread=(1, 4), threads_per_warp=(4, 8), warps_per_cta=(4, 1), order=(1, 0),
                           cga=CGALayout(bases=((1, 0),)))
    assert E._blocked_in_one_cta(attr, [64, 64], True) is None
