"""The version is written once, in passes/version.py; pyproject.toml reads it from there."""

import re

from support import REPO  # noqa: E402


def test_the_version_is_written_once():
    pyproject = (REPO / "pyproject.toml").read_text()
    project_table = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project_table, re.M), "pyproject.toml spells a version of its own"
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M)
    assert 'version = { attr = "linear_layouts.passes.version.__version__" }' in pyproject
    assert re.search(r'^__version__ = "\d+\.\d+\.\d+"$', (REPO / "passes" / "version.py").read_text(), re.M)
