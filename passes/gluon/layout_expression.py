"""A distributed layout attribute as the Gluon expression an author would write for it.

``#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>``
is ``gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])``, and a slice of it along dim 1 (a row
reduction's result) ``gl.SliceLayout(1, gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]))``.
Other layouts (MMA, linear, several CTAs) have no expression here: :func:`gluon_layout_expression`
returns None and the caller shows the attribute itself.
"""

from __future__ import annotations

from typing import Optional

from ...dialect.attribute_parser import parse_attribute
from ...dialect.attributes import BlockedEncoding, SliceEncoding
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
