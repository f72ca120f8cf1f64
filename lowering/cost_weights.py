"""The cost model's constants, per target, in one place.

Units: one conflict-free 32-bit shared-memory access (its issue plus its one wavefront) costs
1.5.  ``lowering.cost.PlanCost.weight`` and ``lowering.shuffle.ShuffleCost.weight`` read the
constants of their plan's target (``weights_for``); the planner ranks candidate plans by that
weight.

Where they come from:

* ``sm_90``: measured.  ``benchmarks/plan_choice.py calibrate`` times each instruction class in isolation
  on an H100 (triton 3.6; table and fit in ``benchmarks/results/calibration.md``, constants in
  ``calibrated_weights.json`` beside this module): a shuffle costs as much as a conflict-free
  32-bit shared access; with the banks saturated an access costs its wavefronts (a 128-bit
  access of 32 lanes, 4 wavefronts, takes exactly as long as four 32-bit ones), plus one issue
  slot; a select or byte permute about half a shuffle.
* ``sm_80``, ``gfx90a``, ``gfx942``: estimates from the hardware's documented rates
  (``HAND_SET``), until a calibration run on that hardware replaces them.
* the newer targets, with no GPU here to measure on (``ESTIMATED_FROM``): each reuses the
  constants of the nearest target of its lineage, and its ``source`` says so - ``sm_100`` and
  ``sm_120`` (Blackwell) take sm_90's *measured* constants (same shared-memory and shuffle design:
  32 banks x 4 bytes, ``shfl.sync``, ``ldmatrix``/``stmatrix``); ``sm_86`` and ``sm_89`` (Ampere
  GA10x, Ada) take sm_80's estimates; ``gfx950``, ``gfx1100`` and ``gfx1201`` take gfx942's.
  These only rank candidate plans; every plan is verified whatever its cost.

Worked example: ``blocked[4] -> blocked[1]`` of 128 i8 in one warp.  As shuffles: 4 shuffles +
16 selects.  Through shared memory: 4 byte stores + 1 word load (5 accesses, 5 wavefronts) and
one warp barrier.  With the hand-set constants: 4 * 1.5 + 16 * 0.25 = 10 against
5 * 1 + 5 * 0.5 + 0.5 = 8.  Shared memory wins, as in stock Triton (and with sm_90's measured
constants, where a select costs about half a shuffle, by more).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class CostWeights:
    shuffle: float            # a warp shuffle: its issue plus its pass through the crossbar
    alu_op: float             # a select, byte permute (prmt) or pack
    shared_access: float      # a shared-memory load or store instruction: its issue ...
    shared_wavefront: float   # ... plus this much per wavefront (128 bytes) it holds the banks
    warp_barrier: float       # bar.warp.sync (or a lone AMD fence): a warp waits for its lanes
    cta_barrier: float        # bar.sync / s_barrier: a CTA waits for its slowest warp
    source: str               # where the numbers come from
    # One byte of DRAM traffic per SM, measured (benchmarks/studies/dram_rate.py); 0: not measured, the
    # DRAM floor then uses the product's published rate (passes/assign/dram_floor.py).
    dram_byte: float = 0.0
    # One byte read from L2 per SM, measured likewise (data the whole grid shares); 0: not
    # measured, such bytes are then counted as DRAM bytes (passes/assign/dram_floor.py).
    l2_byte: float = 0.0


HAND_SET = CostWeights(shuffle=1.5, alu_op=0.25, shared_access=1.0, shared_wavefront=0.5,
                       warp_barrier=0.5, cta_barrier=2.0,
                       source="estimates from documented instruction rates")

# Measured constants, per target: written by ``benchmarks/plan_choice.py calibrate --write-weights`` from its
# fit (the run's table: benchmarks/results/calibration.md).
CALIBRATION_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibrated_weights.json")


def _load_calibrated(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    return {target: CostWeights(**entry["weights"], source=entry["source"]) for target, entry in data.items()}


CALIBRATED = _load_calibrated(CALIBRATION_FILE)


# Targets with neither a calibration nor hand-set constants of their own: whose to reuse.
ESTIMATED_FROM = {"sm_86": "sm_80", "sm_89": "sm_80", "sm_100": "sm_90", "sm_120": "sm_90",
                  "gfx950": "gfx942", "gfx1100": "gfx942", "gfx1201": "gfx942"}


def weights_for(target_name: str) -> CostWeights:
    """The constants of a target (``Target.name``): measured where a calibration exists, else
    the nearest target's (``ESTIMATED_FROM``, said in ``source``), else ``HAND_SET``."""
    if target_name in CALIBRATED:
        return CALIBRATED[target_name]
    if target_name in ESTIMATED_FROM:
        base_name = ESTIMATED_FROM[target_name]
        base = weights_for(base_name)
        kind = "measured" if base_name in CALIBRATED else "estimated"
        # Instruction costs carry over within a lineage; DRAM bandwidth does not (a B200 has
        # twice an H100's): the reusing target keeps its own published rate.
        return replace(base, dram_byte=0.0, l2_byte=0.0,
                       source=f"estimate for {target_name}: {base_name}'s {kind} constants reused "
                              f"({base.source}); not measured on {target_name}")
    return HAND_SET
