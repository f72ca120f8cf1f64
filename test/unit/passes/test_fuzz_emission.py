"""The CPU fuzz through emission (``ll-fuzz``, ``tools/fuzz/conversion_fuzz.py``), run in CI under
both Triton releases of the suite (3.9 and 3.6).

* ``LL_FUZZ_EMIT_CASES`` (default 1500) random conversions are planned, emitted and executed by
  the emitted-code simulator, with the layouts and LLVM structs of the installed Triton;
* ``LL_FUZZ_EMIT_COMPILE`` (default 50) of them are compiled to cubin / hsaco with stock Triton
  and with our islands: stock compiling a case that we fail on is a failure;
* every other target of ``lowering.target`` (sm_86, sm_89, sm_100, sm_120, gfx950, gfx1100,
  gfx1201; the run above keeps the first four so that its recorded (seed, index) still name the
  same cases) gets ``LL_FUZZ_TARGET_CASES`` (default 30) cases, ``LL_FUZZ_TARGET_COMPILE``
  (default 2) of them compiled: few, to keep CI short (bigger runs by hand:
  ``benchmarks/results/fuzz_targets.md``);
* the seed is fixed for each Triton release (``support.release_seed``: the two releases of CI
  draw different cases, so each draws half: 3,000 simulated and 100 compiled between them;
  ``LL_FUZZ_SEED`` overrides it) so a failure is reproducible from the printed (seed, index):
  ``conversion_fuzz.case_at(seed, index)``.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from linear_layouts.tools.fuzz import conversion_fuzz as fuzz
from support.release_seed import seed_for_this_release

SEED = int(os.environ.get("LL_FUZZ_SEED", seed_for_this_release(20261122)))
CASES = int(os.environ.get("LL_FUZZ_EMIT_CASES", "1500"))
COMPILE = int(os.environ.get("LL_FUZZ_EMIT_COMPILE", "50"))
TARGET_CASES = int(os.environ.get("LL_FUZZ_TARGET_CASES", "30"))
TARGET_COMPILE = int(os.environ.get("LL_FUZZ_TARGET_COMPILE", "2"))
NEW_TARGETS = tuple(t for t in fuzz.ALL_TARGETS if t not in fuzz.TARGETS)


def test_random_conversions_lower_and_simulate_and_compile():
    report = fuzz.run_fuzz(CASES, SEED, compile_count=COMPILE, jobs=2)
    print(report.summary())
    assert not report.failures, report.summary()
    outcomes = Counter(r.outcome for r in report.results)
    assert outcomes["lowered"] > 0.9 * CASES, report.summary()
    # plans in fewer shared-memory rounds (what the choice emits) are among those simulated
    assert sum(r.fewer_rounds for r in report.results if r.outcome == "lowered") > 0.02 * CASES, report.summary()
    compiled = Counter(r.compiled for r in report.results if r.compiled)
    assert compiled["both"] > 0.8 * COMPILE, report.summary()


@pytest.mark.parametrize("target", NEW_TARGETS)
def test_every_other_target_lowers_simulates_and_compiles(target):
    report = fuzz.run_fuzz(TARGET_CASES, SEED, compile_count=TARGET_COMPILE, jobs=2, targets=(target,))
    print(report.summary())
    assert not report.failures, report.summary()
    outcomes = Counter(r.outcome for r in report.results)
    assert outcomes["lowered"] > 0.8 * TARGET_CASES, report.summary()
    assert sum(r.compiled in ("both", "stock-failed") for r in report.results) == TARGET_COMPILE


def test_every_target_is_fuzzed():
    assert set(fuzz.TARGETS) | set(NEW_TARGETS) == set(fuzz.ALL_TARGETS) and len(NEW_TARGETS) == 7
    cases = [fuzz.case_at(7, i, fuzz.ALL_TARGETS) for i in range(220)]
    assert {c.target for c in cases} == set(fuzz.ALL_TARGETS)
    rdna = [c for c in cases if c.target in ("gfx1100", "gfx1201") and "amd_" in c.src + c.dst]
    assert rdna and all("amd_mfma" not in c.src + c.dst for c in rdna)   # RDNA has WMMA, no MFMA
    assert any("version = 4" in c.src + c.dst for c in cases if c.target == "gfx950")


def test_generator_covers_every_kind_type_warp_count_and_lane_count():
    cases = [fuzz.case_at(7, i) for i in range(600)]
    assert {c.kind for c in cases} == set(fuzz.KINDS)
    assert {c.element_type for c in cases} == set(fuzz.ELEMENT_TYPES)
    assert {c.num_warps for c in cases} == set(fuzz.WARPS)
    assert {c.target for c in cases} == set(fuzz.TARGETS)
    replicating = [c for c in cases if "[0, 0]" in c.src + c.dst or "[[0]" in c.src + c.dst
                   or ", [0]" in c.src + c.dst]
    assert len(replicating) > 100, "layouts with zero (broadcast) bases must be common"
    assert any(max(c.shape) <= 2 for c in cases), "tiny tensors"


def test_real_kernel_pairs_are_drawn():
    cases = [fuzz.case_at(3, i, ("sm_90",)) for i in range(1500)]
    bias = [c for c in cases if c.kind == "real-kernel" and "#ttg.slice<{dim = 0, parent = #ttg.nvidia_mma" in c.src + c.dst]
    assert bias and all(c.shape == (256,) and c.num_warps == 8 for c in bias)
    rows = [c for c in cases if c.kind == "real-kernel" and "#ttg.slice<{dim = 1" in c.src and "#ttg.slice<{dim = 1" in c.dst]
    assert rows


def test_cases_are_reproducible():
    assert fuzz.case_at(5, 17) == fuzz.case_at(5, 17)
    assert fuzz.random_case(random.Random("5:17"), fuzz.TARGETS[17 % len(fuzz.TARGETS)]) == fuzz.case_at(5, 17)


def test_a_broken_simulator_verdict_is_reported(monkeypatch):
    # The runner must report what the simulator rejects (a test that cannot fail is worse than none).
    from linear_layouts.lowering.sim import island_sim
    from linear_layouts.lowering.verify import VerificationResult
    monkeypatch.setattr(island_sim, "check_emitted", lambda *a: VerificationResult(False, ("injected",)))
    report = fuzz.run_fuzz(20, 1, jobs=1)
    assert report.failures and "injected" in report.failures[0].reason


@pytest.mark.parametrize("argv, message", [
    (["--targets", "sm_70"], "unknown target 'sm_70'"),
    (["--cases", "0"], "must be positive"),
    (["--bogus"], "unrecognized arguments"),
    (["--cases", "many"], "invalid int value"),
])
def test_cli_errors_exit_1(capsys, argv, message):
    assert fuzz.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("ll-fuzz: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_cli_runs_every_target(capsys):
    assert fuzz.main(["--cases", "11", "--seed", "4", "--jobs", "1", "--targets", "all"]) == 0
    out = capsys.readouterr().out
    assert "11 cases" in out and all(f"{t} 1: 1 lowered" in out for t in fuzz.ALL_TARGETS), out


def test_cli_runs(capsys):
    assert fuzz.main(["--cases", "30", "--seed", "4", "--jobs", "1"]) == 0
    assert "30 cases" in capsys.readouterr().out
