"""A conversion whose shared-memory island would make more than ``MAX_SHARED_ACCESSES_PER_THREAD``
accesses a thread is left to Triton on NVIDIA from triton 3.9 on, with a remark naming the limit
(LLVM's SLP vectorizer took about 6x stock's compile time on such a module; see
docs/compile-time.md).  Structural, no timing: which plans the limit hands back.

The case is the one the compile-time fuzz flagged (``benchmarks/compile_time.py fuzz --seed 1``,
case 4: f32 256x256, a ``#ttg.linear`` source with 512 registers a thread to a blocked layout,
through shared memory in 128 ``st.shared.v4`` and 128 ``ld.shared.v4``), and the same
conversion on half the tensor (256 registers, half the accesses), which stays ours."""

from __future__ import annotations

import pytest

from linear_layouts.lowering.plan import SharedAccess
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import target_named
from linear_layouts.passes.ir.bindings import installed_triton_version
from linear_layouts.passes.ir.layouts import tensor_layout_of
from linear_layouts.lowering.choosing.island_limits import (MAX_SHARED_ACCESSES_PER_THREAD, SHARED_ACCESS_LIMIT_SINCE,
                                                            shared_accesses_problem)
from linear_layouts.passes.ir.bindings import triton_version
from linear_layouts.passes.lower_conversions import lower_text
from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

FLAGGED_SOURCE = ("#ttg.linear<{register = [[16, 0], [0, 64], [2, 0], [64, 0], [0, 128], [0, 1], [1, 0], [0, 8], "
                  "[8, 0]], lane = [[128, 0], [32, 0], [0, 2], [0, 16], [0, 32]], warp = [[0, 4], [4, 0]], "
                  "block = []}>")
# The same source without its register basis [0, 128]: the 256x128 half of the tensor.
HALF_SOURCE = ("#ttg.linear<{register = [[16, 0], [0, 64], [2, 0], [64, 0], [0, 1], [1, 0], [0, 8], [8, 0]], "
               "lane = [[128, 0], [32, 0], [0, 2], [0, 16], [0, 32]], warp = [[0, 4], [4, 0]], block = []}>")
DESTINATION = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [1, 0]}>"
LIMITED = installed_triton_version() >= SHARED_ACCESS_LIMIT_SINCE


def _shared_accesses(source: str, shape: tuple[int, ...], target: str) -> tuple[int, str]:
    """(the shared accesses a thread of the planner's plan, the limit's reason or "")."""
    plan = plan_conversion(tensor_layout_of(source, shape), tensor_layout_of(DESTINATION, shape), 32,
                           target_named(target))
    assert plan and plan.shared is not None, "the case no longer goes through shared memory"
    return sum(isinstance(op, SharedAccess) for op in plan.shared.ops), shared_accesses_problem(plan, target_named(target), triton_version())


def test_the_flagged_case_is_over_the_limit_and_its_half_is_not():
    accesses, problem = _shared_accesses(FLAGGED_SOURCE, (256, 256), "sm_90")
    assert accesses > MAX_SHARED_ACCESSES_PER_THREAD
    assert bool(problem) == LIMITED
    half, problem = _shared_accesses(HALF_SOURCE, (256, 128), "sm_90")
    assert half <= MAX_SHARED_ACCESSES_PER_THREAD < accesses and problem == ""


def test_the_limit_is_nvidia_only():
    # the sm_90 plan, judged for an AMD target (the limit reads the target's vendor only)
    shape = (256, 256)
    plan = plan_conversion(tensor_layout_of(FLAGGED_SOURCE, shape), tensor_layout_of(DESTINATION, shape), 32,
                           target_named("sm_90"))
    assert shared_accesses_problem(plan, target_named("gfx942"), "3.9.0") == ""


def test_the_limit_holds_from_its_release_on():
    shape = (256, 256)
    plan = plan_conversion(tensor_layout_of(FLAGGED_SOURCE, shape), tensor_layout_of(DESTINATION, shape), 32,
                           target_named("sm_90"))
    assert shared_accesses_problem(plan, target_named("sm_90"), "3.8.1") == ""
    assert "MAX_SHARED_ACCESSES_PER_THREAD" in shared_accesses_problem(plan, target_named("sm_90"), "3.9.0")
    assert "MAX_SHARED_ACCESSES_PER_THREAD" in shared_accesses_problem(plan, target_named("sm_90"), "3.10.0")


@pytest.mark.skipif(not LIMITED, reason=f"the limit applies from triton {SHARED_ACCESS_LIMIT_SINCE} on")
def test_the_flagged_case_is_left_to_triton_with_the_limit_as_its_remark():
    # stock_gate=False: the limit holds where every conversion the planner can do would be ours
    _, outcomes = lower_text(single_convert_ttgir((256, 256), "f32", FLAGGED_SOURCE, DESTINATION, 4, "sm_90",
                                                  name="k"), filename="flagged", stock_gate=False)
    (outcome,) = outcomes
    assert not outcome.lowered
    assert "MAX_SHARED_ACCESSES_PER_THREAD" in outcome.reason
    assert "left to Triton" in outcome.remark()


def test_the_half_case_is_still_ours():
    _, outcomes = lower_text(single_convert_ttgir((256, 128), "f32", HALF_SOURCE, DESTINATION, 4, "sm_90", name="k"),
                             filename="half", stock_gate=False)
    (outcome,) = outcomes
    assert outcome.lowered, outcome.reason
    assert outcome.island.counts["st.shared.b128"] + outcome.island.counts["ld.shared.b128"] <= \
        MAX_SHARED_ACCESSES_PER_THREAD


def test_no_conversion_of_the_kernel_corpus_comes_near_the_limit():
    """The sm_90 TTGIR of real kernels (test/lit/corpus: Triton's tutorials and tests, and the
    Liger-Kernel corpus): every conversion still lowered, none handed back by the limit, and
    the largest island well under it (planned and emitted, not simulated: verify=plan).  A module
    the installed Triton cannot parse (an op newer than its release) is skipped."""
    from pathlib import Path

    from linear_layouts.passes.ir.diagnostics import IRError
    from support import REPO
    corpus = Path(REPO) / "test" / "lit" / "corpus"
    paths = sorted(corpus.glob("cuda90/*.ttgir")) + sorted(corpus.glob("liger_kernel/*.cuda90.ttgir"))
    assert len(paths) > 50
    largest, conversions = 0, 0
    for path in paths:
        try:
            _, outcomes = lower_text(path.read_text(), filename=str(path), stock_gate=False, verify="plan")
        except IRError:
            continue
        for outcome in outcomes:
            conversions += 1
            assert "MAX_SHARED_ACCESSES_PER_THREAD" not in outcome.reason, (path.name, outcome.reason)
            shared = getattr(outcome.plan, "shared", None)
            if shared is not None:
                largest = max(largest, sum(isinstance(op, SharedAccess) for op in shared.ops))
    assert conversions > 50
    assert 0 < largest <= MAX_SHARED_ACCESSES_PER_THREAD // 2
