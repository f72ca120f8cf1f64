"""What every island emitter shares: the SSA writer, the per-island state, the vendor interface.

* ``IslandWriter`` hands out SSA names and prints LLVM-dialect ops (pure text, no Triton import);
* ``IslandState``: what one island remembers between vendor calls (the thread, lane and warp ids
  already computed, whether the convert runs in a loop), created by ``emit_llvm.emit_island``
  for each island and given to the vendor object it makes;
* ``VendorInstructions``: the interface ``emit_llvm`` calls on ``emit_nvidia.NvidiaInstructions``
  and ``emit_amd.AmdInstructions``: thread ids, packing, cross-lane moves, shared memory,
  barriers.  Each also has a module function ``mnemonic(key)`` naming the instructions of the
  cost model (``lowering.instructions``) the way that vendor spells them;
* ``element_words`` / ``word_elements``: storage integers <-> the 32-bit words that cross-lane
  moves and shared-memory accesses carry.

The emitters import this module; ``emit_llvm`` imports the emitters: no cycle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from ..instructions import BarrierScope
from ..plan import SharedAccess, ShuffleRound
from ..target import Target


class EmitError(Exception):
    """The plan cannot be printed for this site (the convert is then left to Triton)."""


class IslandWriter:
    """Collects LLVM-dialect lines with fresh SSA names ``%<prefix>_<n>``.

    Constants are created once per (value, type) and shared.  ``counts`` tallies what we emit
    (shuffles, selects, shared accesses by kind and width, barriers) so tests can compare the
    island with the plan's cost model before any compiler has touched it.
    """

    def __init__(self, prefix: str, indent: str = "    "):
        self.prefix = prefix
        self.indent = indent
        self.lines: list[str] = []
        self._next = 0
        self._constants: dict[tuple, str] = {}
        self.counts: Counter = Counter()

    def fresh(self) -> str:
        self._next += 1
        return f"%{self.prefix}_{self._next}"

    def line(self, text: str) -> None:
        self.lines.append(self.indent + text)

    def op(self, text: str) -> str:
        name = self.fresh()
        self.line(f"{name} = {text}")
        return name

    def const(self, value: int, type_: str = "i32") -> str:
        key = (int(value), type_)
        if key not in self._constants:
            self._constants[key] = self.op(f"llvm.mlir.constant({int(value)} : {type_}) : {type_}")
        return self._constants[key]

    # -- integer arithmetic ------------------------------------------------------------------
    def binary(self, opname: str, a: str, b: str, type_: str = "i32") -> str:
        return self.op(f"llvm.{opname} {a}, {b} : {type_}")

    def cast(self, opname: str, value: str, from_type: str, to_type: str) -> str:
        if from_type == to_type:
            return value
        return self.op(f"llvm.{opname} {value} : {from_type} to {to_type}")

    def icmp(self, predicate: str, a: str, b: str, type_: str = "i32") -> str:
        return self.op(f'llvm.icmp "{predicate}" {a}, {b} : {type_}')

    def select(self, condition: str, if_true: str, if_false: str, type_: str = "i32") -> str:
        # counted per 32-bit word, as the cost model counts them: an i64 select is two
        self.counts["select"] += 2 if type_ == "i64" else 1
        return self.op(f"llvm.select {condition}, {if_true}, {if_false} : i1, {type_}")

    def inline_asm(self, asm: str, constraints: str, operands: list[str], operand_types: list[str],
                   result_type: str | None, side_effects: bool = True) -> str | None:
        """``llvm.inline_asm`` with PTX/AMDGCN text; the one op spelling stable on triton 3.6-3.9."""
        flags = "has_side_effects " if side_effects else ""
        args = ", ".join(operands)
        types = ", ".join(operand_types)
        text = f'llvm.inline_asm {flags}asm_dialect = att "{asm}", "{constraints}" {args} : ({types}) -> '
        if result_type is None:
            self.line(text + "()")
            return None
        return self.op(text + result_type)

    # -- struct access -------------------------------------------------------------------------
    def extract(self, struct: str, index: int, struct_type: str) -> str:
        return self.op(f"llvm.extractvalue {struct}[{index}] : {struct_type}")

    def build_struct(self, values: list[str], struct_type: str) -> str:
        out = self.op(f"llvm.mlir.undef : {struct_type}")
        for i, v in enumerate(values):
            out = self.op(f"llvm.insertvalue {v}, {out}[{i}] : {struct_type}")
        return out

    # -- F2-affine functions of the thread ids -------------------------------------------------
    def xor_of_bits(self, images: tuple[int, ...], ids: str, const: int = 0) -> str:
        """``const ^ XOR(images[i] for set bits i of ids)`` (a ThreadAffine's part), i32.

        Printed as one shift and one mask per *distance*: bit i of ``ids`` that lands on bit b
        of the result moves by b - i, and all the bits that move by the same distance share one
        ``shl`` (or ``lshr``) and one ``and``; terms of different distances may set the same bit
        and are XORed.  Example: images (2, 4, 8, 32, 64) of lane bits 0..4 (bits 0-2 move up
        by 1, bits 3-4 by 2) give ``((l << 1) & 14) ^ ((l << 2) & 96)``: 5 ops, where one
        ``lshr``/``and``/``mul`` per bit and an XOR chain took 18.  That per-bit form also gave
        LLVM's SLP vectorizer one XOR reduction of like terms per address to try: Triton's
        ``make_llir`` on our module of neighborhood_attention_qk_f32_64 (Liger corpus, sm_90)
        took 36-39 ms more than on stock's with it, 10-17 ms more with this form (qk_bf16_64:
        30-33 -> 21-24 ms; two runs of ``benchmarks/harness/compile_time_corpus.py``).  Bits of ``ids`` above
        ``len(images)`` are masked off.  An image or ``const``
        that does not fit 32 unsigned bits raises ``EmitError`` (the convert is left to Triton).
        """
        if const < 0 or const >> 32:
            raise EmitError(f"constant {const:#x} does not fit an i32")
        masks: dict[int, int] = {}                 # distance b - i -> the result bits it sets
        for i, image in enumerate(images):
            image = int(image)
            if image < 0 or image >> 32:
                raise EmitError(f"image {image:#x} of bit {i} does not fit an i32")
            for b in range(image.bit_length()):
                if image >> b & 1:
                    masks[b - i] = masks.get(b - i, 0) | 1 << b
        acc = None
        for distance, bits in sorted(masks.items()):
            if distance > 0:
                moved = self.binary("shl", ids, self.const(distance))
            elif distance < 0:
                moved = self.binary("lshr", ids, self.const(-distance))
            else:
                moved = ids
            term = self.binary("and", moved, self.const(_signed_i32(bits)))
            acc = term if acc is None else self.binary("xor", acc, term)
        if acc is None:
            return self.const(_signed_i32(const))
        return self.binary("xor", acc, self.const(_signed_i32(const))) if const else acc


def _signed_i32(value: int) -> int:
    """An i32 constant as MLIR prints it (signed): 0xffff0000 is -65536."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


@dataclass
class IslandState:
    """What one island's vendor calls remember, so that each id is computed once per island.

    ``in_loop``: the convert runs inside a loop (NVIDIA reads the thread id differently there,
    see ``NvidiaInstructions._thread_id``); ``threads``: the warp group that runs it, when that
    is not the whole CTA (a warp-specialized kernel: its warp ids and barriers); ``keeps_words``: a local load's island.  The other
    fields are SSA names, None until the first call that needs them.
    """

    in_loop: bool = False
    # The warps that run the island (None: the whole CTA); see lowering.thread_group.
    threads: "ThreadGroup | None" = None
    # The island reads a buffer into a dot operand or another layout Triton's code consumes as
    # packed words (a local load); conversions keep their bytes apart (NvidiaInstructions.load).
    keeps_words: bool = False
    thread_id: str | None = None
    lane_id: str | None = None
    warp_id: str | None = None
    shared_base: str | None = None   # the scratch base as the vendor's addresses need it
    # NVIDIA: how shared-memory accesses are printed, "llvm" (loads and stores LLVM sees) or
    # "asm" (the inline PTX of before); emit_nvidia.shared_access_form
    shared_access: str = "llvm"


class Packer(Protocol):
    """Narrow elements (8 or 16 bits, low first) <-> one 32-bit word."""

    def pack(self, w: IslandWriter, values: list[str], bits: int) -> str: ...

    def unpack(self, w: IslandWriter, word: str, count: int, bits: int) -> list[str]: ...


class VendorInstructions(Packer, Protocol):
    """The instructions ``emit_llvm`` asks a GPU vendor for.  One object per island: it is made
    with that island's ``IslandState``.  ``w`` is the island's writer; values are SSA names."""

    target: Target

    def lane_id(self, w: IslandWriter) -> str: ...

    def warp_id(self, w: IslandWriter) -> str: ...

    def shuffle(self, w: IslandWriter, value: str, rnd: ShuffleRound, warp_size: int) -> str:
        """The word ``value`` of the lane that ``rnd.source_lane`` names (an i32)."""

    def shared_address(self, w: IslandWriter, base: str, byte_offset: str) -> str:
        """The address ``byte_offset`` (an i32) bytes past the scratch pointer ``base``, in the
        form ``store`` and ``load`` take (NVIDIA: a 32-bit shared address, AMD: a pointer)."""

    def advance(self, w: IslandWriter, address: str, byte_constant: int) -> str:
        """``address`` (one of ``shared_address``'s) plus ``byte_constant`` bytes, in the form the
        backend folds into the access's immediate offset: ptxas turns ``add %r, 512`` feeding
        ``ld.shared`` into ``[%r+512]``; the AMD backend a constant GEP into ``ds_read``'s
        ``offset:``.  So accesses that differ by a constant share one address register."""

    def store(self, w: IslandWriter, op: SharedAccess, address: str, values: list[str], bits: int) -> None: ...

    def load(self, w: IslandWriter, op: SharedAccess, address: str, count: int, bits: int) -> list[str]: ...

    def barrier(self, w: IslandWriter, scope: BarrierScope, guard: bool = False, alone: bool = False) -> None:
        """A barrier over ``scope``; ``guard``: one of the site's guard barriers (counted apart);
        ``alone``: the guard before an island alone (``IslandSite.guard_before_alone``), marked
        so where the vendor's guards are pruned."""

    def async_proxy_fence(self, w: IslandWriter) -> None:
        """Order this thread's shared-memory stores before later async-proxy reads (NVIDIA sm_90+)."""


# -- shared-memory accesses as LLVM loads and stores (AMD always; NVIDIA unless asked for inline PTX)

def shared_access_type(total: int) -> str:
    """The LLVM type of a shared-memory access of ``total`` bits per thread, as both back ends
    select it back to one instruction of that width: ``i8``, ``i16``, ``i32``, ``vector<2xi32>``
    (``st.shared.v2.b32`` / ``ds_write_b64``), ``vector<4xi32>`` (``.v4`` / ``_b128``)."""
    if total in (8, 16, 32):
        return f"i{total}"
    if total in (64, 128):
        return f"vector<{total // 32}xi32>"
    raise EmitError(f"a {total}-bit shared-memory access has no instruction")


def shared_pointer(w: IslandWriter, base: str, byte_offset: str) -> str:
    """``base + byte_offset`` bytes, a GEP of i8 on ``!llvm.ptr<3>`` (``byte_offset``: an i32 SSA
    name), Triton's own form: a constant offset folds into the access's immediate
    (``st.shared [%r+512]``, ``ds_read_b64 ... offset:512``)."""
    return w.op(f"llvm.getelementptr {base}[{byte_offset}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8")


def shared_store(w: IslandWriter, address: str, value: str, total: int) -> None:
    """``llvm.store`` of ``value`` (of ``shared_access_type(total)``) at ``address`` (a
    ``!llvm.ptr<3>``), claiming the access's natural alignment, ``total / 8`` bytes: the
    verifier proves every address of an n-element access a multiple of n elements from the
    buffer's start (``verify.access_positions``), and the simulator checks it on the text."""
    type_ = shared_access_type(total)
    w.line(f"llvm.store {value}, {address} {{alignment = {total // 8} : i64}} : {type_}, !llvm.ptr<3>")


def shared_load(w: IslandWriter, address: str, total: int) -> str:
    """``llvm.load`` of ``shared_access_type(total)`` from ``address``; alignment as ``shared_store``."""
    type_ = shared_access_type(total)
    return w.op(f"llvm.load {address} {{alignment = {total // 8} : i64}} : !llvm.ptr<3> -> {type_}")


def words_to_vector(w: IslandWriter, words: list[str]) -> str:
    """i32 words -> ``vector<Nxi32>`` (insertelement), the value of a 64- or 128-bit access."""
    type_ = f"vector<{len(words)}xi32>"
    vec = w.op(f"llvm.mlir.undef : {type_}")
    for i, word in enumerate(words):
        vec = w.op(f"llvm.insertelement {word}, {vec}[{w.const(i)} : i32] : {type_}")
    return vec


def vector_to_words(w: IslandWriter, value: str, n: int) -> list[str]:
    """The inverse of ``words_to_vector``: the ``n`` i32 words of a loaded ``vector<nxi32>``."""
    type_ = f"vector<{n}xi32>"
    return [w.op(f"llvm.extractelement {value}[{w.const(i)} : i32] : {type_}") for i in range(n)]


def element_words(w: IslandWriter, packer: Packer, bits: int, values: list[str]) -> list[str]:
    """Storage integers of ``bits`` bits -> 32-bit words: packed (8/16-bit, by ``packer``), as
    is (32), split in halves (64)."""
    if bits == 32:
        return list(values)
    if bits == 64:
        # A bitcast to <2 x i32> (free: the two halves are already two 32-bit registers), not
        # shifts and truncations, which left ptxas juggling 64-bit temporaries: a 128x128 i64
        # epilogue then spilled 4.5 KB per thread and ran 17x slower than stock on an H200.
        words = []
        for v in values:
            halves = w.op(f"llvm.bitcast {v} : i64 to vector<2xi32>")
            words += [w.op(f"llvm.extractelement {halves}[{w.const(h)} : i32] : vector<2xi32>") for h in (0, 1)]
        return words
    per_word = 32 // bits
    return [packer.pack(w, values[i:i + per_word], bits) for i in range(0, len(values), per_word)]


def word_elements(w: IslandWriter, packer: Packer, bits: int, words: list[str], count: int) -> list[str]:
    """The inverse of ``element_words``: ``count`` storage integers out of the words."""
    if bits == 32:
        return list(words[:count])
    if bits == 64:
        out = []
        for i in range(count):
            v = w.op("llvm.mlir.undef : vector<2xi32>")
            for h in (0, 1):
                v = w.op(f"llvm.insertelement {words[2 * i + h]}, {v}[{w.const(h)} : i32] : vector<2xi32>")
            out.append(w.op(f"llvm.bitcast {v} : vector<2xi32> to i64"))
        return out
    per_word = 32 // bits
    out = []
    for word in words:
        out.extend(packer.unpack(w, word, min(per_word, count - len(out)), bits))
        if len(out) >= count:
            break
    return out
