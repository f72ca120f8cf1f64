"""llvm_slp_probe's edits of a kept module still apply and still give LLVM a module it accepts.

The probe times LLVM's O3 on edited copies of the LLVM-dialect module Triton hands to LLVM
(stock's and ours).  An edit whose pattern no longer matches what the emitter or Triton prints
would time an unedited module under the probe's name; an edit that breaks the module would
fail only when someone reruns the study.  So: a small version of the fuzz case the study
probes (f32, a ``#ttg.linear`` source to a blocked destination through shared memory, sm_90),
compiled on the CPU, each edit counted and its result translated to LLVM IR and optimized once
(no timing is checked)."""

from __future__ import annotations

import re
import sys

import pytest

from support import REPO

sys.path.insert(0, str(REPO / "benchmarks" / "studies"))
sys.path.insert(0, str(REPO / "benchmarks"))
import llvm_slp_probe as probe  # noqa: E402
from harness import compile_time_fuzz as fuzz  # noqa: E402

# compile_time_fuzz seed 1's case 4 (256x256, 512 registers a thread) cut to 64x64 (32 registers)
SMALL_CASE = {
    "shape": [64, 64], "element": "f32", "num_warps": 4, "target": "sm_90",
    "src": "#ttg.linear<{register = [[16, 0], [0, 32], [2, 0], [1, 0], [0, 1]], lane = [[32, 0], [8, 0], [0, 2], "
           "[0, 16], [0, 8]], warp = [[0, 4], [4, 0]], block = []}>",
    "dst": "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [1, 0]}>",
}


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    pytest.importorskip("triton")
    directory = tmp_path_factory.mktemp("slp_probe")
    path = directory / "case.ttgir"
    path.write_text(fuzz.case_text(SMALL_CASE))
    with pytest.MonkeyPatch.context() as patch:   # capture() sets these; the fixture gives them back
        for name in ("TRITON_ALWAYS_COMPILE", "LINEAR_LAYOUTS_CACHE", "LINEAR_LAYOUTS_STOCK_GATE",
                     "TRITON_DEFAULT_FP_FUSION"):
            patch.setenv(name, "")
        captured = probe.capture(str(path), "sm_90")
    return captured, str(directory)


def test_native_shared_accesses_replace_every_vector_access_of_the_island(modules):
    (captured, directory) = modules
    ours = captured["ours"]
    asm_stores = len(re.findall(r'"st\.shared\.v4\.b32', ours))
    asm_loads = len(re.findall(r'"ld\.shared\.v4\.b32', ours))
    assert asm_stores and asm_loads, "the small case no longer goes through shared memory in 128-bit accesses"
    text, edits = probe._native_shared_accesses(ours)
    assert edits == asm_stores + asm_loads
    assert "st.shared" not in text and "ld.shared" not in text
    assert len(re.findall(r"llvm\.store %\w+, %probe_ptr\d+ \{alignment = 16 : i64\} : vector<4xi32>", text)) == asm_stores
    assert len(re.findall(r"llvm\.load %probe_ptr\d+ \{alignment = 16 : i64\} : !llvm\.ptr<3> -> vector<4xi32>",
                          text)) == asm_loads
    probe.optimize_seconds(text, directory, "sm_90a")      # parses, translates, optimizes


def test_island_and_stock_memory_removals_apply(modules):
    (captured, directory) = modules
    text, edits = probe._island_memory_removed(captured["ours"])
    assert edits and "st.shared" not in text and "ld.shared" not in text and "bar.sync 0;" not in text
    probe.optimize_seconds(text, directory, "sm_90a")
    for name, (text, edits) in probe.stock_probes(captured["stock"]).items():
        assert edits, f"{name}: stock's module no longer has what the probe removes"
        probe.optimize_seconds(text, directory, "sm_90a")
