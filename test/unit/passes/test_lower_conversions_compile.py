"""ll-lower-conversions end to end on the CPU: islands compile to cubin / hsaco, and the
instruction mix of the PTX / AMDGCN is the plan's.

* every convert of the corpus (``test/lit/corpus/{cuda80,cuda90,gfx942}``) is lowered where the
  planner has a verified plan, and the module compiles for its target;
* fuzzed single-convert kernels (load, convert, store; random ``#ttg.linear`` and
  ``#ttg.blocked`` pairs, f32/f16/i8/i64, 1/4/8 warps) on sm_80, sm_90, gfx90a, gfx942: each
  compiles, and the shuffles, shared-memory accesses (kind and width), ldmatrix/stmatrix and
  barriers counted in the assembly equal those of the plan (``lowering.cost``).  Selects are not
  compared: LLVM folds and rewrites them freely.

Compiles run in a process pool of 2 with a private Triton cache.  ``LL_FUZZ_CASES`` (default
20 per target) sets the number of fuzzed kernels, drawn from a seed of the installed release
(``support.release_seed``): CI's two full runs (3.9 and 3.6) compile different kernels, 40 per
target between them; ``python -m pytest ... -k fuzz`` with ``LL_FUZZ_CASES=100`` is the longer run (see the report in the module docstring of
``benchmarks/gpu_conversions.py`` for the GPU-side check).
"""

from __future__ import annotations

import glob
import os
import random
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from linear_layouts.tools.fuzz.testcases import (amdgcn_mix, ptx_mix, random_blocked_encoding,
                                                   random_linear_encoding, single_convert_ttgir)
from linear_layouts.lowering.describe import describe_plan
from support.instruction_mix import expected_mix, measured_mix
from support import REPO  # noqa: E402
from support.release_seed import seed_for_this_release

REPO = str(REPO)
CORPUS_TARGETS = {"cuda80": "sm_80", "cuda90": "sm_90", "gfx942": "gfx942"}
FUZZ_TARGETS = ("sm_80", "sm_90", "gfx90a", "gfx942")
FUZZ_CASES = int(os.environ.get("LL_FUZZ_CASES", "20"))
FUZZ_SEED = seed_for_this_release(6)


def _gpu_target(name):
    from triton.backends.compiler import GPUTarget
    if name.startswith("sm_"):
        return GPUTarget("cuda", int(name[3:]), 32)
    return GPUTarget("hip", name, 64)


def compile_case(job):
    """Lower and compile one module in a worker; returns a dict (no exceptions escape)."""
    name, text, target, check_mix = job
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    from linear_layouts.passes.lower_conversions import lower_text
    result = {"name": name, "target": target, "lowered": 0, "left": [], "error": None, "mismatch": None,
              "skipped": None}
    import triton
    if not check_mix:
        # The corpus was written by triton 3.9; some files use ops or forms an older release
        # cannot read or compile.  Those are not ours to judge: stock Triton must compile first.
        try:
            with tempfile.TemporaryDirectory(prefix="ll_stock_") as directory:
                path = os.path.join(directory, "kernel.ttgir")
                with open(path, "w") as f:
                    f.write(text)
                triton.compile(path, target=_gpu_target(target))
        except Exception as error:
            result["skipped"] = f"stock triton {triton.__version__} cannot compile it: {str(error).splitlines()[0][:200]}"
            return result
    try:
        lowered_text, outcomes = lower_text(text, filename=name)
        result["lowered"] = sum(o.lowered for o in outcomes)
        result["left"] = [o.reason for o in outcomes if not o.lowered]
        with tempfile.TemporaryDirectory(prefix="ll_lower_") as directory:
            path = os.path.join(directory, "kernel.ttgir")
            with open(path, "w") as f:
                f.write(lowered_text)
            kernel = triton.compile(path, target=_gpu_target(target))
        nvidia = target.startswith("sm_")
        asm = kernel.asm["ptx" if nvidia else "amdgcn"]
        mix = ptx_mix(asm) if nvidia else amdgcn_mix(asm)
        result["mix"] = dict(mix)
        if check_mix and len(outcomes) == 1 and outcomes[0].lowered:
            plan = outcomes[0].plan
            want = expected_mix(plan)
            if not nvidia and plan.src.in_dim_size("warp") == 1:
                want.pop("s_barrier", None)  # the back end drops s_barrier in one-wave workgroups
            got = measured_mix(mix, nvidia, plan.src.in_dim_size("warp"))
            if +want != +got:
                result["mismatch"] = f"plan {dict(want)} vs assembly {dict(got)}\n{describe_plan(plan)}"
    except Exception as error:  # reported by the test
        result["error"] = f"{type(error).__name__}: {str(error)[:1500]}"
    return result


def _run_pool(jobs):
    import multiprocessing
    saved = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="ll_triton_cache_") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache      # the forked workers inherit it
        try:
            with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
                return list(pool.map(compile_case, jobs))
        finally:
            if saved is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = saved


def corpus_jobs():
    jobs = []
    for folder, target in CORPUS_TARGETS.items():
        for path in sorted(glob.glob(os.path.join(REPO, "test", "lit", "corpus", folder, "*.ttgir"))):
            jobs.append((os.path.relpath(path, REPO), open(path).read(), target, False))
    return jobs


FUZZ_TYPES = ("f32", "f16", "i8", "i64", "bf16", "f8E4M3FN")
FUZZ_SHAPES = ((32, 32), (64, 32), (16, 64), (64, 64), (128, 16), (8, 256))


def fuzz_jobs(count_per_target: int, seed: int = 6):
    rng = random.Random(seed)
    jobs = []
    for target in FUZZ_TARGETS:
        warp_size = 32 if target.startswith("sm_") else 64
        for i in range(count_per_target):
            shape = rng.choice(FUZZ_SHAPES)
            num_warps = rng.choice((1, 4, 8))
            if shape[0] * shape[1] < warp_size * num_warps:
                num_warps = 1
            element = FUZZ_TYPES[i % len(FUZZ_TYPES)]

            def layout():
                if rng.random() < 0.35:
                    return random_blocked_encoding(rng, shape, num_warps, warp_size)
                return random_linear_encoding(rng, shape, num_warps, warp_size)
            text = single_convert_ttgir(shape, element, layout(), layout(), num_warps, target)
            jobs.append((f"fuzz-{target}-{i} (seed {seed})", text, target, True))
    return jobs


def _summary(results):
    lowered = sum(r["lowered"] for r in results)
    left = Counter(reason.split(":")[0] for r in results for reason in r["left"])
    skipped = sum(1 for r in results if r.get("skipped"))
    return (f"{len(results) - skipped} modules compiled ({skipped} skipped: stock Triton cannot compile them), "
            f"{lowered} converts lowered, left to Triton: {dict(left)}")


def test_corpus_compiles_with_our_lowering(capsys):
    results = _run_pool(corpus_jobs())
    errors = [f"{r['name']} ({r['target']}): {r['error']}" for r in results if r["error"]]
    with capsys.disabled():
        print("\n[corpus] " + _summary(results))
    assert not errors, "\n".join(errors)
    assert sum(r["lowered"] for r in results) >= 20


def test_fuzzed_single_converts_compile_and_match_the_plan(capsys):
    results = _run_pool(fuzz_jobs(FUZZ_CASES, FUZZ_SEED))
    errors = [f"{r['name']}: {r['error']}" for r in results if r["error"]]
    mismatches = [f"{r['name']}: {r['mismatch']}" for r in results if r["mismatch"]]
    with capsys.disabled():
        print("\n[fuzz] " + _summary(results))
    assert not errors, "\n".join(errors[:5])
    assert not mismatches, "\n".join(mismatches[:3])
    assert sum(r["lowered"] for r in results) >= len(results) // 2
