"""ldmatrix / stmatrix (and their .trans forms) as tiles of a shared-memory access.

An instruction is a *tile*: a fixed map from (register, lane) of one instruction to the scratch
offset.  A layout can use the instruction when its (register, lane) -> offset map is the tile
"times" something (left division, paper §4.5): the low offset bits come from the tile, and
every other direction only moves whole tiles.  We check this structurally on element
directions, before the swizzle is built, by *choosing* the low offset bits to be the tile's.

``ldmatrix.x4`` / ``stmatrix.x4`` (b16 "matrices" of 8 rows x 16 bytes; sm_75+ / sm_90+):

    lane t, word j  <->  row (t // 4), 32-bit word (t % 4) of matrix j
    lane 8j + i supplies the address of row i of matrix j

so, for elements of b bits (e = 32 / b per word): offset bits = [register bits of the word
(log2 e), lane bit 0, lane bit 1]  (16 contiguous bytes: the *vector*), the row is chosen by lane
bits 2-4 (any 16-byte-aligned address), the matrix by two more register bits (.x4; one for .x2,
none for .x1).  Tile for fp16: id(2, register, offset) * id(4, lane, offset), Triton's
``lowerLdStMatrix`` tile.

``.trans`` (16-bit elements only): lane t, word j holds the two elements of rows 2(t % 4) and
2(t % 4) + 1 at column t // 4 of matrix j.  The contiguous 16 bytes are now along lane bits 2-4
(vector = [lane 2, lane 3, lane 4]) and the rows along [register bit of the word, lane 0, lane 1].
Worked example: an fp16 mma accumulator stored with stmatrix.trans writes, per 8x8 matrix, the
columns of the accumulator as rows of shared memory: a transpose for free.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import HardwareLayout
from .instructions import AccessForm, AccessKind


@dataclass(frozen=True)
class MatrixTile:
    kind: AccessKind                   # STORE (stmatrix) or LOAD (ldmatrix)
    form: AccessForm                   # MATRIX or MATRIX_TRANS
    vector: tuple[int, ...]            # element directions of offset bits 0.. (one 16-byte row)
    rows: tuple[int, ...]              # directions of row bits 0, 1, 2 (address lanes bits 0-2)
    word_registers: tuple[int, ...]    # register positions of the elements inside one 32-bit word
    matrix_registers: tuple[int, ...]  # register positions choosing the matrix (0 to 2 of them)
    row_sources: tuple[tuple[str, int], ...]  # where each row bit comes from: ("register", pos)/("lane", j)

    @property
    def transposed(self) -> bool:
        return self.form is AccessForm.MATRIX_TRANS

    @property
    def matrices(self) -> int:
        return 1 << len(self.matrix_registers)


def matrix_tile(layout: HardwareLayout, kind: AccessKind, form: AccessForm, element_bits: int,
                other_registers: tuple[int, ...], prefer: tuple[int, ...] = ()) -> MatrixTile | None:
    """The tile of the matrix access (``kind``, ``form``) for this side's layout, or None if the
    layout cannot use it.

    ``other_registers``: the other side's register directions; the word's elements are picked
    among registers the other side also holds, so that its vectors stay wide.  ``prefer``: when
    the other side also uses a matrix instruction, its 16-byte row (vector); word registers
    equal to its leading directions come first, so that both rows can coincide.  Example: a
    stmatrix.trans store has the row [lane 2, lane 3, lane 4] of the source; an ldmatrix load
    fits it if its word register is the source's lane-2 direction and its lanes 0, 1 are the
    source's lanes 3, 4 (Triton's ``optimalSwizzlingTile`` pairs tiles the same way).
    """
    if len(layout.lane) != 5:
        return None
    if not form.is_matrix:
        raise ValueError(f"matrix_tile needs a matrix form, not {form}")
    transposed = form is AccessForm.MATRIX_TRANS
    if transposed and element_bits != 16:
        return None
    if element_bits not in (8, 16, 32):
        return None
    log2_e = (32 // element_bits).bit_length() - 1 if not transposed else 1
    regs = list(range(len(layout.register)))
    other = set(other_registers)
    lead = list(prefer[:log2_e])
    regs.sort(key=lambda p: (lead.index(layout.register[p]) if layout.register[p] in lead else len(lead),
                             layout.register[p] not in other, p))
    if len(regs) < log2_e:
        return None
    word = tuple(regs[:log2_e])
    rest = [p for p in range(len(layout.register)) if p not in word]
    matrix = tuple(rest[:2])
    lanes = layout.lane
    if any(c == 0 for c in lanes) or any(layout.register[p] == 0 for p in word + matrix):
        return None
    if not transposed:
        vector = tuple(layout.register[p] for p in word) + (lanes[0], lanes[1])
        rows = (lanes[2], lanes[3], lanes[4])
        row_sources = (("lane", 2), ("lane", 3), ("lane", 4))
    else:
        vector = (lanes[2], lanes[3], lanes[4])
        rows = (layout.register[word[0]], lanes[0], lanes[1])
        row_sources = (("register", word[0]), ("lane", 0), ("lane", 1))
    return MatrixTile(kind, form, vector, rows, word, matrix, row_sources)
