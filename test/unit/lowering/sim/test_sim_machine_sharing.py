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


# Loads note what they read; the reader bookkeeping is done only when a store comes before the
# next CTA barrier (Machine._record_pending_reads).  These pin the ordering rules it must keep.

def two_warp_machine_with_bytes_stored() -> Machine:
    """Two warps; every thread stored its own byte t, then a CTA barrier."""
    m = Machine(1, 2, 32, Vendor.NVIDIA)
    m.alloc(64)
    threads = np.arange(64)
    m.store_bytes(threads.astype(np.int64), threads.astype(np.uint64), np.ones(64, dtype=bool), 1, threads, "st")
    m.barrier(cta=True)
    return m


def one_thread_stores(m: Machine, thread: int, byte: int, value: int = 99) -> None:
    m.store_bytes(np.array([byte], dtype=np.int64), np.array([value], dtype=np.uint64), np.ones(1, dtype=bool), 1,
                  np.array([thread]), "st")


def test_a_warp_barrier_orders_a_load_before_a_store_of_its_own_warp():
    m = two_warp_machine_with_bytes_stored()
    m.load_bytes(np.array([40], dtype=np.int64), 1, np.array([3]), "ld")     # warp 0 reads byte 40
    m.barrier(cta=False)
    one_thread_stores(m, 4, 40)                                                # warp 0 overwrites: ordered


def test_a_warp_barrier_does_not_order_a_load_before_another_warps_store():
    m = two_warp_machine_with_bytes_stored()
    m.load_bytes(np.array([40], dtype=np.int64), 1, np.array([3]), "ld")     # warp 0 reads byte 40
    m.barrier(cta=False)
    with pytest.raises(SimulationError, match="overwrites byte 40, which another thread read"):
        one_thread_stores(m, 40, 40)                                           # warp 1: a race


def test_a_warp_barrier_after_the_load_counts_only_once_it_happened():
    m = two_warp_machine_with_bytes_stored()
    m.barrier(cta=False)                                                       # before the load: orders nothing
    m.load_bytes(np.array([40], dtype=np.int64), 1, np.array([3]), "ld")
    with pytest.raises(SimulationError, match="another thread read"):
        one_thread_stores(m, 4, 40)


def test_loads_before_a_cta_barrier_never_race_with_later_stores():
    m = two_warp_machine_with_bytes_stored()
    m.load_bytes(np.arange(64, dtype=np.int64), 1, np.arange(64)[::-1].copy(), "ld")
    m.barrier(cta=True)
    one_thread_stores(m, 0, 63)
    # and loads after it are remembered again
    m.load_bytes(np.array([10], dtype=np.int64), 1, np.array([33]), "ld")
    with pytest.raises(SimulationError, match="another thread read"):
        one_thread_stores(m, 1, 10)


def test_several_loads_before_one_store_are_all_remembered():
    m = two_warp_machine_with_bytes_stored()
    m.load_bytes(np.array([20], dtype=np.int64), 1, np.array([20]), "ld")
    m.load_bytes(np.array([21], dtype=np.int64), 1, np.array([50]), "ld")   # the second load is the racing one
    one_thread_stores(m, 20, 20)                                              # the only reader: fine
    with pytest.raises(SimulationError, match="overwrites byte 21"):
        one_thread_stores(m, 21, 21)
