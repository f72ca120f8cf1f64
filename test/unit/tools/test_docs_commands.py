"""Every command the README and the docs show still works as shown.

What a page shows is checked against what the code accepts today, cheaply (no kernel is
compiled): each flag of an ``ll-*`` or ``python -m linear_layouts`` command appears in that
command's ``--help``; each pass of a pipeline and each of its options is one ``ll-opt
--list-passes`` lists; each keyword of ``enable(...)`` is a parameter of ``linear_layouts.enable``;
each ``LINEAR_LAYOUTS*`` variable is read somewhere in the package; each flag of a ``python
benchmarks/...`` command is in that script; each repository path and result file named exists
(or is listed in ``benchmarks/harness/regenerate_results.py`` as taken out, with how to get it back);
each relative link leads to a file.  The README's ``ll-demo`` excerpt is checked against the
demo's output in ``test_demo.py``.
"""

from __future__ import annotations

import functools
import inspect
import re
import subprocess
import sys

import pytest
from support import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from harness import regenerate_results  # noqa: E402

PAGES = sorted([REPO / "README.md", REPO / "benchmarks" / "README.md", *(REPO / "docs").glob("*.md")])

TOOLS = {  # what a page writes -> the module whose main() runs it
    "ll-opt": "linear_layouts.tools.ll_opt",
    "ll-viz": "linear_layouts.tools.viewers.viz",
    "ll-demo": "linear_layouts.tools.demo",
    "ll-fuzz": "linear_layouts.tools.fuzz.conversion_fuzz",
    "ll-port": "linear_layouts.tools.port.command",
}
TOP_FOLDERS = ("dialect", "passes", "lowering", "tools", "test", "benchmarks", "examples", "docs")
FILE_KINDS = "py|md|json|txt|png|gz|mlir|test|html|toml|ttgir|svg|cfg"
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _code(text: str) -> list[str]:
    """Every code span and every line of every fenced block, comments after `#` dropped."""
    snippets = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        snippets += [re.split(r"\s+#\s", line)[0] for line in block.splitlines()]
    without_blocks = re.sub(r"```.*?```", "", text, flags=re.S)
    snippets += re.findall(r"`([^`\n]+)`", without_blocks)
    return snippets


@functools.lru_cache(maxsize=None)
def _all_code() -> tuple[tuple[str, str], ...]:
    return tuple((page.name, snippet) for page in PAGES for snippet in _code(page.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=None)
def _help(*command: str) -> str:
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=120, cwd=str(REPO))
    assert done.returncode == 0, (command, done.stderr[-2000:])
    return done.stdout + done.stderr


def _tool_help(tool: str) -> str:
    if tool == "report":
        return _help("-m", "linear_layouts", "report", "--help")
    return _help("-c", f"import sys; from {TOOLS[tool]} import main; sys.exit(main())", "--help")


def _commands():
    """(page, tool, command text) for every ll-* / python -m linear_layouts report command shown."""
    found = []
    for page, snippet in _all_code():
        for tool in TOOLS:
            for match in re.finditer(rf"(?:^|[;&|(]\s*|\.venv[\w-]*/bin/){re.escape(tool)}\b(.*)", snippet):
                found.append((page, tool, match.group(1)))
        for match in re.finditer(r"python -m linear_layouts report\b(.*)", snippet):
            found.append((page, "report", match.group(1)))
    return found


def test_the_pages_show_commands():
    tools = {tool for _, tool, _ in _commands()}
    assert tools == {"ll-opt", "ll-viz", "ll-demo", "ll-fuzz", "ll-port", "report"}


@pytest.mark.parametrize("tool", sorted([*TOOLS, "report"]))
def test_every_flag_shown_is_one_the_tool_has(tool):
    help_text = _tool_help(tool)
    missing = sorted({(page, flag) for page, t, rest in _commands() if t == tool
                      for flag in FLAG.findall(rest) if flag not in help_text})
    assert missing == []


@functools.lru_cache(maxsize=None)
def _passes() -> dict[str, set[str]]:
    listing = _tool_help_list_passes()
    passes: dict[str, set[str]] = {}
    current = None
    for line in listing.splitlines():
        name = re.match(r"  (ll-[a-z-]+)\s", line)
        option = re.match(r"      (\w+)=", line)
        if name:
            current = passes.setdefault(name.group(1), set())
        elif option and current is not None:
            current.add(option.group(1))
    return passes


def _tool_help_list_passes() -> str:
    return _help("-c", f"import sys; from {TOOLS['ll-opt']} import main; sys.exit(main())", "--list-passes")


def test_every_pass_and_option_shown_exists():
    passes = _passes()
    assert "ll-lower-conversions" in passes and "stock_gate" in passes["ll-lower-conversions"]
    wrong = []
    for page, snippet in _all_code():
        for name, options in re.findall(r"(ll-[a-z]+(?:-[a-z]+)+)(?:\{([^}]*)\})?", snippet):
            if name in TOOLS or name in ("ll-report",):
                continue
            if name not in passes:
                wrong.append((page, name))
                continue
            wrong += [(page, f"{name}{{{key}}}") for key in re.findall(r"(\w+)=", options)
                      if key not in passes[name]]
    assert wrong == []


def test_every_enable_keyword_shown_exists():
    from linear_layouts.passes.drop_in import hook# linear_layouts.enable passes its keywords on to it

    parameters = set(inspect.signature(hook.enable).parameters)
    shown = {(page, key) for page, snippet in _all_code()
             for call in re.findall(r"\benable\(([^)]*)\)", snippet) for key in re.findall(r"(\w+)=", call)}
    assert shown and [(page, key) for page, key in sorted(shown) if key not in parameters] == []


def test_every_environment_variable_shown_is_read():
    source = "\n".join(path.read_text(encoding="utf-8") for folder in ("passes", "lowering", "tools", "dialect")
                       for path in (REPO / folder).rglob("*.py"))
    source += (REPO / "__init__.py").read_text(encoding="utf-8") + (REPO / "__main__.py").read_text(encoding="utf-8")
    shown = {(page, name) for page, snippet in _all_code() for name in re.findall(r"\b(LINEAR_LAYOUTS\w*)", snippet)}
    assert shown and [(page, name) for page, name in sorted(shown) if f'"{name}"' not in source] == []


def test_every_benchmark_command_shown_exists_with_its_flags():
    """A command of a script still in the tree has only flags the script parses; one of an
    archived study (listed in regenerate_results.py) is shown as it ran, and its page names the
    commit that holds the script (``git show <commit>:benchmarks/studies/<name>.py``)."""
    archived = {entry.path: re.search(r"git show \S+", entry.note).group(0)
                for entry in regenerate_results.REMOVED if entry.folder == "studies"}
    wrong = []
    for page, snippet in _all_code():
        for script, rest in re.findall(r"python (benchmarks/[\w/]+\.py)\b([^`]*)", snippet):
            path = REPO / script
            if not path.exists():
                if script not in archived or not any(archived[script] in p.read_text(encoding="utf-8")
                                                     for p in PAGES if p.name == page):
                    wrong.append((page, script))
                continue
            text = _with_harness_modules(path.read_text(encoding="utf-8"))
            wrong += [(page, script, flag) for flag in FLAG.findall(rest) if f'"{flag}"' not in text]
    assert wrong == []


def _with_harness_modules(text: str) -> str:
    """A script's text and that of the ``benchmarks/harness`` modules it imports: a script may
    hand a command on to one (``compile_time.py corpus`` parses its flags in
    ``harness/compile_time_corpus.py``); likewise a study and the helper beside it that parses
    its flags (``studies/timed_rows.py``)."""
    names = re.findall(r"from harness(?:\.(\w+))? import (\w+)", text)
    modules = {module or name for module, name in names}
    helpers = set(re.findall(r"^from (\w+) import", text, re.M))
    return (text + "".join((REPO / "benchmarks" / "harness" / f"{m}.py").read_text(encoding="utf-8")
                           for m in sorted(modules) if (REPO / "benchmarks" / "harness" / f"{m}.py").exists())
            + "".join((REPO / "benchmarks" / "studies" / f"{m}.py").read_text(encoding="utf-8")
                      for m in sorted(helpers) if (REPO / "benchmarks" / "studies" / f"{m}.py").exists()))


@functools.lru_cache(maxsize=None)
def _tracked_names() -> frozenset:
    files = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True).stdout
    return frozenset(name.rsplit("/", 1)[-1] for name in files.split())


def _removed() -> set[str]:
    return {entry.name for entry in regenerate_results.REMOVED}


def test_every_path_shown_exists():
    removed = _removed()
    missing = []
    for page, snippet in _all_code():
        for token in re.findall(r"[\w./-]+", snippet):
            token = token.rstrip(".,:;")
            if any(c in token for c in "*<>{}") or token.startswith(("http", "/")):
                continue
            path = token.split(":")[0]
            if "/" in path and path.split("/")[0] in TOP_FOLDERS and re.search(rf"\.({FILE_KINDS})$|/$", path):
                if not (REPO / path).exists() and path.rsplit("/", 1)[-1] not in removed:
                    missing.append((page, path))
            elif snippet.strip() == token and re.fullmatch(r"\w[\w.-]*\.(md|json|txt|png|gz)", path):
                # a result file named on its own (an output name inside a command is not one)
                if path not in _tracked_names() and path not in removed:
                    missing.append((page, path))
    assert missing == []


def test_every_relative_link_leads_to_a_file():
    broken = []
    for page in PAGES:
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            if not (page.parent / path).exists():
                broken.append((page.name, target))
            elif anchor and path.endswith(".md") and anchor not in _anchors(page.parent / path):
                broken.append((page.name, target))
    assert broken == []


def _anchors(page) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces
    to hyphens (`## Seeing a layout: \\`ll-viz\\`` -> `seeing-a-layout-ll-viz`)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_readme_stays_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
