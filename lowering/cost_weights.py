"""The cost model's constants, in one place.

Units: one issue slot of the MIO pipe, which shared-memory accesses and warp shuffles share.
``lowering.cost.PlanCost.weight`` and ``lowering.shuffle.ShuffleCost.weight`` both read these;
the planner ranks candidate plans by that weight.  They are estimates from the hardware's
documented rates, not yet fitted to measurements (the calibration microbenchmarks will replace
them, per target).

Worked example: ``blocked[4] -> blocked[1]`` of 128 i8 in one warp.  As shuffles: 4 shuffles +
16 selects = 4 * 1.5 + 16 * 0.25 = 10.  Through shared memory: 4 byte stores + 1 word load
(5 accesses, 5 wavefronts) + one warp barrier = 5 * 1 + 5 * 0.5 + 0.5 = 8: shared memory wins,
as in stock Triton.
"""

# A warp shuffle: its issue plus its 128-byte pass through the crossbar.
SHUFFLE = 1.5
# A select, byte permute (prmt) or pack: ALU instructions, at 4x the MIO rate.
ALU_OP = 0.25
# A shared-memory load or store instruction: its issue ...
SHARED_ACCESS = 1.0
# ... plus this much per wavefront (128 bytes) it occupies the banks.
SHARED_WAVEFRONT = 0.5
# bar.warp.sync (or a lone AMD fence): a warp waits for its own lanes.
WARP_BARRIER = 0.5
# bar.sync / s_barrier: a CTA waits for its slowest warp.
CTA_BARRIER = 2.0
