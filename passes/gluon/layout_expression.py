"""A distributed layout attribute as the Gluon expression an author would write for it.

``#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>``
is ``gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])``, and a slice of it along dim 1 (a row
reduction's result) ``gl.SliceLayout(1, gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]))``.
Other layouts (MMA, linear, several CTAs) have no expression here: :func:`gluon_layout_expression`
returns None and the caller shows the attribute itself.  The advice, which must name every layout
as its author would write it, has :func:`advice_layout_expression`: those and NVIDIA's MMA,
dot-operand and shared layouts, and any distributed layout on a tensor's shape as
``gl.DistributedLinearLayout(...)``.
"""

from __future__ import annotations

from typing import Optional

from ...dialect.attribute_parser import parse_attribute
from ...dialect.attributes import (BlockedEncoding, DotOperandEncoding, NvidiaMmaEncoding, NvmmaSharedEncoding,
                                   SliceEncoding, SwizzledSharedEncoding)
from ...dialect.linear_layout import LayoutError


def gluon_layout_expression(encoding: str) -> Optional[str]:
    """The Gluon expression of the one-CTA blocked layout ``encoding``, or of a slice of one
    (slices of slices too); None for any other layout or text that is not a layout."""
    try:
        attr = parse_attribute(encoding)
    except LayoutError:
        return None
    return _expression(attr)


def _expression(attr) -> Optional[str]:
    if type(attr) is BlockedEncoding and attr.cga is None:
        return (f"gl.BlockedLayout({list(attr.size_per_thread)}, {list(attr.threads_per_warp)}, "
                f"{list(attr.warps_per_cta)}, {list(attr.order)})")
    if type(attr) is SliceEncoding:
        parent = _expression(attr.parent)
        return f"gl.SliceLayout({attr.dim}, {parent})" if parent is not None else None
    return None


def advice_layout_expression(encoding: str, shape: Optional[tuple] = None) -> Optional[str]:
    """The Gluon expression of any layout the advice names (``passes.advice``): a blocked or
    slice layout as :func:`gluon_layout_expression` writes it; NVIDIA's MMA and dot-operand
    layouts (``gl.NVMMADistributedLayout``, ``gl.DotOperandLayout``) and the swizzled and NVMMA
    shared layouts (``gl.SwizzledSharedLayout``, ``gl.NVMMASharedLayout``); any other
    distributed layout on a tensor of ``shape`` as ``gl.DistributedLinearLayout(...)``.  None
    where none of these applies (a layout of several CTAs with no shape given)."""
    expression = gluon_layout_expression(encoding)
    if expression is not None:
        return expression
    try:
        attr = parse_attribute(encoding)
    except LayoutError:
        return None
    expression = _more_expression(attr)
    if expression is None and shape is not None:
        from ..ir.layouts import tensor_layout_of
        try:
            expression = linear_layout_expression(tensor_layout_of(encoding, tuple(shape)))
        except (LayoutError, ValueError, KeyError):
            return None
    return expression


def _more_expression(attr) -> Optional[str]:
    if type(attr) is NvidiaMmaEncoding and attr.cga is None:
        return (f"gl.NVMMADistributedLayout(version=[{attr.version_major}, {attr.version_minor}], "
                f"warps_per_cta={list(attr.warps_per_cta)}, instr_shape={list(attr.instr_shape)})")
    if type(attr) is DotOperandEncoding:
        parent = _expression(attr.parent) or _more_expression(attr.parent)
        return (f"gl.DotOperandLayout(operand_index={attr.op_idx}, parent={parent}, k_width={attr.k_width})"
                if parent is not None else None)
    if type(attr) is SwizzledSharedEncoding and attr.cga is None:
        return f"gl.SwizzledSharedLayout({attr.vec}, {attr.per_phase}, {attr.max_phase}, {list(attr.order)})"
    if type(attr) is NvmmaSharedEncoding and attr.cga is None:
        transposed = ", transposed=True" if attr.transposed else ""
        return (f"gl.NVMMASharedLayout(swizzle_byte_width={attr.swizzling_byte_width}, "
                f"element_bitwidth={attr.element_bit_width}, rank={attr.rank_hint or 2}{transposed})")
    return None


def linear_layout_expression(layout) -> str:
    """A distributed linear layout (``ir.layouts.tensor_layout_of``'s result) as
    ``gl.DistributedLinearLayout(...)``: the expression of a layout with no shorter one."""
    def bases(dim: str) -> list:
        return [list(basis) for basis in layout.bases.get(dim, ())]
    shape = [layout.out_dim_size(name) for name in layout.out_dim_names]
    return (f"gl.DistributedLinearLayout(reg_bases={bases('register')}, lane_bases={bases('lane')}, "
            f"warp_bases={bases('warp')}, block_bases={bases('block')}, shape={shape})")
