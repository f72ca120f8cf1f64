"""What a user reads carries no history of the work: no issue numbers, items or sessions in the
README and the user's pages of docs/ (evidence pages, named below, keep their history), and no
remark or message of the package points to a file an installed package lacks
(``benchmarks/results/...``) or names an issue.  Also: every number the README and the docs
give in the text of a link to a committed result is in that result."""

from __future__ import annotations

import ast
import re

import pytest
from support import REPO

# Pages that record how things were measured and decided, history included.
EVIDENCE_PAGES = {"architecture.md", "benchmarks.md", "compile-time.md", "development.md", "enable-measured.md",
                  "gluon-forms-benchmark.md", "lowering-choice.md", "peer-gluon-benchmark.md", "reliability.md",
                  "status.md", "studies.md", "verified-facts.md"}
USER_PAGES = [REPO / "README.md"] + [page for page in sorted((REPO / "docs").glob("*.md"))
                                     if page.name not in EVIDENCE_PAGES]
HISTORY = re.compile(r"\b[Ii]ssues? #?\d+\b(?![-\d])|\bitem \d+\b|\b[a-z]+-session\b|\bthis wave\b")
CODE_FOLDERS = ("dialect", "lowering", "passes", "tools")


def test_every_evidence_page_exists():
    assert {page.name for page in (REPO / "docs").glob("*.md")} >= EVIDENCE_PAGES


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: p.name)
def test_a_users_page_has_no_history_of_the_work(page):
    text = page.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in HISTORY.finditer(text)]
    assert found == [], f"{page.name}: {found} (history belongs on an evidence page)"


def message_strings():
    """(file, line, text) of every string constant of the package's code that is not a docstring
    (nor a lowering rule's evidence): the remarks, warnings and errors a user reads are among them."""
    for folder in CODE_FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = set()
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
                    first = node.body[0]
                    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                        docstrings.add(id(first.value))
                # The file of a lowering rule's evidence (lowering/choosing/choice_order.py): a
                # path for the reader of the code, never part of a remark.
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Rule":
                    docstrings.update(id(a) for a in node.args[3:4])
                    docstrings.update(id(k.value) for k in node.keywords if k.arg == "evidence")
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                    yield path.relative_to(REPO), node.lineno, node.value


def test_no_message_points_to_what_an_installed_package_lacks():
    """Remarks pointed to benchmarks/results/*.md, which the wheel does not contain."""
    found = [(str(path), line) for path, line, text in message_strings()
             if "benchmarks/results/" in text or HISTORY.search(text)]
    assert found == []


NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?![\w])")


@pytest.mark.parametrize("page", [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_a_number_in_a_link_to_a_result_is_in_the_result(page):
    """The README said advice "1.004 on 4 kernels" where the result it links says 1.000."""
    wrong = []
    for label, target in re.findall(r"\[([^\]]+)\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
        result = (page.parent / target).resolve()
        if "benchmarks/results" not in result.as_posix() or not result.exists():
            continue
        text = result.read_text(encoding="utf-8")
        wrong += [(label, target, n) for n in NUMBER.findall(label) if n not in text and n.replace(",", "") not in text]
    assert wrong == []


def test_no_page_hard_codes_the_count_of_lit_tests():
    """The README said "96 lit tests" where lit finds 130: a count that grows with every test is
    read (lit --show-tests test/lit), never written down."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    found = [(page.name, m.group(0)) for page in pages
             for m in re.finditer(r"\b\d+ lit tests\b", page.read_text(encoding="utf-8"))]
    assert found == []


def test_the_algebra_page_shows_how_to_read_an_attribute():
    """docs/algebra.md never showed how to get from a #ttg.* string to a LinearLayout; its
    example is run here, with the results the page states."""
    from linear_layouts.dialect import to_linear_layout
    page = (REPO / "docs" / "algebra.md").read_text(encoding="utf-8")
    assert "## From a `#ttg.*` attribute to a `LinearLayout`" in page
    layout = to_linear_layout("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
                              "warpsPerCTA = [4, 1], order = [1, 0]}>", [32, 32])
    assert f"# {dict(layout.in_dims)}" in page
    assert f"# {layout.apply({'register': 1, 'lane': 1, 'warp': 0, 'block': 0})}" in page


def test_an_example_counts_its_kernels_as_it_has_them():
    """A bundled example that says how many kernels it holds says the number it holds."""
    words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    wrong = []
    for path in sorted((REPO / "examples").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        kernels = len(re.findall(r"^@(?:gluon|triton)\.jit\b", text, flags=re.M))
        docstring = ast.get_docstring(ast.parse(text)) or ""
        for word in re.findall(r"\bthese (two|three|four|five|six|seven|eight)\b", docstring):
            if words[word] != kernels:
                wrong.append(f"{path.name}: 'these {word}', {kernels} kernels")
    assert wrong == []
