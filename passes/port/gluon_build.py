"""The edited kernel built by Gluon's own front end, which tells the port where layouts go.

Gluon's front end is the authority on what a Gluon kernel may be: it gives every tensor a
layout by the same rules for every op (a reduction's result is a slice of its input's layout,
``x[:, None]`` needs a slice along that dimension, two operands must have one layout) and it
refuses two different layouts meeting in one op.  So the port does not re-implement those rules:
it builds the edited kernel (``tl`` -> ``gl``, no layout written) with Gluon's front end and
answers, at the few places a layout is chosen, what Triton's compile of the original chose there
(:class:`~.original.TritonCompile`):

* a tensor made from nothing (``arange``, ``full``, ``zeros``) gets the layout Triton gave the op
  at that position; where Triton gave it several (it recomputes index arithmetic in each layout
  it is needed in), the first, and a use that needs another converts; where none (CSE merged it
  with an equal op elsewhere), the first of an equal op; else it stays automatic, and Gluon's
  resolution carries a layout to it from the ops it meets;
* a load, store or atomic gets the layout Triton's coalescing chose for it: an automatic pointer
  is set to it, a pointer with another layout is converted;
* two operands with different layouts (a broadcast, a ``where``, a store's value against its
  pointer) and an ``expand_dims`` of a slice along another dimension: the operand whose layout is
  not Triton's at that position is converted (a recorded :class:`Conversion`, which the port writes
  into the source as ``gl.convert_layout``).

After the front end, Triton's ``gluon-resolve-auto-encodings`` gives every automatic value its
layout, and each source's layout is read back from its value.

Where the ops of a position are: Triton's locations put an op at the source expression that made
it.  Under triton 3.6 and 3.7 an op is at the sub-expression whose visit set the location last (a
visit sets it when it starts and again, to its own node, when it ends); from 3.8 at the
expression itself, with columns counted from the ``def``'s.  The recorder follows the visits the
same way, so a position of the edited text and one of the original's compile name the same node.
"""

from __future__ import annotations

import ast
import contextlib
import os
from dataclasses import dataclass, field

from .translation import TENSOR_SOURCES, PortError

ANCHORED_OPS = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")
SOURCE_OPS = ("tt.make_range", "tt.splat", "arith.constant")
OPERANDS_MEET = "operands in two layouts"     # why a binary op's operand is converted to the other's layout


@dataclass
class Conversion:
    """A ``gl.convert_layout`` the port writes: the operand expression (a span of the
    edited module) converted to ``encoding`` (MLIR text) at its use."""

    span: tuple                       # (line, col, end line, end col) in the edited module
    encoding: str
    shape: tuple
    why: str


@dataclass
class Source:
    """A tensor made from nothing, and the value that tells its layout once resolved."""

    span: tuple
    value: object
    encoding: str = ""
    shape: tuple = ()


@dataclass
class Trial:
    conversions: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    expansions: list = field(default_factory=list)    # (span, n): write n x gl.expand_dims(..., 0)
    module_text: str = ""


def _version_restores_locations() -> bool:
    """Whether this Triton's visit restores the location it found (3.8 on, which also counts
    columns from the ``def``'s), or leaves the one of the node it visited last (3.6, 3.7): read
    from the code generator itself, as the two behaviours differ by release."""
    import inspect

    from triton.compiler.code_generator import CodeGenerator
    return "self.begin_col + node.col_offset" in inspect.getsource(CodeGenerator.visit)


_KNOWN_LAYOUTS = []    # (Gluon layout object, MLIR text) of every layout made from Triton's text


def layout_object(encoding: str, shape: tuple):
    """The Gluon layout object of an MLIR layout attribute."""
    import triton.experimental.gluon.language as gl
    from .layouts import gluon_layout_expression
    expression = gluon_layout_expression(encoding, shape)
    layout = eval(expression, {"gl": gl})   # our own expression text: gl.BlockedLayout(...) and the like
    if not any(known == layout for known, _ in _KNOWN_LAYOUTS):
        _KNOWN_LAYOUTS.append((layout, encoding))
    return layout


def layout_text(layout) -> str:
    """The MLIR text of a Gluon layout object the port made or Gluon derived from one."""
    from triton.experimental.gluon.language._layouts import BlockedLayout, SliceLayout
    for known, text in _KNOWN_LAYOUTS:
        if known == layout:
            return text
    if isinstance(layout, SliceLayout):
        return f"#ttg.slice<{{dim = {layout.dim}, parent = {layout_text(layout.parent)}}}>"
    if isinstance(layout, BlockedLayout):
        return (f"#ttg.blocked<{{sizePerThread = {list(layout.size_per_thread)}, threadsPerWarp = "
                f"{list(layout.threads_per_warp)}, warpsPerCTA = {list(layout.warps_per_cta)}, order = {list(layout.order)}}}>")
    raise PortError(f"the port cannot write the layout {layout}")


class _Recorder:
    """The state of one trial build (what the patched front end saw and did)."""

    def __init__(self, original, positions, files):
        self.original = original          # TritonCompile
        self.positions = positions        # (codegen file, node) -> the original's (file, line, col) key
        self.files = files                # the edited files (where user nodes are)
        self.stack = []                   # (codegen, node) of visits under way, user files only
        self.last_started = None          # the user node whose visit set the location last (3.6's location)
        self.origins = {}                 # id(value) -> (value, [(codegen, node) of each visit giving it])
        self.trial = Trial()
        self.restores = _version_restores_locations()
        self.dry = 0                      # > 0 inside a loop body's first, discarded visit
        self.laid_out = {}                # id -> value: values given a layout on purpose (kept alive)

    # -- where the op being made is, as Triton's locations say
    def current_key(self):
        if self.restores:
            if not self.stack:
                return None
            codegen, node = self.stack[-1]
        else:
            if self.last_started is None:
                return None
            codegen, node = self.last_started
        return self.positions(codegen, node)

    def current_function(self) -> str:
        return self.stack[-1][0].jit_fn.__name__ if self.stack else "?"

    def triton_layouts(self, *names, shape=None) -> list:
        key = self.current_key()
        if key is None:
            return []
        found = []
        for op in self.original.at(key, *names):
            if shape is not None and tuple(op.shape) != tuple(shape):
                continue
            if op.encoding not in found:
                found.append(op.encoding)
        return found

    def anywhere(self, name: str, shape: tuple, text: str = "") -> list:
        """The layouts of ``name`` ops of ``shape`` anywhere in the original (where CSE merged
        the op of this position into an equal one elsewhere), in program order."""
        found = []
        for _, op in self.original.ops:
            if op.name == name and tuple(op.shape) == tuple(shape) and text in op.text and op.encoding not in found:
                found.append(op.encoding)
        return found

    def dot_results(self, shape: tuple) -> list:
        return [op.encoding for _, op in self.original.ops
                if op.name in ("ttng.warp_group_dot", "tt.dot", "ttng.tc_gen5_mma", "ttng.tmem_load")
                and tuple(op.shape) == shape]

    def saw(self, value, codegen, node) -> None:
        """``node`` (of ``codegen``'s function) gave ``value``."""
        entry = self.origins.get(id(value))
        if entry is None or entry[0] is not value:
            entry = self.origins[id(value)] = (value, [])
        entry[1].append((codegen, node))

    def origin_of(self, value):
        """The expression of the source ``value`` comes from at the op being built: of the
        expressions that gave it (a variable is read in several places), an operand of that op,
        else the last one."""
        entry = self.origins.get(id(value))
        if entry is None or entry[0] is not value:
            return None
        visits = entry[1]
        if self.stack:
            operands = {id(node) for node in _operand_nodes(self.stack[-1][1])}
            for codegen, node in reversed(visits):
                if id(node) in operands:
                    return codegen, node
        return visits[-1]

    def convert(self, semantic, value, layout, why: str):
        """Convert ``value`` (a tensor the user's text made) to ``layout``; record it."""
        origin = self.origin_of(value)
        if origin is None:
            raise PortError(f"{self.where()}: two layouts meet on a value the port cannot name in the source ({why})")
        codegen, node = origin
        shape = tuple(value.type.shape)
        converted = semantic.convert_layout(value, layout)
        self.laid_out[id(converted)] = converted
        if not self.dry:
            self.trial.conversions.append(Conversion(span_of(codegen, node),
                                                     layout_text(layout), shape, why))
        self.saw(converted, codegen, node)
        return converted

    def where(self) -> str:
        key = self.current_key()
        return f"{os.path.basename(key[0])}:{key[1]}" if key else "the kernel"


def _operand_nodes(node) -> list:
    """The expressions an op made at ``node`` takes as operands."""
    if isinstance(node, ast.Call):
        return list(node.args) + [keyword.value for keyword in node.keywords]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Compare):
        return [node.left] + list(node.comparators)
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, (ast.UnaryOp,)):
        return [node.operand]
    if isinstance(node, ast.AugAssign):
        return [node.target, node.value]
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        return [node.value]
    return list(ast.iter_child_nodes(node))


def span_of(codegen, node) -> tuple:
    """``node``'s span in the edited module's lines (columns from 0, as ``ast`` counts)."""
    return (codegen.begin_line + node.lineno, node.col_offset,
            codegen.begin_line + node.end_lineno, node.end_col_offset)


def _is_auto(layout) -> bool:
    from triton.experimental.gluon.language._layouts import AutoLayout
    return isinstance(layout, AutoLayout)


def _distributed(value) -> bool:
    ty = getattr(value, "type", None)
    return ty is not None and hasattr(ty, "layout") and getattr(ty, "is_block", lambda: False)()


class _FrontEndAnswers:
    """What the patched front end answers at each place a layout is chosen (one method each,
    called in place of Gluon's own, which each then calls)."""

    def __init__(self, recorder: _Recorder, saved: dict):
        self.recorder = recorder
        self.saved = saved          # Gluon's own methods, by name

    def prefer(self, semantic, first, second, why):
        """(first, second) with one layout: the one Triton had here, else the first's."""
        # a value already laid out on purpose (an access's pointer, a conversion) keeps its layout
        fixed = self.recorder.laid_out
        if id(first) in fixed and id(second) not in fixed:
            return first, self.recorder.convert(semantic, second, first.type.layout, why)
        if id(second) in fixed and id(first) not in fixed:
            return self.recorder.convert(semantic, first, second.type.layout, why), second
        shape = semantic._broadcast_shapes(first.type.get_block_shapes(), second.type.get_block_shapes())
        chosen = None
        for encoding in self.recorder.triton_layouts(shape=shape):
            candidate = layout_object(encoding, shape)
            if candidate in (first.type.layout, second.type.layout):
                chosen = candidate
                break
        if chosen is None or chosen == first.type.layout:
            return first, self.recorder.convert(semantic, second, first.type.layout, why)
        return self.recorder.convert(semantic, first, chosen, why), second

    def expand_rank(self, semantic, value, rank: int, other_layout):
        """``value`` with leading dimensions added up to ``rank``, as Triton broadcasts and
        Gluon does not: written ``gl.expand_dims(value, 0)`` (in a slice of the other
        operand's layout, converted first where it is not)."""
        from triton.experimental.gluon.language._layouts import SliceLayout
        origin = self.recorder.origin_of(value)
        if origin is None:
            raise PortError(f"{self.recorder.where()}: operands of two ranks on a value the port cannot name")
        codegen, node = origin
        if not self.recorder.dry:
            self.recorder.trial.expansions.append((span_of(codegen, node), rank - len(value.type.shape)))
        while len(value.type.shape) < rank:
            parent = other_layout
            for _ in range(rank - len(value.type.shape) - 1):
                parent = SliceLayout(0, parent)
            if not _is_auto(value.type.layout) and value.type.layout != SliceLayout(0, parent):
                value = self.recorder.convert(semantic, value, SliceLayout(0, parent), "a slice of the operand it meets")
            value = self.saved["expand_dims"](semantic, value, 0)
        return value

    def broadcast_impl_value(self, semantic, lhs, rhs):
        if _distributed(lhs) and _distributed(rhs) and len(lhs.type.shape) != len(rhs.type.shape):
            if len(lhs.type.shape) < len(rhs.type.shape):
                lhs = self.expand_rank(semantic, lhs, len(rhs.type.shape), rhs.type.layout)
            else:
                rhs = self.expand_rank(semantic, rhs, len(lhs.type.shape), lhs.type.layout)
        if _distributed(lhs) and _distributed(rhs):
            left, right = lhs.type.layout, rhs.type.layout
            if not _is_auto(left) and not _is_auto(right) and left != right:
                lhs, rhs = self.prefer(semantic, lhs, rhs, OPERANDS_MEET)
        return self.saved["broadcast_impl_value"](semantic, lhs, rhs)

    def expand_dims(self, semantic, input, axis):
        from triton.experimental.gluon.language._layouts import SliceLayout
        if _distributed(input) and not _is_auto(input.type.layout):
            layout = input.type.layout
            if not (isinstance(layout, SliceLayout) and layout.dim == axis):
                shape = list(input.type.shape)
                shape.insert(axis, 1)
                parents = self.recorder.triton_layouts("tt.expand_dims", shape=tuple(shape)) or \
                    self.recorder.anywhere("tt.expand_dims", tuple(shape))
                if parents:
                    parent = layout_object(parents[0], tuple(shape))
                elif isinstance(layout, SliceLayout):
                    parent = layout.parent
                else:
                    raise PortError(f"{self.recorder.where()}: expand_dims of a tensor that is not a slice "
                                    "and no layout of Triton's to expand it to")
                input = self.recorder.convert(semantic, input, SliceLayout(axis, parent), "expand_dims needs a slice")
        return self.saved["expand_dims"](semantic, input, axis)

    def anchored(self, semantic, ptr, names, why):
        """``ptr`` in the layout Triton gave the access here (set if automatic, else converted)."""
        if not _distributed(ptr):
            return ptr
        shape = tuple(ptr.type.shape)
        chosen = self.recorder.triton_layouts(*names, shape=shape)
        if not chosen:
            return ptr
        layout = layout_object(chosen[0], shape)
        if _is_auto(ptr.type.layout):
            result = semantic.set_auto_layout(ptr, layout)
            origin = self.recorder.origin_of(ptr)
            if origin is not None:    # the same expression of the source, now laid out
                self.recorder.saw(result, *origin)
        elif ptr.type.layout != layout:
            result = self.recorder.convert(semantic, ptr, layout, why)
        else:
            result = ptr
        self.recorder.laid_out[id(result)] = result
        return result

    def follow(self, semantic, value, ptr, why):
        """A store's value (an atomic's operand) in its pointer's layout."""
        if not _distributed(value) or not _distributed(ptr) or _is_auto(ptr.type.layout):
            return value
        if _is_auto(value.type.layout):
            return semantic.set_auto_layout(value, ptr.type.layout)
        if value.type.layout != ptr.type.layout:
            return self.recorder.convert(semantic, value, ptr.type.layout, why)
        return value

    def load(self, semantic, ptr, *args, **kwargs):
        ptr = self.anchored(semantic, ptr, ("tt.load",), "the load's layout as Triton coalesced it")
        return self.saved["load"](semantic, ptr, *args, **kwargs)

    def store(self, semantic, ptr, val, *args, **kwargs):
        ptr = self.anchored(semantic, ptr, ("tt.store",), "the store's layout as Triton coalesced it")
        val = self.follow(semantic, val, ptr, "the stored value in its pointer's layout")
        return self.saved["store"](semantic, ptr, val, *args, **kwargs)

    def atomic_rmw(self, semantic, op, ptr, val, *args, **kwargs):
        ptr = self.anchored(semantic, ptr, ("tt.atomic_rmw",), "the atomic's layout as Triton chose it")
        val = self.follow(semantic, val, ptr, "the atomic's value in its pointer's layout")
        return self.saved["atomic_rmw"](semantic, op, ptr, val, *args, **kwargs)

    def arange(self, semantic, start, end, layout=None, *args, **kwargs):
        if layout is None or _is_auto(layout):
            chosen = self.recorder.triton_layouts("tt.make_range", shape=(end - start,)) or self.recorder.anywhere(
                "tt.make_range", (end - start,), f"end = {end} : i32, start = {start} : i32")
            if chosen:
                layout = layout_object(chosen[0], (end - start,))
        return self.saved["arange"](semantic, start, end, layout, *args, **kwargs)

    def full(self, semantic, shape, value, dtype, layout=None, *args, **kwargs):
        if shape and (layout is None or _is_auto(layout)):
            # a dot's accumulator layout first (the loop it is carried through keeps it), then
            # Triton's layout here, then a constant Triton hoisted (no position)
            recorder = self.recorder
            chosen = recorder.dot_results(tuple(shape))[:1] or recorder.triton_layouts(*SOURCE_OPS, shape=tuple(shape)) \
                or recorder.anywhere("arith.constant", tuple(shape)) + recorder.anywhere("tt.splat", tuple(shape))
            if chosen:
                layout = layout_object(chosen[0], tuple(shape))
        return self.saved["full"](semantic, shape, value, dtype, layout, *args, **kwargs)


_SOURCE_CALLS = {f"gl.{name}" for name in TENSOR_SOURCES}
_ANSWERED = ("broadcast_impl_value", "expand_dims", "load", "store", "arange", "full", "atomic_rmw")


@contextlib.contextmanager
def _patched_front_end(recorder: _Recorder):
    """Gluon's front end with :class:`_FrontEndAnswers` in place and every visit of the
    edited module's nodes recorded (which expression made which value)."""
    from triton.compiler import code_generator
    from triton.experimental.gluon.language import _semantic

    Generator = code_generator.CodeGenerator
    Semantic = _semantic.GluonSemantic
    saved = {name: getattr(Semantic, name) for name in _ANSWERED if hasattr(Semantic, name)}
    answers = _FrontEndAnswers(recorder, saved)
    saved_visit = Generator.visit

    def visit(self, node):
        ours = os.path.realpath(self.file_name or "") in recorder.files and hasattr(node, "lineno")
        if ours:
            recorder.stack.append((self, node))
            recorder.last_started = (self, node)
        try:
            result = saved_visit(self, node)
        finally:
            if ours:
                recorder.stack.pop()
                # under 3.6 a visit ends by setting the location to its own node's (not restoring
                # its caller's): an op made next is at the sub-expression visited last
                recorder.last_started = (self, node)
        if ours and isinstance(node, ast.expr) and _distributed(result):
            recorder.saw(result, self, node)
            if isinstance(node, ast.Call) and ast.unparse(node.func) in _SOURCE_CALLS and not recorder.dry and \
                    recorder.positions(self, node) is not None:
                # recorded here, not inside gl.zeros: Gluon builds a jit function's body once per
                # argument types, and a second equal call reuses it.  Only the user's text: the
                # port's own helpers write their layouts out.
                recorder.trial.sources.append(Source(span_of(self, node), result))
        return result

    saved_find_carries = Generator._find_carries

    def find_carries(self, *args, **kwargs):
        # a loop body is visited once to find what it carries, then discarded and visited
        # again: what the first visit needs is not written
        recorder.dry += 1
        try:
            return saved_find_carries(self, *args, **kwargs)
        finally:
            recorder.dry -= 1

    def answering(name):
        method = getattr(answers, name)
        return lambda semantic, *args, **kwargs: method(semantic, *args, **kwargs)

    try:
        Generator.visit = visit
        Generator._find_carries = find_carries
        for name in saved:
            setattr(Semantic, name, answering(name))
        yield
    finally:
        Generator.visit = saved_visit
        Generator._find_carries = saved_find_carries
        for name, function in saved.items():
            setattr(Semantic, name, function)


def build_trial(kernel, launch, original, positions, files) -> Trial:
    """Build ``kernel`` (the edited ``gluon.jit`` function) for ``launch`` with the front end
    patched as the module docstring says, resolve what stayed automatic, and read back the
    layouts of its tensor sources."""
    from triton._C.libtriton import ir, passes
    from triton.compiler.compiler import make_backend
    from triton.compiler.errors import CompilationError

    from .launch import gpu_target
    try:
        from triton.experimental.gluon._runtime import GluonASTSource
    except ImportError:   # pragma: no cover - every supported release has it
        from triton.experimental.gluon import GluonASTSource

    target = gpu_target(launch.target)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": launch.num_warps, "num_stages": launch.num_stages})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    source = GluonASTSource(kernel, dict(launch.signature), dict(launch.constexprs), attrs=launch.attrs)
    recorder = _Recorder(original, positions, files)
    try:
        with _patched_front_end(recorder):
            module = source.make_ir(target, options, backend.get_codegen_implementation(options),
                                    backend.get_module_map(), context)
    except CompilationError as error:
        cause = error.__cause__ or error.__context__
        if isinstance(cause, PortError):
            raise cause from None
        lines = [line for line in str(error).strip().splitlines() if line.strip() and line.strip() != "^"]
        raise PortError(f"Gluon's front end rejected the port: {lines[-1] if lines else error}") from None
    for item in recorder.trial.sources:   # concrete layouts as the front end typed them
        item.shape = tuple(item.value.type.shape)
        if not _is_auto(item.value.type.layout):
            item.encoding = layout_text(item.value.type.layout)
    manager = ir.pass_manager(context)
    passes.gluon.add_inliner(manager)
    passes.gluon.add_resolve_auto_encodings(manager)
    import inspect as _inspect
    try:
        takes_name = "str" in (_inspect.getdoc(manager.run) or "")    # 3.9: run(module, name)
        manager.run(module, "port") if takes_name else manager.run(module)
    except RuntimeError as error:
        raise PortError(f"the layouts Triton chose do not resolve in Gluon: {str(error).splitlines()[0]}") from None
    trial = recorder.trial
    trial.module_text = str(module)
    recorder.origins.clear()        # the values hold the module's IR: let both go with this build
    recorder.laid_out.clear()
    _KNOWN_LAYOUTS.clear()
    # an automatic one as Triton's resolution left it: the value may be gone (the inliner
    # replaces a call's results), so it is read from the module's text by its line and shape
    resolved = None
    for item in trial.sources:
        item.value = None
        if item.encoding:
            continue
        if resolved is None:
            from .original import read_positions
            resolved = list(read_positions(trial.module_text, files))
        found = [op.encoding for position, op in resolved if position is not None and position[1] == item.span[0]
                 and op.name in SOURCE_OPS and tuple(op.shape) == item.shape]
        if not found or "auto_encoding" in found[0]:
            raise PortError(f"line {item.span[0]}: a tensor's layout stayed automatic after Gluon's resolution")
        item.encoding = found[0]
    return trial
