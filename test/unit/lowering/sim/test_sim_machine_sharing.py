"""The simulator's shared memory when several lanes of one instruction touch one byte.

``Machine._groups`` answers "every byte once" (the common case) without grouping; these tests
pin down the other case, which the islands of the corpus rarely reach: lanes storing one byte
must agree, and a byte several threads read may not be overwritten by another thread before a
barrier (while the only reader may overwrite it).
"""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.lowering.sim.sim_machine import Machine, SimulationError
from linear_layouts.lowering.target import Vendor

LANES = np.arange(32)
ALL_DEFINED = np.ones(32, dtype=bool)


def machine_with_byte_zero_stored(value: int = 7) -> Machine:
    """A one-warp machine whose lanes all stored ``value`` to byte 0, then met a barrier."""
    m = Machine(1, 1, 32, Vendor.NVIDIA)
    m.alloc(64)
    m.store_bytes(np.zeros(32, dtype=np.int64), np.full(32, value, dtype=np.uint64), ALL_DEFINED, 1, LANES, "st")
    m.barrier(cta=True)
    return m


def test_lanes_storing_one_byte_must_agree():
    m = machine_with_byte_zero_stored()
    value, defined = m.load_bytes(np.zeros(32, dtype=np.int64), 1, LANES, "ld")
    assert (value == 7).all() and defined.all()
    fresh = Machine(1, 1, 32, Vendor.NVIDIA)
    fresh.alloc(64)
    with pytest.raises(SimulationError, match="different values to one byte"):
        fresh.store_bytes(np.zeros(32, dtype=np.int64), np.arange(32, dtype=np.uint64), ALL_DEFINED, 1, LANES, "st")


def test_a_byte_many_lanes_read_is_not_overwritten_without_a_barrier():
    m = machine_with_byte_zero_stored()
    m.load_bytes(np.zeros(32, dtype=np.int64), 1, LANES, "ld")          # every lane reads byte 0
    one_lane = np.array([5])
    with pytest.raises(SimulationError, match="another thread read"):
        m.store_bytes(np.zeros(1, dtype=np.int64), np.full(1, 9, dtype=np.uint64), np.ones(1, dtype=bool), 1,
                      one_lane, "st")
    m.barrier(cta=True)
    m.store_bytes(np.zeros(1, dtype=np.int64), np.full(1, 9, dtype=np.uint64), np.ones(1, dtype=bool), 1,
                  one_lane, "st")


def test_the_only_reader_may_overwrite_its_byte():
    m = machine_with_byte_zero_stored()
    lane = np.array([5])
    m.load_bytes(np.zeros(1, dtype=np.int64), 1, lane, "ld")
    m.store_bytes(np.zeros(1, dtype=np.int64), np.full(1, 9, dtype=np.uint64), np.ones(1, dtype=bool), 1, lane, "st")
    value, _ = m.load_bytes(np.zeros(1, dtype=np.int64), 1, lane, "ld")
    assert int(value[0]) == 9


def test_distinct_bytes_are_their_own_groups():
    m = Machine(1, 1, 32, Vendor.NVIDIA)
    m.alloc(64)
    keys = np.arange(32, dtype=np.int64)[::-1].copy()
    group_keys, thread, warp = m._groups(keys, LANES, np.zeros(32, dtype=np.int64))
    assert (group_keys == keys).all() and (thread == LANES).all() and (warp == 0).all()
    group_keys, thread, warp = m._groups(np.array([3, 3, 1]), np.array([0, 1, 2]), np.zeros(3, dtype=np.int64))
    assert list(group_keys) == [1, 3] and list(thread) == [2, -2] and list(warp) == [0, 0]
