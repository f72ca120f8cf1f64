"""reduce_in_loop_gpu.py without a GPU: its report from the committed H100 run (the summary's
numbers recomputed from the rows), the model's ratio, and the model read from stock's TTGIR."""

from __future__ import annotations

import argparse
import json
import os
import sys

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "benchmarks", "studies")
sys.path.insert(0, BENCHMARKS)
import reduce_in_loop_gpu  # noqa: E402


def test_configurations_are_fixed():
    assert len(reduce_in_loop_gpu.CONFIGS) == 24
    assert {c[0] for c in reduce_in_loop_gpu.CONFIGS} == set(reduce_in_loop_gpu.OPS)


def test_predicted_ratio_is_one_where_stock_is_kept():
    kept = {"accepted": False, "cost_before": 100.0, "cost_after": 50.0}
    taken = {"accepted": True, "cost_before": 100.0, "cost_after": 50.0}
    assert reduce_in_loop_gpu.predicted_ratio(kept) == 1.0
    assert reduce_in_loop_gpu.predicted_ratio(taken) == 0.5


def test_the_report_of_the_committed_run(tmp_path):
    with open(os.path.join(BENCHMARKS, "..", "results", "reduce_in_loop_gpu.json")) as f:
        run = json.load(f)
    args = argparse.Namespace(out=str(tmp_path), rounds=2)
    reduce_in_loop_gpu.write_report(run["rows"], run["device"], run["triton"], "torch", args)
    text = (tmp_path / "reduce_in_loop_gpu.md").read_text()
    # The busiest-pipe solver with the floor's L2 term (the first run, summed cost: 7 changed,
    # measured 1.276): the two argmax 8x512 loops, both ~27% faster, with the floor too.
    assert "without the DRAM floor the assignment changed **2** of 24: predicted ratio geomean 0.730, " \
           "measured **0.728**; a predicted gain measured beyond the noise in 2 of 2" in text
    assert "with the floor (the default) it changed 2; measured geomean over those 0.726" in text
    assert "bit-identical to stock: **24/24**" in text
    committed = open(os.path.join(BENCHMARKS, "..", "results", "reduce_in_loop_gpu.md")).read()
    assert text.split("\n", 4)[4] == committed.split("\n", 4)[4]   # all but the header's versions


def test_the_model_read_from_stock_ttgir():
    """The i32 sum of 8 rows of 512 with 8 warps (1.566x slower on the H100 when its input was
    converted): Triton reduces each row with redux.sync; the model keeps it with the floor off.
    The busiest pipe is the shared one under every release (3.6 keeps a layout's duplicate
    registers in its linear layout; elementwise work counts distinct registers, as Triton
    computes each distinct element once, so 3.6's ALU is no longer priced for copies).  The
    summed cost alone changes nothing either now (the redux and cross-warp stage priced as
    Triton lowers them)."""
    import triton
    from triton.backends.compiler import GPUTarget

    source = reduce_in_loop_gpu._source(reduce_in_loop_gpu.loop_reduce_kernel(), "sum_i32", 8, 512)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
    model = reduce_in_loop_gpu.model_of(compiled.asm["ttgir"])
    assert not model["nofloor"]["accepted"]
    assert model["nofloor"]["bound"] == "shared"
    assert "bound by the shared pipe" in model["nofloor"]["reason"]
    assert not model["nopipes"]["accepted"]


def test_the_heldout_set_and_its_committed_run(tmp_path):
    """The second set (fixed after the model was fitted to the first) and its H100 run: the
    busiest pipe changed 4, all faster, with the floor (its L2 term) as without; the summed
    cost changed 7."""
    assert len(reduce_in_loop_gpu.HELDOUT_CONFIGS) == 24
    assert not set(reduce_in_loop_gpu.HELDOUT_CONFIGS) & set(reduce_in_loop_gpu.CONFIGS)
    third = set(reduce_in_loop_gpu.HELDOUT2_CONFIGS)
    assert len(third) == 18 and not third & (set(reduce_in_loop_gpu.CONFIGS) | set(reduce_in_loop_gpu.HELDOUT_CONFIGS))
    with open(os.path.join(BENCHMARKS, "..", "results", "reduce_in_loop_heldout_gpu.json")) as f:
        run = json.load(f)
    args = argparse.Namespace(out=str(tmp_path), rounds=2, set="heldout")
    reduce_in_loop_gpu.write_report(run["rows"], run["device"], run["triton"], "torch", args)
    text = (tmp_path / "reduce_in_loop_heldout_gpu.md").read_text()
    assert "without the DRAM floor the assignment changed **4** of 24: predicted ratio geomean 0.796, " \
           "measured **0.864**; a predicted gain measured beyond the noise in 4 of 4" in text
    assert "with the floor (the default) it changed 4; measured geomean over those 0.863" in text
    assert "the summed cost instead of the busiest pipe (no floor) it changed 7: predicted geomean 0.768, " \
           "measured **0.975**" in text
    committed = open(os.path.join(BENCHMARKS, "..", "results", "reduce_in_loop_heldout_gpu.md")).read()
    assert text.split("\n", 4)[4] == committed.split("\n", 4)[4]
