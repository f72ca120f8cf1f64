"""ll-demo: the algebra tour (--tour) and the main job (a table of the bundled kernels' conversions)."""

import io
import contextlib

from linear_layouts.tools import demo
from support import REPO  # noqa: E402


def test_tour_runs_and_shows_the_three_parts():
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert demo.main(["--tour"]) == 0
    text = buffer.getvalue()
    assert "== 1. The paper's Figure 1 layout" in text
    assert "register=3 lane= 5 warp=0 -> (row  9, col  3)" in text
    assert "minimal conversion moves data across: register, lane" in text


def test_demo_conversion_is_a_correct_inverse():
    src, dst = demo.figure1_layout(), demo.row_per_lane_layout()
    conversion = dst.invert_and_compose(src)
    for flat in range(dst.total_in_dim_size):
        hw = {"register": flat & 3, "lane": (flat >> 2) & 31, "warp": flat >> 7}
        assert src.apply(conversion.apply(hw)) == dst.apply(hw)


# ----------------------------------------------------------------------------- the main job

TRANSPOSE_SM90 = ["transpose", "kernels.py:127", "64x64xf32 #blocked1 -> #blocked", "warp", "shared",
                  "st.shared.b32=32 bar.sync=1 ld.shared.b32=32", "0", "16384 B", "yes"]


def _table_rows(text, title):
    """The rows (split on runs of 2+ spaces) of the table under ``title``."""
    import re
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 3:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return lines[start + 1], rows


def test_main_job_reports_every_conversion_of_a_kernel(tmp_path):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert demo.main(["--kernel", "transpose", "--kernel", "column_sum", "--target", "sm_90",
                          "--no-compare", "--out", str(tmp_path)]) == 0
    text = buffer.getvalue()
    header, rows = _table_rows(text, "Conversions on sm_90")
    assert header.split() == ["kernel", "location", "types", "scope", "lowering", "instructions", "per", "warp",
                              "conflicts", "scratch", "verified"]
    assert rows == [TRANSPOSE_SM90,
                    ["column_sum", "kernels.py:63", "128xf32 #slice0(#blocked) -> #blocked1", "none", "none",
                     "-", "-", "-", "yes"]]
    # One target ran: the summary counts it, and one no-op is "a no-op".
    assert "2 conversions in 2 kernels x 1 target; 1 is a no-op" in text
    assert (tmp_path / "transpose-sm_90-shared.png").stat().st_size > 10_000


def test_report_conversions_reads_a_ttgir_file():
    # The committed corpus: no compile needed.  Location and types come from the module.
    import os
    from linear_layouts.tools.report.conversion_report import report_conversions
    root = str(REPO)
    with open(os.path.join(root, "test", "lit", "corpus", "gfx942", "transpose_32bit.ttgir")) as f:
        rows = report_conversions(f.read(), "gfx942", kernel="t")
    assert [(r.location, r.types, r.scope, r.lowering, r.verified) for r in rows] == [
        ("gen_corpus.py:126", "64x64xf32 #blocked1 -> #blocked", "warp", "shared", "yes")]
    assert rows[0].scratch_bytes == rows[0].plan.shared.scratch_bytes and rows[0].bank_conflicts == 0


def test_final_code_counts():
    from linear_layouts.tools.report.conversion_report import count_instructions, counts_text
    ptx = "  shfl.sync.idx.b32 %r1, %r2, 1, 31, -1;\n  st.shared.v4.b32 [%r3], {%r4};\n  ldmatrix.sync.x4 {..}\n"
    counts = count_instructions(ptx, "nvidia")
    assert counts == {"shfl": 1, "st.shared": 1, "ld.shared": 0, "stmatrix": 0, "ldmatrix": 1}
    assert counts_text(counts) == "shfl=1 st.shared=1 ldmatrix=1"
    assert count_instructions("  ds_bpermute_b32 v1, v2, v3\n  ds_write_b128 v0, v[4:7]\n", "amd") == \
        {"ds_bpermute": 1, "ds_write": 1, "ds_read": 0}


def test_a_failing_plugin_compile_is_reported_not_raised(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("linear-layouts: kernel transpose: boom\nmore detail")
    monkeypatch.setattr(demo, "compile_ours", broken)
    kernel = demo.bundled_kernels(["transpose"])[0]
    result = demo.run_kernel(kernel, "sm_90", with_ours=True, workdir="/nonexistent")
    assert result.ours_problem == "compile with linear_layouts.enable() failed: linear-layouts: kernel transpose: boom"
    assert "failed: linear-layouts: kernel transpose: boom" in demo.final_code_table([result])[2]


def test_readme_excerpt_is_the_demo_output(tmp_path, monkeypatch):
    # every line of the README's ll-demo excerpt is a line ll-demo prints today (both
    # Triton releases: the excerpt keeps to rows they agree on)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)   # as a user runs it: the lowering choice on
    readme = (REPO / "README.md").read_text()
    start = readme.index("An excerpt:\n\n```\n") + len("An excerpt:\n\n```\n")
    excerpt = [line.rstrip() for line in readme[start:readme.index("```\n", start)].splitlines() if line.strip()]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert demo.main(["--no-pictures"]) == 0
    printed = {line.rstrip() for line in buffer.getvalue().splitlines()}
    assert [line for line in excerpt if line not in printed] == []
    assert len(excerpt) == 15
    # what the summary says the plugin lowered is the plugin's own count (stats()), not the plans built
    assert any(line.startswith("with linear_layouts.enable(): ") and " lowered by us, " in line for line in excerpt)
    # The README says the final code of these kernels is stock's under every release tested
    # (it once said that under 3.6 the matmul and attention kept ours): each row's two columns agree.
    assert "The final code of these kernels is stock's, under triton 3.9 and 3.6 alike" in " ".join(readme.split())
    header, rows = _table_rows(buffer.getvalue(), "Data movement in the final code")
    assert rows and [row for row in rows if len(row) != 4 or row[2] != row[3]] == []


def test_demo_without_matplotlib_runs_and_says_pictures_need_it(tmp_path):
    """Once a traceback (ModuleNotFoundError in plan_view.draw_plan).  matplotlib is hidden from a
    fresh process (``sys.modules['matplotlib'] = None`` makes every import of it fail)."""
    import os
    import subprocess
    import sys

    script = ("import sys; sys.modules['matplotlib'] = None\n"
              "from linear_layouts.tools import demo\n"
              f"sys.exit(demo.main(['--kernel', 'transpose', '--target', 'sm_90', '--no-compare', "
              f"'--out', {str(tmp_path / 'pictures')!r}]))\n")
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert [line for line in result.stdout.splitlines() if "matplotlib" in line] == \
        ["Pictures need matplotlib (pip install matplotlib): none drawn"]
    assert "Conversions on sm_90" in result.stdout and not (tmp_path / "pictures").exists()


def test_final_code_reads_the_cta_spelling_of_shared_accesses():
    # triton 3.8's PTX writes st.shared::cta / ld.shared::cta where 3.6 and 3.9 write st.shared / ld.shared
    from linear_layouts.tools.report.final_code import whole_mix
    ptx = ("  st.shared::cta.v4.b32 [%r1 + 0], {%r2, %r3, %r4, %r5};\n  ld.shared::cta.v2.b32 {%r1, %r2}, [%r3];\n"
           "  st.shared.b16 [%r1], %rs1;\n")
    mix = whole_mix(ptx, "nvidia")
    assert (mix.counts["st.shared"], mix.counts["ld.shared"]) == (2, 1)
    assert dict(mix.shared_bits) == {128: 1, 64: 1, 16: 1}
