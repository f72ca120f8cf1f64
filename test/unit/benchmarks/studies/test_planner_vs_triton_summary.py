"""benchmarks/studies/planner_vs_triton.py's closing summary is computed from the run's own rows (no
fixed paragraph): counts per verdict, the cases of each kind, mechanism differences, and our
bank conflicts.  Rows are made up here; nothing is compiled."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from support import REPO  # noqa: E402

ROOT = REPO


def load_benchmark():
    spec = importlib.util.spec_from_file_location("planner_vs_triton", ROOT / "benchmarks" / "studies" / "planner_vs_triton.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stock(shared, **ops):
    return {"shared": shared, "ops": {k.replace("_", "."): v for k, v in ops.items()}}


def ours(method, shared, shuffles=0, conflicts=0, **ops):
    return {"method": method, "scope": "warp", "shared": shared, "shuffles": shuffles, "selects": 0,
            "conflicts": conflicts, "ops": {k.replace("_", "."): v for k, v in ops.items()}}


ROWS = [
    ("transpose", "f32", 90, stock(4096, st_shared_v4_b32=8, ld_shared_v4_b32=8, bar_sync=1),
     ours("shared", 4096, st_shared_b128=8, ld_shared_b128=8, bar_sync=1)),
    ("ldmatrix load", "f16", 90, stock(256, st_shared_v1_b16=4, ld_shared_v1_b16=4),
     ours("shared", 256, ldmatrix_trans_x2=1, st_shared_b16=4)),
    ("stock shuffles", "f16", 90, stock(0, shfl_sync=4, selp=8),
     ours("shared", 512, ldmatrix_x4=1, stmatrix_x4=1)),
    ("bigger buffer", "f32", 90, stock(1024, st_shared_v4_b32=4, ld_shared_v4_b32=4, bar_sync=7),
     ours("shared", 4096, conflicts=3, st_shared_b128=4, ld_shared_b128=4, bar_sync=1)),
    ("broadcast source", "f32", 90, stock(128, st_shared_v1_b32=1, ld_shared_v1_b32=2),
     ours("shuffle", 0, shuffles=2, shfl_idx=2)),
    ("cross-CTA on sm_80", "f32", 80, stock(4096, st_shared_v4_b32=4, ld_shared_v4_b32=4),
     {"error": "cross-CTA conversion: ..."}),
    ("odd encoding", "f32", 90, {"error": "error: ..."}, ours("noop", 0)),
]


def test_verdicts_are_computed_per_row():
    bench = load_benchmark()
    assert [bench.verdict_kind(s, m) for _, _, _, s, m in ROWS if "error" not in m] == [
        "same", "better", "mixed", "worse", "mixed", "stock n/a"]
    assert bench.verdict(ROWS[1][3], ROWS[1][4]) == "better: shared-memory instrs 5 vs 8"
    assert bench.verdict(ROWS[3][3], ROWS[3][4]) == "**worse**: scratch B 4096 vs 1024"
    assert bench.verdict(ROWS[2][3], ROWS[2][4]) == ("mixed: shfl 0 vs 4; scratch B 512 vs 0; "
                                                     "shared-memory instrs 2 vs 0")


def test_summary_says_what_this_run_measured():
    assert load_benchmark().summary(ROWS).splitlines() == [
        "## Summary of this run",
        "",
        "* 7 cases: 1 same, 1 better, 1 worse, 2 mixed, 1 where stock Triton did not compile, "
        "1 left to Triton by our planner.",
        "* better: ldmatrix load.",
        "* **worse**: bigger buffer.",
        "* mixed: stock shuffles, broadcast source.",
        "* more scratch than stock: stock shuffles (512 vs 0 B), bigger buffer (4096 vs 1024 B).",
        "* shared memory where stock shuffles: stock shuffles.",
        "* shuffles where stock goes through shared memory: broadcast source.",
        "* bank conflicts in our plans (extra wavefronts per warp): bigger buffer (3).",
    ]


def test_summary_of_a_run_where_every_plan_matches_stock():
    rows = [ROWS[0], ("transpose again",) + ROWS[0][1:]]
    assert load_benchmark().summary(rows).splitlines() == [
        "## Summary of this run",
        "",
        "* 2 cases: 2 same, 0 better, 0 worse, 0 mixed.",
        "* bank conflicts in our plans: none, in all 2 (our exact count).",
    ]
