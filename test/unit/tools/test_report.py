"""``python -m linear_layouts report``: the recorder, the report's rows, its pages and links, the
environment mode under pytest-xdist workers, and a real browser where there is one."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from html.parser import HTMLParser

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from linear_layouts.passes import hook, recorder  # noqa: E402
from support import REPO  # noqa: E402
from linear_layouts.tools.demo import bundled_kernels, compile_stock  # noqa: E402
from linear_layouts.tools.report import (ReportOptions, build_kernels, conversion_table_rows, count_text,  # noqa: E402
                                         kernel_table_rows, markdown)

ROOT = str(REPO)
EXAMPLE = os.path.join(ROOT, "examples", "report_example.py")


pytestmark = pytest.mark.usefixtures("private_triton_cache")  # conftest.py


@pytest.fixture(autouse=True)
def stop_recording():
    yield
    recorder.stop()


def child_environment(tmp_path, **extra):
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1", **extra)
    return env


# ----------------------------------------------------------------------------- recorder and rows

def record_bundled(directory, names):
    recorder.start(str(directory), progress=False)
    try:
        for kernel in bundled_kernels(names):
            compile_stock(kernel, "sm_90")
    finally:
        recorder.stop()
    return recorder.read_records(str(directory))


def test_bundled_kernels_give_exact_rows(tmp_path):
    records = record_bundled(tmp_path, ["transpose", "rotary", "matmul", "softmax"])
    assert [r["name"] for r in records] == ["transpose", "rotary_embedding", "matmul", "softmax"]
    assert records[0]["specialization"] == "X: *fp32, Y: *fp32, M=64, N=64"
    assert 'loc("' in records[0]["ttgir"]          # TTGIR with the user's source locations
    kernels = build_kernels(records, ReportOptions(str(tmp_path), compare=False, progress=False))
    rows = kernel_table_rows(kernels)
    # (lowering/measured_choices.json has no entry for these conversions: the cost model's plans,
    # under every Triton release)
    assert rows == [
        ["transpose", "sm_90", "1", "1", "0", "warp 1", "shared 1", "98.2", "16384 B", "-", "-", "ours 1 of 1"],
        ["rotary_embedding", "sm_90", "1", "2", "0", "lane 2", "shared 2", "38.2", "1024 B", "-", "-", "ours 2 of 2"],
        ["matmul", "sm_90", "1", "1", "0", "warp 1", "shared+ldmatrix 1", "41.7", "8192 B", "-", "-", "ours 1 of 1"],
        ["softmax", "sm_90", "1", "0", "0", "-", "-", "-", "-", "-", "-", "-"],
    ]
    transpose, rotary = kernels[0], kernels[1]
    assert conversion_table_rows(rotary) == [
        ["#1", "kernels.py:72", "128x2xf32 #blocked1 -> #blocked2", "lane", "shared",
         "st.shared.b128=2 bar.warp.sync=1 ld.shared.b128=2", "0", "1024 B", "ours: shared"],
        ["#2", "kernels.py:76", "256xf32 #blocked3 -> #blocked", "lane", "shared",
         "st.shared.b128=2 bar.warp.sync=1 ld.shared.b128=2", "0", "1024 B", "ours: shared"]]
    assert [c.row.location for c in transpose.conversions] == ["kernels.py:127"]
    first = rotary.conversions[1]
    assert re.search(r"examples/kernels\.py:76:\d+$", first.location)   # the column differs by release
    assert first.source_line == "tl.store(Y + row * D + tl.arange(0, D), tl.reshape(y, (D,)))"
    assert first.remark.endswith("remark: [ll-lower-conversions] lowered: shared, bar.warp.sync=1, "
                                 "guard bar.sync=1, ld.shared.b128=2, st.shared.b128=2, scratch=1024B")
    text = markdown(kernels)
    assert "4 kernels (4 compiles), 3 with layout conversions; 4 conversions, 0 of them no-ops." in text
    scratch_line = [line for line in text.splitlines() if "Scratch (shared memory)" in line]
    largest = max(kernels, key=lambda k: k.scratch_bytes)
    assert len(scratch_line) == 1 and scratch_line[0].endswith(
        f"Scratch (shared memory) for conversions: in 3 kernels, the most {largest.scratch_bytes} B "
        f"({largest.name} on sm_90).")
    assert "Worth a look first (by conversion cost per warp): transpose on sm_90 (98.2), matmul on sm_90 (41.7), " \
           "rotary_embedding on sm_90 (38.2)" in text


def test_repeated_compiles_are_merged_and_counted(tmp_path):
    record_bundled(tmp_path, ["transpose"])
    records = record_bundled(tmp_path, ["transpose"])      # a cache hit: recorded too
    assert [r["cache_hit"] for r in records] == [False, True]
    kernels = build_kernels(records, ReportOptions(str(tmp_path), compare=False, progress=False))
    assert [(k.name, k.compiles) for k in kernels] == [("transpose", 2)]


def test_recording_changes_nothing_triton_computes(tmp_path):
    kernel = bundled_kernels(["transpose"])[0]
    def previous_listener(**kwargs):
        seen.append(kwargs["metadata"]["name"])
    seen = []
    triton.knobs.compilation.listener = previous_listener
    try:
        plain = compile_stock(kernel, "sm_90")
        recorder.start(str(tmp_path / "report"), progress=False)
        triton.knobs.compilation.always_compile = True
        recorded = compile_stock(kernel, "sm_90")
        recorder.stop()
        assert triton.knobs.compilation.listener is previous_listener   # put back as it was
    finally:
        triton.knobs.compilation.always_compile = False
        triton.knobs.compilation.listener = None
    assert seen == ["transpose", "transpose"]                          # chained, not replaced
    assert recorded.hash == plain.hash and recorded.asm["ptx"] == plain.asm["ptx"]


def test_compare_counts_final_code_stock_and_ours(tmp_path):
    records = record_bundled(tmp_path, ["matmul"])
    kernels = build_kernels(records, ReportOptions(str(tmp_path), compare=True, progress=False))
    matmul = kernels[0]
    assert matmul.compare_problem == ""
    assert matmul.final_code_text("stock") == "st.shared=48 ld.shared=16"
    assert matmul.final_code_text("ours") == "st.shared=40 ldmatrix=4"


# ----------------------------------------------------------------------------- the command

class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.targets, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for name in ("href", "src"):
            if attrs.get(name):
                self.targets.append(attrs[name])


def parse_links(path):
    parser = Links()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser


def assert_links_resolve(page):
    """Every href/src of ``page`` is a file of the report (and an anchor of it, if it has one)."""
    links = parse_links(page)
    for target in links.targets:
        assert "://" not in target, f"{page}: {target} is not a local file"
        file_part, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
        assert os.path.isfile(path), f"{page}: link {target} does not resolve"
        if anchor:
            assert anchor in parse_links(path).ids, f"{page}: anchor {target} does not exist"
    return links.targets


def test_report_command_writes_pages_whose_links_resolve(tmp_path):
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "-o", str(out), "--pictures", "1",
                          EXAMPLE, "--target", "sm_90"], capture_output=True, text=True, timeout=600,
                         env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "compiled 3 kernels for cuda 90" in run.stdout           # the program ran unchanged
    assert "recorded kernel 3: interleave_pairs (cuda 90)" in run.stderr   # the progress line
    index = out / "index.html"
    targets = assert_links_resolve(str(index))
    pages = sorted(t for t in targets if t.startswith("kernels/"))
    # each kernel twice: its row of the table, and its place in "worth a look first"
    assert pages == sorted(2 * ["kernels/interleave_pairs-sm_90.html", "kernels/normalize_rows-sm_90.html",
                                "kernels/transpose-sm_90.html"])
    text = index.read_text()
    assert "3 kernels (3 compiles), 3 with layout conversions; 3 conversions, 0 of them no-ops." in text
    for page in set(pages):
        images = [t for t in assert_links_resolve(str(out / page)) if t.endswith(".svg")]
        assert len(images) == 2, page            # --pictures 1: element grids and the plan of #1
    transpose = (out / "kernels" / "transpose-sm_90.html").read_text()
    assert "report_example.py:26:5" in transpose
    assert "tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tile)" in transpose
    assert "lowered: shared, bar.sync=1" in transpose
    assert "st.shared=8 ld.shared=8" in transpose                   # stock's final code


def test_report_command_markdown(tmp_path):
    out = tmp_path / "md"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md", "--no-compare",
                          "-o", str(out), EXAMPLE], capture_output=True, text=True, timeout=600,
                         env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("compiled 3 kernels for cuda 90\n# linear-layouts report\n")
    assert "#1  report_example.py:35  16xf32 #slice1(#blocked) -> #blocked1  lane   shuffle" in run.stdout
    assert (out / "report.md").read_text() in run.stdout
    assert not (out / "index.html").exists()


@pytest.mark.parametrize("args, message", [
    (["report"], "no program given"),
    (["report", "/no/such/prog.py"], "no such program: /no/such/prog.py"),
    (["report", "--format", "pdf", EXAMPLE], "argument --format: invalid choice: 'pdf'"),
    (["report", "--pictures", "-1", EXAMPLE], "--pictures -1: expected 0 or more"),
    (["report", "--mode", "legacy", EXAMPLE], "argument --mode: invalid choice: 'legacy'"),
])
def test_report_command_usage_errors(args, message, tmp_path):
    run = subprocess.run([sys.executable, "-m", "linear_layouts", *args], capture_output=True, text=True,
                         timeout=120, env=child_environment(tmp_path))
    assert run.returncode == 1
    assert run.stderr.startswith("linear_layouts: error: ") and message in run.stderr
    assert "Traceback" not in run.stderr


def test_report_directory_that_is_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "-o", str(blocker), EXAMPLE],
                         capture_output=True, text=True, timeout=120, env=child_environment(tmp_path))
    assert run.returncode == 1 and "exists and is not a directory" in run.stderr
    assert "Traceback" not in run.stderr


# ----------------------------------------------------------------------------- environment mode, xdist

WORKER_TESTS = textwrap.dedent("""
    import pytest
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import linear_layouts  # LINEAR_LAYOUTS=report: recording starts here


    @triton.jit
    def copy_transposed(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tile = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
        tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tile)


    @pytest.mark.parametrize("block", [16, 32, 64, 128])
    def test_compiles(block):
        source = ASTSource(copy_transposed, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": block})
        triton.compile(source, target=GPUTarget("cuda", 90, 32))
""")


def test_environment_mode_merges_pytest_xdist_workers(tmp_path):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed (pip install pytest-xdist)")
    (tmp_path / "test_worker_kernels.py").write_text(WORKER_TESTS)
    out = tmp_path / "report"
    env = child_environment(tmp_path, LINEAR_LAYOUTS="report", LINEAR_LAYOUTS_REPORT_DIR=str(out),
                            LINEAR_LAYOUTS_REPORT_COMPARE="0", LINEAR_LAYOUTS_REPORT_PICTURES="0")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                          "test_worker_kernels.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout
    record_files = os.listdir(out / "records")
    assert len(record_files) == 2, record_files                       # one per worker process
    index = (out / "index.html").read_text()
    rows = re.findall(r'<a href="kernels/(copy_transposed-sm_90(?:-\d)?)\.html">', index)
    assert len(set(rows)) == 4                                       # every worker's kernels, merged
    assert "4 kernels (4 compiles), 4 with layout conversions" in index
    assert_links_resolve(str(out / "index.html"))


def test_environment_mode_bad_option_warns_and_stays_off(tmp_path):
    env = child_environment(tmp_path, LINEAR_LAYOUTS="report", LINEAR_LAYOUTS_REPORT_PICTURES="many")
    run = subprocess.run([sys.executable, "-c", "import linear_layouts; from linear_layouts.passes import recorder;"
                          " print(recorder.recording_directory())"], capture_output=True, text=True,
                         timeout=120, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "None"
    assert "linear-layouts report stays off: LINEAR_LAYOUTS_REPORT_PICTURES='many'" in run.stderr


# ----------------------------------------------------------------------------- a real browser

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_chromium_renders_index_and_a_kernel_page(tmp_path):
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "-o", str(out), "--no-compare", EXAMPLE],
                         capture_output=True, text=True, timeout=600, env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    for page, png in ((out / "index.html", tmp_path / "index.png"),
                      (out / "kernels" / "transpose-sm_90.html", tmp_path / "kernel.png")):
        shot = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                               "--window-size=1400,1000", page.as_uri()], capture_output=True, text=True, timeout=120)
        assert shot.returncode == 0, shot.stderr
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000     # a real, non-blank picture


def test_counts_are_spelled_in_the_singular_for_one():
    assert [count_text(n, "conversion") for n in (0, 1, 2)] == ["0 conversions", "1 conversion", "2 conversions"]
