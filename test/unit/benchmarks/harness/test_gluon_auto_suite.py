"""benchmarks/gluon_forms_gpu.py kernels (harness/gluon_auto_suite.py) on the CPU: ``--dry`` compiles every form of every kernel for
sm_90, the auto form with ours without a fallback; and the GPU summary's arithmetic on made-up
runs."""

import os
import subprocess
import sys

import pytest

from support import REPO  # noqa: E402

pytest.importorskip("triton.experimental.gluon")
sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
from harness import gluon_auto_suite  # noqa: E402


def test_dry_compiles_every_form_and_ours_resolves_every_auto_form(tmp_path):
    """The script as the lead runs it, in a process of its own (it imports the installed package)."""
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, os.path.join(str(REPO), "benchmarks", "gluon_forms_gpu.py"), "kernels", "--dry",
                          "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    rows = {line.split(" | ")[0].strip("| "): [cell.strip() for cell in line.strip("|\n ").split(" | ")[1:]]
            for line in run.stdout.splitlines() if line.startswith("| ") and "compiles" in line}
    assert list(rows) == ["copy", "transpose", "column_sum", "row_softmax"]
    for name, (expert, ours, triton_, newcomer, advised) in rows.items():
        assert advised.startswith("compiles") and "changed nothing" not in advised, (name, advised)
        for cell in (expert, ours, newcomer):
            assert cell.startswith("compiles") and "fell back" not in cell, (name, cell)
        # every expert and every auto form resolved by ours loads 16 bytes at a time; a newcomer's never
        assert "128-bit loads 0" not in expert and "128-bit loads 0" not in ours and "128-bit loads 0," in newcomer
        assert "128-bit loads 0" not in advised        # the advice applied: 16-byte loads, as the expert's
    # stock's resolution rejects the transpose (two coalesced layouts meet at the tile) and the
    # column sum (the reduction's result meets the store's coalesced layout)
    assert {name for name, cells in rows.items() if cells[2].startswith("fails")} == {"transpose", "column_sum"}
    assert "found conflicting encodings" in rows["transpose"][2]
    assert any(name.startswith("gluon_auto_dry_") for name in os.listdir(tmp_path))


def test_summary_and_render_from_made_up_runs():
    def run(ms, digest, equal=True, close=True):
        return {"ms": ms, "digest": digest, "fell_back": False, "equal_reference": equal, "close_reference": close}
    runs = {"expert": [{"copy": run(1.0, 7), "transpose": run(2.0, 9)}] * 2,
            "auto_ours": [{"copy": run(1.02, 7), "transpose": run(2.2, 8, equal=False)}] * 2,
            "auto_triton": [{"copy": run(1.0, 7), "transpose": {"error": "found conflicting encodings for value:"}}] * 2,
            "newcomer": [{"copy": run(2.0, 7), "transpose": run(10.0, 9)}] * 2,
            "newcomer_advised": [{"copy": run(1.0, 7), "transpose": run(2.5, 9)}] * 2}
    rows = gluon_auto_suite.summarize(runs)
    assert rows[1]["error"] == {"auto_triton": "found conflicting encodings for value:"}
    assert rows[1]["exact"] == {"expert": True, "auto_ours": False, "newcomer": True, "newcomer_advised": True}
    text = gluon_auto_suite.render(rows, 2, "H100", "triton x")
    assert "auto with ours / expert: geomean **1.059**, worst **1.100** over 2 kernels" in text
    assert "Triton's resolution compiles 1 of 2 auto forms; ours / Triton's geomean **1.020**, >= 10% faster on 0" in text
    assert "ours bit-identical to the expert's on 1/2; every mode that compiles equal to or within tolerance" in text
    assert "| transpose | 2.0000 | 2.2000 | fails | 10.0000 | 2.5000 | 1.100 | - | 5.000 | 1.250 | no / close | " \
           "auto_triton: found" in text
    # newcomer / expert: 2.0 and 5.0 (geomean 3.162); advised / expert 1.0 and 1.25 (1.118): (3.162 - 1.118) / 2.162
    assert "newcomer with the advice applied / expert geomean **1.118**; gap recovered **0.95**" in text
