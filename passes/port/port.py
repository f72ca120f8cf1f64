"""``port()``: a ``@triton.jit`` kernel as a Gluon module with every layout written out.

The steps (each in its own module):

1. the launch (:mod:`.launch`) and Triton's compile of the original for it (:mod:`.original`);
2. the kernel and every ``@triton.jit`` function it calls, edited into Gluon (:mod:`.translation`);
3. the edited module built by Gluon's front end with Triton's choices at the places a layout is
   chosen (:mod:`.gluon_build`): which layout each tensor source gets, where a conversion goes;
4. the module written: the kernel's own text, its layouts named once at the top of its body with
   a comment of where each comes from, ``gl.convert_layout`` where two layouts meet, ``tl.dot`` as
   the target's matrix instruction (:mod:`.matmul`);
5. checked (:mod:`.check`): the written module compiled for the target, its global accesses at
   least as wide as the original's, its argument list the original's.

Example (a row softmax, 4 warps, sm_90)::

    @gluon.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: gl.constexpr):
        COLS: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])  # Triton's layout for cols ...
        row = gl.program_id(0)
        cols = gl.arange(0, BLOCK, layout=COLS)
        ...
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from . import converted_names, index_vectors
from .block_pointers import plan_block_pointers
from .tensor_descriptors import plan_tensor_descriptors
from .gluon_build import build_trial
from .launch import LaunchError, launch_for
from .layouts import NamedLayout, gluon_layout_expression, module_constants
from .module_file import loaded_module
from .original import compile_original
from .translation import PortError, translate

__all__ = ["PortError", "port", "Port"]


@dataclass
class Port:
    """A port and what it was made from (``port(..., details=True)``)."""

    source: str
    kernel_name: str
    launch: object
    original: object = None             # TritonCompile
    conversions: list = field(default_factory=list)
    layouts: list = field(default_factory=list)       # NamedLayout, the kernel's and its dots'
    translations: list = field(default_factory=list)
    pipelines: object = None            # pipelining.Pipelines: the loops written pipelined, and why others are not
    check: object = None


def unwrap(kernel):
    """The ``triton.jit`` function under ``@triton.autotune`` / ``@triton.heuristics``, and the
    autotuner's configs (or None)."""
    from triton.runtime.jit import JITFunction
    configs = None
    seen = kernel
    for _ in range(8):
        if isinstance(seen, JITFunction):
            if getattr(seen, "is_gluon", lambda: False)():
                raise PortError(f"{seen.fn.__name__} is a Gluon kernel already")
            return seen, configs
        if hasattr(seen, "configs") and configs is None:
            configs = list(seen.configs)
        if not hasattr(seen, "fn"):
            break
        seen = seen.fn
    raise PortError(f"{getattr(kernel, '__name__', type(kernel).__name__)} is not a @triton.jit function")


def port(kernel, target: str = "sm90", *, num_warps: int = None, num_stages: int = None, config: int = None,
         check: bool = False, grid=None, atol: float = None, rtol: float = None, details: bool = False,
         pipeline: bool = True, **launch_arguments):
    """Port ``kernel`` (a ``@triton.jit`` function, also under ``@triton.autotune`` or
    ``@triton.heuristics``) to Gluon for ``target`` (sm80, sm90, sm100, sm120, gfx942, gfx950)
    and the launch its keyword arguments describe: a type string (``"*fp16"``, ``"i32"``) or a
    sample value for each argument, the value of each ``tl.constexpr``, ``num_warps`` and
    ``num_stages``.  Under ``@triton.autotune``, ``config`` picks the configuration (default:
    the first) whose constexprs, warps and stages the port takes.

    Returns the Gluon module's source: a kernel of the same name and the same parameters, so the
    original's launch line launches the port.  ``check=True`` compiles it for the target and
    compares it with the original (:mod:`.check`); on a GPU, with sample tensors and a ``grid``,
    both kernels also run on copies of the tensors and every tensor is compared afterwards (bit
    for bit, or within ``atol``/``rtol`` where a reduction's order may differ).  ``details=True``
    returns a :class:`Port` instead of the text.  ``pipeline=False`` writes every ``tl.dot`` loop
    as it stands (each iteration loads, then multiplies) where Triton's compile pipelines it."""
    jit_fn, configs = unwrap(kernel)
    import inspect
    parameters = inspect.signature(jit_fn.fn).parameters
    # a kernel parameter named like a launch option gets the option's value, as a launch gives it
    for name, value in (("num_warps", num_warps), ("num_stages", num_stages)):
        if name in parameters and value is not None:
            launch_arguments.setdefault(name, value)
    if configs:
        chosen = configs[config or 0]
        for name, value in chosen.kwargs.items():
            launch_arguments.setdefault(name, value)
        num_warps = num_warps or chosen.num_warps
        num_stages = num_stages or chosen.num_stages
    try:
        launch = launch_for(jit_fn, target, num_warps or 4, num_stages or 3, arguments=launch_arguments)
    except LaunchError as error:
        raise PortError(str(error)) from None
    made = _port(jit_fn, launch, pipeline)
    if configs:     # the launch line of an autotuned kernel passes no block sizes: the port keeps the config
        made.source = _with_autotune(made.source, made.kernel_name, chosen, list(getattr(kernel, "keys", [])), launch)
    if check:
        from .check import check_port
        made.check = check_port(made, jit_fn, launch_arguments, grid, atol, rtol)
    return made if details else made.source


def _with_autotune(source: str, kernel_name: str, config, keys: list, launch) -> str:
    """``source`` with its kernel under ``@triton.autotune`` of the one configuration it was
    ported for, so that the original's launch line (no block sizes, no warps) launches it."""
    values = ", ".join(f"{name!r}: {value!r}" for name, value in config.kwargs.items())
    decorator = (f"@triton.autotune(configs=[triton.Config({{{values}}}, num_warps={launch.num_warps}, "
                 f"num_stages={launch.num_stages})], key={keys!r})  # the configuration this port is for\n")
    marker = re.search(rf"^@gluon\.jit(\(.*\))?\n(?=def {re.escape(kernel_name)}\()", source, flags=re.M)
    if marker is None:
        raise PortError(f"cannot find the kernel {kernel_name} in its port")
    return source[:marker.start()] + decorator + source[marker.start():]


def _port(jit_fn, launch, pipeline: bool = True) -> Port:
    translations = _translations(jit_fn)
    files = {t.source.file for t in translations}
    try:
        original = compile_original(jit_fn, launch, files)
    except Exception as error:   # Triton's own compile of the original failed: nothing to port from
        lines = str(error).strip().splitlines()
        raise PortError(f"Triton does not compile {jit_fn.fn.__name__} for {launch.describe()}: "
                        f"{lines[-1] if lines else type(error).__name__}") from None
    from .matmul import plan_dots
    dots = plan_dots(translations, original, launch)
    blocks = plan_block_pointers(translations, original)
    descriptors = plan_tensor_descriptors(translations, original, bool(blocks.helpers), launch.num_warps)
    for plan in (blocks, descriptors):
        dots.imports += plan.imports
        dots.helpers += plan.helpers
        dots.layouts += plan.layouts
    for t in translations:
        t.trial_edits, t.rematerialized = t.edits.copy(), []
    trial, placement = _build(translations, launch, dots, original, jit_fn)
    moves = index_vectors.index_conversions(translations, placement, trial, _span)
    if moves:
        # Round two: the index vectors of those pointers converted instead of the pointers
        # themselves (a 1-D vector of indices for each 2-D tile of pointers), as Triton's
        # compile recomputes them in the access's layout.  Kept where it builds and converts
        # fewer pointer tiles.
        for t, start, end, encoding, shape in moves:
            t.trial_edits.wrap(start, end, "gl.convert_layout(", f", {gluon_layout_expression(encoding, shape)})")
            t.rematerialized.append((start, end, encoding, shape))
        try:
            second, second_placement = _build(translations, launch, dots, original, jit_fn)
        except PortError:
            second = None
        if second is not None and index_vectors.pointer_tiles(second) < index_vectors.pointer_tiles(trial):
            trial, placement = second, second_placement
        else:
            for t in translations:
                t.trial_edits, t.rematerialized = t.edits.copy(), []
    vectors = index_vectors.index_vector_conversions(translations, placement, trial, _span)
    if vectors:
        # Round three: a 1-D access's offsets (``cols = pid * BLOCK + tl.arange(...)``) converted
        # once, where the pointers, the mask and the value each were (as Triton's compile computes
        # the offsets afresh in the access's layout).  Kept where it builds and converts fewer
        # distinct tensors.
        kept = [list(t.rematerialized) for t in translations]
        trials = [t.trial_edits.copy() for t in translations]
        for t, start, end, encoding, shape, access in vectors:
            t.trial_edits.wrap(start, end, "gl.convert_layout(", f", {gluon_layout_expression(encoding, shape)})")
            t.rematerialized.append((start, end, encoding, shape, access))
        try:
            third, third_placement = _build(translations, launch, dots, original, jit_fn)
        except PortError:
            third = None
        moved = {(id(t), t.source.lines[start[0] - t.source.first_line][start[1]:end[1]], encoding)
                 for t, start, end, encoding, _, _ in vectors}
        if third is not None and len(third.conversions) + len(moved) < len(trial.conversions):
            trial, placement = third, third_placement
        else:
            for t, edits, rematerialized in zip(translations, trials, kept):
                t.trial_edits, t.rematerialized = edits, rematerialized
    trial, placement = _round_four(translations, launch, dots, original, jit_fn, trial, placement)
    result = Port("", jit_fn.fn.__name__, launch, original)
    _write_layouts(translations, placement, trial, result)
    from .pipelining import pipeline_loops
    result.pipelines = pipeline_loops(translations, original, dots.calls if pipeline else [])
    from .matmul import hoist_invariant_operands
    result.conversions += [(line, "a dot's operand the loop does not change, converted above it")
                           for line, _ in hoist_invariant_operands(dots.calls)]
    dots.imports += result.pipelines.imports
    dots.helpers += module_constants(result.pipelines.layouts) + result.pipelines.helpers
    dots.layouts += result.pipelines.layouts
    result.source, _ = _module_text(translations, launch, dots, final=True)
    result.layouts += dots.layouts
    result.translations = translations
    return result


def _round_four(translations, launch, dots, original, jit_fn, trial, placement):
    """Round four: a variable every read of which is converted to one layout converted where it
    is assigned instead, or above the loop that does not change it, or through the index vectors
    it is built from (:mod:`.converted_names`).  Tried all together, then a source line's moves
    at a time (at most 12), each kept where the conversions in loops move fewer elements (or as
    many, and all of them fewer)."""
    moves = converted_names.assigned_conversions(translations, placement, trial, _span)
    if not moves:
        return trial, placement

    def cost(built, where):
        return converted_names.in_loops(translations, where, built, _span), converted_names.moved(built)

    def attempt(group, base, base_placement):
        kept = [(t.trial_edits.copy(), list(t.rematerialized)) for t in translations]
        for t in translations:
            # a move replaces an earlier round's conversion of the same expression; the trial's
            # edits are replayed from the translation's own.  (A hoisted conversion is built where
            # the read is: the trial's lines must stay the original's; the written port converts
            # above the loop, :func:`_write_layouts`.)
            mine = [(start, end, encoding, shape, why) for m, start, end, encoding, shape, why in group if m is t]
            spans = {(start, end) for start, end, *_ in mine}
            t.rematerialized = [entry for entry in t.rematerialized if (entry[0], entry[1]) not in spans] + mine
            t.trial_edits = t.edits.copy()
            for start, end, encoding, shape, *_ in t.rematerialized:
                t.trial_edits.wrap(start, end, "gl.convert_layout(", f", {gluon_layout_expression(encoding, shape)})")
        try:
            built, where = _build(translations, launch, dots, original, jit_fn)
        except PortError:
            built = None
        if built is not None and cost(built, where) < cost(base, base_placement):
            return built, where
        for t, (edits, rematerialized) in zip(translations, kept):
            t.trial_edits, t.rematerialized = edits, rematerialized
        return None

    together = attempt(moves, trial, placement)
    if together is not None:
        return together
    groups = {}
    for move in moves:
        groups.setdefault((id(move[0]), move[1][0]), []).append(move)
    for group in list(groups.values())[:12]:
        better = attempt(group, trial, placement)
        if better is not None:
            trial, placement = better
    return trial, placement


def _build(translations, launch, dots, original, jit_fn):
    """One trial build of the module as ``translations``' trial edits make it."""
    text, placement = _module_text(translations, launch, dots, final=False)
    with loaded_module(text) as (module, path):
        trial = build_trial(getattr(module, jit_fn.fn.__name__), launch, original, _positions(placement, path), {path})
    return trial, placement


def _translations(jit_fn) -> list:
    """The kernel's translation and its helpers', helpers first (each once)."""
    done, order = {}, []

    def visit(fn, name=None):
        key = (fn.fn.__module__, fn.fn.__qualname__, name)
        if key in done:
            return
        done[key] = True
        translation = translate(fn, helper_name=name)
        for helper_name, helper in translation.helpers.items():
            visit(helper, helper_name if helper_name.startswith("_tl_") else None)
        order.append(translation)

    visit(jit_fn)
    return order


# --------------------------------------------------------------------------- the module text

_HEADER = '''"""Gluon port of {name} for {launch} (written by linear_layouts.port).

Each layout is Triton's own choice for the original at that line, named once at the top of the
kernel; gl.convert_layout stands where two layouts meet, as Triton's compile of the original
converts there.  Launch it exactly as the original: the same name, the same arguments, the same
num_warps ({warps}).
"""

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
'''


def _module_text(translations, launch, dots, final: bool):
    """The module: header, imports the functions need, constants, helpers, the kernel.  Returns
    (text, placement: [(translation, first line of its text in the module)])."""
    parts = [_HEADER.format(name=translations[-1].name, launch=launch.describe(), warps=launch.num_warps)]
    imports, constants = [], []
    for t in translations:
        for name, module in t.modules.items():
            line = f"import {module.__name__} as {name}" if module.__name__.rsplit(".", 1)[-1] != name or \
                "." in module.__name__ else f"import {name}"
            if "." in module.__name__ and module.__name__.rsplit(".", 1)[-1] == name:
                line = f"from {module.__name__.rsplit('.', 1)[0]} import {name}"
            if line not in imports:
                imports.append(line)
        for line in t.imports.values():
            if line not in imports:
                imports.append(line)
        for name, value in t.constants.items():
            line = f"{name} = gl.constexpr({value!r})"
            if line not in constants:
                constants.append(line)
    imports += dots.imports
    text = parts[0] + "".join(line + "\n" for line in imports)
    if constants:
        text += "\n" + "".join(line + "\n" for line in constants)
    if dots.helpers:
        text += "\n\n" + dots.helpers
    placement = []
    for t in translations:
        text += "\n\n"
        first = text.count("\n") + 1
        edits = t.trial_edits if not final else t.final_edits
        body = edits.text()
        lines = body.split("\n")
        if t.source.indent:
            lines = [line[t.source.indent:] if line[:t.source.indent].strip() == "" else line for line in lines]
        text += "\n".join(lines).rstrip("\n") + "\n"
        placement.append((t, first))
    if final:   # a decorator the port removed left its lines empty (the trial text keeps them: positions)
        text = re.sub(r"^(@gluon\.jit[^\n]*\n)\n+(?=def )", r"\1", text, flags=re.M)
    return text, placement


def _restores() -> bool:
    from .gluon_build import _version_restores_locations
    return _version_restores_locations()


def _positions(placement, path):
    """codegen, node of the module at ``path`` -> the original's (file, line, col) key, as
    Triton's locations of the original give it (see :mod:`.gluon_build`)."""
    restores = _restores()

    def locate(codegen, node):
        line = codegen.begin_line + node.lineno
        col = node.col_offset
        return _original_position(placement, line, col, restores)
    return locate


def _original_position(placement, line, col, restores, raw=False):
    for translation, first in reversed(placement):
        if line >= first:
            text = translation.source
            original_line = text.first_line + (line - first)
            _, original_col = translation.trial_edits.original_position(original_line, col + text.indent)
            if raw:
                return translation, original_line, original_col
            base = text.indent + 1 if restores else 0
            return text.file, original_line, original_col - text.indent + base
    return None


# --------------------------------------------------------------------------- layouts written out

def _write_layouts(translations, placement, trial, result: Port) -> None:
    """Each translation's final edits: a layout keyword on every source, conversions, names."""
    for t in translations:
        t.final_edits = t.edits.copy()
    namer = _Namer()
    seen_sources = {}
    for item in trial.sources:
        span = _span(placement, item.span)
        if span is None:
            continue
        translation, start, end = span
        key = (id(translation), start)
        if seen_sources.get(key, item.encoding) != item.encoding:
            raise PortError(f"{os.path.basename(translation.source.file)}:{start[0]}: one source line makes "
                            "tensors of two layouts (a loop unrolled over layouts)")
        if key in seen_sources:
            continue
        seen_sources[key] = item.encoding
        if re.match(r"gl\.(zeros|full)_like\b", translation.edits.lines[start[0] - translation.edits.first_line][start[1]:]):
            continue
        hint = (_assigned_name(translation, start) or "tensor") + "_layout"
        name = namer.name(item.encoding, item.shape, hint, translation, f"Triton's layout for {hint[:-7]} (line {start[0]})")
        translation.final_edits.insert(end[0], end[1] - 1, f", layout={name}")
    # the index vectors converted in place of what they build, named after the sources (whose
    # layouts they are slices of, where the parent is a source's: OFFS_BN_2D_LAYOUT -> OFFS_BN_2D_ROWS)
    for t in translations:
        hoisted = {}
        for start, end, encoding, shape, *access in t.rematerialized:
            if access and isinstance(access[0], tuple):      # round four's moves
                converted_names.write_move(t, namer, result, start, end, encoding, shape, access[0], hoisted,
                                           _assigned_name)
                continue
            if access and access[0]:     # 1-D offsets of an access (round three)
                name = namer.name(encoding, shape, f"{access[0]}_layout", t,
                                  f"the {access[0]}'s layout as Triton coalesced it; the offsets at line {start[0]} "
                                  "converted once, the pointers and mask built from them")
            else:
                variable = t.source.lines[start[0] - t.source.first_line][start[1]:end[1]] if start[0] == end[0] else ""
                name = namer.name(encoding, shape, f"{variable}_converted" if variable.isidentifier() else "index_layout",
                                  t, f"the index vector at line {start[0]} in the layout of the tile it builds")
            loop = converted_names.invariant_loop(t, start, end)
            if loop is not None:       # a vector the loop does not change: converted once, above it
                converted_names.hoist_read(t, t.final_edits, start, end, ("hoisted", "", *loop), name, hoisted)
                continue
            t.final_edits.wrap(start, end, "gl.convert_layout(", f", {name})")
            result.conversions.append((start[0], "index vector in its access's layout"))
    for span, times in dict.fromkeys(trial.expansions):   # outside any conversion of the same operand
        found = _span(placement, span)
        if found is None:
            raise PortError("an operand the port must give a leading dimension has no place in the source")
        translation, start, end = found
        for _ in range(times):
            translation.final_edits.wrap(start, end, "gl.expand_dims(", ", 0)")
        result.conversions.append((start[0], "a leading dimension Triton's broadcast adds and Gluon's does not"))
    seen_conversions = {}
    for conversion in trial.conversions:
        span = _span(placement, conversion.span)
        if span is None:
            raise PortError("a conversion the port needs has no place in the source")
        translation, start, end = span
        key = (id(translation), start, end)
        if key in seen_conversions:
            if seen_conversions[key] != conversion.encoding:
                raise PortError(f"{os.path.basename(translation.source.file)}:{start[0]}: one expression needs two "
                                "conversions (a loop unrolled over layouts)")
            continue
        seen_conversions[key] = conversion.encoding
        name = namer.name(conversion.encoding, conversion.shape, _conversion_hint(translation, start, end, conversion),
                          translation,
                          f"converted to at line {start[0]}: {conversion.why}")
        translation.final_edits.wrap(start, end, "gl.convert_layout(", f", {name})")
        result.conversions.append((start[0], conversion.why))
    result.layouts = list(namer.definitions.values())
    for t in translations:
        _place_definitions(t, namer)


def _span(placement, span):
    """(translation, start, end) in the original's file coordinates of a generated-text span."""
    line, col, end_line, end_col = span
    start = _original_position(placement, line, col, _restores(), raw=True)
    end = _original_position(placement, end_line, end_col, _restores(), raw=True)
    if start is None or end is None or start[0] is not end[0]:
        return None
    return start[0], start[1:], end[1:]


def _conversion_hint(translation, start, end, conversion) -> str:
    """A name for the layout a conversion goes to: after the access it serves (``STORE_LAYOUT``),
    else after the variable it converts (``RN_CONVERTED``), else ``CONVERTED``."""
    for access in ("load", "store", "atomic"):
        if conversion.why.startswith(f"the {access}'s"):
            return f"{access}_layout"
    line = translation.edits.lines[start[0] - translation.edits.first_line]
    operand = line[start[1]:end[1]] if start[0] == end[0] else ""
    return f"{operand}_converted" if operand.isidentifier() else "converted"


def _assigned_name(translation, start) -> str:
    """The variable of the innermost assignment whose value holds the expression at ``start``."""
    import ast
    text = translation.source
    best, best_start = "", None
    for node in ast.walk(text.tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            if text.start(node.value) <= start < text.end(node.value) and (best_start is None or
                                                                          text.start(node) > best_start):
                best, best_start = targets[0].id, text.start(node)
    return best


def _place_definitions(translation, namer) -> None:
    """``NAME: gl.constexpr = ...  # why`` lines at the top of the function's body."""
    import ast
    used = [name for name, users in namer.users.items() if id(translation) in users]
    if not used:
        return
    body = translation.source.tree.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and \
            isinstance(first.value.value, str) and len(body) > 1:
        first = body[1]
    line, col = translation.source.start(first)
    indent = " " * col
    lines = []
    for name in used:
        named = namer.definitions[name]
        expression, why = named.expression, named.why
        lines.append(f"{name}: gl.constexpr = {expression}  # {why}\n{indent}")
    translation.final_edits.insert(line, col, "".join(lines))


class _Namer:
    """One name per layout: from the variable it first lays out (``cols`` -> ``COLS``), a slice
    written as a slice of its named parent."""

    def __init__(self):
        self.names = {}           # encoding -> name
        self.definitions = {}     # name -> NamedLayout
        self.users = {}           # name -> set of translation ids

    def name(self, encoding: str, shape: tuple, hint: str, translation, why: str) -> str:
        from ...dialect.attribute_parser import parse_attribute
        from ...dialect.attributes import SliceEncoding
        if encoding in self.names:
            name = self.names[encoding]
            self.users[name].add(id(translation))
            return name
        expression = None
        try:
            attr = parse_attribute(encoding)
        except Exception:
            attr = None
        if type(attr) is SliceEncoding:
            parent_text = _parent_text(encoding)
            parent_shape = tuple(list(shape[:attr.dim]) + [_sliced_size(parent_text, attr.dim)] + list(shape[attr.dim:]))
            stem = hint[:-len("_layout")] if hint.endswith("_layout") else hint
            parent = self.name(parent_text, parent_shape, f"{stem}_{len(parent_shape)}d_layout", translation,
                               f"{stem} is a slice of this {len(parent_shape)}-D layout")
            expression = f"gl.SliceLayout({attr.dim}, {parent})"
            if hint.endswith("_converted") and len(parent_shape) == 2:
                # a conversion's slice of a named tile layout is named for what it indexes: a
                # vector along the tile's rows (a slice along dim 1) or along its columns
                hint = f"{parent.removesuffix('_LAYOUT')}_{'ROWS' if attr.dim == 1 else 'COLS'}"
        if expression is None:
            expression = gluon_layout_expression(encoding, shape)
        base = re.sub(r"[^A-Za-z0-9]+", "_", hint).strip("_").upper() or "LAYOUT"
        if base[0].isdigit():
            base = "L_" + base
        name, k = base, 2
        while name in self.definitions:
            name, k = f"{base}_{k}", k + 1
        self.names[encoding] = name
        self.definitions[name] = NamedLayout(name, expression, why, encoding, tuple(shape))
        self.users[name] = {id(translation)}
        return name


def _sliced_size(parent: str, dim: int) -> int:
    """The size along ``dim`` a slice's parent layout is written with: 1, but for a linear layout
    the size its own bases span there.  ``#ttg.linear<{register = [[0, 1], [64, 0]], lane =
    [[1, 0], ...]}>`` spans 128 rows: written with 1 row, the lanes and registers that walk the
    rows would read as copies of one row, and every tensor built from the slice would hold the
    whole tile in each thread."""
    if not parent.lstrip().startswith("#ttg.linear"):
        return 1
    spanned = 0
    for basis in re.findall(r"\[(\d+(?:, \d+)+)\]", parent):
        values = [int(v) for v in basis.split(", ")]
        if dim < len(values):
            spanned |= values[dim]
    return 1 << spanned.bit_length() if spanned else 1


def _parent_text(encoding: str) -> str:
    match = re.match(r"#ttg\.slice<\{dim = \d+, parent = (.*)\}>$", encoding.strip())
    if not match:
        raise PortError(f"cannot read the parent of {encoding}")
    return match.group(1)
