"""ll-viz: text grids checked exactly, pictures written, errors reported without tracebacks."""

import os
import subprocess
import sys

import pytest

from linear_layouts.tools.viewers import layout_view, viz
from support import REPO  # noqa: E402

ROOT = str(REPO)
BLOCKED_4x8 = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"
ROW_SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
COLUMN_READER = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [0, 1]}>"


def run(args, capsys):
    code = viz.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_distributed_grid_is_exact(capsys):
    code, out, _ = run([BLOCKED_4x8, "--shape", "4,4"], capsys)
    assert code == 0
    # A 4x4 tensor in a layout whose tile is 4x16: lanes 2..7 of each row wrap onto the same
    # columns, so every element has 4 copies (lane bits 2 and 4 are redundant).
    lines = out.splitlines()
    assert lines[0] == BLOCKED_4x8
    assert lines[1] == "broadcast: each element is held 4 times (redundant input bits: lane 2, 4)"
    assert lines[2].split() == ["0", "1", "2", "3"]
    assert [line.split() for line in lines[3:]] == [
        ["0:", "w0:t0:r0/w0:t2:r0/w0:t4:r0/w0:t6:r0", "w0:t0:r1/w0:t2:r1/w0:t4:r1/w0:t6:r1",
         "w0:t1:r0/w0:t3:r0/w0:t5:r0/w0:t7:r0", "w0:t1:r1/w0:t3:r1/w0:t5:r1/w0:t7:r1"],
        ["1:", "w0:t8:r0/w0:t10:r0/w0:t12:r0/w0:t14:r0", "w0:t8:r1/w0:t10:r1/w0:t12:r1/w0:t14:r1",
         "w0:t9:r0/w0:t11:r0/w0:t13:r0/w0:t15:r0", "w0:t9:r1/w0:t11:r1/w0:t13:r1/w0:t15:r1"],
        ["2:", "w0:t16:r0/w0:t18:r0/w0:t20:r0/w0:t22:r0", "w0:t16:r1/w0:t18:r1/w0:t20:r1/w0:t22:r1",
         "w0:t17:r0/w0:t19:r0/w0:t21:r0/w0:t23:r0", "w0:t17:r1/w0:t19:r1/w0:t21:r1/w0:t23:r1"],
        ["3:", "w0:t24:r0/w0:t26:r0/w0:t28:r0/w0:t30:r0", "w0:t24:r1/w0:t26:r1/w0:t28:r1/w0:t30:r1",
         "w0:t25:r0/w0:t27:r0/w0:t29:r0/w0:t31:r0", "w0:t25:r1/w0:t27:r1/w0:t29:r1/w0:t31:r1"],
    ]
    # Columns are right-aligned under the header.
    assert len({len(line) for line in lines[2:]}) == 1


def test_max_copies_abbreviates_broadcast(capsys):
    code, out, _ = run([BLOCKED_4x8, "--shape", "4,4", "--max-copies", "1"], capsys)
    assert code == 0
    assert "   0:  w0:t0:r0+3  w0:t0:r1+3  w0:t1:r0+3  w0:t1:r1+3" in out.splitlines()
    assert "   2: w0:t16:r0+3 w0:t16:r1+3 w0:t17:r0+3 w0:t17:r1+3" in out.splitlines()


def test_shared_grid_shows_offset_and_bank(capsys):
    swizzled = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 2, order = [1, 0]}>"
    code, out, _ = run([swizzled, "--shape", "2,4", "--bits", "32"], capsys)
    assert code == 0
    # Row 1 is XOR-swizzled by vec=2 columns: element (1, 0) lives at offset 6.
    assert out.splitlines()[1:] == [
        "          0     1     2     3",
        "   0: o0 b0 o1 b1 o2 b2 o3 b3",
        "   1: o6 b6 o7 b7 o4 b4 o5 b5",
    ]


def test_bank_conflicts_of_column_reads_are_counted_and_marked(capsys):
    code, out, _ = run([ROW_SHARED, "--shape", "32,32", "--access", COLUMN_READER], capsys)
    assert code == 0
    # Lane l holds row l (32 consecutive f32): the code reads it with 128-bit vectors, 8 of them.
    # Each vector read is served in 4 phases of 8 lanes; lane l touches words 32 l + 4 k .. + 3,
    # banks 4 k .. 4 k + 3 for every lane: 8 words per bank, 7 extra wavefronts per phase,
    # 28 per access, 224 in all.  (Counted as 32 scalar reads before: 992.)
    assert ("8 128-bit vector accesses (4 elements each), 224 extra wavefronts from bank conflicts; "
            "1024 elements involved (marked *)") in out
    assert "   0:     *o0 b0" in out


def test_swizzle_removes_the_conflicts(capsys):
    swizzled = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 32, order = [1, 0]}>"
    code, out, _ = run([swizzled, "--shape", "32,32", "--access", COLUMN_READER], capsys)
    assert code == 0
    assert "32 scalar accesses, 0 extra wavefronts from bank conflicts; 0 elements involved" in out


def test_compare_marks_elements_that_change_thread(capsys):
    a = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
    b = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [0, 1]}>"
    code, out, _ = run(["--compare", a, b, "--shape", "8,8"], capsys)
    assert code == 0
    assert "56 of 64 elements change thread (marked *); cells show A -> B" in out
    # The diagonal stays with its thread, the rest moves.
    row0 = out.splitlines()[4]
    assert row0.split()[1:4] == ["w0:t0:r0/w0:t2:r0", "->", "w0:t0:r0/w0:t2:r0"]
    assert "*w0:t0:r1/w0:t2:r1" in row0


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_pictures_are_written(tmp_path, capsys, suffix):
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
    for args in ([mma, "--shape", "32,16"],
                 [ROW_SHARED, "--shape", "16,16", "--access", COLUMN_READER.replace("[32, 1]", "[16, 2]")],
                 ["--compare", BLOCKED_4x8, COLUMN_READER, "--shape", "8,8"]):
        path = tmp_path / f"picture.{suffix}"
        code, out, _ = run(args + ["-o", str(path)], capsys)
        assert code == 0 and f"wrote {path}" in out
        assert path.stat().st_size > 5000
        path.unlink()


def test_value_from_a_module_file(capsys):
    module = os.path.join(ROOT, "test", "lit", "viz", "Inputs", "two-values.ttgir")
    code, out, _ = run(["--file", module, "--value", "%1"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "%1: #blocked1"
    assert lines[2].split()[:3] == ["0:", "w0:t0:r0", "w0:t1:r0"]


# Values defined by ops with regions: a tt.reduce as Triton prints it (generic form: the types
# after the brace closing its region), a reduce of two results, a loop of two results and its
# carried values.
REGIONS_MODULE = """#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: tensor<32x32xf32, #blocked>, %i: tensor<32x32xi32, #blocked>, %n: i32) {
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32 loc("a"), %b: f32 loc("b")):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<32x32xf32, #blocked>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>> loc(#loc)
    %p:2 = "tt.reduce"(%x, %i) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
      tt.reduce.return %a, %ai : f32, i32
    }) : (tensor<32x32xf32, #blocked>, tensor<32x32xi32, #blocked>) -> (tensor<32xf32, #ttg.slice<{dim = 0, parent = #blocked}>>, tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>>)
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0.0> : tensor<32xf32, #blocked1>
    %acc:2 = scf.for %k = %c0 to %n step %c1 iter_args(%carried = %init, %row = %m) -> (tensor<32xf32, #blocked1>, tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>)  : i32 {
      scf.yield %carried, %row : tensor<32xf32, #blocked1>, tensor<32xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    } {tt.num_stages = 1 : i32}
    tt.return
  }
}
#loc = loc("k.py":3:4)
"""


@pytest.mark.parametrize("value, encoding, shape", [
    ("%m", "#ttg.slice<{dim = 1, parent = #blocked}>", [32]),
    ("%p#0", "#ttg.slice<{dim = 0, parent = #blocked}>", [32]),
    ("%p#1", "#ttg.slice<{dim = 0, parent = #blocked}>", [32]),
    ("%acc#0", "#blocked1", [32]),
    ("%acc#1", "#ttg.slice<{dim = 1, parent = #blocked}>", [32]),
    ("%carried", "#blocked1", [32]),
    ("%row", "#ttg.slice<{dim = 1, parent = #blocked}>", [32]),
    ("%x", "#blocked", [32, 32]),
])
def test_values_defined_by_ops_with_regions_are_found(tmp_path, capsys, value, encoding, shape):
    """Once ``no value %m with a tensor or memdesc type`` for the result of a tt.reduce."""
    assert viz.find_value_type(REGIONS_MODULE, value) == (shape, encoding)
    path = tmp_path / "k.ttgir"
    path.write_text(REGIONS_MODULE)
    code, out, err = run(["--file", str(path), "--value", value], capsys)
    assert code == 0 and err == "" and out.splitlines()[0] == f"{value}: {encoding}"


def test_block_arguments_without_a_layout_are_not_found():
    # %a is a block argument of the reduce's region: a scalar, so there is no layout to show.
    assert viz.find_value_type(REGIONS_MODULE, "%a") is None
    assert viz.find_value_type(REGIONS_MODULE, "%p#2") is None   # a pack of 2 has no result 2


@pytest.mark.parametrize("args, message", [
    (["#ttg.blocked<{sizePerThread = [1]}>", "--shape", "4"], "ll-viz: error: "),
    ([BLOCKED_4x8, "--shape", "3,4"], "every size must be a power of two"),
    ([BLOCKED_4x8, "--shape", "32,3x"], "--shape '32,3x': not a list of numbers"),
    ([BLOCKED_4x8], "needs --shape"),
    ([], "give a layout attribute"),
    ([BLOCKED_4x8, "--shape", "4,4", "-o", "x.jpg"], "must be .png, .svg or .pdf"),
    ([BLOCKED_4x8, "--shape", "4,4", "--access", COLUMN_READER], "--access applies to shared layouts only"),
    (["--file", "/nonexistent.ttgir", "--value", "%0"], "cannot read /nonexistent.ttgir"),
    ([BLOCKED_4x8, "--shape", "4,4", "--bits", "12"], "--bits 12"),
])
def test_errors_exit_1_without_traceback(args, message, capsys):
    code, out, err = run(args, capsys)
    assert code == 1
    assert message in err
    assert "Traceback" not in err and out == ""


def test_console_script_exit_code():
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ll-viz"), "--shape", "4"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith("ll-viz: error:")


# -- bad input: one clear line, exit 1, no traceback --------------------------------------------

_BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"


@pytest.mark.parametrize("argv, message", [
    ([_BLOCKED, "--shape", "32,32", "-o", "/nonexistent/dir/x.png"], "cannot use '/nonexistent/dir/x.png'"),
    (["--file", "/bin/ls", "--value", "%5"], "not a text file"),
])
def test_bad_files_are_one_line_errors(capsys, argv, message):
    assert viz.main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_demo_output_under_a_regular_file_is_an_error(tmp_path, capsys):
    from linear_layouts.tools import demo
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    code = demo.main(["--kernel", "transpose", "--target", "sm_90", "--out", str(blocker / "pictures")])
    err = capsys.readouterr().err
    assert code == 1 and "ll-demo: error: cannot write" in err and "Traceback" not in err


# ``--access`` counts banks with the planner's model (``lowering.cost.bank_use``): 64-bit
# elements are served in two phases of 16 lanes, each lane touching two 4-byte words.  The old
# model of ll-viz (all 32 lanes at once, only an element's first word) disagreed on both cases.
ROW_READER = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"


def test_64_bit_row_reads_are_conflict_free_in_phases_of_16_lanes(capsys):
    # lane l reads element (r, l): words 64 r + 2 l and + 1; a phase of 16 lanes covers the 32
    # banks once.  (The old model: lanes l and l + 16 share bank 2 l, 1 extra per access = 32.)
    code, out, _ = run([ROW_SHARED, "--shape", "32,32", "--bits", "64", "--access", ROW_READER], capsys)
    assert code == 0
    assert "32 scalar accesses, 0 extra wavefronts from bank conflicts; 0 elements involved" in out


def test_64_bit_column_reads_conflict_per_phase(capsys):
    # lane l reads element (l, c): words 64 l + 2 c and + 1, banks 2c and 2c + 1 for every lane;
    # lane l's row is 32 consecutive f64: 16 vectors of 2 (128 bits); a vector read is served in
    # 4 phases of 8 lanes, all in the same 4 banks: 7 extra per phase, 28 per access, 448 in all
    # (scalar 64-bit reads, as counted before: 960).
    code, out, _ = run([ROW_SHARED, "--shape", "32,32", "--bits", "64", "--access", COLUMN_READER], capsys)
    assert code == 0
    assert ("16 128-bit vector accesses (2 elements each), 448 extra wavefronts from bank conflicts; "
            "1024 elements involved") in out


def test_access_conflicts_on_amd_use_its_wave64_phases():
    from linear_layouts.dialect import to_linear_layout
    from linear_layouts.tools.viewers.viz import access_conflicts, access_vector
    shared = to_linear_layout(ROW_SHARED, [64, 64])
    reader = to_linear_layout("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [64, 1], warpsPerCTA = [1, 1], "
                              "order = [0, 1]}>", [64, 64])
    # lane l holds row l, 64 consecutive f32: 16 reads of 128-bit vectors.  gfx942 serves a
    # 128-bit read in 8 phases of 8 lanes (lane bits 0, 1, 4), all 8 lanes in the same 4 banks:
    # 7 extra wavefronts per phase, 56 per access.
    marked, extra, accesses = access_conflicts(shared, reader, 32, "gfx942")
    assert (accesses, extra, len(marked)) == (16, 16 * 56, 64 * 64)
    assert access_vector(shared, reader, 32) == 4


def test_access_with_an_unknown_target_is_an_error(capsys):
    code, out, err = run([ROW_SHARED, "--shape", "32,32", "--access", COLUMN_READER, "--target", "sm_1"], capsys)
    assert code == 1 and "unknown target 'sm_1'" in err


# ----------------------------------------------------------------------------- element widths, scalar accesses, a closed pipe

NVMMA_F16 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def test_nvmma_shared_banks_use_its_element_bit_width(capsys):
    # f16: two elements share a 4-byte word, so offsets 0 and 1 are both in bank 0
    code, out, _ = run([NVMMA_F16, "--shape", "8,64"], capsys)
    assert code == 0
    assert out.splitlines()[2].split()[1:5] == ["o0", "b0", "o1", "b0"]
    code, out, _ = run([NVMMA_F16, "--shape", "8,64", "--bits", "32"], capsys)   # an explicit --bits wins
    assert out.splitlines()[2].split()[1:5] == ["o0", "b0", "o1", "b1"]


def test_access_without_vectors_stays_scalar(capsys):
    # one element per lane and row: no register to put in a vector
    reader = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
    code, out, _ = run([ROW_SHARED, "--shape", "32,32", "--access", reader], capsys)
    assert code == 0
    assert "32 scalar accesses, 0 extra wavefronts from bank conflicts; 0 elements involved" in out


def test_output_into_a_closed_pipe_ends_quietly():
    # ll-viz ... | head -1: the reader stops early; no BrokenPipeError traceback
    script = ("import subprocess, sys\n"
              "p = subprocess.Popen([sys.executable, '-m', 'linear_layouts.tools.viewers.viz', sys.argv[1], '--shape', '64,64'],"
              " stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
              "p.stdout.readline(); p.stdout.close()\n"
              "err = p.stderr.read().decode(); p.wait()\n"
              "print(p.returncode); print(err)\n")
    run = subprocess.run([sys.executable, "-c", script, BLOCKED_4x8], capture_output=True, text=True, timeout=120)
    assert run.stdout.split("\n", 1)[0] == "0"
    assert "Traceback" not in run.stdout and "BrokenPipeError" not in run.stdout, run.stdout


# -- pictures: marks no colour of the cells has, sizes that stay readable ------------------------

def test_the_mark_is_no_warp_or_bank_colour():
    """Red was both tab20's colour of warp 3 (and of banks 6, 7) and the conflict mark."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    shuffle_words = [plt.get_cmap("tab10")(i) for i in range(10)]   # ll-viz --plan's shuffle rounds
    palette = layout_view.warp_colours() + layout_view.bank_colours(64) + shuffle_words
    mark = layout_view.MARK_COLOUR
    assert mark not in palette
    # ... nor close to one: at least 0.3 apart in RGB (the nearest, tab20b's dark blue, is 0.57)
    assert min(sum((a - b) ** 2 for a, b in zip(mark[:3], colour[:3])) ** 0.5 for colour in palette) > 0.3


def test_bank_conflicts_and_moved_elements_are_marked_in_black_not_red(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    for args in ([ROW_SHARED, "--shape", "32,32", "--access", COLUMN_READER],
                 ["--compare", BLOCKED_4x8, COLUMN_READER, "--shape", "32,32"]):
        picture = tmp_path / "marked.svg"
        code, _, _ = run(args + ["-o", str(picture)], capsys)
        assert code == 0
        svg = picture.read_text()
        assert "#ff0000" not in svg   # matplotlib's "red"
        assert "hatch" in svg or "stroke: #000000; stroke-width: 1.2" in svg   # the mark


def _picture_pixels(path) -> tuple[int, int]:
    import matplotlib.image
    height, width = matplotlib.image.imread(str(path)).shape[:2]
    return width, height


def _cell_label_sizes(monkeypatch) -> list:
    """Record the font size of every text matplotlib's Axes.text draws (ll-viz's cell labels)."""
    import matplotlib.axes
    sizes = []
    original = matplotlib.axes.Axes.text

    def recording(self, x, y, s, *args, **kwargs):
        sizes.append(kwargs.get("fontsize"))
        return original(self, x, y, s, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "text", recording)
    return sizes


@pytest.mark.parametrize("shape, labelled", [("64,64", False), ("16,16", True)])
def test_a_comparison_picture_fits_and_its_labels_are_readable(tmp_path, capsys, monkeypatch, shape, labelled):
    """A 64 x 64 comparison was 5475 x 2940 pixels with 2-point labels.  Now: at most 2500 pixels
    on the long side, and labels of at least 9 pixels, or none (the legend says the colours)."""
    pytest.importorskip("matplotlib")
    label_sizes = _cell_label_sizes(monkeypatch)
    path = tmp_path / "compare.png"
    code, _, _ = run(["--compare", BLOCKED_4x8, COLUMN_READER, "--shape", shape, "-o", str(path)], capsys)
    assert code == 0
    assert max(_picture_pixels(path)) <= 2500
    pixels = [size * layout_view.PICTURE_DPI / 72 for size in label_sizes]
    assert bool(pixels) == labelled and all(p >= 9 for p in pixels)


def test_picture_size_shrinks_cells_and_drops_labels_only_when_they_no_longer_fit():
    small = viz.picture_size(16, 16, panels=1, label_lines=2, legend_rows=1)
    assert small.cell_inches == viz.LARGEST_CELL_INCHES and small.label_points == viz.LABEL_POINTS
    for rows, cols, panels in ((64, 64, 2), (256, 256, 1), (8, 256, 2)):
        size = viz.picture_size(rows, cols, panels, label_lines=3, legend_rows=2)
        assert max(size.width_inches, size.height_inches) * layout_view.PICTURE_DPI <= layout_view.MAX_PICTURE_PIXELS
        assert size.label_points == 0 or size.label_points >= viz.MIN_LABEL_POINTS
