"""Which test modules cannot depend on the installed Triton, read from their imports.

CI runs the whole unit suite under the newest Triton (``make test``) and again under 3.6.0
(``make test-compat``).  A test whose code reaches nothing of Triton gives the same answer under
both, so its second run tries nothing new.  Such a module is found from the source alone: every
module it imports, at any level of the file, and every module those import in turn (our own
package's modules and the helpers of ``test/support`` followed to their files), is the standard
library, numpy, hypothesis, pytest or one of ours, and none of them imports Triton or torch or
starts another process.  ``conftest.py`` marks the tests of such modules ``release_independent``
and ``make test-compat`` leaves them out (``-m "not release_independent"``).

Example: ``test_linear_layout.py`` imports ``linear_layouts.dialect.linear_layout``, hypothesis
and pytest, and ``dialect/`` imports no Triton (``test_import_graph.py``): independent.
``test_attributes.py`` imports ``support.triton_ll_oracle``, which runs Triton's C++ in a
subprocess: dependent.  So is any test that uses ``support.release_seed``, which tries other
examples under each release on purpose.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path
from typing import Optional

SUPPORT = Path(__file__).resolve().parent
REPO = SUPPORT.parents[1]
PACKAGE = "linear_layouts"          # the repository's root is the package
THIRD_PARTY_ALLOWED = ("numpy", "hypothesis", "pytest", "_pytest")
# Imports that read nothing of the installed release: (our file, the module it imports) -> why.
HARMLESS = {("lowering/target.py", "triton.backends.compiler"):
            "Target.gpu_target builds a GPUTarget, a plain record; a test that compiles with it "
            "imports Triton's compiler itself"}
# A module that uses one of these starts another process, which may import anything (the
# modules subprocess, multiprocessing and concurrent are not allowed imports either).
PROCESS_CALLS = {"sys": ("executable",), "os": ("system", "popen", "fork", "execv", "execve", "execvp",
                                                 "spawnv", "spawnl", "posix_spawn")}


def _file_of(module: str) -> Optional[Path]:
    """The file of one of our modules (``linear_layouts.x.y`` or ``support.x``), None if it is
    not a module of ours (an attribute such as ``support.REPO``)."""
    parts = module.split(".")
    if parts[0] == PACKAGE:
        base = REPO.joinpath(*parts[1:])
    elif parts[0] == "support":
        base = SUPPORT.joinpath(*parts[1:])
    elif parts[0] == "harness":                 # benchmarks/harness, as the benchmark tests import it
        base = REPO.joinpath("benchmarks", *parts)
    else:
        return None
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    """The dotted name of a file of ours (the base of its relative imports)."""
    in_support = path.parent == SUPPORT or SUPPORT in path.parents
    parts = list(path.relative_to(SUPPORT.parent if in_support else REPO).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if in_support else ".".join([PACKAGE, *parts])


def _imports(path: Path) -> set[str]:
    """Every module the file names in an import, anywhere in it; ``from a import b`` names
    ``a`` and, where it is a module of ours, ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = _module_name(path) if (REPO in path.parents) else ""
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names
                         if _file_of(f"{module}.{alias.name}") is not None)
    return names


def _third_party_allowed(name: str) -> bool:
    top = name.split(".")[0]
    if top in THIRD_PARTY_ALLOWED or top == "__future__":
        return True
    return top in sys.stdlib_module_names and top not in ("subprocess", "multiprocessing", "concurrent")


def _starts_a_process(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
               and node.attr in PROCESS_CALLS.get(node.value.id, ()) for node in ast.walk(tree))


def is_release_independent(path: str) -> bool:
    """Whether the module at ``path`` and everything it imports, followed through our own
    modules, reach nothing that could read the installed Triton (see the module docstring)."""
    return _independent(Path(path).resolve(), frozenset())


@functools.lru_cache(maxsize=None)
def _own_imports_allowed(path: Path) -> tuple[bool, tuple[Path, ...]]:
    """(whether the file itself starts no process and imports nothing outside what is allowed,
    the files of ours it imports)."""
    if _starts_a_process(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        return False, ()
    relative = str(path.relative_to(REPO)) if REPO in path.parents else ""
    followed = []
    for name in _imports(path):
        file = _file_of(name)
        if file is not None:
            followed.append(file)
        elif name.split(".")[0] in (PACKAGE, "support", "harness") or (relative, name) in HARMLESS:
            continue                         # a name imported from a module followed, or harmless
        elif not _third_party_allowed(name):
            return False, ()
    return True, tuple(sorted(set(followed)))


_decided: dict = {}


def _independent(path: Path, visiting: frozenset) -> bool:
    if path in _decided:
        return _decided[path]
    if path in visiting:                     # an import circle: decided where it started
        return True
    allowed, followed = _own_imports_allowed(path)
    result = allowed and all(_independent(f, visiting | {path}) for f in followed)
    if not visiting or not result:           # a True inside a circle may rest on the start
        _decided[path] = result
    return result
