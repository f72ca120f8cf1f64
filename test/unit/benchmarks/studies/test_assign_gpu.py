"""benchmarks/studies/assign_gpu.py without a GPU: the selection rule (assign_rule) on small TTGIR
snippets with exact answers, the committed selection, and the report's numbers from fake rows."""

import json
import os
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks", "studies"))
import assign_gpu  # noqa: E402
import assign_rule  # noqa: E402

HEAD = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: tensor<64x64x!tt.ptr<f32>, #blocked1>, %x: tensor<64x64xf32, #blocked>, %n: i32) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
"""
TAIL = """    tt.return
  }
}
"""
CONVERT = "%cv{n} = ttg.convert_layout %x : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>\n"
STORE = "    tt.store %p, %cv0 : tensor<64x64x!tt.ptr<f32>, #blocked1>\n"


def _loop(body: str) -> str:
    return ("    %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<64x64xf32, #blocked>)  : i32 {\n"
            + body + "      scf.yield %a : tensor<64x64xf32, #blocked>\n    }\n")


def test_convert_in_loop_is_selected():
    text = HEAD + _loop("      " + CONVERT.format(n=0) + "  " + STORE) + TAIL
    sites = assign_rule.convert_sites(text)
    assert [(s.function, s.in_loop, s.epilogue) for s in sites] == [("k", True, False)]
    assert assign_rule.selected(text)


def test_convert_only_in_prologue_is_not_selected():
    text = HEAD + "    " + CONVERT.format(n=0) + _loop("") + STORE + TAIL
    sites = assign_rule.convert_sites(text)
    assert [(s.in_loop, s.epilogue, s.where) for s in sites] == [(False, False, "prologue/other")]
    assert not assign_rule.selected(text)


def test_convert_in_epilogue_before_store_is_selected():
    text = HEAD + _loop("") + "    " + CONVERT.format(n=0) + STORE + TAIL
    assert [(s.in_loop, s.epilogue) for s in assign_rule.convert_sites(text)] == [(False, True)]
    assert assign_rule.describe(text) == {"converts": 1, "in_loop": 0, "epilogue": 1, "other": 0, "selected": True}


def test_convert_after_the_loop_with_no_store_after_it_is_not_selected():
    text = HEAD + _loop("") + STORE.replace("%cv0", "%x_") + "    " + CONVERT.format(n=0) + TAIL
    assert not assign_rule.selected(text)


def test_no_loop_means_no_epilogue():
    text = HEAD + "    " + CONVERT.format(n=0) + STORE + TAIL
    assert assign_rule.describe(text)["other"] == 1 and not assign_rule.selected(text)


def test_while_loop_both_regions_and_nested_if_and_locations():
    text = HEAD + (
        "    %w = scf.while (%a = %x) : (tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked> {\n"
        "      %c = arith.cmpi slt, %c0, %n : i32 loc(#loc3)\n"
        "      scf.condition(%c) %a : tensor<64x64xf32, #blocked>\n"
        "    } do {\n"
        "    ^bb0(%b: tensor<64x64xf32, #blocked>):\n"
        "      %t = arith.cmpi slt, %c1, %n : i32\n"
        "      scf.if %t {\n"
        "        " + CONVERT.format(n=1).rstrip("\n") + " loc(#loc7)\n"
        "      } loc(#loc8)\n"
        "      scf.yield %b : tensor<64x64xf32, #blocked>\n"
        "    } loc(#loc9)\n"
        "    " + CONVERT.format(n=0).rstrip("\n") + ' loc(callsite("x"(#loc1) at #loc2))\n'
        + STORE + TAIL)
    sites = assign_rule.convert_sites(text)
    assert [(s.in_loop, s.epilogue) for s in sites] == [(True, False), (False, True)]


def test_reduce_region_and_inline_attributes_keep_the_nesting():
    text = HEAD + (
        '    %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({\n'
        "    ^bb0(%u: f32, %v: f32):\n"
        "      %m = arith.addf %u, %v : f32\n"
        "      tt.reduce.return %m : f32\n"
        "    }) : (tensor<64x64xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>\n"
        + _loop("") + "    " + CONVERT.format(n=0) + STORE + TAIL)
    assert [(s.in_loop, s.epilogue) for s in assign_rule.convert_sites(text)] == [(False, True)]


def test_each_function_has_its_own_epilogue():
    second = TAIL.replace("  }\n}\n", "  }\n") + (
        "  tt.func private @g(%x: tensor<64x64xf32, #blocked>) {\n    " + CONVERT.format(n=0)
        + "    tt.return\n  }\n}\n")
    text = HEAD + _loop("") + second
    sites = assign_rule.convert_sites(text)
    assert [(s.function, s.in_loop, s.epilogue) for s in sites] == [("g", False, False)]


def test_a_corpus_file_is_read_the_same_way():
    text = open(os.path.join(str(REPO), "test", "lit", "corpus", "cuda90", "attention_fwd.ttgir")).read()
    assert assign_rule.describe(text) == {"converts": 2, "in_loop": 1, "epilogue": 1, "other": 0, "selected": True}
    text = open(os.path.join(str(REPO), "test", "lit", "corpus", "cuda90", "transpose_32bit.ttgir")).read()
    assert not assign_rule.selected(text)


# --------------------------------------------------------------------------- the committed selection

def test_committed_selection_names_at_least_20_candidates():
    from assign_gpu_kernels import candidate_cases

    selection = json.load(open(assign_gpu.SELECTION))
    assert selection["triton"].startswith("3.6")
    assert len(selection["selected"]) >= 20
    names = [assign_gpu.case_name(c) for c in candidate_cases()]
    assert len(names) == len(set(names))
    assert set(selection["selected"]) <= set(names)
    assert [r["name"] for r in selection["candidates"]] == names
    assert selection["selected"] == [r["name"] for r in selection["candidates"] if r["selected"]]


def test_selection_table():
    rows = [{"name": "a", "function": "fa", "converts": 2, "in_loop": 1, "epilogue": 0, "other": 1, "selected": True},
            {"name": "b", "function": "fb", "converts": 1, "in_loop": 0, "epilogue": 0, "other": 1, "selected": False},
            {"name": "c", "function": "fc", "selected": False, "error": "CompilationError: x"}]
    text = assign_gpu.render_selection(rows, "3.6.0")
    assert "**1 of 3 candidates selected.**" in text
    assert "| a | fa | 2 | 1 | 0 | 1 | **yes** |" in text
    assert "| c | fc | - | - | - | - | no (did not compile: CompilationError: x) |" in text


# --------------------------------------------------------------------------- the report

def _mode(ms, exact=True, ok=True, converts=1, **extra):
    return {"ok": ok, "ms": ms, "bit_exact": exact, "reference_ok": True, "converts": converts, **extra}


def _rows():
    return [
        {"name": "fast", "stock": _mode(1.0), "assign": _mode(0.80, converts=0), "linear": _mode(1.0),
         "stock_again": _mode(1.01)},
        {"name": "slow", "stock": _mode(1.0), "assign": _mode(1.10), "linear": _mode(1.0), "stock_again": _mode(0.99)},
        {"name": "noisy", "stock": _mode(1.0), "assign": _mode(1.04), "linear": _mode(1.0),
         "stock_again": _mode(1.05)},
        {"name": "wrong", "stock": _mode(1.0), "assign": _mode(0.5, exact=False, max_abs_diff=0.25),
         "linear": _mode(1.0), "stock_again": _mode(1.0)},
    ]


def test_summary_numbers():
    s = assign_gpu.summarize(_rows())
    assert s["median_noise"] == pytest.approx(0.01)
    a = s["assign"]
    assert a["measured"] == 3                                   # the wrong one's time does not count
    assert a["geomean"] == pytest.approx((0.80 * 1.10 * 1.04) ** (1 / 3))
    assert a["faster_10pct"] == ["fast"]
    assert a["slower_beyond_noise"] == ["slow"]                 # noisy: 4% < its own 5% deviation
    assert a["not_bit_exact"] == ["wrong"] and a["failed"] == []
    assert s["linear"]["geomean"] == pytest.approx(1.0) and s["linear"]["slower_beyond_noise"] == []
    # with the reorder tolerance (reference still met) the differing kernel counts
    assert assign_gpu.summarize(_rows(), reorder_tolerance=True)["assign"]["measured"] == 4


def test_report_marks_an_unavailable_mode():
    rows = _rows()
    for row in rows:
        row["assign"] = {"ok": False, "unavailable": True, "error": "enable(assign_layouts=True) is not available yet"}
    s = assign_gpu.summarize(rows)
    assert s["assign"]["unavailable"] and s["assign"]["measured"] == 0
    text = assign_gpu.render(rows, s, {"gpu": "H100", "triton": "3.6.0", "torch": "2.11"}, 2, ["x"])
    assert "ours = enable(assign_layouts=True): NOT MEASURED: enable(assign_layouts=True) is not available yet" in text
    assert "| fast | 1.0000 | n/a | 1.0000 | - | 1.000 | 1.010 | -/yes | 1/-/1 |" in text
    assert "NOT YET RUN (budget; rerun with --resume): x" in text


def test_report_table_row():
    rows = _rows()
    text = assign_gpu.render(rows, assign_gpu.summarize(rows), {"gpu": "H100"}, 2, [])
    assert "| wrong | 1.0000 | 0.5000 | 1.0000 | 0.500 | 1.000 | 1.000 | NO (max diff 0.2500)/yes | 1/1/1 |" in text
    assert ">= 10% faster: 1 (fast); slower beyond the noise: 1 (slow); not bit-exact: 1 (wrong)" in text


def test_combine_rounds():
    rounds = [dict(_mode(1.0, min_ms=0.9, max_ms=1.2), first_launch_s=2.0),
              dict(_mode(1.2, min_ms=1.1, max_ms=1.3), first_launch_s=1.0),
              dict(_mode(1.1, exact=False, min_ms=1.0, max_ms=1.4), first_launch_s=3.0, max_abs_diff=1e-3)]
    c = assign_gpu.combine(rounds)
    assert c["ms"] == pytest.approx(1.1) and c["round_ms"] == [1.0, 1.2, 1.1]
    assert (c["min_ms"], c["max_ms"], c["first_launch_s"]) == (0.9, 1.4, 2.0)
    assert c["bit_exact"] is False and c["max_abs_diff"] == 1e-3
    assert assign_gpu.combine([{"ok": False, "error": "boom", "_outputs": 1}]) == {"ok": False, "error": "boom"}


def test_assign_mode_says_clearly_that_it_is_missing(monkeypatch):
    import linear_layouts

    def old_enable(mode="linear", *, only=None, report=False, remarks=False, pipeline=None, verify="emitted"):
        return None      # an enable() from before ll-assign-layouts: no assign_layouts keyword
    monkeypatch.setattr(linear_layouts, "enable", old_enable)
    missing = assign_gpu.probe_modes()
    assert set(missing) == {"assign"}
    assert "enable(assign_layouts=True) is not available yet" in missing["assign"]
    with pytest.raises(assign_gpu.ModeUnavailable):
        assign_gpu.enable_mode("assign")


def test_assign_mode_is_available_in_this_checkout():
    assert assign_gpu.probe_modes() == {}


def test_kernels_with_option_named_arguments_launch_positionally():
    from assign_gpu_kernels import liger_neighborhood_attention_cases, swiglu_case

    qk, _ = liger_neighborhood_attention_cases(B=1, H=2, S=100, D=16)
    values = {**{n: n for n in qk.tensors}, **qk.scalars, **qk.constexprs}
    args, options = assign_gpu.launch_arguments(qk, values)
    assert options == {} and args[:4] == ["Q_ptr", "K_ptr", "QK_ptr", "mask_ptr"] and args[-2:] == [4, 4]
    plain = swiglu_case(4, 300, BLOCK=128)
    args, options = assign_gpu.launch_arguments(plain, {**{n: n for n in plain.tensors}, **plain.scalars,
                                                        **plain.constexprs})
    assert options == {"num_warps": 4, "num_stages": 1} and args == ["G", "U", "Y", 300, 128]


def test_new_kernels_match_their_references_in_the_interpreter():
    import subprocess

    result = subprocess.run([sys.executable, os.path.join(str(REPO), "benchmarks", "studies", "assign_gpu.py"), "--interpret"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "20/20 cases match their references" in result.stdout


def test_measuring_without_a_gpu_exits_2_with_a_message():
    import subprocess

    result = subprocess.run([sys.executable, os.path.join(str(REPO), "benchmarks", "studies", "assign_gpu.py"), "--budget", "5"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert "GPU" in result.stderr


def test_stock_that_differs_from_itself_is_judged_by_the_reference():
    """Stream-K sums partial tiles with atomics: stock run twice gives other bits.  Ours
    differing from stock there is not a failure; ours outside the reference's tolerance is."""
    rows = [{"name": "streamk", "stock": _mode(1.0), "assign": _mode(1.0, exact=False, max_abs_diff=3e-5),
             "linear": _mode(1.0, exact=False, max_abs_diff=3e-5),
             "stock_again": _mode(1.0, exact=False, max_abs_diff=3e-5)},
            {"name": "streamk_wrong", "stock": _mode(1.0), "assign": dict(_mode(1.0, exact=False), reference_ok=False),
             "linear": _mode(1.0), "stock_again": _mode(1.0, exact=False)}]
    s = assign_gpu.summarize(rows)
    assert s["nondeterministic"] == ["streamk", "streamk_wrong"]
    assert s["assign"]["not_bit_exact"] == [] and s["assign"]["measured"] == 1       # the wrong one does not count
    text = assign_gpu.render(rows, s, {"gpu": "H100"}, 1, [])
    assert "streamk (ours within tolerance: yes), streamk_wrong (ours within tolerance: NO)" in text
    assert "| stock differs from itself; within tolerance: yes/stock differs from itself; within tolerance: yes |" in text
