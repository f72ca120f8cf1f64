"""passes/drop_in/process_memory.py: forget_kernels empties every cache keyed by a kernel's contents
(found by looking at the package's lru caches), keeps the per-process data, and the planner's
and simulator's in-memory stores."""

from __future__ import annotations

from linear_layouts.lowering.target import target_named
from linear_layouts.lowering.choosing.plan_memory import PROCESS_PLANS
from linear_layouts.passes.drop_in import process_memory; from linear_layouts.passes.islands import verified_islands
from linear_layouts.passes.assign.assign_layouts import assign_module
from linear_layouts.passes.ir.layouts import tensor_layout_of
from linear_layouts.passes.ir.snapshot import parse_module

B = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
KERNEL = f"""
#B = {B}
#S = #ttg.slice<{{dim = 1, parent = #B}}>
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%x: tensor<64x64xf32, #B>, %out: tensor<64x!tt.ptr<f32>, #S>) {{
    %r = "tt.reduce"(%x) <{{axis = 1 : i32}}> ({{
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }}) : (tensor<64x64xf32, #B>) -> tensor<64xf32, #S>
    tt.store %out, %r : tensor<64x!tt.ptr<f32>, #S>
    tt.return
  }}
}}
"""


def test_forget_kernels_empties_the_kernel_caches_and_keeps_process_data(monkeypatch):
    monkeypatch.setenv(verified_islands.CACHE_SWITCH, "on")
    assign_module(parse_module(KERNEL), target_named("sm_90"))
    tensor_layout_of(B, (64, 64))
    PROCESS_PLANS._plans[("key",)] = "plan"   # as if planned
    caches = process_memory.package_caches()
    filled = {name for name, cache in caches.items() if cache.cache_info().currsize}
    # the layouts parsed and the assignment's reduction cost are remembered
    assert "linear_layouts.passes.ir.layouts._layout_for_release" in filled
    assert "linear_layouts.passes.assign.layout_costs.reduction_work" in filled
    kept = {name: caches[name].cache_info().currsize for name in process_memory.PROCESS_DATA if name in caches}
    emptied = process_memory.forget_kernels()
    assert emptied == len(caches) - len(kept)
    for name, cache in process_memory.package_caches().items():
        if name in process_memory.PROCESS_DATA:
            assert cache.cache_info().currsize == kept[name], name
        else:
            assert cache.cache_info().currsize == 0, name
    assert not len(PROCESS_PLANS)


def test_every_process_data_loader_exists():
    """A renamed loader would silently be forgotten (and reloaded): each name must be a cache."""
    import linear_layouts.lowering.choosing.fitted_model  # noqa: F401  (loads the modules that define them)
    import linear_layouts.lowering.choosing.measured_choices  # noqa: F401
    import linear_layouts.passes.ir.bindings  # noqa: F401
    assert process_memory.PROCESS_DATA <= set(process_memory.package_caches())
