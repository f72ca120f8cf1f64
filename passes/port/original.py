"""Triton's own compile of the original kernel, read as: at this source position, these ops with
these layouts.

Triton's TTGIR carries a location on every op: the line and column of the innermost source
expression that made it (``loc("k.py":19:20)``; an op of an inlined ``@triton.jit`` helper has
``callsite(<in the helper> at <the call>)``).  A port needs, per position of the kernel's source,
the layouts Triton gave the ops made there, for example::

    %rm_0 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> loc(#loc23)
    #loc23 = loc("rm"(#loc5))          #loc5 = loc("k.py":19:20)

reads as ``("k.py", 19, 20) -> [OpAt("tt.make_range", "#ttg.slice<{dim = 1, parent = #ttg.blocked<...>}>", (64,))]``.
One position may hold several ops of the same kind in different layouts (Triton recomputes index
arithmetic in each layout it is needed in), and a position may hold none (an op that CSE merged
with an equal one keeps the other's location).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

_ALIAS = re.compile(r"^(#[\w.]+) = (.*)$")
_TRAILING_LOC = re.compile(r"\sloc\((.*)\)\s*$")
_OP = re.compile(r"^\s*(?:(%[\w#.:, %]+?)\s*=\s*)?\"?([a-z_]+\.[\w.]+)\"?")
_FILE_POSITION = re.compile(r'^"([^"]*)":(\d+):(\d+)$')
_TENSOR = re.compile(r"tensor<([0-9x]+)x[^,<>]*(?:<[^<>]*>)?,\s*(#[\w.]+(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)?)>")
_TENSORDESC = re.compile(r"!tt\.tensordesc<([0-9x]+)x\w+,\s*(#[\w.]+(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)?)")  # 3.8 on
_MEMDESC = re.compile(r"!ttg\.memdesc<([0-9x]+)x\w+,\s*(#[\w.]+(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)?)")


@dataclass(frozen=True)
class OpAt:
    """One op of the TTGIR at a source position: its name, its result's (or, for ops without a
    result, its first operand's) layout attribute with aliases expanded, and that tensor's shape."""

    name: str
    encoding: str
    shape: tuple
    text: str


@dataclass
class TritonCompile:
    """What Triton chose for one launch of the original (:func:`compile_original`)."""

    ttgir: str
    ptx: str                       # the assembly ("" where the target gives none we read)
    aliases: dict = field(default_factory=dict)       # layout alias (#blocked1, #mma) -> its attribute
    by_position: dict = field(default_factory=dict)   # (file, line, col) -> [OpAt]
    ops: list = field(default_factory=list)           # (position or None, OpAt) of every op, in program order

    def at(self, position: tuple, *names: str) -> list:
        """The ops at ``position`` ((file, line, col), col 1-based as MLIR counts), of ``names``."""
        found = self.by_position.get(position, [])
        return [op for op in found if not names or op.name in names]


def compile_original(kernel, launch, extra_files=()) -> TritonCompile:
    """Triton's compile of ``kernel`` for ``launch`` (a :class:`~.launch.Launch`), read back;
    positions in the kernel's file and in ``extra_files`` (its helpers') are kept."""
    import triton
    from triton import knobs
    from triton.compiler import ASTSource

    from .launch import gpu_target
    source = ASTSource(kernel, dict(launch.signature), dict(launch.constexprs), attrs=launch.attrs)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    # Compiled afresh: Triton's cache keys a kernel by its source and first line, not its file, so
    # a cached compile of the same text from another file would carry that file's positions.
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        compiled = triton.compile(source, target=gpu_target(launch.target), options=options)
    asm = compiled.asm
    ttgir = asm["ttgir"]
    layouts = {name: text for name, text in module_aliases(ttgir).items() if not name.startswith("#loc")}
    result = TritonCompile(ttgir, asm.get("ptx", "") or asm.get("amdgcn", ""), layouts)
    files = {os.path.realpath(kernel.fn.__code__.co_filename)} | set(extra_files)
    for position, op in read_positions(ttgir, files):
        if position is not None:
            result.by_position.setdefault(position, []).append(op)
        result.ops.append((position, op))
    return result


def expand_aliases(text: str, aliases: dict) -> str:
    """``text`` with every layout alias (``#blocked1``, ``#mma``) replaced by its attribute, from
    ``aliases`` (alias -> text, as the module's header defines them), nested ones too."""
    for _ in range(8):
        replaced = re.sub(r"#(?!ttg\.|ttng\.|gluon\.|amdgpu\.)[\w.]+\b", lambda m: aliases.get(m.group(0), m.group(0)),
                          text)
        if replaced == text:
            break
        text = replaced
    return text


def module_aliases(ttgir: str) -> dict:
    """alias -> text of every ``#name = ...`` line of ``ttgir`` (layouts and locations)."""
    aliases = {}
    for line in ttgir.splitlines():
        match = _ALIAS.match(line)
        if match:
            aliases[match.group(1)] = match.group(2)
    return aliases


def read_positions(ttgir: str, files):
    """Yield ((file, line, col), OpAt) for every one-line op of ``ttgir`` with a source position
    in one of ``files`` (paths as :func:`os.path.realpath` gives them); an op of an inlined
    function outside them is placed at its call."""
    aliases = module_aliases(ttgir)
    encodings = {name: text for name, text in aliases.items() if not name.startswith("#loc")}

    def position(loc: str, depth: int = 0):
        if depth > 30:
            return None
        loc = loc.strip()
        if loc.startswith("loc(") and loc.endswith(")"):
            loc = loc[4:-1].strip()
        if loc.startswith("#loc"):
            return position(aliases.get(loc, ""), depth + 1)
        found = _FILE_POSITION.match(loc)
        if found:
            path = os.path.realpath(found.group(1))
            return (path, int(found.group(2)), int(found.group(3))) if path in files else None
        call = re.match(r"callsite\((#loc\w*) at (#loc\w*)\)", loc)
        if call:   # inside an inlined helper: its own position, else the call's
            return position(call.group(1), depth + 1) or position(call.group(2), depth + 1)
        named = re.match(r'"[^"]*"\((.*)\)$', loc)
        if named:
            return position(named.group(1), depth + 1)
        return None

    for line in ttgir.splitlines():
        loc = _TRAILING_LOC.search(line)
        op = _OP.match(line)
        if not loc or not op or line.lstrip().startswith(("#", "}", "tt.func", "module")):
            continue
        where = position(loc.group(1))   # None: no source position (constants hoisted by Triton)
        body = line[:loc.start()]
        types = body.rsplit(" : ", 1)[-1] if " : " in body else body
        tensors = _TENSOR.findall(types) or _MEMDESC.findall(types) or _TENSORDESC.findall(types)
        if not tensors:
            continue
        shape_text, encoding = tensors[-1]
        shape = tuple(int(d) for d in shape_text.split("x"))
        yield where, OpAt(op.group(2), expand_aliases(encoding, encodings), shape, body.strip())
