"""Random programs with loops, branches, whiles and calls through ``ll-assign-layouts`` and
``ll-lower-conversions``, compiled to the back end of several targets: wherever stock Triton
compiles a program, ours must too (the plugin never makes a kernel fail that Triton compiles).

The single-convert fuzz (``test_lower_conversions_compile.py``) has no structure around its
conversion; here conversions sit in loop bodies, at loops' initial values and yields, in
branches, in ``scf.while`` regions and in noinline callees.  This found that AMD's conversion to
LLVM cannot take an island's result where a loop or branch joins values
(``op_requests.values_joined_at_region_ends``).  Each compile is its own ``ll-opt``
process: an abort inside Triton ends one compile, not the test run.  Two programs a target and a
run that stock compiles (the first two of six, drawn from seeds of the installed release:
``support.release_seed``): CI's two full runs (3.9 and 3.6) compile four different programs a
target between them.  The programs use 32
lanes, so the AMD targets are the wave32 ones (RDNA); ``amd-region-joins.mlir`` covers CDNA.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from linear_layouts.tools.fuzz.random_programs import random_program
from support.release_seed import seed_for_this_release

TARGETS = {"cuda:80": "ptx", "cuda:90": "ptx", "cuda:100": "ptx", "cuda:120": "ptx", "hip:gfx1100": "amdgcn",
           "hip:gfx1201": "amdgcn"}
SEEDS = [seed_for_this_release(base) for base in range(1, 7)]
PROGRAMS = 2     # compiled both ways, a target and a run
PIPELINE = "ll-assign-layouts{memory_ops=true},ll-lower-conversions{stock_gate=false}"


def _compile(path: str, emit: str, pipeline: str | None) -> subprocess.CompletedProcess:
    ll_opt = os.path.join(os.path.dirname(sys.executable), "ll-opt")
    command = [ll_opt, path, "--emit", emit, "-o", path + "." + emit] + (["-p", pipeline] if pipeline else [])
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_structured_programs_compile_wherever_stock_does(target, tmp_path):
    emit = TARGETS[target]
    compiled, stock_failed = 0, []
    for seed in SEEDS:
        if compiled == PROGRAMS:
            break
        text = random_program(random.Random(seed), kernel=True, calls=True, whiles=True, loop_loads=True)
        path = str(tmp_path / f"seed{seed}.ttgir")
        with open(path, "w") as f:
            f.write(text.replace('ttg.target = "cuda:90"', f'ttg.target = "{target}"'))
        if _compile(path, emit, None).returncode != 0:
            stock_failed.append(seed)
            continue
        ours = _compile(path, emit, PIPELINE)
        assert ours.returncode == 0, f"seed {seed} on {target}: stock compiles, ours does not: {ours.stderr[:500]}"
        compiled += 1
    if not compiled:
        pytest.skip(f"stock Triton compiles none of seeds {stock_failed} for {target} with this release")
