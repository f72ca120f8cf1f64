"""benchmarks/studies/assign_corpus.py without the pass: its rows, aggregates and table from fake
Assignments (the shape of ``passes.assign.assign_layouts``' result), its corpus listing, and its clear
exit while the pass does not exist."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks", "studies"))
import assign_corpus  # noqa: E402


@dataclass
class FakeFunction:
    name: str
    converts_before: int
    converts_after: int
    cost_before: float
    cost_after: float
    accepted: bool
    reason: str = ""
    left: dict = field(default_factory=dict)
    conversion_cost_before: float = 0.0
    conversion_cost_after: float = 0.0


@dataclass
class FakeAssignment:
    functions: list


def _rows():
    rows = []
    # improved: accepted, 100 -> 40
    rows += assign_corpus.kernel_rows("cuda90/softmax.ttgir", FakeAssignment(
        [FakeFunction("softmax", 3, 1, 100.0, 40.0, True, left={"shuffle": 1},
                      conversion_cost_before=30.0, conversion_cost_after=6.0)]), 0.010)
    # rejected: the candidate's cost (10) does not count, the kernel keeps 50
    rows += assign_corpus.kernel_rows("cuda80/matmul_w4.ttgir", FakeAssignment(
        [FakeFunction("matmul", 2, 0, 50.0, 10.0, False, "module does not verify", {"shared": 2},
                      conversion_cost_before=20.0, conversion_cost_after=0.0)]), 0.030)
    # worse although accepted (the report must say so), two functions in one file
    rows += assign_corpus.kernel_rows("liger_kernel/x.cuda90.ttgir", FakeAssignment(
        [FakeFunction("a", 1, 1, 10.0, 15.0, True, left={"shared": 1},
                      conversion_cost_before=4.0, conversion_cost_after=5.0),
         FakeFunction("b", 0, 0, 0.0, 0.0, True)]), 0.020)
    # unchanged
    rows += assign_corpus.kernel_rows("gfx942/sum_axis0.ttgir", FakeAssignment(
        [FakeFunction("sum", 1, 1, 20.0, 20.0, True, left={"shared": 1})]), 0.002, converts_in_text=3,
        noops_in_text=1)
    return rows


def test_rows_use_stock_cost_for_a_rejected_assignment():
    rows = _rows()
    rejected = next(r for r in rows if r["function"] == "matmul")
    assert rejected["effective_cost_after"] == 50.0 and rejected["effective_converts_after"] == 2
    accepted = next(r for r in rows if r["function"] == "softmax")
    assert accepted["effective_cost_after"] == 40.0 and accepted["effective_converts_after"] == 1
    two = [r for r in rows if r["file"].startswith("liger_kernel")]
    assert [r["wall_s"] for r in two] == [0.010, 0.010] and all(r["file_wall_s"] == 0.020 for r in two)


def test_summary_counts_kernels_by_file():
    s = assign_corpus.summarize(_rows(), [{"file": "cuda90/bad.ttgir", "error": "IRError: x"}])
    assert s["kernels"] == 4 and s["functions"] == 5 and s["errors"] == 1
    assert s["cost_before"] == 180.0 and s["cost_after"] == 40.0 + 50.0 + 15.0 + 20.0
    assert s["cost_change_pct"] == pytest.approx(100 * (125 - 180) / 180)
    assert (s["improved"], s["unchanged"], s["worse"]) == (1, 2, 1)
    assert s["worse_kernels"] == ["liger_kernel/x.cuda90.ttgir"]
    assert s["converts_before"] == 7 and s["converts_after"] == 1 + 2 + 1 + 1
    assert s["accepted_functions"] == 4
    assert s["wall_median_s"] == pytest.approx(0.015) and s["wall_max_s"] == 0.030
    # conversions left, where the new assignment is what runs
    assert s["left_by_kind_accepted"] == {"shared": 2, "shuffle": 1}
    assert s["by_source"] == {"cuda80": 1, "cuda90": 1, "gfx942": 1, "liger_kernel": 1}
    # the pass said 1 convert where the text has 3
    assert s["converts_in_text"] == 3 and s["converts_miscounted"] == ["gfx942/sum_axis0.ttgir"]
    # one of the text's 3 is a no-op: the pass's 1 leaves one more unexplained
    assert s["noop_converts_in_text"] == 1 and s["converts_unexplained"] == ["gfx942/sum_axis0.ttgir"]
    assert s["not_accepted_reasons"] == {"module does not verify": 1}
    # the conversions' part alone: the rejected matmul keeps its 20, the accepted ones change
    assert s["conversion_cost_before"] == 54.0 and s["conversion_cost_after"] == 6.0 + 20.0 + 5.0
    assert s["conversion_cost_change_pct"] == pytest.approx(100 * (31 - 54) / 54)
    assert s["conversion_cost_worse"] == ["liger_kernel/x.cuda90.ttgir"]


def test_markdown_table():
    rows = _rows()
    text = assign_corpus.render_markdown(rows, assign_corpus.summarize(rows, []), [], {"triton": "3.9.0"})
    assert "* total modelled cost: 180.0 -> 125.0 (-30.6%)" in text
    assert "* kernels improved / unchanged / worse: 1 / 2 / 1 (worse: liger_kernel/x.cuda90.ttgir)" in text
    assert "* total modelled conversion cost: 54.0 -> 31.0 (-42.6%); higher in 1 kernels (liger_kernel/x" in text
    assert "| cuda90/softmax.ttgir | softmax | 3 | 1 | 100.0 | 40.0 | -60.0% | 30.0 | 6.0 | yes | shuffle 1 | 10.0 |" in text
    assert ("| cuda80/matmul_w4.ttgir | matmul | 2 | 2 | 50.0 | 50.0 | +0.0% | 20.0 | 20.0 | no: module does not verify "
            "| shared 2 | 30.0 |") in text
    assert "| liger_kernel/x.cuda90.ttgir | b | 0 | 0 | 0.0 | 0.0 | unchanged | 0.0 | 0.0 | yes | - | 10.0 |" in text
    assert "median 15.0 ms, max 30.0 ms" in text
    assert "ops in the files' text: 3 (1 kernels where the pass's count before differs" in text
    assert "* why not accepted: module does not verify: 1" in text


def test_text_converts_counts_ops_only():
    text = ("%1 = ttg.convert_layout %0 : tensor<4xf32, #a> -> tensor<4xf32, #b>\n"
            "// ttg.convert_layout in a comment is text too\n%2 = ttg.convert_layout_like %1\n")
    assert assign_corpus.text_converts(text) == 2


def test_verdict_is_relative():
    assert assign_corpus.verdict(100.0, 100.0 + 1e-12) == "unchanged"
    assert assign_corpus.verdict(100.0, 99.0) == "improved"
    assert assign_corpus.verdict(0.0, 1.0) == "worse"


def test_corpus_listing_has_every_source():
    files = assign_corpus.corpus_files()
    sources = {assign_corpus.source_of(os.path.relpath(f, assign_corpus.CORPUS)) for f in files}
    assert {"cuda80", "cuda90", "gfx942", "liger_kernel"} <= sources
    assert len(files) >= 150
    assert all(f.endswith(".ttgir") for f in files)


def test_run_records_a_failure_and_goes_on(tmp_path):
    good = os.path.join(assign_corpus.CORPUS, "cuda90", "softmax.ttgir")
    bad = tmp_path / "bad.ttgir"
    bad.write_text("this is not TTGIR\n")

    def fake_assign(module, target):
        assert target == "cuda:90"
        return FakeAssignment([FakeFunction(f, 1, 0, 2.0, 1.0, True) for f in ["softmax"]])
    rows, errors = assign_corpus.run([good, str(bad)], fake_assign, root=os.path.dirname(good))
    assert [r["file"] for r in rows] == ["softmax.ttgir"] and rows[0]["wall_s"] >= 0
    assert len(errors) == 1 and errors[0]["file"].endswith("bad.ttgir")


def test_script_exits_1_with_a_clear_message_while_the_pass_is_missing():
    try:
        import linear_layouts.passes.assign.assign_layouts  # noqa: F401
        pytest.skip("the pass exists")
    except ModuleNotFoundError:
        pass
    result = subprocess.run([sys.executable, os.path.join(str(REPO), "benchmarks", "studies", "assign_corpus.py"),
                             "--out", "/nonexistent-not-written"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "linear_layouts.passes.assign.assign_layouts does not exist yet" in result.stderr


def test_options_pass_through():
    assert assign_corpus.parse_options(["memory_ops=true", "margin=0.05", "apply=False", "n=3", "x=abc"]) == \
        {"memory_ops": True, "margin": 0.05, "apply": False, "n": 3, "x": "abc"}
    with pytest.raises(ValueError):
        assign_corpus.parse_options(["memory_ops"])
    seen = {}

    def fake_assign(module, target, **options):
        seen.update(options)
        return FakeAssignment([])
    good = os.path.join(assign_corpus.CORPUS, "cuda90", "softmax.ttgir")
    assign_corpus.run([good], fake_assign, options={"memory_ops": True})
    assert seen == {"memory_ops": True}


def test_noop_converts_are_the_same_linear_layout_on_both_sides():
    """max_axis0's one conversion (a slice of a layout with all lanes and warps along dim 1 to the
    1-D blocked layout over the same 128 elements) is a no-op; transpose's is not."""
    from linear_layouts.passes.ir.snapshot import parse_module

    corpus = os.path.join(str(REPO), "test", "lit", "corpus", "cuda90")
    for name, noops in (("max_axis0.ttgir", 1), ("transpose_32bit.ttgir", 0)):
        text = open(os.path.join(corpus, name)).read()
        assert assign_corpus.text_converts(text) == 1
        assert assign_corpus.noop_converts(parse_module(text, name)) == noops


def test_summary_counts_the_gpu_rules_kernels_and_those_changed():
    """Files the GPU suite's rule selects, and those among them whose assignment was accepted,
    are named in the summary and the report."""
    rows = []
    rows += assign_corpus.kernel_rows("a.ttgir", FakeAssignment([FakeFunction("f", 1, 0, 10.0, 5.0, True)]),
                                      0.01, gpu_rule=True)
    rows += assign_corpus.kernel_rows("b.ttgir", FakeAssignment([FakeFunction("g", 1, 1, 10.0, 10.0, False, "x")]),
                                      0.01, gpu_rule=True)
    rows += assign_corpus.kernel_rows("c.ttgir", FakeAssignment([FakeFunction("h", 1, 0, 10.0, 5.0, True)]),
                                      0.01, gpu_rule=False)
    s = assign_corpus.summarize(rows, [])
    assert s["gpu_rule_kernels"] == ["a.ttgir", "b.ttgir"] and s["gpu_rule_changed"] == ["a.ttgir"]
    text = assign_corpus.render_markdown(rows, s, [], {})
    assert "rule selects (`assign_rule.selected`: a conversion in a loop or in the epilogue): 2; " \
           "changed among them: 1 (a.ttgir)" in text


def test_rule_selects_reads_the_ttgir():
    """The rule on two corpus files: a conversion inside a loop (selected), none at all (not)."""
    corpus = os.path.join(str(REPO), "test", "lit", "corpus")
    looped = open(os.path.join(corpus, "liger_kernel", "neighborhood_attention_grad_attn_bf16_64.cuda90.ttgir")).read()
    plain = open(os.path.join(corpus, "cuda80", "layer_norm.ttgir")).read()
    assert assign_corpus.rule_selects(looped) and not assign_corpus.rule_selects(plain)
