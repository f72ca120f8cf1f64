"""benchmarks/studies/register_file_rule.py: the register-file rule scored on the committed H100
runs.  docs/lowering-choice.md quotes these totals ('Past the register file'), so they are read
here from the rows."""

from __future__ import annotations

import sys

from support import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks" / "studies"))
import register_file_rule  # noqa: E402


def test_the_totals_the_docs_quote():
    text = "\n".join(register_file_rule.report())
    # the run the rule was written after: the islands of then, every conversion past the limit
    assert ("* taken by the rule: 16; their islands (the default of then) over stock: 16 timed, geomean 1.005, "
            "0.097 to 2.717, above 1.05: 8, below 0.95: 2") in text
    # the seeds drawn after it: the rule ties stock where the ungated islands spread from 0.03x to 3.9x
    assert ("* taken by the rule: 29; the ungated islands over stock: 29 timed, geomean 0.961, 0.031 to 3.900, "
            "above 1.05: 8, below 0.95: 5; the default with the rule over stock: 29 timed, geomean 1.001, "
            "0.999 to 1.004, above 1.05: 0, below 0.95: 0") in text
    assert ("* left to the choice (the two layouts within 255 registers): 12; the default over stock: 12 timed, "
            "geomean 0.927, 0.427 to 1.324, above 1.05: 1, below 0.95: 2") in text
    # what decides: the bytes the islands' kernel spills against stock's (ptxas -v, the same kernels)
    assert ("* islands spilling more than stock's kernel: 10 timed, geomean 1.460, 0.975 to 3.900, above 1.05: 5, "
            "below 0.95: 0") in text
    assert ("* islands spilling as much as stock's kernel: 12 timed, geomean 1.008, 0.902 to 1.102, above 1.05: 2, "
            "below 0.95: 1") in text
    assert ("* islands spilling less than stock's kernel: 7 timed, geomean 0.488, 0.031 to 1.050, above 1.05: 1, "
            "below 0.95: 4") in text
    # the ordinary held-out draws hold at most 64 registers a layout: the rule takes only the round-trip case
    assert "Rows the rule takes over every `plan_fresh_*` draw, the replicated round-trip case aside: 0 (none)." in text


def test_the_committed_report_is_the_study_run_now():
    committed = (REPO / "benchmarks" / "results" / "register_file_rule.md").read_text()
    assert committed == "\n".join(register_file_rule.report()) + "\n"


def test_the_corpora_hold_one_conversion_past_the_register_file():
    """Every conversion of the committed TTGIR corpora (sm_90, sm_80, Liger-Kernel,
    flash-linear-attention, gfx942) at its own element width: only the one-warp matmul_w1
    accumulator (f16 64x64, 128 + 128 registers; sm_90 and sm_80) is past the limit, and the
    default left it to stock before the rule too (on sm_90 by a measurement, on sm_80 by stock's
    floor).  (At 64 bits, a width the benchmarks also draw, the two-warp matmuls and FLA's
    attention accumulators would be.)"""
    import os
    sys.path.insert(0, str(REPO / "benchmarks"))
    from harness.conversion_cases import CORPUS, converts_in
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.register_file import past_register_file
    from linear_layouts.lowering.target import target_named
    past, seen = set(), 0
    for folder, target in (("cuda90", "sm_90"), ("cuda80", "sm_80"), ("liger_kernel", "sm_90"), ("fla", "sm_90"),
                           ("gfx942", "gfx942")):
        for name in sorted(os.listdir(os.path.join(CORPUS, folder))):
            if not name.endswith(".ttgir"):
                continue
            text = open(os.path.join(CORPUS, folder, name)).read()
            for _, case in converts_in(text, f"{folder}/{name}"):
                a, b = to_linear_layout(case.src_resolved, case.shape), to_linear_layout(case.dst_resolved, case.shape)
                seen += 1
                if past_register_file(a, b, case.bits, target_named(target)):
                    past.add(f"{folder}/{name}")
    assert seen > 400
    assert past == {"cuda90/matmul_w1.ttgir", "cuda80/matmul_w1.ttgir"}
