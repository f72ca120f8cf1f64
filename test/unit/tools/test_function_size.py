"""No function in ``passes/`` and ``lowering/`` longer than 80 lines (docstring and comments
included): a function that long does more than one job, and a reader cannot hold it at once.
Read from the source with :mod:`ast`, nothing imported."""

from __future__ import annotations

import ast

from support import REPO  # noqa: E402

MAX_LINES = 80
PACKAGES = ("passes", "lowering")


def long_functions() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_LINES:
                        found.append(f"{package}/{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_80_lines():
    assert long_functions() == []


def test_the_check_sees_a_long_function(tmp_path, monkeypatch):
    """The check fails where it should: a 81-line function in a scanned package is reported."""
    import test_function_size as check   # this module, to point it at a copy

    (tmp_path / "passes").mkdir()
    (tmp_path / "lowering").mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    (tmp_path / "passes" / "long.py").write_text(f"def long():\n{body}\n")
    monkeypatch.setattr(check, "REPO", tmp_path)
    assert check.long_functions() == ["passes/long.py:1 long (81 lines)"]
