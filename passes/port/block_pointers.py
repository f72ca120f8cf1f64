"""Block pointers (``tl.make_block_ptr``, ``tl.advance``, ``tl.load`` / ``tl.store`` of one) in
the port, as Triton's compile lowers them.

Triton (3.6 to 3.8; 3.9 removed block pointers) rewrites every block pointer into a tile of
pointers and a mask before it chooses layouts (``RewriteTensorPointer``): for a load of a
``(BM, BK)`` block at ``offsets`` with ``boundary_check=(0, 1)`` it computes, in 64-bit integers::

    rows = offsets[0] + arange(0, BM)          cols = offsets[1] + arange(0, BK)
    ptrs = base + rows[:, None] * strides[0] + cols[None, :] * strides[1]
    mask = (0 <= rows[:, None] < shape[0]) & (0 <= cols[None, :] < shape[1])

and its coalescing then gives that tile a layout like any other load's.  Gluon has no block
pointers, so the port writes the same computation: a small aggregate ``_BlockPointer`` (base,
shape, strides, offsets and the block's shape as a constexpr) beside the kernel, and each call
renamed, its arguments unchanged::

    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), ...)   ->  a_bp = _make_block_ptr(base=a_ptr, shape=(M, K), ...)
    a = tl.load(a_bp, boundary_check=(0, 1))                  ->  a = _load_block(a_bp, boundary_check=(0, 1), layout=LOAD_14)
    a_bp = tl.advance(a_bp, (0, BK))                          ->  a_bp = _advance(a_bp, (0, BK))

where ``LOAD_14`` is the layout Triton's compile gave the tile of the load at line 14, named at
the module's top.  A load or store is one of a block pointer where its pointer is a name the
function assigns from ``tl.make_block_ptr`` / ``tl.advance`` (or from another such name), or
where it passes ``boundary_check`` or ``padding_option``.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from .layouts import NamedLayout, gluon_layout_expression, module_constants
from .translation import PortError

_ACCESS_OPS = {     # AMD's buffer ops print as amdgpu.* under 3.6 and 3.7, amdg.* from 3.8
    "load": ("tt.load", "ttg.async_copy_global_to_local", "amdgpu.buffer_load", "amdg.buffer_load",
             "amdgpu.buffer_load_to_local", "amdg.buffer_load_to_local"),
    "store": ("tt.store", "amdgpu.buffer_store", "amdg.buffer_store"),
}

# The helpers, written once into a port that uses block pointers.  Ranks 1 to 3 (each a static
# branch: only the block's own rank is compiled).  ``_values`` keeps a plain number of a tuple
# (a stride Triton specialized to 1) a constexpr, so that the multiplication by it folds away as
# it does in Triton's compile.
HELPERS = '''
@gluon.constexpr_function
def _values(items):
    return gl.tuple([item if hasattr(item, "_flatten_ir") else gl.constexpr(item) for item in items])


@aggregate
class _BlockPointer:
    """A block pointer as Triton's compile lowers it: a tile of pointers and a mask computed, in
    64-bit integers, from the base, the tensor's shape and strides and the block's offsets."""

    base: gl.tensor
    shape: gl.tuple
    strides: gl.tuple
    offsets: gl.tuple
    block_shape: gl.constexpr
    dtype: gl.constexpr          # the base's pointer type: ``p.dtype.element_ty`` is the element type

    @gluon.constexpr_function
    def __init__(self, base, shape, strides, offsets, block_shape):
        self.base = base
        self.dtype = gl.constexpr(base.dtype)
        self.shape = _values(shape)
        self.strides = _values(strides)
        self.offsets = _values(offsets)
        self.block_shape = gl.constexpr(tuple(block_shape))

    @gluon.jit
    def _indices(self, dim: gl.constexpr, layout: gl.constexpr):
        """The block's indices along ``dim`` (64-bit), expanded to its rank in ``layout``."""
        if len(self.block_shape) == 1:
            return self.offsets[0] + gl.arange(0, self.block_shape[0], layout=layout).to(gl.int64)
        elif len(self.block_shape) == 2:
            at = self.offsets[dim] + gl.arange(0, self.block_shape[dim],
                                               layout=gl.SliceLayout(1 - dim, layout)).to(gl.int64)
            return gl.expand_dims(at, 1 - dim)
        else:
            gl.static_assert(len(self.block_shape) == 3, "block pointers of rank 1 to 3")
            if dim == 0:
                at = self.offsets[0] + gl.arange(0, self.block_shape[0],
                                                 layout=gl.SliceLayout(1, gl.SliceLayout(2, layout))).to(gl.int64)
                return at[:, None, None]
            elif dim == 1:
                at = self.offsets[1] + gl.arange(0, self.block_shape[1],
                                                 layout=gl.SliceLayout(0, gl.SliceLayout(2, layout))).to(gl.int64)
                return at[None, :, None]
            else:
                at = self.offsets[2] + gl.arange(0, self.block_shape[2],
                                                 layout=gl.SliceLayout(0, gl.SliceLayout(1, layout))).to(gl.int64)
                return at[None, None, :]

    @gluon.jit
    def _in_bounds(self, dim: gl.constexpr, layout: gl.constexpr):
        at = self._indices(dim, layout)
        return (at >= 0) & (at < self.shape[dim])

    @gluon.jit
    def pointers(self, layout: gl.constexpr):
        """The block's pointers, in ``layout``."""
        ptrs = self.base + self._indices(0, layout) * self.strides[0]
        for dim in gl.static_range(1, len(self.block_shape)):
            ptrs = ptrs + self._indices(dim, layout) * self.strides[dim]
        return ptrs

    @gluon.jit
    def mask(self, boundary_check: gl.constexpr, layout: gl.constexpr):
        """Whether each element of the block lies inside the tensor along the dimensions in
        ``boundary_check`` (at least one)."""
        mask = self._in_bounds(boundary_check[0], layout)
        for i in gl.static_range(1, len(boundary_check)):
            mask = mask & self._in_bounds(boundary_check[i], layout)
        return mask

    @gluon.jit
    def advance(self, delta):
        if len(self.block_shape) == 1:
            offsets = (self.offsets[0] + delta[0],)
        elif len(self.block_shape) == 2:
            offsets = (self.offsets[0] + delta[0], self.offsets[1] + delta[1])
        else:
            offsets = (self.offsets[0] + delta[0], self.offsets[1] + delta[1], self.offsets[2] + delta[2])
        return _BlockPointer(self.base, self.shape, self.strides, offsets, self.block_shape)


@gluon.jit
def _make_block_ptr(base, shape, strides, offsets, block_shape: gl.constexpr, order: gl.constexpr):
    """tl.make_block_ptr (``order`` only matters to a copy engine, which Triton does not use here)."""
    if len(block_shape) == 1:
        starts = (gl.to_tensor(offsets[0]),)
    elif len(block_shape) == 2:
        starts = (gl.to_tensor(offsets[0]), gl.to_tensor(offsets[1]))
    else:
        starts = (gl.to_tensor(offsets[0]), gl.to_tensor(offsets[1]), gl.to_tensor(offsets[2]))
    return _BlockPointer(base, shape, strides, starts, block_shape)


@gluon.jit
def _advance(block_ptr, offsets):
    """tl.advance: the block pointer ``offsets`` further."""
    return block_ptr.advance(offsets)


@gluon.jit
def _load_block(block_ptr, boundary_check: gl.constexpr = gl.constexpr(()), padding_option: gl.constexpr = gl.constexpr(""),
                cache_modifier: gl.constexpr = gl.constexpr(""), eviction_policy: gl.constexpr = gl.constexpr(""),
                volatile: gl.constexpr = False, layout: gl.constexpr = None):
    """tl.load of a block pointer, its tile in ``layout``; out of bounds: ``padding_option``."""
    ptrs = block_ptr.pointers(layout)
    mask = None
    other = None
    if len(boundary_check) > 0:
        mask = block_ptr.mask(boundary_check, layout)
        if padding_option == "zero":
            other = 0.0
        elif padding_option == "nan":
            other = float("nan")
    return gl.load(ptrs, mask, other, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                   volatile=volatile)


@gluon.jit
def _store_block(block_ptr, value, boundary_check: gl.constexpr = gl.constexpr(()), cache_modifier: gl.constexpr = gl.constexpr(""),
                 eviction_policy: gl.constexpr = gl.constexpr(""), layout: gl.constexpr = None):
    """tl.store to a block pointer, its tile in ``layout``."""
    ptrs = block_ptr.pointers(layout)
    mask = None
    if len(boundary_check) > 0:
        mask = block_ptr.mask(boundary_check, layout)
    gl.store(ptrs, gl.convert_layout(value, layout), mask, cache_modifier=cache_modifier,
             eviction_policy=eviction_policy)
'''

IMPORT = "from triton.language.core import _aggregate as aggregate"


@dataclass
class BlockPointerPlan:
    imports: list = field(default_factory=list)
    helpers: str = ""
    layouts: list = field(default_factory=list)        # NamedLayout: each access's tile layout


def _tile_layout(original, translation, access):
    """(encoding, shape) Triton's compile gave the tile of ``access``: its access op on the call's lines."""
    text = translation.source
    (line, _), (end_line, _) = text.start(access.node), text.end(access.node)
    names = _ACCESS_OPS[access.kind]
    found = [op for position, op in original.ops if position is not None and position[0] == text.file
             and line <= position[1] <= end_line and op.name in names]
    found.sort(key=lambda op: names.index(op.name))
    if not found:      # in a branch Triton did not compile (a constexpr condition): nor will Gluon
        return None, None
    return found[0].encoding, tuple(found[0].shape)


def plan_block_pointers(translations, original) -> BlockPointerPlan:
    """Write every block-pointer access of ``translations`` as a helper call in Triton's layout."""
    plan = BlockPointerPlan()
    uses = any(t.block_pointers for t in translations)
    if not uses:
        return plan
    for translation in translations:
        text = translation.source
        for access in translation.block_accesses:
            encoding, shape = _tile_layout(original, translation, access)
            closing = text.end(access.node)
            if encoding is None:
                access.layout = "None"
                translation.edits.insert(closing[0], closing[1] - 1, ", layout=None")
                continue
            if not 1 <= len(shape) <= 3:
                raise PortError(f"{os.path.basename(text.file)}:{text.start(access.node)[0]}: a block pointer of "
                                f"rank {len(shape)} (the port writes ranks 1 to 3)")
            line = text.start(access.node)[0]
            name = f"{access.kind.upper()}_{line}"
            if not any(named.name == name for named in plan.layouts):
                plan.layouts.append(NamedLayout(name, gluon_layout_expression(encoding, shape),
                                                f"Triton's layout for the block pointer's {access.kind} at line {line}",
                                                encoding, shape))
            access.layout = name
            checks = next((k.value for k in access.node.keywords if k.arg == "boundary_check"), None)
            access.boundary_check = ast.unparse(checks) if checks is not None else ""
            translation.edits.insert(closing[0], closing[1] - 1, f", layout={name}")
    plan.imports = [IMPORT]
    plan.helpers = module_constants(plan.layouts) + HELPERS
    return plan
