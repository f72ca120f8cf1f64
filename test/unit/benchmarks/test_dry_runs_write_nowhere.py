"""The Gluon harness's dry runs (``gluon_forms_gpu.py --dry-run``, ``gluon_forms_gpu.py kernels
--dry``) print their table and write a file only where ``--out`` says: the files under
benchmarks/results are committed results, and a dry run to look at what compiles used to rewrite
them.  And the results the README links name commands that exist (gluon_auto_gpu.md named
``benchmarks/gluon_auto_gpu.py``, which had become ``gluon_forms_gpu.py kernels``)."""

from __future__ import annotations

import os
import re
import sys

import pytest

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks")
sys.path.insert(0, BENCHMARKS)
import gluon_forms_gpu  # noqa: E402
from harness import gluon_auto_suite, regenerate_results  # noqa: E402
from harness.gluon_modes import MODES  # noqa: E402
from support import REPO  # noqa: E402

triton = pytest.importorskip("triton")

ROWS = [{"name": "copy", **{mode: "compiles; 128-bit loads 8, stores 8" for mode in MODES}}]


@pytest.fixture
def fake_checkout(tmp_path, monkeypatch):
    """The scripts' own folder moved to ``tmp_path/benchmarks`` (where their default results
    folder would be), the dry compiles replaced by one fake row, the working directory empty."""
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    monkeypatch.setattr(gluon_auto_suite, "BENCHMARKS", str(folder))
    monkeypatch.setattr(gluon_auto_suite, "dry", lambda: ROWS)
    monkeypatch.setattr(gluon_forms_gpu, "__file__", str(folder / "gluon_forms_gpu.py"))
    monkeypatch.setattr(gluon_forms_gpu, "dry_run", lambda chosen: ROWS)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return folder


@pytest.mark.parametrize("argv, name", [
    (["kernels", "--dry"], "gluon_auto_dry_{}.md"),
    (["--dry-run"], "gluon_forms_dry_{}.md"),
])
def test_a_dry_run_prints_and_writes_only_where_out_says(fake_checkout, tmp_path, capsys, argv, name):
    assert gluon_forms_gpu.main(argv) == 0
    assert "| copy | compiles; 128-bit loads 8" in capsys.readouterr().out
    assert not (fake_checkout / "results").exists()
    assert os.listdir(tmp_path / "work") == []
    out = tmp_path / "out"
    assert gluon_forms_gpu.main(argv + ["--out", str(out)]) == 0
    written = (out / name.format(triton.__version__)).read_text()
    assert "| copy | compiles; 128-bit loads 8" in written and written.endswith(" |\n")
    assert "--out benchmarks/results`" in written   # the command that makes the committed file


def readme_linked_results() -> list[str]:
    readme = (REPO / "README.md").read_text()
    return sorted(set(re.findall(r"\((benchmarks/results/[\w./-]+\.md)\)", readme)))


def test_the_results_the_readme_links_name_commands_that_exist():
    """... or the command of an archived study (regenerate_results.py lists it, with its commit)."""
    linked = readme_linked_results()
    assert "benchmarks/results/gluon_auto_gpu.md" in linked
    archived = {entry.path for entry in regenerate_results.REMOVED if entry.folder == "studies"}
    missing = []
    for result in linked:
        for script in re.findall(r"python (benchmarks/[\w/]+\.py)", (REPO / result).read_text()):
            if not (REPO / script).is_file() and script not in archived:
                missing.append(f"{result}: {script}")
    assert missing == []
