"""Linear layouts: tensor layouts as linear maps over F2 (arXiv 2505.23819, §4).

A *linear layout* L maps named input dimensions (hardware coordinates such as ``register``,
``lane``, ``warp``, ``block``, or a shared-memory ``offset``) to named output dimensions (the
tensor coordinates ``dim0``, ``dim1``, ...).  Every dimension has a power-of-two size, so a
coordinate is a bit vector, and L is linear over F2: it is fully described by the image of each
input bit, its *basis*::

    L(x) = XOR of bases[d][i] over every in-dim d and every set bit i of x_d

Worked example: the paper's Figure 1 (a 16x16 tensor, 2x2 registers, 4x8 lanes, 2 warps).
With out dims (dim0 = row, dim1 = column)::

    register: [[0, 1], [8, 0]]              register 1 -> column 1, register 2 -> row 8
    lane:     [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    warp:     [[0, 8]]

Lane 5 (= 1 + 4) holds rows/columns  (0, 2) ^ (1, 0) = (1, 2)  in its register 0, and its
register 3 (= 1 + 2) holds (1, 2) ^ (0, 1) ^ (8, 0) = (9, 3).

This class has the semantics of Triton's C++ ``mlir::triton::LinearLayout``
(``include/triton/Tools/LinearLayout.h``) for every operation Triton has: same construction
rules, same dimension orders, same choice among many solutions in ``invert_and_compose``, and
the same ``str`` format.  It is immutable and hashable.  Unlike Triton it has no 64-bit cap.

Internally each basis is also kept *flattened*: its components packed into one integer, the
first out-dim in the least significant bits (``_shifts`` gives the bit offset of every out
dim).  The F2 algebra in ``dialect.f2`` works on those integers.
"""

from __future__ import annotations

import itertools
from typing import Iterable, Mapping, Sequence, Union

from . import f2

Basis = tuple  # tuple[int, ...], one component per out dim
BasesInput = Union[Mapping[str, Sequence[Sequence[int]]], Sequence[tuple[str, Sequence[Sequence[int]]]]]


class LayoutError(ValueError):
    """Raised for invalid layouts or invalid operations on layouts; the message names the culprit."""


def is_power_of_two(n) -> bool:
    """True for the ints 1, 2, 4, ...; False for anything else, ``True`` and ``0`` included
    (every size check in the dialect uses this one definition)."""
    return isinstance(n, int) and not isinstance(n, bool) and n > 0 and (n & (n - 1)) == 0


def _check_name(name, what: str) -> None:
    """Dim names are non-empty strings (``None``, ``""``, numbers are refused)."""
    if not isinstance(name, str) or not name:
        raise LayoutError(f"{what} names must be non-empty strings, got {name!r}")


def _quotient_if_product(product, candidate: "LinearLayout", whole: "LinearLayout") -> "LinearLayout | None":
    """``candidate`` if ``product(candidate)`` (b * C or C * b) rebuilds ``whole``, else None."""
    try:
        return candidate if product(candidate) == whole else None
    except LayoutError:
        return None


def _check_layout(other, operation: str) -> None:
    """The other operand of a binary operation must be a LinearLayout."""
    if not isinstance(other, LinearLayout):
        raise LayoutError(f"{operation} needs a LinearLayout, got {type(other).__name__} {other!r:.60}")


def _check_names(names, what: str) -> list:
    """A sequence of dim names (not a bare string, not None), each valid, none repeated."""
    if isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple)):
        raise LayoutError(f"{what} must be a list of names, got {names!r}")
    for n in names:
        _check_name(n, what.rstrip("s") if what.endswith("s") else what)
    if len(set(names)) != len(names):
        raise LayoutError(f"duplicate names in {what} {list(names)}")
    return list(names)


def _named_sizes(dims, operation: str, what: str) -> list:
    """``dims`` (a mapping or a list of (name, size) pairs) checked: names valid and distinct,
    sizes powers of two."""
    try:
        new = list(dims.items()) if isinstance(dims, Mapping) else [tuple(p) for p in dims]
    except TypeError:
        raise LayoutError(f"{operation}: expected (name, size) pairs, got {dims!r}") from None
    for p in new:
        if len(p) != 2:
            raise LayoutError(f"{operation}: expected (name, size) pairs, got {p!r}")
        _check_name(p[0], what)
        if not is_power_of_two(p[1]):
            raise LayoutError(f"{operation}: size {p[1]!r} of {what} '{p[0]}' is not a power of 2")
    names = [n for n, _ in new]
    if len(set(names)) != len(names):
        raise LayoutError(f"{operation}: duplicate {what} names in {names}")
    return new


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _next_pow2_strictly_greater(x: int) -> int:
    """LLVM's NextPowerOf2: the smallest power of two strictly greater than x (0 -> 1, 4 -> 8)."""
    return 1 << x.bit_length()


def supremum(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """Merge two ordered name lists into one that keeps both relative orders.

    Where both orders allow either name next, the first list wins.  Contradictory orders
    (``[a, b]`` and ``[b, a]``) have no supremum and raise ``LayoutError``.

    Example: ``supremum(["register", "lane"], ["lane", "warp"]) == ["register", "lane", "warp"]``.
    """
    x, y = list(x), list(y)
    if x == y or not y:
        return x
    if not x:
        return y
    xs, ys = set(x), set(y)
    result: list[str] = []
    i = j = 0
    while i < len(x) and j < len(y):
        a, b = x[i], y[j]
        if a == b:
            result.append(a)
            i += 1
            j += 1
        elif a not in ys:  # only in x: free to go now, and x wins ties
            result.append(a)
            i += 1
        elif b not in xs:
            result.append(b)
            j += 1
        else:  # a comes later in y and b later in x
            raise LayoutError(f"dimension orders {x} and {y} contradict each other: no supremum exists")
    return result + x[i:] + y[j:]


class LinearLayout:
    """An immutable linear map over F2 from named input dims to named output dims."""

    __slots__ = ("_in", "_out", "_shifts", "_flat", "_rank", "_hash")

    # ------------------------------------------------------------------ construction

    def __init__(self, bases: Sequence[tuple[str, Sequence[Basis]]], out_dims: Sequence[tuple[str, int]],
                 *, require_surjective: bool = True, _checked: bool = False):
        """Low-level constructor: ``bases`` is a sequence of (in-dim, list of bases) pairs and
        ``out_dims`` a sequence of (name, size) pairs.  Users normally call ``from_bases``."""
        try:
            self._in = tuple((name, tuple(tuple(b) for b in bs)) for name, bs in bases)
            self._out = tuple((name, size) for name, size in out_dims)
        except (TypeError, ValueError):
            raise LayoutError(f"bases must be (in-dim, list of bases) pairs and out dims (name, size) pairs; "
                              f"got {bases!r} and {out_dims!r}") from None
        if not _checked:
            self._check(require_surjective)
        shifts = []
        total = 0
        for _, size in self._out:
            shifts.append(total)
            total += _log2(size)
        self._shifts = tuple(shifts)
        self._flat = None
        self._rank = None
        self._hash = None
        if require_surjective and not _checked and not self.is_surjective():
            raise LayoutError(
                "Layout is expected to be surjective, i.e. every `out` coordinate can be reached by "
                "some `in` coordinate, but was not:" + str(self))

    @classmethod
    def _raw(cls, ins: tuple, outs: tuple, flat: tuple | None = None) -> "LinearLayout":
        """Internal constructor for already valid data, skipping every check and copy:
        ``ins`` a tuple of (name, tuple of basis tuples), ``outs`` a tuple of (name, size),
        ``flat`` the packed columns if the caller has them (else computed on demand)."""
        self = object.__new__(cls)
        self._in = ins
        self._out = outs
        shifts = []
        total = 0
        for _, size in outs:
            shifts.append(total)
            total += size.bit_length() - 1
        self._shifts = tuple(shifts)
        self._flat = flat
        self._rank = None
        self._hash = None
        return self

    def _check(self, require_surjective: bool) -> None:
        in_names = [n for n, _ in self._in]
        out_names = [n for n, _ in self._out]
        for n in in_names:
            _check_name(n, "in-dim")
        for n in out_names:
            _check_name(n, "out-dim")
        for names, what in ((in_names, "in"), (out_names, "out")):
            if len(set(names)) != len(names):
                raise LayoutError(f"duplicate {what}-dim names in {names}")
        for name, size in self._out:
            if not is_power_of_two(size):
                raise LayoutError(f"out-dim '{name}' has size {size}; out-dim sizes must be powers of 2")
        for in_dim, bs in self._in:
            for i, basis in enumerate(bs):
                if len(basis) != len(self._out):
                    raise LayoutError(
                        f"basis {i} of in-dim '{in_dim}' is {list(basis)}: it must have one component per "
                        f"out dim ({len(self._out)}: {out_names})")
                for (out_dim, size), c in zip(self._out, basis):
                    if not isinstance(c, int) or isinstance(c, bool) or c < 0:
                        raise LayoutError(
                            f"basis {i} of in-dim '{in_dim}' is {list(basis)}: component for out-dim "
                            f"'{out_dim}' must be a non-negative integer")
                    if c >= size:
                        raise LayoutError(
                            f"basis {i} of in-dim '{in_dim}' is {list(basis)}: component {c} for out-dim "
                            f"'{out_dim}' must be less than its size {size}")

    @classmethod
    def from_bases(cls, bases: BasesInput, out_dims: Union[Sequence[str], Mapping[str, int]], *,
                   require_surjective: bool = True) -> "LinearLayout":
        """Build a layout from its bases.

        ``bases`` maps in-dim name -> list of bases (each a list of ints, one per out dim), as a
        dict or a sequence of pairs; in-dim order is the order given.  ``out_dims`` is a list of
        names, whose sizes are then inferred as Triton infers them (the smallest power of two
        strictly greater than every component, at least 1; the result must be surjective), or a
        dict name -> size.
        """
        try:
            pairs = list(bases.items()) if isinstance(bases, Mapping) else [tuple(p) for p in bases]
        except TypeError:
            raise LayoutError(f"bases must map in-dim names to lists of bases, got {bases!r}") from None
        for p in pairs:
            if len(p) != 2 or not isinstance(p[0], str):
                raise LayoutError(f"bases must map in-dim names to lists of bases, got {p!r}")
            if isinstance(p[1], (str, bytes)) or not isinstance(p[1], (list, tuple)) or \
                    not all(isinstance(b, (list, tuple)) for b in p[1]):
                raise LayoutError(f"the bases of in-dim {p[0]!r} must be a list of lists of ints, got {p[1]!r}")
        if not isinstance(out_dims, Mapping):
            _check_names(out_dims, "out dims")
        if isinstance(out_dims, Mapping):
            outs = list(out_dims.items())
        else:
            names = list(out_dims)
            sizes = {n: 1 for n in names}
            for in_dim, bs in pairs:
                for i, basis in enumerate(bs):
                    if len(basis) != len(names):
                        raise LayoutError(
                            f"basis {i} of in-dim '{in_dim}' is {list(basis)}: it must have one component per "
                            f"out dim ({len(names)}: {names})")
                    for n, c in zip(names, basis):
                        if isinstance(c, int) and c >= 0:
                            sizes[n] = max(sizes[n], _next_pow2_strictly_greater(c))
            outs = [(n, sizes[n]) for n in names]
            require_surjective = True
        return cls(pairs, outs, require_surjective=require_surjective)

    @classmethod
    def empty(cls) -> "LinearLayout":
        """No in dims, no out dims: the unit of ``*``."""
        return cls((), (), _checked=True)

    @classmethod
    def strided_1d(cls, size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """x -> stride * x for x in [0, size); the out dim has size stride * size."""
        if isinstance(size, bool) or isinstance(stride, bool):
            raise LayoutError(f"strided_1d: size and stride must be integers, got {size!r} and {stride!r}")
        if size == 0:
            return cls.empty()
        if not is_power_of_two(size) or not is_power_of_two(stride):
            raise LayoutError(f"strided_1d({size}, {stride}, {in_dim!r}, {out_dim!r}): size and stride must be powers of 2")
        bases = [(stride << i,) for i in range(_log2(size))]
        return cls([(in_dim, bases)], [(out_dim, stride * size)], require_surjective=False)

    @classmethod
    def identity_1d(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """x -> x for x in [0, size).  ``identity_1d(1, ...)`` is not empty: it names both dims."""
        return cls.strided_1d(size, 1, in_dim, out_dim)

    @classmethod
    def zeros_1d(cls, size: int, in_dim: str, out_dim: str, out_size: int = 1) -> "LinearLayout":
        """x -> 0 for x in [0, size): every input bit broadcasts."""
        if isinstance(size, bool):
            raise LayoutError(f"zeros_1d: size must be an integer, got {size!r}")
        if size == 0:
            return cls.empty()
        if not is_power_of_two(size) or not is_power_of_two(out_size):
            raise LayoutError(f"zeros_1d({size}, {in_dim!r}, {out_dim!r}, {out_size}): sizes must be powers of 2")
        return cls([(in_dim, [(0,)] * _log2(size))], [(out_dim, out_size)], require_surjective=False)

    # ------------------------------------------------------------------ plain queries

    @property
    def bases(self) -> dict[str, tuple[Basis, ...]]:
        """in-dim -> tuple of bases (each a tuple with one int per out dim), in in-dim order."""
        return dict(self._in)

    @property
    def in_dims(self) -> dict[str, int]:
        """in-dim name -> size, in order."""
        return {name: 1 << len(bs) for name, bs in self._in}

    @property
    def out_dims(self) -> dict[str, int]:
        """out-dim name -> size, in order."""
        return dict(self._out)

    @property
    def in_dim_names(self) -> list[str]:
        return [n for n, _ in self._in]

    @property
    def out_dim_names(self) -> list[str]:
        return [n for n, _ in self._out]

    def has_in_dim(self, name: str) -> bool:
        return any(n == name for n, _ in self._in)

    def has_out_dim(self, name: str) -> bool:
        return any(n == name for n, _ in self._out)

    def _in_bases(self, name: str) -> tuple[Basis, ...]:
        for n, bs in self._in:
            if n == name:
                return bs
        raise LayoutError(f"in-dim '{name}' is not in the layout (in dims: {self.in_dim_names})")

    def _out_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self._out):
            if n == name:
                return i
        raise LayoutError(f"out-dim '{name}' is not in the layout (out dims: {self.out_dim_names})")

    def in_dim_size_log2(self, name: str) -> int:
        return len(self._in_bases(name))

    def in_dim_size(self, name: str) -> int:
        return 1 << self.in_dim_size_log2(name)

    def in_dim_size_or_one(self, name: str) -> int:
        """The size of in dim ``name``, 1 where the layout has no such dim: a distributed layout
        without a ``warp`` dim lives in one warp, one without ``register`` holds one register."""
        return self.in_dim_size(name) if self.has_in_dim(name) else 1

    def out_dim_size(self, name: str) -> int:
        return self._out[self._out_index(name)][1]

    def out_dim_size_log2(self, name: str) -> int:
        return _log2(self.out_dim_size(name))

    @property
    def total_in_dim_size_log2(self) -> int:
        return sum(len(bs) for _, bs in self._in)

    @property
    def total_in_dim_size(self) -> int:
        return 1 << self.total_in_dim_size_log2

    @property
    def total_out_dim_size_log2(self) -> int:
        return sum(_log2(s) for _, s in self._out)

    @property
    def total_out_dim_size(self) -> int:
        return 1 << self.total_out_dim_size_log2

    def get_basis(self, in_dim: str, pos: int, out_dim: str | None = None):
        bases = self._in_bases(in_dim)
        if not isinstance(pos, int) or isinstance(pos, bool) or not 0 <= pos < len(bases):
            raise LayoutError(f"get_basis: in-dim '{in_dim}' has {len(bases)} bases; {pos!r} is not one of them")
        basis = bases[pos]
        return basis if out_dim is None else basis[self._out_index(out_dim)]

    # ------------------------------------------------------------------ flattened view

    def pack(self, basis: Basis) -> int:
        """A basis (one coordinate per out dim) as one integer: the out dims' bits side by side,
        the first out dim lowest (the flattened view every F2 computation here works in)."""
        v = 0
        for c, s in zip(basis, self._shifts):
            v |= c << s
        return v

    def _unpack(self, v: int, shifts=None, out=None) -> Basis:
        shifts = self._shifts if shifts is None else shifts
        out = self._out if out is None else out
        return tuple((v >> s) & (size - 1) for s, (_, size) in zip(shifts, out))

    @property
    def flat_columns(self) -> tuple[int, ...]:
        """Every basis packed into one int (out dims concatenated, first out dim lowest), in
        in-dim order: the columns of ``matrix()``."""
        if self._flat is None:
            self._flat = tuple(self.pack(b) for _, bs in self._in for b in bs)
        return self._flat

    def rank(self) -> int:
        """Rank over F2 of the basis matrix."""
        if self._rank is None:
            self._rank = f2.rank(self.flat_columns)
        return self._rank

    def is_surjective(self) -> bool:
        return self.rank() == self.total_out_dim_size_log2

    def is_injective(self) -> bool:
        return self.rank() == self.total_in_dim_size_log2

    def is_invertible(self) -> bool:
        return self.is_surjective() and self.total_in_dim_size_log2 == self.total_out_dim_size_log2

    def matrix(self) -> list[list[int]]:
        """The basis matrix as Triton's ``getMatrix``: one row per out bit (out dims in order,
        bit 0 first), one column per in bit (in dims in order, bit 0 first)."""
        cols = self.flat_columns
        return [[(c >> r) & 1 for c in cols] for r in range(self.total_out_dim_size_log2)]

    # ------------------------------------------------------------------ evaluation

    def apply(self, mapping: Mapping[str, int]) -> dict[str, int]:
        """Evaluate the layout.  ``mapping`` must name every in dim (any order); bits beyond an
        in dim's size are ignored (as in Triton's ``LinearLayout::apply``).  Returns out-dim -> value, in out-dim order."""
        names = set(self.in_dim_names)
        if set(mapping) != names:
            raise LayoutError(f"apply needs exactly the in dims {self.in_dim_names}, got {sorted(mapping)}")
        columns, first = self.flat_columns, 0
        v = 0
        for name, bs in self._in:
            x = mapping[name]
            if not isinstance(x, int) or isinstance(x, bool) or x < 0:
                raise LayoutError(f"apply: the value of in-dim '{name}' must be a non-negative integer, got {x!r}")
            v ^= f2.apply_columns(columns[first:first + len(bs)], x)
            first += len(bs)
        return dict(zip(self.out_dim_names, self._unpack(v)))

    def apply_flat(self, x: int) -> int:
        """Evaluate on a flattened input (in dims concatenated, first in dim lowest) and return
        the flattened output."""
        if not isinstance(x, int) or isinstance(x, bool) or x < 0:
            raise LayoutError(f"apply_flat takes a non-negative integer, got {x!r}")
        return f2.apply_columns(self.flat_columns, x)

    # ------------------------------------------------------------------ equality, printing

    def _key(self):
        return (self._in, self._out)

    def __eq__(self, other) -> bool:
        return isinstance(other, LinearLayout) and self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __str__(self) -> str:
        outs = "[" + ", ".join(f"{n} (size {s})" for n, s in self._out) + "]"
        if not self._in:
            return "\n(empty layout)" if not self._out else f"\n(empty layout with out-dims {outs})"
        text = "\n"
        for name, bs in self._in:
            if not bs:
                text += f" - {name} is a size 1 dimension\n"
                continue
            lines = [f"{name}={1 << i} -> (" + ", ".join(str(c) for c in b) + ")" for i, b in enumerate(bs)]
            text += " - " + "\n   ".join(lines) + "\n"
        return text + "where out dims are: " + outs

    def __repr__(self) -> str:
        return f"LinearLayout.from_bases({ {n: [list(b) for b in bs] for n, bs in self._in} }, {dict(self._out)})"

    # ------------------------------------------------------------------ dim reordering

    def transpose_ins(self, order: Sequence[str]) -> "LinearLayout":
        """The same map with the in dims in ``order`` (a permutation of the in-dim names)."""
        order = _check_names(order, "in dims")
        if sorted(order) != sorted(self.in_dim_names):
            raise LayoutError(f"transpose_ins: {list(order)} is not a permutation of the in dims {self.in_dim_names}")
        if list(order) == self.in_dim_names:
            return self
        table = dict(self._in)
        return LinearLayout._raw(tuple((n, table[n]) for n in order), self._out)

    def transpose_outs(self, order: Sequence[str]) -> "LinearLayout":
        """The same map with the out dims (and every basis' components) in ``order``."""
        order = _check_names(order, "out dims")
        if sorted(order) != sorted(self.out_dim_names):
            raise LayoutError(f"transpose_outs: {list(order)} is not a permutation of the out dims {self.out_dim_names}")
        if list(order) == self.out_dim_names:
            return self
        perm = [self._out_index(n) for n in order]
        bases = tuple((n, tuple(tuple([b[i] for i in perm]) for b in bs)) for n, bs in self._in)
        return LinearLayout._raw(bases, tuple(self._out[i] for i in perm))

    def rename_in_dim(self, old: str, new: str) -> "LinearLayout":
        self._in_bases(old)
        if new != old and self.has_in_dim(new):
            raise LayoutError(f"rename_in_dim: in-dim '{new}' already exists")
        return LinearLayout._raw(tuple((new if n == old else n, bs) for n, bs in self._in), self._out, self._flat)

    def rename_out_dim(self, old: str, new: str) -> "LinearLayout":
        self._out_index(old)
        return LinearLayout(self._in, [(new if n == old else n, s) for n, s in self._out], require_surjective=False)

    # ------------------------------------------------------------------ reshape

    def reshape_ins(self, new_in_dims: Union[Sequence[tuple[str, int]], Mapping[str, int]]) -> "LinearLayout":
        """Concatenate all bases in in-dim order, then deal them out to ``new_in_dims``
        (name -> size, in order).  Total size must be unchanged."""
        new = _named_sizes(new_in_dims, "reshape_ins", "in-dim")
        if sum(_log2(s) for _, s in new) != self.total_in_dim_size_log2:
            raise LayoutError(f"reshape_ins: total size of {new} differs from {self.total_in_dim_size}")
        flat = [b for _, bs in self._in for b in bs]
        bases, i = [], 0
        for n, s in new:
            k = _log2(s)
            bases.append((n, flat[i:i + k]))
            i += k
        return LinearLayout(bases, self._out, require_surjective=False)

    def reshape_outs(self, new_out_dims: Union[Sequence[tuple[str, int]], Mapping[str, int]]) -> "LinearLayout":
        """Flatten the out dims (first out dim least significant) and split the result into
        ``new_out_dims`` (name -> size, in order, first least significant)."""
        new = _named_sizes(new_out_dims, "reshape_outs", "out-dim")
        if sum(_log2(s) for _, s in new) != self.total_out_dim_size_log2:
            raise LayoutError(f"reshape_outs: total size of {new} differs from {self.total_out_dim_size}")
        shifts, total = [], 0
        for _, s in new:
            shifts.append(total)
            total += _log2(s)
        bases = [(n, [self._unpack(self.pack(b), shifts, new) for b in bs]) for n, bs in self._in]
        return LinearLayout(bases, new, _checked=True)

    def flatten_ins(self) -> "LinearLayout":
        """One in dim, named like the first, of the total in size."""
        if not self._in:
            return self
        return self.reshape_ins([(self._in[0][0], self.total_in_dim_size)])

    def flatten_outs(self) -> "LinearLayout":
        """One out dim, named like the first, of the total out size (dim0 least significant)."""
        if not self._out:
            return self
        return self.reshape_outs([(self._out[0][0], self.total_out_dim_size)])

    # ------------------------------------------------------------------ restriction

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> "LinearLayout":
        """Keep only the listed in dims (the others are fixed to 0) and the listed out-dim
        components.  Out sizes and the original dim order are kept."""
        ins, outs = set(in_dims), set(out_dims)
        for d in ins:
            self._in_bases(d)
        for d in outs:
            self._out_index(d)
        keep = [i for i, (n, _) in enumerate(self._out) if n in outs]
        if len(keep) == len(self._out):
            bases = tuple((n, bs) for n, bs in self._in if n in ins)
        else:
            bases = tuple((n, tuple(tuple([b[i] for i in keep]) for b in bs)) for n, bs in self._in if n in ins)
        return LinearLayout._raw(bases, tuple(self._out[i] for i in keep))

    def sublayout_is_zero(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> bool:
        sub = self.sublayout(in_dims, out_dims)
        return all(c == 0 for _, bs in sub._in for b in bs for c in b)

    def square_sublayout_is_identity(self, dims: Sequence[str]) -> bool:
        """dims -> dims is the identity (equal sizes; flattened bases 1, 2, 4, ...)."""
        if not dims:
            return True
        for d in dims:
            if not self.has_in_dim(d) or not self.has_out_dim(d) or self.in_dim_size(d) != self.out_dim_size(d):
                return False
        sub = self.sublayout(dims, dims)
        return list(sub.flat_columns) == [1 << i for i in range(len(sub.flat_columns))]

    def is_trivial_over(self, dims: Sequence[str]) -> bool:
        """True iff the layout acts as the identity on ``dims`` and keeps them separate from the
        other dims: dims -> dims is the identity, the other in dims do not reach the out dims
        ``dims``, and ``dims`` do not reach the other out dims."""
        for d in dims:
            if not self.has_in_dim(d) and not self.has_out_dim(d):
                return False
        rest_in = [n for n in self.in_dim_names if n not in dims]
        rest_out = [n for n in self.out_dim_names if n not in dims]
        return (self.square_sublayout_is_identity(dims)
                and self.sublayout_is_zero(rest_in, [d for d in dims if self.has_out_dim(d)])
                and self.sublayout_is_zero([d for d in dims if self.has_in_dim(d)], rest_out))

    def quotient(self, dims: Sequence[str]) -> "LinearLayout | None":
        """Remove ``dims`` from both sides, or None when the layout is not trivial over them."""
        if not self.is_trivial_over(dims):
            return None
        return self.sublayout([n for n in self.in_dim_names if n not in dims],
                              [n for n in self.out_dim_names if n not in dims])

    def resize_in_dim(self, dim: str, new_size: int) -> "LinearLayout":
        """Shrinking drops the most significant bases of ``dim``; growing appends zero bases."""
        if not is_power_of_two(new_size):
            raise LayoutError(f"resize_in_dim: new size {new_size} of in-dim '{dim}' is not a power of 2")
        k = _log2(new_size)
        zero = (0,) * len(self._out)
        bases = []
        for n, bs in self._in:
            if n == dim:
                bs = bs[:k] + (zero,) * max(0, k - len(bs))
            bases.append((n, bs))
        self._in_bases(dim)
        return LinearLayout(bases, self._out, _checked=True)

    def resize_out_dim(self, dim: str, new_size: int) -> "LinearLayout":
        """Shrink out dim ``dim`` to ``new_size``: components >= new_size become 0."""
        i = self._out_index(dim)
        if not is_power_of_two(new_size) or new_size > self._out[i][1]:
            raise LayoutError(f"resize_out_dim: new size {new_size} of out-dim '{dim}' must be a power of 2 "
                              f"no larger than {self._out[i][1]}")
        bases = [(n, [b[:i] + ((b[i] if b[i] < new_size else 0),) + b[i + 1:] for b in bs]) for n, bs in self._in]
        outs = list(self._out)
        outs[i] = (dim, new_size)
        return LinearLayout(bases, outs, _checked=True)

    def remove_zero_bases_along_dim(self, dim: str) -> "LinearLayout":
        """Delete the bases of in dim ``dim`` that are zero in every out dim (strips broadcasting)."""
        self._in_bases(dim)
        bases = [(n, [b for b in bs if any(b)] if n == dim else bs) for n, bs in self._in]
        return LinearLayout(bases, self._out, _checked=True)

    # ------------------------------------------------------------------ concatenation, product

    def concat_ins(self, other: "LinearLayout") -> "LinearLayout":
        """Same out dims (names, order, sizes), disjoint in dims: this's in dims then other's."""
        _check_layout(other, "concat_ins")
        if self._out != other._out:
            raise LayoutError(f"concat_ins: out dims differ: {dict(self._out)} vs {dict(other._out)}")
        common = set(self.in_dim_names) & set(other.in_dim_names)
        if common:
            raise LayoutError(f"concat_ins: in dims {sorted(common)} appear in both layouts")
        return LinearLayout(self._in + other._in, self._out, _checked=True)

    def concat_outs(self, other: "LinearLayout") -> "LinearLayout":
        """Same in dims (names, order, sizes), disjoint out dims: each basis is this's components
        followed by other's."""
        _check_layout(other, "concat_outs")
        if [(n, len(b)) for n, b in self._in] != [(n, len(b)) for n, b in other._in]:
            raise LayoutError(f"concat_outs: in dims differ: {self.in_dims} vs {other.in_dims}")
        common = set(self.out_dim_names) & set(other.out_dim_names)
        if common:
            raise LayoutError(f"concat_outs: out dims {sorted(common)} appear in both layouts")
        bases = [(n, [a + b for a, b in zip(bs, obs)]) for (n, bs), (_, obs) in zip(self._in, other._in)]
        return LinearLayout(bases, self._out + other._out, _checked=True)

    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Direct sum ("product"): ``inner * outer`` puts outer's bits above inner's.

        In and out dims are merged in order (``supremum``).  Each in dim gets inner's bases
        first, then outer's, and outer's components are shifted left past inner's size of that
        out dim.  Example: ``identity_1d(4, "i", "o") * zeros_1d(2, "i", "o")`` is x -> x mod 4
        on [0, 8).  Not commutative; associative; ``empty()`` is the unit.
        """
        _check_layout(outer, "*")
        inner = self
        inner_in, outer_in = dict(inner._in), dict(outer._in)
        inner_out, outer_out = dict(inner._out), dict(outer._out)
        in_names = supremum(list(inner_in), list(outer_in))
        out_names = supremum(list(inner_out), list(outer_out))
        outs = tuple((d, inner_out.get(d, 1) * outer_out.get(d, 1)) for d in out_names)
        # Where each result component comes from (-1: that layout lacks the out dim, so 0).
        inner_index = {d: i for i, d in enumerate(inner_out)}
        outer_index = {d: i for i, d in enumerate(outer_out)}
        inner_pos = [inner_index.get(d, -1) for d in out_names]
        outer_pos = [outer_index.get(d, -1) for d in out_names]
        shift = [inner_out.get(d, 1).bit_length() - 1 for d in out_names]
        inner_as_is = inner_pos == list(range(len(out_names)))
        outer_as_is = outer_pos == list(range(len(out_names)))
        zero = (0,) * len(out_names)
        bases = []
        for d in in_names:
            bs = inner_in.get(d, ())
            if not inner_as_is:
                bs = tuple(tuple([b[p] if p >= 0 else 0 for p in inner_pos]) for b in bs)
            obs = outer_in.get(d, ())
            if obs and outer_as_is:
                bs += tuple(tuple([c << s for c, s in zip(b, shift)]) if any(b) else zero for b in obs)
            elif obs:
                bs += tuple(tuple([(b[p] << s) if p >= 0 else 0 for p, s in zip(outer_pos, shift)]) if any(b) else zero
                            for b in obs)
            bases.append((d, bs))
        return LinearLayout._raw(tuple(bases), outs)

    # ------------------------------------------------------------------ composition, inversion

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """outer ∘ this.  This's out dims must be outer's in dims (as sets), each no larger."""
        _check_layout(outer, "compose")
        if sorted(self.out_dim_names) != sorted(outer.in_dim_names):
            raise LayoutError(f"compose: out dims {self.out_dim_names} of the inner layout must equal the in dims "
                              f"{outer.in_dim_names} of the outer layout")
        for d, size in self._out:
            if size > outer.in_dim_size(d):
                raise LayoutError(f"compose: out-dim '{d}' has size {size}, larger than the outer layout's "
                                  f"in-dim size {outer.in_dim_size(d)}")
        # Bit j of this's packed output is bit k of some out dim d, i.e. input bit k of outer's
        # in dim d: outer's column `image[j]`.  Feed each packed basis through that table.
        cols = outer.flat_columns
        offsets, pos = {}, 0
        for n, bs in outer._in:
            offsets[n] = pos
            pos += len(bs)
        image = [cols[offsets[d] + k] for d, size in self._out for k in range(_log2(size))]
        flat = []
        for c in self.flat_columns:
            v = 0
            while c:  # one step per set bit (typical layouts have one per column)
                low = c & -c
                v ^= image[low.bit_length() - 1]
                c ^= low
            flat.append(v)
        return LinearLayout._raw(self._regroup(flat, outer._out), outer._out, tuple(flat))

    def _regroup(self, flat: Sequence[int], outs: Sequence[tuple[str, int]]) -> tuple:
        """Packed columns, one per input bit of this layout, as bases per in dim of ``outs``."""
        if len(outs) == 1:
            columns = [(v,) for v in flat]
        else:
            fields, total = [], 0
            for _, size in outs:
                fields.append((total, size - 1))
                total += size.bit_length() - 1
            columns = [tuple([(v >> s) & m for s, m in fields]) for v in flat]
        bases, i = [], 0
        for n, bs in self._in:
            bases.append((n, tuple(columns[i:i + len(bs)])))
            i += len(bs)
        return tuple(bases)

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """C with outer(C(x)) == this(x): maps this's in dims to outer's in dims.

        Typical use: ``dst.invert_and_compose(src)`` says, for each destination hardware
        coordinate, which source hardware coordinate holds the same tensor element.

        When ``outer`` is not injective there are many solutions; like Triton 3.9 we (1) map to
        itself every in dim that has identical bases in both layouts *and* whose bases touch no
        output bit that another in dim of either layout touches (so a broadcast over, say, ``block``
        stays local), and (2) solve the rest with ``lstsq``, which sets free variables to zero
        (the smallest preimage).  Raises ``LayoutError`` if ``outer`` does not cover this
        layout's image.  (Because the identity dims share no output bit with the other dims,
        step 2 succeeds exactly when the whole equation has a solution.)

        Example of the bit test in (1): with out dim ``o`` and identical ``warp`` bases
        ``[[2]]`` in both layouts, ``warp`` maps to itself when the other bases are
        ``lane: [[1]]`` (bits 0b10 vs 0b01 are disjoint) but not when one of them is
        ``lane: [[3]]`` (0b10 & 0b11 != 0); then ``lstsq`` decides where warp 1 goes.  (Triton
        3.6 had no bit test, and aborted when the identity dims left lstsq unsolvable.)
        """
        _check_layout(outer, "invert_and_compose")
        if sorted(self.out_dim_names) != sorted(outer.out_dim_names):
            raise LayoutError(f"invert_and_compose: out dims differ: {self.out_dim_names} vs {outer.out_dim_names}")
        a = outer.transpose_outs(self.out_dim_names)
        for (d, size), (_, a_size) in zip(self._out, a._out):
            if a_size < size:
                raise LayoutError(f"invert_and_compose: out-dim '{d}' has size {size} here but only "
                                  f"{a_size} in the outer layout")
        # Work on packed columns, both packed with a's out sizes (a's are at least as large).
        a_cols = a.flat_columns
        b_cols = self.flat_columns if a._out == self._out else tuple(a.pack(b) for _, bs in self._in for b in bs)
        a_start, b_start, pos = {}, {}, 0
        masks = {}  # per in dim of a: OR of its packed bases (the output bits it touches)
        for n, bs in a._in:
            a_start[n] = pos
            m = 0
            for c in a_cols[pos:pos + len(bs)]:
                m |= c
            masks[n] = m
            pos += len(bs)
        pos = 0
        b_masks = {}  # the same for this layout's in dims (packed with a's sizes)
        for n, bs in self._in:
            b_start[n] = pos
            m = 0
            for c in b_cols[pos:pos + len(bs)]:
                m |= c
            b_masks[n] = m
            pos += len(bs)
        identity_dims = set()
        for n, bs in a._in:
            if n in b_start and bs == self._in_bases(n):
                rest = 0
                for other, m in itertools.chain(masks.items(), b_masks.items()):
                    if other != n:
                        rest |= m
                if not masks[n] & rest:
                    identity_dims.add(n)
        flat = self._solve(a, a_cols, a_start, b_cols, identity_dims)
        if flat is None:
            raise LayoutError("invert_and_compose: the outer layout does not cover this layout's image:"
                              f"{outer}\nthis layout:{self}")
        outs = tuple((n, 1 << len(bs)) for n, bs in outer._in)
        return LinearLayout._raw(self._regroup(flat, outs), outs, tuple(flat))

    def _solve(self, a: "LinearLayout", a_cols, a_start, b_cols, identity_dims) -> list[int] | None:
        """invert_and_compose's packed result columns (bit ``a_start[d] + i`` = bit i of a's in
        dim d), or None if lstsq fails: identity dims map to themselves, every other column
        of this layout (``b_cols``) is expressed through a's pivot columns outside them."""
        basis = f2.EchelonBasis()
        where = []  # input bit of a (packed position) of every inserted column
        for n, bs in a._in:
            if n not in identity_dims:
                for i in range(len(bs)):
                    basis.insert(a_cols[a_start[n] + i])
                    where.append(1 << (a_start[n] + i))
        flat, pos = [], 0
        for n, bs in self._in:
            if n in identity_dims:
                flat.extend(1 << (a_start[n] + i) for i in range(len(bs)))
                pos += len(bs)
                continue
            for col in b_cols[pos:pos + len(bs)]:
                combination = basis.express(col)
                if combination is None:
                    return None
                v = 0
                while combination:
                    low = combination & -combination
                    v |= where[low.bit_length() - 1]
                    combination ^= low
                flat.append(v)
            pos += len(bs)
        return flat

    def pseudoinvert(self) -> "LinearLayout":
        """A map from the out dims back to the in dims, a right inverse on the image
        (Triton: the identity on the out dims, ``invert_and_compose``'d with this layout)."""
        n = len(self._out)
        bases = tuple((d, tuple(tuple([1 << k if j == i else 0 for j in range(n)]) for k in range(_log2(size))))
                      for i, (d, size) in enumerate(self._out))
        identity = LinearLayout._raw(bases, self._out, tuple(1 << j for j in range(self.total_out_dim_size_log2)))
        return identity.invert_and_compose(self)

    def invert(self) -> "LinearLayout":
        if not self.is_invertible():
            raise LayoutError("invert: the layout is not invertible (it must be a bijection):" + str(self))
        return self.pseudoinvert()

    # ------------------------------------------------------------------ division

    def _quotient_out_dims(self, b: "LinearLayout", method: str) -> "list[tuple[str, int]] | None":
        """What ``divide_left`` and ``divide_right`` check first: ``b`` is a layout whose dims
        are all dims of self and no out dim of ``b`` is larger than self's.  Returns the out
        dims of the quotient (self's sizes divided by ``b``'s), or None when there is none."""
        _check_layout(b, method)
        if not set(b.in_dim_names) <= set(self.in_dim_names) or not set(b.out_dim_names) <= set(self.out_dim_names):
            return None
        b_out = dict(b._out)
        out_c = []
        for d, size in self._out:
            k = _log2(size) - _log2(b_out.get(d, 1))
            if k < 0:
                return None
            out_c.append((d, 1 << k))
        return out_c

    def divide_left(self, b: "LinearLayout") -> "LinearLayout | None":
        """C with ``b * C == self``, or None.  Read: self is ``b`` repeated (``b`` is its
        innermost, least significant block)."""
        a = self
        out_c = a._quotient_out_dims(b, "divide_left")
        if out_c is None:
            return None
        b_out = dict(b._out)
        b_in = dict(b._in)
        b_pos = [b.out_dim_names.index(d) if d in b_out else -1 for d in a.out_dim_names]
        b_shift = [_log2(b_out.get(d, 1)) for d in a.out_dim_names]
        bases = []
        for d, bs in a._in:
            inner = b_in.get(d, ())
            if len(inner) > len(bs):
                return None
            for mine, theirs in zip(bs, inner):
                if mine != tuple(theirs[p] if p >= 0 else 0 for p in b_pos):
                    return None
            rest = []
            for basis in bs[len(inner):]:
                if any(c & ((1 << s) - 1) for c, s in zip(basis, b_shift)):
                    return None
                rest.append(tuple(c >> s for c, s in zip(basis, b_shift)))
            bases.append((d, rest))
        return _quotient_if_product(lambda c: b * c, LinearLayout(bases, out_c, _checked=True), a)

    def divide_right(self, b: "LinearLayout") -> "LinearLayout | None":
        """C with ``C * b == self``, or None.  Read: ``b`` is the outermost (most significant)
        block of self."""
        a = self
        out_c = a._quotient_out_dims(b, "divide_right")
        if out_c is None:
            return None
        b_in = dict(b._in)
        bases = []
        for d, bs in a._in:
            k = len(bs) - len(b_in.get(d, ()))
            if k < 0:
                return None
            kept = bs[:k]
            for basis in kept:
                if any(c >= s for c, (_, s) in zip(basis, out_c)):
                    return None
            bases.append((d, kept))
        return _quotient_if_product(lambda c: c * b, LinearLayout(bases, out_c, _checked=True), a)

    # ------------------------------------------------------------------ structure

    def free_variable_masks(self) -> dict[str, int]:
        """in dim -> bitmask of its input bits that never change the output given the earlier
        bits: the non-pivot columns of the RREF (broadcast / redundant inputs).  All zero iff
        the layout is injective."""
        pivots = set(f2.pivot_columns(self.flat_columns))
        masks, c = {}, 0
        for n, bs in self._in:
            m = 0
            for i in range(len(bs)):
                if c not in pivots:
                    m |= 1 << i
                c += 1
            masks[n] = m
        return masks

    def num_consecutive_in_out(self) -> int:
        """Largest s such that the first in dim's first log2(s) bases are 1, 2, 4, ... along the
        first out dim and no other basis touches that out dim's low log2(s) bits: then
        L(a*s + v, ...) = L(a*s, ...) + (v, 0, ...) for v < s (s consecutive elements per
        "vector")."""
        if not self._in or not self._out:
            return 1
        first = self._in[0][1]
        consec = 0
        while consec < len(first):
            b = first[consec]
            if b[0] != (1 << consec) or any(b[1:]):
                break
            consec += 1
        other = 0
        for n, bs in self._in:
            for i, b in enumerate(bs):
                if n != self._in[0][0] or i >= consec:
                    other |= b[0]
        trailing = f2.low_bit(other) if other else consec
        return 1 << min(consec, trailing)


def lstsq(a: LinearLayout, b: LinearLayout) -> LinearLayout | None:
    """X with a(X(y)) == b(y) for every y, or None if b's image is not inside a's.

    X maps b's in dims to a's in dims.  Among the solutions, the one Triton picks: input bits of
    ``a`` that are in the span of earlier bits (free variables) are set to zero.  Requires the
    same out-dim names (any order) and b's out sizes no larger than a's.
    """
    if sorted(a.out_dim_names) != sorted(b.out_dim_names):
        return None
    for d, size in b._out:
        if size > a.out_dim_size(d):
            return None
    b = b.transpose_outs(a.out_dim_names)
    basis = f2.EchelonBasis(a.flat_columns)
    a_dims = [(n, len(bs)) for n, bs in a._in]
    bases = []
    for n, bs in b._in:
        new = []
        for col in bs:
            combination = basis.express(a.pack(col))
            if combination is None:
                return None
            comps, off = [], 0
            for _, k in a_dims:
                comps.append((combination >> off) & ((1 << k) - 1))
                off += k
            new.append(tuple(comps))
        bases.append((n, new))
    return LinearLayout(bases, [(n, 1 << k) for n, k in a_dims], _checked=True)
