"""The layouts a port writes: each as the Gluon expression an author would write for it.

``gluon_layout_expression`` covers every layout Triton's compile of a kernel gives: blocked and
slice layouts, NVIDIA's MMA, dot-operand and shared layouts (the advice's expressions,
``passes.gluon.layout_expression``), AMD's MFMA and its operands, tensor memory, and any other
distributed layout of a known shape as ``gl.DistributedLinearLayout``.  A named one is a
:class:`NamedLayout`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..gluon.layout_expression import advice_layout_expression
from .translation import PortError


@dataclass(frozen=True)
class NamedLayout:
    """A layout the port names: its Gluon expression, why it is there, its MLIR text, a shape."""

    name: str
    expression: str
    why: str
    encoding: str
    shape: tuple


def gluon_layout_expression(encoding: str, shape=None) -> str:
    """Gluon text of a layout a dot needs (the advice's expressions, and AMD's MFMA ones)."""
    mfma = re.match(r"#ttg\.amd_mfma<\{version = (\d+), warpsPerCTA = \[([\d, ]+)\], "
                    r"(?:tilesPerWarp = \[[\d, ]+\], )?instrShape = \[([\d, ]+)\], isTransposed = (\w+)", encoding)
    if mfma:
        return (f"gl.amd.AMDMFMALayout(version={mfma.group(1)}, instr_shape=[{mfma.group(3)}], "
                f"transposed={mfma.group(4) == 'true'}, warps_per_cta=[{mfma.group(2)}])")
    operand = re.match(r"#ttg\.dot_op<\{opIdx = (\d), parent = (.*), kWidth = (\d+)\}>$", encoding)
    if operand and "amd_mfma" in operand.group(2):
        return (f"gl.DotOperandLayout(operand_index={operand.group(1)}, parent={gluon_layout_expression(operand.group(2))}, "
                f"k_width={operand.group(3)})")
    tmem = re.match(r"#ttng\.tensor_memory_encoding<\{?blockM = (\d+), blockN = (\d+), colStride = (\d+)", encoding)
    if tmem:
        return f"TensorMemoryLayout(block=({tmem.group(1)}, {tmem.group(2)}), col_stride={tmem.group(3)})"
    expression = advice_layout_expression(encoding, shape)
    if expression is None:
        raise PortError(f"no Gluon expression for the dot layout {encoding}")
    return expression


def module_constants(named_layouts) -> str:
    """``NAME = gl.constexpr(<expression>)  # why`` lines, one per layout, for a module's top."""
    return "".join(f"{named.name} = gl.constexpr({named.expression})  # {named.why}\n" for named in named_layouts)


def ring_layout_expression(encoding: str, tile) -> str:
    """Gluon text of a ring's shared layout (one tile's; the ring's index is the allocation's
    leading dimension).  AMD's rotating swizzle (``#ttg.amd_rotating_shared``: the phase also
    turns every ``maxPhase`` rows) has no Gluon class and is written as the linear layout it is
    (``gl.SharedLinearLayout``: for a 64x128 tile, 13 offset bases ``[row, col]``); gfx950's padded
    layout (``#ttg.padded_shared<[512:+8] {offset = [...]}>``) as ``gl.PaddedSharedLayout``."""
    if encoding.startswith("#ttg.amd_rotating_shared"):
        from ...dialect import to_linear_layout
        layout = to_linear_layout(encoding, list(tile))
        names = [f"dim{d}" for d in range(len(tile))]
        bases = [[layout.get_basis("offset", i, name) for name in names]
                 for i in range(layout.in_dim_size_log2("offset"))]
        return f"gl.SharedLinearLayout({bases})"
    padded = re.match(r"#ttg\.padded_shared<\[([\d:+, ]+)\] \{offset = (\[[\[\]\d, ]*\]), block = \[\]\}>$", encoding)
    if padded:
        pairs = [[int(n) for n in pair.split(":+")] for pair in padded.group(1).split(", ")]
        return f"gl.PaddedSharedLayout({pairs}, {padded.group(2)}, [], {list(tile)})"
    return gluon_layout_expression(encoding, tile)
