"""Shared-memory descriptors (``!ttg.memdesc<...>``) as linear layouts: pipelined buffers and views.

A shared encoding describes **one buffer** of rank ``r``.  A memdesc type names a shape, an
encoding and, for views, the shape of the buffer it looks into::

    !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable>          3 buffers of 64x64 (software pipelining)
    !ttg.memdesc<64x64xbf16, #nvmma, #smem, mutable>            one of them (ttg.memdesc_index)
    !ttg.memdesc<32x64xbf16, #nvmma, #smem, mutable, 64x64>     its top half (ttg.memdesc_subslice)

Triton (3.6 and 3.9 alike) allows a type of rank ``r`` or ``r + 1``; with ``r + 1`` the
leading dim counts buffers, of any size (3 and 5 are common).  How Triton lays these out:

* **Buffers are stacked.**  ``ttg.memdesc_index %a[%i]`` moves the base by ``i * E`` elements,
  ``E`` being the elements of one buffer in one CTA (its lowering multiplies the index by the
  product of ``getAllocationShapePerCTA``; for ``padded_shared`` the product is padded like any
  offset).  Within a buffer, the encoding's layout applies.
* **A view has the layout of its allocation.**  ``toLinearLayout(MemDescType)`` translates the
  encoding over the last ``rank`` dims of the *allocation* shape: the 32x64 subslice above has
  the 64x64 buffer's layout.  The slice's start is kept apart (added to the coordinates when
  the view is read); the verifier makes every offset a multiple of the slice's size in its dim,
  so coordinate ``c`` of the view is ``c xor o`` in the buffer and, the layout being linear,
  lives at offset ``L^-1(c) xor L^-1(o)``.  The start exists only at run time, in the
  descriptor struct Triton gives every memdesc value (base pointer, then one i32 per dim):
  ``ttg.memdesc_subslice`` adds its offsets to the struct's (a view of a view: ``[0, 8]`` then
  ``[0, 4]`` is o = (0, 12), still bit-disjoint from the 32x4 view's coordinates) and leaves the
  base alone; only reads of a view *type* use them (``lowering.local_memory.SubsliceView``).

So a multi-buffered allocation is **one buffer's layout plus a buffer count** (a linear layout
over the whole allocation exists only for a power-of-two count: the buffer index then takes the
offset bits above one buffer's, see :meth:`MemdescLayout.whole`).  Worked example,
``!ttg.memdesc<3x64x64xbf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false,
elementBitWidth = 16}>, #smem, mutable>``: one buffer is the 64x64 NVMMA layout with offset bases

    bit:   0      1      2      3      4       5       6       7        8        9       10       11
         (0,1)  (0,2)  (0,4)  (0,8)  (0,16)  (0,32)  (1,8)  (2,16)  (4,32)   (8,0)  (16,0)  (32,0)

``E`` = 4096 and there are 3 buffers.  Element (5, 9) of buffer 2: row 5 = rows 4 + 1 takes
bits 8 and 6, which also move the column by 32 xor 8 = 40; 9 xor 40 = 33 = columns 32 + 1 takes
bits 5 and 0.  So it is at offset 2 * 4096 + (256 + 64 + 32 + 1) = 8545.

The pass layer (``passes/ir/layouts.py``) connects this to IR values; ``ll-attach-layouts``
writes one buffer's layout and ``ll.buffers = 3``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

from .attribute_parser import parse_attribute
from .attributes import LayoutAttribute, PaddedSharedEncoding, SharedAttribute
from .conventions import NEWEST, TritonConventions
from .encodings import to_linear_layout
from .encodings_common import OFFSET, dim_names
from .linear_layout import LayoutError, LinearLayout, is_power_of_two


@dataclass(frozen=True)
class MemdescLayout:
    """A shared-memory descriptor type as linear layouts.

    ``buffer`` is Triton's ``toLinearLayout`` of the type: one buffer (in dims ``offset``,
    ``block``; out dims ``dim0..`` sized by ``buffer_shape``).  ``view_shape`` is the part of it
    the type shows (smaller than ``buffer_shape`` for a subslice).  ``buffers`` is the leading
    buffer dim of a multi-buffered allocation, None when the type has none.  ``buffer_elements``
    is how far apart consecutive buffers start (logical elements of one buffer in one CTA).
    """

    encoding: LayoutAttribute
    buffer: LinearLayout
    buffer_shape: tuple[int, ...]
    view_shape: tuple[int, ...]
    buffers: Optional[int]
    buffer_elements: int

    @property
    def buffer_count(self) -> int:
        """How many buffers the type spans (1 for a type with no buffer dim)."""
        return 1 if self.buffers is None else self.buffers

    def buffer_start(self, index: int) -> int:
        """The offset (in elements, padding included) where buffer ``index`` starts, as
        ``ttg.memdesc_index`` computes it: ``index * buffer_elements``, padded for
        ``padded_shared`` (e.g. ``[32:+4]``, 64 elements a buffer: buffer 1 starts at 72)."""
        if not 0 <= index < self.buffer_count:
            raise LayoutError(f"buffer {index} of a memdesc with {self.buffer_count} buffer(s)")
        start = index * self.buffer_elements
        if isinstance(self.encoding, PaddedSharedEncoding):
            return self.encoding.padded_offset(start)
        return start

    def whole(self) -> LinearLayout:
        """One linear layout over the whole type: ``buffer`` when there is no buffer dim; for a
        power-of-two count, the buffer index in the offset bits above one buffer's (out dim
        ``dim0`` is the buffer, ``dim1..`` the buffer's dims).  Raises ``LayoutError`` for any
        other count: offsets ``0 .. 3 * E - 1`` are not a vector space over F2."""
        if self.buffers is None:
            return self.buffer
        if not is_power_of_two(self.buffers):
            raise LayoutError(f"{self.buffers} buffers of {'x'.join(map(str, self.buffer_shape))}: no linear layout "
                              f"covers a number of buffers that is not a power of two (one buffer's layout and the "
                              f"count describe it)")
        if self.buffer.in_dim_size(OFFSET) != self.buffer_elements:
            raise LayoutError(f"one buffer's layout spans {self.buffer.in_dim_size(OFFSET)} offsets but buffers are "
                              f"{self.buffer_elements} elements apart: the buffers cannot be stacked linearly")
        rank = len(self.buffer_shape)
        layout = self.buffer
        for d in reversed(range(rank)):  # dim d of the buffer is dim d + 1 of the whole
            layout = layout.rename_out_dim(f"dim{d}", f"dim{d + 1}")
        layout = layout * LinearLayout.identity_1d(self.buffers, OFFSET, "dim0")
        return layout.transpose_outs(dim_names(rank + 1))


def memdesc_layout(encoding: Union[LayoutAttribute, str], shape: Sequence[int],
                   alloc_shape: Optional[Sequence[int]] = None, aliases: Optional[Mapping] = None,
                   conventions: TritonConventions = NEWEST) -> MemdescLayout:
    """The :class:`MemdescLayout` of ``!ttg.memdesc<shape x T, encoding, ..., alloc_shape>``.

    ``alloc_shape`` is the trailing shape a view's type prints (None: the same as ``shape``).
    Raises ``LayoutError`` naming the type's parts when they do not fit together.
    """
    attr = parse_attribute(encoding, aliases) if isinstance(encoding, str) else encoding
    if not isinstance(attr, SharedAttribute):
        raise LayoutError(f"a shared-memory descriptor needs a shared encoding, got {attr}")
    shape = tuple(shape)
    alloc = tuple(shape if alloc_shape is None else alloc_shape)
    rank = attr.rank
    where = f"memdesc of shape {list(shape)}" + (f" (allocation {list(alloc)})" if alloc != shape else "")
    if len(shape) not in (rank, rank + 1):
        raise LayoutError(f"{where} with the rank-{rank} encoding {attr}: Triton allows rank {rank} (one buffer) "
                          f"or {rank + 1} (a leading buffer dim)")
    if len(alloc) < len(shape):
        raise LayoutError(f"{where}: the allocation shape has fewer dims than the shape")
    buffers = shape[0] if len(shape) == rank + 1 else None
    if buffers is not None and buffers < 1:
        raise LayoutError(f"{where}: the buffer dim must be at least 1, got {buffers}")
    view_shape = shape[len(shape) - rank:]
    buffer_shape = alloc[len(alloc) - rank:]
    for view, whole in zip(view_shape, buffer_shape):
        if view > whole:
            raise LayoutError(f"{where}: the view {list(view_shape)} is larger than its buffer {list(buffer_shape)}")
    buffer = to_linear_layout(attr, list(buffer_shape), conventions=conventions)
    return MemdescLayout(attr, buffer, buffer_shape, view_shape, buffers, _elements_per_cta(attr, buffer_shape, buffer))


def _elements_per_cta(attr: SharedAttribute, buffer_shape: Sequence[int], buffer: LinearLayout) -> int:
    """Elements of one buffer in one CTA, as Triton's ``getAllocationShapePerCTA`` counts them:
    each dim divided by the CTAs it is split over (at least 1 element), and twice the contiguous
    dim of an ``fp4Padded`` NVMMA layout (its rows store 8 real bytes in every 16)."""
    cga = getattr(attr, "cga", None)
    if cga is not None:
        split = cga.split_num(len(buffer_shape))
    else:
        # shared_linear and padded_shared give their CTA split as block bases: a dim is split
        # over 2 ** (the number of block bases stepping along it) CTAs.
        split = [1 << sum(1 for b in buffer.bases.get("block", ()) if b[d]) for d in range(len(buffer_shape))]
    per_cta = [max(1, s // c) for s, c in zip(buffer_shape, split)]
    if getattr(attr, "fp4_padded", False):
        contiguous = 0 if attr.transposed else len(buffer_shape) - 1
        per_cta[contiguous] *= 2
    elements = 1
    for s in per_cta:
        elements *= s
    return elements

