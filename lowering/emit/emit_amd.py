"""AMD CDNA (gfx90a, gfx942) instructions for islands: ROCDL / LLVM ops, wave64.

* Cross-lane moves: ``rocdl.ds_bpermute %byte_index, %word`` (``ds_bpermute_b32``): lane l reads
  the word of lane ``byte_index / 4``.  It parses the same on triton 3.6 and 3.9.  An xor round
  ``lane ^ c`` is a bpermute with index ``(lane ^ c) * 4``.
* LDS (address space 3): ``llvm.store`` / ``llvm.load`` of i8, i16, i32, vector<2xi32>,
  vector<4xi32> with their natural alignment; the AMDGPU back end selects
  ``ds_write_b8 ... ds_write_b128`` / ``ds_read_*``.  Several 8- or 16-bit elements go in and
  out through a vector of them and a bitcast (``vector<8xi8>`` -> ``vector<2xi32>``), as stock
  Triton writes them, not through shifts and ors: where the bytes come straight from a global
  load, the back end then stores the loaded words as they are.  Example (fresh seed 5101, i8
  16x64 ``blocked<[1, 4], [16, 4]>`` -> ``amd_mfma`` v3, triton 3.6): with shifts LLVM narrowed
  the global loads and re-joined the bytes with 2 ``v_perm_b32`` that stock's code does not
  have; through a vector, none (``benchmarks/studies/stock_dominance.py``, the final-code check).
* Barriers: ``fence release; s_barrier; fence acquire`` at workgroup scope (what HIP's
  ``__syncthreads`` is).  The fences matter twice: they make the back end wait for LDS traffic
  (``s_waitcnt lgkmcnt(0)``), and they keep LLVM from moving our plain loads and stores across
  the barrier (``llvm.amdgcn.s.barrier`` alone does not touch memory in LLVM's model).  A plan's
  warp-level barrier becomes one ``acq_rel`` fence: a wave runs in lockstep, so only the
  ordering of its own LDS accesses is needed.  (The back end drops ``s_barrier`` itself when a
  workgroup is a single wave.)
* Lane id: ``workitem.id.x & 63``; wave id: ``workitem.id.x >> 6`` (Triton launches 1-D blocks).
"""

from __future__ import annotations

from . import island_writer
from ..instructions import (AccessKind, AccessShape, AluOp, BarrierScope, FinalInstruction, FinalRole, InstructionKey,
                            MemorySpace, ShuffleMode)
from .island_writer import EmitError, IslandState, IslandWriter
from ..plan import ShuffleRound, SharedAccess
from ..target import Target

# The instructions of final AMDGCN that tools count, one per line: the lane permute, LDS writes
# and reads (``ds_write2`` / ``ds_read2``: two in one), barriers, selects, byte permutes.  The one
# table (``instructions.FinalInstruction``).
FINAL_CODE_INSTRUCTIONS = (
    FinalInstruction("ds_bpermute", r"^\s*ds_bpermute(_b32\b)?", FinalRole.MOVES_DATA, detail=1),
    FinalInstruction("ds_write", r"^\s*ds_write(?:(2?)(?:st64)?_b(\d+)(?:_d16_hi)?\b)?", FinalRole.MOVES_DATA,
                     detail=2),
    FinalInstruction("ds_read", r"^\s*ds_read(?:(2?)(?:st64)?_(?:b|u|i)(\d+)(?:_d16(?:_hi)?)?\b)?",
                     FinalRole.MOVES_DATA, detail=2),
    FinalInstruction("s_barrier", r"^\s*s_barrier\b", FinalRole.BARRIER),
    FinalInstruction("v_cndmask", r"^\s*v_cndmask_b32", FinalRole.ARITHMETIC),
    FinalInstruction("v_perm", r"^\s*v_perm_b32", FinalRole.ARITHMETIC),
)
# The data-movement columns of a conversion's report: column name -> pattern over lines.
FINAL_CODE_PATTERNS = {row.name: row.pattern for row in FINAL_CODE_INSTRUCTIONS if row.role is FinalRole.MOVES_DATA}


def mnemonic(key: InstructionKey) -> str:
    """The AMDGCN name of one of the cost model's instructions, as tools show them:
    ``ds_bpermute``, ``ds_write.b64``, ``ds_read.b32``, ``s_barrier``, ``fence``, ``pack``."""
    if isinstance(key, AccessShape):
        if key.form.is_matrix or key.space is not MemorySpace.SHARED:
            raise EmitError(f"a {key.form.value} {key.kind.value} of {key.space.value} memory has no AMD instruction")
        return f"{'ds_write' if key.kind is AccessKind.STORE else 'ds_read'}.b{key.bits}"
    if key is BarrierScope.CLUSTER:
        raise EmitError("AMD has no cluster barrier")
    # an xor round and an indexed round are both one ds_bpermute; a warp barrier is one fence
    names = {ShuffleMode.LOCAL: "local", ShuffleMode.XOR: "ds_bpermute", ShuffleMode.INDEX: "ds_bpermute",
             AluOp.SELECT: "select", AluOp.PACK: "pack", BarrierScope.WARP: "fence", BarrierScope.CTA: "s_barrier"}
    return names[key]


class AmdInstructions:
    """``island_writer.VendorInstructions`` for AMD CDNA, for one island (``state``)."""

    def __init__(self, target: Target, state: IslandState):
        self.target = target
        self.state = state

    def _thread_id(self, w: IslandWriter) -> str:
        if self.state.thread_id is None:
            self.state.thread_id = w.op("rocdl.workitem.id.x : i32")
        return self.state.thread_id

    def lane_id(self, w: IslandWriter) -> str:
        if self.state.lane_id is None:
            self.state.lane_id = w.binary("and", self._thread_id(w), w.const(self.target.warp_size - 1))
        return self.state.lane_id

    def warp_id(self, w: IslandWriter) -> str:
        if self.state.threads is not None and self.state.threads.first_warp:
            raise EmitError(f"the {self.state.threads.name} of a warp-specialized kernel (AMD: not emitted)")
        if self.state.warp_id is None:
            shift = self.target.warp_size.bit_length() - 1
            self.state.warp_id = w.binary("lshr", self._thread_id(w), w.const(shift))
        return self.state.warp_id

    # -- packing with shifts and ors (the back end forms v_perm / v_lshl_or itself): what shuffles
    # use; LDS accesses of several narrow elements go through a vector instead (module docstring)
    def pack(self, w: IslandWriter, values: list[str], bits: int) -> str:
        out = None
        for i, v in enumerate(values):
            x = w.cast("zext", v, f"i{bits}", "i32")
            if i:
                w.counts["pack"] += 1
                x = w.binary("shl", x, w.const(i * bits))
            out = x if out is None else w.binary("or", out, x)
        return out

    def unpack(self, w: IslandWriter, word: str, count: int, bits: int) -> list[str]:
        out = []
        for i in range(count):
            if i:
                w.counts["pack"] += 1
            x = w.binary("lshr", word, w.const(i * bits)) if i else word
            out.append(w.cast("trunc", x, "i32", f"i{bits}"))
        return out

    # -- cross-lane moves ------------------------------------------------------------------------
    def shuffle(self, w: IslandWriter, value: str, rnd: ShuffleRound, warp_size: int) -> str:
        if rnd.mode is ShuffleMode.LOCAL:
            raise EmitError("a local shuffle round moves nothing: no instruction to print")
        source = w.xor_of_bits(rnd.source_lane.lane, self.lane_id(w), rnd.source_lane.const)
        if any(rnd.source_lane.warp):  # each warp reads its own source lane (warp-local plans)
            source = w.binary("xor", source, w.xor_of_bits(rnd.source_lane.warp, self.warp_id(w)))
        byte_index = w.binary("shl", source, w.const(2))
        w.counts[mnemonic(rnd.mode)] += 1
        return w.op(f"rocdl.ds_bpermute {byte_index}, {value} : (i32, i32) -> i32")

    # -- LDS ---------------------------------------------------------------------------------------
    def shared_address(self, w: IslandWriter, base: str, byte_offset: str) -> str:
        return island_writer.shared_pointer(w, base, byte_offset)

    def advance(self, w: IslandWriter, address: str, byte_constant: int) -> str:
        """A GEP of ``byte_constant`` i8 from ``address``, like ``shared_address``'s own: the
        AMDGPU backend folds it into the access (``ds_read_b64 v0, v1 offset:512``)."""
        return self.shared_address(w, address, w.const(byte_constant))

    def store(self, w: IslandWriter, op: SharedAccess, address: str, values: list[str], bits: int) -> None:
        total = len(values) * bits
        type_ = island_writer.shared_access_type(total)
        name = mnemonic(AccessShape(op.kind, op.form, op.space, total))  # an EmitError for matrix forms
        value = self._combine(w, values, bits, type_, total)
        w.counts[name] += 1
        island_writer.shared_store(w, address, value, total)

    def load(self, w: IslandWriter, op: SharedAccess, address: str, count: int, bits: int) -> list[str]:
        total = count * bits
        type_ = island_writer.shared_access_type(total)
        w.counts[mnemonic(AccessShape(op.kind, op.form, op.space, total))] += 1  # an EmitError for matrix forms
        value = island_writer.shared_load(w, address, total)
        return self._split(w, value, count, bits, type_, total)

    def _combine(self, w: IslandWriter, values: list[str], bits: int, type_: str, total: int) -> str:
        """Elements (storage ints) -> the stored value: an integer of ``total`` bits, or a vector
        of 32-bit words."""
        if len(values) > 1 and bits in (8, 16):
            return self._through_a_vector(w, values, bits, type_)
        if total <= 32:
            if len(values) == 1:
                return values[0]
            word = self.pack(w, values, bits)
            return w.cast("trunc", word, "i32", type_)
        return island_writer.words_to_vector(w, island_writer.element_words(w, self, bits, values))

    @staticmethod
    def _through_a_vector(w: IslandWriter, values: list[str], bits: int, type_: str) -> str:
        """Narrow elements -> the access's ``type_`` (module docstring: why not shifts)."""
        vector = f"vector<{len(values)}xi{bits}>"
        elements = w.op(f"llvm.mlir.undef : {vector}")
        for i, value in enumerate(values):
            elements = w.op(f"llvm.insertelement {value}, {elements}[{w.const(i)} : i32] : {vector}")
        return w.op(f"llvm.bitcast {elements} : {vector} to {type_}")

    @staticmethod
    def _out_of_a_vector(w: IslandWriter, value: str, count: int, bits: int, type_: str) -> list[str]:
        """The inverse of ``_through_a_vector``: the loaded ``type_`` -> ``count`` narrow elements."""
        vector = f"vector<{count}xi{bits}>"
        elements = w.op(f"llvm.bitcast {value} : {type_} to {vector}")
        return [w.op(f"llvm.extractelement {elements}[{w.const(i)} : i32] : {vector}") for i in range(count)]

    def _split(self, w: IslandWriter, value: str, count: int, bits: int, type_: str, total: int) -> list[str]:
        if count > 1 and bits in (8, 16):
            return self._out_of_a_vector(w, value, count, bits, type_)
        if total <= 32:
            if count == 1:
                return [value]
            word = w.cast("zext", value, type_, "i32")
            return self.unpack(w, word, count, bits)
        words = island_writer.vector_to_words(w, value, total // 32)
        return island_writer.word_elements(w, self, bits, words, count)

    # -- barriers ----------------------------------------------------------------------------------
    def async_proxy_fence(self, w: IslandWriter) -> None:
        raise EmitError("AMD targets have no async proxy to fence")

    def barrier(self, w: IslandWriter, scope: BarrierScope, guard: bool = False, alone: bool = False) -> None:
        if scope is BarrierScope.WARP:
            w.counts["fence"] += 1
            w.line('llvm.fence syncscope("workgroup") acq_rel')
            return
        if scope is not BarrierScope.CTA:
            raise EmitError(f"{scope.value} barriers are not emitted")
        if self.state.threads is not None:
            # s_barrier waits for every wave of the workgroup; a warp group of a warp-specialized
            # kernel would need Triton's named-barrier scheme for AMD, which we do not emit.
            raise EmitError(f"a CTA barrier in the {self.state.threads.name} of a warp-specialized kernel "
                            f"(AMD named barriers are not emitted)")
        w.counts["guard s_barrier" if guard else "s_barrier"] += 1
        w.line('llvm.fence syncscope("workgroup") release')
        w.line("rocdl.s.barrier")
        w.line('llvm.fence syncscope("workgroup") acquire')
