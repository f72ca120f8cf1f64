"""benchmarks/studies/assign_compile_corpus.py: which failures count against us (stock compiles, the
pipeline does not), one real compile of each kind, and the report's counts."""

import os
import sys

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks", "studies"))
import assign_compile_corpus  # noqa: E402


def test_the_report_separates_our_failures_from_files_stock_cannot_compile():
    rows = [{"file": "a.ttgir", "ours": True, "stock": True, "error": "", "stock_error": ""},
            {"file": "b.ttgir", "ours": False, "stock": True, "error": "boom", "stock_error": ""},
            {"file": "c.ttgir", "ours": False, "stock": False, "error": "old", "stock_error": "unknown op"}]
    text = assign_compile_corpus.render(rows, "3.9.0")
    assert "- files: 3; compiled through the pipeline: **1**" in text
    assert "- failed where stock compiles: **1**" in text and "* b.ttgir: boom" in text
    assert "stock cannot compile them either (this Triton cannot read or lower the file): 1" in text
    assert "* c.ttgir: unknown op" in text


def test_a_corpus_kernel_compiles_and_a_broken_one_fails_in_both(tmp_path):
    good = os.path.join(assign_compile_corpus.CORPUS, "cuda90", "max_axis1.ttgir")
    broken = tmp_path / "broken.ttgir"
    broken.write_text(open(good).read().replace("tt.reduce", "tt.reduce_nonsense", 1))
    rows = assign_compile_corpus.check([good, str(broken)], jobs=2)
    assert rows[0]["ours"] and rows[0]["stock"]
    assert not rows[1]["ours"] and not rows[1]["stock"] and rows[1]["error"]
    assert assign_compile_corpus.emit_for(os.path.join(assign_compile_corpus.CORPUS, "gfx942", "x.ttgir")) == "amdgcn"
    assert assign_compile_corpus.emit_for(good) == "ptx"
