"""Which elements of a tensor of pointers are consecutive in memory: a small affine analysis.

``ll-assign-layouts`` prices a load or store in a candidate layout by the sectors and vector
width it would use (``layout_costs.memory_cost``).  Both depend on the addresses: along which
dimension consecutive elements are consecutive in memory, and how many of them a vector may
take at an aligned address.  Triton's ``AxisInfo`` analysis answers this inside Triton; this is
the part of it that tile kernels need, read off the ops that compute the pointers:

    offsets = rows[:, None] * 64 + cols[None, :]         (make_range, expand_dims, muli, addi, broadcast)
    pointers = tt.splat(X) + offsets                     (tt.addptr)

Every value is written as ``base + sum_d stride_d * index_d`` with ``stride_d`` an integer (or
unknown) and ``base`` known only by its divisibility (the largest power of two it is a multiple
of).  ``make_range`` has stride 1 along its dim; ``expand_dims`` adds a dim of stride 0;
``broadcast`` keeps strides; ``addi``/``addptr`` add them; ``muli`` by a constant scales them
(by anything else: unknown, unless 0); splats and constants have stride 0 everywhere.  The
pointer arguments' ``tt.divisibility`` (bytes) and integer arguments' (their value) seed the
divisibility; anything else is divisible by 1.

Example: with the lines above, ``X`` 16-byte aligned, f16: strides (64, 1), so dim 1 is
contiguous; a vector starts at a multiple of gcd(16 bytes, 64 x 2 bytes) = 16 bytes: 8 f16.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .layout_text import ModuleLines
from ..ir.snapshot import Value

LARGE = 1 << 30        # divisibility of 0


@dataclass(frozen=True)
class Affine:
    strides: tuple          # per dim: int, or None (unknown)
    divisibility: int       # of the base, a power of two (elements; bytes for pointers)
    # per dim, a power of two every stride is a multiple of (elements; bytes for pointers): what
    # is known of an unknown stride, e.g. a row stride read from an argument with
    # tt.divisibility = 16.  None: the known strides' own (``_pow2(stride)``), unknown ones 1.
    stride_divisibility: Optional[tuple] = None

    def stride_divisor(self, dim: int) -> int:
        if self.stride_divisibility is not None:
            return self.stride_divisibility[dim]
        stride = self.strides[dim]
        return 1 if stride is None else _pow2(abs(stride))


@dataclass(frozen=True)
class Contiguity:
    dim: int                # consecutive elements along this dim are consecutive in memory
    vector: int             # elements a thread may access at once at an aligned address


def _pow2(value: int) -> int:
    return LARGE if value == 0 else value & -value


_INT = re.compile(r"= arith\.constant (?:dense<)?(-?\d+)>? : ")
_ATTRIBUTE = {name: re.compile(name + r" = (-?\d+)") for name in ("axis", "start")}


class PointerAnalysis:
    def __init__(self, lines: ModuleLines, function_header: str, argument_names: list[str]):
        self.lines = lines
        self._memo: dict[int, Optional[Affine]] = {}
        # tt.divisibility of each argument, read from the function's first line
        self.argument_divisibility = {}
        for index, name in enumerate(argument_names):
            m = re.search(re.escape(name) + r": [^,{]*\{[^}]*tt\.divisibility = (\d+)", function_header)
            self.argument_divisibility[index] = int(m.group(1)) if m else 1

    def _attribute(self, op, name: str) -> Optional[int]:
        m = _ATTRIBUTE[name].search(self.lines.header(op))
        return int(m.group(1)) if m else None

    def scalar_divisibility(self, value: Value) -> int:
        if value.is_block_argument:
            owner = value.owner.parent.parent if value.owner.parent is not None else None
            if owner is not None and owner.name in ("tt.func", "func.func"):
                return self.argument_divisibility.get(value.index, 1)
            if owner is not None and owner.name == "ttg.warp_specialize.partitions" and owner.parent_op is not None:
                # a worker partition's argument: what was captured (3.9: the partitions op's
                # operands; 3.6: its ttg.warp_specialize's)
                captured = owner.operands or owner.parent_op.operands
                return self.scalar_divisibility(captured[value.index]) if value.index < len(captured) else 1
            if owner is not None and owner.name == "scf.for" and value.index == 0:
                # the induction variable: lower bound + k * step, e.g. 0, 1024, 2048, ...
                lower, step = owner.operands[0], owner.operands[2]
                return min(self.scalar_divisibility(lower), self.scalar_divisibility(step))
            return 1
        op = value.owner
        if op.name == "arith.constant":
            m = _INT.search(self.lines.header(op))
            return _pow2(abs(int(m.group(1)))) if m else 1
        if op.name == "arith.muli":
            return min(LARGE, self.scalar_divisibility(op.operands[0]) * self.scalar_divisibility(op.operands[1]))
        if op.name in ("arith.addi", "arith.subi"):
            return min(self.scalar_divisibility(op.operands[0]), self.scalar_divisibility(op.operands[1]))
        if op.name in ("arith.extsi", "arith.extui", "arith.index_cast") or (
                op.name == "arith.bitcast" and op.operands[0].type == value.type):
            # the same integer (Gluon's frontend passes a loop's bounds and step through
            # ``arith.bitcast %c64_i32 : i32 to i32``)
            return self.scalar_divisibility(op.operands[0])
        if op.name == "tt.addptr" and op.operands[0].type.startswith("!tt.ptr<"):
            # a scalar pointer moved by an offset in elements: bytes, as tt.divisibility counts
            # (src + k * 1024 for f32: a multiple of min(16, 4096) = 16 bytes)
            offset_bytes = self.scalar_divisibility(op.operands[1]) * pointee_bytes(op.operands[0].type)
            return min(self.scalar_divisibility(op.operands[0]), LARGE, offset_bytes)
        return 1

    def affine(self, value: Value) -> Optional[Affine]:
        if id(value) in self._memo:
            return self._memo[id(value)]
        self._memo[id(value)] = None          # a cycle (loop-carried) is unknown
        result = self._affine(value)
        self._memo[id(value)] = result
        return result

    def _affine(self, value: Value) -> Optional[Affine]:
        tensor_type = value.tensor_type
        if tensor_type is None or value.is_block_argument:
            return None
        rank = len(tensor_type.shape)
        op = value.owner
        name = op.name
        if name == "tt.splat":
            return Affine((0,) * rank, self.scalar_divisibility(op.operands[0]))
        if name == "arith.constant":
            m = _INT.search(self.lines.header(op))
            return Affine((0,) * rank, _pow2(abs(int(m.group(1))))) if m and "dense<[" not in self.lines.header(op) else None
        if name == "tt.make_range":
            start = self._attribute(op, "start")
            return Affine((1,), _pow2(start) if start is not None else 1)
        if name in ("ttg.convert_layout", "arith.extsi", "arith.extui"):
            return self.affine(op.operands[0])
        if name == "tt.expand_dims":
            inner, axis = self.affine(op.operands[0]), self._attribute(op, "axis")
            if inner is None or axis is None:
                return None
            strides = list(inner.strides)
            strides.insert(axis, 0)
            divisors = [inner.stride_divisor(d) for d in range(len(inner.strides))]
            divisors.insert(axis, LARGE)
            return Affine(tuple(strides), inner.divisibility, tuple(divisors))
        if name == "tt.broadcast":
            inner = self.affine(op.operands[0])
            if inner is None:
                return None
            source = op.operands[0].tensor_type.shape
            stretched = [source[d] == 1 and tensor_type.shape[d] != 1 for d in range(rank)]
            strides = tuple(0 if stretched[d] else s for d, s in enumerate(inner.strides))
            divisors = tuple(LARGE if stretched[d] else inner.stride_divisor(d) for d in range(rank))
            return Affine(strides, inner.divisibility, divisors)
        if name in ("arith.addi", "tt.addptr"):
            a, b = self.affine(op.operands[0]), self.affine(op.operands[1])
            if a is None or b is None:
                return None
            scale = pointee_bytes(op.operands[0].tensor_type.element_type) if name == "tt.addptr" else 1
            strides = tuple(None if x is None or y is None else x + y for x, y in zip(a.strides, b.strides))
            divisors = tuple(min(a.stride_divisor(d), b.stride_divisor(d)) for d in range(rank))   # elements
            return Affine(strides, min(a.divisibility, min(LARGE, b.divisibility * scale)), divisors)
        if name == "arith.muli":
            a, b = self.affine(op.operands[0]), self.affine(op.operands[1])
            if a is None or b is None:
                return None
            if not any(s != 0 for s in b.strides):
                ranged, uniform = a, op.operands[1]
            elif not any(s != 0 for s in a.strides):
                ranged, uniform = b, op.operands[0]
            else:
                return None                      # a product of two ranges: not affine
            factor = self._uniform_constant(uniform)
            strides = tuple(s if s == 0 else (None if s is None or factor is None else s * factor)
                            for s in ranged.strides)
            # a stride times a uniform of unknown value: a multiple of both divisibilities
            uniform_divisor = self.scalar_divisibility_of_uniform(uniform)
            divisors = tuple(min(LARGE, ranged.stride_divisor(d) * uniform_divisor) for d in range(rank))
            return Affine(strides, min(LARGE, a.divisibility * b.divisibility), divisors)
        return None

    def _uniform_constant(self, value: Value) -> Optional[int]:
        op = value.defining_op
        if op is None:
            return None
        if op.name == "tt.splat":
            op = op.operands[0].defining_op
            if op is None:
                return None
        if op.name == "arith.constant":
            m = _INT.search(self.lines.header(op))
            return int(m.group(1)) if m and "dense<[" not in self.lines.header(op) else None
        return None

    def scalar_divisibility_of_uniform(self, value: Value) -> int:
        """What a tensor with one value everywhere (a splat or a splat constant) is a multiple of."""
        op = value.defining_op
        if op is not None and op.name == "tt.splat":
            return self.scalar_divisibility(op.operands[0])
        affine = self.affine(value)
        return affine.divisibility if affine is not None else 1

    def contiguity(self, pointer: Value) -> Optional[Contiguity]:
        """Along which dim a pointer tensor's elements are consecutive, and the vector width its
        alignment allows (None: the pointers are not an affine function the analysis reads)."""
        affine = self.affine(pointer)
        if affine is None:
            return None
        element_bytes = pointee_bytes(pointer.tensor_type.element_type)
        unit = [d for d, s in enumerate(affine.strides) if s == 1]
        if not unit:
            return Contiguity(len(affine.strides) - 1, 1)
        dim = unit[-1]
        alignment = affine.divisibility
        for d, s in enumerate(affine.strides):
            if d != dim and s != 0:              # an unknown stride aligns to what divides it
                alignment = min(alignment, affine.stride_divisor(d) * element_bytes)
        vector = max(1, min(16, alignment) // element_bytes)
        return Contiguity(dim, min(vector, pointer.tensor_type.shape[dim]))


def pointee_bytes(pointer_type: str) -> int:
    """``!tt.ptr<f16>`` -> 2; a pointer to pointers -> 8."""
    from ...lowering.element_type import ElementType
    inner = pointer_type[len("!tt.ptr<"):-1].split(",")[0].strip() if pointer_type.startswith("!tt.ptr<") else ""
    if not inner or inner.startswith("!tt.ptr"):
        return 8
    return max(1, ElementType.of(inner).logical_bits // 8)
