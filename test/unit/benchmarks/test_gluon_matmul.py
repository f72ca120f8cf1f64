"""``benchmarks/gluon_matmul_gpu.py --dry``: the expert's mma_v2 matmul compiles for sm_90 in every
mode, stock with no island and the plugin's modes with its three conversions as islands."""

import subprocess
import sys

import pytest

from support import REPO

pytest.importorskip("triton.experimental.gluon")


def test_the_matmul_compiles_in_every_mode_with_three_islands_of_ours():
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gluon_matmul_gpu.py"), "--dry"],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
            for line in run.stdout.splitlines() if line.startswith("| ") and "---" not in line}
    assert rows["stock"][:2] == ["yes", "0"]
    assert rows["ours"][:2] == ["yes", "3"] and rows["ours_asm"][:2] == ["yes", "3"]
