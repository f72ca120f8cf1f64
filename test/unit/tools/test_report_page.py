"""docs/report.md's excerpt of the report on examples/report_example.py is what the report gives
under the triton release the page names (it showed triton 3.6's "ours better in 1" while
``make test`` installs 3.9, which gives "ours better in 0 ... left to Triton 2").  Under another
release the test is skipped, saying which release the page was made with."""

import os
import re
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton")

from support import REPO  # noqa: E402

PAGE = REPO / "docs" / "report.md"
CUT = " ..."   # a line of the excerpt ending so is cut there: the report's line starts with the rest


def page_excerpt() -> tuple[str, list[str]]:
    """(the release the page says made the excerpt, the excerpt's non-empty lines)."""
    text = PAGE.read_text(encoding="utf-8")
    intro = re.search(r"For `examples/report_example\.py`\s+\(`--format md`, excerpt; made with triton (\S+?),",
                      text)
    assert intro, "docs/report.md no longer introduces its excerpt with the release that made it"
    block = re.search(r"```\n(.*?)```", text[intro.end():], flags=re.S).group(1)
    return intro.group(1), [line for line in block.splitlines() if line.strip()]


def report_lines(tmp_path) -> list[str]:
    """The Markdown report of examples/report_example.py, as a user gets it (the stock gate on)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PYTEST_XDIST") and name != "LINEAR_LAYOUTS_STOCK_GATE"}
    env.update(TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "report", "--format", "md", "-o", str(tmp_path / "out"),
                          "examples/report_example.py"], capture_output=True, text=True, cwd=str(REPO), env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return [line.rstrip() for line in run.stdout.splitlines()]


def test_the_excerpt_is_what_the_installed_release_reports(tmp_path):
    release, excerpt = page_excerpt()
    if triton.__version__ != release:
        pytest.skip(f"docs/report.md's excerpt was made with triton {release}; this is triton {triton.__version__}")
    lines = report_lines(tmp_path)
    summary = [line for line in excerpt if line.startswith(("Final code, ours vs stock", "Per conversion, final code"))]
    # the per-conversion line is there only where some conversion is ours
    assert summary and all(line in lines for line in summary), (summary, lines[:12])
    for line in excerpt:
        if line.endswith(CUT):
            assert any(shown.startswith(line[:-len(CUT)]) for shown in lines), line
        else:
            assert line.rstrip() in lines, line
    # the report speaks as a remark does: no cost-model field names, none of our source files
    internals = [line for line in lines if re.search(r"\b(store|load)_wavefronts=|cta_barriers=|lowering/\w+", line)]
    assert internals == []


def test_what_the_page_says_of_triton_3_6_is_what_3_6_reports(tmp_path):
    """The page once said 3.6 "keeps ours for all three"; it keeps ours for normalize_rows only."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    claim = re.search(r"Under triton 3\.6 on sm_90 the choice fitted to H100 timings keeps ours for (.*?) only", text)
    assert claim, "docs/report.md no longer says what triton 3.6 keeps"
    if not triton.__version__.startswith("3.6."):
        pytest.skip(f"the page's sentence is about triton 3.6; this is triton {triton.__version__}")
    named = set(re.findall(r"`(\w+)`", claim.group(1)))
    lines = report_lines(tmp_path)
    table = lines[lines.index("## Kernels") + 3:]
    ours = {line.split()[0] for line in table[:table.index("```")] if re.search(r"\bours [1-9]\d* of ", line)}
    assert named == ours, (named, ours)


PICTURE_SOURCE = REPO / "docs" / "images" / "report-index.md"


def index_part(lines: list[str]) -> list[str]:
    """What the picture of the index shows: the summary through the end of the kernels table."""
    end = lines.index("## Kernels")
    end = lines.index("```", end + 3)
    return [line.rstrip() for line in lines[:end + 1]]


def test_the_index_picture_is_drawn_from_what_the_release_reports(tmp_path):
    """docs/images/report-index.png once showed "ours 1 of 1" and "left to Triton: 2" where the
    report said "ours 0 of 1" and 3: the picture is regenerated with the Markdown it was drawn
    from (docs/report.md names the command), and that Markdown is checked here."""
    release, _ = page_excerpt()
    if triton.__version__ != release:
        pytest.skip(f"docs/images/report-index.md was made with triton {release}; this is triton {triton.__version__}")
    committed = index_part(PICTURE_SOURCE.read_text(encoding="utf-8").splitlines())
    assert index_part(report_lines(tmp_path)) == committed
