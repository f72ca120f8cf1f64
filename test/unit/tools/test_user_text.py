"""The repository carries no history of the work: no issue numbers, items, sessions, waves or
"this tree" in any tracked file's text or name (history lives in git), and no remark or message
of the package points to a file an installed package lacks (``benchmarks/results/...``) or names
an issue.  Also: every number the README and the docs give in the text of a link to a committed
result is in that result."""

from __future__ import annotations

import ast
import re
import subprocess

import pytest
from support import REPO

HISTORY = re.compile(r"\b[Ii]ssues? #?\d+\b(?![-\d])|\bitem \d+\b|\b[a-z]+-session\b|\bthis wave\b")
# The words of a run diary: "issue 53", "issues 53 and 60", "Issue #53", "session(s)", "wave(s)",
# "this tree", "this week".  A verb is no issue number: "issues 16-byte vectors" is followed by a
# hyphen, "issue 128-bit loads" too.  What a user reads (the README, docs/, benchmarks/results/)
# is held to every word.
HISTORY_WORDS = re.compile(r"\bissues? #?\d+\b(?![-\d])|\bsessions?\b|\bwaves?\b|\bthis tree\b|\bthis week\b",
                           re.IGNORECASE)
# Code, comments and tests keep two technical terms: AMD's *wave* (its warp: "a wave of 64 lanes")
# and pytest's *session* (a hook's argument, "one pytest -n session"); a wave of work is caught
# with the word before it ("this wave", "the wave's", "wave 3"), a session anywhere else.
HISTORY_IN_CODE = re.compile(r"\bissues? #?\d+\b(?![-\d])|\bsessions?\b|\bthis tree\b|\bthis week\b"
                             r"|\b(?:this|that|last|next|previous|earlier|later|same) waves?\b|\bwave's\b|\bwaves? \d",
                             re.IGNORECASE)
# A file named for the history of the work: plan_issue25_pairs.md, gpu_tests_h100_session34.txt.
HISTORY_IN_NAME = re.compile(r"issues?[-_]?\d+|sessions?|(?<![a-z])waves?(?![a-z])", re.IGNORECASE)
THIRD_PARTY = ("benchmarks/port_corpus/",)      # others' code, carried as written with its licence
THIS_FILE = "test/unit/tools/test_user_text.py"  # it spells the words out to test the patterns
BINARY = (".gz", ".png", ".jpg", ".svg", ".pdf", ".whl", ".so", ".pyc")
USER_FACING = ("docs/", "README.md", "benchmarks/results/")
CODE_FOLDERS = ("dialect", "lowering", "passes", "tools")
USER_PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True, check=True)
    return [name for name in listed.stdout.split("\0")
            if name and not name.startswith(THIRD_PARTY) and name != THIS_FILE and (REPO / name).is_file()]


def text_of(name: str) -> str | None:
    """A tracked file's text, or None for a binary file."""
    if name.endswith(BINARY):
        return None
    data = (REPO / name).read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def pytest_term(text: str, match: re.Match) -> bool:
    """pytest's own session: an identifier (``session.items``, ``def f(session, ...)``) or the
    word after pytest ("one pytest -n session")."""
    return (match.group(0).lower().startswith("session")
            and (text[match.end():match.end() + 1] == "." or text[match.start() - 1:match.start()] == "("
                 or "pytest" in text[max(0, match.start() - 20):match.start()]))


def history_found(names, words: re.Pattern = HISTORY_WORDS) -> list[str]:
    found = []
    for name in names:
        if HISTORY_IN_NAME.search(name.rsplit("/", 1)[-1]):
            found.append(f"{name}: its name")
        text = text_of(name)
        if text is None:
            continue
        for match in words.finditer(text):
            if words is HISTORY_IN_CODE and pytest_term(text, match):
                continue
            found.append(f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)!r}")
    return found


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: p.name)
def test_a_page_has_no_history_of_the_work(page):
    text = page.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in HISTORY_WORDS.finditer(text)]
    assert found == [], f"{page.name}: {found} (history belongs in git)"


def test_the_docs_and_the_results_carry_no_history_in_text_or_name():
    """docs/, the README and benchmarks/results/: the files a user reads and their names."""
    assert history_found([name for name in tracked_files() if name.startswith(USER_FACING)]) == []


def test_no_tracked_file_carries_history_in_text_or_name():
    """Every tracked file but third-party code and binaries: code, comments, tests, scripts."""
    user_facing = [name for name in tracked_files() if name.startswith(USER_FACING)]
    found = history_found([name for name in tracked_files() if not name.startswith(USER_FACING)], HISTORY_IN_CODE)
    found += history_found(user_facing)
    assert found == [], f"{len(found)} places:\n" + "\n".join(found)


def test_the_history_words_are_caught():
    caught = ["issue 53", "issues 53 and 60", "Issue #53", "a session", "Sessions", "this wave", "Waves",
              "this tree", "this week"]
    assert [text for text in caught if not HISTORY_WORDS.search(text)] == []
    assert [text for text in ("issues 16-byte vectors", "issue 128-bit loads", "wavefront", "possession")
            if HISTORY_WORDS.search(text)] == []
    assert HISTORY_IN_NAME.search("plan_issue25_pairs.md") and HISTORY_IN_NAME.search("gpu_tests_h100_session34.txt")
    assert not HISTORY_IN_NAME.search("wavefronts.md")
    assert HISTORY_IN_CODE.search("on this wave's tree") and HISTORY_IN_CODE.search("the wave's final tree")
    assert not HISTORY_IN_CODE.search("a wave of 64 lanes runs in lockstep")


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
