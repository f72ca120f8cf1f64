"""The contexts harness without a GPU (benchmarks/harness/plan_contexts.py, benchmarks/harness/fit_choice.py):
the chain kernel converts A -> B -> A once per iteration, each conversion depending on the one
before; fresh draws are reproducible, cover every family and the stated ranges; the gate's
decision rule on exact numbers."""

import math
import os
import re
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
from harness import fit_choice  # noqa: E402
from harness import plan_contexts  # noqa: E402


# Tests that recompute what the docs and the model's constants quote from committed timings (and
# plan with triton 3.6's conventions written out): their answer cannot depend on the installed
# Triton, so make test-compat leaves them out as it does the modules that reach no Triton
# (support.release_independence; this module's imports reach Triton, these tests do not).
COMMITTED_EVIDENCE = pytest.mark.release_independent


def test_chain_kernel_is_a_dependent_round_trip():
    case = plan_contexts.first_pairs()[0]
    text = plan_contexts.chain_ttgir(case, iterations=7)
    loop = text[text.index("scf.for"):text.index("scf.yield")]
    converts = re.findall(r"(%\w+) = ttg\.convert_layout (%\w+) : tensor<64x128xi16, (#ttg\.blocked<[^>]*>)> -> "
                          r"tensor<64x128xi16, (#ttg\.blocked<[^>]*>)>", loop)
    assert len(converts) == 2
    (y, xi, a, b), (z, y_again, b_again, a_again) = converts
    assert y_again == y and (a, b) == (a_again, b_again) and a == case.src and b == case.dst
    assert "iter_args(%a = %x)" in loop and f"%xi = arith.addi %a, %is" in loop
    assert f"scf.yield {z}" in text and "arith.constant 7 : i32" in text
    assert text.count("ttg.convert_layout") == 2


def test_fresh_draws_are_reproducible_and_cover_the_ranges():
    first, again = plan_contexts.fresh_cases(3, 40), plan_contexts.fresh_cases(3, 40)
    assert [c.name for c in first] == [c.name for c in again] and len(first) == 40
    assert {c.origin for c in first} == {f"fresh:{f}" for f in plan_contexts.FAMILIES}
    assert {c.num_warps for c in first} <= {1, 2, 4, 8} and {c.bits for c in first} <= {8, 16, 32, 64}
    assert {len(c.shape) for c in first} == {1, 2}
    other = {(c.src, c.dst, c.shape, c.bits) for c in plan_contexts.fresh_cases(4, 40)}
    assert not other & {(c.src, c.dst, c.shape, c.bits) for c in first}


def test_held_out_kernel_cases_of_each_library_at_their_own_width():
    """Liger-Kernel's and flash-linear-attention's sm_90 conversions, each distinct once, named by
    library, file and line; the counts are those of the committed corpora (55 distinct in fla's
    32 files with a convert, 26 of them with a plan each way and at most 64 registers)."""
    from harness.conversion_cases import held_out_kernel_cases
    fla = held_out_kernel_cases("fla")
    assert len(fla) == 55 and len({c.key for c in fla}) == 55
    assert all(c.name.startswith("fla/") and c.origin.startswith("fla/") and c.origin.endswith(".cuda90.ttgir")
               for c in fla)
    timed = [c for c in fla if plan_contexts.usable(c.src_resolved, c.dst_resolved, c.shape, c.bits)]
    assert len(timed) == 26 and {(c.bits, c.num_warps) for c in timed} == {(32, 4), (16, 4)}
    assert "fla/attn_fwd_bf16#275:128x64:i16" in {c.name for c in timed}
    liger = held_out_kernel_cases()
    assert liger and all(c.name.startswith("liger/") for c in liger)
    shared = {c.key for c in liger} & {c.key for c in timed}
    assert {c.name for c in timed if c.key in shared} == {"fla/chunk_o_bwd_dv_bf16#255:64x64:i16",
                                                          "fla/chunk_o_fwd_f32#321:64x64:i32"}
    both = plan_contexts.held_out_cases(liger=True, fla=True)
    assert len(both) == len({c.key for c in both}) == 9 + 26 - 2
    assert [c.name for c in both[:9]] == [c.name for c in plan_contexts.held_out_cases(liger=True, fla=False)]


def test_spt_change_doubles_or_halves_the_fastest_dim():
    import random
    rng = random.Random(0)
    for _ in range(20):
        a, b = plan_contexts._spt_change(2, 4, rng)
        size = lambda s: eval(re.search(r"sizePerThread = (\[[^\]]*\])", s).group(1))  # noqa: E731
        assert a.replace(str(size(a)), "") == b.replace(str(size(b)), "")
        ratio = [x / y for x, y in zip(size(a), size(b)) if x != y]
        assert ratio in ([2.0], [0.5])


def _case(family, ratio, scope_family="warp/shuffle/warps"):
    return {"case": "x/0:y", "origin": family, "layout_family": family, "stock": {"chain": 1, "latency": 1},
            "cands": [{"f": (0,) * 8, "family": scope_family, "ratio": ratio, "us": {"chain": 1, "latency": 1}}]}


def test_gate_keeps_a_family_only_beyond_its_error():
    # mean log ratio + 2 standard errors < 0: six picks at 0.8 and 0.9 pass, a wide spread fails
    steady = [_case("a", r) for r in (0.8, 0.9) * 3]
    gates = fit_choice.fit_gates(steady, None, 5)
    logs = [math.log(r) for r in (0.8, 0.9) * 3]
    assert gates["warp/shuffle/warps"]["decision"] == "ours"
    assert gates["warp/shuffle/warps"]["geomean_pick_over_stock"] == round(math.exp(sum(logs) / 6), 4)
    wide = [_case("a", r) for r in (0.5, 1.6) * 3]
    assert fit_choice.fit_gates(wide, None, 5)["warp/shuffle/warps"]["decision"] == "stock"
    few = [_case("a", 0.5) for _ in range(4)]
    assert fit_choice.fit_gates(few, None, 5)["warp/shuffle/warps"]["decision"] == "stock"


def test_score_counts_stock_as_an_option():
    cases = [_case("a", 0.8), _case("a", 1.2)]
    keep = {"warp/shuffle/warps": {"decision": "ours"}}
    s = fit_choice.score(cases, None, keep)
    assert s["close"] == 1 and s["worst"] == 1.2 and s["above"] == 1
    s = fit_choice.score(cases, None, {"warp/shuffle/warps": {"decision": "stock"}})
    assert s["close"] == 1 and s["worst"] == 1.0 and s["geomean"] == 1.0


def _timed(us):
    return {"us": us, "exact": True}


def test_outliers_are_retimed_and_the_median_kept():
    """One do_bench sample of stock's own binary came out 3.9x (fresh seed 101, case 39): a
    context where any mode is more than 5% from stock is timed twice more, every mode, and the
    median of the three samples counts; the other contexts are left alone."""
    row = {"modes": {"stock": {"chain": _timed(42.0), "latency": _timed(19.3)},
                     "stock_again": {"chain": _timed(42.4), "latency": _timed(19.2)},
                     "ours": {"chain": _timed(164.5), "latency": _timed(18.7)}}}
    assert plan_contexts.outlier_contexts(row) == ["chain"]
    again = {"stock": iter([41.9, 42.1]), "stock_again": iter([42.0, 42.2]), "ours": iter([42.3, 41.8])}
    calls = []

    def timer(mode):
        def once():
            calls.append(mode)
            return next(again[mode])
        return once
    timers = {(m, c): timer(m) for m in again for c in ("chain", "latency")}
    plan_contexts.retime_outliers(row, timers)
    assert calls == ["stock", "stock_again", "ours"] * 2                # interleaved
    assert row["modes"]["ours"]["chain"] == {"us": 42.3, "exact": True, "samples": [164.5, 42.3, 41.8],
                                             "retimed": True}
    assert row["modes"]["stock"]["chain"]["us"] == 42.0
    assert row["modes"]["ours"]["latency"] == _timed(18.7)              # within 5%: one sample
    assert plan_contexts.worst_ratio(row, "ours") == pytest.approx(max(42.3 / 42.0, 18.7 / 19.3))


def test_modes_leave_the_pick_out_when_asked_and_keep_stock_and_ours():
    case = plan_contexts.fresh_cases(101, 1)[0]
    assert set(plan_contexts.modes_of(case, train=False, table=False)) == {"stock", "stock_again", "ours", "pick"}
    assert set(plan_contexts.modes_of(case, train=False, table=False, pick=False)) == {"stock", "stock_again", "ours"}


def test_every_pair_times_each_forward_plan_with_each_return_plan_but_stock_with_stock():
    """gla_bwd_inter #290 (1x16 i32, 4 warps) has 2 verified candidates each way: with stock's
    lowering of either direction, 3 x 3 - 1 = 8 pairs, each naming both directions' keys."""
    case = next(c for c in plan_contexts.held_out_cases(liger=False, fla=True) if "#290:" in c.name)
    assert plan_contexts.candidate_count(case) == 2 and plan_contexts.candidate_count(case, back=True) == 2
    forward, back = plan_contexts.keys_of(case)
    modes = plan_contexts.modes_of(case, train=False, table=False, pick=False, every_pair=True)
    pairs = {m: p for m, p in modes.items() if m.startswith("pair")}
    assert sorted(pairs) == ["pair0_0", "pair0_1", "pair0_s", "pair1_0", "pair1_1", "pair1_s", "pairs_0", "pairs_1"]
    assert pairs["pairs_1"] == f"ll-lower-conversions{{candidate_for={forward}:stock,{back}:1 measured=false}}"
    assert pairs["pair0_s"] == f"ll-lower-conversions{{candidate_for={forward}:0,{back}:stock measured=false}}"
    assert "pair0_0" not in plan_contexts.modes_of(case, train=False, table=False, pick=False)
    own = plan_contexts.modes_of(case, train=False, table=False, pick=False, own_direction=True)["ours_forward"]
    assert own == f"ll-lower-conversions{{candidate_for={back}:stock measured=false}}"


def test_best_of_every_pair_picks_one_code_per_conversion_by_its_worse_context():
    """Row a: pair0_s is best in the chain (0.5) but worst in latency (1.2): its worse context
    1.2 loses to pairs_0 (0.8 / 0.9 -> 0.9); row b: no pair beats stock, so 1.0.  Geomean
    sqrt(0.9 * 1.0)."""
    def times(chain, latency):
        return {"chain": {"us": chain}, "latency": {"us": latency}}
    rows = [{"case": "a", "family": "f", "modes": {"stock": times(10, 10), "ours": times(11, 11),
                                                   "pair0_s": times(5, 12), "pairs_0": times(8, 9)}},
            {"case": "b", "family": "f", "modes": {"stock": times(10, 10), "ours": times(10.5, 10),
                                                   "pair0_0": times(13, 9)}}]
    b = plan_contexts.best_of_every_pair(rows)
    assert b["best"] == [("a", pytest.approx(0.9), "pairs_0"), ("b", 1.0, "stock")]
    assert b["geomean"] == pytest.approx(0.9 ** 0.5) and b["below_1"] == 1 and b["pairs"] == 3
    lines = plan_contexts.every_pair_lines(rows)
    assert any("geomean **0.949** x stock over 2 conversions, 1 of them below 1.0" in line for line in lines)
    # the kernel's own direction: only pair0_s (worse context 1.2) returns through stock, so stock
    assert b["forward"] == [("a", 1.0, "stock"), ("b", 1.0, "stock")] and b["forward_geomean"] == 1.0
    assert any("(the direction the kernel converts, alone): **1.000**" in line for line in lines)
    assert "| a | 0.900 | pairs_0 | 1.000 | stock |" in lines and "| b | 1.000 | stock | 1.000 | stock |" in lines
    assert plan_contexts.every_pair_lines([{**rows[1], "modes": {"stock": times(1, 1)}}]) == []


def test_a_report_of_a_run_cut_by_its_deadline_says_so():
    environment = {"gpu": "test", "triton": "3.6.0", "grids": {"chain": 4, "latency": 1},
                   "partial": "3 of 9 conversions timed before the 500 s deadline"}
    row = {"case": "c", "family": "fresh:blocked", "modes": {
        "stock": {"chain": {"us": 10.0}, "latency": {"us": 5.0}},
        "stock_again": {"chain": {"us": 10.0}, "latency": {"us": 5.0}},
        "ours": {"chain": {"us": 9.0}, "latency": {"us": 5.5}}}}
    lines = plan_contexts.report_lines([row], "Fresh", "cmd", environment)
    assert lines[0] == "# Fresh (PARTIAL: 3 of 9 conversions timed before the 500 s deadline)"
    assert any(line.startswith("| ours | 1 | 1.100 | 1.000 |") for line in lines)


def test_a_perfect_gate_keeps_each_conversion_at_the_better_of_stock_and_ours():
    """The column "with a perfect gate": each conversion at min(ours / stock, 1), their geomean:
    ratios 0.5 and 2.0 (geomean 1.0) give sqrt(0.5 * 1.0) = 0.707."""
    def row(name, ours):
        return {"case": name, "family": "fresh:blocked", "modes": {
            "stock": {"chain": {"us": 10.0}, "latency": {"us": 10.0}},
            "stock_again": {"chain": {"us": 10.0}, "latency": {"us": 10.0}},
            "ours": {"chain": {"us": ours}, "latency": {"us": ours}}}}
    rows = [row("a", 5.0), row("b", 20.0)]
    s = plan_contexts.summary(rows, "ours")
    assert s["geomean"] == pytest.approx(1.0) and s["perfect_gate"] == pytest.approx(0.5 ** 0.5)
    lines = plan_contexts.report_lines(rows, "Fresh", "cmd", {"gpu": "test", "grids": {}})
    assert any(line.startswith("| ours | 2 | 1.000 | 0.707 | 2.000 (b) |") for line in lines)


@COMMITTED_EVIDENCE
def test_a_perfect_gate_on_the_committed_held_out_draws():
    """docs/lowering-choice.md quotes these: the default (``ours_in_place`` in those runs) at
    0.954 and 0.976 x stock, 0.941 and 0.966 with a perfect gate."""
    import gzip
    import json
    for stem, default, gate in (("plan_fresh_5003_5113_hybrid", 0.954, 0.941), ("plan_fresh_6007_6113_hybrid", 0.976, 0.966)):
        rows = json.load(gzip.open(os.path.join(str(REPO), "benchmarks", "results", stem + ".json.gz"), "rt"))["rows"]
        s = plan_contexts.summary(rows, "ours_in_place")
        assert (round(s["geomean"], 3), round(s["perfect_gate"], 3)) == (default, gate)


HELD_OUT_DRAWS = ("plan_fresh_2741_2857", "plan_fresh_3001_3109", "plan_fresh_4111_4219", "plan_fresh_5003_5113_hybrid",
                  "plan_fresh_6007_6113_hybrid", "plan_fresh_7001_7109_rounds")


@COMMITTED_EVIDENCE
def test_bytes_through_matrices_on_the_committed_held_out_draws():
    """``fitted_model.BYTE_MATRIX_MEASURED`` (and docs/lowering-choice.md) quote these: over the
    six committed held-out draws, the 8-bit conversions whose default chain used more
    ldmatrix/stmatrix than stock's ran 1.010x stock in geomean, 12 of 30 above 1.05x."""
    import gzip
    import json
    from linear_layouts.lowering.choosing.fitted_model import BYTE_MATRIX_MEASURED
    ratios = []
    for stem in HELD_OUT_DRAWS:
        rows = json.load(gzip.open(os.path.join(str(REPO), "benchmarks", "results", stem + ".json.gz"), "rt"))["rows"]
        for row in rows:
            mode = "ours_in_place" if "ours_in_place" in row["modes"] else "ours"
            ratio = plan_contexts.worst_ratio(row, mode)
            stock_mix, our_mix = row["modes"]["stock"].get("chain_mix"), row["modes"][mode].get("chain_mix")
            if ratio and row["bits"] == 8 and stock_mix and our_mix and \
                    our_mix["ldmatrix"] + our_mix["stmatrix"] > stock_mix["ldmatrix"] + stock_mix["stmatrix"]:
                ratios.append(ratio)
    assert (len(ratios), round(plan_contexts.geomean(ratios), 2), sum(x > 1.05 for x in ratios)) == (30, 1.01, 12)
    assert "1.01x stock in geomean, 12 of 30 above 1.05x" in BYTE_MATRIX_MEASURED


@COMMITTED_EVIDENCE
def test_bytes_through_matrices_on_the_draw_made_after_the_rule():
    """docs/lowering-choice.md: on 8101/8209, the 8-bit conversions over 2 warps or more whose
    ungated pick used more ldmatrix/stmatrix than stock went to stock (0.996-1.006x), where the
    pick ran 0.986-1.450x, 5 of 7 above 1.05."""
    import gzip
    import json
    rows = json.load(gzip.open(os.path.join(str(REPO), "benchmarks", "results", "plan_fresh_8101_8209.json.gz"),
                               "rt"))["rows"]
    ours, pick = [], []
    for row in rows:
        stock_mix, pick_mix = row["modes"]["stock"]["chain_mix"], row["modes"]["pick"]["chain_mix"]
        if row["bits"] == 8 and row["num_warps"] >= 2 and \
                pick_mix["ldmatrix"] + pick_mix["stmatrix"] > stock_mix["ldmatrix"] + stock_mix["stmatrix"]:
            assert row["modes"]["ours"]["chain_mix"] == stock_mix, row["case"]     # left to stock
            ours.append(plan_contexts.worst_ratio(row, "ours"))
            pick.append(plan_contexts.worst_ratio(row, "pick"))
    assert (len(ours), round(min(ours), 3), round(max(ours), 3)) == (7, 0.996, 1.006)
    assert (round(min(pick), 3), round(max(pick), 3), sum(x > 1.05 for x in pick)) == (0.986, 1.45, 5)


@COMMITTED_EVIDENCE
def test_broadcast_shuffles_on_every_committed_draw():
    """``fitted_model.BROADCAST_SHUFFLES_MEASURED`` quotes these: over every committed timing of
    fresh and held-out-kernel conversions (the draws before a rule excepted), the rows whose
    default ran a shuffle pick made only of broadcasts in one direction are two, at 1.29x and
    1.50x stock in the worse context."""
    import glob
    import gzip
    import json
    from linear_layouts.dialect.conventions import TritonConventions
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.fitted_model import BROADCAST_SHUFFLES_MEASURED, shuffles_only_broadcast
    from linear_layouts.lowering.planner import plan_conversion
    release = TritonConventions((3, 6))
    results = os.path.join(str(REPO), "benchmarks", "results")
    stems = sorted(os.path.basename(p)[:-len(".json.gz")] for p in glob.glob(os.path.join(results, "plan_fresh_*.json.gz"))
                   if not p.endswith("_before.json.gz")) + ["plan_heldout_kernels"]
    found = {}
    for stem in stems:
        rows = json.load(gzip.open(os.path.join(results, stem + ".json.gz"), "rt"))["rows"]
        for row in rows:
            mode = "ours_in_place" if "ours_in_place" in row["modes"] else "ours"
            mix = row["modes"].get(mode, {}).get("chain_mix") or {}
            if not mix.get("shfl") or not row.get("src"):
                continue
            a, b = (to_linear_layout(row[k], row["shape"], conventions=release) for k in ("src", "dst"))
            picks = (plan_conversion(a, b, row["bits"], "sm_90"), plan_conversion(b, a, row["bits"], "sm_90"))
            if any(pick and shuffles_only_broadcast(pick) for pick in picks):
                found[row["case"]] = f"{plan_contexts.worst_ratio(row, mode):.2f}"
    assert found == {"fla/abc_bwd_intra_K_bf16#247:16:i32": "1.29", "fresh12007/19:slice:64:i32:w2": "1.50"}
    assert "ran 1.29x stock" in BROADCAST_SHUFFLES_MEASURED and "and 1.50x" in BROADCAST_SHUFFLES_MEASURED


@COMMITTED_EVIDENCE
def test_the_held_out_kernel_conversions_as_timed():
    """docs/lowering-choice.md, 'Conversions of real kernels nobody tuned on', quotes these: the
    33 held-out kernel conversions at 0.969x stock (1 above 1.05) before the broadcast rule and
    0.958x (1 above) with it; with it 22 run stock's exact mix and the other 11 range 0.62-1.08x;
    the 32 rows the rule leaves alone at 0.960 and 0.957 in the two runs; a third run with twice
    the timing at 0.958x, none above 1.05; the two fresh draws of
    that run at 0.964 and 0.990x, the second's four above 1.05 all 8-bit."""
    import gzip
    import json
    results = os.path.join(str(REPO), "benchmarks", "results")
    runs = {stem: json.load(gzip.open(os.path.join(results, stem + ".json.gz"), "rt"))["rows"]
            for stem in ("plan_heldout_kernels", "plan_heldout_kernels_broadcast", "plan_heldout_kernels_rep40")}
    for stem, (geomean, perfect, above) in (("plan_heldout_kernels", (0.969, 0.953, 1)),
                                            ("plan_heldout_kernels_broadcast", (0.958, 0.949, 1)),
                                            ("plan_heldout_kernels_rep40", (0.958, 0.951, 0))):
        s = plan_contexts.summary(runs[stem], "ours")
        assert (s["n"], round(s["geomean"], 3), round(s["perfect_gate"], 3), s["above_1.05"]) == (33, geomean, perfect, above)
    rows = runs["plan_heldout_kernels_broadcast"]
    own = [r for r in rows if r["modes"]["ours"]["chain_mix"] != r["modes"]["stock"]["chain_mix"]]
    ratios = sorted(plan_contexts.worst_ratio(r, "ours") for r in own)
    assert (len(rows) - len(own), len(own), f"{ratios[0]:.2f}", f"{ratios[-1]:.2f}") == (22, 11, "0.62", "1.08")
    for stem, expected in (("plan_fresh_14011_14107", (120, 0.964, 0.956, 3)),
                           ("plan_fresh_15013_15121", (120, 0.990, 0.979, 4))):
        s = plan_contexts.summary(json.load(gzip.open(os.path.join(results, stem + ".json.gz"), "rt"))["rows"], "ours")
        assert (s["n"], round(s["geomean"], 3), round(s["perfect_gate"], 3), s["above_1.05"]) == expected
        if stem.startswith("plan_fresh_15013"):
            assert all(":i8:" in case for case, _ in s["above_cases"])
    left = [name for name in (r["case"] for r in rows) if "#247" not in name]
    for stem, expected in (("plan_heldout_kernels", 0.960), ("plan_heldout_kernels_broadcast", 0.957)):
        by_case = {r["case"]: r for r in runs[stem]}
        assert round(plan_contexts.geomean([plan_contexts.worst_ratio(by_case[c], "ours") for c in left]), 3) == expected


def test_fit_choice_reads_several_runs_gzipped_or_not_of_one_release(tmp_path):
    import gzip
    import json
    path = os.path.join(str(REPO), "benchmarks", "results", "plan_train.json.gz")
    data = json.load(gzip.open(path, "rt"))
    first = {"environment": data["environment"], "rows": data["rows"][:2]}
    second = {"environment": data["environment"], "rows": data["rows"][2:3]}
    (tmp_path / "a.json").write_text(json.dumps(first))
    with gzip.open(tmp_path / "b.json.gz", "wt") as f:
        json.dump(second, f)
    cases, _ = fit_choice.load([str(tmp_path / "a.json"), str(tmp_path / "b.json.gz")])
    assert [c["case"] for c in cases] == [r["case"] for r in data["rows"][:3]]
    other = {"environment": {**data["environment"], "triton": "3.9.0"}, "rows": second["rows"]}
    (tmp_path / "c.json").write_text(json.dumps(other))
    with pytest.raises(SystemExit, match="different Triton releases"):
        fit_choice.load([str(tmp_path / "a.json"), str(tmp_path / "c.json")])


def test_source_folds_keep_seeds_apart():
    assert fit_choice.source_group({"origin": "fresh:blocked", "case": "fresh303/12:blocked:64:i8:w4"}) == \
        "fresh draw 303, part 2"
    assert fit_choice.source_group({"origin": "fresh:slice", "case": "fresh1/12:slice:64:i8:w4"}) == "fresh draw 1, part 2"
    assert fit_choice.source_group({"origin": "cuda90/gather.ttgir", "case": "x"}) == "cuda90/gather.ttgir"


def test_mix_comparison_reads_only_the_conversions_whose_code_differs():
    def row(case, ours_us, base_us, same):
        mix = {"bar": 7}
        return {"case": case, "modes": {
            "stock": {"chain": {"us": 100.0}, "latency": {"us": 100.0}, "chain_mix": mix},
            "ours": {"chain": {"us": ours_us}, "latency": {"us": ours_us}, "chain_mix": {"bar": 3}},
            "ours_stock_rounds": {"chain": {"us": base_us}, "latency": {"us": base_us},
                                  "chain_mix": {"bar": 3} if same else mix}}}
    rows = [row("a", 90.0, 100.0, False), row("b", 110.0, 100.0, True)]
    [_, line] = plan_contexts.mix_comparison(rows, "ours", "ours_stock_rounds", "what")
    assert line.startswith("ours / ours_stock_rounds (what; worse context) on the 1 conversions whose instruction mix differs: "
                           "geomean 0.900, best 0.900, worst 0.900, above 1.05: 0; over stock there 0.900 (ours) against "
                           "1.000 (ours_stock_rounds).")
    assert plan_contexts.mix_comparison([rows[1]], "ours", "ours_stock_rounds", "what") == []


def _registers(case):
    from linear_layouts.dialect.encodings import to_linear_layout
    return [to_linear_layout(x, case.shape).in_dim_size("register") * max(1, case.bits // 32)
            for x in (case.src, case.dst)]


def test_fresh_draws_in_a_register_band_hold_that_many_registers():
    """--registers 64 255: the larger layout of every draw holds 65 to 255 32-bit registers (the
    default draws hold at most 64)."""
    band = plan_contexts.fresh_cases(6301, 12, (64, 255))
    assert len(band) == 12 and all(64 < max(_registers(c)) <= 255 for c in band)
    assert all(max(_registers(c)) <= 64 for c in plan_contexts.fresh_cases(3, 20))


def test_structured_draws_hold_256_to_1024_registers_and_fit_shared_memory():
    cases = plan_contexts.structured_cases(6101, 8)
    assert len(cases) == 8 and [c.name for c in cases] == [c.name for c in plan_contexts.structured_cases(6101, 8)]
    for case in cases:
        assert 256 <= _registers(case)[0] <= plan_contexts.STRUCTURED_MAX_REGISTERS
        assert math.prod(case.shape) * case.bits // 8 <= plan_contexts.STRUCTURED_MAX_TENSOR_BYTES
        assert case.origin.startswith("structured:") and case.name.startswith("structured6101/")
    # the committed held-out run drew exactly these
    assert cases[0].name == "structured6101/0:slice-broadcast-mixed:1024r:i16:w8"


def test_ptxas_usage_reads_registers_and_spills(tmp_path):
    """A dry compile with --ptxas-usage records what ptxas -v says: the round-trip case as stock
    lowers it spills (1,024 registers a thread of the source alone)."""
    case = plan_contexts.replicated_round_trips_pair()
    _, _, _, result = plan_contexts.compile_one((0, case, "stock", None, "chain", str(tmp_path), True))
    assert result["ok"], result
    usage = result["ptxas"]
    assert usage["registers"] <= 255 and usage["spill_stores"] > 0 and usage["spill_loads"] > 0
    _, _, _, quiet = plan_contexts.compile_one((0, case, "stock", None, "chain", str(tmp_path), False))
    assert "ptxas" not in quiet


def _forward_rows(stem):
    import gzip
    import json
    with gzip.open(os.path.join(str(REPO), "benchmarks", "results", stem + ".json.gz"), "rt") as f:
        return json.load(f)["rows"]


def _default_of_one_direction(row, rule: bool):
    """The default's choice for a committed row's own direction under triton 3.6 (sm_90): "stock"
    or the rank of the verified candidate it takes (``cand<K>`` of a ``--train`` run), with
    ``fitted_model.shared_memory_in_tritons_rounds`` or without it; None where nothing moves."""
    from linear_layouts.dialect.conventions import TritonConventions
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing import fitted_model
    from linear_layouts.lowering.planner import plan_candidates, plan_conversion, with_fewer_rounds
    a, b = (to_linear_layout(row[k], row["shape"], conventions=TritonConventions((3, 6))) for k in ("src", "dst"))
    pick = plan_conversion(a, b, row["bits"], "sm_90")
    if not pick or pick.method in ("noop", "rename"):
        return None
    pick = with_fewer_rounds(pick)          # as the pass does before the model decides
    rules = fitted_model.STOCK_RULES_AFTER_SHUFFLES
    fitted_model.STOCK_RULES_AFTER_SHUFFLES = rules if rule else ()
    try:
        fitted_model.load_model.cache_clear()
        decided = fitted_model.decide(pick, "sm_90", "3.6.0",
                                      candidates=lambda: plan_candidates(a, b, row["bits"], "sm_90")[0])
    finally:
        fitted_model.STOCK_RULES_AFTER_SHUFFLES = rules
    return "stock" if decided.plan is None else decided.rank


def test_shared_picks_in_tritons_rounds_timed_one_direction_at_a_time(monkeypatch):
    """``fitted_model.SHARED_IN_ONE_DIRECTION_MEASURED`` and docs/lowering-choice.md ('One
    direction at a time') quote these.  Written on 16007/16111 (before the rule): the default's
    shared-memory picks in Triton's rounds, timed in the direction the kernel converts, 17 at
    1.085x stock, 10 above 1.05 (on the 33 real-kernel conversions 5 at 1.071x, 2 above).  Checked on 17011/17117 (drawn after, the rule in the wheel): the
    21 conversions it sends to stock, whose code there is stock's, ran 1.066x stock as the old
    pick (7 above 1.05; that candidate timed in the same run) and 1.002x with the rule; the draw
    0.991x, 2 above 1.05, both shuffle picks with stock's own shuffle count."""
    from linear_layouts.lowering.choosing.fitted_model import SHARED_IN_ONE_DIRECTION_MEASURED
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)      # the shipped choice, as users get it
    def taken(stem):
        ratios = []
        for row in _forward_rows(stem):
            mine, stock = row["modes"]["ours_forward"]["chain_mix"], row["modes"]["stock"]["chain_mix"]
            if mine != stock and _default_of_one_direction(row, rule=True) == "stock" \
                    and _default_of_one_direction(row, rule=False) not in ("stock", None):
                ratios.append(plan_contexts.worst_ratio(row, "ours_forward"))
        return (len(ratios), round(plan_contexts.geomean(ratios), 3), sum(x > 1.05 for x in ratios),
                round(min(ratios), 3))
    assert taken("plan_forward_16007_16111") == (17, 1.085, 10, 0.917)
    assert taken("plan_heldout_kernels_every_pair_again") == (5, 1.071, 2, 1.006)
    assert "1.085x stock on 120 fresh conversions (17 picks, 10 above 1.05x, best 0.917x)" in \
        SHARED_IN_ONE_DIRECTION_MEASURED and "1.071x on the 33" in SHARED_IN_ONE_DIRECTION_MEASURED
    rows = _forward_rows("plan_forward_17011_17117")
    before, after = [], []
    for row in rows:
        old, new = _default_of_one_direction(row, rule=False), _default_of_one_direction(row, rule=True)
        if new == "stock" and old not in ("stock", None) and \
                row["modes"]["ours_forward"]["chain_mix"] == row["modes"]["stock"]["chain_mix"]:
            before.append(plan_contexts.worst_ratio(row, f"cand{old}"))
            after.append(plan_contexts.worst_ratio(row, "ours_forward"))
    assert (len(before), round(plan_contexts.geomean(before), 3), sum(x > 1.05 for x in before)) == (21, 1.066, 7)
    assert (round(plan_contexts.geomean(after), 3), sum(x > 1.05 for x in after)) == (1.002, 0)
    draw = plan_contexts.summary(rows, "ours_forward")
    assert (round(draw["geomean"], 3), draw["above_1.05"]) == (0.991, 2)
    for case, _ in draw["above_cases"]:
        row = next(r for r in rows if r["case"] == case)
        assert row["modes"]["ours_forward"]["chain_mix"] == row["modes"]["stock"]["chain_mix"]
        assert row["modes"]["stock"]["chain_mix"]["shfl"] > 0
