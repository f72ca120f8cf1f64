"""The struct of every island is the one the installed Triton expects (oracle: Triton's own
conversion to LLVM, in a subprocess).

Releases differ on layouts that replicate registers: triton 3.6 keeps the duplicate registers
of a blocked tile larger than the tensor (its struct for a 16x2 tensor in
``sizePerThread = [4, 8]`` has 32 fields), 3.9 drops them (8 fields), and 3.9 also drops the
zero register bases of other layouts from the struct.  An island whose struct differs leaves an
unresolved cast, and the kernel fails with "LLVM Translation failed for operation:
builtin.unrealized_conversion_cast" (the failure seen on triton 3.6 before layouts were read
per release).  Every case below converts a replicating layout to and from a plain one.
"""

import json
import os
import random
import subprocess
import sys

import pytest

pytest.importorskip("triton")

from linear_layouts.tools.fuzz.testcases import random_linear_encoding, single_convert_ttgir  # noqa: E402
from linear_layouts.passes.lower_conversions import lower_text  # noqa: E402
from support import ORACLES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PLAIN = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [%d, 1], order = [1, 0]}>"


def blocked(spt, tpw, wpc, order):
    return f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, order = {order}}}>"


def replicating_layouts(rng, shape, num_warps):
    """Layouts of ``shape`` that hold some elements more than once."""
    wsplit = {1: [1, 1], 2: [2, 1], 4: [2, 2], 8: [4, 2]}[num_warps]
    out = [
        blocked([4, 8], [2, 16], wsplit, [0, 1]),   # the 16x2 case: tile 16x256
        blocked([8, 8], [8, 4], wsplit, [0, 1]),
        blocked([1, 4], [4, 8], wsplit, [1, 0]),
        blocked([2, 2], [16, 2], wsplit[::-1], [1, 0]),
        f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {wsplit}, instrShape = [16, 8]}}>",
    ]
    out += [random_linear_encoding(rng, shape, num_warps, 32, broadcast=True) for _ in range(4)]
    return out


def cases():
    rng = random.Random(2026)
    out = []
    for shape in ((16, 2), (4, 32), (8, 8), (2, 64), (32, 32)):
        for num_warps in (1, 4, 8):
            plain = PLAIN % num_warps
            for layout in replicating_layouts(rng, shape, num_warps):
                for src, dst in ((layout, plain), (plain, layout)):
                    out.append((shape, num_warps, src, dst))
    return out


def test_island_structs_match_the_installed_triton():
    texts, names = [], []
    for shape, num_warps, src, dst in cases():
        text = single_convert_ttgir(shape, "f32", src, dst, num_warps, "sm_90")
        lowered, outcomes = lower_text(text)
        if not outcomes[0].lowered:
            continue
        texts.append(lowered)
        names.append(f"{shape} warps={num_warps} {src} -> {dst}")
    assert len(texts) > 100, "most cases must be lowered for this test to mean something"
    run = subprocess.run([sys.executable, str(ORACLES / "struct_oracle.py")], input=json.dumps(texts),
                         capture_output=True, text=True, timeout=600)
    lines = run.stdout.splitlines()
    assert len(lines) == len(texts), f"the oracle stopped early: {run.stderr[-2000:]}"
    bad = [(name, json.loads(line)) for name, line in zip(names, lines) if json.loads(line)]
    assert not bad, f"{len(bad)} of {len(texts)} islands do not fit Triton's struct; first: {bad[0]}"
