"""The shortcuts taken for compile time give what the long way gives.

* ``shuffle._consistent_choices`` (the shuffle planner's search, sharing the elimination of a
  prefix of lane bits) yields exactly the combinations and solutions of trying every
  combination with ``_solve_linear``, in the same order (ties in cost go to the first).
* ``f2.EchelonBasis.copy`` is independent of the basis it was copied from.
* ``Machine.store_bytes`` / ``load_bytes`` skip hazard orderings no earlier access can need:
  the hazards themselves are still found, with the same messages.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from linear_layouts.dialect import f2
from linear_layouts.lowering.shuffle import _consistent_choices, _solve_linear
from linear_layouts.lowering.sim.sim_machine import Machine, SimulationError
from linear_layouts.lowering.target import Vendor


def _brute_force(columns, src_bits):
    out = []
    for choice in itertools.product(*columns):
        m = _solve_linear(tuple(c[1] for c in choice), tuple(c[2] for c in choice), src_bits)
        if m is not None:
            out.append((tuple(choice), m))
    return out


@pytest.mark.parametrize("seed", range(200))
def test_consistent_choices_equal_every_combination_solved(seed):
    rng = random.Random(seed)
    nl = rng.randint(1, 5)
    width = rng.randint(1, 6)          # small values: dependent and inconsistent columns are common
    columns = [[(rng.randrange(1 << 3), rng.randrange(1 << width), rng.randrange(1 << width))
                for _ in range(rng.randint(1, 4))] for _ in range(nl)]
    assert list(_consistent_choices(columns, nl)) == _brute_force(columns, nl)


def test_echelon_basis_copy_is_independent():
    basis = f2.EchelonBasis([0b011, 0b101])
    other = basis.copy()
    assert other.insert(0b100) and len(other) == 3 and len(basis) == 2
    assert basis.express(0b110) == other.express(0b110) == 0b11
    assert basis.reduce(0b100)[0] != 0 and other.reduce(0b100)[0] == 0


LANES = np.arange(32)
DEFINED = np.ones(32, dtype=bool)


def _machine() -> Machine:
    m = Machine(1, 1, 32, Vendor.NVIDIA)
    m.alloc(128)
    return m


def test_store_after_another_threads_read_without_barrier_is_caught():
    m = _machine()
    m.store_bytes(LANES, LANES.astype(np.uint64), DEFINED, 1, LANES, "st")
    m.barrier(cta=True)
    m.load_bytes(LANES, 1, LANES, "ld")
    with pytest.raises(SimulationError, match=r"overwrites byte .*\(missing barrier\)"):
        m.store_bytes(LANES[::-1].copy(), LANES.astype(np.uint64), DEFINED, 1, LANES, "st")


def test_store_of_another_value_over_another_threads_store_without_barrier_is_caught():
    m = _machine()
    m.store_bytes(LANES, LANES.astype(np.uint64), DEFINED, 1, LANES, "st")
    with pytest.raises(SimulationError, match=r"store different values .*\(a race\)"):
        m.store_bytes(LANES[::-1].copy(), LANES.astype(np.uint64), DEFINED, 1, LANES, "st")


def test_load_of_another_threads_store_without_barrier_is_caught_and_with_one_is_not():
    m = _machine()
    m.store_bytes(LANES, LANES.astype(np.uint64), DEFINED, 1, LANES, "st")
    with pytest.raises(SimulationError, match=r"reads byte .*\(missing barrier\)"):
        m.load_bytes(LANES[::-1].copy(), 1, LANES, "ld")
    m = _machine()
    m.store_bytes(LANES, LANES.astype(np.uint64), DEFINED, 1, LANES, "st")
    m.barrier(cta=True)
    value, defined = m.load_bytes(LANES[::-1].copy(), 1, LANES, "ld")
    assert defined.all() and (value == LANES[::-1]).all()
    # a thread reading back its own store needs no barrier
    m = _machine()
    m.store_bytes(LANES, LANES.astype(np.uint64), DEFINED, 1, LANES, "st")
    value, _ = m.load_bytes(LANES, 1, LANES, "ld")
    assert (value == LANES).all()


def test_a_stored_byte_forgets_its_readers():
    # after a barrier, the thread that stores over bytes others read may be read by them again
    m = _machine()
    m.store_bytes(LANES, LANES.astype(np.uint64), DEFINED, 1, LANES, "st")
    m.barrier(cta=True)
    m.load_bytes(LANES[::-1].copy(), 1, LANES, "ld")
    m.barrier(cta=True)
    m.store_bytes(LANES, (LANES + 1).astype(np.uint64), DEFINED, 1, LANES, "st")
    assert (m.reader.reshape(-1)[:32] == -1).all() and (m.read_warp.reshape(-1)[:32] == -1).all()
    m.store_bytes(LANES, (LANES + 1).astype(np.uint64), DEFINED, 1, LANES, "st")   # same thread again: fine
