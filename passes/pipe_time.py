"""Modelled time as the busiest of an SM's pipes: the objective of ``ll-assign-layouts``.

The model of :mod:`.layout_costs` weighs every instruction with a constant measured in isolation
(``lowering.cost_weights``) and adds them up.  A sum is right for one warp alone; a kernel has
many warps on every SM, and they share the SM's pipes.  Work on different pipes overlaps; work
on one pipe queues.  Measured on an H100 (``benchmarks/reduce_in_loop_gpu.py``, row sums of
L1-resident tiles in a loop): converting a reduction's input so that the reduction needs fewer
shuffles was modelled 25% cheaper as a sum and ran **1.75x slower**.  Stock's kernel already
kept the SM's shared-memory/shuffle pipe busy (its tile loads' L1 wavefronts plus its shuffles:
about 28 pipe cycles per warp and iteration, which is the measured time); the conversion added
32 shared-memory wavefronts to that one pipe and took from the ALU work, which was not the bound.

So each cost is a :class:`Work` vector, one entry per pipe, in the cost model's units (a
conflict-free 128-byte wavefront is about one SM cycle):

* ``shared``: the SM's memory-input/output path that warp shuffles, shared-memory accesses and
  L1 data (four 32-byte sectors per wavefront) all go through;
* ``alu``: selects, byte permutes, packs, reductions' combines, elementwise ops;
* ``sync``: barriers, a wait that no pipe overlaps: added to each pipe;

and the kernel's modelled time per warp is ``max(shared + sync, alu + sync, DRAM floor)``.  The
scalar sum stays as ``total`` (the cost the remarks printed before, and a tie-break).

Worked example (``reduce_in_loop_gpu``'s i32 row sums, 8 rows x 512, 8 warps, per warp and
iteration): stock reduces in the load's layout: 16 L1 wavefronts of loads plus 10 shuffles (about
30 units of ``shared``) and 20 adds (11 of ``alu``): time 30.  The reduce-friendly layout needs
2 shuffles, but converting to it costs 32 wavefronts and their accesses (about 47 of ``shared``):
time 65, where the sum of the two said 58 against 87.7, a gain.
"""

from __future__ import annotations

from dataclasses import dataclass

PIPES = ("shared", "alu")


@dataclass(frozen=True)
class Work:
    """What one piece of a kernel spends, per warp, on each pipe (and as the old scalar)."""

    shared: float = 0.0
    alu: float = 0.0
    sync: float = 0.0
    total: float = 0.0          # the scalar cost (lowering.cost weights summed)

    def __add__(self, other: "Work") -> "Work":
        return Work(self.shared + other.shared, self.alu + other.alu, self.sync + other.sync,
                    self.total + other.total)

    def scaled(self, factor: float) -> "Work":
        return Work(self.shared * factor, self.alu * factor, self.sync * factor, self.total * factor)

    def pipe(self, name: str) -> float:
        """What the pipe ``name`` is busy for, the barriers' wait included."""
        return getattr(self, name) + self.sync

    def time(self, floor: float = 0.0) -> float:
        """The busiest pipe, or the DRAM floor where that is higher."""
        return max(floor, *(self.pipe(name) for name in PIPES))

    def bound(self, floor: float = 0.0) -> str:
        """Which pipe (or ``dram``) sets :meth:`time`."""
        busiest = max(PIPES, key=self.pipe)
        return "dram" if floor > self.pipe(busiest) else busiest


NOTHING = Work()
