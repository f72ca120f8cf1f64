"""``support.release_independence``: which test modules ``make test-compat`` may leave out
because nothing they reach can read the installed Triton."""

from __future__ import annotations

import pytest

from support import REPO
from support import release_independence
from support.release_independence import is_release_independent

UNIT = REPO / "test" / "unit"


@pytest.mark.parametrize("module, independent", [
    ("dialect/test_linear_layout.py", True),          # the algebra: dialect, hypothesis, pytest
    ("lowering/test_shuffle_plans.py", True),         # the planners import nothing above lowering
    ("tools/test_import_graph.py", True),             # reads the source with ast
    ("dialect/test_encodings_oracle.py", False),      # Triton's C++ in a subprocess
    ("lowering/test_plan_fuzz.py", False),            # support.release_seed: other examples each release
    ("passes/test_hook.py", False),                   # enable(): the drop-in, Triton's stages
    ("passes/ir/test_module_lines_walk.py", False),   # Triton's bindings parse the modules
])
def test_the_suite_s_modules(module, independent):
    assert is_release_independent(str(UNIT / module)) is independent


def _module(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    release_independence._decided.clear()
    release_independence._own_imports_allowed.cache_clear()
    return str(path)


@pytest.mark.parametrize("text, independent", [
    ("import numpy\nfrom linear_layouts.dialect.f2 import rank\n", True),
    ("def f():\n    import triton\n", False),                                  # an import inside a function counts
    ("from linear_layouts.passes.drop_in import hook\n", False),               # the drop-in reads the release
    ("import sys\ndef f():\n    return sys.executable\n", False),           # another process
    ("import os\nos.system('true')\n", False),
    ("from concurrent.futures import ProcessPoolExecutor\n", False),
    ("import torch\n", False),
    ("from support import REPO\n", True),                                       # the package's constants
    ("from support.gpu import cuda_gpu_missing\n", False),                      # imports torch
    ("# a comment on subprocess costs nothing\nimport json\n", True),
])
def test_a_module_s_imports_decide(tmp_path, text, independent):
    assert is_release_independent(_module(tmp_path, "test_example.py", text)) is independent


def test_the_suite_marks_them_where_a_run_selects_by_the_mark():
    """conftest.py marks the tests of independent modules (this one's reaches only the standard
    library and the classifier) in a run whose ``-m`` names the mark, as ``make test-compat``'s
    does; a run that does not select by it (``make test``) does not pay for reading the imports."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("unit_conftest", UNIT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    class Item:
        path, keywords = Path(__file__), {}

        def __init__(self):
            self.marks = []

        def add_marker(self, mark):
            self.marks.append(mark.name)

    def marks_under(markexpr):
        config = type("Config", (), {"option": type("Option", (), {"markexpr": markexpr})()})()
        item = Item()
        conftest.pytest_collection_modifyitems(config, [item])
        return item.marks

    assert is_release_independent(__file__)
    assert marks_under("not commands and not release_independent") == ["release_independent"]
    assert marks_under("") == [] and marks_under(None) == []
