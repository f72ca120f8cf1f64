"""Which warps run an island, and how they synchronise: the whole CTA, or one warp group of a
warp-specialized kernel.

A kernel with ``ttg.warp_specialize`` runs several programs at once in one CTA.  Triton gives
the *default* warp group the kernel's ``num_warps`` warps (warps 0 .. N-1) and each worker
partition warps of its own after them; the code outside the partitions runs in the default
warps only (the worker warps wait in a dispatch loop).  So an island there must

* number its warps from the group's first warp: a partition of 4 warps that starts at warp 4
  holds warps 4..7 of the CTA, and its layouts speak of warps 0..3;
* synchronise only the group's threads.  ``bar.sync 0`` waits for every thread of the CTA,
  and threads of another group never arrive: the kernel hangs.  Triton's own barriers in such
  a kernel are named barriers with a thread count: ``bar.sync 0, 128`` in the default group
  (barrier 0, its N * 32 threads), ``bar.sync 2 + i, 32 * warps_i`` in partition i (barrier 1
  is the dispatch loop's), and ``bar.warp.sync -1`` in a partition of one warp.  Ours are
  spelled the same way, so they can never wait on another group's barrier.

Worked example: ``num_warps = 4``, one worker partition of 4 warps.  Triton starts the
partition at warp 4 (its start ids: the default warps first, then the partitions from the
largest down).  An island in the partition reads ``%tid.x`` = 128..255; its warp id is
``(tid >> 5) & 3`` = 0..3, and its barriers are ``bar.sync 2, 128``.  An island in the default
region keeps ``tid >> 5`` = 0..3 and uses ``bar.sync 0, 128``.

Masking the warp id (rather than subtracting the start) is exact because every partition starts
at a multiple of its own size: sizes are powers of two, placed largest first after the default
warps, and ``passes.barriers.partitions`` leaves an island to Triton when the default group is smaller
than the partition (where that alignment would not hold).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ThreadGroup:
    """The warps that run an island (a contiguous, aligned range of the CTA's warps).

    ``barrier_id`` None: a plain kernel, the island's CTA barriers wait for every thread of the
    CTA.  Otherwise a warp group of a warp-specialized kernel: its barriers are the named
    barrier ``barrier_id`` for the group's threads only (spelled by the emitters:
    ``emit_nvidia.warp_group_barrier``)."""

    warps: int                        # warps that run the island
    first_warp: int = 0               # the group's first warp in the CTA
    cta_warps: Optional[int] = None   # every warp of the CTA (None: ``warps``)
    barrier_id: Optional[int] = None  # None: whole-CTA barriers
    name: str = "CTA"                 # for messages: "CTA", "default warp group", "partition 0"

    def __post_init__(self):
        if self.warps < 1 or self.warps & (self.warps - 1):
            raise ValueError(f"a warp group of {self.warps} warps (a power of two is needed)")
        if self.first_warp % self.warps:
            raise ValueError(f"a warp group of {self.warps} warps starting at warp {self.first_warp} "
                             f"(not a multiple of its size)")

    @property
    def all_warps(self) -> int:
        return self.cta_warps if self.cta_warps is not None else self.warps

    @property
    def is_whole_cta(self) -> bool:
        return self.barrier_id is None


# Triton's barrier ids in a warp-specialized kernel (3.6 to 3.9): 0 for the default warp group,
# 1 for the dispatch loop of the worker warps, 2 + i for partition i, 16 in all.
DEFAULT_GROUP_BARRIER = 0
FIRST_PARTITION_BARRIER = 2
HARDWARE_BARRIERS = 16
