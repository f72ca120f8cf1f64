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

from linear_layouts.passes.drop_in import hook, recorder# noqa: E402
from support import REPO  # noqa: E402
from linear_layouts.tools.demo import bundled_kernels, compile_stock  # noqa: E402
from linear_layouts.tools.report.markdown import markdown  # noqa: E402
from linear_layouts.tools.report.model import ReportOptions, build_kernels, count_text  # noqa: E402
from linear_layouts.tools.report.text import conversion_table_rows, kernel_table_rows, summary_lines  # noqa: E402

ROOT = str(REPO)
EXAMPLE = os.path.join(ROOT, "examples", "report_example.py")


pytestmark = pytest.mark.usefixtures("private_triton_cache")  # conftest.py


@pytest.fixture(autouse=True)
def stop_recording():
    yield
    recorder.stop()


def child_environment(tmp_path, **extra):
    """The environment of a program a test runs: its own Triton cache, and none of the outer
    pytest-xdist run's variables (the report merges the workers of one xdist run, so a
    child that inherited ``PYTEST_XDIST_TESTRUNUID`` would join the suite's run, not start its own)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST")}
    env.update(TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1", **extra)
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
    # (lowering/choosing/measured_choices.json has no entry for these conversions: the cost model's plans,
    # under every Triton release)
    assert rows == [
        ["transpose", "sm_90", "1", "1", "0", "warp 1", "shared 1", "98.2", "98.2", "16384 B", "-", "-", "ours 1 of 1"],
        ["rotary_embedding", "sm_90", "1", "2", "0", "lane 2", "shared 2", "38.2", "38.2", "1024 B", "-", "-",
         "ours 2 of 2"],
        ["matmul", "sm_90", "1", "1", "0", "warp 1", "shared+ldmatrix 1", "41.7", "41.7", "8192 B", "-", "-",
         "ours 1 of 1"],
        ["softmax", "sm_90", "1", "0", "0", "-", "-", "-", "-", "-", "-", "-", "-"],
    ]
    transpose, rotary = kernels[0], kernels[1]
    assert conversion_table_rows(rotary) == [
        ["#1", "kernels.py:72", "128x2xf32 #blocked1 -> #blocked2", "lane", "shared",
         "st.shared.b128=2 bar.warp.sync=1 ld.shared.b128=2", "0", "1024 B", "19.1", "1", "19.1", "ours: shared"],
        ["#2", "kernels.py:76", "256xf32 #blocked3 -> #blocked", "lane", "shared",
         "st.shared.b128=2 bar.warp.sync=1 ld.shared.b128=2", "0", "1024 B", "19.1", "1", "19.1", "ours: shared"]]
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
    assert "Worth a look first (by loop-weighted conversion cost per warp): transpose on sm_90 (98.2), matmul on " \
           "sm_90 (41.7), " \
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
        del triton.knobs.compilation.always_compile    # back to the environment's (not pinned False)
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
    assert matmul.verdict() == "ours 20 fewer"                       # 64 -> 44
    assert ("Final code, ours vs stock (data-movement instructions of the whole kernel): fewer in 1 kernel, "
            "the same in 0, more in 0.") in summary_lines(kernels)


def test_verdict_names_kernels_where_ours_has_more():
    from linear_layouts.tools.report.model import KernelEntry
    kernels = [KernelEntry("layer_norm", "sm_90", "cuda", "", 4, 1, "", "a", stock_counts={"shfl": 56},
                           ours_counts={"shfl": 58}),
               KernelEntry("copy", "sm_90", "cuda", "", 4, 1, "", "b", stock_counts={"st.shared": 2},
                           ours_counts={"st.shared": 2}),
               KernelEntry("other", "sm_90", "cuda", "", 4, 1, "", "c")]     # not compared
    assert [k.verdict() for k in kernels] == ["ours 2 more", "same", ""]
    assert ("Final code, ours vs stock (data-movement instructions of the whole kernel): fewer in 0 kernels, "
            "the same in 1, more in 1 (layer_norm on sm_90: ours 2 more).") in summary_lines(kernels)


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
    pages = sorted(t for t in targets if t.startswith("kernels/") and "#" not in t)
    # each kernel twice: its row of the table, and its place in "worth a look first"
    assert pages == sorted(2 * ["kernels/interleave_pairs-sm_90.html", "kernels/normalize_rows-sm_90.html",
                                "kernels/transpose-sm_90.html"])
    # and each conversion in "costliest conversions", costliest first (transpose, normalize_rows, interleave),
    # then in the source listing, by line (the same order here)
    assert [t for t in targets if "#" in t] == 2 * ["kernels/transpose-sm_90.html#c1",
                                                    "kernels/normalize_rows-sm_90.html#c1",
                                                    "kernels/interleave_pairs-sm_90.html#c1"]
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
    # the program's own output goes to stderr: stdout is the report alone (report --format md > r.md)
    assert run.stdout.startswith("# linear-layouts report\n") and "compiled 3 kernels for cuda 90\n" in run.stderr
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
    # (recording starts once the process imports triton: the warning comes then)
    run = subprocess.run([sys.executable, "-c", "import linear_layouts, triton; from linear_layouts.passes.drop_in import recorder;"
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
    """examples/report_tour.py: loops, reductions, a matmul epilogue and an attention tile."""
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "-o", str(out),
                          os.path.join(ROOT, "examples", "report_tour.py")],
                         capture_output=True, text=True, timeout=900, env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    index = (out / "index.html").read_text()
    assert "5 kernels (5 compiles), 3 with layout conversions" in index
    assert "<h2>Stock vs ours per kernel</h2>\n<svg" in index and "<h2>Source</h2>" in index
    attention = out / "kernels" / "attention_fwd_kernel-sm_90.html"
    for page in (out / "index.html", attention):
        assert_links_resolve(str(page))
    assert "no pictures: a no-op" in attention.read_text()
    for name in os.listdir(out / "img"):
        assert os.path.getsize(out / "img" / name) < 300_000, name
    for page, png in ((out / "index.html", tmp_path / "index.png"), (attention, tmp_path / "kernel.png")):
        shot = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                               "--window-size=1400,1800", page.as_uri()], capture_output=True, text=True, timeout=120)
        assert shot.returncode == 0, shot.stderr
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 50_000     # a real, non-blank picture
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (1400, 1800)


def test_counts_are_spelled_in_the_singular_for_one():
    assert [count_text(n, "conversion") for n in (0, 1, 2)] == ["0 conversions", "1 conversion", "2 conversions"]


# ----------------------------------------------------------------------------- robust runs

PROGRAM_HEAD = textwrap.dedent(f"""
    import os, sys
    sys.path.insert(0, {os.path.join(ROOT, "examples")!r})
    import triton
    from report_example import TARGETS, ASTSource, interleave_pairs, transpose

    def compile_transpose():
        triton.compile(ASTSource(transpose, {{"X": "*fp32", "Y": "*fp32"}}, constexprs={{"BLOCK": 32}}),
                       target=TARGETS["sm_90"])

    def compile_interleave():
        triton.compile(ASTSource(interleave_pairs, {{"X": "*fp16", "Y": "*fp16"}}, constexprs={{"D": 256}}),
                       target=TARGETS["sm_90"])
""")


def run_report(tmp_path, body, *options, env_extra=None, name="prog.py"):
    program = tmp_path / name
    program.write_text(PROGRAM_HEAD + textwrap.dedent(body))
    out = tmp_path / "report"
    env = child_environment(tmp_path, **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md", "--no-compare",
                           "-o", str(out), *options, str(program)], capture_output=True, text=True, timeout=600,
                          env=env), out


def test_report_written_when_the_program_raises(tmp_path):
    run, out = run_report(tmp_path, """
        compile_transpose()
        raise RuntimeError("the weights are missing")
    """)
    assert run.returncode == 1
    assert "RuntimeError: the weights are missing" in run.stderr       # the program's traceback
    assert "1 kernel (1 compile), 1 with layout conversions" in (out / "report.md").read_text()
    assert "linear-layouts report: wrote" in run.stderr


def test_sys_exit_message_is_printed_and_status_kept(tmp_path):
    run, out = run_report(tmp_path, """
        compile_transpose()
        sys.exit("could not find the weights")
    """)
    assert run.returncode == 1
    assert "\ncould not find the weights\n" in "\n" + run.stderr
    assert (out / "report.md").exists()
    run, _ = run_report(tmp_path, "compile_transpose()\nsys.exit(3)\n")
    assert run.returncode == 3


def test_each_run_writes_a_fresh_report_unless_append(tmp_path):
    for _ in range(2):
        run, out = run_report(tmp_path, "compile_transpose()\ncompile_interleave()\n")
        assert run.returncode == 0, run.stderr
        text = (out / "report.md").read_text()
        assert "2 kernels (2 compiles), 2 with layout conversions" in text
        assert "This run only (earlier runs' records in this directory were removed; --append keeps them)." in text
    run, out = run_report(tmp_path, "compile_transpose()\n", "--append")
    text = (out / "report.md").read_text()
    assert "2 kernels (3 compiles), 2 with layout conversions" in text
    assert "Appended: the records of 2 runs in this directory (--append)." in text
    run, out = run_report(tmp_path, "compile_interleave()\n", name="other.py")   # another program, fresh
    text = (out / "report.md").read_text()
    assert "1 kernel (1 compile), 1 with layout conversions" in text and "interleave_pairs" in text
    assert "transpose" not in text


def test_html_pages_of_earlier_runs_are_removed(tmp_path):
    out = tmp_path / "report"
    for body in ("compile_transpose()\n", "compile_interleave()\n"):
        (tmp_path / "prog.py").write_text(PROGRAM_HEAD + body)
        run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--no-compare", "--pictures", "0",
                              "-o", str(out), str(tmp_path / "prog.py")], capture_output=True, text=True,
                             timeout=600, env=child_environment(tmp_path))
        assert run.returncode == 0, run.stderr
    assert sorted(os.listdir(out / "kernels")) == ["interleave_pairs-sm_90.html"]


def test_a_forked_child_is_recorded_and_the_report_written_once(tmp_path):
    run, out = run_report(tmp_path, """
        pid = os.fork()
        if pid == 0:
            compile_interleave()          # the child then ends the program as the parent does
        else:
            os.waitpid(pid, 0)
            compile_transpose()
    """)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("linear-layouts report: wrote") == 1
    assert run.stdout.count("# linear-layouts report") == 1
    text = (out / "report.md").read_text()
    assert "2 kernels (2 compiles), 2 with layout conversions" in text


def test_a_spawned_worker_is_recorded_and_the_report_written_once(tmp_path):
    # the worker never imports linear_layouts: the command's sitecustomize starts recording in it
    # once it imports triton
    run, out = run_report(tmp_path, """
        import multiprocessing

        def work():
            compile_interleave()

        if __name__ == "__main__":
            compile_transpose()
            worker = multiprocessing.get_context("spawn").Process(target=work)
            worker.start()
            worker.join()
            assert worker.exitcode == 0
    """)
    assert run.returncode == 0, run.stderr
    assert "recorded kernel 1: interleave_pairs (cuda 90)" in run.stderr
    assert run.stderr.count("linear-layouts report: wrote") == 1
    text = (out / "report.md").read_text()
    assert "2 kernels (2 compiles), 2 with layout conversions" in text


def test_the_mode_the_program_ran_in_is_said(tmp_path):
    run, out = run_report(tmp_path, "compile_transpose()\n", "--mode", "linear")
    assert run.returncode == 0, run.stderr
    assert "The program ran with: linear_layouts (plugin on) (1 compile)." in (out / "report.md").read_text()
    run, out = run_report(tmp_path, "compile_transpose()\n")
    assert "The program ran with: stock Triton (1 compile)." in (out / "report.md").read_text()


NO_MATPLOTLIB = textwrap.dedent("""
    import runpy, sys
    sys.modules["matplotlib"] = None          # as if not installed: import matplotlib raises ImportError
    sys.argv = ["linear_layouts"] + sys.argv[1:]
    runpy.run_module("linear_layouts", run_name="__main__")
""")


@pytest.mark.parametrize("pictures", ["0", "3"])
def test_html_report_without_matplotlib(tmp_path, pictures):
    (tmp_path / "no_matplotlib.py").write_text(NO_MATPLOTLIB)
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, str(tmp_path / "no_matplotlib.py"), "report", "--no-compare",
                          "--pictures", pictures, "-o", str(out), EXAMPLE], capture_output=True, text=True,
                         timeout=600, env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    index = (out / "index.html").read_text()
    assert "3 kernels (3 compiles), 3 with layout conversions" in index
    note = "No pictures: matplotlib is not installed (pip install matplotlib"
    assert (note in index) == (pictures != "0")
    assert not (out / "img").exists() or not os.listdir(out / "img")
    assert_links_resolve(str(out / "index.html"))


def test_module_help_prints_usage():
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stderr == ""
    assert "usage: python -m linear_layouts run PROGRAM.py|-m MODULE [ARGS...]" in run.stdout
    assert "unknown command" not in run.stdout


# ----------------------------------------------------------------------------- Markdown code spans and fences

BACKTICK_PROGRAM = textwrap.dedent("""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource


    @triton.jit
    def transpose_bt(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tile = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
        tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tile)  # `tile`, <b>not bold</b> ``x``


    triton.compile(ASTSource(transpose_bt, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 32}),
                   target=GPUTarget("cuda", 90, 32))
""")


def test_markdown_code_spans_hold_backticks(tmp_path):
    (tmp_path / "bt.py").write_text(BACKTICK_PROGRAM)
    out = tmp_path / "md"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md", "--no-compare",
                          "-o", str(out), str(tmp_path / "bt.py")], capture_output=True, text=True, timeout=600,
                         env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    line = next(x for x in (out / "report.md").read_text().splitlines() if x.startswith("- #1 "))
    # a fence longer than any run of backticks inside, padded where the line ends with one
    line = re.sub(r":12:\d+`", ":12:C`", line)       # the column differs by release
    assert line == (f"- #1 `{tmp_path / 'bt.py'}:12:C`: ``` tl.store(Y + offs[None, :] * BLOCK + offs[:, None], "
                    "tile)  # `tile`, <b>not bold</b> ``x`` ```")


def test_md_code_fences():
    from linear_layouts.tools.report.markdown import md_code
    assert md_code("a`b") == "``a`b``"
    assert md_code("`a``") == "``` `a`` ```"
    assert md_code("plain") == "`plain`"


# ----------------------------------------------------------------------------- loop weights

def test_loop_weights_read_trip_counts_from_the_ttgir():
    from linear_layouts.tools.report.loop_weights import ASSUMED_TRIPS, conversion_weights
    ttgir = textwrap.dedent("""
        tt.func public @k(%n: i32) {
          %c0_i32 = arith.constant 0 : i32
          %c1_i32 = arith.constant 1 : i32
          %c4_i32 = arith.constant 4 : i32
          %c10_i32 = arith.constant 10 : i32
          %a = ttg.convert_layout %x : tensor<16xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<16xf32, #b1>
          scf.for %i = %c0_i32 to %c10_i32 step %c4_i32  : i32 {
            %b = ttg.convert_layout %x : tensor<16xf32, #b0> -> tensor<16xf32, #b1> loc("f.py":3:4)
            scf.for %j = %c0_i32 to %n step %c1_i32  : i32 {
              scf.if %cond {
                %c = ttg.convert_layout %x : tensor<16xf32, #b0> -> tensor<16xf32, #b1>
              } else {
                %d = ttg.convert_layout %x : tensor<16xf32, #b0> -> tensor<16xf32, #b1>
              }
            } {tt.num_stages = 2 : i32}
          }
          %w:2 = scf.while (%arg = %c0_i32) : (i32) -> i32 {
            scf.condition(%t) %arg : i32
          } do {
          ^bb0(%arg2: i32):
            %e = ttg.convert_layout %x : tensor<16xf32, #b0> -> tensor<16xf32, #b1>
            scf.yield %arg2 : i32
          }
          %f = ttg.convert_layout %x : tensor<16xf32, #b0> -> tensor<16xf32, #b1>
          tt.return
        }
    """)
    weights = conversion_weights(ttgir)
    assert [(w.runs, w.text(), w.assumed) for w in weights] == [
        (1, "1", False),                                   # outside loops
        (3, "x3", False),                                  # 0 to 10 step 4: 3 iterations
        (3 * ASSUMED_TRIPS, f"x3 x{ASSUMED_TRIPS}?", True),  # inside a loop to %n as well
        (3 * ASSUMED_TRIPS, f"x3 x{ASSUMED_TRIPS}?", True),  # the else branch
        (ASSUMED_TRIPS, f"x{ASSUMED_TRIPS}?", True),       # scf.while's body
        (1, "1", False),                                   # after them
    ]
    assert ASSUMED_TRIPS == 16


LOOP_PROGRAM = textwrap.dedent("""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource


    @triton.jit
    def loop_sums(X, SUMS, n, N: tl.constexpr, ROWS: tl.constexpr, STEPS: tl.constexpr):
        rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
        cols = tl.arange(0, N)
        x = tl.load(X + rows[:, None] * N + cols[None, :])
        tl.store(SUMS + rows, tl.sum(x, axis=1))
        for i in range(STEPS):
            x = tl.load(X + i * N + rows[:, None] * N + cols[None, :])
            tl.store(SUMS + i * ROWS + rows, tl.sum(x, axis=1))
        for j in range(n):
            x = tl.load(X + j * N + rows[:, None] * N + cols[None, :])
            tl.store(SUMS + j * ROWS + rows, tl.sum(x, axis=1))


    triton.compile(ASTSource(loop_sums, {"X": "*fp32", "SUMS": "*fp32", "n": "i32"},
                             constexprs={"N": 128, "ROWS": 16, "STEPS": 8}), target=GPUTarget("cuda", 90, 32))
""")


def test_report_weights_conversions_by_their_loops(tmp_path):
    (tmp_path / "loops.py").write_text(LOOP_PROGRAM)
    out = tmp_path / "md"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md", "--no-compare",
                          "-o", str(out), str(tmp_path / "loops.py")], capture_output=True, text=True, timeout=600,
                         env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    text = (out / "report.md").read_text()
    rows = [re.split(r"\s{2,}", line.strip()) for line in text.splitlines() if re.match(r"#\d  loops\.py", line)]
    # the same conversion three times: once, in range(8), in range(n) (16 assumed)
    assert [(r[0], r[1], r[-4], r[-3], r[-2]) for r in rows] == [
        ("#1", "loops.py:13", "9.7", "1", "9.7"),
        ("#2", "loops.py:16", "9.7", "x8", "77.6"),
        ("#3", "loops.py:19", "9.7", "x16?", "155.2")]
    assert ("Costliest conversions (weighted cost = cost per warp x runs):\n\n"
            "1. loop_sums #3 `loops.py:19`: 155.2 = 9.7 x 16 (assumed trip count)\n"
            "2. loop_sums #2 `loops.py:16`: 77.6 = 9.7 x 8\n"
            "3. loop_sums #1 `loops.py:13`: 9.7 = 9.7 x 1\n") in text
    assert "; 1 conversion with an assumed trip count." in text
    kernel_row = next(line for line in text.splitlines() if line.startswith("loop_sums "))
    assert re.split(r"\s{2,}", kernel_row)[7:9] == ["29.1", "242.5?"]


def test_environment_mode_writes_a_fresh_report_per_run(tmp_path):
    (tmp_path / "prog.py").write_text("import linear_layouts\n" + PROGRAM_HEAD + "compile_transpose()\n")
    out = tmp_path / "report"
    env = child_environment(tmp_path, LINEAR_LAYOUTS="report", LINEAR_LAYOUTS_REPORT_DIR=str(out),
                            LINEAR_LAYOUTS_REPORT_COMPARE="0", LINEAR_LAYOUTS_REPORT_FORMAT="md")
    for _ in range(2):
        run = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True,
                             timeout=600, env=env)
        assert run.returncode == 0, run.stderr
        assert "1 kernel (1 compile), 1 with layout conversions" in (out / "report.md").read_text()
    assert len(os.listdir(out / "records")) == 1


# ----------------------------------------------------------------------------- why a conversion exists

def test_each_conversion_says_why_it_exists(tmp_path):
    records = record_bundled(tmp_path, ["transpose", "rotary", "attention"])
    kernels = build_kernels(records, ReportOptions(str(tmp_path), compare=False, progress=False))
    def line(text):   # the column differs by release
        return re.sub(r"(kernels\.py:\d+):\d+", r"\1", text)

    whys = {(k.name, c.number): (c.why.reason.split(":")[0], line(c.why.producer), tuple(map(line, c.why.consumers)),
                                 c.weight.text())
            for k in kernels for c in k.conversions}
    assert whys == {
        ("transpose", 1): ("a memory access", "tt.trans at kernels.py:127", ("tt.store at kernels.py:127",), "1"),
        ("rotary_embedding", 1): ("a shape operation (broadcast, expand_dims, reshape, ...) wants its operand in "
                                  "another layout", "tt.reshape at kernels.py:72", ("tt.split at kernels.py:72",), "1"),
        ("rotary_embedding", 2): ("a memory access", "tt.reshape at kernels.py:76", ("tt.store at kernels.py:76",), "1"),
        # p.to(v.dtype) feeds the second dot, inside the loop over the keys (4 blocks of a constexpr length)
        ("attention_forward", 1): ("a dot operand", "arith.truncf at kernels.py:116",
                                   ("ttng.warp_group_dot at kernels.py:116",), "x4"),
        ("attention_forward", 2): ("a memory access", "arith.truncf at kernels.py:118", ("tt.store at kernels.py:118",),
                                   "1"),
    }
    assert re.search(r"\n  - why: a dot operand: the matrix multiply wants its operands in the #dot_op layout; "
                     r"from `arith\.truncf at kernels\.py:116:\d+`, used by `ttng\.warp_group_dot at "
                     r"kernels\.py:116:\d+`\n", markdown(kernels))


# ----------------------------------------------------------------------------- stock vs ours per conversion

def test_stock_and_ours_final_code_per_conversion(tmp_path, monkeypatch):
    from linear_layouts.tools.report.text import stock_vs_ours_rows, verdict_counts
    monkeypatch.setenv("LINEAR_LAYOUTS_IN_PLACE", "1")     # triton 3.6's default, on every release here
    records = record_bundled(tmp_path, ["transpose", "rotary", "matmul"])
    kernels = build_kernels(records, ReportOptions(str(tmp_path), compare=True, progress=False))
    assert all(k.compare_problem == "" for k in kernels)
    rows = {k.name: [row[2:] for row in stock_vs_ours_rows(k)] for k in kernels}
    assert rows == {
        # the same shared-memory round trip as stock
        "transpose": [["st.shared=32 bar.sync=1 ld.shared=32", "st.shared=32 bar.sync=1 ld.shared=32", "98.2",
                       "98.2", "same"]],
        # stock: 8 shuffles and 16 selects per conversion; ours a warp-local shared round trip built in
        # Triton's module (passes.drop_in.in_place), whose barriers Triton places: CTA-wide, two per conversion
        # (as a text island: bar.warp.sync=1 and a guard bar.sync=1, priced 21.4)
        "rotary_embedding": [["selp=16 shfl=8", "st.shared=2 bar.sync=2 ld.shared=2", "20.4", "23.3",
                              "ours worse"]] * 2,
        # stock reads the dot operand with 16 ld.shared, ours with 4 ldmatrix.x4 (built in place; Triton's
        # lowering of it keeps stock's one select)
        "matmul": [["bar.sync=2 st.shared=16 selp=1 ld.shared=16", "bar.sync=2 st.shared=8 selp=1 ldmatrix=4", "53.0",
                    "44.5", "ours better"]],
    }
    assert verdict_counts(kernels) == {"same": 1, "ours worse": 2, "ours better": 1}
    assert ("Per conversion, final code priced by the cost model: ours better in 1, the same in 1, worse in 2; "
            "left to Triton 0.") in summary_lines(kernels)


def test_final_code_marks_each_conversion_and_prices_the_mix():
    from linear_layouts.lowering import target_named
    from linear_layouts.tools.report.final_code import MARK_LINE, CodeMix, mark_conversions, mix_by_line, modelled_cost
    ttgir = ('    %a = ttg.convert_layout %x : tensor<16xf32, #b0> -> tensor<16xf32, #b1> loc(#loc3)\n'
             '    %b:2 = ttg.convert_layout %y : tensor<16xf32, #b0> -> tensor<16xf32, #b1> loc(callsite(#loc1 at #loc2))\n'
             '    %c = ttg.convert_layout %z : tensor<16xf32, #b0> -> tensor<16xf32, #b1>\n'
             '    %d = arith.addf %a, %c : tensor<16xf32, #b1> loc(#loc4)\n')
    marked, count = mark_conversions(ttgir)
    assert count == 3
    assert marked.splitlines()[0].endswith(f'-> tensor<16xf32, #b1> loc("ll-conversion":{MARK_LINE + 1}:0)')
    assert marked.splitlines()[1].endswith(f'loc("ll-conversion":{MARK_LINE + 2}:0)')
    assert marked.splitlines()[2].endswith(f'loc("ll-conversion":{MARK_LINE + 3}:0)')
    assert marked.splitlines()[3].endswith("loc(#loc4)")
    ptx = ("\tshfl.sync.idx.b32 %r1, %r2, 1, 31, -1;\n"
           f"\t.loc\t1 {MARK_LINE + 1} 0\n"
           "\tst.shared.v4.b32 [%r1], {%r2, %r3, %r4, %r5};\n"
           "\tbar.sync \t0;\n"
           "\tld.shared.b16 %rs1, [%r2];\n"
           "\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];\n"
           "\t.loc\t1 12 3\n"
           "\tselp.b32 %r1, %r2, %r3, %p1;\n")
    lines = mix_by_line(ptx, "nvidia")
    assert {line: mix.text() for line, mix in lines.items()} == {
        0: "shfl=1", MARK_LINE + 1: "st.shared=1 bar.sync=1 ld.shared=1 ldmatrix=1", 12: "selp=1"}
    mix = lines[MARK_LINE + 1]
    assert mix.shared_bits == {128: 1, 16: 1} and mix.matrices == {4: 1}
    # sm_90's constants (lowering/calibrated_weights.json): every term of the price, by hand
    from linear_layouts.lowering.cost_weights import weights_for
    w = weights_for("sm_90")
    expected = (w.shared_access + 4 * w.shared_wavefront) + (w.shared_access + 1 * w.shared_wavefront) \
        + (w.shared_access + 4 * w.shared_wavefront) + w.cta_barrier
    assert modelled_cost(mix, target_named("sm_90")) == round(expected, 1)
    assert modelled_cost(CodeMix(), target_named("sm_90")) == 0.0
    amd = mix_by_line("\t.loc 1 7 0\n\tds_write2_b32 v1, v2, v3\n\tds_read_b128 v[1:4], v5\n\ts_barrier\n", "amd")
    assert amd[7].text() == "ds_write=1 ds_read=1 s_barrier=1" and amd[7].shared_bits == {64: 1, 128: 1}


HINT_PROGRAM = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def matmul_relu(A, B, C, stride_cm, stride_cn, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm = tl.arange(0, M)
        rn = tl.arange(0, N)
        rk = tl.arange(0, K)
        a = tl.load(A + rm[:, None] * K + rk[None, :])
        b = tl.load(B + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b)
        tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, tl.maximum(acc, 0.0))
""")


def test_a_store_with_unknown_contiguity_gets_a_hint(tmp_path):
    import runpy
    (tmp_path / "epilogue.py").write_text(HINT_PROGRAM)
    kernel = runpy.run_path(str(tmp_path / "epilogue.py"))["matmul_relu"]
    recorder.start(str(tmp_path / "report"), progress=False)
    try:
        # as a launch specializes them: pointers and strides 16-aligned; stride_cn a runtime value, then 1
        for extra, constexprs in (({"stride_cn": "i32"}, {}), ({}, {"stride_cn": 1})):
            signature = {"A": "*fp16", "B": "*fp16", "C": "*fp32", "stride_cm": "i32", **extra}
            triton.compile(ASTSource(kernel, signature, constexprs={"M": 64, "N": 64, "K": 32, **constexprs},
                                     attrs={(i,): [["tt.divisibility", 16]] for i in range(4)}),
                           target=GPUTarget("cuda", 90, 32))
        # no attrs at all (as triton.compile of an ASTSource is without them): C's alignment is not known
        triton.compile(ASTSource(kernel, {"A": "*fp16", "B": "*fp16", "C": "*fp32", "stride_cm": "i32",
                                          "stride_cn": "i32"}, constexprs={"M": 64, "N": 64, "K": 32}),
                       target=GPUTarget("cuda", 90, 32))
    finally:
        recorder.stop()
    kernels = build_kernels(recorder.read_records(str(tmp_path / "report")),
                            ReportOptions(str(tmp_path), compare=False, progress=False))
    runtime, constant, unaligned = (k.conversions[0].why for k in kernels)
    assert unaligned.hint.endswith(
        "; the pointer argument C is not known to be 16-byte aligned (no tt.divisibility: a launch specializes that, "
        "triton.compile of an ASTSource without attrs does not); the pointer is computed from the integer "
        "arguments stride_cm, stride_cn.")
    assert runtime.kind == constant.kind == "store"
    assert runtime.hint == (
        "tt.store accesses one 32-bit element per thread at a time: its layout has no run of consecutive elements "
        "along any dimension (dim0: 1, dim1: 1), the layout ttg.coalesce picks when it cannot prove the pointer "
        "contiguous. If the offsets are contiguous at run time, say so: tl.max_contiguous(tl.multiple_of(offs, N), N) "
        "on the offsets, or pass the stride as a tl.constexpr (Triton also specializes an integer argument equal to "
        "1); the pointer is computed from the integer arguments stride_cm, stride_cn.")
    assert constant.hint == ""          # 4 consecutive f32 per thread along dim1: 128-bit stores
    line = "tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, tl.maximum(acc, 0.0))"
    assert [(re.sub(r":\d+$", "", where), code) for where, code in runtime.sources] == [
        ("arith.maxnumf at epilogue.py:14", line), ("tt.store at epilogue.py:14", line)]


# ----------------------------------------------------------------------------- index: chart and source

def record_example(directory):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import report_example as example
    finally:
        sys.path.pop(0)
    recorder.start(str(directory), progress=False)
    try:
        target = example.TARGETS["sm_90"]
        triton.compile(ASTSource(example.transpose, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 32}),
                       target=target)
        triton.compile(ASTSource(example.normalize_rows, {"X": "*fp32", "Y": "*fp32", "SUMS": "*fp32"},
                                 constexprs={"N": 128, "ROWS": 16}), target=target)
        triton.compile(ASTSource(example.interleave_pairs, {"X": "*fp16", "Y": "*fp16"}, constexprs={"D": 256}),
                       target=target)
    finally:
        recorder.stop()
    return recorder.read_records(str(directory))


def test_index_chart_and_source_listing(tmp_path):
    from linear_layouts.tools.report.html_pages import index_page
    from linear_layouts.tools.report.text import kernel_chart_rows, source_listing
    kernels = build_kernels(record_example(tmp_path), ReportOptions(str(tmp_path), compare=True, progress=False))
    # the whole kernel's data movement, priced: normalize_rows' reduction shuffles are in both (Triton 3.6
    # lowers the reduction with fewer instructions than 3.9; the conversion's share, 15.1, is the same)
    normalize = {"3.6": (172.2, 157.1), "3.9": (231.7, 216.5)}.get(".".join(triton.__version__.split(".")[:2]))
    chart = kernel_chart_rows(kernels)
    assert [chart[0], chart[2]] == [("transpose on sm_90", 26.2, 26.2), ("interleave_pairs on sm_90", 6.8, 6.8)]
    assert chart[1][0] == "normalize_rows on sm_90" and round(chart[1][1] - chart[1][2], 0) == 15
    if normalize is not None:
        assert chart[1][1:] == normalize
    [(path, rows)] = source_listing(kernels, whole_file_lines=0)
    assert path == EXAMPLE
    marked = [(n, [(k.name, c.number) for k, c in marks], round(share, 3)) for n, _, marks, share in rows if marks]
    assert marked == [(26, [("transpose", 1)], 1.0), (35, [("normalize_rows", 1)], 0.37),
                      (44, [("interleave_pairs", 1)], 0.257)]     # the weighted costs over the largest
    assert [n for n, *_ in rows] == [23, 24, 25, 26, 27, 28, 29, 0, 32, 33, 34, 35, 36, 37, 38, 0, 41, 42, 43, 44,
                                     45, 46, 47]
    page = index_page(kernels, ReportOptions(str(tmp_path)))
    assert page.count("<rect ") == 2 + 2 * 3                       # the legend's two, two bars per kernel
    assert ('<span class="line" style="background: rgba(230, 80, 30, 0.72)">   26      tl.store(Y + offs[None, :] '
            '* BLOCK + offs[:, None], tile)   &larr; <a href="kernels/transpose-sm_90.html#c1">transpose #1 (26.2)</a>'
            '</span>') in page


# ----------------------------------------------------------------------------- pictures

EPILOGUE_PROGRAM = HINT_PROGRAM + textwrap.dedent("""

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    triton.compile(ASTSource(matmul_relu, {"A": "*fp16", "B": "*fp16", "C": "*fp32", "stride_cm": "i32",
                                           "stride_cn": "i32"}, constexprs={"M": 128, "N": 128, "K": 32},
                             attrs={(i,): [["tt.divisibility", 16]] for i in range(5)}),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
""")


def test_pictures_are_tiles_of_large_tensors_rows_for_1d_and_small(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "epilogue.py").write_text(EPILOGUE_PROGRAM)
    (tmp_path / "both.py").write_text(PROGRAM_HEAD + "compile_interleave()\n"
                                      + f"import runpy\nrunpy.run_path({str(tmp_path / 'epilogue.py')!r})\n")
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--no-compare", "-o", str(out),
                          str(tmp_path / "both.py")], capture_output=True, text=True, timeout=600,
                         env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    images = sorted(os.listdir(out / "img"))
    assert images == ["interleave_pairs-sm_90-c1-layouts.svg", "interleave_pairs-sm_90-c1-plan.svg",
                      "matmul_relu-sm_90-c1-layouts.svg", "matmul_relu-sm_90-c1-plan.svg"]
    for name in images:
        assert os.path.getsize(out / "img" / name) < 300_000, name        # was 2 MB for a 64 x 64 grid
    epilogue = (out / "img" / "matmul_relu-sm_90-c1-layouts.svg").read_text()
    # the 128 x 128 epilogue: a tile, said so; the whole attribute in the title (wrapped, not cut)
    assert "showing rows 0-15 and columns 0-15 of 128 x 128; black border: elements that change thread" in epilogue
    assert "source #ttg.nvidia_mma&lt;{versionMajor = 3" in epilogue and "16]}&gt;" in epilogue
    page = (out / "kernels" / "matmul_relu-sm_90.html").read_text()
    assert "element grids: the top-left 16 x 16 tile of 16384 elements" in page
    # 256 f16 in one dimension: 8 rows of 32
    vector = (out / "img" / "interleave_pairs-sm_90-c1-layouts.svg").read_text()
    assert "dim0 mod 32" in vector and "dim0 // 32" in vector


def test_pictures_only_for_the_costliest_conversions_that_move_data():
    from linear_layouts.lowering.plan import Scope
    from linear_layouts.tools.report.conversion_report import ConversionRow
    from linear_layouts.tools.report.loop_weights import LoopWeight
    from linear_layouts.tools.report.model import ConversionEntry, KernelEntry
    from linear_layouts.tools.report.html_pages import picture_choice

    def entry(number, scope, cost, runs=1):
        row = ConversionRow("k", "f.py:1", "t", scope, "shared", "-", 0, 0, "yes")
        return ConversionEntry(number, row, "f.py:1:1", "", "ours: shared", True, "", cost, src_layout=object(),
                               dst_layout=object(), weight=LoopWeight(runs))
    kernel = KernelEntry("k", "sm_90", "cuda", "", 4, 1, "", "k",
                         conversions=[entry(1, Scope.NONE, 0.0), entry(2, Scope.WARP, 10.0),
                                      entry(3, Scope.LANE, 4.0, runs=8), entry(4, Scope.WARP, 20.0)])
    assert picture_choice(kernel, 2) == {
        1: "no pictures: a no-op (no element changes register, thread or warp)",
        2: "no pictures: only the 2 costliest conversions of a kernel get pictures (--pictures N)",
        3: "", 4: ""}                                           # 32 (4 x 8 in a loop) and 20


def test_bank_colours_are_32_distinct():
    pytest.importorskip("matplotlib")
    from linear_layouts.tools.viewers.layout_view import bank_colours
    assert len(set(bank_colours(32))) == 32
    assert len(set(bank_colours(40))) == 40


def test_copies_mark_is_explained(tmp_path):
    pytest.importorskip("matplotlib")
    from linear_layouts.tools.viewers.viz import draw, layout_from_attribute
    blocked = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>"
    sliced = layout_from_attribute(f"#ttg.slice<{{dim = 1, parent = {blocked}}}>", [16])
    path = str(tmp_path / "slice.svg")
    draw(path, [("slice", sliced)], 32)
    text = open(path).read()
    assert "×N: the element is held by N threads (copies: a broadcast layout)" in text and "×8" in text


# ----------------------------------------------------------------------------- report --measure

class FakeTensor:
    """What the launch recorder needs of a torch tensor: clone, data_ptr, dtype, shape."""

    def __init__(self, values, dtype="float32"):
        self.values, self.dtype, self.shape = list(values), dtype, (len(values),)

    def clone(self):
        return FakeTensor(self.values, self.dtype)

    def data_ptr(self):
        return id(self)


class FakeJIT:
    """A JITFunction's launch interface: ``run(*args, grid, warmup, **kwargs)``; it doubles its
    first argument in place (a kernel that writes its input) and logs what it was given."""

    log = []

    def __init__(self, name):
        self.__name__ = name

    def run(self, *args, grid, warmup, **kwargs):
        FakeJIT.log.append((self.__name__, [list(a.values) if isinstance(a, FakeTensor) else a for a in args],
                            grid, warmup, dict(kwargs)))
        args[0].values = [2 * v for v in args[0].values]

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


def test_launches_are_recorded_once_with_cloned_inputs_and_replayed_on_fresh_clones():
    from linear_layouts.tools.report.launch_timing import LaunchRecorder
    FakeJIT.log = []
    original_run = FakeJIT.run
    recorder = LaunchRecorder()
    recorder.install(FakeJIT)
    try:
        scale, other = FakeJIT("scale"), FakeJIT("other")
        x = FakeTensor([1, 2])
        scale[(4,)](x, 3, BLOCK=16)           # kept: x as it was at the launch, [1, 2]
        scale[(4,)](x, 3, BLOCK=16)           # the same signature: not kept again
        scale.run(x, 3, grid=(4,), warmup=True, BLOCK=16)   # a warmup compiles, launches nothing: not kept
        scale[(4,)](FakeTensor([5, 6, 7]), 3, BLOCK=16)     # another shape: kept
        other[(1, 2)](FakeTensor([9], "float16"), BLOCK=32)
        assert x.values == [8, 16]            # the program's own launches ran (three doublings)
        kept = recorder.launches
        assert [(k.name, k.signature, k.grid) for k in kept] == [
            ("scale", "float32[2], int, BLOCK=16", (4,)), ("scale", "float32[3], int, BLOCK=16", (4,)),
            ("other", "float16[1], BLOCK=32", (1, 2))]
        assert kept[0].args[0].values == [1, 2]          # cloned at the launch: later changes do not reach it
        FakeJIT.log = []
        once = recorder.replay(kept[0])
        once()
        once()
        # replayed on a clone made for the replay: the kept inputs stay [1, 2]; the replays are not recorded
        assert kept[0].args[0].values == [1, 2] and len(recorder.launches) == 3
        assert FakeJIT.log == [("scale", [[1, 2], 3], (4,), False, {"BLOCK": 16}),
                               ("scale", [[2, 4], 3], (4,), False, {"BLOCK": 16})]
    finally:
        recorder.uninstall()
    assert FakeJIT.run is original_run


def test_time_launches_gives_stock_ours_and_the_ratio():
    import contextlib

    from linear_layouts.tools.report.launch_timing import LaunchRecorder, MeasureResult, time_launches
    from linear_layouts.tools.report.text import measure_lines, measure_rows
    recorder = LaunchRecorder()
    recorder.install(FakeJIT)
    try:
        FakeJIT("fast")[(1,)](FakeTensor([1]))
        FakeJIT("slow")[(1,)](FakeTensor([1, 2]))
        FakeJIT("broken")[(1,)](FakeTensor([]))   # replayed below with no grid: timing it raises
        FakeJIT("same")[(1,)](FakeTensor([3]))
    finally:
        recorder.uninstall()
    recorder.launches[2].grid = None
    mode = []
    times = {("fast", "stock"): [2.0, 2.01, 1.99], ("fast", "ours"): [1.0, 1.0, 1.01],
             ("slow", "stock"): [1.0, 1.02, 1.01], ("slow", "ours"): [1.25, 1.26, 1.24],
             ("same", "stock"): [1.0, 0.99, 1.0], ("same", "ours"): [0.99, 0.99, 1.0]}

    def switch(name):
        @contextlib.contextmanager
        def context():
            mode.append(name)
            yield
        return context

    def bench(once):
        once()
        name = FakeJIT.log[-1][0]
        if FakeJIT.log[-1][2] is None:
            raise RuntimeError("grid must be a tuple\nmore")
        return times[(name, mode[-1])].pop(0)
    measured = time_launches(recorder, bench=bench, stock=switch("stock"), ours=switch("ours"))
    assert mode[:6] == ["stock", "ours"] * 3                      # alternating, three rounds
    assert [(m.name, m.stock_ms, m.ours_ms, m.ratio, m.problem) for m in measured] == [
        ("fast", 2.0, 1.0, 2.0, ""), ("slow", 1.01, 1.25, 1.01 / 1.25, ""),
        ("broken", None, None, None, "stock: grid must be a tuple"), ("same", 1.0, 0.99, 1.0 / 0.99, "")]
    assert [m.noise for m in measured] == [2.01 / 1.99 - 1, 0.020000000000000018, None, 1 / 0.99 - 1]
    # the run's noise: "slow"'s stock timings spread by 2%; "same" at 1.01 is within it
    options = ReportOptions(measure=True, measured=MeasureResult(measured))
    assert measure_rows(options) == [
        ["fast", "float32[1]", "2.0000", "1.0000", "1.0%", "2.000", "faster"],
        ["slow", "float32[2]", "1.0100", "1.2500", "2.0%", "0.808", "slower"],
        ["broken", "float32[0]", "-", "-", "-", "- (stock: grid must be a tuple)", ""],
        ["same", "float32[1]", "1.0000", "0.9900", "1.0%", "1.010", "within noise"]]
    assert measure_lines(options) == [
        "--measure: 4 launches of the program timed with its own arguments (inputs cloned), stock Triton and ours "
        "alternating, 3 rounds each (triton.testing.do_bench; medians); the run's noise (one launch's stock timings "
        "spread by up to 2.0%, counted as at least 1%): ours faster beyond it in 1 of 3, slower beyond it in 1, "
        "within it in 1; geometric mean stock / ours 1.177."]


def test_measure_without_a_gpu_says_so(tmp_path):
    run, out = run_report(tmp_path, "compile_transpose()\n", "--measure")
    assert run.returncode == 0, run.stderr
    text = (out / "report.md").read_text()
    from linear_layouts.tools.report.launch_timing import gpu_problem
    assert gpu_problem()                                       # this test runs where there is no GPU
    assert f"--measure: nothing timed: {gpu_problem()}." in text


@pytest.mark.gpu
def test_measure_times_each_kernel_of_a_gpu_program_stock_and_ours(tmp_path):
    """On a GPU: the six kernels of examples/measure_example.py, each timed stock and ours."""
    out = tmp_path / "report"
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--measure", "--pictures", "1",
                          "-o", str(out), os.path.join(ROOT, "examples", "measure_example.py")],
                         capture_output=True, text=True, timeout=1200, env=child_environment(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "6 kernels launched and checked" in run.stdout
    index = (out / "index.html").read_text()
    # kernel, arguments, stock ms, ours ms, stock spread, stock / ours (or "same binary"), verdict
    rows = re.findall(r"<tr><td>(\w+)</td><td>[^<]*</td><td>([\d.]+)</td><td>([\d.]+)</td><td>[^<]*</td>"
                      r"<td>([\d.]+|same binary)</td><td>[^<]*</td></tr>", index)
    assert sorted(name for name, *_ in rows) == sorted(["softmax_kernel", "layer_norm_fwd_kernel", "matmul_kernel",
                                                        "attention_fwd_kernel", "transpose_kernel",
                                                        "column_sum_kernel"])
    for name, stock, ours, ratio in rows:
        assert float(stock) > 0 and float(ours) > 0
        if ratio == "same binary":       # stock and ours compiled the launch to the same code
            continue
        # the table rounds the times to 4 decimals, the ratio is of the unrounded times
        assert abs(float(ratio) - float(stock) / float(ours)) < 0.03 * float(ratio), name
    assert "--measure: 6 launches of the program timed" in index
    assert_links_resolve(str(out / "index.html"))


def test_why_names_each_kind_of_reason(tmp_path):
    """explain() on small stand-ins for parsed ops: each reason the issue lists."""
    from types import SimpleNamespace

    from linear_layouts.tools.report.conversion_why import explain, text_locations
    source = tmp_path / "k.py"
    source.write_text("x = tl.sum(a, axis=1)\ny = tl.convert_layout(x, layout)\nz = x[:, None]\n")

    def op(name, location="unknown", operands=(), results=1):
        made = SimpleNamespace(name=name, location=location, operands=list(operands), results=[])
        made.results = [SimpleNamespace(defining_op=made) for _ in range(results)]
        return made

    def why(producer, consumers, location=f"{source}:1:1"):
        convert = op("ttg.convert_layout", location, [producer.results[0]])
        users = {id(convert.results[0]): consumers}
        return explain(convert, users)
    reduce_ = op("tt.reduce", f"{source}:1:5")
    assert why(reduce_, [op("arith.addf", f"{source}:1:1")]).kind == "reduction"
    assert why(op("arith.addf"), [op("tt.expand_dims", f"{source}:3:5")]).kind == "broadcast"
    assert why(op("arith.addf"), [op("tt.reshape")]).kind == "shape"
    assert why(reduce_, [op("arith.addf")], location=f"{source}:2:5").kind == "explicit"
    assert why(op("arith.truncf"), [op("tt.dot")]).kind == "dot operand"
    assert why(op("tt.load"), [op("tt.store", results=0)]).kind == "store"
    assert why(op("arith.addf"), [op("tt.load")]).kind == "load"
    found = why(reduce_, [op("tt.expand_dims", f"{source}:3:5")])
    assert found.kind == "reduction"                    # a reduction's result first, whatever uses it
    assert found.sources == (("tt.reduce at k.py:1:5", "x = tl.sum(a, axis=1)"),
                             ("tt.expand_dims at k.py:3:5", "z = x[:, None]"))
    # the k-th op without results gets the k-th such line's location; a call site is the caller's line
    ttgir = textwrap.dedent("""
        tt.store %a, %b : tensor<4x!tt.ptr<f32>> loc(#loc3)
        tt.store %a, %c : tensor<4x!tt.ptr<f32>> loc("f.py":9:2)
        %x = tt.load %a : tensor<4x!tt.ptr<f32>> loc(#loc3)
        #loc1 = loc("f.py":4:7)
        #loc2 = loc("std.py":100:1)
        #loc3 = loc(callsite(#loc2 at #loc1))
    """)
    assert text_locations(ttgir) == {("tt.store", 0): "f.py:4:7", ("tt.store", 1): "f.py:9:2"}


def test_index_charts_the_measured_launches():
    from linear_layouts.tools.report.launch_timing import MeasureResult, Measurement
    from linear_layouts.tools.report.html_pages import index_page
    measured = MeasureResult([Measurement("softmax_kernel", "float32[4, 8]", [0.02], [0.01]),
                              Measurement("matmul_kernel", "float16[8, 8]", [0.5], [0.4]),
                              Measurement("broken", "", problem="ours: out of resources")])
    page = index_page([], ReportOptions(measure=True, measured=measured))
    chart = page[page.index("<h2>Measured"):page.index("<table>", page.index("<h2>Measured"))]
    assert chart.count("<rect ") == 2 + 2 * 2                     # the legend's two, two bars per timed launch
    assert ">0.02</text>" in chart and ">0.01</text>" in chart and ">0.5</text>" in chart and ">0.4</text>" in chart
    assert "<td>broken</td><td></td><td>-</td><td>-</td><td>-</td><td>- (ours: out of resources)</td><td></td>" in page


def test_target_names_come_from_the_target_table():
    from linear_layouts.tools.report.model import target_name
    assert target_name({"backend": "cuda", "arch": 90}) == "sm_90"
    assert target_name({"backend": "cuda", "arch": 120}) == "sm_120"
    assert target_name({"backend": "hip", "arch": "gfx942"}) == "gfx942"
    assert target_name({"backend": "cuda", "arch": 75}) == "cuda:75"          # not a target of ours: as recorded
