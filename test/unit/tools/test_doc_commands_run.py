"""Every command the README and the docs show, run as a new user types it: from a folder outside
the clone, and from inside a clone, under the installed release.  Each must end with status 0,
no traceback and no ``error:`` line.

The commands are the lines of the pages' ``sh`` blocks that start with ``ll-`` or ``python -m
linear_layouts``.  A few cannot run as typed, each for a reason the test names (a ``make`` target,
a placeholder such as ``A B`` or ``FILE``, a file an earlier step of the page makes, a GPU);
docs/your-kernel.md is run block by block, in page order, by ``test_your_kernel_page.py``.  The
files the pages call the user's own (``kernel.ttgir``) are a kernel of the lit corpus.

Minutes of CPU: marked ``commands`` (``pytest -m "not commands"`` leaves it out).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")

from support import REPO  # noqa: E402

pytestmark = pytest.mark.commands

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMAND = re.compile(r"(ll-(opt|viz|demo|fuzz)\b|python -m linear_layouts\b|make\b)")
# The user's own kernel, as the pages name it: a transposing kernel of the lit corpus (sm_90).
OWN_FILES = {"kernel.ttgir": REPO / "test" / "lit" / "corpus" / "cuda90" / "transpose_32bit.ttgir"}
CLONE_PATHS = ("test/", "docs/examples/")     # files a clone has and an installed package does not


def page_commands() -> list[tuple[str, str]]:
    """(page, command) for every command line of the pages' shell blocks, each command once."""
    seen = {}
    for page in PAGES:
        for language, block in re.findall(r"```(\w*)\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
            if language not in ("", "sh", "bash", "shell"):
                continue
            for line in re.sub(r"\\\n\s*", "", block).splitlines():   # a line continued with a backslash is one
                line = re.split(r"\s+#\s", line)[0].strip()
                if COMMAND.match(line):
                    seen.setdefault(line, page.name)
    return [(page, command) for command, page in seen.items()]


def why_not_as_typed(page: str, command: str, inside_clone: bool) -> str:
    """Why ``command`` is not run as typed here ("" where it is)."""
    if command.startswith("make "):
        return "a make target (make test runs the suites; CI runs make demo)"
    if page == "your-kernel.md":
        return "docs/your-kernel.md runs block by block in test_your_kernel_page.py"
    if re.search(r"(?<![\w-])(A B|FILE)(?![\w-])", command):
        return "placeholders (A B: two layouts of yours; FILE: a module of yours)"
    if "dump.txt" in command:
        return "reads dump.txt, made by an earlier step of the page (run in test_your_kernel_page.py)"
    if re.search(r">\s*docs/", command):
        return "rewrites a committed file of the docs"
    if "--measure" in command:
        return "needs a GPU"
    if not inside_clone and any(f" {path}" in command for path in CLONE_PATHS):
        return "names a file of the clone, which an installed package does not hold"
    return ""


def outside_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    for name, source in OWN_FILES.items():
        (folder / name).write_text(source.read_text(encoding="utf-8"))
    return folder


def clone_folder(tmp_path: Path) -> Path:
    """A folder that reads as the clone (its top-level folders linked in) where what the
    commands write lands in the folder, not in the repository."""
    folder = outside_folder(tmp_path)
    for entry in REPO.iterdir():
        if entry.name.startswith(".") or entry.name in OWN_FILES:
            continue
        if entry.is_dir() and (entry / "__init__.py").exists() or entry.name in ("docs", "examples", "test"):
            (folder / entry.name).symlink_to(entry)
    return folder


def run(command: str, folder: Path) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PYTEST_XDIST") and name != "LINEAR_LAYOUTS_STOCK_GATE"}
    env.update(TRITON_CACHE_DIR=str(folder / "triton-cache"), TRITON_DEFAULT_FP_FUSION="1",
               PATH=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]))
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=folder, env=env, timeout=600)


def test_the_pages_show_commands():
    commands = [command for _, command in page_commands()]
    assert any(c.startswith("python -m linear_layouts report") for c in commands)
    assert any(c.startswith("ll-opt") for c in commands) and any(c.startswith("ll-viz") for c in commands)


@pytest.mark.parametrize("where", ["outside the clone", "inside the clone"])
def test_every_command_works_as_typed(where, tmp_path):
    inside = where == "inside the clone"
    folder = clone_folder(tmp_path) if inside else outside_folder(tmp_path)
    failed, skipped, ran = [], [], 0
    for page, command in page_commands():
        reason = why_not_as_typed(page, command, inside)
        if reason:
            skipped.append(f"{page}: {command}: {reason}")
            continue
        done = run(command, folder)
        ran += 1
        if done.returncode != 0 or "Traceback" in done.stderr or re.search(r"^\S+: error:", done.stderr, re.M):
            failed.append(f"{page}: {command} (status {done.returncode}):\n{done.stderr[-1500:]}")
    print(f"{where}: {ran} commands ran; not as typed:\n  " + "\n  ".join(skipped))
    assert ran >= 5 and failed == [], "\n\n".join(failed)
