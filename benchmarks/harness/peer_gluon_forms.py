"""Gluon kernels of other projects, loaded as written or in the automatic form.

The automatic form: one rule, stated before anything was measured, applied mechanically to the
kernel source (and to the layout expressions a launch passes as constexpr arguments):

* every ``<gl>.BlockedLayout(...)`` and ``<gl>.SliceLayout(...)`` call becomes ``<gl>.AutoLayout()``
  (MMA, dot-operand, shared-memory and linear layouts stay: the hardware or the author's explicit
  map forces them);
* the layout argument of every ``<gl>.arange`` becomes ``<gl>.CoalescedLayout()`` where the front
  end accepts it and ``<gl>.AutoLayout()`` where it does not: a kernel is compiled with
  ``CoalescedLayout`` aranges first (``arange="coalesced"``) and, only where Gluon's front end
  rejects that source (an error raised while the Python is traced, before any MLIR pass runs),
  with ``AutoLayout`` aranges (``arange="auto"``); which one a kernel got is reported
  (``by_the_arange_rule`` tries them, for every script that compiles or launches a form);
* a ``<gl>.convert_layout(x, L)`` whose ``L`` is one of the replaced calls, or a name the file
  never binds to another layout call, becomes ``x`` (between two automatic layouts it names
  nothing: the same clause as ``gluon_forms.py``'s auto form).

``kernel_source`` keeps of a file only what compiling its kernels needs, without torch or the
project's own package: ``from __future__`` and Triton imports (a ``try`` block of Triton imports
too), the ``gluon.jit`` / ``gluon.constexpr_function`` / ``aggregate`` definitions with their
other decorators dropped (FLA's ``fla_cache_autotune``: the harness launches one configuration of
the autotuner's list itself), and the top-level assignments those definitions read.

``install_api_shims``: the one compatibility shim, for sources written against a later Gluon
than the GPU machine's 3.6.0 - names that a later release renamed are aliased to 3.6.0's
functions (``async_copy.async_copy_global_to_local`` -> ``async_copy_global_to_shared``,
``tma.async_load`` -> ``tma.async_copy_global_to_shared``, ``tma.async_store`` ->
``tma.async_copy_shared_to_global``); nothing is aliased where the name exists.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys

from harness.common import scratch_directory
from harness.gluon_forms import _argument, _call_of, _hardware_layout_names, _layout_call, _set_argument

AUTO_LAYOUTS = {"BlockedLayout", "SliceLayout"}
ARANGE_LAYOUTS = {"coalesced": "CoalescedLayout", "auto": "AutoLayout"}
FORMS = ("as_written", "auto")
_KERNEL_DECORATORS = ("jit", "constexpr_function", "aggregate")


class _AutoForm(ast.NodeTransformer):
    def __init__(self, hardware_names: set[str], arange_layout: str):
        self.hardware_names = hardware_names
        self.arange_layout = arange_layout
        self.replaced = 0

    def visit_Call(self, node):
        target = node.args[1] if _call_of(node, {"convert_layout"}) and len(node.args) >= 2 else None
        drop_convert = target is not None and (
            (isinstance(target, ast.Name) and target.id not in self.hardware_names) or _call_of(target, AUTO_LAYOUTS))
        node = self.generic_visit(node)
        if drop_convert:
            self.replaced += 1
            return node.args[0]
        if _call_of(node, AUTO_LAYOUTS):
            self.replaced += 1
            return _layout_call(node, "AutoLayout")
        if _call_of(node, {"arange"}) and _argument(node, 2, "layout") is not None:
            self.replaced += 1
            _set_argument(node, 2, "layout", _layout_call(node, self.arange_layout))
        return node


def front_end_rejects(error) -> bool:
    """Whether ``error`` (an exception, or None) is Gluon's front end rejecting the source: a
    ``CompilationError``, raised while the Python is traced."""
    from triton.compiler.errors import CompilationError
    return isinstance(error, CompilationError)


def by_the_arange_rule(form: str, attempt):
    """The outcome of compiling or launching a kernel of ``form`` by the automatic form's arange
    rule (the module docstring).  ``attempt(arange, rejected)`` compiles or launches the form
    with ``arange``'s aranges and returns (its outcome, the error it failed with or None);
    ``rejected`` is the front end's error on ``CoalescedLayout`` aranges (None while there is
    none).  The as-written form is attempted once (its aranges are left as written); the
    automatic form with ``"coalesced"``, and with ``"auto"`` only where ``front_end_rejects`` that
    attempt's error.  The last attempt's outcome is returned, whether it failed or not."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, not {form!r}")
    outcome, error = attempt("coalesced", None)
    if form == "auto" and front_end_rejects(error):
        outcome, _ = attempt("auto", error)
    return outcome


def auto_tree(tree: ast.AST, arange: str = "coalesced") -> ast.AST:
    """The automatic form of a parsed source (module or expression)."""
    if arange not in ARANGE_LAYOUTS:
        raise ValueError(f"arange must be one of {', '.join(ARANGE_LAYOUTS)}, not {arange!r}")
    return ast.fix_missing_locations(_AutoForm(_hardware_layout_names(tree), ARANGE_LAYOUTS[arange]).visit(tree))


def auto_source(text: str, arange: str = "coalesced") -> str:
    return ast.unparse(auto_tree(ast.parse(text), arange))


def auto_expression(text: str, arange: str = "coalesced") -> str:
    """One host-side layout expression (``gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])``) in the
    automatic form."""
    return ast.unparse(auto_tree(ast.parse(text, mode="eval"), arange).body)


def _is_triton_import(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module == "__future__" or (node.module or "").split(".")[0] == "triton"
    if isinstance(node, ast.Import):
        return all(a.name.split(".")[0] == "triton" for a in node.names)
    if isinstance(node, ast.Try):   # ``try: from triton... import x`` / ``except ImportError: x = None``
        return all(_is_triton_import(n) for n in node.body)
    return False


def _is_kernel_definition(node) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.ClassDef)) and any(
        ast.unparse(d).split("(")[0].endswith(_KERNEL_DECORATORS) for d in node.decorator_list)


def _names_read(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def kernel_tree(text: str) -> ast.Module:
    """The parts of a source file its kernels need (see the module docstring)."""
    tree = ast.parse(text)
    kernels = []
    for node in tree.body:
        if _is_kernel_definition(node):
            node.decorator_list = [d for d in node.decorator_list
                                   if ast.unparse(d).split("(")[0].endswith(_KERNEL_DECORATORS)]
            kernels.append(node)
    needed = _names_read(kernels)
    body = []
    for node in tree.body:
        if _is_triton_import(node) or node in kernels:
            body.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in needed for t in targets):
                body.append(node)
    return ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))


def kernel_source(text: str, form: str = "as_written", arange: str = "coalesced") -> str:
    return _kernel_source_and_lines(text, form, arange)[0]


def _kernel_source_and_lines(text: str, form: str, arange: str) -> tuple[str, dict]:
    """The kernel source, and for each of its lines the line of ``text`` it came from."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, not {form!r}")
    tree = kernel_tree(text)
    if form == "auto":
        tree = auto_tree(tree, arange)
    source = ast.unparse(tree)
    lines = {}
    for new, old in zip(ast.walk(ast.parse(source)), ast.walk(tree)):
        if hasattr(new, "lineno") and hasattr(old, "lineno"):
            lines.setdefault(new.lineno, old.lineno)
    return source, lines


# loaded file -> (the carried file it was made from, {its line: the carried file's line})
ORIGIN: dict = {}


def original_location(path: str, line: int) -> str:
    """``path:line`` of a loaded form, as the carried file's ``name:line`` where it is one."""
    if path not in ORIGIN:
        return f"{path}:{line}"
    source, lines = ORIGIN[path]
    return f"{os.path.basename(source)}:{lines.get(line, '?')}"


def install_api_shims() -> list[str]:
    """Alias the later Gluon names a carried source calls to 3.6.0's (see the module docstring);
    the aliases made (empty on a release that has the names)."""
    from triton.experimental.gluon.language.nvidia.ampere import async_copy
    from triton.experimental.gluon.language.nvidia.hopper import tma
    made = []
    for module, new, old in ((async_copy, "async_copy_global_to_local", "async_copy_global_to_shared"),
                             (tma, "async_load", "async_copy_global_to_shared"),
                             (tma, "async_store", "async_copy_shared_to_global")):
        if not hasattr(module, new) and hasattr(module, old):
            setattr(module, new, getattr(module, old))
            made.append(f"{module.__name__.rsplit('.', 1)[-1]}.{new} = {old}")
    return made


_LOADED = 0


def load_kernels(path: str, form: str = "as_written", arange: str = "coalesced"):
    """Import the kernels of ``path`` in ``form`` as a new module (a fresh one each call: no kernel
    shared between calls).  The source is written to a file, which ``gluon.jit`` reads."""
    global _LOADED
    _LOADED += 1
    install_api_shims()
    with open(path) as f:
        text, lines = _kernel_source_and_lines(f.read(), form, arange)
    stem = os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    name = f"ll_peer_gluon_{stem}_{form}_{arange}_{_LOADED}"
    file = os.path.join(scratch_directory("ll_peer_gluon_"), name + ".py")
    with open(file, "w") as f:
        f.write(text)
    ORIGIN[file] = (path, lines)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
