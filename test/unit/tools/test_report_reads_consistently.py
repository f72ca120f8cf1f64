"""The report's numbers do not contradict each other: a conversion our plan prices below stock's
final code and still left to Triton names the rule that decided; the summary counts what is
lowered by us apart from what was only planned; a Gluon kernel stock Triton rejects gets no
stock bar."""

from types import SimpleNamespace

from linear_layouts.tools.report.final_code import ConversionCode
from linear_layouts.tools.report.model import ConversionEntry, KernelEntry, rule_of
from linear_layouts.tools.report.text import kernel_chart_rows, summary_lines

BOUNDS_REASON = ("stock Triton's lowering: our plan needs more shuffles (1 > 0), selects (15 > 0) than stock Triton's "
                 "lowering needs at least (ours: shuffles=1 selects=15; stock at least: store_wavefronts=16; "
                 "lowering/choosing/stock_bounds.py)")


def conversion(owned, cost, stock_cost=None, lowering="shuffle", reason=BOUNDS_REASON):
    row = SimpleNamespace(lowering=lowering, scope="lane", is_noop=False, scratch_bytes=0)
    code = None if stock_cost is None else ConversionCode(None, None, stock_cost, stock_cost)
    outcome = f"ours: {lowering}" if owned else f"left to Triton: {reason}"
    return ConversionEntry(1, row, "k.py:1:1", "", outcome, owned, "", cost=cost, code=code)


def kernel(name, conversions=(), **fields):
    entry = KernelEntry(name, "sm_90", "cuda", "", 4, 1, "", name, **fields)
    entry.conversions = list(conversions)
    return entry


def test_a_plan_priced_below_stock_and_left_to_triton_names_the_rule():
    verdict = conversion(False, 9.7, 24.8).verdict()
    assert verdict.startswith("left to Triton by the instruction-count rule (")
    assert "not by the cost model's price (our plan 9.7 against stock's 24.8)" in verdict
    assert verdict.endswith(f"({BOUNDS_REASON})")
    # priced no lower than stock: nothing to explain beyond the rule
    assert "price" not in conversion(False, 6.8, 6.8).verdict()


def test_each_rule_of_the_choice_has_a_name():
    assert rule_of("... (rule stock-shuffles of lowering/choosing/choice_model.json, chosen on H100)") == \
        "the rule fitted to GPU timings"
    assert rule_of("stock Triton's lowering: 16-bit elements where ldmatrix/stmatrix is in play ...") == \
        "the 16-bit matrix rule (fitted to GPU timings)"
    assert rule_of("something new") == "the lowering choice"


def test_the_summary_counts_what_is_ours_apart_from_what_was_planned():
    """It read "Planned lowering: shuffle 1" where nothing was ours."""
    kernels = [kernel("a", [conversion(False, 9.7)]), kernel("b", [conversion(True, 3.0, lowering="shared")])]
    line = summary_lines(kernels)[2]
    assert line == "Lowered by us: 1 (shared 1); left to Triton: 1 (our verified plans for them, not used: shuffle 1)."
    assert summary_lines([kernel("a", [conversion(False, 9.7)])])[2] == \
        "Lowered by us: 0; left to Triton: 1 (our verified plans for them, not used: shuffle 1)."


def test_a_gluon_kernel_stock_rejects_has_no_stock_bar():
    rejected = kernel("auto", stock_mix=object(), ours_mix=object(),
                      auto_layouts=SimpleNamespace(triton_error="found conflicting encodings"))
    assert kernel_chart_rows([rejected]) == []
    rejected.stock_counts, rejected.ours_counts = {"st.shared": 4}, {"st.shared": 2}
    assert rejected.verdict() == "" and rejected.final_code_text("stock") == "- (stock Triton rejects the kernel)"
