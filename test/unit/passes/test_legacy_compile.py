"""mode="legacy" end to end on the CPU: ``triton.compile`` under ``linear_layouts.enabled("legacy")``.

A lane-scope conversion (blocked sizePerThread 4 -> 1 in one warp), which our linear mode may
do with shuffles, goes through shared memory in legacy mode: the PTX has st/ld.shared and
bar.sync and no shfl/ldmatrix/stmatrix; on gfx942 ds_write/ds_read and no ds_bpermute.  The
instruction mix of the assembly equals the legacy plan's (as ``test_lower_conversions_compile``
checks for linear plans), padded addresses included.
"""

from __future__ import annotations

import os
import re

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402

import linear_layouts  # noqa: E402
from linear_layouts.lowering.describe import describe_plan  # noqa: E402
from linear_layouts.tools.fuzz.testcases import amdgcn_mix, ptx_mix, single_convert_ttgir  # noqa: E402
from linear_layouts.passes.drop_in import hook# noqa: E402
from linear_layouts.passes.lower_conversions import lower_text  # noqa: E402
from support.instruction_mix import expected_mix, measured_mix  # noqa: E402

TARGETS = {"sm_90": GPUTarget("cuda", 90, 32), "gfx942": GPUTarget("hip", "gfx942", 64)}


def blocked(spt, lanes, warps, rank=1):
    if rank == 1:
        return (f"#ttg.blocked<{{sizePerThread = [{spt}], threadsPerWarp = [{lanes}], warpsPerCTA = [{warps}], "
                "order = [0]}>")
    raise ValueError(rank)


pytestmark = pytest.mark.usefixtures("private_triton_cache")  # conftest.py


def _compile(tmp_path, text, target):
    path = tmp_path / "kernel.ttgir"
    path.write_text(text)
    return triton.compile(str(path), target=TARGETS[target])


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_enabled_legacy_uses_shared_memory_for_a_lane_conversion(tmp_path, target, capfd):
    lanes = 32 if target == "sm_90" else 64
    text = single_convert_ttgir((4 * lanes,), "f16", blocked(4, lanes, 1), blocked(1, lanes, 1), 1, target=target)
    with linear_layouts.enabled("legacy", remarks=True) as config:
        assert "mode=legacy" in config.pipeline
        kernel = _compile(tmp_path, text, target)
    assert "remark: [ll-lower-conversions] lowered: shared" in capfd.readouterr().err
    if target == "sm_90":
        ptx = kernel.asm["ptx"]
        assert not re.search(r"\b(shfl|ldmatrix|stmatrix)\b", ptx)
        assert "st.shared" in ptx and "ld.shared" in ptx and "bar.sync" in ptx
    else:
        asm = kernel.asm["amdgcn"]
        assert "ds_bpermute" not in asm and "ds_write" in asm and "ds_read" in asm


CASES = [
    # (shape, element, src, dst, warps): padded 2-D scratch, vectors on both sides
    ((32, 64), "f16", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
     "order = [1, 0]}>", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], "
     "order = [1, 0]}>", 4),
    # a transpose (fastest dims differ): scalar accesses, rows of 32 padded by 1
    ((32, 64), "f32", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
     "order = [1, 0]}>", "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], "
     "order = [0, 1]}>", 4),
]


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_legacy_instruction_mix_is_the_plans(tmp_path, target, case):
    shape, element, src, dst, warps = CASES[case]
    if target == "gfx942":
        src = src.replace("[4, 8]", "[8, 8]").replace("[2, 16]", "[4, 16]").replace("[8, 4]", "[16, 4]")
        dst = dst.replace("[4, 8]", "[8, 8]").replace("[2, 16]", "[4, 16]").replace("[8, 4]", "[16, 4]")
    text = single_convert_ttgir(shape, element, src, dst, warps, target=target)
    lowered, outcomes = lower_text(text, mode="legacy")
    (outcome,) = outcomes
    assert outcome.lowered and outcome.method == "shared", outcome.reason
    kernel = _compile(tmp_path, lowered, target)
    nvidia = target == "sm_90"
    mix = ptx_mix(kernel.asm["ptx"]) if nvidia else amdgcn_mix(kernel.asm["amdgcn"])
    want = expected_mix(outcome.plan)
    assert +want == +measured_mix(mix, nvidia, warps), describe_plan(outcome.plan)
