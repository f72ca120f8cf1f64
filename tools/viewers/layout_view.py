"""Who holds which element: the data behind `ll-viz`'s text grids and pictures.

A distributed layout maps (register, lane, warp, block) to a tensor element; a shared layout
maps (offset, block) to one.  Viewing a layout means running that map backwards: for every
element, list the hardware coordinates that hold it.  Because the map is linear, that is cheap:
evaluate every input once (``apply_flat`` on each flattened input index) and bucket the results.

Broadcast copies appear naturally: when the layout is not injective, several inputs land on
the same element; ``LinearLayout.free_variable_masks`` names the input bits responsible.
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.dialect import LinearLayout
from linear_layouts.lowering.element_type import storage_bits_of
from linear_layouts.lowering.target import Target


@dataclass(frozen=True)
class Holder:
    """One hardware coordinate holding an element: {in dim name: index}."""

    coords: tuple[tuple[str, int], ...]

    def get(self, dim: str) -> int:
        return dict(self.coords).get(dim, 0)

    def label(self, shared: bool, bits: int, target: Target | None = None) -> str:
        """``w1:t5:r2`` (warp, lane, register), or ``o12 b3`` (offset, bank of ``target``)."""
        c = dict(self.coords)
        if shared:
            text = f"o{c['offset']} b{bank_of(c['offset'], bits, target)}"
        else:
            text = f"w{c.get('warp', 0)}:t{c.get('lane', 0)}:r{c.get('register', 0)}"
        if c.get("block", 0):
            text = f"B{c['block']}:" + text
        return text


def bank_of(offset: int, bits: int, target: Target) -> int:
    """Bank of the element at ``offset`` (in elements) of a buffer of ``bits``-bit elements on
    ``target`` (as Triton stores them: a boolean takes a byte)."""
    if target is None:
        raise ValueError("the bank of a shared-memory element depends on the target: give one")
    return target.bank_of_byte(offset * storage_bits_of(bits) // 8)


def is_shared(layout: LinearLayout) -> bool:
    return "offset" in layout.in_dim_names


def unflatten(layout: LinearLayout, flat: int) -> Holder:
    coords = []
    for name, size in layout.in_dims.items():
        bits = size.bit_length() - 1
        coords.append((name, flat & (size - 1)))
        flat >>= bits
    return Holder(tuple(coords))


def element_index(layout: LinearLayout, flat_out: int) -> tuple[int, ...]:
    """Flattened output (dim0 least significant) -> tensor index (dim0, dim1, ...)."""
    index = []
    for size in layout.out_dims.values():
        index.append(flat_out & (size - 1))
        flat_out >>= size.bit_length() - 1
    return tuple(index)


def holders_by_element(layout: LinearLayout) -> dict[tuple[int, ...], list[Holder]]:
    """Every tensor element -> the hardware coordinates that hold it, in increasing order of
    (flattened) hardware index, so the first holder is the "primary" copy."""
    result: dict[tuple[int, ...], list[Holder]] = {}
    for flat in range(layout.total_in_dim_size):
        element = element_index(layout, layout.apply_flat(flat))
        result.setdefault(element, []).append(unflatten(layout, flat))
    return result


def broadcast_summary(layout: LinearLayout) -> str:
    """One line naming the input bits that only make copies (empty if none)."""
    parts = []
    for dim, mask in layout.free_variable_masks().items():
        bits = [1 << i for i in range(mask.bit_length()) if mask >> i & 1]
        if bits:
            parts.append(f"{dim} {', '.join(str(b) for b in bits)}")
    if not parts:
        return ""
    copies = 1 << sum(bin(m).count("1") for m in layout.free_variable_masks().values())
    return f"broadcast: each element is held {copies} times (redundant input bits: {'; '.join(parts)})"


def tensor_slices(layout: LinearLayout) -> list[tuple[tuple[int, ...], int, int]]:
    """The 2D slices to draw: (leading index, rows, cols).  Rank 1 is one row; rank >= 3 gives
    one slice per index of the leading dims."""
    shape = list(layout.out_dims.values())
    if len(shape) == 1:
        return [((), 1, shape[0])]
    rows, cols = shape[-2], shape[-1]
    leading = shape[:-2]
    slices = []
    total = 1
    for s in leading:
        total *= s
    for flat in range(total):
        index, rest = [], flat
        for s in reversed(leading):
            index.append(rest % s)
            rest //= s
        slices.append((tuple(reversed(index)), rows, cols))
    return slices


def element_at(prefix: tuple[int, ...], row: int, col: int, rank: int) -> tuple[int, ...]:
    if rank == 1:
        return (col,)
    return prefix + (row, col)


# Every picture of ll-viz (layouts, comparisons, plans) is written at PICTURE_DPI and at most
# MAX_PICTURE_PIXELS on its long side (a 64 x 64 comparison was once 5475 x 2940 pixels).
PICTURE_DPI = 150
MAX_PICTURE_PIXELS = 2400

# The mark of a cell (a bank conflict, an element that changes thread): a black hatched border.
# Black is in none of the palettes below (tab20's darkest colour is a grey at 50%, tab20b's a
# dark blue), so a mark never reads as a warp's or a bank's colour, as red once did (tab20's
# colour of warp 3 and the mark were the same red).
MARK_COLOUR = (0.0, 0.0, 0.0, 1.0)
MARK_HATCH = "//"


def warp_colours() -> list:
    """The colours of warps in pictures (matplotlib's tab20: a warp's even and odd CTA get a
    pair of shades)."""
    import matplotlib.pyplot as plt

    return [plt.get_cmap("tab20")(i) for i in range(20)]


def bank_colours(count: int = 32) -> list:
    """``count`` distinct RGBA colours (one per shared-memory bank): matplotlib's tab20 and
    tab20b, 40 colours, none repeated, so 32 banks (or 64 on AMD's wide reads, 2 per colour
    family) are told apart."""
    import matplotlib.pyplot as plt

    palette = [plt.get_cmap("tab20")(i) for i in range(20)] + [plt.get_cmap("tab20b")(i) for i in range(20)]
    return [palette[i % len(palette)] for i in range(count)]
