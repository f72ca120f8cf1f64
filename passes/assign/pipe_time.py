"""Modelled time as the busiest of an SM's pipes: the objective of ``ll-assign-layouts``.

The model of :mod:`.layout_costs` weighs every instruction with a constant measured in isolation
(``lowering.cost_weights``) and adds them up.  A sum is right for one warp alone; a kernel has
many warps on every SM, and they share the SM's pipes.  Work on different pipes overlaps; work
on one pipe queues.  A change that moves work onto the pipe that is already the bound makes
the kernel slower however much the sum falls.  Example (the row-sum study of docs/studies.md, "Where DRAM is not the bound?",
row sums of L1-resident tiles in a loop): stock's kernel keeps the SM's shared-memory/shuffle
pipe busy (its tile loads' L1 wavefronts plus its shuffles); converting the reduction's input so
that the reduction needs fewer shuffles adds 32 shared-memory wavefronts to that one pipe and
takes from the ALU work, which was not the bound: cheaper as a sum, slower on the GPU (measured:
docs/layout-assignment.md, 'What the model rests on').

So each cost is a :class:`Work` vector, one entry per pipe, in the cost model's units (a
conflict-free 128-byte wavefront is about one SM cycle):

* ``shared``: the SM's memory-input/output path that warp shuffles, shared-memory accesses and
  L1 data (four 32-byte sectors per wavefront) all go through;
* ``alu``: selects, byte permutes, packs, reductions' combines, elementwise ops;
* ``sync``: barriers, a wait that no pipe overlaps: added to each pipe;

and the kernel's modelled time per warp is ``max(shared + sync, alu + sync, DRAM floor)``.  The
scalar sum stays as ``total`` (the cost the remarks printed before, and a tie-break).

Worked example (that study's i32 row sums, 8 rows x 512, 8 warps, per warp and
iteration, sm_90's constants): Triton reduces each row with one ``redux.sync`` and passes the
four warps' partials through shared memory; with the loop's tile load (16 L1 wavefronts) the
shared pipe holds 67.0 units plus 4.5 of barriers, the ALU 36.9: time 71.5.  Converting the
input so that no warp splits a row saves the cross-warp stage but adds the conversion's
wavefronts to the same pipe: 63.1 + 2.3 = 65.4, 8.5% less, under the 10% margin, so Triton's
layouts stay.  (The summed model, before reductions were priced as Triton lowers them, had
called that change a large gain; it ran slower: same page.)
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
