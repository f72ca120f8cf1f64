"""Conversion plans as data: an explicit, inspectable program over (block, warp, lane, register).

A plan says *what every thread does* to turn the registers of a source layout into the registers
of a destination layout.  It never says how to print it (PTX, AMDGCN, LLVM dialect): an emitter
walks the plan, and the verifier (``lowering.verify``) simulates it.

Register files.  Every thread starts with the file ``src`` (register i of the source layout) and
ends with ``dst`` (register i of the destination layout).  In between, shuffle and shared-memory
plans write a *staging* file indexed by the destination's *unique* registers (the destination
with its broadcast register bases removed); the final ``RegisterRename`` copies staging
registers into every destination register, duplicates included.  A destination layout with a
zero register basis holds each element twice; both copies come from one staging register.

Thread-dependent quantities (an address, a source lane, which word a lane sends) are F2-affine
functions of the thread's ids, ``ThreadAffine``: ``const ^ XOR(lane_map[i] for set bits i of the
lane id) ^ (same for warp, block)``.  Example: the shuffle source lane ``lane ^ 16`` is
``ThreadAffine(const=16, lane=(1, 2, 4, 8, 16))``; the address ``32*m + (n ^ 2m)`` of Appendix C
is a ThreadAffine in the lane bits plus, per register, a constant.

Plan kinds, cheapest first:

* no-op / register rename: ``ConversionPlan.output`` only (``dst[i] = src[sources[i]]``);
* ``WarpShufflePlan``: pack registers into 32-bit words, rounds of ``shfl.sync`` (or
  ``ds_bpermute`` on AMD), selects, unpack;
* ``SharedMemoryPlan``: stores, barriers and loads through a swizzled scratch buffer, in rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dialect import f2
from ..dialect.linear_layout import LinearLayout
from .target import Target


@dataclass(frozen=True)
class ThreadAffine:
    """const ^ L(lane) ^ L(warp) ^ L(block), L linear (one image per input bit).

    Optional row padding (legacy, pre-linear-layouts Triton pads its scratch rows; see
    ``lowering.legacy``): with ``pad_elements`` > 0 the value x above becomes
    ``x + (x >> pad_row_log2) * pad_elements``, i.e. every row of ``2**pad_row_log2`` elements
    is followed by ``pad_elements`` unused ones.  Not F2-linear, so only shared-memory
    addresses use it; with the default ``pad_elements=0`` nothing changes.
    """

    const: int = 0
    lane: tuple[int, ...] = ()
    warp: tuple[int, ...] = ()
    block: tuple[int, ...] = ()
    pad_row_log2: int = 0
    pad_elements: int = 0

    def evaluate(self, lane, warp=0, block=0):
        x = (self.const ^ f2.apply_columns(self.lane, lane) ^ f2.apply_columns(self.warp, warp)
             ^ f2.apply_columns(self.block, block))
        return self.padded(x)

    def padded(self, x):
        """The row-padded offset of the unpadded offset ``x`` (``x`` itself without padding)."""
        if not self.pad_elements:
            return x
        return x + (x >> self.pad_row_log2) * self.pad_elements

    def is_identity_on_lanes(self) -> bool:
        return all(image == 1 << i for i, image in enumerate(self.lane)) and not any(self.warp) and not any(self.block)

    def lane_rank(self) -> int:
        return f2.rank(self.lane)

    def with_const(self, const: int) -> "ThreadAffine":
        return ThreadAffine(const, self.lane, self.warp, self.block, self.pad_row_log2, self.pad_elements)


@dataclass(frozen=True)
class RegisterRename:
    """``dst[i] = <file>[sources[i]]`` in every thread: no instructions, just naming.

    ``file`` is ``"src"`` for register-only conversions and ``"staging"`` after a shuffle or
    shared-memory plan.  Repeated sources are broadcast copies.
    """

    file: str
    sources: tuple[int, ...]


# ------------------------------------------------------------------------------------- shuffles


@dataclass(frozen=True)
class ShuffleRound:
    """One exchange: every lane sends one 32-bit word and receives one.

    * the sender sends its word ``send_word.evaluate(its own lane)`` (a select chain over the few
      words that expression can take);
    * the receiver reads from lane ``source_lane.evaluate(its own lane)``;
    * ``instruction``: ``"local"`` (source lane is the lane itself: no shuffle at all, only the
      select), ``"shfl.xor"`` (source lane = lane ^ const), ``"shfl.idx"`` (any other source
      lane), or ``"ds_bpermute"`` (AMD).
    """

    send_word: ThreadAffine
    source_lane: ThreadAffine
    instruction: str


@dataclass(frozen=True)
class WarpShufflePlan:
    """Warp shuffles, receiver-driven, over 32-bit words.

    1. pack: source word w = the source registers ``src_words[w]`` (low element first) packed
       into 32 bits (``elements_per_word`` of them; 1 for 32- and 64-bit elements);
    2. ``rounds[r]``: see ``ShuffleRound``; the received word is ``received[r]``;
    3. select: destination word d of lane l = ``received[d ^ receive_round.evaluate(l)]``;
    4. unpack: destination word d holds the staging registers ``dst_words[d]``.

    A 64-bit element is moved as two 32-bit halves through the same rounds
    (``words_per_element == 2``): every round costs two shuffles.
    """

    elements_per_word: int
    words_per_element: int
    src_words: tuple[tuple[int, ...], ...]
    rounds: tuple[ShuffleRound, ...]
    receive_round: ThreadAffine
    dst_words: tuple[tuple[int, ...], ...]


# ------------------------------------------------------------------------------ shared memory


@dataclass(frozen=True)
class SharedAccess:
    """One warp-wide shared-memory instruction.

    ``instruction``:
      * ``"st.shared"`` / ``"ld.shared"`` (AMD: ds_write / ds_read): lane l accesses the
        ``len(registers)`` consecutive elements at element offset ``address.evaluate(l, w, b)``
        (``len(registers) * element_bits`` is the vector width: 8 ... 128 bits);
      * ``"ldmatrix"`` / ``"stmatrix"`` (``.x1/.x2/.x4`` = len(registers) // elements_per_word
        matrices of 8 rows x 16 bytes): lane ``8*j + i`` supplies the address of row i of matrix j;
        lane t holds, in its word j, the 32-bit word (t % 4) of row (t // 4) of matrix j;
      * ``"ldmatrix.trans"`` / ``"stmatrix.trans"`` (16-bit elements): lane t holds, in word j,
        the elements of rows 2*(t % 4) and 2*(t % 4) + 1 at column t // 4 of matrix j.
    ``registers``: the thread's register indices, in element order (``src`` for stores,
    ``staging`` for loads).  ``cta``: for ``"ld.shared::cluster"`` (sm_90 distributed shared
    memory), the block id of the CTA whose scratch buffer the lane reads.
    """

    instruction: str
    registers: tuple[int, ...]
    address: ThreadAffine
    cta: ThreadAffine | None = None  # ld.shared::cluster: the CTA (block id) whose buffer is read

    @property
    def is_store(self) -> bool:
        return self.instruction.startswith(("st.", "stmatrix", "ds_write"))


@dataclass(frozen=True)
class Barrier:
    """``bar.sync`` (CTA), ``bar.warp.sync`` (data stays in a warp), ``barrier.cluster``
    (arrive + wait of every CTA of the cluster: distributed shared memory) or AMD ``s_barrier``."""

    kind: str


@dataclass(frozen=True)
class SharedMemoryPlan:
    """Stores, barrier, loads through a scratch buffer of ``scratch_elements`` elements.

    ``smem_layout`` maps the scratch offset (element index; in-dims ``vector``, ``bank``,
    ``segment``) plus the round index (``reps``) to the tensor element, flattened: it is the
    swizzle.  ``ops`` is the program, in order; a ``Barrier`` separates each round's stores from
    its loads, and a round's stores from the previous round's loads.
    """

    element_bits: int
    scratch_elements: int
    smem_layout: LinearLayout
    num_rounds: int
    ops: tuple[SharedAccess | Barrier, ...]
    store_vector: int
    load_vector: int

    @property
    def scratch_bytes(self) -> int:
        return self.scratch_elements * max(self.element_bits, 8) // 8


# -------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class ConversionPlan:
    """How to convert ``src`` to ``dst`` (both distributed LinearLayouts) on ``target``.

    ``scope``: the smallest hardware level the data crosses: ``"none"``, ``"register"``,
    ``"lane"``, ``"warp"`` (``"block"`` conversions are ``Unsupported``).  ``method``:
    ``"noop"``, ``"rename"``, ``"shuffle"`` or ``"shared"``.
    """

    src: LinearLayout
    dst: LinearLayout
    element_bits: int
    target: Target
    scope: str
    method: str
    output: RegisterRename
    shuffle: WarpShufflePlan | None = None
    shared: SharedMemoryPlan | None = None
    notes: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        from .cost import plan_cost
        cost = plan_cost(self)
        lines = [f"ConversionPlan(scope={self.scope}, method={self.method}, bits={self.element_bits}, "
                 f"target={self.target.name})", f"  cost: {cost}"]
        if self.shuffle is not None:
            s = self.shuffle
            lines.append(f"  pack {s.elements_per_word} elements/word, {len(s.src_words)} source words, "
                         f"{len(s.dst_words)} destination words")
            for i, r in enumerate(s.rounds):
                lines.append(f"  round {i}: {r.instruction} send word {r.send_word} from lane {r.source_lane}")
            lines.append(f"  destination word d <- round d ^ {s.receive_round}")
        if self.shared is not None:
            sh = self.shared
            lines.append(f"  scratch {sh.scratch_bytes} bytes, {sh.num_rounds} rounds, "
                         f"vectors st={sh.store_vector} ld={sh.load_vector}")
            lines.append(f"  swizzle: {sh.smem_layout}")
            for op in sh.ops:
                lines.append(f"    {op}")
        lines.append(f"  output: dst[i] = {self.output.file}[{list(self.output.sources)}]")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


@dataclass(frozen=True)
class Unsupported:
    """No plan: the convert is left to Triton.  ``reason`` says why, in words."""

    reason: str
    scope: str = ""

    def __bool__(self) -> bool:  # `if plan:` reads naturally
        return False
