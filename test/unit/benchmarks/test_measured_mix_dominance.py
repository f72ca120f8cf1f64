"""benchmarks/studies/measured_mix_dominance.py: the held-out rows where our island needs no fewer
barriers and shared-memory instructions than stock's code as measured.  docs/lowering-choice.md
quotes these totals, so they are read here from the rows."""

from __future__ import annotations

import sys

from support import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks" / "studies"))
import measured_mix_dominance  # noqa: E402


def test_the_totals_the_docs_quote():
    text = "\n".join(measured_mix_dominance.report())
    assert "* dominated: 37 rows, geomean 1.045, above 1.05: 15, below 0.95: 2" in text
    assert "* fewer accesses: 153 rows, geomean 0.992, above 1.05: 36, below 0.95: 33" in text
    assert "Of the 37 dominated rows, 29 are conversions stock moves with `stmatrix`/`ldmatrix`" in text
    assert "| plan_fresh_9001_9109 | 130 | 0.952 / 7 | 2, 1.023, 1, 0 | 0.951 / 6 |" in text
    # the draw timed after the study was written
    assert "| plan_fresh_9301_9409 | 129 | 0.952 / 5 | 8, 1.020, 2, 6 | 0.950 / 3 |" in text


def test_how_a_mix_is_sorted():
    kind = measured_mix_dominance.kind_of
    stock = {"ld_shared": 8, "st_shared": 8, "bar": 3}
    assert kind({"ld_shared": 8, "st_shared": 8, "bar": 5}, stock) == "dominated"
    assert kind({"ld_shared": 4, "st_shared": 8, "ldmatrix": 4, "bar": 3}, stock) == "dominated"   # same counts, other mix
    assert kind({"ld_shared": 4, "st_shared": 8, "ldmatrix": 2, "bar": 3}, stock) == "fewer accesses"
    assert kind({"ld_shared": 16, "st_shared": 16, "bar": 1}, stock) == "fewer barriers"
    assert kind({"shfl": 2, "bar": 3}, stock) == "shuffles"


def test_the_committed_report_is_the_study_run_now():
    committed = (REPO / "benchmarks" / "results" / "measured_mix_dominance.md").read_text()
    assert committed == "\n".join(measured_mix_dominance.report()) + "\n"
