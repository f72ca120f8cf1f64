"""How a pipelined loop's tiles reach their rings (:mod:`.pipelining`): the text of each copy,
and of the waits for it.

Three ways, as Triton's compile of the original does it:

* asynchronous copies of a tile of pointers (NVIDIA's ``cp.async``): ``_load_ahead(ring.index(s),
  wanted, pointers, mask)`` for each tile, ``async_copy.commit_group()`` after them, and in the
  loop ``async_copy.wait_group(stages - 2)`` before the tiles are read;
* TMA copies of a tensor descriptor's tile (sm_90 on), each ring with a ring of mbarriers beside it
  (one a slot)::

      _tma_ahead(a_desc.tma, [off_m, k + 2 * BK], a_ring.index(s), a_ready.index(s), k + 2 * BK < k_end)
      ...
      mbarrier.wait(a_ready.index(i % 3), i // 3 & 1)          # this iteration's tile has landed

  (``i`` the iteration's number from 0: a slot's barrier completes once each time round the
  ring, so its phase flips every ``stages`` iterations);
* loads into registers stored to the ring after the dot (AMD): ``gl.load(pointers, mask=...)``.

A tile is read through a pointer tile (``a_ptrs``, its mask), a block pointer
(``a_bp.pointers(LOAD_24)``, ``a_bp.mask((0, 1), LOAD_24)``, :mod:`.block_pointers`) or a tensor
descriptor read through pointers (``a_desc._block([off_m, k])``, :mod:`.tensor_descriptors`).
"""

from __future__ import annotations

import re

# A ring's element types as Gluon names them, and the ring's type as Triton's TTGIR writes it
# (``!ttg.memdesc<3x128x64xf16, #shared, ...>``: depth, tile, element, layout).
ELEMENT_TYPES = {"f16": "gl.float16", "bf16": "gl.bfloat16", "f32": "gl.float32", "f64": "gl.float64",
                 "i8": "gl.int8", "i16": "gl.int16", "i32": "gl.int32", "f8E4M3FN": "gl.float8e4nv",
                 "f8E5M2": "gl.float8e5"}
RING = re.compile(r"!ttg\.memdesc<(\d+)x([0-9x]+)x(\w+), (#[\w.]+)")

LOAD_AHEAD = '''
@gluon.jit
def _load_ahead(buffer, wanted, pointer, mask):
    """Start copying the tile at ``pointer`` into ``buffer`` where ``wanted`` (masked-off elements
    zero).  ``wanted`` goes into the mask, as Triton predicates its copies: no branch in the loop."""
    if mask is None:
        async_copy.{copy}(buffer, pointer, wanted)
    else:
        async_copy.{copy}(buffer, pointer, mask & wanted)
'''

TMA_AHEAD = '''
@gluon.jit
def _tma_ahead(descriptor, offsets, buffer, ready, wanted):
    """Start the TMA copy of ``descriptor``'s tile at ``offsets`` into ``buffer``, which completes
    ``ready``'s phase when it lands, where ``wanted`` (predicated, as Triton's: no branch)."""
    mbarrier.expect(ready, descriptor.block_type.nbytes, pred=wanted)
    tma.{copy}(descriptor, offsets, ready, buffer, pred=wanted)
'''


def load_ahead_helper() -> tuple[str, str]:
    """(import line, helper text) of the asynchronous copy of pointer tiles, in this Triton's names."""
    import triton.experimental.gluon.language.nvidia.ampere.async_copy as async_copy
    copy = "async_load" if hasattr(async_copy, "async_load") else "async_copy_global_to_shared"
    return "from triton.experimental.gluon.language.nvidia.ampere import async_copy", LOAD_AHEAD.format(copy=copy)


def tma_ahead_helper() -> str:
    from triton.experimental.gluon.language.nvidia.hopper import tma
    return TMA_AHEAD.format(copy="async_load" if hasattr(tma, "async_load") else "async_copy_global_to_shared")


class RingCopies:
    """The copy text of one loop's rewrite (``rewrite``: a :class:`~.pipelining._LoopRewrite`,
    whose ``_at`` writes an expression at an iteration)."""

    def __init__(self, rewrite):
        self.rewrite = rewrite

    @property
    def tma(self) -> bool:
        return self.rewrite.tma

    # -- one tile
    def block_at(self, load, value: str) -> str:
        """The block pointer ``load`` reads at iteration ``value`` (a descriptor's: at its offsets)."""
        at = self.rewrite._at
        if load.block is not None and hasattr(load.block, "offsets"):
            return f"{at(load.pointer, value)}._block({at(load.mask, value)})"
        return at(load.pointer, value)

    def pointers_at(self, load, value: str) -> str:
        """The text of ``load``'s pointers at iteration ``value`` (a block pointer's tile of them)."""
        if load.block is not None:
            return f"{self.block_at(load, value)}.pointers({load.block.layout})"
        return self.rewrite._at(load.pointer, value)

    def mask_at(self, load, value: str):
        """The text of ``load``'s mask at iteration ``value``, or None."""
        if load.block is not None:
            checks = load.block.boundary_check
            return f"{self.block_at(load, value)}.mask({checks}, {load.block.layout})" if checks else None
        return self.rewrite._at(load.mask, value) if load.mask is not None else None

    def ahead(self, load, slot: str, value: str) -> str:
        """Start copying ``load``'s tile of iteration ``value`` into its ring's ``slot``."""
        rewrite = self.rewrite
        wanted = rewrite.within(value)
        if self.tma:
            return (f"_tma_ahead({rewrite._at(load.pointer, value)}.tma, {rewrite._at(load.mask, value)}, "
                    f"{load.buffer}.index({slot}), {load.ready}.index({slot}), {wanted})")
        return (f"_load_ahead({load.buffer}.index({slot}), {wanted}, {self.pointers_at(load, value)}, "
                f"{self.mask_at(load, value) or 'None'})")

    def now(self, load, value: str) -> str:
        """``gl.load`` of ``load``'s tile at iteration ``value``, zero past the loop's end."""
        wanted = f"({self.rewrite.within(value)})"
        mask = self.mask_at(load, value)
        mask = f"({mask}) & {wanted}" if mask is not None else wanted
        return f"gl.load({self.pointers_at(load, value)}, mask={mask}, other=0)"

    # -- the loop's copies together
    def before(self) -> list:
        """Lines before the first copies: a TMA ring's barriers, one a slot."""
        if not self.tma:
            return []
        rewrite, lines = self.rewrite, []
        for load in rewrite.loads:
            load.ready = rewrite.fresh(f"{load.name}_ready")
            lines.append(f"{load.ready} = gl.allocate_shared_memory(gl.int64, [{rewrite.stages}, 1], "
                         "mbarrier.MBarrierLayout())")
        slot = rewrite.fresh("slot")
        lines.append(f"for {slot} in gl.static_range({rewrite.stages}):")
        lines += [f"    mbarrier.init({load.ready}.index({slot}), count=1)" for load in rewrite.loads]
        return lines

    def commit(self) -> list:
        """What ends one iteration's copies."""
        return [] if self.tma else ["async_copy.commit_group()"]

    def wait(self, iteration: str) -> list:
        """Wait for the tiles of iteration number ``iteration`` (from 0)."""
        rewrite = self.rewrite
        if self.tma:
            return [f"mbarrier.wait({load.ready}.index(({iteration}) % {rewrite.stages}), "
                    f"({iteration}) // {rewrite.stages} & 1)" + ("  # this iteration's tiles have landed"
                                                                  if number == 0 else "")
                    for number, load in enumerate(rewrite.loads)]
        return [f"async_copy.wait_group({rewrite.ahead - 1})  # this iteration's tiles have landed"]

    def after(self) -> list:
        """Lines after the loop: no copy outstanding (a TMA's predicated off past the end: none)."""
        if not self.tma:
            return ["async_copy.wait_group(0)  # no copy outlives the loop"]
        rewrite = self.rewrite
        slot = rewrite.fresh("slot")
        return [f"for {slot} in gl.static_range({rewrite.stages}):  # every copy has landed: the barriers go"] + \
            [f"    mbarrier.invalidate({load.ready}.index({slot}))" for load in rewrite.loads]
