"""The shape of ``lowering/``: its imports form no cycle, and only the emitters spell vendor
instruction names (plans, the planner, the verifier and the cost model use the typed steps of
``lowering.instructions``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import linear_layouts.lowering as lowering

LOWERING = Path(lowering.__file__).parent
MODULES = sorted(p.stem for p in LOWERING.glob("*.py") if p.stem != "__init__")


def _imports(module: str) -> set[str]:
    """The sibling modules ``module`` imports, at its top or inside functions."""
    tree = ast.parse((LOWERING / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:  # from .cost import x
                found.add(node.module.split(".")[0])
            else:  # from . import emit_amd, island_writer
                found.update(alias.name for alias in node.names)
    return found & set(MODULES)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_lowering_imports_have_no_cycle():
    graph = {m: _imports(m) for m in MODULES}
    assert "cost" not in graph["plan"] and "describe" in graph and "cost" in graph["describe"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


# Instruction names of either vendor, as string literals.  island_sim reads emitted text back,
# so it parses vendor text too.  (Counting instructions in compiled assembly is a tool's job:
# tools/fuzz/testcases.py.)
MNEMONIC = re.compile(r"^(st\.shared|ld\.shared|ldmatrix|stmatrix|ds_write|ds_read|ds_bpermute|s_barrier|bar\.sync|"
                      r"bar\.warp|barrier\.cluster|shfl\.)")
SPELLERS = {"emit_nvidia", "emit_amd", "island_sim", "sim_ptx"}   # sim_ptx: island_sim's PTX handlers


def test_only_the_emitters_spell_instruction_names():
    offenders = []
    for module in MODULES:
        if module in SPELLERS:
            continue
        tree = ast.parse((LOWERING / f"{module}.py").read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                    and MNEMONIC.match(node.value):
                offenders.append(f"{module}.py:{node.lineno}: {node.value!r}")
    assert not offenders, offenders
