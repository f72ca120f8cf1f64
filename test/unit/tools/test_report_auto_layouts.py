"""The report's "Automatic layouts" section: for each Gluon kernel whose automatic
layouts ``linear_layouts.enable()`` resolved, which layout each group got and why, and the
kernel's modelled cost with ours against Triton's own resolution (or Triton's error).

Exact text on built-in kernels of ``support.gluon_auto_kernels``: the transpose (Triton's
resolution rejects it; ours converts between the load's and the store's coalesced layouts) and
the copy through ``gl.CoalescedLayout()`` (both resolve it alike); a kernel ours cannot resolve
(Triton's resolution compiles it); a kernel served from Triton's cache, compiled before the
report was on (nothing priced then); kernels without automatic layouts get no section; and
with the report off, Triton's resolution is not run at all (compile time)."""

import warnings

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import recorder# noqa: E402
from linear_layouts.passes.gluon import stock_resolution  # noqa: E402
from linear_layouts.passes.gluon.layout_expression import gluon_layout_expression  # noqa: E402
from linear_layouts.passes.gluon.resolution_record import GroupRemark, Resolution  # noqa: E402
from linear_layouts.tools.report.html_pages import index_page, kernel_page  # noqa: E402
from linear_layouts.tools.report.markdown import auto_layout_lines, markdown  # noqa: E402
from linear_layouts.tools.report.model import ReportOptions, build_kernels  # noqa: E402
from linear_layouts.tools.demo import bundled_kernels, compile_stock  # noqa: E402
import support.gluon_auto_kernels as auto_kernels  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_triton_cache")  # conftest.py

PATH = auto_kernels.__file__
RELEASE = ".".join(triton.__version__.split(".")[:2])
# what differs between the releases: the modelled cost of the transpose as resolved, and the
# columns Gluon's front end gives the ops (3.6: the call's argument, 3.9: the call)
TRANSPOSE_COST = "464.3"
# What differs between releases is Triton's: the columns its locations point at (3.6 and 3.7
# alike; later releases as 3.9).
LOCATIONS_3_6 = ("30:38", "30:30", "23:30", "92:63")
LOAD, STORE, COPY, HISTOGRAM = {"3.6": LOCATIONS_3_6, "3.7": LOCATIONS_3_6}.get(RELEASE, ("30:31", "30:5", "23:23", "92:9"))


@pytest.fixture(autouse=True)
def stop_recording():
    yield
    recorder.stop()
    linear_layouts.disable()


def record(directory, names, enabled=True):
    """Compile ``names`` with ``enable()`` (or stock), recording into ``directory``."""
    if enabled:
        linear_layouts.enable()
    recorder.start(str(directory), progress=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in names:
                triton.compile(auto_kernels.source(name), target=auto_kernels.TARGET)
    finally:
        recorder.stop()
        linear_layouts.disable()
    return build_kernels(recorder.read_records(str(directory)), ReportOptions(compare=False, progress=False))


NOTE = ("Gluon kernels whose automatic layouts (gl.AutoLayout(), gl.CoalescedLayout()) linear_layouts.enable() "
        "resolved by the cost model (ll-resolve-auto-layouts): per group of values tied together, the layout the "
        "named op got (a Gluon expression where one exists) and why; per kernel, the modelled cost (loop-weighted) "
        "with ours against Triton's own resolution, or Triton's error where it rejects the kernel.")
COALESCED = "coalesced for its pointers (dim {} contiguous, 4 elements per access)"


def expected_table(rows):
    from linear_layouts.tools.report.conversion_report import format_table
    return format_table(["kernel", "group", "ops", "op", "location", "layout", "why"], rows)


def test_transpose_and_copy_say_which_layout_each_group_got_and_why(tmp_path):
    kernels = record(tmp_path, ["transpose", "copy_coalesced"])
    lines = auto_layout_lines(kernels)
    assert lines == [
        "", "## Automatic layouts", "", NOTE, "",
        "Automatic layouts resolved by ours in 2 kernels (2 groups); Triton's own resolution rejects 1; where it "
        "resolves, ours is modelled cheaper in 0, the same in 1, costlier in 0.", "",
        "- transpose on sm_90: 1 group of automatic values; conversions added: 1 (index arithmetic recomputed for "
        f"2 more); modelled cost (loop-weighted) ours {TRANSPOSE_COST}, Triton's resolution rejects it: 'tt.make_range' op "
        "Failed to infer return type",
        "- copy_coalesced on sm_90: 1 group of automatic values; conversions added: 0; modelled cost "
        "(loop-weighted) ours 71.7, with Triton's resolution 71.7 (the same)",
        "", "```"] + expected_table([
            ["transpose", "1", "36", "tt.load", f"{PATH}:{LOAD}", "gl.BlockedLayout([1, 4], [2, 16], [4, 1], [1, 0])",
             COALESCED.format(1) + ", the cheapest of 2 candidates by the cost model"],
            ["transpose", "1", "-", "tt.store", f"{PATH}:{STORE}", "gl.BlockedLayout([4, 1], [16, 2], [1, 4], [0, 1])",
             COALESCED.format(0) + "; converted from the group's layout"],
            ["copy_coalesced", "1", "7", "tt.load", f"{PATH}:{COPY}", "gl.BlockedLayout([4], [32], [4], [0])",
             COALESCED.format(0)]]) + ["```"]
    text = markdown(kernels)
    assert text.index("## Kernels") < text.index("## Automatic layouts") < text.index("## transpose on sm_90")
    # the HTML index: the same sentences and rows, each kernel linked to its page
    index = index_page(kernels, ReportOptions(compare=False))
    assert "<h2>Automatic layouts</h2>" in index
    assert '<td><a href="kernels/transpose-sm_90.html">transpose</a></td><td>1</td><td>-</td><td>tt.store</td>' in index
    assert "ours 71.7, with Triton&#x27;s resolution 71.7 (the same)</li>" in index
    # the kernel page: its own resolution, the layouts also as TTGIR attributes
    page = kernel_page(kernels[0])
    assert page.index("<h2>Automatic layouts</h2>") < page.index("<h2>Conversions</h2>")
    assert (f"group 1, tt.store at {PATH}:{STORE}: #ttg.blocked&lt;{{sizePerThread = [4, 1], threadsPerWarp = "
            "[16, 2], warpsPerCTA = [1, 4], order = [0, 1]}&gt;") in page


def test_a_kernel_ours_cannot_resolve_says_why(tmp_path):
    kernels = record(tmp_path, ["histogram_fixed"])
    assert auto_layout_lines(kernels)[5:8] == [
        "Automatic layouts resolved by ours in 0 kernels (0 groups); not resolved by ours in 1 (compiled with "
        "Triton's own resolution); Triton's own resolution rejects 0.", "",
        f"- histogram_fixed on sm_90: not resolved by ours ({PATH}:{HISTOGRAM}: tt.histogram: no layout rule for this op "
        "with automatic layouts (left to Triton's resolution)); compiled with Triton's own resolution"]


def test_a_kernel_from_the_cache_compiled_without_the_report_is_not_priced(tmp_path):
    with triton.knobs.compilation.scope():
        triton.knobs.compilation.always_compile = False    # whatever the environment or an earlier test says
        linear_layouts.enable()
        triton.compile(auto_kernels.source("copy_coalesced"), target=auto_kernels.TARGET)   # no report: not priced
        kernels = record(tmp_path, ["copy_coalesced"])                                      # a cache hit
    assert [r["cache_hit"] for r in recorder.read_records(str(tmp_path))] == [True]
    assert auto_layout_lines(kernels)[5:8] == [
        "Automatic layouts resolved by ours in 1 kernel (1 group); Triton's own resolution rejects 0; not priced "
        "in 1.", "", (
        "- copy_coalesced on sm_90: 1 group of automatic values; conversions added: 0; modelled cost "
        "(loop-weighted) not priced (compiled without the report, then served "
        "from Triton's cache; TRITON_ALWAYS_COMPILE=1 compiles it again)")]


def test_kernels_without_automatic_layouts_get_no_section(tmp_path):
    linear_layouts.enable()
    recorder.start(str(tmp_path), progress=False)
    for kernel in bundled_kernels(["transpose"]):            # Triton's language: no automatic layouts
        compile_stock(kernel, "sm_90")
    recorder.stop()
    linear_layouts.disable()
    kernels = build_kernels(recorder.read_records(str(tmp_path)), ReportOptions(compare=False, progress=False))
    assert auto_layout_lines(kernels) == [] and "Automatic layouts" not in markdown(kernels)
    assert "Automatic layouts" not in index_page(kernels, ReportOptions(compare=False))
    # stock Triton's run records nothing of the kind either
    assert record(tmp_path / "stock", ["copy_coalesced"], enabled=False)[0].auto_layouts is None


def test_triton_resolution_runs_only_for_the_report_or_remarks(tmp_path, monkeypatch):
    calls = []
    real = stock_resolution.triton_resolution
    monkeypatch.setattr(stock_resolution, "triton_resolution", lambda *a: calls.append(1) or real(*a))
    with triton.knobs.compilation.scope():
        triton.knobs.compilation.always_compile = True     # the second compile must not come from the cache
        linear_layouts.enable()
        triton.compile(auto_kernels.source("copy"), target=auto_kernels.TARGET)
        assert calls == []                        # the report off: no subprocess, compile time as before
        record(tmp_path, ["copy"])
    assert calls == [1]


def test_resolution_record_round_trips_and_slices_have_gluon_expressions():
    blocked = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    resolution = Resolution(True, "", [GroupRemark(3, "tt.reduce", "k.py:7:9", f"#ttg.slice<{{dim = 1, parent = {blocked}}}>",
                                                   "the cheapest of 2 candidates by the cost model",
                                                   [("tt.store", "k.py:8:5", blocked, "why")])],
                            conversions=1, cost_ours=10.5, triton_error="boom", compared=True)
    assert Resolution.from_record(resolution.record()) == resolution
    assert resolution.groups[0].gluon == "gl.SliceLayout(1, gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]))"
    assert gluon_layout_expression("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
                                   "instrShape = [16, 64, 16]}>") is None


def test_a_conversion_our_resolution_adds_points_at_its_source_and_says_who_chose(tmp_path):
    """The transpose's one conversion (inserted by ll-resolve-auto-layouts) is located at the
    store that needs it, not at a line of the printed module, and its 'why' names our resolution,
    not Triton's coalescing."""
    kernels = record(tmp_path, ["transpose"])
    (entry,) = kernels[0].conversions
    assert entry.location.endswith(f"{PATH}:{STORE}")
    assert entry.why.kind == "store"
    assert entry.why.reason.startswith("a memory access: ll-resolve-auto-layouts chose the store's layout by cost")
