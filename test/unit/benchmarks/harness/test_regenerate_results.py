"""benchmarks/results keeps summaries, plots and small files; every raw file taken out is
listed in benchmarks/harness/regenerate_results.py with the command that writes it, and none is back."""

from __future__ import annotations

import os
import re
import sys

from support import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from harness import regenerate_results  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
LIMIT_BYTES = 1_500_000          # committed results under 1.5 MB (what `du -sb` counts, less its folders)


def test_results_stay_small():
    total = sum(path.stat().st_size for path in RESULTS.rglob("*") if path.is_file())
    assert total < LIMIT_BYTES, f"benchmarks/results holds {total} bytes"


def test_removed_files_are_gone_and_say_how_to_get_them_back():
    archived = {entry.path for entry in regenerate_results.REMOVED if entry.folder == "studies"}
    for entry in regenerate_results.REMOVED:
        assert entry.folder in ("results", "studies"), entry
        assert not (REPO / entry.path).exists(), f"{entry.path} is back"
        assert entry.command or "history" in entry.needs, entry.name
        script = re.match(r"python (benchmarks/(?:studies/)?\w+\.py)", entry.command)
        assert entry.command == "" or (script and ((REPO / script.group(1)).exists() or script.group(1) in archived)), \
            entry.command


def test_an_archived_study_names_the_commit_that_holds_it():
    for entry in regenerate_results.REMOVED:
        if entry.folder == "studies":
            assert re.search(rf"git show [0-9a-f]{{7,}}:{re.escape(entry.path)}", entry.note), entry


def test_every_results_file_named_by_the_code_exists_or_is_listed():
    """A file under benchmarks/results that the package, the tools or the benchmarks name is
    either still there or listed as removed (then the reader knows where it went)."""
    removed = {entry.name for entry in regenerate_results.REMOVED}
    missing = []
    for folder in ("lowering", "passes", "tools", "benchmarks", "dialect"):
        for root, _, files in os.walk(REPO / folder):
            for name in files:
                if not name.endswith(".py"):
                    continue
                text = open(os.path.join(root, name), encoding="utf-8").read()
                for cited in re.findall(r"benchmarks/results/([\w.\-]+?\.(?:json|md|png|txt)(?:\.gz)?)\b", text):
                    if not (RESULTS / cited).exists() and cited not in removed:
                        missing.append(f"{name}: {cited}")
    assert missing == []
