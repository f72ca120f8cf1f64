"""Emit a verified conversion plan as an LLVM-dialect *island* inside a TTGIR module.

An island replaces one ``ttg.convert_layout`` by plain LLVM-dialect ops, bridged to Triton's own
lowering by two casts (``docs/verified-facts.md``, "LLVM-dialect islands")::

    %s = builtin.unrealized_conversion_cast %v : tensor<64xf32, #A> to !llvm.struct<(f32, f32)>
    ... llvm.extractvalue / llvm.inline_asm "shfl.sync..." / llvm.select / llvm.insertvalue ...
    %c = builtin.unrealized_conversion_cast %o : !llvm.struct<(f32, f32)> to tensor<64xf32, #B>

Element i of the struct is register i of the layout, so the plan's register numbers are struct
indices.  Triton's conversion to LLVM cancels the two casts against its own.

This module is pure text generation (no Triton import): ``island_writer.IslandWriter`` hands
out SSA names and prints ops; ``emit_island`` walks a plan (``lowering.plan``) and asks a
*vendor* object (``island_writer.VendorInstructions``: ``emit_nvidia.NvidiaInstructions`` or
``emit_amd.AmdInstructions``, one per island, with that island's ``IslandState``) for the few
things that differ between GPUs: the lane and warp ids, cross-lane moves, shared-memory
accesses, barriers and byte packing.  ``thread_conditions`` builds the conditions on the thread
(lane and warp masks) and the select chains that give each thread its own value.

Values inside the island are kept as *storage integers*: i8 for i1 / 8-bit types, i16 for f16 /
bf16, i32 for f32, i64 for f64 / pointers.  Cross-lane moves and shared memory work on 32-bit
*words*; a word holds 32 / bits elements of 8 or 16 bits (low element first), one 32-bit element,
or one half of a 64-bit element.

The semantics of every plan field are those of the exhaustive verifier (``lowering.verify``):
that is what was checked, so that is what we print.  Example, a shuffle round: lane l sends word
``send_word(l)`` and receives the word that lane ``source_lane(l)`` sent; a ThreadAffine such as
``source_lane = 16 ^ l`` becomes ``shfl.sync.bfly.b32 ..., 16`` on NVIDIA and
``ds_bpermute((l ^ 16) * 4, word)`` on AMD.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import emit_amd, emit_nvidia, island_writer
from ..element_type import ElementType, UnknownElementType
from ..hardware import HardwareLayout
from ..instructions import BarrierScope, InstructionKey, ShuffleMode
from .island_writer import EmitError, IslandState, IslandWriter, VendorInstructions
from ..plan import Barrier, ConversionPlan, ThreadAffine
from ..target import Target, Vendor
from .thread_conditions import select_by_thread
from ..thread_group import ThreadGroup


# ------------------------------------------------------------------------------- element types

def island_element_type(ttgir: str) -> ElementType:
    """The element type of a convert we emit an island for; an :class:`EmitError` for types
    whose LLVM struct we do not model (the convert is then left to Triton)."""
    try:
        element = ElementType.of(ttgir)
    except UnknownElementType as error:
        raise EmitError(f"{error}: not supported by the island emitter") from None
    if element.llvm is None:
        raise EmitError(f"element type {element.ttgir} is not supported by the island emitter")
    return element


def struct_registers(layout: HardwareLayout, unique: bool) -> list[int]:
    """The layout's registers that Triton's LLVM struct holds, in struct order.

    Triton 3.6 keeps every register of the layout, broadcast copies included (field i =
    register i); 3.9 drops the copies: a layout whose register bases are (0, 8) - register 1
    repeats register 0 - is a struct of 2 fields holding registers 0 and 2.  (Found by
    compiling islands of both sizes against each release; see the lower-conversions tests.)
    """
    count = 1 << len(layout.register)
    if not unique:
        return list(range(count))
    return [layout.full_register(j) for j in range(1 << len(layout.nonzero_register_positions))]


def struct_type(element: ElementType, n: int) -> str:
    return "!llvm.struct<(" + ", ".join([element.llvm] * n) + ")>"


# ------------------------------------------------------------------------- the site of a convert


@dataclass
class IslandSite:
    """What the emitter needs to know about the op an island replaces in the module text: a
    ``ttg.convert_layout``, or a ``ttg.local_load``, ``ttg.local_store`` or ``ttg.local_alloc``
    with a source (``buffer``/``buffer_type`` then name the memdesc).

    ``result``/``source``: SSA names (``%5``, ``%arg0``); ``src_type``/``dst_type``: the tensor
    types as printed; ``guard_before``/``guard_after``: emit a CTA barrier before the first store
    / after the last load of the scratch buffer, because other shared-memory users of the kernel
    (Triton's own, or another island) may touch the same bytes and Triton's barrier analysis
    does not see our accesses (see ``passes.barriers.guard_placement``).
    """

    result: str
    source: str
    src_type: str
    dst_type: str
    element_type: str
    guard_before: bool = True
    guard_after: bool = True
    # The guard before orders the island after nothing but itself, in its loop's previous
    # iteration (``GuardPlacement.before_alone``); marked so that the guard pruning can judge it
    # by that (NVIDIA; elsewhere the same guard).
    guard_before_alone: bool = False
    prefix: str = "ll"
    unique_struct: bool = False     # Triton >= 3.9: the struct has no broadcast register copies
    in_loop: bool = False           # the convert runs in a loop (see NvidiaInstructions._thread_id)
    buffer: str = ""                # a ttg.local_store's memdesc operand (SSA name) ...
    buffer_type: str = ""           # ... and its type as printed
    # After the stores, before the guard barrier: ``fence.proxy.async.shared::cta``, so that
    # the async proxy (wgmma, TMA) sees them (a local_alloc whose readers Triton fenced).
    async_fence: bool = False
    # The warps that run the island, when not the whole CTA: a warp group of a warp-specialized
    # kernel (its warp ids and named barriers; ``lowering.thread_group``).
    threads: Optional[ThreadGroup] = None
    # NVIDIA: "llvm" (llvm.load / llvm.store) or "asm" (inline PTX) shared-memory accesses; ""
    # takes emit_nvidia.SHARED_ACCESS_FORM, "llvm" unless a study sets it (emit_nvidia.shared_access_form).
    shared_access: str = ""


@dataclass
class Island:
    text: str                       # the lines replacing the convert (indented, no trailing newline)
    counts: Counter = field(default_factory=Counter)   # what the island contains, by instruction
    scratch_bytes: int = 0


# ---------------------------------------------------------------- selections by an affine choice


def select_by_affine(w: IslandWriter, vendor: VendorInstructions, affine: ThreadAffine, warp_size: int, num_warps: int,
                     value_of, type_: str = "i32") -> str:
    """``value_of(affine(thread))`` in every thread, for an F2-affine choice (a shuffle's send word).

    Lane-only choices take the select chain of ``select_by_thread`` (lane masks, bit tests
    where they can be: ``thread_conditions._id_set_condition``).  A choice that depends on the
    warp too is computed as an integer ``i = const ^ L(lane) ^ M(warp)`` and resolved by a
    binary mux tree on the bits of ``i``: k candidates still cost k - 1 selects, each under a
    one-bit test of ``i`` shared by its level.  Example: 8 candidate words chosen by lane bits
    2..4 and warp bits 0..2 of an 8-warp CTA (a bias row broadcast over warps): 7 selects, 3 bit
    tests.
    """
    table = _threads_of(affine, warp_size, num_warps)
    if (table == table[:1]).all():
        return select_by_thread(w, vendor, table, value_of, type_)
    index = w.xor_of_bits(affine.lane, vendor.lane_id(w), affine.const)
    index = w.binary("xor", index, w.xor_of_bits(affine.warp, vendor.warp_id(w)))
    tests: dict[int, str] = {}

    def bit_test(b: int) -> str:
        if b not in tests:
            bit = w.binary("and", w.binary("lshr", index, w.const(b)) if b else index, w.const(1))
            tests[b] = w.icmp("ne", bit, w.const(0))
        return tests[b]

    def tree(candidates: list[int]) -> str:
        if len(candidates) == 1:
            return value_of(candidates[0])
        differing = 0
        for c in candidates:
            differing |= c ^ candidates[0]
        b = differing.bit_length() - 1
        ones = [c for c in candidates if c >> b & 1]
        zeros = [c for c in candidates if not c >> b & 1]
        return w.select(bit_test(b), tree(ones), tree(zeros), type_)

    return tree(sorted(set(int(x) for x in table.ravel())))


def _threads_of(affine: ThreadAffine, warp_size: int, num_warps: int) -> np.ndarray:
    """``affine`` evaluated on every (warp, lane) of the CTA: shape (warps, lanes).  Warp terms
    count: a shuffle's send word may depend on the warp (warp 0's choice is not every warp's)."""
    lanes = np.arange(warp_size, dtype=np.int64)[None, :]
    warps = np.arange(num_warps, dtype=np.int64)[:, None]
    values = np.asarray(affine.evaluate(lanes, warps), dtype=np.int64)
    return np.broadcast_to(values, (num_warps, warp_size)).astype(np.int64)


# ------------------------------------------------------------------------------ the walk


def _to_storage(w: IslandWriter, element: ElementType, value: str) -> str:
    if element.llvm == "i1":
        return w.cast("zext", value, "i1", "i8")
    if element.llvm.startswith("!llvm.ptr"):
        return w.cast("ptrtoint", value, element.llvm, "i64")
    if element.llvm.startswith(("f", "bf")):
        return w.cast("bitcast", value, element.llvm, element.int_type)
    return value


def _from_storage(w: IslandWriter, element: ElementType, value: str) -> str:
    if element.llvm == "i1":
        return w.cast("trunc", value, "i8", "i1")
    if element.llvm.startswith("!llvm.ptr"):
        return w.cast("inttoptr", value, "i64", element.llvm)
    if element.llvm.startswith(("f", "bf")):
        return w.cast("bitcast", value, element.int_type, element.llvm)
    return value


def _emit_shuffle(w: IslandWriter, vendor: VendorInstructions, plan: ConversionPlan, element: ElementType,
                  src: list[str], staging_size: int) -> list[str]:
    """Pack, rounds of cross-lane moves, selects, unpack (``WarpShufflePlan``)."""
    s = plan.shuffle
    warp_size = plan.target.warp_size
    num_warps = 1 << len(HardwareLayout.of(plan.src).warp)
    halves = s.words_per_element
    # word[w][h]: half h of source word w (h = 0 only, unless 64-bit elements)
    words = []
    # A 64-bit element is selected whole (an i64 select), split into halves only to be shuffled
    # and joined again right after: the form of Triton's own lowering, whose i64 selects LLVM
    # then folds with ours (a round trip through stock's return conversion: swap selects on the
    # same lane bit cancel).  Selecting the halves apart hid that: 256 SEL more than stock per
    # loop iteration over the two 64-bit round trips fresh303/2 and /84 of sass_twins.py.
    whole: list[str] = []
    halves_of: dict[str, list[str]] = {}
    for regs in s.src_words:
        ints = [_to_storage(w, element, src[r]) for r in regs]
        if element.bits == 64:
            words.append(island_writer.element_words(w, vendor, element.bits, ints))
            whole.append(ints[0])
            halves_of[ints[0]] = words[-1]
        else:
            words.append([vendor.pack(w, ints, element.bits) if element.bits < 32 else ints[0]])
    sends = [_threads_of(r.send_word, warp_size, num_warps) for r in s.rounds]
    received: list[list[str] | None] = []
    for rnd, send in zip(s.rounds, sends):
        if rnd.mode is ShuffleMode.LOCAL:
            received.append(None)
            continue
        if element.bits == 64:
            value = select_by_affine(w, vendor, rnd.send_word, warp_size, num_warps, lambda word: whole[word], "i64")
            if value not in halves_of:
                halves_of[value] = island_writer.element_words(w, vendor, element.bits, [value])
            per_half = [vendor.shuffle(w, half, rnd, warp_size) for half in halves_of[value]]
        else:
            value = select_by_affine(w, vendor, rnd.send_word, warp_size, num_warps, lambda word: words[word][0])
            per_half = [vendor.shuffle(w, value, rnd, warp_size)]
        received.append(per_half)
    joined: dict[int, str] = {}

    def received_whole(r: int) -> str:
        """Round r's received 64-bit element (its halves joined once, where first needed)."""
        if r not in joined:
            joined[r] = island_writer.word_elements(w, vendor, element.bits, received[r], 1)[0]
        return joined[r]

    pick = _threads_of(s.receive_round, warp_size, num_warps)
    staging: list[str | None] = [None] * staging_size
    for d, regs in enumerate(s.dst_words):
        rho = d ^ pick
        # what thread (k, l) keeps: a shuffled round's result, or (local round) its own source word
        keys = np.empty_like(rho)
        for (k, l), r in np.ndenumerate(rho):
            keys[k, l] = int(r) if received[int(r)] is not None else -1 - int(sends[int(r)][k, l])
        if element.bits == 64:
            ints = [select_by_thread(w, vendor, keys, lambda key: received_whole(key) if key >= 0 else whole[-1 - key],
                                     "i64")]
        elif element.bits == 32:
            ints = [select_by_thread(w, vendor, keys, lambda key: received[key][0] if key >= 0 else words[-1 - key][0])]
        else:
            word = select_by_thread(w, vendor, keys, lambda key: received[key][0] if key >= 0 else words[-1 - key][0])
            ints = vendor.unpack(w, word, len(regs), element.bits)
        for r, v in zip(regs, ints):
            staging[r] = _from_storage(w, element, v)
    return staging


class _SharedAddresses:
    """The addresses of one island's shared-memory accesses (``address``), sharing what they can.

    ``view_part``: an i32 XORed into every address, like a thread id's part (a subslice view's
    start offset in elements, read from the descriptor at run time); ``view_mask``: the offset
    bits it can set, which a constant must XOR, not add."""

    def __init__(self, w: IslandWriter, vendor: VendorInstructions, scratch: str, element: ElementType,
                 view_part: str | None = None, view_mask: int = 0):
        self.ebytes = element.bits // 8
        if self.ebytes < 1 or self.ebytes & (self.ebytes - 1):
            raise EmitError(f"{element.bits}-bit elements: shared-memory offsets need a power-of-two byte size")
        self.w, self.vendor, self.scratch = w, vendor, scratch
        self.view_part, self.view_mask = view_part, view_mask
        self.lane, self.warp = vendor.lane_id(w), vendor.warp_id(w)
        self.thread_offsets: dict[tuple, str] = {}    # (lane map, warp map, scale) -> i32
        self.view_offsets: dict[int, str] = {}        # scale -> the view start's offset times scale
        self.thread_addresses: dict[tuple, str] = {}  # (lane map, warp map, mixed constant bits) -> address

    def thread_offset(self, affine: ThreadAffine, scale: int) -> str:
        """``(L(lane) ^ M(warp) ^ view start) * scale`` (``affine``'s constant left out), once per
        island for each distinct (lane map, warp map, scale).  ``scale`` is a power of two (1:
        elements, the element size: bytes), so scaling every term scales their XOR."""
        w = self.w
        key = (affine.lane, affine.warp, scale)
        if key not in self.thread_offsets:
            offset = w.xor_of_bits(tuple(int(image) * scale for image in affine.lane), self.lane)
            if any(affine.warp):
                warp_part = w.xor_of_bits(tuple(int(image) * scale for image in affine.warp), self.warp)
                offset = w.binary("xor", offset, warp_part)
            if self.view_part is not None:
                if scale not in self.view_offsets:
                    self.view_offsets[scale] = (self.view_part if scale == 1 else
                                                w.binary("shl", self.view_part, w.const(scale.bit_length() - 1)))
                offset = w.binary("xor", offset, self.view_offsets[scale])
            self.thread_offsets[key] = offset
        return self.thread_offsets[key]

    def padded(self, affine: ThreadAffine) -> str:
        """Legacy row padding (``ThreadAffine.padded``), not F2-linear, so computed in elements
        per access: ``x = t ^ const``, then ``x + (x >> row_log2) * pad``, then bytes."""
        w = self.w
        offset = self.thread_offset(affine, 1)
        if affine.const:
            offset = w.binary("xor", offset, w.const(affine.const))
        row = w.binary("lshr", offset, w.const(affine.pad_row_log2))
        offset = w.binary("add", offset, w.binary("mul", row, w.const(affine.pad_elements)))
        byte_offset = w.binary("mul", offset, w.const(self.ebytes)) if self.ebytes > 1 else offset
        return self.vendor.shared_address(w, self.scratch, byte_offset)

    def address(self, affine: ThreadAffine) -> str:
        """The address of the access at ``affine`` (in elements), as ``A + apart`` bytes.

        The thread part ``t`` can only set the bits of its images (and of the view start).  The
        constant's other bits (``apart``) XOR like they add, and an add of a constant is what
        ptxas folds into the access's immediate offset (``[%r+512]``) and the AMD backend into
        ``ds_read``'s ``offset:``, as Triton's own lowering does (``actionAdditiveStrides``).
        Only the bits it shares with ``t`` (``mixed``) need an XOR.  So the island computes one
        address ``A = scratch + (t ^ mixed) * e`` per distinct (lane map, warp map, mixed) and
        each access is ``vendor.advance(A, apart * e)``.  Everything is scaled to bytes before
        the XOR: ``e`` (the element size) is a power of two, so ``(t ^ c) * e = (t * e) ^ (c * e)``
        and the scaling folds into ``xor_of_bits``'s shifts, no multiply.  Example: f32 (e = 4)
        on a swizzled buffer, thread bits 0x0f8, constants 0x000, 0x800, 0x010 and 0x810: two
        addresses, ``A0 = scratch + t * 4`` and ``A1 = scratch + (t * 4 ^ 0x40)``, and the
        accesses at ``A0``, ``A0 + 0x2000``, ``A1`` and ``A1 + 0x2000``.
        """
        if any(affine.block):
            raise EmitError("the plan's addresses depend on the CTA id (multi-CTA); not emitted")
        if affine.pad_elements:
            return self.padded(affine)
        thread_bits = self.view_mask
        for image in affine.lane + affine.warp:
            thread_bits |= image
        mixed, apart = affine.const & thread_bits, affine.const & ~thread_bits
        key = (affine.lane, affine.warp, mixed)
        if key not in self.thread_addresses:
            offset = self.thread_offset(affine, self.ebytes)
            if mixed:
                offset = self.w.binary("xor", offset, self.w.const(mixed * self.ebytes))
            self.thread_addresses[key] = self.vendor.shared_address(self.w, self.scratch, offset)
        if not apart:
            return self.thread_addresses[key]
        return self.vendor.advance(self.w, self.thread_addresses[key], apart * self.ebytes)


def _emit_shared(w: IslandWriter, vendor: VendorInstructions, plan: ConversionPlan, element: ElementType,
                 src: list[str], staging_size: int, site: IslandSite, scratch: str,
                 view_part: str | None = None, view_mask: int = 0) -> list[str]:
    """Stores, barriers and loads through the scratch buffer (``SharedMemoryPlan``), at the
    addresses of ``_SharedAddresses`` (``view_part``, ``view_mask``: see there)."""
    sh = plan.shared
    addresses = _SharedAddresses(w, vendor, scratch, element, view_part, view_mask)
    staging: list[str | None] = [None] * staging_size
    if site.guard_before:
        vendor.barrier(w, BarrierScope.CTA, guard=True, alone=site.guard_before_alone)
    for op in sh.ops:
        if isinstance(op, Barrier):
            vendor.barrier(w, op.scope)
            continue
        addr = addresses.address(op.address)
        n = len(op.registers)
        if op.is_store:
            ints = [_to_storage(w, element, src[r]) for r in op.registers]
            vendor.store(w, op, addr, ints, element.bits)
        else:
            ints = vendor.load(w, op, addr, n, element.bits)
            for r, v in zip(op.registers, ints):
                staging[r] = _from_storage(w, element, v)
    if site.async_fence:
        vendor.async_proxy_fence(w)
    if site.guard_after:
        vendor.barrier(w, BarrierScope.CTA, guard=True)
    return staging


def scratch_type(scratch_bytes: int) -> str:
    """A rank-1 i8 shared buffer; 16-byte multiples (128-bit accesses stay in bounds).

    Triton's memdesc shapes must be powers of two: a row-padded (legacy) buffer, e.g. 4608
    bytes, is rounded up to the next one (8192); swizzled buffers already are powers of two."""
    size = max(16, -(-scratch_bytes // 16) * 16)
    size = 1 << (size - 1).bit_length()
    layout = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
    return f"!ttg.memdesc<{size}xi8, {layout}, #ttg.shared_memory, mutable>"


def emit_island(plan: ConversionPlan, site: IslandSite) -> Island:
    """The LLVM-dialect text replacing the convert at ``site``, per the verified ``plan``."""
    vendor = vendor_for(plan.target, _island_state(site))
    element = island_element_type(site.element_type)
    w = IslandWriter(site.prefix)
    src_hw, dst_hw = HardwareLayout.of(plan.src), HardwareLayout.of(plan.dst, plan.src.out_dim_names)
    src_map, dst_map = struct_registers(src_hw, site.unique_struct), struct_registers(dst_hw, site.unique_struct)
    src_struct, dst_struct = struct_type(element, len(src_map)), struct_type(element, len(dst_map))
    sources = list(plan.output.sources)
    identity = (plan.output.file == "src" and len(src_map) == len(dst_map)
                and [sources[r] for r in dst_map] == src_map)
    struct_in = w.op(f"builtin.unrealized_conversion_cast {site.source} : {site.src_type} to {src_struct}")
    if identity:  # a no-op: the two casts and nothing in between
        w.line(f"{site.result} = builtin.unrealized_conversion_cast {struct_in} : {src_struct} to {site.dst_type}")
        return Island("\n".join(w.lines), w.counts)
    src = _source_registers(w, src_hw, src_map, struct_in, src_struct)
    scratch_bytes = 0
    after: list[str] = []
    if plan.output.file == "src":
        file = src
    elif plan.shuffle is not None:
        staging_size = max(sources) + 1
        file = _emit_shuffle(w, vendor, plan, element, src, staging_size)
    elif plan.shared is not None:
        scratch_bytes = plan.shared.scratch_bytes
        mtype = scratch_type(scratch_bytes)
        buffer = w.op(f"ttg.local_alloc : () -> {mtype}")
        memdesc = w.op(f"builtin.unrealized_conversion_cast {buffer} : {mtype} to !llvm.struct<(ptr<3>, i32)>")
        base = w.extract(memdesc, 0, "!llvm.struct<(ptr<3>, i32)>")
        staging_size = max(sources) + 1
        file = _emit_shared(w, vendor, plan, element, src, staging_size, site, base)
        after.append(f"ttg.local_dealloc {buffer} : {mtype}")
    else:
        raise EmitError(f"plan method '{plan.method}' has no steps to emit")
    _cast_result(w, file, [sources[r] for r in dst_map], dst_struct, site)
    for line in after:
        w.line(line)
    return Island("\n".join(w.lines), w.counts, scratch_bytes)


def _source_registers(w: IslandWriter, src_hw: HardwareLayout, src_map: list[int], struct_in: str,
                      src_struct: str) -> list[str]:
    """src[r] for every full source register r (broadcast copies read the one struct field)."""
    fields = {}
    src = []
    for r in range(1 << len(src_hw.register)):
        index = src_map.index(r) if r in src_map else src_map.index(src_hw.full_register(src_hw.canonical_register(r)))
        if index not in fields:
            fields[index] = w.extract(struct_in, index, src_struct)
        src.append(fields[index])
    return src


def _cast_result(w: IslandWriter, file: list, fields: list[int], dst_struct: str, site: IslandSite) -> None:
    """Build the result struct (field k = ``file[fields[k]]``) and cast it to the result tensor."""
    out_values = []
    for i in fields:
        if file[i] is None:
            raise EmitError(f"output register reads staging register {i}, which no step wrote")
        out_values.append(file[i])
    struct_out = w.build_struct(out_values, dst_struct)
    w.line(f"{site.result} = builtin.unrealized_conversion_cast {struct_out} : {dst_struct} to {site.dst_type}")


def memdesc_struct_type(rank: int) -> str:
    """The struct Triton's type converter gives a rank-``rank`` memdesc: the base pointer, then
    one i32 offset per dimension: the start of a subslice view in its allocation, in elements
    (``ttg.memdesc_subslice`` adds its offsets to them and keeps the base pointer; Triton reads
    them only when the type is a view: for a whole buffer they are zero)."""
    return "!llvm.struct<(" + ", ".join(["ptr<3>"] + ["i32"] * rank) + ")>"


def emit_local_load_island(plan, site: IslandSite, rank: int) -> Island:
    """The LLVM-dialect text replacing a ``ttg.local_load`` at ``site`` (its source is the
    memdesc, ``site.src_type`` its type, of rank ``rank``), per the verified
    ``local_memory.LocalLoadPlan``: the loads of ``plan.shared`` from the memdesc's base
    pointer, with the guard barriers the site asks for (Triton's barrier analysis does not see
    the island's reads: ``passes.lower_conversions``).

    A subslice view (``plan.view``) also reads the descriptor's offsets o (one i32 per dim) and
    XORs ``L^-1(o)`` into every address, as Triton's own lowering does (its
    ``getShmemOffset``): one ``select``-free term per start bit that can be set, e.g. for the
    32x8 view of a 32x16 buffer ``((o1 >> 3) & 1) * 8``; a constant start folds away in LLVM."""
    vendor = vendor_for(plan.target, _island_state(site, keeps_words=True))
    element = island_element_type(site.element_type)
    w = IslandWriter(site.prefix)
    dst_hw = HardwareLayout.of(plan.dst, plan.buffer.out_dim_names)
    dst_map = struct_registers(dst_hw, site.unique_struct)
    dst_struct = struct_type(element, len(dst_map))
    descriptor_type = memdesc_struct_type(rank)
    descriptor = w.op(f"builtin.unrealized_conversion_cast {site.source} : {site.src_type} to {descriptor_type}")
    base = w.extract(descriptor, 0, descriptor_type)
    view_part, view_mask = _view_start_offset(w, plan, descriptor, descriptor_type, rank)
    sources = list(plan.output.sources)
    staging = _emit_shared(w, vendor, plan, element, [], max(sources) + 1, site, base, view_part, view_mask)
    _cast_result(w, staging, [sources[r] for r in dst_map], dst_struct, site)
    return Island("\n".join(w.lines), w.counts)


def _view_start_offset(w: IslandWriter, plan, descriptor: str, descriptor_type: str,
                       rank: int) -> tuple[str | None, int]:
    """(``L^-1(o)`` of the view start o in the descriptor, field 1 + d being dim d's offset; the
    offset bits it can set) for a local load or store of a subslice view, (None, 0) for a whole
    buffer, whose island reads the base pointer only."""
    if plan.view is None:
        return None, 0
    names = plan.buffer.out_dim_names
    if len(names) != rank or sorted(names) != [f"dim{d}" for d in range(rank)]:
        raise EmitError(f"a view of rank {rank} into a buffer with dims {names}: not emitted")
    part = None
    for name, images in zip(names, plan.view.start_images):
        if not any(images):
            continue
        start = w.extract(descriptor, 1 + int(name[3:]), descriptor_type)
        term = w.xor_of_bits(images, start)
        part = term if part is None else w.binary("xor", part, term)
    return (w.const(0) if part is None else part), plan.view.start_mask


def emit_local_store_island(plan, site: IslandSite, rank: int) -> Island:
    """The LLVM-dialect text replacing a ``ttg.local_store`` of ``site.source`` (a tensor of type
    ``site.src_type``) into ``site.buffer`` (a memdesc of type ``site.buffer_type`` and rank
    ``rank``), per the verified ``local_memory.LocalStorePlan``.  No result: the island ends
    with the stores (and the guard barrier the site asks for).  A subslice view
    (``plan.view``) reads the descriptor's offsets o and XORs ``L^-1(o)`` into every store
    address, as ``emit_local_load_island`` does for loads (and as Triton's stores into views
    do); a whole buffer's island reads the base pointer only."""
    vendor = vendor_for(plan.target, _island_state(site))
    element = island_element_type(site.element_type)
    w = IslandWriter(site.prefix)
    src_hw = HardwareLayout.of(plan.src, plan.buffer.out_dim_names)
    src_map = struct_registers(src_hw, site.unique_struct)
    src_struct = struct_type(element, len(src_map))
    struct_in = w.op(f"builtin.unrealized_conversion_cast {site.source} : {site.src_type} to {src_struct}")
    src = _source_registers(w, src_hw, src_map, struct_in, src_struct)
    descriptor_type = memdesc_struct_type(rank)
    descriptor = w.op(f"builtin.unrealized_conversion_cast {site.buffer} : {site.buffer_type} to {descriptor_type}")
    base = w.extract(descriptor, 0, descriptor_type)
    view_part, view_mask = _view_start_offset(w, plan, descriptor, descriptor_type, rank)
    _emit_shared(w, vendor, plan, element, src, 0, site, base, view_part, view_mask)
    return Island("\n".join(w.lines), w.counts)


def _island_state(site: IslandSite, keeps_words: bool = False) -> IslandState:
    return IslandState(in_loop=site.in_loop, threads=site.threads, keeps_words=keeps_words,
                       shared_access=emit_nvidia.shared_access_form(site.shared_access))


def vendor_for(target: Target, state: IslandState) -> VendorInstructions:
    """The instructions of ``target``'s vendor, for one island (``state`` is that island's)."""
    if target.vendor is Vendor.NVIDIA:
        return emit_nvidia.NvidiaInstructions(target, state)
    if target.vendor is Vendor.AMD:
        return emit_amd.AmdInstructions(target, state)
    raise EmitError(f"no emitter for vendor '{target.vendor}'")


def mnemonic(target: Target, key: InstructionKey) -> str:
    """How ``target``'s vendor names one of the cost model's instructions (for users:
    ``st.shared.b64`` on NVIDIA, ``ds_write.b64`` on AMD)."""
    if target.vendor is Vendor.NVIDIA:
        return emit_nvidia.mnemonic(key)
    if target.vendor is Vendor.AMD:
        return emit_amd.mnemonic(key)
    raise EmitError(f"no emitter for vendor '{target.vendor}'")
