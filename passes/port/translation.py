"""A ``@triton.jit`` function's own text, edited into Gluon.

What changes, and nothing else (comments and formatting stay):

* ``@triton.jit`` becomes ``@gluon.jit``; ``tl.X`` becomes ``gl.X`` where Gluon has ``X``
  (``tl.math.exp`` -> ``gl.exp``, ``tl.debug_barrier`` -> ``gl.barrier``, ``tl.trans(x)`` ->
  ``gl.permute(x, (1, 0))``, ``tl.range(a, b)`` -> ``range(a, b)``);
* a function of ``triton.language`` written in Triton itself that Gluon lacks (``tl.sigmoid``,
  ``tl.argmax``, ``tl.cumsum`` under 3.6) is ported as a helper beside the kernel, as is every
  ``@triton.jit`` function of the user's that the kernel calls;
* ``tl.dot`` calls are recorded for :mod:`.matmul`; the calls that make a tensor from nothing
  (``TENSOR_SOURCES``: ``tl.arange``, ``tl.full``, ``tl.zeros``...) get their layouts from the
  Gluon build (:mod:`.gluon_build`).

Block pointers and tensor descriptors made in the kernel become calls of helpers beside it
(:mod:`.block_pointers`, :mod:`.tensor_descriptors`).  A construct with no Gluon form here
(``tl.cat``, random numbers) is a :class:`PortError` naming it and its line.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
import types
from dataclasses import dataclass, field

from .text_edits import EditedText


class PortError(Exception):
    """What the port cannot do, with where: one line for the user, nothing written."""


TENSOR_SOURCES = {"arange", "full", "zeros", "zeros_like", "full_like"}
_RENAMED = {"view": "reshape"}
_UNSUPPORTED = {
    "load_tensor_descriptor": "tl.load_tensor_descriptor (desc.load is ported)",
    "store_tensor_descriptor": "tl.store_tensor_descriptor (desc.store is ported)",
    "cat": "tl.cat",
    "rand": "random numbers (tl.rand)", "randn": "random numbers (tl.randn)", "randint": "random numbers (tl.randint)",
    "dot_scaled": "tl.dot_scaled",
}


def _is_triton_language(value) -> bool:
    return isinstance(value, types.ModuleType) and (value.__name__ == "triton.language" or
                                                    value.__name__.startswith("triton.language."))


def _jit_options(jit_fn) -> str:
    """The original's own ``triton.jit`` options the port keeps, as ``gluon.jit``'s arguments:
    an integer it does not specialize (``do_not_specialize=["T"]``) must not be specialized by
    the port either, or the port would be faster for a reason the original declined."""
    parameters = list(inspect.signature(jit_fn.fn).parameters)

    def names(values):
        return [parameters[v] if isinstance(v, int) else v for v in values or ()]
    options = []
    for option in ("do_not_specialize", "do_not_specialize_on_alignment"):
        if names(getattr(jit_fn, option, None)):
            options.append(f"{option}={names(getattr(jit_fn, option))!r}")
    if getattr(jit_fn, "noinline", None):
        options.append("noinline=True")
    return f"({', '.join(options)})" if options else ""


def not_specialized(jit_fn) -> set:
    """The parameters ``jit_fn``'s launches do not specialize (divisibility, equal to 1)."""
    parameters = list(inspect.signature(jit_fn.fn).parameters)
    found = set()
    for option in ("do_not_specialize", "do_not_specialize_on_alignment"):
        for value in getattr(jit_fn, option, None) or ():
            found.add(parameters[value] if isinstance(value, int) else value)
    return found


def _extra_import(name: str, value) -> str:
    """The import of a function of ``triton.language.extra`` (libdevice): from the module that
    picks the target's library where it has the function, else from where it is defined."""
    import importlib
    function = getattr(value, "__name__", name)
    module = value.__module__
    try:
        if hasattr(importlib.import_module("triton.language.extra.libdevice"), function):
            module = "triton.language.extra.libdevice"
    except ImportError:
        pass
    return f"from {module} import {function}" + (f" as {name}" if name != function else "")


def _jit_function(value):
    from triton.runtime.jit import JITFunction
    return value if isinstance(value, JITFunction) else None


@dataclass
class FunctionText:
    """One function's source and where it sits in its file."""

    fn: object                      # the Python function
    file: str
    first_line: int
    indent: int
    tree: ast.FunctionDef
    lines: list

    @classmethod
    def of(cls, fn) -> "FunctionText":
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as error:
            raise PortError(f"cannot read the source of {getattr(fn, '__name__', fn)}: {error}") from None
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
        tree = ast.parse(dedented).body[0]
        return cls(fn, os.path.realpath(inspect.getsourcefile(fn)), first, indent, tree,
                   [line.rstrip("\n") for line in lines])

    def position(self, node) -> tuple:
        """(file, line, 0-based col) of ``node``'s start."""
        return self.file, self.first_line + node.lineno - 1, node.col_offset + self.indent

    def end(self, node) -> tuple:
        return self.first_line + node.end_lineno - 1, node.end_col_offset + self.indent

    def start(self, node) -> tuple:
        return self.first_line + node.lineno - 1, node.col_offset + self.indent

    def mlir_position(self, node) -> tuple:
        """The position Triton's locations give ``node`` (columns from 1)."""
        file, line, col = self.position(node)
        return file, line, col + 1


@dataclass
class Translation:
    """One function edited into Gluon (:func:`translate`)."""

    source: FunctionText
    edits: EditedText
    dots: list = field(default_factory=list)             # ast.Call nodes of tl.dot
    helpers: dict = field(default_factory=dict)          # name in the port -> JITFunction to port too
    constants: dict = field(default_factory=dict)        # global name -> value (numbers, constexprs)
    modules: dict = field(default_factory=dict)          # global name -> module (libdevice and the like)
    imports: dict = field(default_factory=dict)          # global name -> the import line that defines it
    block_pointers: bool = False                         # uses tl.make_block_ptr (see .block_pointers)
    block_accesses: list = field(default_factory=list)   # access_calls.BlockAccess of each load / store
    descriptor_calls: list = field(default_factory=list)  # access_calls.DescriptorCall of each make / load / store

    @property
    def name(self) -> str:
        return self.source.tree.name


def translate(jit_fn, helper_name: str = None) -> Translation:
    """Edit ``jit_fn`` (a ``triton.jit`` function) into Gluon text; ``helper_name`` renames it
    (a function of ``triton.language`` ported beside the kernel)."""
    return _Translator(jit_fn, helper_name).run()


class _Translator:
    """One function's edits (see the module docstring), made in one walk of its tree."""

    def __init__(self, jit_fn, helper_name):
        self.jit_fn = jit_fn
        self.text = FunctionText.of(jit_fn.fn)
        self.edits = EditedText(list(self.text.lines), self.text.first_line)
        self.result = Translation(self.text, self.edits)
        self.scope = jit_fn.fn.__globals__
        self.helper_name = helper_name
        tree = self.text.tree
        self.local_names = {arg.arg for arg in tree.args.args} | {
            node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
        # nodes already edited (with everything under them), decorators included
        self.handled = {id(sub) for decorator in tree.decorator_list for sub in ast.walk(decorator)}
        from .access_calls import RENAMED, block_pointer_names
        self.block_pointer_names = block_pointer_names(tree, lambda func: self.language_name(func) in RENAMED)
        self.descriptor_names = block_pointer_names(tree, lambda func: self.language_name(func) == "make_tensor_descriptor")

    def run(self) -> Translation:
        self.rewrite_header()
        for node in ast.walk(self.text.tree):
            if isinstance(node, ast.Call):
                self.rewrite_call(node)
            if id(node) in self.handled:
                continue
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self.rewrite_attribute(node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in self.local_names:
                self.record_global(node)
        return self.result

    def line_of(self, node) -> int:
        return self.text.first_line + node.lineno - 1

    def rewrite_header(self) -> None:
        """The decorators become one ``@gluon.jit``; a ported library function gets its new name."""
        text, tree, edits = self.text, self.text.tree, self.edits
        if tree.decorator_list:
            first, last = tree.decorator_list[0], tree.decorator_list[-1]
            (line, col), (end_line, end_col) = text.start(first), text.end(last)
            if line != end_line:
                for extra in range(line + 1, end_line + 1):
                    edits.replace(extra, 0, len(text.lines[extra - text.first_line]), "")
                end_col = len(text.lines[line - text.first_line])
            edits.replace(line, col, end_col, "gluon.jit" + _jit_options(self.jit_fn))
        if self.helper_name:
            row, _ = text.start(tree)      # the def line (decorators stand above it)
            at = text.lines[row - text.first_line].index("def ") + 4
            edits.replace(row, at, at + len(tree.name), self.helper_name)

    def root_module(self, node):
        """The triton.language module an attribute chain starts from, or None."""
        if isinstance(node, ast.Name) and node.id not in self.local_names:
            value = self.scope.get(node.id)
            return value if _is_triton_language(value) else None
        return None

    def language_name(self, node):
        """``tl.X`` / ``tl.math.X`` / ``core.X`` / ``X`` imported from triton.language -> "X"."""
        if isinstance(node, ast.Attribute):
            if self.root_module(node.value) is not None:
                return node.attr
            if isinstance(node.value, ast.Attribute) and self.root_module(node.value.value) is not None and \
                    node.value.attr in ("math", "core", "standard", "semantic"):
                return node.attr
        if isinstance(node, ast.Name) and node.id not in self.local_names:
            import triton.language as tl
            value = self.scope.get(node.id)
            if value is not None and getattr(tl, node.id, None) is value and not isinstance(value, types.ModuleType):
                return node.id     # from triton.language import sum
        return None

    def rewrite_call(self, node: ast.Call) -> None:
        """Dots recorded; ``tl.trans``, ``tl.range`` and block pointers rewritten."""
        from .access_calls import RENAMED, BlockAccess, is_block_access
        name = self.language_name(node.func)
        text, edits = self.text, self.edits
        from .access_calls import DescriptorCall
        block_access = name in ("load", "store") and is_block_access(node, self.block_pointer_names)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("load", "store") and isinstance(func.value, ast.Name) \
                and func.value.id in self.descriptor_names:
            self.result.descriptor_calls.append(DescriptorCall(self.result, node, func.attr))
        elif name == "make_tensor_descriptor":
            self.handled.update(id(sub) for sub in ast.walk(node.func))
            start, end = text.start(node.func), text.end(node.func)
            edits.replace(start[0], start[1], end[1], "_make_tensor_descriptor")
            self.result.descriptor_calls.append(DescriptorCall(self.result, node, "make"))
        elif name in RENAMED or block_access:
            self.handled.update(id(sub) for sub in ast.walk(node.func))
            start, end = text.start(node.func), text.end(node.func)
            edits.replace(start[0], start[1], end[1], RENAMED.get(name, f"_{name}_block"))
            self.result.block_pointers = True
            if block_access:
                self.result.block_accesses.append(BlockAccess(self.result, node, name))
        elif name == "dot":
            self.result.dots.append(node)
            self.handled.update(id(sub) for sub in ast.walk(node.func))
        elif name == "trans":      # tl.trans(x) / tl.trans(x, 1, 0) -> gl.permute(x, (1, 0))
            self.handled.update(id(sub) for sub in ast.walk(node.func))
            dims = [ast.unparse(a) for a in node.args[1:]]
            order = "(" + ", ".join(dims) + ")" if dims else "(1, 0)"
            start, end = text.start(node), text.end(node)
            argument, argument_end = text.start(node.args[0]), text.end(node.args[0])
            if argument[0] != start[0] or argument_end[0] != end[0]:
                raise PortError(f"{text.file}:{self.line_of(node)}: tl.trans over several lines")
            edits.replace(start[0], start[1], argument[1], "gl.permute(")
            edits.replace(end[0], argument_end[1], end[1], f", {order})")
        elif name == "range":      # a plain loop: the port writes no pipelining (num_stages, unrolling)
            self.handled.update(id(sub) for sub in ast.walk(node.func))
            start, end = text.start(node.func), text.end(node.func)
            edits.replace(start[0], start[1], end[1], "range")
            for keyword in node.keywords:
                if keyword.arg not in (None, "step"):
                    self.drop_keyword(node, keyword)

    def drop_keyword(self, call, keyword) -> None:
        text = self.text
        start = (text.first_line + keyword.lineno - 1, keyword.col_offset + text.indent)
        end = text.end(keyword.value)
        if start[0] != end[0]:
            raise PortError(f"{text.file}:{start[0]}: a keyword over several lines")
        before = text.lines[start[0] - text.first_line].rfind(",", 0, start[1])
        self.edits.replace(start[0], before, end[1], "")

    def rewrite_attribute(self, node: ast.Attribute) -> None:
        """``tl.X`` -> ``gl.X`` (or the name Gluon gives it, or a ported library helper)."""
        name = self.language_name(node)
        if name is None:
            return
        self.handled.update(id(sub) for sub in ast.walk(node))
        start, end = self.text.start(node), self.text.end(node)
        if name in _UNSUPPORTED:
            raise PortError(f"{self.text.file}:{self.line_of(node)}: the port cannot express {_UNSUPPORTED[name]} yet")
        self.edits.replace(start[0], start[1], end[1], self.gluon_name(name, node))

    def gluon_name(self, name: str, node) -> str:
        import triton.experimental.gluon.language as gl
        import triton.language as tl
        if name == "range":
            return "range"
        if name == "debug_barrier":   # gl.barrier from 3.7; gl.thread_barrier in 3.6
            return "gl.barrier" if hasattr(gl, "barrier") else "gl.thread_barrier"
        if name in _RENAMED:
            return f"gl.{_RENAMED[name]}"
        if hasattr(gl, name):
            return f"gl.{name}"
        helper = _jit_function(getattr(tl, name, None)) or _jit_function(getattr(tl.standard, name, None))
        if helper is None and getattr(getattr(tl.core, name, None), "__triton_builtin__", False):
            # a builtin of Triton's core that Gluon does not re-export (a ported library function
            # of Triton's uses it): Gluon's semantics are Triton's, it takes Gluon's tensors
            self.result.modules["tl"] = tl
            return f"tl.core.{name}"
        if helper is None:
            raise PortError(f"{self.text.file}:{self.line_of(node)}: tl.{name} has no Gluon form the port knows")
        self.result.helpers[f"_tl_{name}"] = helper
        return f"_tl_{name}"

    def record_global(self, node: ast.Name) -> None:
        """A global the function reads: a library name, a helper to port, a module to import,
        a constant to write; anything else cannot be carried."""
        value = self.scope.get(node.id)
        if value is None:
            return            # a builtin (range, min, float...)
        if self.language_name(node) is not None:
            start, end = self.text.start(node), self.text.end(node)
            self.edits.replace(start[0], start[1], end[1], self.gluon_name(node.id, node))
        elif _jit_function(value) is not None:
            self.result.helpers[node.id] = value
        elif isinstance(value, types.ModuleType):
            if value.__name__ != "triton" and not _is_triton_language(value):
                self.result.modules[node.id] = value
        elif getattr(value, "__module__", "").startswith("triton.language.extra"):
            self.result.imports[node.id] = _extra_import(node.id, value)     # libdevice's rsqrt, tanh...
        elif getattr(getattr(value, "fn", None), "__module__", "").startswith("triton.language"):
            # a constexpr function of Triton's library (a ported library function uses it)
            self.result.imports[node.id] = f"from {value.fn.__module__} import {value.fn.__name__}" + (
                f" as {node.id}" if node.id != value.fn.__name__ else "")
        elif isinstance(value, (int, float, bool)) or type(value).__name__ == "constexpr":
            self.result.constants[node.id] = getattr(value, "value", value)
        else:
            raise PortError(f"{self.text.file}:{self.line_of(node)}: the port cannot carry the global {node.id!r} "
                            f"({type(value).__name__})")
