"""``benchmarks/gluon_forms_gpu.py matmul --dry``: the expert's mma_v2 matmul compiles for sm_90 in every
mode, stock with no island and the plugin's modes with its conversions as islands: three, but
under the release the measured table was timed with (``lowering/choosing/measured_choices.json``)
the B operand's conversion is stock's (measured faster inside this kernel)."""

import json
import subprocess
import sys

import pytest

from support import REPO

pytest.importorskip("triton.experimental.gluon")
import triton  # noqa: E402

from linear_layouts.lowering.choosing import measured_choices  # noqa: E402


def test_the_matmul_compiles_in_every_mode_with_three_islands_of_ours():
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gluon_forms_gpu.py"), "matmul", "--dry"],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
            for line in run.stdout.splitlines() if line.startswith("| ") and "---" not in line}
    assert rows["stock"][:2] == ["-", "0"]
    measured_release = measured_choices.same_release(json.load(open(measured_choices.TABLE))["triton"],
                                                      triton.__version__)
    islands = "2" if measured_release else "3"
    assert rows["ours"][:2] == ["-", islands] and rows["ours_asm"][:2] == ["-", islands]
    assert rows["ours_b_stock"][:2] == ["-", "2"]
    # the automatic form: the front end rejects CoalescedLayout aranges (the stored result, in the
    # kernel's mma layout, meets the store's offsets in a binary op), so both resolutions get AutoLayout ones
    assert rows["auto_ours"][0] == "auto" and rows["auto_triton"][0] == "auto"
