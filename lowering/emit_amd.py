"""AMD CDNA (gfx90a, gfx942) instructions for islands: ROCDL / LLVM ops, wave64.

* Cross-lane moves: ``rocdl.ds_bpermute %byte_index, %word`` (``ds_bpermute_b32``): lane l reads
  the word of lane ``byte_index / 4``.  It parses the same on triton 3.6 and 3.9.  An xor round
  ``lane ^ c`` is a bpermute with index ``(lane ^ c) * 4``.
* LDS (address space 3): ``llvm.store`` / ``llvm.load`` of i8, i16, i32, vector<2xi32>,
  vector<4xi32> with their natural alignment; the AMDGPU back end selects
  ``ds_write_b8 ... ds_write_b128`` / ``ds_read_*``.
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

from .emit_llvm import EmitError, IslandWriter
from .plan import ShuffleRound, SharedAccess
from .target import Target


class AmdInstructions:
    def __init__(self, target: Target):
        self.target = target

    def _thread_id(self, w: IslandWriter) -> str:
        if not hasattr(w, "_amd_tid"):
            w._amd_tid = w.op("rocdl.workitem.id.x : i32")
        return w._amd_tid

    def lane_id(self, w: IslandWriter) -> str:
        if not hasattr(w, "_amd_lane"):
            w._amd_lane = w.binary("and", self._thread_id(w), w.const(self.target.warp_size - 1))
        return w._amd_lane

    def warp_id(self, w: IslandWriter) -> str:
        if not hasattr(w, "_amd_warp"):
            shift = self.target.warp_size.bit_length() - 1
            w._amd_warp = w.binary("lshr", self._thread_id(w), w.const(shift))
        return w._amd_warp

    # -- packing with shifts and ors (the back end forms v_perm / v_lshl_or itself) ----------------
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
        if rnd.instruction not in ("shfl.xor", "shfl.idx", "ds_bpermute"):
            raise EmitError(f"shuffle instruction '{rnd.instruction}' is not an AMD instruction")
        source = w.xor_of_bits(rnd.source_lane.lane, self.lane_id(w), rnd.source_lane.const)
        if any(rnd.source_lane.warp):  # each warp reads its own source lane (warp-local plans)
            source = w.binary("xor", source, w.xor_of_bits(rnd.source_lane.warp, self.warp_id(w)))
        byte_index = w.binary("shl", source, w.const(2))
        w.counts["ds_bpermute"] += 1
        return w.op(f"rocdl.ds_bpermute {byte_index}, {value} : (i32, i32) -> i32")

    # -- LDS ---------------------------------------------------------------------------------------
    def shared_address(self, w: IslandWriter, base: str, byte_offset: str) -> str:
        return w.op(f"llvm.getelementptr {base}[{byte_offset}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8")

    @staticmethod
    def _access_type(count: int, bits: int) -> tuple[str, int]:
        total = count * bits
        if total < 32:
            return f"i{total}", total
        if total == 32:
            return "i32", total
        return f"vector<{total // 32}xi32>", total

    def store(self, w: IslandWriter, op: SharedAccess, address: str, values: list[str], bits: int) -> None:
        if op.instruction not in ("st.shared", "ds_write"):
            raise EmitError(f"{op.instruction} has no AMD form")
        type_, total = self._access_type(len(values), bits)
        value = self._combine(w, values, bits, type_, total)
        w.counts[f"ds_write.b{total}"] += 1
        w.line(f"llvm.store {value}, {address} {{alignment = {total // 8} : i64}} : {type_}, !llvm.ptr<3>")

    def load(self, w: IslandWriter, op: SharedAccess, address: str, count: int, bits: int) -> list[str]:
        if op.instruction not in ("ld.shared", "ds_read"):
            raise EmitError(f"{op.instruction} has no AMD form")
        type_, total = self._access_type(count, bits)
        w.counts[f"ds_read.b{total}"] += 1
        value = w.op(f"llvm.load {address} {{alignment = {total // 8} : i64}} : !llvm.ptr<3> -> {type_}")
        return self._split(w, value, count, bits, type_, total)

    def _combine(self, w: IslandWriter, values: list[str], bits: int, type_: str, total: int) -> str:
        """Elements (storage ints) -> the stored value: an integer of ``total`` bits, or a vector
        of 32-bit words."""
        from .element_type import ElementType
        from .emit_llvm import element_words
        if total <= 32:
            if len(values) == 1:
                return values[0]
            word = self.pack(w, values, bits)
            return w.cast("trunc", word, "i32", type_)
        words = element_words(w, self, ElementType(f"i{bits}", f"i{bits}", bits), values)
        vec = w.op(f"llvm.mlir.undef : {type_}")
        for i, word in enumerate(words):
            vec = w.op(f"llvm.insertelement {word}, {vec}[{w.const(i)} : i32] : {type_}")
        return vec

    def _split(self, w: IslandWriter, value: str, count: int, bits: int, type_: str, total: int) -> list[str]:
        from .element_type import ElementType
        from .emit_llvm import word_elements
        if total <= 32:
            if count == 1:
                return [value]
            word = w.cast("zext", value, type_, "i32")
            return self.unpack(w, word, count, bits)
        words = [w.op(f"llvm.extractelement {value}[{w.const(i)} : i32] : {type_}") for i in range(total // 32)]
        return word_elements(w, self, ElementType(f"i{bits}", f"i{bits}", bits), words, count)

    # -- barriers ----------------------------------------------------------------------------------
    def barrier(self, w: IslandWriter, kind: str, guard: bool = False) -> None:
        if kind == "bar.warp.sync":
            w.counts["fence"] += 1
            w.line('llvm.fence syncscope("workgroup") acq_rel')
            return
        if kind not in ("bar.sync", "s_barrier"):
            raise EmitError(f"barrier kind '{kind}' is not an AMD barrier")
        w.counts["guard s_barrier" if guard else "s_barrier"] += 1
        w.line('llvm.fence syncscope("workgroup") release')
        w.line("rocdl.s.barrier")
        w.line('llvm.fence syncscope("workgroup") acquire')
