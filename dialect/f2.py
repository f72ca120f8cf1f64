"""Linear algebra over F2, the field with two elements {0, 1} where 1 + 1 = 0.

A vector over F2 is stored as a Python ``int``: bit ``i`` is coordinate ``i``.  Addition is
XOR, and a set of vectors is a plain list of ints.  Python integers have no width limit, so
nothing here caps the size of a layout (Triton's C++ stops at 64 bits).

Everything the layout algebra, the planner and the swizzle search need lives here:

* ``apply_columns`` - a matrix (given by its columns) times a vector: the XOR of the columns
  over the set bits of the vector.
* ``EchelonBasis`` - an incrementally built basis that remembers, for every reduced vector,
  which of the inserted vectors it is made of.  It answers "is v in the span?" and "which
  inserted vectors add up to v?" in O(rank) XORs.  Most other functions are thin wrappers.
* ``rank``, ``rref``, ``in_span``, ``pivot_columns``
* ``nullspace`` (the combinations of columns that sum to zero)
* ``span_intersection`` and ``complement`` (used by the swizzle search).

Worked example.  The vectors 0b011, 0b101, 0b110 are dependent: 0b011 ^ 0b101 = 0b110.
``rank([3, 5, 6]) == 2``, ``pivot_columns([3, 5, 6]) == [0, 1]`` (the third vector is in the
span of the first two), and ``nullspace([3, 5, 6]) == [0b111]`` (columns 0, 1 and 2 sum to 0).
"""

from __future__ import annotations

from typing import Iterable, Sequence


def low_bit(x: int) -> int:
    """Index of the lowest set bit of ``x`` (``x`` must be non-zero)."""
    return (x & -x).bit_length() - 1


def apply_columns(columns: Sequence[int], x):
    """XOR of ``columns[i]`` over the set bits i of ``x``: the matrix with these columns times x.

    ``x`` is an int, or a numpy integer array (then element by element, with no numpy import
    here: the arithmetic is the same).  Example: columns (1, 2, 4) is the identity on 3 bits;
    columns (3, 5) send x = 0b11 to 3 ^ 5 = 6.  Bits of ``x`` beyond ``len(columns)`` are ignored.
    """
    if type(x) is int:  # the planner's hot path: only the set bits of x cost anything
        out = 0
        n = len(columns)
        while x:
            low = x & -x
            i = low.bit_length() - 1
            if i >= n:
                break
            out ^= columns[i]
            x ^= low
        return out
    out = x & 0  # 0, or an array of zeros shaped like x
    for i, column in enumerate(columns):
        if column:
            out = out ^ (((x >> i) & 1) * column)
    return out


class EchelonBasis:
    """A basis of span(inserted vectors), kept reduced, with provenance.

    ``insert(v)`` returns True when ``v`` was independent of what came before.  Internally
    every stored row is keyed by its highest set bit (no two rows share one), and carries a
    mask of the *insertion indices* of the vectors it is the XOR of.  Reducing a vector
    against the rows therefore also tells which inserted vectors combine to it.
    """

    __slots__ = ("_rows", "_count")

    def __init__(self, vectors: Iterable[int] = ()):
        # high bit -> (reduced vector, mask over insertion indices)
        self._rows: dict[int, tuple[int, int]] = {}
        self._count = 0
        for v in vectors:
            self.insert(v)

    def __len__(self) -> int:
        return len(self._rows)

    def copy(self) -> "EchelonBasis":
        """An independent basis with the same rows and insertion count (rows are immutable
        tuples: the dict is copied, not them)."""
        other = EchelonBasis.__new__(EchelonBasis)
        other._rows = dict(self._rows)
        other._count = self._count
        return other

    def reduce(self, v: int) -> tuple[int, int]:
        """Return ``(residue, combination)``: v = residue ^ XOR(inserted[i] for i in combination).

        The residue is zero exactly when v is in the span.  Bits are eliminated from the top
        down; a bit with no row of its own stays in the residue.
        """
        residue = 0
        combination = 0
        rows = self._rows
        while v:
            top = v.bit_length() - 1
            row = rows.get(top)
            if row is None:
                residue |= 1 << top
                v ^= 1 << top
            else:
                v ^= row[0]
                combination ^= row[1]
        return residue, combination

    def insert(self, v: int) -> bool:
        """Add ``v`` (insertion index = number of earlier inserts); True if it was independent."""
        index = self._count
        self._count += 1
        combination = 1 << index
        rows = self._rows
        while v:
            top = v.bit_length() - 1
            row = rows.get(top)
            if row is None:
                rows[top] = (v, combination)
                return True
            v ^= row[0]
            combination ^= row[1]
        return False

    def contains(self, v: int) -> bool:
        return self.reduce(v)[0] == 0

    def express(self, v: int) -> int | None:
        """Mask of inserted vectors whose XOR is ``v`` (None if v is not in the span).

        Among several solutions, the one returned uses only vectors that were independent
        when inserted (the "pivot" vectors), so it is unique.
        """
        residue, combination = self.reduce(v)
        return combination if residue == 0 else None


def rank(vectors: Iterable[int]) -> int:
    """Dimension of the span of ``vectors``."""
    return len(EchelonBasis(vectors))


def pivot_columns(vectors: Sequence[int]) -> list[int]:
    """Indices of the vectors that are not in the span of the vectors before them.

    These are exactly the pivot columns of the reduced row echelon form of the matrix whose
    columns are ``vectors`` (in order).
    """
    basis = EchelonBasis()
    return [i for i, v in enumerate(vectors) if basis.insert(v)]


def in_span(v: int, vectors: Iterable[int]) -> bool:
    return EchelonBasis(vectors).contains(v)


def rref(rows: Sequence[int], num_cols: int) -> list[int]:
    """Reduced row echelon form of a matrix given as rows (bit c of a row = column c).

    The pivot of a row is its *lowest* set bit (column 0 is leftmost), the convention of
    Triton's f2reduce.  Zero rows are dropped; rows come out sorted by pivot.
    """
    mask = (1 << num_cols) - 1
    pivots: dict[int, int] = {}
    for row in rows:
        row &= mask
        for p, r in pivots.items():
            if row >> p & 1:
                row ^= r
        if not row:
            continue
        p = low_bit(row)
        for q in list(pivots):
            if pivots[q] >> p & 1:
                pivots[q] ^= row
        pivots[p] = row
    return [pivots[p] for p in sorted(pivots)]


def nullspace(vectors: Sequence[int]) -> list[int]:
    """A basis of {mask : XOR of vectors[i] for bits i of mask == 0}.

    One element per dependent vector: vector j together with the pivot vectors that express it.
    """
    basis = EchelonBasis()
    result = []
    for j, v in enumerate(vectors):
        residue, combination = basis.reduce(v)
        if residue == 0:
            result.append(combination | (1 << j))
        basis.insert(v)  # insertion index j, dependent or not, so masks index `vectors`
    return result


def span_intersection(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """A basis of span(a) ∩ span(b).

    Every dependency  XOR(a_i) == XOR(b_j)  among the concatenated list gives one vector of the
    intersection; collecting them over a nullspace basis spans it.
    """
    a = list(a)
    out = EchelonBasis()
    result = []
    for mask in nullspace(a + list(b)):
        v = apply_columns(a, mask)
        if v and out.insert(v):
            result.append(v)
    return result


def complement(vectors: Iterable[int], dim: int) -> list[int]:
    """Unit vectors 2^i (i ascending) that extend ``vectors`` to a basis of F2^dim.

    The chosen i are the non-pivot columns of the RREF of ``vectors`` written as rows.
    """
    pivots = {low_bit(r) for r in rref(list(vectors), dim)}
    return [1 << i for i in range(dim) if i not in pivots]
