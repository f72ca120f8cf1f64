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


# Modules: one idea each, and a reader can hold one.  The adapter from a configuration to the
# pipeline (passes/drop_in/hook.py) stays an adapter.
MAX_MODULE_LINES = 600
HOOK_LINES = 350


def long_modules() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                found.append(f"{path.relative_to(REPO)} ({lines} lines)")
    return found


def test_no_module_is_longer_than_600_lines():
    assert long_modules() == []


def test_the_hook_is_an_adapter():
    assert len((REPO / "passes" / "drop_in" / "hook.py").read_text(encoding="utf-8").splitlines()) <= HOOK_LINES


# The choice between ours and stock (lowering/choosing) and the pass that asks it: small
# questions with few inputs and few ways out, as Triton's matchAndRewrite cases are.  The
# planners' candidate builders too: what travels together goes as one value (``PlanInputs``,
# ``ScratchSide``), not as a row of parameters.
CHOICE_PATH = ("lowering/choosing/*.py", "passes/lower_conversions.py", "passes/op_requests.py",
               "passes/islands/island_checks.py", "lowering/planner.py", "lowering/legacy.py")
MAX_PARAMETERS, MAX_RETURNS = 6, 4


def _returns(node) -> int:
    """The return statements of a function, not counting those of functions inside it."""
    count = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        count += isinstance(child, ast.Return) + _returns(child)
    return count


def wide_functions() -> list[str]:
    found = []
    for pattern in CHOICE_PATH:
        for path in sorted(REPO.glob(pattern)):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                args = node.args
                names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
                parameters = len(names) - (names[:1] in (["self"], ["cls"])) + bool(args.vararg) + bool(args.kwarg)
                returns = _returns(node)
                if parameters > MAX_PARAMETERS or returns > MAX_RETURNS:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} "
                                 f"({parameters} parameters, {returns} returns)")
    return found


def test_the_choice_path_has_no_wide_function():
    assert wide_functions() == []


def test_the_check_sees_a_wide_function(tmp_path, monkeypatch):
    import test_function_size as check

    (tmp_path / "lowering" / "choosing").mkdir(parents=True)
    returns = "\n".join(f"    if a == {i}:\n        return {i}" for i in range(5))
    (tmp_path / "lowering" / "choosing" / "wide.py").write_text(
        f"def wide(a, b, c, d, e, f, g):\n    return a\n\n\ndef many(a):\n{returns}\n")
    builder = "def _shared_candidates(src_full, src_u, dst_full, dst_u, bits, target, base):\n    return []\n"
    (tmp_path / "lowering" / "planner.py").write_text(builder)
    (tmp_path / "lowering" / "legacy.py").write_text(builder.replace("_shared_candidates", "legacy_vectors"))
    monkeypatch.setattr(check, "REPO", tmp_path)
    assert check.wide_functions() == ["lowering/choosing/wide.py:1 wide (7 parameters, 1 returns)",
                                      "lowering/choosing/wide.py:5 many (1 parameters, 5 returns)",
                                      "lowering/planner.py:1 _shared_candidates (7 parameters, 1 returns)",
                                      "lowering/legacy.py:1 legacy_vectors (7 parameters, 1 returns)"]
