"""What a loop's text reads and assigns, read from its Python syntax tree: the pieces
:mod:`.pipelining` decides from whether a ``tl.dot`` loop can be rotated (its loads copied ahead).

    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)           # accumulated(...) -> "acc"
        a_ptrs += BLOCK_K * stride_ak     # advance(..., "a_ptrs") -> the step
"""

from __future__ import annotations

import ast


def enclosing_loop(tree, node):
    """The innermost ``for`` whose body holds ``node``."""
    found = None
    for candidate in ast.walk(tree):
        if isinstance(candidate, ast.For) and any(sub is node for stmt in candidate.body for sub in ast.walk(stmt)):
            if found is None or candidate.lineno >= found.lineno:
                found = candidate
    return found


def names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node is not None else set()


def assigned(statements) -> dict:
    """name -> [statements assigning it], over ``statements`` and everything nested in them."""
    found = {}
    for statement in statements:
        for node in ast.walk(statement):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(node)
    return found


def advance(statement, name):
    """The step of ``name += step`` / ``name = name + step`` / ``name = tl.advance(name, step)``
    (a block pointer), else None."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
        return statement.value
    value = getattr(statement, "value", None)
    if isinstance(statement, ast.Assign) and isinstance(value, ast.Call) and len(value.args) == 2 and \
            getattr(value.func, "attr", getattr(value.func, "id", None)) == "advance" and \
            isinstance(value.args[0], ast.Name) and value.args[0].id == name:
        return value.args[1]
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.BinOp) and \
            isinstance(statement.value.op, ast.Add) and isinstance(statement.value.left, ast.Name) and \
            statement.value.left.id == name:
        return statement.value.right
    return None


def accumulated(statement, call):
    """The name ``statement`` accumulates ``call`` into (``acc = call(a, b, acc)``,
    ``acc = call(a, b, acc=acc)`` or ``acc += call(a, b)``), else None."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add) and \
            isinstance(statement.target, ast.Name) and len(call.args) == 2 and \
            not any(kw.arg == "acc" for kw in call.keywords):
        return statement.target.id
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        target = statement.targets[0].id
        given = call.args[2] if len(call.args) == 3 else next((kw.value for kw in call.keywords if kw.arg == "acc"), None)
        if isinstance(given, ast.Name) and given.id == target:
            return target
    return None


def constant(node):
    """The value of a constant expression (``"zero"``), else None."""
    return node.value if isinstance(node, ast.Constant) else None


def is_zero(node) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value in (0, 0.0, None))
