"""benchmarks/harness/ is what the scripts share: the scripts and the studies import it, never the
other way round (an arrow up would make a helper depend on a harness that may be merged or moved)."""

import ast
import re

from support import REPO

BENCHMARKS = REPO / "benchmarks"


def _imported_modules(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_harness_module_imports_a_script_or_a_study():
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} | {p.stem for p in (BENCHMARKS / "studies").glob("*.py")}
    assert len(scripts) >= 15
    upward = {(p.name, name) for p in (BENCHMARKS / "harness").glob("*.py") for name in _imported_modules(p) & scripts}
    assert upward == set()


def test_no_script_edits_sys_path_links_the_checkout_or_imports_the_tests():
    """The scripts import the installed package and harness/ (issue 54): none adds to ``sys.path``
    (but for the folder of Triton's own Gluon tutorials, which import one another by name), links
    the checkout somewhere importable, or imports test/'s helpers as a module."""
    found = []
    for path in sorted(BENCHMARKS.rglob("*.py")):
        if "results" in path.relative_to(BENCHMARKS).parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            if (re.search(r"sys\.path\s*(\.(insert|append|extend)\b|\[[^]]*\]\s*=|\+?=)", code)
                    and "TUTORIALS_DIR" not in code) or "os.symlink(" in code:
                found.append(f"{path.name}:{number}: {line.strip()}")
        found += [f"{path.name}: imports {name}" for name in _imported_modules(path) & {"support", "test", "on_path"}]
    assert found == []


def test_the_package_says_what_it_holds():
    """Every module of harness/ is named in its __init__.py's docstring."""
    text = (BENCHMARKS / "harness" / "__init__.py").read_text(encoding="utf-8")
    modules = {p.stem for p in (BENCHMARKS / "harness").glob("*.py") if p.stem != "__init__"}
    assert len(modules) >= 10
    assert sorted(m for m in modules if f"``{m}``" not in text and f"harness/{m}.py" not in text) == []
