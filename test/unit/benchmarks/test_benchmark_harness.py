"""The conversion benchmarks without a GPU (benchmarks/conversions.py and its cases in
benchmarks/harness/conversion_cases.py, benchmarks/plan_choice.py):
their timing kernel holds exactly one ``ttg.convert_layout`` (the timed one), data enters and
leaves it through Triton's own shared-memory staging in every mode, and every candidate of a
case compiles.  A refactor that breaks a benchmark's imports fails here, not on the GPU."""

import os
import re
import sys

import pytest

triton = pytest.importorskip("triton")

from support import REPO  # noqa: E402

ROOT = str(REPO)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import conversions  # noqa: E402
from harness import conversion_cases  # noqa: E402
import plan_choice  # noqa: E402


def _case(name_part: str):
    return next(c for c in conversion_cases.corpus_cases() if name_part in c.name)


def _case_without_measured_choice():
    """A synthetic case the planner decides by its cost model alone (no entry in
    lowering/choosing/measured_choices.json can leave it to Triton)."""
    from linear_layouts.dialect import to_linear_layout
    from linear_layouts.lowering.choosing import measured_choices

    for case in conversion_cases.synthetic_cases():
        src, dst = (to_linear_layout(e, case.shape) for e in (case.src, case.dst))
        if case.bits == 32 and measured_choices.lookup(src, dst, case.bits, "sm_90") is None:
            return case
    raise AssertionError("every synthetic case has a measured choice")


def test_timing_kernel_has_one_convert_and_staging_through_shared_memory():
    case = _case("synthetic/spt4_to_spt2_tpw2x16:128x64:i32")
    text = conversion_cases.kernel_ttgir(case)
    assert len(re.findall(r"= ttg\.convert_layout ", text)) == 1
    assert len(re.findall(r"= ttg\.local_alloc ", text)) == 2
    assert len(re.findall(r"= ttg\.local_load ", text)) == 2
    # the timed conversion sits inside the loop
    loop = text[text.index("scf.for"):text.index("scf.yield")]
    assert "ttg.convert_layout" in loop


@pytest.mark.parametrize("mode", ["linear", "legacy"])
def test_only_the_timed_conversion_differs_between_modes(tmp_path, private_triton_cache, mode):
    """Stock and the plugin compile the same staging code: the plugin lowers one conversion
    (the timed one) and no local load; the code outside the loop has the same shared-memory
    accesses in both."""
    from linear_layouts.passes.drop_in import hook

    # (a Triton cache of its own: the hook runs only on a real compile, never on a cache hit)
    case = _case_without_measured_choice()
    index = 0
    hook.reset_stats()
    _, _, stock = conversions.compile_case((index, case, "stock", str(tmp_path)))
    _, _, ours = conversions.compile_case((index, case, mode, str(tmp_path)))
    assert stock["ok"] and ours["ok"], (stock, ours)
    stats = hook.stats()
    assert (stats.conversions, stats.islands, stats.local_loads_lowered, len(stats.fallbacks)) == (1, 1, 0, 0)


def test_plan_choice_compiles_stock_and_every_candidate(tmp_path):
    case = _case("synthetic/blocked2_to_blocked1:64:i32")
    candidates = plan_choice.verified_candidates(case)
    assert [c["method"] for c in candidates][:1] == ["shuffle"]
    assert len(candidates) >= 2
    for rank in [plan_choice.STOCK] + list(range(len(candidates))):
        _, _, result = plan_choice.compile_candidate((0, case, rank, str(tmp_path)))
        assert result["ok"], (rank, result)
    # the stock lowering of this conversion is two shuffles (docs/verified-facts.md)
    _, _, stock = plan_choice.compile_candidate((0, case, plan_choice.STOCK, str(tmp_path)))
    assert stock["shfl"] == 2


def test_calibration_probes_keep_their_instructions_in_the_sass():
    """Each probe's loop holds the instructions it measures (ptxas drops shuffles of a uniform
    value and unused loads; the probes are written so that it cannot)."""
    import tempfile

    from harness import calibrate

    directory = tempfile.mkdtemp()
    for name in ("shfl.sync.idx.b32", "ld.shared.v4.b32", "ldmatrix.x4.trans", "stmatrix.x2"):
        probe = next(p for p in calibrate.PROBES if p.name == name)
        kernel = calibrate.compile_probe(probe, directory)
        control = calibrate.compile_probe(calibrate.control_of(probe), directory)
        found, problem = calibrate.check_sass(probe, kernel, control)
        assert problem == "" and found >= calibrate.UNROLL, (name, found, problem)


def test_calibration_fit_recovers_known_costs():
    """Synthetic probe times from known constants come back out of the fit: a shared access
    of 2 ns + 1 ns per wavefront (3 ns conflict-free: the unit is 2 ns), shuffles 4 ns."""
    from harness import calibrate

    results = {}
    for p in calibrate.PROBES:
        if p.latency:
            continue
        ns = {"SHARED": 2.0 + 1.0 * p.wavefronts, "SHUFFLE": 4.0, "ALU_OP": 0.5, "WARP_BARRIER": 0.0,
              "CTA_BARRIER": 8.0}.get(p.feature)
        if ns is not None:
            results[p.name] = {"ns_per_warp_instruction": ns}
    fit = calibrate.fit_weights(results)
    assert fit["unit_ns"] == pytest.approx(2.0)
    assert fit["weights"] == {"SHUFFLE": 2.0, "ALU_OP": 0.25, "SHARED_ACCESS": 1.0, "SHARED_WAVEFRONT": 0.5,
                              "WARP_BARRIER": 0.0, "CTA_BARRIER": 4.0}


def test_instruction_classes_count_every_width_and_form():
    from linear_layouts.tools.fuzz.testcases import instruction_classes

    ptx = "\n".join(["  shfl.sync.idx.b32 %r1, %r2, 1, 31, -1;", "  shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;",
                     "  st.shared.v4.b32 [%r3], {%r1, %r2, %r4, %r5};", "  st.shared.b16 [%r3], %rs1;",
                     "  ld.shared.v2.b32 {%r1, %r2}, [%r3];", "  bar.sync 0;", "  barrier.sync 0;",
                     "  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r4, %r5}, [%r3];",
                     "  stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r3], {%r1, %r2};", "  bar.warp.sync -1;"])
    assert instruction_classes(ptx) == {"shfl": 2, "ld_shared": 1, "st_shared": 2, "ldmatrix": 1, "stmatrix": 1,
                                        "bar": 2}


def test_rounds_rotate_the_order_and_take_the_median_of_medians():
    """benchmarks/kernels.py run_rounds: each round starts with the next mode; a mode's result
    is the median of its rounds' medians (and of their compile times)."""
    import kernels

    order, times = [], {"stock": [3.0, 1.0, 2.0], "linear": [5.0, 4.0, 6.0]}

    def run_one(mode, number):
        assert number == sum(m == mode for m in order)     # the round this mode is in
        order.append(mode)
        ms = times[mode][sum(m == mode for m in order) - 1]
        return {"ok": True, "correct": True, "ms": ms, "min_ms": ms - 0.5, "max_ms": ms + 0.5,
                "first_launch_s": {0: 9.0, 1: 8.0, 2: 1.0}[order.count(mode) - 1]}

    combined = kernels.run_rounds(run_one, ("stock", "linear"), 3)
    assert order == ["stock", "linear", "linear", "stock", "stock", "linear"]
    assert combined["stock"]["ms"] == 2.0 and combined["linear"]["ms"] == 5.0
    assert combined["stock"]["round_ms"] == [3.0, 1.0, 2.0]
    assert combined["stock"]["min_ms"] == 0.5 and combined["linear"]["max_ms"] == 6.5
    assert combined["linear"]["first_launch_s"] == 8.0     # every round compiles: their median
    assert kernels.round_label("stock", 2) == "stock.2"


def test_a_wrong_or_failed_round_spoils_the_mode():
    import kernels

    results = [{"ok": True, "correct": True, "ms": 1.0, "min_ms": 1.0, "max_ms": 1.0, "first_launch_s": 2.0},
               {"ok": True, "correct": False, "ms": 1.0, "min_ms": 1.0, "max_ms": 1.0, "first_launch_s": 2.0}]
    assert kernels.combine_rounds(results)["correct"] is False
    failed = results + [{"ok": False, "error": "RuntimeError: boom"}]
    assert kernels.combine_rounds(failed) == {"ok": False, "error": "RuntimeError: boom"}


def test_measured_table_rules_for_isolated_and_in_kernel_timings(tmp_path):
    """plan_choice.write_choices: an isolated conversion enters the table when the model's pick
    is more than 3% slower than the fastest option; one timed inside a real kernel when it is
    more than 1% (or the kernel's own noise) slower."""
    import json

    src = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>"
    dst = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>"
    dst2 = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    environment = {"gpu": "GPU", "triton": "3.6.0"}

    def row(case, stock, picks, again=None, to=dst):
        return {"case": case, "src": src, "dst": to, "shape": [128, 64], "bits": 32, "stock": {"ms": stock},
                "stock_again": {"ms": again or stock},
                "candidates": [{"ms": ms, "instructions": {"shfl": k}} for k, ms in enumerate(picks)]}
    isolated = {"environment": environment, "cases": [row("iso", 1.0, [1.02, 1.0])]}          # 2%: kept
    in_kernel = {"environment": environment,
                 "cases": [row("kernel/a", 1.05, [1.02, 1.0, 1.1], to=dst),                    # 2% > 1%: table
                           row("kernel/b", 1.0, [1.02, 1.1], again=1.03, to=dst2)]}           # within noise
    paths = []
    for name, run in (("iso", isolated), ("kernel", in_kernel)):
        paths.append(str(tmp_path / f"{name}.json"))
        json.dump(run, open(paths[-1], "w"))
    table_path = tmp_path / "table.json"
    assert plan_choice.write_choices(",".join(paths), str(table_path)) == 0
    choices = json.load(open(table_path))["choices"]
    assert [c["case"] for c in choices.values()] == ["kernel/a"]
    assert next(iter(choices.values()))["fastest"] == 1


def test_report_does_not_call_stocks_own_binary_a_regression(tmp_path):
    """kernels.py write_report: a kernel the plugin gave no island runs stock's binary, so its
    ratio is noise and never lands in "above 1.03 beyond noise"; a kernel with islands does."""
    import kernels

    def mode(ms, islands=None):
        result = {"ok": True, "correct": True, "ms": ms, "first_launch_s": 1.0}
        if islands is not None:
            result["kernels_with_islands"] = islands
        return result
    rows = [{"kernel": name, "stock": mode(1.0), "linear": mode(1.05, islands), "legacy": mode(1.0),
             "stock_again": mode(1.0)} for name, islands in (("plain", 0), ("converted", 1))]
    kernels.write_report(rows, {"gpu": "GPU", "triton": "3.6.0", "torch": "2"}, str(tmp_path), 5)
    text = (tmp_path / "kernels.md").read_text()
    assert "* kernels above 1.03 beyond that noise: converted (not counting plain: no island" in text
    assert "| plain (stock binary) |" in text and "| converted |" in text


def test_one_conversion_timed_in_several_kernels_overrules_the_pick_only_where_it_loses_nowhere():
    """plan_choice._kernel_verdict: rows of one conversion from several kernels.  An option
    overrules the model's pick when it gains more than the noise (1% here) in some kernel and
    loses no more than the noise in any; stock wins when it qualifies and is within the noise
    of the best option."""
    def row(case, stock, picks, noise=0.0):
        return {"case": case, "stock": {"ms": stock}, "noise": noise,
                "candidates": [{"ms": ms} for ms in picks]}

    # Candidate 1 gains 3% in kernel a and loses 4% in kernel b: the pick stands.
    assert plan_choice._kernel_verdict([row("kernel/a", 1.00, [1.00, 0.97]),
                                        row("kernel/b", 1.00, [1.00, 1.04])]) is None
    # Candidate 1 gains 3% in a and is even in b; stock loses 2% in b: candidate 1, from a.
    chosen, fastest, fastest_ms, pick_ms = plan_choice._kernel_verdict([row("kernel/a", 0.99, [1.00, 0.97]),
                                                                        row("kernel/b", 1.02, [1.00, 1.00])])
    assert (chosen["case"], fastest, fastest_ms, pick_ms) == ("kernel/a", 1, 0.97, 1.00)
    # Template attention's epilogue, measured on an H100: stock is within 1% of candidate 2.
    rows = [row("kernel/t1", 0.2061, [0.2078, 0.2073, 0.2063]), row("kernel/t3", 0.1146, [0.1164, 0.1169, 0.1140])]
    chosen, fastest, _, _ = plan_choice._kernel_verdict(rows)
    assert (chosen["case"], fastest) == ("kernel/t3", "stock")
    # The same with a row noise of 3%: nothing beats the pick by more than that.
    assert plan_choice._kernel_verdict([dict(r, noise=0.03) for r in rows]) is None


def test_ptx_digest_ignores_the_debug_information_naming_the_source_file():
    """plan_choice.ptx_digest: every candidate is compiled from its own TTGIR file, whose name the
    PTX repeats in `.file`, `//` comments and the debug sections; the same code must digest the
    same, and one changed instruction must not."""
    def ptx(name, op="and.b32"):
        return (f"\t.loc\t1 6 0                           // {name}:6:0\n\tmov.u32 \t%r10, %tid.x;\n"
                f"\t{op} \t%r11, %r10, 31;\n\t.file\t1 \"/tmp/x/{name}\"\n\t.section\t.debug_str\n\t{{\n"
                + "".join(f".b8 {ord(c)}\n" for c in name) + "\t}\n")
    assert plan_choice.ptx_digest(ptx("case0_rank-1.ttgir")) == plan_choice.ptx_digest(ptx("case0_rank-2.ttgir"))
    assert plan_choice.ptx_digest(ptx("case0_rank-1.ttgir")) != plan_choice.ptx_digest(ptx("case0_rank-1.ttgir", "or.b32"))


def test_plan_choice_shared_asm_mode_compiles_the_inline_ptx_form(monkeypatch):
    """``plan_choice.py --fresh --shared-asm``: ``ours_asm`` is ``ours`` compiled with the study
    switch ``emit_nvidia.SHARED_ACCESS_FORM = "asm"`` (set around enable() and the compile, restored after)."""
    from harness import plan_contexts
    from linear_layouts.lowering.emit import emit_nvidia

    case = plan_contexts.fresh_cases(1, 1)[0]
    modes = plan_contexts.modes_of(case, False, False, False, shared_asm=True)
    assert modes["ours_asm"] == modes["ours"] and "ours_asm" not in plan_contexts.modes_of(case, False, False, False)
    with plan_contexts._mode_environment("ours_asm"):
        assert emit_nvidia.shared_access_form() == "asm"
    assert emit_nvidia.shared_access_form() == "llvm"
    with plan_contexts._mode_environment("ours"):
        assert emit_nvidia.shared_access_form() == "llvm"
    routes = plan_contexts.modes_of(case, False, False, False, in_place=True, text=True)
    assert routes["ours_in_place"] == routes["ours_text"] == routes["ours"]
    for mode, value in (("ours_in_place", "1"), ("ours_text", "0")):
        with plan_contexts._mode_environment(mode):
            assert os.environ["LINEAR_LAYOUTS_IN_PLACE"] == value
        assert "LINEAR_LAYOUTS_IN_PLACE" not in os.environ


def test_plan_choice_names_a_missing_results_file_in_one_line(tmp_path, capsys):
    """--write-choices and --same-ptx read --from's runs: a missing file is a usage error, no traceback."""
    missing = str(tmp_path / "plan_choice.json")
    for argv in (["--write-choices", str(tmp_path / "table.json"), "--from", missing], ["--same-ptx"]):
        with pytest.raises(SystemExit) as ended:
            plan_choice.main(argv)
        assert ended.value.code == 2
        assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
            f"error: --from: no such results file {missing if '--from' in argv else '(none given)'}")
    assert not (tmp_path / "table.json").exists()
