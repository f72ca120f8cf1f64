"""benchmarks/harness/compile_time_corpus.py: targets from file names, the summary, the reports (nothing timed), and
one cold compile that shows the clocks see the plugin's work."""

import os
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
from harness import compile_time_corpus  # noqa: E402


def test_importing_it_leaves_the_environment_alone():
    """Importing the benchmark (as this file does) must not switch Triton's cache off for the
    tests that run after it in the same process."""
    assert os.environ.get("TRITON_ALWAYS_COMPILE") != "1"


def test_the_target_comes_from_the_file_name():
    target = compile_time_corpus.target_of("x/softmax_f32_1024.cuda80.ttgir")
    assert (target.backend, target.arch, target.warp_size) == ("cuda", 80, 32)
    with pytest.raises(ValueError, match="does not say its target"):
        compile_time_corpus.target_of("x/softmax.ttgir")


def test_summary_counts_the_median_the_worst_and_those_above_15_percent():
    rows = [{"file": "a", "converts": 0, "stock": 1.0, "ours": 1.0, "ratio": 1.0},
            {"file": "b", "converts": 2, "stock": 1.0, "ours": 1.2, "ratio": 1.2},
            {"file": "c", "converts": 1, "stock": 0.5, "ours": 0.52, "ratio": 1.04}]
    assert compile_time_corpus.summary_lines(rows) == [
        "* kernels: 3 (2 with a `ttg.convert_layout`)",
        "* overhead, median over kernels: **+4.0%**; over the kernels with a conversion: +12.0%",
        "* worst: b +20.0% (1000 ms -> 1200 ms)",
        "* above +15%: 1 (b)",
        "* the machine's noise: the 1 kernels without a conversion (the plugin leaves them alone) range 1.000 to "
        "1.000, median 1.000; with a conversion, above the noise's top (1.000): 2"]


def test_the_cpu_clock_has_its_own_summary_and_column(tmp_path):
    """Rows with CPU times: a summary per clock, CPU columns in the table; a run without them
    (an older JSON) renders wall time alone."""
    rows = [{"file": "a", "converts": 0, "stock": 1.0, "ours": 1.3, "ratio": 1.3, "warm": 1.0, "warm_ratio": 1.0,
             "stock_cpu": 2.0, "ours_cpu": 2.0, "ratio_cpu": 1.0, "warm_cpu": 2.0, "warm_ratio_cpu": 1.0,
             "ours_plugin": 0.0, "plugin_share": 0.0},
            {"file": "b", "converts": 1, "stock": 1.0, "ours": 1.1, "ratio": 1.1, "warm": 1.0, "warm_ratio": 1.0,
             "stock_cpu": 2.0, "ours_cpu": 2.4, "ratio_cpu": 1.2, "warm_cpu": 2.2, "warm_ratio_cpu": 1.1,
             "ours_plugin": 0.05, "plugin_share": 0.05}]
    cpu = compile_time_corpus.summary_lines(rows, compile_time_corpus.CPU)
    assert cpu[1] == "* overhead, median over kernels: **+10.0%**; over the kernels with a conversion: +20.0%"
    assert cpu[2] == "* worst: b +20.0% (2000 ms -> 2400 ms)"
    wall = compile_time_corpus.summary_lines(rows)
    assert wall[2] == "* worst: a +30.0% (1000 ms -> 1300 ms)"
    assert wall[5] == ("* the plugin's own work (its passes and guard pruning, timed inside the compile) on the "
                       "kernels with a conversion: median 5.0% of stock's compile, worst b 5.0% (50 ms)")
    assert not any("own work" in line for line in cpu)
    run = {"triton": "9.9.9", "cpus": 2, "repeats": 1}
    compile_time_corpus.write_report(rows, [], run, str(tmp_path))
    text = (tmp_path / "compile_time_corpus_9.9.9.md").read_text()
    assert "Wall time:" in text and "CPU time:" in text
    assert "| b | 1 | 1000.0 | 1100.0 | 1.100 | 1000.0 | 1.000 | 2000.0 | 2400.0 | 1.200 | 50.0 |" in text
    older = [{k: v for k, v in r.items() if not k.endswith(("_cpu", "_plugin", "_share"))} for r in rows]
    compile_time_corpus.write_report(older, [], run, str(tmp_path))
    text = (tmp_path / "compile_time_corpus_9.9.9.md").read_text()
    assert "CPU time" not in text and "| b | 1 | 1000.0 | 1100.0 | 1.100 | 1000.0 | 1.000 |\n" in text + "\n"


def test_the_account_splits_the_extra_time_and_the_table_shows_it(tmp_path):
    """Rows with Triton's stage times: a summary line saying where ours' extra time goes (the
    plugin's own work, Triton's make_llir on our module, the later stages), the fastest-of-the-
    repeats clock, and a column for each stage difference."""
    def row(name, converts, stock, ours, plugin, llir, after):
        return {"file": name, "converts": converts, "stock": stock, "ours": ours, "ratio": ours / stock,
                "warm": stock, "warm_ratio": 1.0, "stock_min": stock, "ours_min": ours, "warm_min": stock,
                "ratio_min": ours / stock, "warm_ratio_min": 1.0, "ours_plugin": plugin, "plugin_share": plugin / stock,
                "stock_llir": 0.1, "ours_llir": 0.1 + llir, "stock_after_llir": 0.2, "ours_after_llir": 0.2 + after}
    rows = [row("a", 0, 1.0, 1.0, 0.0, 0.0, 0.0), row("b", 2, 1.0, 1.5, 0.2, 0.25, 0.05),
            row("c", 1, 1.0, 1.1, 0.06, 0.03, 0.01)]
    account = compile_time_corpus.account_lines(rows)
    assert account == ["* where the extra time goes (Triton's stages timed beneath the plugin), medians over the "
                       "kernels with a conversion: the plugin's own work 130.0 ms, Triton's make_llir on our module "
                       "+140.0 ms, the stages after it +30.0 ms; on the worst, b (+500 ms): the plugin's own work "
                       "200.0 ms, Triton's make_llir on our module +250.0 ms, the stages after it +50.0 ms"]
    assert compile_time_corpus.FASTEST in compile_time_corpus.clocks_of(rows)
    compile_time_corpus.write_report(rows, [], {"triton": "9.9.9", "cpus": 2, "repeats": 3}, str(tmp_path))
    text = (tmp_path / "compile_time_corpus_9.9.9.md").read_text()
    assert "Wall time, fastest of the repeats:" in text and account[0] in text
    assert "| b | 2 | 1000.0 | 1500.0 | 1.500 | 1000.0 | 1.000 | 1.500 | +250.0 | +50.0 |" in text


def test_a_named_report_and_another_corpus(tmp_path):
    """``--corpus`` measures another folder (here one without TTGIR files: a clear message, exit
    1), and ``--name`` names the report (a held-out corpus's must not overwrite Liger's)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert compile_time_corpus.main(["--corpus", str(empty)]) == 1
    rows = [{"file": "a", "converts": 1, "stock": 1.0, "ours": 1.1, "ratio": 1.1, "warm": 1.0, "warm_ratio": 1.0}]
    compile_time_corpus.write_report(rows, [], {"triton": "9.9.9", "cpus": 2, "repeats": 1,
                                                "name": "compile_time_heldout"}, str(tmp_path))
    assert (tmp_path / "compile_time_heldout_9.9.9.md").exists()
    assert not (tmp_path / "compile_time_corpus_9.9.9.md").exists()


def test_the_clocks_see_the_plugin_work_in_a_compile(monkeypatch):
    """The clocks wrap the functions where the plugin's callers look them up today: a cold compile
    of a kernel with a conversion shows the plugin's own time and every phase called (they read 0
    when the hook was split into rooms and the clocks still wrapped its old names)."""
    pytest.importorskip("triton")
    import triton

    import linear_layouts
    from linear_layouts.passes.drop_in.process_memory import forget_kernels

    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", "off")
    fla = REPO / "test" / "lit" / "corpus" / "fla"
    in_place_phases = {"build in place"}      # passes.drop_in.in_place (off: LINEAR_LAYOUTS_IN_PLACE=0)
    for in_place in (False, True):
        monkeypatch.setenv("LINEAR_LAYOUTS_IN_PLACE", "1" if in_place else "0")
        # as text: islands and guards; in place: every island of it built there under 3.6's rule
        path = str(fla / ("abc_bwd_intra_K_bf16.cuda90.ttgir" if in_place else "gla_bwd_dA_bf16.cuda90.ttgir"))
        if in_place:      # 3.6's measured rule (the suite turns the stock gate off), its shared
            # picks in Triton's rounds kept ours (the default sends them to stock) for an island
            monkeypatch.setattr("linear_layouts.passes.lower_conversions.triton_version", lambda: "3.6.0")
            monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
            monkeypatch.setattr("linear_layouts.lowering.choosing.fitted_model.SHARED_PICKS_KEPT", True)
        forget_kernels()
        linear_layouts.enable()
        try:
            with compile_time_corpus.PluginClock() as plugin, compile_time_corpus.PhaseClock() as phases:
                triton.compile(path, target=compile_time_corpus.target_of(path))
        finally:
            linear_layouts.disable()
        assert plugin.seconds > 0
        uncalled = {phase for phase in compile_time_corpus.PhaseClock.PHASES if phases.calls[phase] == 0}
        if in_place:      # sm_90 keeps an island under 3.6's rule: built in place from the types (planned there), nothing emitted
            assert uncalled == {"snapshot", "emit", "simulate", "re-parse", "prune guards"}
        else:
            assert uncalled == in_place_phases


def test_the_round_trip_floor_is_summarised_and_tabled(tmp_path):
    """Rows with the ``round_trip`` mode: a line per clock with its median overhead over the kernels
    with a conversion beside ours, and a CPU column; an older run without it has neither."""
    def row(name, converts, ours, round_trip):
        return {"file": name, "converts": converts, "stock": 1.0, "ours": ours, "ratio": ours, "warm": 1.0,
                "warm_ratio": 1.0, "stock_cpu": 2.0, "ours_cpu": 2 * ours, "ratio_cpu": ours, "warm_cpu": 2.0,
                "warm_ratio_cpu": 1.0, "round_trip_cpu": 2 * round_trip, "round_trip_ratio_cpu": round_trip,
                "round_trip": round_trip, "round_trip_ratio": round_trip, "ours_plugin": 0.0, "plugin_share": 0.0}
    rows = [row("a", 0, 1.0, 1.3), row("b", 3, 1.08, 1.02), row("c", 1, 1.04, 1.03), row("d", 2, 1.10, 1.01)]
    line = ("* the text round trip alone (stock, its module printed and parsed back before `make_llir`: what a "
            "compile with an island pays before any pass of ours), median over the kernels with a conversion: "
            "**+2.0%** (ours: +8.0%)")
    assert compile_time_corpus.round_trip_lines(rows, compile_time_corpus.CPU) == [line]
    assert compile_time_corpus.summary_lines(rows, compile_time_corpus.CPU)[-1] == line
    compile_time_corpus.write_report(rows, [], {"triton": "9.9.9", "cpus": 2, "repeats": 1}, str(tmp_path))
    text = (tmp_path / "compile_time_corpus_9.9.9.md").read_text()
    assert "CPU: round trip / stock |" in text and "| 1.080 | 0.0 | 1.020 |" in text
    older = [{k: v for k, v in r.items() if not k.startswith("round_trip")} for r in rows]
    assert compile_time_corpus.round_trip_lines(older, compile_time_corpus.CPU) == []


def test_the_round_trip_mode_compiles_stock_from_its_module_printed_and_parsed(monkeypatch):
    """``round_trip``: Triton's ``make_llir`` gets a module parsed from the print of its own (one
    parse, no pass of ours), and the compile still makes a kernel."""
    from linear_layouts.passes.ir import parsing

    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    parses = []
    real = parsing.triton_module_from_text
    monkeypatch.setattr(parsing, "triton_module_from_text", lambda text, context: parses.append(text) or real(text, context))
    path = str(REPO / "test" / "lit" / "corpus" / "fla" / "l2norm_fwd_bf16.cuda90.ttgir")
    timing = compile_time_corpus.compile_as("round_trip", path, compile_time_corpus.target_of(path))
    assert len(parses) == 1 and "tt.func" in parses[0] and timing.plugin == 0.0 and timing.cpu > 0


def test_per_kernel_bound_apart_from_the_noise():
    """A kernel the plugin left untouched (only its types-first pass ran: Triton compiled its own
    module) costs the plugin's own work whatever the two noisy totals say; a kernel it changed is
    judged by its measured ratio, against the +10% bound."""
    def row(name, ratio, share, phases):
        return {"file": name, "converts": 2, "stock": 1.0, "ours": ratio, "ratio": ratio, "stock_cpu": 1.0,
                "ours_cpu": ratio, "ratio_cpu": ratio, "ours_plugin": share, "plugin_share": share,
                "ours_phases": {"types first": share, "snapshot": 0.0, "build in place": 0.0, **phases}}
    rows = [row("noisy", 1.143, 0.011, {}), row("costly", 1.02, 0.058, {}),
            row("island", 1.12, 0.03, {"build in place": 0.001}), row("text", 1.04, 0.05, {"emit": 0.002}),
            {"file": "none", "converts": 0, "stock": 1.0, "ours": 1.3, "ratio": 1.3, "stock_cpu": 1.0, "ours_cpu": 1.3,
             "ratio_cpu": 1.3}]
    assert compile_time_corpus.per_kernel_lines(rows, compile_time_corpus.CPU) == [
        "* per kernel apart from the noise: on the 2 kernels whose every conversion went to stock from its types "
        "(Triton compiled its own module), the plugin's own work: worst +5.8% (costly); on the 2 it changed, "
        "measured: worst +12.0% (island), above +10%: 1"]
    assert compile_time_corpus.per_kernel_lines(rows, compile_time_corpus.CPU)[0] in \
        compile_time_corpus.summary_lines(rows, compile_time_corpus.CPU)
    older = [{k: v for k, v in r.items() if k != "ours_phases"} for r in rows]
    assert compile_time_corpus.per_kernel_lines(older, compile_time_corpus.CPU) == []
