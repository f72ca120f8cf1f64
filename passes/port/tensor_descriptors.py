"""Tensor descriptors made in the kernel (``tl.make_tensor_descriptor``, ``desc.load``,
``desc.store``) in the port, as Triton's compile lowers them for the target.

Where the target has a tensor memory accelerator (sm_90 on), Triton's compile gives the
descriptor an NVMMA shared layout (``!tt.tensordesc<tensor<64x64xf16, #shared>>``) and each load
a TMA copy into shared memory, an mbarrier and its wait, and a read into registers in the layout
the value is used in; each store the reverse.  The port writes the same with Gluon's TMA::

    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    v = xd.load([pid * BM, 0])
        ->
    xd = _make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], layout=DESC_5)
    v = xd.load([pid * BM, 0], layout=LOAD_8)

``DESC_5`` is Triton's shared layout for the descriptor made at line 5, ``LOAD_8`` the register
layout Triton reads the tile at line 8 into.  Elsewhere (sm_80, AMD) Triton rewrites a descriptor
into a tile of pointers checked on every dimension and padded with zeros (or NaN), which is a
block pointer's load (:mod:`.block_pointers`): the port writes that.

A descriptor is a name the function assigns from ``tl.make_tensor_descriptor`` (or from another
such name); ``.load`` / ``.store`` on it are its accesses.  Descriptors passed in as arguments
(host-side ``TensorDescriptor``) are not ported: Gluon's need their shared layout on the host.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from .block_pointers import HELPERS as BLOCK_POINTER_HELPERS
from .block_pointers import IMPORT as AGGREGATE_IMPORT
from .layouts import NamedLayout, gluon_layout_expression, module_constants
from .translation import PortError

# Where Triton takes the tile's register layout: with a TMA, the read of the copied tile into
# registers (a load) or the value stored to shared memory (a store); through pointers, the
# access's pointers (a load of a pipelined loop: its asynchronous copy).
_ACCESS_OPS = {
    ("tma", "load"): ("ttg.local_load",),
    ("tma", "store"): ("ttg.local_alloc", "ttg.local_store"),
    ("pointers", "load"): ("tt.load", "ttg.async_copy_global_to_local", "amdgpu.buffer_load", "amdg.buffer_load",
                           "amdgpu.buffer_load_to_local", "amdg.buffer_load_to_local"),
    ("pointers", "store"): ("tt.store", "amdgpu.buffer_store", "amdg.buffer_store"),
}

_THROUGH_POINTERS = '''
@gluon.constexpr_function
def _every_dimension(block_shape):
    return tuple(range(len(block_shape)))


@aggregate
class _TensorDescriptor:
    """A tensor descriptor as Triton's compile lowers it without a TMA: each access a block
    pointer's, checked on every dimension, out of bounds ``padding`` (zero or NaN)."""

    base: gl.tensor
    shape: gl.tuple
    strides: gl.tuple
    block_shape: gl.constexpr
    padding: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, base, shape, strides, block_shape, padding):
        self.base = base
        self.shape = _values(shape)
        self.strides = _values(strides)
        self.block_shape = gl.constexpr(tuple(block_shape))
        self.padding = gl.constexpr(padding)

    @gluon.jit
    def _block(self, offsets):
        return _make_block_ptr(self.base, self.shape, self.strides, offsets, self.block_shape, None)

    @gluon.jit
    def load(self, offsets, layout: gl.constexpr):
        return _load_block(self._block(offsets), _every_dimension(self.block_shape), self.padding, layout=layout)

    @gluon.jit
    def store(self, offsets, value, layout: gl.constexpr):
        _store_block(self._block(offsets), value, _every_dimension(self.block_shape), layout=layout)


@gluon.jit
def _make_tensor_descriptor(base, shape, strides, block_shape: gl.constexpr,
                            padding_option: gl.constexpr = gl.constexpr("zero")):
    """tl.make_tensor_descriptor, read through pointers."""
    return _TensorDescriptor(base, shape, strides, block_shape, padding_option)
'''

_THROUGH_TMA = '''
@aggregate
class _TensorDescriptor:
    """A tensor descriptor as Triton's compile lowers it on a target with a TMA: each load a copy
    into shared memory waited for on an mbarrier, then read into registers; each store the
    reverse, waited for before the buffer is given back."""

    tma: tma.tensor_descriptor

    @gluon.constexpr_function
    def __init__(self, tma):
        self.tma = tma

    @gluon.jit
    def load(self, offsets, layout: gl.constexpr):
        buffer = gl.allocate_shared_memory(self.tma.dtype, self.tma.block_type.shape, self.tma.layout)
        barrier = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(barrier, count=1)
        mbarrier.expect(barrier, self.tma.block_type.nbytes)
        tma.{load}(self.tma, offsets, barrier, buffer)
        mbarrier.wait(barrier, 0)
        mbarrier.invalidate(barrier)
        return buffer.load(layout)

    @gluon.jit
    def store(self, offsets, value, layout: gl.constexpr):
        buffer = gl.allocate_shared_memory(self.tma.dtype, self.tma.block_type.shape, self.tma.layout,
                                           gl.convert_layout(value, layout))
        fence_async_shared()
        tma.{store}(self.tma, offsets, buffer)
        tma.store_wait(0)


@gluon.jit
def _make_tensor_descriptor(base, shape, strides, block_shape: gl.constexpr,
                            padding_option: gl.constexpr = gl.constexpr("zero"), layout: gl.constexpr = None):
    """tl.make_tensor_descriptor in Triton's shared layout for it."""
    return _TensorDescriptor(tma.make_tensor_descriptor(base, shape, strides, block_shape, layout, padding_option))
'''

_TMA_IMPORTS = ["from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma"]


def _tma_helpers() -> str:
    """The TMA helpers with this Triton's names for the copies (``async_load`` and ``async_store``
    from 3.8; ``async_copy_global_to_shared`` and ``async_copy_shared_to_global`` before)."""
    from triton.experimental.gluon.language.nvidia.hopper import tma
    if hasattr(tma, "async_load"):
        return _THROUGH_TMA.replace("{load}", "async_load").replace("{store}", "async_store")
    return _THROUGH_TMA.replace("{load}", "async_copy_global_to_shared").replace("{store}", "async_copy_shared_to_global")


@dataclass
class DescriptorPlan:
    imports: list = field(default_factory=list)
    helpers: str = ""
    layouts: list = field(default_factory=list)
    through_tma: bool = False


def pads_with_nan(translation) -> bool:
    """Whether a descriptor ``translation`` makes is made with ``padding_option="nan"`` (its
    out-of-bounds elements are not the zeros a pipelined loop's copies fill in)."""
    return any("nan" in ast.unparse(c.node) for c in translation.descriptor_calls if c.kind == "make")


def _ops_on_lines(original, translation, node, names):
    text = translation.source
    (line, _), (end_line, _) = text.start(node), text.end(node)
    found = [op for position, op in original.ops if position is not None and position[0] == text.file
             and line <= position[1] <= end_line and op.name in names]
    return sorted(found, key=lambda op: names.index(op.name))


def _where(translation, node) -> str:
    return f"{os.path.basename(translation.source.file)}:{translation.source.start(node)[0]}"


def _rows_of_16_bytes(copy, num_warps: int):
    """A stand-in for Triton's register layout of a TMA copy's tile that Triton never reads into
    registers: each thread 16 bytes of a row, a warp's threads along the rows, warps down the
    tile (an :class:`~.original.OpAt` like the ones Triton's compile gives)."""
    from .original import OpAt
    element = re.search(r"tensordesc<(?:tensor<)?[0-9x]+x(\w+?)(\d+)\b", copy.text)
    bits = int(element.group(2)) if element else 16
    shape = tuple(copy.shape)
    per_thread = [1] * (len(shape) - 1) + [max(1, min(shape[-1], 128 // bits))]
    along = min(32, max(1, shape[-1] // per_thread[-1]))
    threads = [1] * (len(shape) - 2) + ([32 // along] if len(shape) > 1 else []) + [along]
    if len(shape) == 1:
        threads = [32]
    warps = [num_warps] + [1] * (len(shape) - 1)
    order = list(range(len(shape) - 1, -1, -1))
    encoding = (f"#ttg.blocked<{{sizePerThread = {per_thread}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
                f"order = {order}}}>")
    return OpAt("ttg.local_load", encoding, shape, "")


def plan_tensor_descriptors(translations, original, uses_block_pointers: bool, num_warps: int = 4) -> DescriptorPlan:
    """Write every descriptor call of ``translations`` with the layouts Triton chose for it."""
    plan = DescriptorPlan()
    calls = [call for t in translations for call in t.descriptor_calls]
    if not calls:
        return plan
    plan.through_tma = "!tt.tensordesc<" in original.ttgir and "ttng.async_tma" in original.ttgir
    for call in calls:
        translation, text = call.translation, call.translation.source
        line = text.start(call.node)[0]
        if call.kind == "make":
            if not plan.through_tma:
                continue
            made = [op for op in _ops_on_lines(original, translation, call.node, ("ttng.reinterpret_tensor_descriptor",
                                                                                  "tt.make_tensor_descriptor"))]
            if not made or "nvmma_shared" not in made[0].encoding:
                raise PortError(f"{_where(translation, call.node)}: no shared layout in Triton's compile for this descriptor")
            name, why = f"DESC_{line}", f"Triton's shared layout for the tensor descriptor made at line {line}"
            encoding, shape = made[0].encoding, None
        else:
            how = "tma" if plan.through_tma else "pointers"
            found = [op for op in _ops_on_lines(original, translation, call.node, _ACCESS_OPS[(how, call.kind)])
                     if "shared<" not in op.encoding]       # not a buffer's allocation: the value's registers
            call.tma = plan.through_tma
            if not found and how == "tma" and call.kind == "load":
                # Triton's compile keeps the tile in shared memory, where a matrix instruction reads
                # it (a pipelined TMA ring, :mod:`.pipelining`); read into registers only where the
                # loop is left as written: in a blocked layout of the tile's 16-byte rows
                copy = _ops_on_lines(original, translation, call.node, ("ttng.async_tma_copy_global_to_local",))
                if not copy:
                    raise PortError(f"{_where(translation, call.node)}: Triton's compile has no TMA copy for this load")
                found = [_rows_of_16_bytes(copy[0], num_warps)]
            if not found:      # in a branch Triton did not compile (a constexpr condition): nor will Gluon
                closing = text.end(call.node)
                translation.edits.insert(closing[0], closing[1] - 1, ", layout=None")
                continue
            name = f"{call.kind.upper()}_{line}"
            why = f"Triton's layout for the tensor descriptor's {call.kind} at line {line}"
            encoding, shape = found[0].encoding, tuple(found[0].shape)
            call.layout, call.boundary_check = name, str(tuple(range(len(shape))))
        if not any(named.name == name for named in plan.layouts):
            plan.layouts.append(NamedLayout(name, gluon_layout_expression(encoding, shape), why, encoding, shape or ()))
        closing = text.end(call.node)
        translation.edits.insert(closing[0], closing[1] - 1, f", layout={name}")
    plan.imports = ([] if uses_block_pointers else [AGGREGATE_IMPORT]) + (_TMA_IMPORTS if plan.through_tma else [])
    helpers = _tma_helpers() if plan.through_tma else ("" if uses_block_pointers else BLOCK_POINTER_HELPERS) + \
        _THROUGH_POINTERS
    plan.helpers = module_constants(plan.layouts) + helpers
    return plan
