"""The package's import graph: no import circles in ``dialect/`` and ``passes/``, and no arrow
pointing up the layers (tools -> passes -> lowering -> dialect; ``examples/`` and the root
``__init__``/``__main__`` sit on top).

The graph is read from the source with :mod:`ast`, without importing anything: every
``import linear_layouts.x``, ``from linear_layouts.x import y`` and relative import, at module
level or inside a function (a lazy import is still a dependency), is an arrow from the module
that contains it to the module it names.  ``from package import name`` is an arrow to
``package.name`` when that is a module of ours, else to the package's ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from support import REPO  # noqa: E402

ROOT = REPO
PACKAGE = "linear_layouts"
SUBPACKAGES = ("dialect", "lowering", "passes", "tools", "examples")

# Lower layers first: an arrow may point to the same layer or a lower one, never higher.
# The root package ("") is on top.  examples/ holds the kernels that ll-demo compiles: it
# imports nothing of ours, and the demo (a tool) imports it, so it sits on the tools' level.
LAYER_RANK = {"dialect": 0, "lowering": 1, "passes": 2, "tools": 3, "examples": 3, "": 4}
LAYERS_WITHOUT_CYCLES = ("dialect", "passes")

def module_files() -> dict[str, Path]:
    """Every module of the package, dotted name -> file."""
    modules = {PACKAGE: ROOT / "__init__.py", PACKAGE + ".__main__": ROOT / "__main__.py"}
    for sub in SUBPACKAGES:
        for path in sorted((ROOT / sub).rglob("*.py")):
            if not (path.parent / "__init__.py").exists():
                continue                      # a folder of files that are not modules of ours (tools/install)
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join((PACKAGE, *(parts[:-1] if parts[-1] == "__init__" else parts)))
            modules[name] = path
    return modules


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ours that ``module`` imports, anywhere in its file."""
    targets = set()
    package = _package_of(module, path)

    def resolve(name: str) -> None:
        # `import a.b.c` depends on a.b.c (and Python runs a and a.b first, but those are
        # the package __init__ files, whose own imports are checked where they stand).
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            targets.add(name)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    resolve(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            elif node.module and (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
                source = node.module
            else:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                resolve(submodule if submodule in known else source)
    targets.discard(module)
    return targets


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {module: imports_of(module, path, known) for module, path in files.items()}


# Files Python runs at a process's start, before any of our layers (report's sitecustomize, put on
# the PYTHONPATH of a reported program's children): they stand with the root package, whose
# import is all they do.
START_UP_FILES = {"linear_layouts.tools.report.site.sitecustomize"}


def layer_of(module: str) -> str:
    if module in START_UP_FILES:
        return ""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in SUBPACKAGES) else ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_relative_absolute_and_function_level_imports():
    graph = import_graph()
    # relative, module level
    assert "linear_layouts.dialect.linear_layout" in graph["linear_layouts.dialect.encodings_common"]
    # relative, inside a function: ll-opt reads the pass registry only for --list-passes
    assert "linear_layouts.passes.registry" in graph["linear_layouts.tools.ll_opt"]
    # absolute, inside a function (the demo switches the plugin on around one compile)
    assert "linear_layouts.passes.drop_in.hook" in graph["linear_layouts.tools.demo"]
    # `from .passes import hook` inside a function of the root package
    assert "linear_layouts.passes.drop_in.hook" in graph["linear_layouts"]


def test_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_dialect_and_passes():
    graph = import_graph()
    within = {}
    for layer in LAYERS_WITHOUT_CYCLES:
        members = {m for m in graph if layer_of(m) == layer}
        within.update({m: {t for t in graph[m] if t in members} for m in members})
    found = cycles(within)
    message = []
    for component in found:
        edges = sorted((a, b) for a in component for b in within[a] if b in component)
        message.append("cycle among " + ", ".join(component) + ":\n" +
                       "\n".join(f"    {a} -> {b}" for a, b in edges))
    assert not found, "\n".join(message)


def test_no_arrow_points_up_the_layers():
    graph = import_graph()
    upward = sorted((a, b) for a, targets in graph.items() for b in targets
                    if LAYER_RANK[layer_of(b)] > LAYER_RANK[layer_of(a)])
    assert not upward, "imports that point up the layers (tools -> passes -> lowering -> dialect):\n" + \
        "\n".join(f"    {a} -> {b}" for a, b in upward)


def test_the_report_model_imports_no_renderer():
    """The report's data model and its renderers are apart, without an import circle (the
    failure guarded against: the report and its HTML renderer importing each other, one lazily)."""
    graph = import_graph()
    report = {m for m in graph if m.startswith("linear_layouts.tools.report")}
    within = {m: {t for t in graph[m] if t in report} for m in report}
    assert not cycles(within)
    renderers = {"linear_layouts.tools.report.markdown", "linear_layouts.tools.report.html_pages"}
    assert not graph["linear_layouts.tools.report.model"] & (renderers | {"linear_layouts.tools.report.run",
                                                                          "linear_layouts.tools.report.text"})
    assert not graph["linear_layouts.tools.report.text"] & (renderers | {"linear_layouts.tools.report.run"})
    for renderer in renderers:
        assert "linear_layouts.tools.report.run" not in graph[renderer]


def test_the_ir_layer_imports_nothing_above_it():
    """``passes/ir`` (the bindings, the snapshot, the text editor ``module_lines``) is
    the bottom of ``passes``: it imports only itself, ``lowering`` and ``dialect``, never another
    part of ``passes`` (``framework``, ``barriers``, ``assign``, ...)."""
    graph = import_graph()
    ir = "linear_layouts.passes.ir"
    upward = sorted((a, b) for a, targets in graph.items() if a == ir or a.startswith(ir + ".")
                    for b in targets if layer_of(b) == "passes" and not (b == ir or b.startswith(ir + ".")))
    assert not upward, "passes/ir imports from above it:\n" + "\n".join(f"    {a} -> {b}" for a, b in upward)


def test_the_passes_import_nothing_of_the_drop_in():
    """``passes/drop_in`` is how the passes reach ``triton.compile``; a pass never reaches back
    into it (a pass runs the same under ``ll-opt`` as inside a compile)."""
    graph = import_graph()
    drop_in = "linear_layouts.passes.drop_in"
    inside = lambda name: name == drop_in or name.startswith(drop_in + ".")  # noqa: E731
    backward = sorted((a, b) for a, targets in graph.items()
                      if layer_of(a) == "passes" and not inside(a) for b in targets if inside(b))
    assert not backward, "passes that import the drop-in:\n" + "\n".join(f"    {a} -> {b}" for a, b in backward)


PASSES_TOP_LEVEL_LIMIT = 12


def test_the_top_of_passes_holds_the_framework_and_the_passes_only():
    """At most 12 modules at ``passes/``'s top (its ``__init__`` counted): the framework, the
    registry, the options and the passes; the Triton integration has its own folder
    (``passes/drop_in``), as do the islands, the IR layer, and each family of passes."""
    top = sorted(path.name for path in (ROOT / "passes").glob("*.py"))
    assert len(top) <= PASSES_TOP_LEVEL_LIMIT, f"{len(top)} modules at passes/'s top: {top}"
    assert (ROOT / "passes" / "drop_in" / "hook.py").is_file()


TOOLS_TOP_LEVEL_LIMIT = 12
TOOLS_ROOMS = ("corpus", "fuzz", "port", "report", "viewers")


def test_the_top_of_tools_holds_what_the_commands_share_and_ll_opt_and_ll_demo():
    """At most 12 modules at ``tools/``'s top (its ``__init__`` counted): what every command
    shares (``cli``), ``ll-opt`` with its dump reader, and ``ll-demo``; the rest have rooms named
    for what they are: ``report/`` (the report, its renderers and the parts they compute from),
    ``viewers/`` (``ll-viz``), ``port/`` (``ll-port``), ``fuzz/`` (``ll-fuzz`` and the random
    inputs the tests draw), ``corpus/`` (the lit corpus's generators)."""
    top = sorted(path.name for path in (ROOT / "tools").glob("*.py"))
    assert len(top) <= TOOLS_TOP_LEVEL_LIMIT, f"{len(top)} modules at tools/'s top: {top}"
    for room in TOOLS_ROOMS:
        assert (ROOT / "tools" / room / "__init__.py").is_file(), room


ENVIRONMENT_MODULE = "linear_layouts.passes.drop_in.environment"


def environment_uses(path: Path) -> list[int]:
    """The lines of ``path`` that touch the process's environment: ``os.environ``, ``os.getenv``,
    ``os.putenv``, ``os.unsetenv`` or ``from os import environ`` (and the like)."""
    names = ("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv")
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in names and isinstance(node.value, ast.Name) \
                and node.value.id == "os":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in names for a in node.names):
            lines.append(node.lineno)
    return lines


def test_only_the_configuration_module_reads_the_environment():
    """Every setting the package honours is read in one place,
    ``passes/drop_in/environment.py`` (typed, checked, handed to workers as one JSON); every other
    module, the tools included, asks it (``environment.settings()``, ``lowering.settings.current()``,
    ``environment.variable``)."""
    found = {name: environment_uses(path) for name, path in module_files().items() if name != ENVIRONMENT_MODULE}
    readers = {name: lines for name, lines in found.items() if lines}
    assert not readers, "modules that read the environment themselves:\n" + "\n".join(
        f"    {name}: lines {lines}" for name, lines in sorted(readers.items()))
    assert environment_uses(module_files()[ENVIRONMENT_MODULE])    # (the check sees a use where there is one)
