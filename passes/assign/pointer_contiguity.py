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
(by anything else: unknown, unless 0); splats and constants have stride 0 everywhere; a ``min``
or ``max`` is unknown along every dim where either operand varies (``_either``).  The
pointer arguments' ``tt.divisibility`` (bytes) and integer arguments' (their value) seed the
divisibility; anything else is divisible by 1.

Example: with the lines above, ``X`` 16-byte aligned, f16: strides (64, 1), so dim 1 is
contiguous; a vector starts at a multiple of gcd(16 bytes, 64 x 2 bytes) = 16 bytes: 8 f16.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..ir.module_lines import ModuleLines
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
_PREDICATE = re.compile(r"arith\.cmpi (\w+),")
_ATTRIBUTE = {name: re.compile(name + r" = (-?\d+)") for name in ("axis", "start")}


class PointerAnalysis:
    def __init__(self, lines: ModuleLines, function_header: str, argument_names: list[str]):
        self.lines = lines
        self._memo: dict[int, Optional[Affine]] = {}
        self._constancy_memo: dict[int, tuple] = {}
        # tt.divisibility of each argument, read from the function's first line
        self.argument_divisibility = {}
        for index, name in enumerate(argument_names):
            m = re.search(re.escape(name) + r": [^,{]*\{[^}]*tt\.divisibility = (\d+)", function_header)
            self.argument_divisibility[index] = int(m.group(1)) if m else 1

    @classmethod
    def of_function(cls, lines: ModuleLines, function) -> "PointerAnalysis":
        """The analysis of ``function`` (a ``tt.func``), its arguments' divisibility read from its
        header as ``lines`` prints it."""
        return cls(lines, lines.header(function), lines.of[id(function)].arguments)

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
        if tensor_type is not None and value.is_block_argument:
            return self._loop_carried(value)
        if tensor_type is None:
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
        if name in _EITHER_OPERAND:
            return _either(self.affine(op.operands[0]), self.affine(op.operands[1]))
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

    def _loop_carried(self, argument: Value) -> Optional[Affine]:
        """An ``scf.for`` iteration argument (pointers advanced each iteration, ``ptrs += step``):
        what its initial value and what the body yields have in common, as Triton's AxisInfo
        joins them.  Assumed to be the initial value, the yielded value is read; where it has the
        same strides, the argument has them with the smaller divisibility, read again until
        nothing changes.  Example: ``src + r * 64 + c`` advanced by ``4096`` f16 each iteration
        keeps strides (64, 1) and 16-byte alignment."""
        owner = argument.owner.parent.parent if argument.owner.parent is not None else None
        if owner is None or owner.name != "scf.for" or argument.index < 1:
            return None
        position = argument.index - 1
        terminator = owner.regions[0].blocks[0].operations[-1]
        if 3 + position >= len(owner.operands) or position >= len(terminator.operands):
            return None
        assumed = self.affine(owner.operands[3 + position])
        for _ in range(4):
            if assumed is None:
                return None
            memo = dict(self._memo)
            self._memo[id(argument)] = assumed
            joined = _join(assumed, self.affine(terminator.operands[position]))
            if joined == assumed:
                return assumed
            self._memo = memo                      # read again under the weaker assumption
            assumed = joined
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

    def run_start_divisibility(self, affine: Affine, dim: int) -> int:
        """What the first element of every run along ``dim`` is a multiple of: the base and
        every other dim's stride (Triton's AxisInfo divisibility along ``dim``)."""
        divisibility = affine.divisibility
        for d, stride in enumerate(affine.strides):
            if d != dim and stride != 0:
                divisibility = min(divisibility, affine.stride_divisor(d))
        return divisibility

    def constancy(self, value: Value) -> tuple:
        """Per dim, the length of the aligned runs along it that hold one value (for a mask:
        how many consecutive elements one mask bit covers), as Triton's AxisInfo proves it;
        1 along a dim the analysis cannot read.

        Read: splats and splat constants (constant along every dim), ``broadcast`` (constant
        along a stretched dim), ``expand_dims``, ``andi``/``ori``/``xori`` (the smaller of
        the two), and ``cmpi`` of an index against a bound constant along the dim: for
        ``c < n`` with ``c`` running 0..63 along the dim and ``n`` a multiple of 16, runs of
        16 (the bound can only fall on a multiple of 16)."""
        if id(value) in self._constancy_memo:
            return self._constancy_memo[id(value)]
        tensor_type = value.tensor_type
        shape = tuple(tensor_type.shape) if tensor_type is not None else ()
        self._constancy_memo[id(value)] = (1,) * len(shape)       # a cycle (loop-carried) is unknown
        result = self._constancy(value, shape)
        self._constancy_memo[id(value)] = result
        return result

    def _constancy(self, value: Value, shape: tuple) -> tuple:
        unknown = (1,) * len(shape)
        if value.is_block_argument:
            return unknown
        op = value.owner
        name = op.name
        if name == "tt.splat" or (name == "arith.constant" and "dense<[" not in self.lines.header(op)):
            return shape
        if name == "ttg.convert_layout":
            return self.constancy(op.operands[0])
        if name == "tt.broadcast":
            source = op.operands[0].tensor_type.shape
            inner = self.constancy(op.operands[0])
            return tuple(shape[d] if source[d] == 1 and shape[d] != 1 else inner[d] for d in range(len(shape)))
        if name == "tt.expand_dims":
            axis = self._attribute(op, "axis")
            if axis is None:
                return unknown
            inner = list(self.constancy(op.operands[0]))
            inner.insert(axis, 1)
            return tuple(inner)
        if name in ("arith.andi", "arith.ori", "arith.xori") or name in _EITHER_OPERAND:
            a, b = self.constancy(op.operands[0]), self.constancy(op.operands[1])
            return tuple(min(x, y) for x, y in zip(a, b))
        if name == "arith.cmpi":
            m = _PREDICATE.search(self.lines.header(op))
            a, b = self.affine(op.operands[0]), self.affine(op.operands[1])
            if m is None or a is None or b is None:
                return unknown
            return tuple(self._compare_constancy(m.group(1), a, b, d, shape[d]) for d in range(len(shape)))
        return unknown

    def _compare_constancy(self, predicate: str, a: Affine, b: Affine, dim: int, size: int) -> int:
        """Triton's rule for ``cmpi`` along one dim (the cases every release we support agrees
        on): both sides constant along it: the whole dim; one side running 0, 1, 2, ... along
        it and the other constant, compared so that the result flips at most once, from a
        run start on: the gcd of the run and both sides' divisibility."""
        if a.strides[dim] == 0 and b.strides[dim] == 0:
            return size
        if a.strides[dim] == 1 and b.strides[dim] == 0 and predicate in ("slt", "ult", "sge", "uge"):
            running, bound = a, b
        elif a.strides[dim] == 0 and b.strides[dim] == 1 and predicate in ("sgt", "ugt", "sle", "ule"):
            running, bound = b, a
        else:
            return 1
        return min(size, self.run_start_divisibility(running, dim), self.run_start_divisibility(bound, dim))

    def contiguity(self, pointer: Value, base: Optional[Value] = None) -> Optional[Contiguity]:
        """Along which dim a pointer tensor's elements are consecutive, and the vector width its
        alignment allows (None: the pointers are not an affine function the analysis reads).

        With ``base`` (a scalar pointer), ``pointer`` is a tensor of offsets (elements) from it,
        as AMD's buffer ops take them: the pointers are ``base + offsets``, read as
        ``tt.addptr(tt.splat(base), offsets)`` is.  Example: ``base`` with ``tt.divisibility =
        16``, f16, offsets ``r * 64 + c``: strides (64, 1), 8 f16 a vector, as for the
        pointers ``base + r * 64 + c``."""
        if base is None:
            affine, element_bytes = self.affine(pointer), pointee_bytes(pointer.tensor_type.element_type)
        else:
            offsets, element_bytes = self.affine(pointer), pointee_bytes(base.type)
            affine = None if offsets is None else Affine(
                offsets.strides, min(self.scalar_divisibility(base), LARGE, offsets.divisibility * element_bytes),
                tuple(offsets.stride_divisor(d) for d in range(len(offsets.strides))))
        if affine is None:
            return None
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


# Ops whose result is, element by element, one of their two operands.
_EITHER_OPERAND = ("arith.minsi", "arith.minui", "arith.maxsi", "arith.maxui")


def _element_divisibility(value: Affine) -> int:
    """What every element of ``value`` is a multiple of: its base and every varying dim's stride."""
    return min([value.divisibility] + [value.stride_divisor(d) for d, s in enumerate(value.strides) if s != 0])


def _either(a: Optional[Affine], b: Optional[Affine]) -> Optional[Affine]:
    """A value that is, element by element, one of ``a`` and ``b`` (a min or a max): constant along
    a dim where both are, elsewhere an unknown function of the index (stride None) whose values
    are multiples of what divides every element of both; Triton's AxisInfo takes the smaller
    divisibility and contiguity of the two likewise.  Example: rows clamped to the last valid
    one, ``min(64 * pid + arange(64), n - 1)``: unknown along its dim; once expanded, multiplied
    by a row stride of 4096 and added to ``arange(64)`` along dim 1, dim 1 stays contiguous and
    every run starts at a multiple of 4096."""
    if a is None or b is None:
        return None
    divides = min(_element_divisibility(a), _element_divisibility(b))
    strides = tuple(0 if x == 0 and y == 0 else None for x, y in zip(a.strides, b.strides))
    return Affine(strides, divides, tuple(LARGE if s == 0 else divides for s in strides))


def _join(a: Affine, b: Optional[Affine]) -> Optional[Affine]:
    """What two values with the same strides have in common (None where the strides differ)."""
    if b is None or a.strides != b.strides:
        return None
    rank = len(a.strides)
    return Affine(a.strides, min(a.divisibility, b.divisibility),
                  tuple(min(a.stride_divisor(d), b.stride_divisor(d)) for d in range(rank)))


def pointee_bytes(pointer_type: str) -> int:
    """``!tt.ptr<f16>`` -> 2; a pointer to pointers -> 8."""
    from ...lowering.element_type import ElementType
    inner = pointer_type[len("!tt.ptr<"):-1].split(",")[0].strip() if pointer_type.startswith("!tt.ptr<") else ""
    if not inner or inner.startswith("!tt.ptr"):
        return 8
    return max(1, ElementType.of(inner).logical_bits // 8)
