"""The three forms of a Gluon program, made from its source by one AST rule.

The rule, stated before anything was measured; it applies to a whole file, kernels and host code
alike (a tutorial often builds a kernel's layout on the host and passes it as a constexpr):

* **expert**: the file as written.
* **auto**: every call of a distributed layout the author chose - ``<gl>.BlockedLayout(...)``,
  ``<gl>.SliceLayout(...)``, ``<gl>.DistributedLinearLayout(...)`` - becomes ``<gl>.AutoLayout()``;
  MMA, dot-operand, shared-memory and tensor-memory layouts (forced by the hardware) stay.  The
  layout argument of every ``<gl>.arange`` (the index vectors the loads and stores address
  memory with) becomes ``<gl>.CoalescedLayout()``.  A ``<gl>.convert_layout(x, L)`` whose ``L``
  is one of the replaced calls, or a name the file never assigns another layout call (a
  constexpr parameter, ``layout = gl.BlockedLayout(...)``), becomes ``x``: between two automatic
  layouts it names nothing.
* **newcomer**: every ``<gl>.BlockedLayout(spt, tpw, wpc, order)`` of rank r becomes a layout
  with one element per thread, lanes along the last dimension, warps along the first:
  ``BlockedLayout([1]*r, [1]*(r-1) + [32], [prod(wpc)] + [1]*(r-1), [r-1, ..., 0])`` (the warp
  count kept, as an expression of the original's); ``SliceLayout`` stays (it slices the
  replaced parent); a ``DistributedLinearLayout`` has no such rewrite and is an error.

``import pytest`` and ``@pytest.mark...`` decorators are dropped in every form (the harness reads
a test's parametrizations from the source itself: ``test_parameters``).  ``kernels_only`` keeps
just the imports (not torch's) and the ``gluon.jit``/``constexpr_function``/aggregate
definitions: what a compile without torch (the CPU dry run) needs.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import os
import sys

from harness.common import scratch_directory

FORMS = ("expert", "auto", "newcomer")
AUTHOR_LAYOUTS = {"BlockedLayout", "SliceLayout", "DistributedLinearLayout"}
_HOST_ONLY_MODULES = {"torch", "pytest", "importlib"}
_KERNEL_DECORATORS = ("jit", "constexpr_function", "aggregate")


class FormError(ValueError):
    """The rule cannot make this form of this source."""


def _call_of(node, names) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _layout_call(like: ast.Call, name: str, args=()) -> ast.Call:
    """``<gl>.<name>(*args)`` with the same module prefix as ``like``."""
    return ast.Call(func=ast.Attribute(value=like.func.value, attr=name, ctx=ast.Load()), args=list(args), keywords=[])


def _argument(call: ast.Call, position: int, keyword: str):
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _set_argument(call: ast.Call, position: int, keyword: str, value) -> None:
    if len(call.args) > position:
        call.args[position] = value
        return
    for k in call.keywords:
        if k.arg == keyword:
            k.value = value


def _hardware_layout_names(tree: ast.AST) -> set[str]:
    """Names the file assigns a layout call other than the author's (``mma = gl.NVMMADistributedLayout(...)``)."""
    names = set()
    for node in ast.walk(tree):
        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr.endswith("Layout") and value.func.attr not in AUTHOR_LAYOUTS:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


class _AutoForm(ast.NodeTransformer):
    def __init__(self, hardware_names: set[str]):
        self.hardware_names = hardware_names

    def visit_Call(self, node):
        target = node.args[1] if _call_of(node, {"convert_layout"}) and len(node.args) >= 2 else None
        author_target = target is not None and (
            (isinstance(target, ast.Name) and target.id not in self.hardware_names) or _call_of(target, AUTHOR_LAYOUTS))
        node = self.generic_visit(node)
        if author_target:
            return node.args[0]
        if _call_of(node, AUTHOR_LAYOUTS):
            return _layout_call(node, "AutoLayout")
        if _call_of(node, {"arange"}) and _argument(node, 2, "layout") is not None:
            _set_argument(node, 2, "layout", _layout_call(node, "CoalescedLayout"))
        return node


def _ints(values) -> ast.List:
    return ast.List(elts=[ast.Constant(v) for v in values], ctx=ast.Load())


class _NewcomerForm(ast.NodeTransformer):
    def visit_Call(self, node):
        node = self.generic_visit(node)
        if _call_of(node, {"DistributedLinearLayout"}):
            raise FormError(f"line {node.lineno}: a DistributedLinearLayout has no newcomer form")
        if not _call_of(node, {"BlockedLayout"}):
            return node
        per_thread, warps = _argument(node, 0, "size_per_thread"), _argument(node, 2, "warps_per_cta")
        if not isinstance(per_thread, ast.List) or not isinstance(warps, ast.List):
            raise FormError(f"line {node.lineno}: BlockedLayout's size_per_thread and warps_per_cta must be list "
                            "literals for the newcomer rule")
        rank = len(per_thread.elts)
        total_warps = warps.elts[0]
        for w in warps.elts[1:]:
            total_warps = ast.BinOp(left=total_warps, op=ast.Mult(), right=w)
        return _layout_call(node, "BlockedLayout", [
            _ints([1] * rank), _ints([1] * (rank - 1) + [32]),
            ast.List(elts=[total_warps] + [ast.Constant(1)] * (rank - 1), ctx=ast.Load()),
            _ints(range(rank - 1, -1, -1))])


def _is_pytest(node) -> bool:
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return isinstance(node, ast.Name) and node.id == "pytest"


def _imports_host_module(node) -> bool:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return any(n.split(".")[0] in _HOST_ONLY_MODULES for n in names)


def _is_kernel_definition(node) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return False
    return any(ast.unparse(d).split("(")[0].endswith(_KERNEL_DECORATORS) for d in node.decorator_list)


def _is_sibling_import(node) -> bool:
    """``t3 = importlib.import_module("03-async-copy")``: a tutorial importing another."""
    return isinstance(node, ast.Assign) and _call_of(node.value, {"import_module"})


def form_tree(tree: ast.Module, form: str, kernels_only: bool = False) -> ast.Module:
    if form not in FORMS:
        raise FormError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _imports_host_module(node):
            if kernels_only or any(a.name == "pytest" for a in node.names):
                continue
        elif kernels_only and not (isinstance(node, (ast.Import, ast.ImportFrom)) or _is_kernel_definition(node)):
            continue
        elif _is_sibling_import(node):
            continue
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            node.decorator_list = [d for d in node.decorator_list if not _is_pytest(d)]
        body.append(node)
    tree = ast.Module(body=body, type_ignores=[])
    if form == "auto":
        tree = _AutoForm(_hardware_layout_names(tree)).visit(tree)
    elif form == "newcomer":
        tree = _NewcomerForm().visit(tree)
    return ast.fix_missing_locations(tree)


def form_source(text: str, form: str, kernels_only: bool = False) -> str:
    return ast.unparse(form_tree(ast.parse(text), form, kernels_only))


def form_expression(text: str, form: str) -> str:
    """One host-side expression (a layout a launcher passes) under the same rule."""
    tree = ast.parse(text, mode="eval")
    wrapped = ast.Module(body=[ast.Expr(tree.body)], type_ignores=[])
    body = form_tree(wrapped, form).body
    return ast.unparse(body[0].value) if body else text


_LOADED = 0


def load_form(path: str, form: str, kernels_only: bool = False):
    """Import ``path`` in ``form`` as a new module (a fresh one each call: no kernel cache shared
    between calls).  The transformed source is written to a file, which ``gluon.jit`` reads."""
    global _LOADED
    _LOADED += 1
    with open(path) as f:
        text = form_source(f.read(), form, kernels_only)
    stem = os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    name = f"ll_gluon_form_{stem}_{form}_{_LOADED}"
    folder = scratch_directory("ll_gluon_forms_")
    file = os.path.join(folder, name + ".py")
    with open(file, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _constant(node: ast.expr):
    """The value of a parametrize list made of constants and arithmetic on them (``[2**20, 64 * 1024]``):
    ``ast.literal_eval`` refuses operators; the source is the pinned tutorial (its blob hash is
    checked), and names are not allowed."""
    if any(isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Lambda)) for n in ast.walk(node)):
        raise FormError(f"a parametrize list that is not constant: {ast.unparse(node)[:80]}")
    return eval(compile(ast.Expression(node), "<parametrize>", "eval"), {"__builtins__": {}})


def test_parameters(text: str, test_name: str) -> list[dict]:
    """Every parametrization of a pytest test function, from its ``@pytest.mark.parametrize``
    decorators (constant arguments), in pytest's order (the last decorator varies slowest)."""
    function = next((n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == test_name), None)
    if function is None:
        raise FormError(f"no test function {test_name!r}")
    axes = []
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.parametrize":
            names = [n.strip() for n in ast.literal_eval(decorator.args[0]).split(",")]
            values = [v if len(names) > 1 else (v,) for v in _constant(decorator.args[1])]
            axes.append([dict(zip(names, v)) for v in values])
    return [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*reversed(axes))]


def gap_recovery(newcomer: list[float], advised: list[float]) -> float:
    """How much of the newcomer-to-expert time gap the advice recovers, in geomean terms:
    ``(N - A) / (N - 1)`` with ``N`` and ``A`` the geomeans of newcomer / expert and newcomer
    with the advice applied / expert over the same kernels.  Example: N = 1.5, A = 1.05 ->
    0.9 (90% of the gap); nan where there is no gap (N <= 1)."""
    import statistics
    if not newcomer or len(newcomer) != len(advised):
        return float("nan")
    n, a = statistics.geometric_mean(newcomer), statistics.geometric_mean(advised)
    return (n - a) / (n - 1) if n > 1 else float("nan")
