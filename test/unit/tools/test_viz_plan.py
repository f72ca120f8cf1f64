"""ll-viz --plan: a conversion plan in words (checked exactly on small cases) and in pictures."""

import pytest

from linear_layouts.dialect import LinearLayout, to_linear_layout
from linear_layouts.lowering import plan_conversion
from linear_layouts.lowering.instructions import AccessKind
from linear_layouts.lowering.plan import SharedAccess, ThreadAffine
from linear_layouts.tools.viewers import plan_view, viz

PAIRS = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
SINGLES = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
COLUMNS = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [0, 1]}>"
# A transposition across two 64-lane wavefronts (gfx942): shared memory.
ROWS_64 = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [16, 4], warpsPerCTA = [2, 1], order = [1, 0]}>"
COLUMNS_64 = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 16], warpsPerCTA = [1, 2], order = [0, 1]}>"
# 128 elements over 64 lanes and 2 CTAs; the destination swaps which CTA holds which half.
CTA_HALVES = "#ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16], [32]], warp = [], block = [[64]]}>"
CTA_INTERLEAVED = "#ttg.linear<{register = [], lane = [[2], [4], [8], [16], [32], [64]], warp = [], block = [[1]]}>"


def run(args, capsys):
    code = viz.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_shuffle_plan_text_is_exact(capsys):
    # 64 fp32 elements, 2 per lane -> 1 per lane: lane l needs elements l and l + 32, held by
    # lanes l // 2 and 16 + l // 2: two shfl.idx rounds, each lane picking its word by parity.
    code, out, _ = run(["--plan", PAIRS, SINGLES, "--shape", "64"], capsys)
    assert code == 0
    lanes = "    lane " + " ".join(f"{i:>2}" for i in range(32))
    even_odd = " ".join(f"{i % 2:>2}" for i in range(32))
    assert out.splitlines() == [
        "64 x 32-bit elements on sm_90",
        f"SRC: {PAIRS}",
        f"DST: {SINGLES}",
        "scope: lane   lowering: shuffle   target: sm_90   element: 32 bit   verified: yes (exhaustive simulation)",
        "cost per warp: shfl.idx=2, select=4; bank conflicts 0; scratch 0 B",
        "shuffle: 2 source words -> 2 destination words (1 element per 32-bit word), 2 rounds",
        "  round 0 (shfl.idx): lane l receives word 'word' of lane 'from'",
        lanes,
        "    from " + " ".join(f"{(l // 2) + 16 * (l % 2):>2}" for l in range(32)),
        "    word " + even_odd,
        "  round 1 (shfl.idx): lane l receives word 'word' of lane 'from'",
        lanes,
        "    from " + " ".join(f"{(l // 2) + 16 * (1 - l % 2):>2}" for l in range(32)),
        "    word " + even_odd,
        "  select: destination word d of lane l is the word received in round d ^ r(l)",
        "    r    " + even_odd,
    ]


def test_shared_memory_plan_text_lists_accesses_and_conflicts(capsys):
    code, out, _ = run(["--plan", ROWS_64, COLUMNS_64, "--shape", "32,32", "--bits", "32", "--target", "gfx942"], capsys)
    assert code == 0
    assert out.splitlines()[3:] == [
        "scope: warp   lowering: shared   target: gfx942   element: 32 bit   verified: yes (exhaustive simulation)",
        "cost per warp: ds_write.b32=8, s_barrier=1, ds_read.b32=8; bank conflicts 0 (store 0, load 0); scratch 4096 B",
        "shared memory: 4096 B scratch, 1 round, vectors of 1 (store) and 1 (load) x 32 bit",
        "  instruction            count wavefronts conflicts",
        "  ds_write.b32               8         16         0",
        "  s_barrier                  1",
        "  ds_read.b32                8         16         0",
    ]


def test_noop_plan_says_nothing_moves(capsys):
    code, out, _ = run(["--plan", PAIRS, PAIRS, "--shape", "64"], capsys)
    assert code == 0
    assert out.splitlines()[3:] == [
        "scope: none   lowering: none   target: sm_90   element: 32 bit   verified: yes (exhaustive simulation)",
        "cost per warp: no instructions; bank conflicts 0; scratch 0 B",
        "no data moves: destination registers 0, 1, ... are source registers [0, 1]",
    ]


def test_unsupported_conversion_is_an_answer_not_an_error(capsys):
    code, out, err = run(["--plan", CTA_HALVES, CTA_INTERLEAVED, "--shape", "128", "--target", "gfx942"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[3].startswith("no plan (scope block): cross-CTA conversion")
    assert lines[4] == "this conversion is left to Triton's own lowering"


def test_layouts_over_different_warp_counts_are_an_error(capsys):
    """No conversion is between layouts of different warp counts (one kernel has one num_warps):
    exit 1 with the reason, not "no plan: invalid conversion" and exit 0."""
    four_warps = ROWS.replace("warpsPerCTA = [1, 1]", "warpsPerCTA = [4, 1]")
    code, out, err = run(["--plan", ROWS, four_warps, "--shape", "64,64"], capsys)
    assert code == 1 and out == ""
    assert err == ("ll-viz: error: --plan: SRC spreads over 1 warps, DST over 4: a conversion stays within one "
                   "kernel's warps (give both layouts the same warpsPerCTA product)\n")


@pytest.mark.parametrize("src, dst, shape, bits", [(PAIRS, SINGLES, "64", "32"), (ROWS, COLUMNS, "16,16", "16"),
                                                   (PAIRS, PAIRS, "64", "32")])
def test_picture_is_written(tmp_path, capsys, src, dst, shape, bits):
    pytest.importorskip("matplotlib")
    path = tmp_path / "plan.png"
    code, out, _ = run(["--plan", src, dst, "--shape", shape, "--bits", bits, "-o", str(path)], capsys)
    assert code == 0
    assert out.splitlines()[-1] == f"wrote {path}"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


@pytest.mark.parametrize("args, message", [
    (["--plan", PAIRS, SINGLES, "--shape", "64", "--target", "sm_99"], "--target: unknown target 'sm_99'"),
    (["--plan", PAIRS, "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>", "--shape", "64"],
     "--plan: DST is a shared-memory layout"),
    (["--plan", PAIRS, SINGLES], "a layout attribute needs --shape"),
    (["--plan", PAIRS, SINGLES, "--shape", "64", "-o", "plan.txt"], "-o plan.txt: the picture must be"),
    ([PAIRS, "--plan", PAIRS, SINGLES, "--shape", "64"], "--plan takes its two layouts itself"),
])
def test_bad_input_exits_1_with_a_message(capsys, args, message):
    code, out, err = run(args, capsys)
    assert code == 1 and out == ""
    assert err.startswith("ll-viz: error: ") and message in err


def test_access_touches_marks_conflicting_words():
    # A real gfx942 plan with its first store replaced by hand-made ones: 32-bit stores, two
    # phases of 32 lanes each.  A stride of 32 words puts every lane of a phase in bank 0.
    plan = plan_conversion(to_linear_layout(ROWS_64, [32, 32]), to_linear_layout(COLUMNS_64, [32, 32]), 32, "gfx942")
    column = SharedAccess(AccessKind.STORE, (0,), ThreadAffine(0, lane=(32, 64, 128, 256, 512, 1024)))
    touches = plan_view.access_touches(column, plan)
    assert [t.word for t in touches] == [32 * lane for lane in range(64)]
    assert all(t.conflict and len(t.lanes) == 1 for t in touches)
    # Every lane writing the same word: one broadcast, no conflict.
    same_word = SharedAccess(AccessKind.STORE, (0,), ThreadAffine(5, lane=(0, 0, 0, 0, 0, 0)))
    assert plan_view.access_touches(same_word, plan) == [plan_view.WordTouch(5, tuple(range(64)), False)]
    # The planner's own accesses are conflict-free and cover every lane.
    access = next(op for op in plan.shared.ops if isinstance(op, SharedAccess))
    touches = plan_view.access_touches(access, plan)
    assert not any(t.conflict for t in touches)
    assert sorted(lane for t in touches for lane in t.lanes) == list(range(64))


def test_bank_conflicts_are_marked_in_no_bank_colour():
    """The conflict mark was red, the colour of banks 6 and 7 (tab20) as well."""
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.patches import PathPatch

    from linear_layouts.tools.viewers.layout_view import MARK_COLOUR, bank_colours

    plan = plan_conversion(to_linear_layout(ROWS_64, [32, 32]), to_linear_layout(COLUMNS_64, [32, 32]), 32, "gfx942")
    column = SharedAccess(AccessKind.STORE, (0,), ThreadAffine(0, lane=(32, 64, 128, 256, 512, 1024)))  # all bank 0
    fig, ax = plt.subplots()
    banks = bank_colours(plan.target.num_banks)
    plan_view._draw_access(ax, column, plan, "conflicting store", banks)
    marks = [patch for patch in ax.patches if isinstance(patch, PathPatch)]
    plt.close(fig)
    assert len(marks) == 1 and marks[0].get_edgecolor() == to_rgba(MARK_COLOUR)
    assert to_rgba(MARK_COLOUR) not in banks


def test_lowering_names():
    plan = plan_conversion(to_linear_layout(ROWS, [16, 16]), to_linear_layout(COLUMNS, [16, 16]), 16, "sm_90")
    assert plan_view.lowering_name(plan).startswith("shared")
    identity = LinearLayout.identity_1d(32, "lane", "dim0")
    assert plan_view.lowering_name(plan_conversion(identity, identity, 32, "sm_90")) == "none"


def test_64_lane_shuffle_rounds_print_in_blocks_of_32_lanes(capsys):
    one_warp_rows = ROWS_64.replace("warpsPerCTA = [2, 1]", "warpsPerCTA = [1, 1]")
    one_warp_columns = COLUMNS_64.replace("warpsPerCTA = [1, 2]", "warpsPerCTA = [1, 1]")
    code, out, _ = run(["--plan", one_warp_rows, one_warp_columns, "--shape", "16,16", "--target", "gfx942"], capsys)
    assert code == 0
    lines = out.splitlines()
    first_round = lines.index("  round 0 (ds_bpermute): lane l receives word 'word' of lane 'from'")
    labels = [line.split()[0] for line in lines[first_round + 1:first_round + 7]]
    assert labels == ["lane", "from", "word", "lane", "from", "word"]
    assert lines[first_round + 4].split()[1:3] == ["32", "33"]


def test_plan_pictures_fit_the_largest_picture_size(tmp_path, capsys):
    """A 64-lane shuffle plan was 2880 pixels wide (0.3 inch a lane)."""
    pytest.importorskip("matplotlib")
    import matplotlib.image

    from linear_layouts.tools.viewers.layout_view import MAX_PICTURE_PIXELS

    one_warp_rows = ROWS_64.replace("warpsPerCTA = [2, 1]", "warpsPerCTA = [1, 1]")
    one_warp_columns = COLUMNS_64.replace("warpsPerCTA = [1, 2]", "warpsPerCTA = [1, 1]")
    wide_rows = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    tall_columns = "#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"
    for args in (["--plan", one_warp_rows, one_warp_columns, "--shape", "16,16", "--target", "gfx942"],
                 ["--plan", wide_rows, tall_columns, "--shape", "128,128"]):
        path = tmp_path / "plan.png"
        code, _, _ = run(args + ["-o", str(path)], capsys)
        assert code == 0
        assert max(matplotlib.image.imread(str(path)).shape[:2]) <= MAX_PICTURE_PIXELS


def test_a_plan_picture_without_matplotlib_is_one_error_line(tmp_path):
    """``ll-viz --plan ... -o plan.png`` in an environment without matplotlib: the one line the
    other picture commands give, no traceback, no file (it was a ModuleNotFoundError raised from
    plan_view.draw_plan)."""
    import os
    import subprocess
    import sys
    out = tmp_path / "plan.png"
    blocked = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    other = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
    script = ("import sys; sys.modules['matplotlib'] = None\n"
              "from linear_layouts.tools.viewers import viz\n"
              f"sys.exit(viz.main(['--plan', {blocked!r}, {other!r}, '--shape', '64,64', '--bits', '16', "
              f"'--target', 'sm_90', '-o', {str(out)!r}]))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TRITON_DEFAULT_FP_FUSION="1"))
    assert run.returncode == 1 and "Traceback" not in run.stderr and not out.exists()
    assert run.stderr.strip() == "ll-viz: error: pictures need matplotlib: pip install matplotlib"
