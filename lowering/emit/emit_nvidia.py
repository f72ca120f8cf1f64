"""NVIDIA (sm_80, sm_90) instructions for islands: shared memory as LLVM loads and stores, NVVM
ops for ldmatrix / stmatrix, shuffles and barriers, inline PTX for the thread id (and the barriers'
markers).

What is emitted, per kind (the same text on triton 3.6 and 3.9; PTX from the LLVM of either):

* shared-memory stores and loads of 8, 16, 32, 64 and 128 bits a thread: ``llvm.store`` /
  ``llvm.load`` of ``i8``, ``i16``, ``i32``, ``vector<2xi32>``, ``vector<4xi32>`` on a
  ``!llvm.ptr<3>`` (a ``getelementptr`` of i8 from the buffer's base), claiming the access's
  natural alignment (``island_writer.shared_store``): the NVPTX back end selects exactly
  ``st.shared.b8/.b16/.b32``, ``st.shared.v2.b32`` / ``.v4.b32`` and the same ``ld.shared``
  (the type suffix is LLVM's to pick, ``.b`` or ``.u``: ``tools.report.final_code`` counts by width),
  with constant offsets folded (``[%r+512]``).  That is Triton's own form (its ``local_load`` / conversions: ``store <4 x
  i32>, ptr addrspace(3)``, align 16), which LLVM can schedule, see through and fold with the
  code around the island; inline PTX it could not.  The alignment is what the plan proves: the
  verifier rejects an n-element access whose address is not a multiple of n elements from the
  buffer's start (``verify.access_positions``), the simulator checks every address it runs, and
  the base is a Triton allocation (16-byte aligned; the inline-PTX ``.v4`` needed that too).
* ``ldmatrix`` / ``stmatrix`` (m8n8 .b16, .x1/.x2/.x4, .trans): ``nvvm.ldmatrix`` /
  ``nvvm.stmatrix`` with ``shape`` and ``eltType`` (``_matrix_attributes``: the spelling both
  releases' MLIR require), the ``llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3`` intrinsic of
  Triton's own ``local_load`` on 3.6 and 3.9.
* shuffles: ``nvvm.shfl.sync`` (``shfl.sync.bfly.b32`` / ``.idx.b32``), which LLVM knows is
  *convergent*; an inline-asm shuffle is not, and LLVM then unswitched loops on lane-dependent
  conditions around it (see ``shuffle``).
* barriers: calls of the NVVM barrier intrinsics, which LLVM knows are *convergent* like the
  shuffles: ``llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%0)`` (``bar.sync
  0``), ``... "llvm.nvvm.barrier.cta.sync.aligned.count"(%id, %n)`` (``bar.sync id, n``, a warp
  group's) and the op ``nvvm.bar.warp.sync``.  The intrinsic call is the one spelling every
  release from 3.6 to 3.9 parses, prints and parses again: 3.9 has no ``nvvm.barrier0``, and the
  ``nvvm.barrier`` of 3.7 reads a trailing ``loc(...)`` as its reduction attribute (any module
  printed with locations fails to parse again).  Each release translates the call to the same
  LLVM call its own ``nvvm.barrier`` becomes.
  They were inline PTX, which LLVM may duplicate under a branch: on a held-out conversion whose
  return trip selects by lane (fresh9703/45) it unswitched the loop on the lane's conditions,
  each copy with its own ``bar.sync``, and the kernel hung on an H100.  A barrier call reads and
  writes any memory to LLVM: no load or store of the island (or of Triton's) moves across it.
  A *guard* barrier (one added around an island for Triton's sake) is the same op after an empty
  inline-asm marker, ``// guard`` (``GUARD_MARKER``), by which ``passes.barriers.guard_barriers``
  finds it in the LLVM IR; a plan's own CTA barrier has one too (``// island barrier``), so that
  the pruning never takes it for one of Triton's.  ``test/unit/passes/test_shared_access_forms.py``
  checks in the PTX of both releases that every access stays on its side of every barrier.
* ``fence.proxy.async.shared::cta`` and the thread id outside loops: inline PTX (see
  ``_thread_id``).

Not emitted: loads from another CTA's shared memory (``ld.shared::cluster``): ``load`` raises
``EmitError`` and the convert stays Triton's.

``shared_access_form`` keeps the former inline-PTX form for loads, stores, ldmatrix and stmatrix
(``SHARED_ACCESS_FORM = "asm"``, or ``IslandSite.shared_access="asm"``): ``st.shared
[$0], ...`` through ``llvm.inline_asm has_side_effects``, on 32-bit addresses (a ``ptrtoint``
of the base, then i32 adds); narrow accesses use a 32-bit register there (``st.shared.b16 [a],
%r`` stores the low 16 bits).  It is the baseline of the GPU A/B (``benchmarks/README.md``).
Both forms pack elements into 32-bit words the same way (``_ShiftPacker``) and count the same
instructions (``IslandWriter.counts``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import island_writer
from ..instructions import (AccessForm, AccessKind, AccessShape, AluOp, BarrierScope, FinalInstruction, FinalRole,
                            InstructionKey, MemorySpace, ShuffleMode)
from .island_writer import EmitError, IslandState, IslandWriter
from ..plan import ShuffleRound, SharedAccess
from ..target import Target
from ..thread_group import ThreadGroup

FULL_MASK_SIGNED = "-1"     # how Triton spells the full mask of its one-warp barrier

# The instructions of final PTX that tools count (stock Triton's code and ours side by side), one
# instruction per line: the one table (``instructions.FinalInstruction``).
FINAL_CODE_INSTRUCTIONS = (
    FinalInstruction("shfl", r"^\s*shfl\.sync(?:\.(\w+))?", FinalRole.MOVES_DATA, detail=1),
    FinalInstruction("st.shared", r"^\s*st\.shared(?:(?:::cta)?((?:\.v\d)?)\.(\w+))?", FinalRole.MOVES_DATA, detail=2),
    FinalInstruction("ld.shared", r"^\s*ld\.shared(?:(?:::cta)?((?:\.v\d)?)\.(\w+))?", FinalRole.MOVES_DATA, detail=2),
    FinalInstruction("stmatrix", r"^\s*stmatrix(?:\.sync\.aligned\.m8n8\.(x\d)(\.trans)?)?", FinalRole.MOVES_DATA,
                     detail=1),
    FinalInstruction("ldmatrix", r"^\s*ldmatrix(?:\.sync\.aligned\.m8n8\.(x\d)(\.trans)?)?", FinalRole.MOVES_DATA,
                     detail=1),
    FinalInstruction("bar.sync", r"^\s*(bar\.sync|barrier\.sync)\b", FinalRole.BARRIER),
    FinalInstruction("bar.warp.sync", r"^\s*bar\.warp\.sync\b", FinalRole.BARRIER),
    FinalInstruction("selp", r"^\s*selp\.", FinalRole.ARITHMETIC),
    FinalInstruction("prmt", r"^\s*prmt\.", FinalRole.ARITHMETIC),
)
# The data-movement columns of a conversion's report: column name -> pattern over lines.
FINAL_CODE_PATTERNS = {row.name: row.pattern for row in FINAL_CODE_INSTRUCTIONS if row.role is FinalRole.MOVES_DATA}

# The barriers' intrinsics (see the module's docstring): ``bar.sync 0`` and ``bar.sync id, n``.
CTA_BARRIER_INTRINSIC = "llvm.nvvm.barrier.cta.sync.aligned.all"
GROUP_BARRIER_INTRINSIC = "llvm.nvvm.barrier.cta.sync.aligned.count"

# A guard barrier (one the pass adds around an island for Triton's sake, not one of the plan's):
# the barrier op right after an inline-asm comment, the marker, so that
# ``passes.barriers.guard_barriers`` can find it in the LLVM IR and drop it where Triton's own
# barriers already order every access it would:
#
#     call void asm sideeffect "// guard", ""()
#     call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
#
# The marker emits nothing but a comment in the PTX.
GUARD_MARK = "// guard"           # in every guard's marker (the plugin counts guards by it)
GUARD_MARKER = GUARD_MARK         # a regular guard's marker
# The guard before an island that is alone (``IslandSite.guard_before_alone``): marked apart,
# because ``passes.barriers.guard_barriers`` judges it by a rule of its own.
ALONE_GUARD_MARKER = GUARD_MARK + " alone"
# A warp group's guard (``bar.sync 2, 128``: lowering.thread_group) has a marker of its own, and
# is never dropped: the pruning reasons about whole-CTA barriers only.
GROUP_GUARD_MARKER = GUARD_MARK + " of a warp group"
# A plan's own whole-CTA barrier (inside an island) has a marker too: to the pruning it is not
# one of Triton's barriers (a guard before an island alone is judged by those only).
ISLAND_BARRIER_MARKER = "// island barrier"
# The pruning's own spelling of each marked barrier, one line for the marker and its barrier
# (``guard_barriers.prune_guard_barriers`` joins the two into it and splits them again after).
GUARD_BARRIER_ASM = "bar.sync 0; " + GUARD_MARK
ALONE_GUARD_BARRIER_ASM = GUARD_BARRIER_ASM + " alone"
ISLAND_BARRIER_ASM = "bar.sync 0;"


SHARED_ACCESS_FORMS = ("llvm", "asm")
# A study's switch, no setting of the plugin: the form an island's shared accesses take where its
# site asks for none.  The GPU A/B of the two forms sets it in its own process
# (``benchmarks/harness/plan_contexts.py``); the cache key marks it
# (``passes.drop_in.plugin_config.environment_switches``).
SHARED_ACCESS_FORM = "llvm"


def shared_access_form(requested: str = "") -> str:
    """How an NVIDIA island prints its shared-memory accesses: ``"llvm"`` (the default),
    ``llvm.load`` / ``llvm.store`` on ``!llvm.ptr<3>`` and ``nvvm.ldmatrix`` / ``nvvm.stmatrix``;
    ``"asm"``, the inline PTX ``st.shared`` / ``ld.shared`` / ``ldmatrix`` / ``stmatrix`` of
    before (barriers are NVVM intrinsic calls in both).  ``requested`` (``IslandSite.shared_access``) wins; "" takes
    ``SHARED_ACCESS_FORM`` (``llvm`` unless a study sets ``asm``: the switch the GPU A/B flips,
    ``benchmarks/README.md``).  Anything else is an error, not a silent default."""
    form = requested or SHARED_ACCESS_FORM or "llvm"
    if form not in SHARED_ACCESS_FORMS:
        raise ValueError(f"shared access form {form!r}: expected one of {', '.join(SHARED_ACCESS_FORMS)}")
    return form


@dataclass(frozen=True)
class GroupBarrier:
    """A barrier for the threads that run an island, as Triton spells its own: ``bar.sync 0``
    (``threads`` None: the whole CTA), ``bar.sync id, n`` (a warp group of a warp-specialized
    kernel, its named barrier ``id`` for its ``n`` threads) or ``bar.warp.sync -1`` (one warp:
    ``one_warp``)."""

    barrier_id: int = 0
    threads: int | None = None
    one_warp: bool = False

    @property
    def whole_cta(self) -> bool:
        return self.threads is None and not self.one_warp

    @property
    def ptx(self) -> str:
        if self.one_warp:
            return f"bar.warp.sync {FULL_MASK_SIGNED};"
        return "bar.sync 0;" if self.threads is None else f"bar.sync {self.barrier_id}, {self.threads};"


WHOLE_CTA_BARRIER = GroupBarrier()
ONE_WARP_BARRIER = GroupBarrier(one_warp=True)


def warp_group_barrier(group: ThreadGroup | None, warp_size: int) -> GroupBarrier:
    """The CTA barrier of ``group``'s threads: ``bar.sync 0, 128`` (the default group of 4
    warps), ``bar.sync 2, 128`` (partition 0 of 4 warps), ``bar.warp.sync -1`` (a group of one
    warp); ``bar.sync 0`` for the whole CTA of a kernel without warp specialization (``group``
    None or the whole CTA)."""
    if group is None or group.is_whole_cta:
        return WHOLE_CTA_BARRIER
    threads = group.warps * warp_size
    if threads == warp_size:
        return ONE_WARP_BARRIER
    return GroupBarrier(group.barrier_id, threads)


def mnemonic(key: InstructionKey) -> str:
    """The PTX name of one of the cost model's instructions, as tools show them:
    ``shfl.idx``, ``st.shared.b64``, ``ld.shared::cluster.b32``, ``ldmatrix.trans.x4``,
    ``bar.warp.sync``, ``prmt``."""
    if isinstance(key, AccessShape):
        if key.form.is_matrix:
            base = "stmatrix" if key.kind is AccessKind.STORE else "ldmatrix"
            trans = ".trans" if key.form is AccessForm.MATRIX_TRANS else ""
            return f"{base}{trans}.x{key.bits // 32}"  # .x1/.x2/.x4: one 32-bit word per matrix per lane
        op = "st" if key.kind is AccessKind.STORE else "ld"
        space = "::cluster" if key.space is MemorySpace.DISTRIBUTED_SHARED else ""
        return f"{op}.shared{space}.b{key.bits}"
    names = {ShuffleMode.LOCAL: "local", ShuffleMode.XOR: "shfl.xor", ShuffleMode.INDEX: "shfl.idx",
             AluOp.SELECT: "select", AluOp.PACK: "prmt", BarrierScope.WARP: "bar.warp.sync",
             BarrierScope.CTA: "bar.sync", BarrierScope.CLUSTER: "barrier.cluster"}
    return names[key]


class NvidiaInstructions:
    """``island_writer.VendorInstructions`` for NVIDIA, for one island (``state``)."""

    def __init__(self, target: Target, state: IslandState):
        self.target = target
        self.state = state

    # -- thread ids -----------------------------------------------------------------------------
    def _thread_id(self, w: IslandWriter) -> str:
        """%tid.x, read two ways on purpose.

        In a loop: the NVVM op, which LLVM knows is pure, so the address arithmetic built on it
        is hoisted out of the loop (with an inline-asm read, ~30 instructions of address
        computation stayed inside a 1024-iteration convert loop).  Outside loops: inline PTX,
        which LLVM leaves in place.  There the pure op let LLVM merge our address arithmetic
        with Triton's and keep it alive across the preceding wgmma loop, and ptxas then
        serialized every wgmma of a matmul (its C7515 "Potential Performance Loss" remark):
        matmul fp16 and attention ran 8-10% slower than stock on an H200."""
        state = self.state
        if state.thread_id is None:
            if state.in_loop:
                state.thread_id = w.op("nvvm.read.ptx.sreg.tid.x : i32")
            else:
                state.thread_id = w.inline_asm("mov.u32 $0, %tid.x;", "=r", [], [], "i32", side_effects=False)
        return state.thread_id

    def lane_id(self, w: IslandWriter) -> str:
        if self.state.lane_id is None:
            self.state.lane_id = w.binary("and", self._thread_id(w), w.const(31))
        return self.state.lane_id

    def warp_id(self, w: IslandWriter) -> str:
        """The warp's number in the group that runs the island: ``tid >> 5``, masked to the
        group's size when the group starts past warp 0 (a warp-specialized partition starts at
        a multiple of its size: ``lowering.thread_group``)."""
        if self.state.warp_id is None:
            warp = w.binary("lshr", self._thread_id(w), w.const(5))
            group = self.state.threads
            if group is not None and group.first_warp:
                warp = w.binary("and", warp, w.const(group.warps - 1))
            self.state.warp_id = warp
        return self.state.warp_id

    # -- packing: LLVM's own integer and vector ops, which it can see through ----------------------
    def pack(self, w: IslandWriter, values: list[str], bits: int) -> str:
        """Elements (i8 or i16, low first) -> one i32 word, for a shuffle: ``_ShiftPacker``'s
        forms (two 16-bit elements through ``<2 x i16>``, bytes by shifts and ors).

        Not inline ``prmt``: LLVM cannot see through inline PTX, so a word we packed could not
        meet the elements Triton's code around the island packs or unpacks (an ``add.s16x2``
        on the words, the ``<2 x i16>`` / ``<4 x i8>`` vectors of Triton's own conversions).
        Measured in SASS on the 37 shuffle twins of ``benchmarks/sass_twins.py`` (Triton 3.6,
        per loop iteration): inline ``prmt`` left 286 more PRMT and 286 more LOP3 than stock in
        the round trip; these forms leave ptxas to pick the ``PRMT`` itself.  Bytes keep shifts
        here (a ``<4 x i8>`` vector costs a PRMT per byte when Triton's code around is scalar).
        """
        w.counts["prmt"] += max(len(values) - 1, 0)
        return _SHIFT_PACKER.pack(w, values, bits)

    def unpack(self, w: IslandWriter, word: str, count: int, bits: int) -> list[str]:
        """One i32 word -> ``count`` elements (i8 or i16, low first): a bitcast to ``<2 x i16>``
        or ``<4 x i8>`` and ``extractelement``, the form Triton's own conversions and loads
        pack from, so LLVM folds our unpacking with the packing of whatever Triton does next
        (the return trip of ``plan_contexts.chain_ttgir``: stock's ``<4 x i8>`` packing of our
        bytes folds away; with shifts it stayed, 479 SASS instructions per iteration over the
        five 8-bit shuffle twins against 390 now, stock 348)."""
        w.counts["prmt"] += max(count - 1, 0)
        vector = f"vector<{32 // bits}xi{bits}>"
        v = w.op(f"llvm.bitcast {word} : i32 to {vector}")
        return [w.op(f"llvm.extractelement {v}[{w.const(i)} : i32] : {vector}") for i in range(count)]

    # -- cross-lane moves ------------------------------------------------------------------------
    def shuffle(self, w: IslandWriter, value: str, rnd: ShuffleRound, warp_size: int) -> str:
        """One ``shfl.sync`` through the NVVM op, not inline PTX: LLVM knows the intrinsic is
        *convergent*, so it never moves a shuffle under a lane-dependent branch.  (With inline
        asm, LLVM unswitched a loop on a lane-dependent select and the warp diverged around the
        shuffles: 40x slower on an H200.)"""
        if rnd.mode is ShuffleMode.XOR:
            w.counts["shfl.sync.bfly"] += 1
            return self._nvvm_shuffle(w, "bfly", value, w.const(rnd.source_lane.const))
        if rnd.mode is not ShuffleMode.INDEX:
            raise EmitError(f"a {rnd.mode.value} shuffle round moves nothing: no instruction to print")
        source = w.xor_of_bits(rnd.source_lane.lane, self.lane_id(w), rnd.source_lane.const)
        if any(rnd.source_lane.warp):  # each warp reads its own source lane (warp-local plans)
            source = w.binary("xor", source, w.xor_of_bits(rnd.source_lane.warp, self.warp_id(w)))
        w.counts["shfl.sync.idx"] += 1
        return self._nvvm_shuffle(w, "idx", value, source)

    def _nvvm_shuffle(self, w: IslandWriter, kind: str, value: str, lane_or_mask: str) -> str:
        # nvvm.shfl.sync <kind> %membermask, %value, %lane, %clamp : i32 -> i32 (clamp 0x1f:
        # the whole 32-lane warp is one segment), the same spelling on triton 3.6 and 3.9.
        mask = w.const(-1)
        clamp = w.const(0x1F)
        return w.op(f"nvvm.shfl.sync {kind} {mask}, {value}, {lane_or_mask}, {clamp} : i32 -> i32")

    # -- shared memory -----------------------------------------------------------------------------
    @property
    def _llvm_access(self) -> bool:
        """Shared-memory accesses as LLVM loads and stores (module docstring), not inline PTX."""
        return self.state.shared_access == "llvm"

    def shared_address(self, w: IslandWriter, base: str, byte_offset: str) -> str:
        if self._llvm_access:   # a !llvm.ptr<3>, as Triton's own accesses take it
            return island_writer.shared_pointer(w, base, byte_offset)
        if self.state.shared_base is None:  # 32-bit shared addresses, as Triton's own PTX
            self.state.shared_base = w.op(f"llvm.ptrtoint {base} : !llvm.ptr<3> to i32")
        return w.binary("add", self.state.shared_base, byte_offset)

    def advance(self, w: IslandWriter, address: str, byte_constant: int) -> str:
        """``address + byte_constant``: a GEP of i8 (LLVM form) or an i32 add (inline PTX), like
        ``shared_address``'s own.  Either way the PTX has ``[%r2+512]`` or ``add.s32 %r2, %r1, 512``
        and ``[%r2]``, and ptxas folds the add into the access (``STS [R1+0x200]``), as it does for
        Triton's ``[%r1+512]``."""
        if self._llvm_access:
            return island_writer.shared_pointer(w, address, w.const(byte_constant))
        return w.binary("add", address, w.const(byte_constant))

    @staticmethod
    def _words_of(w: IslandWriter, values: list[str], bits: int) -> tuple[list[str], int]:
        """Storage integers -> the i32 operands of one access, and its width in bits."""
        total = len(values) * bits
        if total >= 32:
            return island_writer.element_words(w, _SHARED_PACKER, bits, values), total
        word = _SHARED_PACKER.pack(w, values, bits)
        return [word], total

    def store(self, w: IslandWriter, op: SharedAccess, address: str, values: list[str], bits: int) -> None:
        if op.form.is_matrix:
            words, total = self._words_of(w, values, bits)
            trans = ".trans" if op.form is AccessForm.MATRIX_TRANS else ""
            n = len(words)
            if self._llvm_access:
                w.counts["stmatrix" + trans] += 1
                types = ", ".join(["!llvm.ptr<3>"] + ["i32"] * n)
                w.line(f"nvvm.stmatrix {address}, {', '.join(words)} {_matrix_attributes(op, None)} : {types}")
                return
            regs = ", ".join(f"${i + 1}" for i in range(n))
            asm = f"stmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 [$0], {{{regs}}};"
            w.counts["stmatrix" + trans] += 1
            w.inline_asm(asm, ",".join(["r"] * (n + 1)), [address] + words, ["i32"] * (n + 1), None)
            return
        if op.space is not MemorySpace.SHARED:
            raise EmitError("stores to another CTA's shared memory are not emitted")
        total = len(values) * bits
        if self._llvm_access:
            w.counts[f"st.shared.b{total}"] += 1
            island_writer.shared_store(w, address, self._access_value(w, values, bits, total), total)
            return
        words, total = self._words_of(w, values, bits)
        w.counts[f"st.shared.b{total}"] += 1
        if total <= 32:
            asm = f"st.shared.b{total} [$0], $1;"
        else:
            regs = ", ".join(f"${i + 1}" for i in range(len(words)))
            asm = f"st.shared.v{len(words)}.b32 [$0], {{{regs}}};"
        w.inline_asm(asm, ",".join(["r"] * (len(words) + 1)), [address] + words, ["i32"] * (len(words) + 1), None)

    def _access_value(self, w: IslandWriter, values: list[str], bits: int, total: int) -> str:
        """Storage integers -> the value an ``llvm.store`` of ``total`` bits writes: the element
        itself, the packed word (truncated below 32 bits), or a ``vector<Nxi32>`` of the words.
        The words are packed as for the inline-PTX form (``_SHARED_PACKER``)."""
        if len(values) == 1 and total <= 32:
            return values[0]
        words, total = self._words_of(w, values, bits)
        if total < 32:
            return w.cast("trunc", words[0], "i32", f"i{total}")
        return words[0] if total == 32 else island_writer.words_to_vector(w, words)

    def load(self, w: IslandWriter, op: SharedAccess, address: str, count: int, bits: int) -> list[str]:
        if op.space is not MemorySpace.SHARED:
            raise EmitError("loads from another CTA's shared memory are not emitted")
        total = count * bits
        n_words = max(1, total // 32)
        if self._llvm_access and op.form.is_matrix:
            trans = ".trans" if op.form is AccessForm.MATRIX_TRANS else ""
            w.counts["ldmatrix" + trans] += 1
            rtype = "i32" if n_words == 1 else "!llvm.struct<(" + ", ".join(["i32"] * n_words) + ")>"
            result = w.op(f"nvvm.ldmatrix {address} {_matrix_attributes(op, n_words)} : (!llvm.ptr<3>) -> {rtype}")
            words = [result] if n_words == 1 else [w.extract(result, i, rtype) for i in range(n_words)]
            if bits == 8 and self.state.keeps_words:
                return [byte for word in words for byte in _bytes_through_a_vector(w, word)][:count]
            return _unpack_words(w, words, count, bits)
        if self._llvm_access:
            w.counts[f"ld.shared.b{total}"] += 1
            value = island_writer.shared_load(w, address, total)
            if count == 1 and total <= 32:
                return [value]
            if total < 32:
                words = [w.cast("zext", value, f"i{total}", "i32")]
            else:
                words = [value] if total == 32 else island_writer.vector_to_words(w, value, n_words)
            return _unpack_words(w, words, count, bits)
        if op.form.is_matrix:
            trans = ".trans" if op.form is AccessForm.MATRIX_TRANS else ""
            regs = ", ".join(f"${i}" for i in range(n_words))
            asm = f"ldmatrix.sync.aligned.m8n8.x{n_words}{trans}.shared.b16 {{{regs}}}, [${n_words}];"
            w.counts["ldmatrix" + trans] += 1
        elif total <= 32:
            asm = f"ld.shared.b{total} $0, [$1];"
            w.counts[f"ld.shared.b{total}"] += 1
        else:
            regs = ", ".join(f"${i}" for i in range(n_words))
            asm = f"ld.shared.v{n_words}.b32 {{{regs}}}, [${n_words}];"
            w.counts[f"ld.shared.b{total}"] += 1
        constraints = ",".join(["=r"] * n_words + ["r"])
        if n_words == 1:
            words = [w.inline_asm(asm, constraints, [address], ["i32"], "i32")]
        else:
            stype = "!llvm.struct<(" + ", ".join(["i32"] * n_words) + ")>"
            result = w.inline_asm(asm, constraints, [address], ["i32"], stype)
            words = [w.extract(result, i, stype) for i in range(n_words)]
        if op.form.is_matrix and bits == 8 and self.state.keeps_words:
            return [byte for word in words for byte in _bytes_through_a_vector(w, word)][:count]
        return _unpack_words(w, words, count, bits)

    # -- barriers ----------------------------------------------------------------------------------
    def barrier(self, w: IslandWriter, scope: BarrierScope, guard: bool = False, alone: bool = False) -> None:
        if scope is BarrierScope.WARP:
            barrier = ONE_WARP_BARRIER
        elif scope is BarrierScope.CTA:
            # a warp group of a warp-specialized kernel: its own named barrier, as Triton's
            barrier = warp_group_barrier(self.state.threads, self.target.warp_size)
        else:
            raise EmitError(f"{scope.value} barriers are not emitted")
        name = barrier.ptx.split()[0]     # bar.sync, or bar.warp.sync for a one-warp group's barrier
        w.counts["guard " + name if guard else name] += 1
        if guard:
            marker = (ALONE_GUARD_MARKER if alone else GUARD_MARKER) if barrier.whole_cta else GROUP_GUARD_MARKER
        else:
            marker = ISLAND_BARRIER_MARKER if barrier.whole_cta else None
        # the barrier's constants first: its marker must be right before it
        if barrier.one_warp:
            call = f"nvvm.bar.warp.sync {w.const(-1)} : i32"
        elif barrier.whole_cta:
            call = f'llvm.call_intrinsic "{CTA_BARRIER_INTRINSIC}"({w.const(0)}) : (i32) -> ()'
        else:
            call = (f'llvm.call_intrinsic "{GROUP_BARRIER_INTRINSIC}"({w.const(barrier.barrier_id)}, '
                    f'{w.const(barrier.threads)}) : (i32, i32) -> ()')
        if marker:
            w.inline_asm(marker, "", [], [], None)
        w.line(call)

    def async_proxy_fence(self, w: IslandWriter) -> None:
        """Make this thread's shared-memory stores visible to the async proxy (wgmma, TMA): what
        Triton's ``ttng.fence_async_shared`` is, placed, as in Triton's own lowering, before the
        barrier after which one thread (TMA) or the warpgroup (wgmma) reads the buffer."""
        if not isinstance(self.target.triton_arch, int) or self.target.triton_arch < 90:
            raise EmitError(f"{self.target.name} has no async proxy to fence")
        w.counts["fence.proxy.async"] += 1
        w.inline_asm("fence.proxy.async.shared::cta;", "", [], [], None)


def _matrix_attributes(op: SharedAccess, num: int | None) -> str:
    """The attributes of ``nvvm.ldmatrix`` (``num``: its matrix count) / ``nvvm.stmatrix``
    (``num`` None: its operand count says it) for an m8n8 .b16 access, ``.trans`` being the
    ``col`` layout.  The spelling with ``shape`` and ``eltType`` is the one the MLIR of triton
    3.6 and of 3.9 both require (without them: "'nvvm.ldmatrix' op requires attribute
    'eltType'"); both lower it to ``llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4[.trans].b16.p3``, the
    intrinsic of Triton's own ``local_load``."""
    layout = "col" if op.form is AccessForm.MATRIX_TRANS else "row"
    count = "" if num is None else f", num = {num} : i32"
    return (f"{{eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<{layout}>{count}, "
            f"shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}}")


class _ShiftPacker:
    """Packing of narrow elements into the 32-bit words of shared-memory accesses.

    Two 16-bit elements go through a vector bitcast (``<2 x i16>`` -> ``i32``), which LLVM turns
    into a single ``mov.b32 %r, {%rs0, %rs1}``, as in stock Triton.  Bytes keep shifts and ors:
    measured on an H200, ``<4 x i8>`` vectors made LLVM emit a ``prmt`` per byte and ran the
    8-bit conversion benchmarks up to 2.7x slower.  The cost model counts ``prmt`` only for
    shuffle plans.
    """

    def __init__(self, bytes_as_vectors: bool = False):
        # only for shared-memory words (``_SHARED_PACKER``), and only when asked for
        # (``bytes_as_vectors()``): shuffles keep shifts
        self.bytes_as_vectors = bytes_as_vectors

    def _vector_bytes(self, count: int, bits: int) -> bool:
        return bits == 8 and count == 4 and self.bytes_as_vectors and bytes_as_vectors()

    def pack(self, w: IslandWriter, values: list[str], bits: int) -> str:
        if (bits == 16 and len(values) == 2) or self._vector_bytes(len(values), bits):
            vector = f"vector<{len(values)}xi{bits}>"
            v = w.op(f"llvm.mlir.undef : {vector}")
            for i, x in enumerate(values):
                v = w.op(f"llvm.insertelement {x}, {v}[{w.const(i)} : i32] : {vector}")
            return w.op(f"llvm.bitcast {v} : {vector} to i32")
        out = None
        for i, v in enumerate(values):
            x = w.cast("zext", v, f"i{bits}", "i32")
            if i:
                x = w.binary("shl", x, w.const(i * bits))
            out = x if out is None else w.binary("or", out, x)
        return out

    def unpack(self, w: IslandWriter, word: str, count: int, bits: int) -> list[str]:
        if (bits == 16 and count == 2) or self._vector_bytes(count, bits):
            vector = f"vector<{32 // bits}xi{bits}>"
            v = w.op(f"llvm.bitcast {word} : i32 to {vector}")
            return [w.op(f"llvm.extractelement {v}[{w.const(i)} : i32] : {vector}") for i in range(count)]
        out = []
        for i in range(count):
            x = w.binary("lshr", word, w.const(i * bits)) if i else word
            out.append(w.cast("trunc", x, "i32", f"i{bits}"))
        return out


_SHIFT_PACKER = _ShiftPacker()
_SHARED_PACKER = _ShiftPacker(bytes_as_vectors=True)


# A study's switch, no setting of the plugin (``benchmarks/studies``' byte-vector runs set it in
# their own process; the cache key marks it): see ``bytes_as_vectors``.
BYTES_AS_VECTORS = False


def bytes_as_vectors() -> bool:
    """``BYTES_AS_VECTORS = True``: the four bytes of a full shared-memory word packed and
    unpacked through ``<4 x i8>`` (insertelement / extractelement and a bitcast), as stock
    Triton does, instead of shifts and ors.  Off by default, an experiment to time.

    What it changes (``benchmarks/studies/sass_slow_twins.py``, Triton 3.6, sm_90 SASS per loop
    iteration of ``plan_contexts.chain_ttgir``): where our loads of one conversion feed the stores
    of the next with nothing between (the timed A -> B -> A chain), LLVM folds the extract /
    insert pairs of ``<4 x i8>`` into one ``prmt`` per word, as in stock's code, but cannot see a
    byte permutation through shifts, ands and ors (13 instructions for two words where stock has
    2 ``PRMT``): fresh2741/0 (32x256 i8, 1.18x stock on an H100) 395 -> 299 SASS (stock 299),
    128 -> 96 registers; fresh2741/25 174 -> 157 (stock 157).  Where the bytes go to or come
    from arithmetic, shifts are shorter (the low byte needs no instruction, the high byte one
    shift; ``<4 x i8>`` costs a ``PRMT`` per byte): over the 137 8-bit conversions of the fresh
    ``plan_*.json.gz`` runs, 21 shorter, 55 longer, 52 unchanged, summed 12316 -> 12367 (stock
    12532), equal to stock's count in 56 instead of 31.  Shuffle plans keep shifts
    (``NvidiaInstructions.pack``)."""
    return BYTES_AS_VECTORS


def _bytes_through_a_vector(w: IslandWriter, word: str) -> list[str]:
    """The four bytes of an ``ldmatrix`` word, low first, through ``<4 x i8>`` (bitcast,
    extractelement).

    Unlike ``_ShiftPacker``'s shifts, this lets LLVM see that the bytes of an 8-bit dot operand
    go back into the same words when Triton packs them for the mma (an fp8 mma v2 operand: the
    loop of our local loads had 17% more SASS than stock's with shifts, the same count with
    this).  Only for the ``ldmatrix`` results of local loads (``IslandState.keeps_words``):
    conversions keep shifts, ``<4 x i8>`` vectors cost a ``prmt`` per byte there (see
    ``_ShiftPacker``)."""
    v = w.op(f"llvm.bitcast {word} : i32 to vector<4xi8>")
    return [w.op(f"llvm.extractelement {v}[{w.const(i)} : i32] : vector<4xi8>") for i in range(4)]


def _unpack_words(w: IslandWriter, words: list[str], count: int, bits: int) -> list[str]:
    if count * bits < 32:
        return _SHARED_PACKER.unpack(w, words[0], count, bits)
    return island_writer.word_elements(w, _SHARED_PACKER, bits, words, count)
