"""The cost model's constants, per target, in one place.

Units: one conflict-free 32-bit shared-memory access (its issue plus its one wavefront) costs
1.5.  ``lowering.cost.PlanCost.weight`` and ``lowering.shuffle.ShuffleCost.weight`` read the
constants of their plan's target (``weights_for``); the planner ranks candidate plans by that
weight.

Where they come from:

* ``sm_90``: measured.  ``benchmarks/calibrate.py`` times each instruction class in isolation
  on an H100 (triton 3.6; table and fit in ``benchmarks/results/calibration.md``, constants in
  ``calibrated_weights.json`` beside this module): a shuffle costs as much as a conflict-free
  32-bit shared access; with the banks saturated an access costs its wavefronts (a 128-bit
  access of 32 lanes, 4 wavefronts, takes exactly as long as four 32-bit ones), plus one issue
  slot; a select or byte permute about half a shuffle.
* every other target (``sm_80``, ``gfx90a``, ``gfx942``): estimates from the hardware's
  documented rates (``HAND_SET``), until a calibration run on that hardware replaces them.

Worked example: ``blocked[4] -> blocked[1]`` of 128 i8 in one warp.  As shuffles: 4 shuffles +
16 selects.  Through shared memory: 4 byte stores + 1 word load (5 accesses, 5 wavefronts) and
one warp barrier.  With the hand-set constants: 4 * 1.5 + 16 * 0.25 = 10 against
5 * 1 + 5 * 0.5 + 0.5 = 8.  Shared memory wins, as in stock Triton (and with sm_90's measured
constants, where a select costs about half a shuffle, by more).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class CostWeights:
    shuffle: float            # a warp shuffle: its issue plus its pass through the crossbar
    alu_op: float             # a select, byte permute (prmt) or pack
    shared_access: float      # a shared-memory load or store instruction: its issue ...
    shared_wavefront: float   # ... plus this much per wavefront (128 bytes) it holds the banks
    warp_barrier: float       # bar.warp.sync (or a lone AMD fence): a warp waits for its lanes
    cta_barrier: float        # bar.sync / s_barrier: a CTA waits for its slowest warp
    source: str               # where the numbers come from


HAND_SET = CostWeights(shuffle=1.5, alu_op=0.25, shared_access=1.0, shared_wavefront=0.5,
                       warp_barrier=0.5, cta_barrier=2.0,
                       source="estimates from documented instruction rates")

# Measured constants, per target: written by ``benchmarks/calibrate.py --write-weights`` from its
# fit (the run's table: benchmarks/results/calibration.md).
CALIBRATION_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibrated_weights.json")


def _load_calibrated(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    return {target: CostWeights(**entry["weights"], source=entry["source"]) for target, entry in data.items()}


CALIBRATED = _load_calibrated(CALIBRATION_FILE)


def weights_for(target_name: str) -> CostWeights:
    """The constants of a target (``Target.name``): measured where a calibration exists."""
    return CALIBRATED.get(target_name, HAND_SET)
