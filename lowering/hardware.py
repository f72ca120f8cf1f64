"""Distributed layouts seen as integer columns over (register, lane, warp, block).

The planner works on the flattened form of a layout: for each hardware dimension, the list of
basis images, each the *flat element index* (out dims packed, first out dim lowest, as
``LinearLayout.flat_columns``).  Register i of lane l holds the element
``XOR(register[k] for bits k of i) ^ XOR(lane[k] for bits k of l) ^ ...``.

Broadcast registers.  A zero register basis means two registers hold the same element.  Like
Triton (``removeZeroBasesAlongDim(register)``) the planner works on the *unique* registers and
maps back at the end: with register bases ``[1, 0, 2]`` the unique layout has bases ``[1, 2]``
and unique register u = 0b11 is the full register 0b101 (bits deposited at the non-zero
positions 0 and 2); full register 0b111 reads unique register 0b11 (bits extracted).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..dialect import f2
from ..dialect.linear_layout import LayoutError, LinearLayout

HARDWARE_DIMS = ("register", "lane", "warp", "block")


def deposit(value: int, positions: tuple[int, ...]) -> int:
    """Scatter the low bits of ``value`` to bit ``positions`` (pdep): the F2 product with the
    unit columns ``1 << p``.  Example: value 0b11 to positions (1, 4) gives 0b10010."""
    if type(value) is int and value >= 0:
        out = 0
        for p in positions:
            if not value:
                break
            if value & 1:
                out |= 1 << p
            value >>= 1
        return out
    return f2.apply_columns([1 << p for p in positions], value)


def extract(value: int, positions: tuple[int, ...]) -> int:
    """Gather the bits of ``value`` at ``positions`` into the low bits (pext)."""
    if type(value) is int:
        out = 0
        for i, p in enumerate(positions):
            out |= ((value >> p) & 1) << i
        return out
    return sum(((value >> p) & 1) << i for i, p in enumerate(positions))


def xor_table(columns: tuple[int, ...]) -> np.ndarray:
    """All 2^len(columns) XOR combinations: entry x = XOR(columns[k] for set bits k of x)."""
    table = np.zeros(1, dtype=np.int64)
    for c in columns:
        table = np.concatenate([table, table ^ c])
    return table


@dataclass(frozen=True)
class HardwareLayout:
    """A distributed layout as basis images per hardware dim (see the module docstring)."""

    register: tuple[int, ...]
    lane: tuple[int, ...]
    warp: tuple[int, ...]
    block: tuple[int, ...]
    element_bits: int  # log2 of the number of tensor elements

    @classmethod
    def of(cls, layout: LinearLayout, out_order: list[str] | None = None) -> "HardwareLayout":
        if out_order is not None and layout.out_dim_names != out_order:
            layout = layout.transpose_outs(out_order)
        missing = [d for d in layout.in_dim_names if d not in HARDWARE_DIMS]
        if missing:
            raise LayoutError(f"not a distributed layout: in dims {missing} are not hardware dims")
        cols = {}
        for d in HARDWARE_DIMS:
            cols[d] = tuple(layout.pack(b) for b in layout.bases.get(d, ())) if layout.has_in_dim(d) else ()
        return cls(cols["register"], cols["lane"], cols["warp"], cols["block"], layout.total_out_dim_size_log2)

    def columns(self, dim: str) -> tuple[int, ...]:
        return getattr(self, dim)

    @functools.cached_property
    def nonzero_register_positions(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.register) if c)

    def unique_registers(self) -> "HardwareLayout":
        """The layout without its zero (broadcast) register bases."""
        return HardwareLayout(tuple(c for c in self.register if c), self.lane, self.warp, self.block,
                              self.element_bits)

    def canonical_register(self, full_index: int) -> int:
        """Unique-register index that the full register ``full_index`` reads."""
        return extract(full_index, self.nonzero_register_positions)

    def full_register(self, unique_index: int) -> int:
        """A full register holding unique register ``unique_index`` (the one with zero broadcast bits)."""
        return deposit(unique_index, self.nonzero_register_positions)

    def register_element(self, register: int) -> int:
        """Element held by ``register`` of lane 0, warp 0, block 0: XOR of the register bases
        of its set bits."""
        return f2.apply_columns(self.register, register)

    def element_table(self) -> np.ndarray:
        """Element held by every (block, warp, lane, register): shape (B, W, L, R)."""
        reg, lane = xor_table(self.register), xor_table(self.lane)
        warp, block = xor_table(self.warp), xor_table(self.block)
        return (block[:, None, None, None] ^ warp[None, :, None, None] ^ lane[None, None, :, None]
                ^ reg[None, None, None, :])


def to_linear_layout(columns: dict[str, tuple[int, ...]], element_bits: int) -> LinearLayout:
    """Integer columns -> a LinearLayout with one out dim ``dim0`` of 2^element_bits elements."""
    bases = [(d, [(c,) for c in cols]) for d, cols in columns.items()]
    return LinearLayout(bases, [("dim0", 1 << element_bits)], require_surjective=False)


def aligned_pair(src: LinearLayout, dst: LinearLayout, warp_size: int, target_name: str) -> LinearLayout:
    """Check that ``src`` and ``dst`` are two distributed layouts of one tensor on the same
    hardware (same shape, same numbers of lanes, warps and blocks, a warp of ``warp_size``
    lanes), and return ``dst`` with its out dims in ``src``'s order.  Raises ``LayoutError``
    naming what differs."""
    if sorted(src.out_dim_names) != sorted(dst.out_dim_names):
        raise LayoutError(f"source and destination tensors differ: out dims {src.out_dim_names} vs "
                          f"{dst.out_dim_names}")
    dst = dst.transpose_outs(src.out_dim_names)
    for name in src.out_dim_names:
        if src.out_dim_size(name) != dst.out_dim_size(name):
            raise LayoutError(f"source and destination shapes differ along '{name}': "
                              f"{src.out_dim_size(name)} vs {dst.out_dim_size(name)}")
    for name in ("lane", "warp", "block"):
        a = src.in_dim_size_or_one(name)
        b = dst.in_dim_size_or_one(name)
        if a != b:
            raise LayoutError(f"source and destination use different numbers of {name}s: {a} vs {b}")
    lanes = src.in_dim_size_or_one("lane")
    if lanes != warp_size:
        raise LayoutError(f"the layouts have {lanes} lanes but a {target_name} warp has {warp_size}")
    return dst
