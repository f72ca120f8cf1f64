"""benchmarks/studies/matrix_use_rule.py: the gates on shared-memory picks whose matrix
instructions differ from stock's, scored on the committed held-out draws.  docs/lowering-choice.md
quotes these totals ('Bytes through matrices'), so they are read here from the rows."""

from __future__ import annotations

import sys

import pytest

from support import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks" / "studies"))
import matrix_use_rule  # noqa: E402

# Committed evidence, planned with triton 3.6's conventions written out (matrix_use_rule.RELEASE): the
# answer cannot depend on the installed Triton, so make test-compat leaves these out (the module's
# imports reach Triton through the package, which support.release_independence cannot see past).
pytestmark = pytest.mark.release_independent


def test_the_totals_the_docs_quote(monkeypatch):
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)    # the suite's conftest turns the gate off
    text = "\n".join(matrix_use_rule.report())
    assert ("* bytes: above 1.05 over the 7 draws it was written on: 70 measured, 58 gated; 35 conversions taken to stock, which had run "
            "1.008x stock in geomean, 12 above 1.05") in text
    assert ("* matrices where stock has none: above 1.05 over the 7 draws it was written on: 70 measured, 44 gated; 114 conversions taken "
            "to stock, which had run 1.008x stock in geomean, 26 above 1.05") in text
    assert ("* matrix use: above 1.05 over the 7 draws it was written on: 70 measured, 35 gated; 182 conversions taken to "
            "stock, which had run 0.996x stock in geomean, 35 above 1.05") in text
    # the draw made after the gates (the round-trip case left out)
    assert ("| plan_fresh_9001_9109 (drawn after the gates) | matrices where stock has none | 129 | 0.951 / 6 | 0.952 / 4 "
            "| 17, 0.994, 2 | 2 |") in text
    # the later gate, not shipped: on the draw it was tried on first it takes no round trip whole
    assert ("* written on 8 draw(s): 13 round trips taken whole, geomean 1.078, above 1.05: 8, below 0.95: 1; "
            "49 taken in one direction only") in text
    assert ("* tried first on 1 draw(s): 0 round trips taken whole, geomean nan, above 1.05: 0, below 0.95: 0; "
            "8 taken in one direction only") in text


def test_a_gate_that_takes_nothing_leaves_the_draw_as_measured():
    import gzip
    import json
    with gzip.open(REPO / "benchmarks" / "results" / "plan_fresh_3001_3109.json.gz", "rt") as f:
        rows = json.load(f)["rows"]
    s = matrix_use_rule.score(rows, lambda plan: False)
    assert (s["n"], round(s["geomean"], 3), s["above"], s["taken"], s["partly"]) == (80, 0.955, 9, 0, 0)
    assert s["gated"] == s["geomean"] and s["gated_above"] == s["above"]
