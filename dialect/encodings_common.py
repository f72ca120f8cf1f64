"""Building blocks shared by every encoding's conversion (Triton's ``LayoutUtils`` and the
helpers at the top of ``LinearLayoutConversions.cpp``).

Most layouts are described for one *tile* (what one CTA's registers, lanes and warps cover once)
and then fitted to the tensor's shape by three steps, reproduced here exactly because the order
in which they add bases decides the register numbering:

* ``ensure_layout_not_smaller_than``: a tensor larger than the tile repeats it; the repetitions
  become new, most significant ``register`` (or ``offset``) bases, added dim by dim **in the
  layout's out-dim order**.  Example: a tile of 8 rows x 16 columns with out dims ordered
  ``[dim1, dim0]`` on a 16 x 32 tensor gets register bases ``(0, 16)`` then ``(8, 0)``.
* ``ensure_layout_not_larger_than``: a tensor smaller than the tile is covered several times;
  bases that step past the tensor's size become zero (the hardware holds copies).
* ``combine_cta_cga_with_shape``: the CTA tile is fitted to the part of the tensor one CTA
  holds, then the CGA (block) bases, in units of that part, are appended.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from .attributes import CGALayout
from .linear_layout import LayoutError, LinearLayout, is_power_of_two

REGISTER, LANE, WARP, BLOCK, OFFSET = "register", "lane", "warp", "block", "offset"


def _log2(n: int) -> int:
    return n.bit_length() - 1


def dim_names(rank: int) -> list[str]:
    """The standard out dims of a rank-``rank`` tensor, ``dim0`` being the tensor's first dim."""
    return [f"dim{d}" for d in range(rank)]


def _identity(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout.identity_1d(size, in_dim, out_dim)


def _zeros(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout.zeros_1d(size, in_dim, out_dim)


def _layout(bases, outs: Sequence[tuple[str, int]]) -> LinearLayout:
    """A layout with explicit out sizes that need not be surjective."""
    return LinearLayout([(n, [tuple(b) for b in bs]) for n, bs in bases], list(outs), require_surjective=False)


# ---------------------------------------------------------------------------------------------
# Shared building blocks (Triton's LayoutUtils / LinearLayoutConversions helpers)

def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Identity from ``in_dim`` onto the tensor, filling dims in ``order`` (fastest first).

    Example: shape [2, 4], order [1, 0] -> bases (0, 1), (0, 2), (1, 0); out dims ordered
    [dim1, dim0].  A size-1 dim still appears as an out dim, which fixes the out-dim order.
    """
    names = dim_names(len(shape))
    if isinstance(in_dim, str) and in_dim and order and sorted(order) == list(range(len(shape))) and \
            all(is_power_of_two(shape[d]) for d in order):
        # The product of the 1-D identities, built at once: out dims in ``order``, each dim's
        # bases one bit after another (what the loop below computes, without its products).
        width = len(order)
        bases = []
        for position, d in enumerate(order):
            for bit in range(shape[d].bit_length() - 1):
                basis = [0] * width
                basis[position] = 1 << bit
                bases.append(tuple(basis))
        return LinearLayout._raw(((in_dim, tuple(bases)),), tuple((names[d], shape[d]) for d in order))
    layout = LinearLayout.empty()
    for d in order:
        layout = layout * _identity(shape[d], in_dim, names[d])
    return layout


def ensure_layout_not_smaller_than(layout: LinearLayout, shape: Mapping[str, int]) -> LinearLayout:
    """Grow each out dim to ``shape[dim]`` by adding most-significant bases to the first in dim
    (``register`` or ``offset``), out dims taken in the layout's own order."""
    if not layout.in_dim_names:
        return layout
    first = layout.in_dim_names[0]
    if first not in (REGISTER, OFFSET):
        raise LayoutError(f"ensure_layout_not_smaller_than: the first in dim must be register or offset, got {first}")
    for d in layout.out_dim_names:
        size = layout.out_dim_size(d)
        if size < shape[d]:
            layout = layout * _identity(shape[d] // size, first, d)
    return layout


def ensure_layout_not_larger_than(layout: LinearLayout, shape: Mapping[str, int],
                                  broadcast_registers: bool = True) -> LinearLayout:
    """Shrink each out dim to at most ``shape[dim]``: a basis component that reaches past the
    tensor becomes 0, so that input bit now selects a copy.  With ``broadcast_registers=False``
    such ``register`` bases are dropped instead (fewer registers, no copies in registers)."""
    outs = []
    new_size = {}
    for d in layout.out_dim_names:
        new_size[d] = min(layout.out_dim_size(d), shape[d])
        outs.append((d, new_size[d]))
    names = layout.out_dim_names
    bases = []
    for in_dim, bs in layout.bases.items():
        kept = []
        for b in bs:
            clipped = tuple(c if c < new_size[n] else 0 for c, n in zip(b, names))
            if not broadcast_registers and in_dim == REGISTER and clipped != b and not any(clipped):
                continue
            kept.append(clipped)
        bases.append((in_dim, kept))
    return _layout(bases, outs)


def cga_linear_layout(cga: Optional[CGALayout], rank: int) -> LinearLayout:
    """The CGA layout ``block -> dim0..`` (one CTA: no bases), sizes inferred from the bases."""
    names = dim_names(rank)
    bases = cga.bases if cga is not None else ()
    sizes = [1] * rank
    for b in bases:
        for d, c in enumerate(b):
            sizes[d] = max(sizes[d], 1 << c.bit_length())
    return _layout([(BLOCK, bases)], list(zip(names, sizes)))


def combine_cta_cga_with_shape(cta: LinearLayout, cga: LinearLayout, shape: Sequence[int],
                               broadcast_registers: bool = True) -> LinearLayout:
    """Fit a one-CTA layout and a CGA layout to the tensor's ``shape``.

    The CGA layout (clipped to the tensor) says how many tiles the CTAs split each dim into; the
    CTA layout is fitted to ``shape / that`` and the block bases, in units of a CTA's part, go on
    top.  Example: blocked 1-D with 16 elements per CTA, CGA bases [[1], [0]], shape 32 ->
    block bases [[16], [0]] (block 2 holds a copy of block 0's half).  ``broadcast_registers``
    is passed to ``ensure_layout_not_larger_than`` (blocked layouts drop such registers).
    """
    names = dim_names(len(shape))
    labeled = dict(zip(names, shape))
    cga = ensure_layout_not_larger_than(cga, labeled).transpose_outs(cta.out_dim_names)
    cta_shape = {d: max(1, labeled[d] // cga.out_dim_size(d)) for d in cta.out_dim_names}
    cta = ensure_layout_not_smaller_than(cta, cta_shape)
    cta = ensure_layout_not_larger_than(cta, cta_shape, broadcast_registers)
    result = (cta * cga).transpose_outs(names)
    for d in names:
        if result.out_dim_size(d) != labeled[d]:
            raise LayoutError(f"the layout covers {result.out_dim_size(d)} elements along {d} but the shape has "
                              f"{labeled[d]}")
    return result


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's ``getMatrixOrder``: [rank-1, ..., 0], the two fastest swapped if not row-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def dot_operand_order(op_idx: int, rank: int) -> list[int]:
    """K fastest: operand A -> [.., 1, 0] (K = last dim), B -> [.., 0, 1] (K = dim rank-2)."""
    return matrix_order(rank, row_major=(op_idx == 1) != True)  # noqa: E712 (mirrors getOrderForDotOperand)


def broadcasted_dot_operand_layout(sizes: Sequence[int], order: Sequence[int], k_dim: int, in_dim: str) -> LinearLayout:
    """Lanes or warps of a dot operand: identity along the non-K dims, zero (broadcast) along K,
    since every warp of a row of the result needs the whole K extent of its A rows."""
    names = dim_names(len(sizes))
    layout = LinearLayout.empty()
    for d in order:
        layout = layout * (_zeros(sizes[d], in_dim, names[d]) if d == k_dim else _identity(sizes[d], in_dim, names[d]))
    return layout

