"""A small subset of ``benchmarks/gpu_conversions.py`` as a test: our islands and stock
Triton must both copy X to Y bit for bit on a real GPU.  Skipped (with the reason shown by
``pytest -rs``) where there is no CUDA GPU or no torch."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

import pytest
from support import REPO  # noqa: E402
from support.gpu import cuda_gpu_missing  # noqa: E402

REPO = str(REPO)



@pytest.mark.gpu
@pytest.mark.skipif(cuda_gpu_missing() is not None, reason=str(cuda_gpu_missing()))
def test_islands_are_bit_exact_on_the_gpu():
    import torch
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))   # the script imports its sibling checkout.py
    spec = importlib.util.spec_from_file_location("gpu_conversions", os.path.join(REPO, "benchmarks", "gpu_conversions.py"))
    gpu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu)
    major, _ = torch.cuda.get_device_capability()
    arch = 90 if major >= 9 else 80
    cases = gpu.build_cases(arch, seed=7, pairs_per_group=1)  # 18 cases: every dtype x warps once
    directory = tempfile.mkdtemp(prefix="ll_gpu_test_")
    compiled = [gpu.compile_case((i, c, arch, directory)) for i, c in enumerate(cases)]
    gpu.run_on_gpu(cases, compiled, arch)
    bad = [(c["name"], r["ours"]) for c, r in zip(cases, compiled) if not r["ours"].get("bit_exact")]
    assert not bad, bad[:3]
