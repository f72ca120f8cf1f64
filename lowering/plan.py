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
* ``WarpShufflePlan``: pack registers into 32-bit words, rounds of warp shuffles, selects,
  unpack;
* ``SharedMemoryPlan``: stores, barriers and loads through a swizzled scratch buffer, in rounds.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..dialect import f2
from ..dialect.linear_layout import LinearLayout
from .element_type import storage_bits_of
from .instructions import AccessForm, AccessKind, BarrierScope, MemorySpace, ShuffleMode
from .target import Target
from .words import Word


# Up to this many columns, a linear map of an integer array is one lookup in the table of all
# XOR combinations of its columns (f2.apply_columns takes four array operations per column).
_TABLE_COLUMNS = 10


def _apply_columns(columns: tuple[int, ...], x):
    """``f2.apply_columns(columns, x)``, for an integer array ``x`` by table lookup: the
    planner's cost model and verifier evaluate every access's address for every thread."""
    if not columns or len(columns) > _TABLE_COLUMNS or getattr(x, "ndim", 0) == 0 \
            or getattr(x, "dtype", None) is None or x.dtype.kind not in "iu":
        return f2.apply_columns(columns, x)
    try:
        lookup = _xor_table(columns, x.dtype.str)
    except OverflowError:
        return f2.apply_columns(columns, x)
    return lookup[x & ((1 << len(columns)) - 1)]


@functools.lru_cache(maxsize=4096)
def _xor_table(columns: tuple[int, ...], dtype: str) -> np.ndarray:
    """Every XOR combination of ``columns``: entry ``i`` is the XOR of the columns whose bit is
    set in ``i`` (columns (1, 6): [0, 1, 6, 7]).  Kept: a planner asks for the same few maps
    of every candidate again and again.  Read-only, as it is shared."""
    table = [0]
    for column in columns:
        table += [t ^ column for t in table]
    lookup = np.array(table, dtype=np.dtype(dtype))
    lookup.flags.writeable = False
    return lookup


class Scope(Word):
    """The widest hardware level a conversion moves data across (``lowering.conversion``)."""

    NONE = "none"           # the same linear map: nothing moves
    REGISTER = "register"   # inside each thread: a renaming of registers
    LANE = "lane"           # across the lanes of a warp
    WARP = "warp"           # across the warps of a CTA
    BLOCK = "block"         # across the CTAs of a cluster


class Method(Word):
    """How a plan moves the data (see the plan kinds above)."""

    NOOP = "noop"           # nothing to do
    RENAME = "rename"       # registers renamed inside each thread, no instruction
    SHUFFLE = "shuffle"     # rounds of warp shuffles (``WarpShufflePlan``)
    SHARED = "shared"       # through a scratch buffer (``SharedMemoryPlan``)
    LOCAL_LOAD = "local_load"     # a ttg.local_load: registers <- a memdesc's buffer (``local_memory``)
    LOCAL_STORE = "local_store"   # a ttg.local_store: a memdesc's buffer <- registers
    LOCAL_ALLOC = "local_alloc"   # a ttg.local_alloc with a source: a fresh buffer <- registers


class Stock(Word):
    """Stock Triton's own lowering, where a choice is between it and our verified candidates
    (their ranks 0, 1, ...): ``candidate_for=KEY:stock``, a measured table's ``"fastest": "stock"``.
    One member, so a choice is ``int | Stock`` and is tested with ``is STOCK``."""

    STOCK = "stock"


STOCK = Stock.STOCK


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
        x = (self.const ^ _apply_columns(self.lane, lane) ^ _apply_columns(self.warp, warp)
             ^ _apply_columns(self.block, block))
        return self.padded(x)

    def padded(self, x):
        """The row-padded offset of the unpadded offset ``x`` (``x`` itself without padding)."""
        if not self.pad_elements:
            return x
        return x + (x >> self.pad_row_log2) * self.pad_elements

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
    * ``mode``: ``ShuffleMode.LOCAL`` (source lane is the lane itself: no shuffle at all, only
      the select), ``XOR`` (source lane = lane ^ const: NVIDIA's butterfly shuffle) or ``INDEX``
      (any other source lane).  AMD moves both with one instruction (``ds_bpermute``).
    """

    send_word: ThreadAffine
    source_lane: ThreadAffine
    mode: ShuffleMode


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
    """One warp-wide shared-memory instruction: a store (``src`` registers into the buffer) or a
    load (buffer into ``staging`` registers), by ``kind``.

    ``form``:
      * ``AccessForm.VECTOR``: lane l accesses the ``len(registers)`` consecutive elements at
        element offset ``address.evaluate(l, w, b)`` (``len(registers) * element_bits`` is the
        vector width: 8 ... 128 bits);
      * ``MATRIX`` (NVIDIA ``ldmatrix`` / ``stmatrix``; ``len(registers) // elements_per_word``
        = 1, 2 or 4 matrices of 8 rows x 16 bytes): lane ``8*j + i`` supplies the address of row
        i of matrix j; lane t holds, in its word j, the 32-bit word (t % 4) of row (t // 4) of
        matrix j;
      * ``MATRIX_TRANS`` (16-bit elements): lane t holds, in word j, the elements of rows
        2*(t % 4) and 2*(t % 4) + 1 at column t // 4 of matrix j.
    ``registers``: the thread's register indices, in element order.  ``space``:
    ``MemorySpace.DISTRIBUTED_SHARED`` for loads from another CTA's buffer (sm_90 clusters);
    ``cta`` then gives the block id of the CTA whose buffer the lane reads.
    """

    kind: AccessKind
    registers: tuple[int, ...]
    address: ThreadAffine
    form: AccessForm = AccessForm.VECTOR
    space: MemorySpace = MemorySpace.SHARED
    cta: ThreadAffine | None = None  # DISTRIBUTED_SHARED: the CTA (block id) whose buffer is read

    def __post_init__(self):
        if (self.space is MemorySpace.DISTRIBUTED_SHARED) != (self.cta is not None):
            raise ValueError("a SharedAccess names a CTA (cta=...) exactly when it reads distributed shared memory")

    @property
    def is_store(self) -> bool:
        return self.kind is AccessKind.STORE


@dataclass(frozen=True)
class Barrier:
    """Every thread of ``scope`` waits for the others: ``BarrierScope.CTA``, ``WARP`` (data
    stays in a warp) or ``CLUSTER`` (arrive + wait of every CTA of the cluster: distributed
    shared memory)."""

    scope: BarrierScope


@dataclass(frozen=True)
class SharedMemoryPlan:
    """Stores, barrier, loads through a scratch buffer of ``scratch_elements`` elements.

    ``smem_layout`` maps the scratch offset (element index; in-dims ``vector``, ``bank``,
    ``segment``) plus the round index (``reps``) to the tensor element, flattened: it is the
    swizzle.  ``ops`` is the program, in order; a ``Barrier`` separates each round's stores from
    its loads, and a round's stores from the previous round's loads.

    ``rounds_merged``: how many round directions of stock's swizzle this plan moved into its
    buffer instead (each halves the rounds and doubles the buffer: ``lowering.shared``,
    ``fewer_rounds``); 0 for a plan with the rounds Triton's own swizzle takes.
    """

    element_bits: int
    scratch_elements: int
    smem_layout: LinearLayout
    num_rounds: int
    ops: tuple[SharedAccess | Barrier, ...]
    store_vector: int
    load_vector: int
    rounds_merged: int = 0

    @property
    def scratch_bytes(self) -> int:
        return self.scratch_elements * storage_bits_of(self.element_bits) // 8

    @property
    def waits_for_its_warp(self) -> bool:
        """The data never leaves a warp: its barriers are the warp's (``bar.warp.sync``)."""
        return any(isinstance(op, Barrier) and op.scope is BarrierScope.WARP for op in self.ops)


# -------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class ConversionPlan:
    """How to convert ``src`` to ``dst`` (both distributed LinearLayouts) on ``target``.

    ``scope``: the widest hardware level the data crosses (``Scope``); a ``Scope.BLOCK`` plan
    crosses the CTAs of a cluster: a shared-memory plan whose loads read other CTAs' buffers, on
    targets with distributed shared memory.  ``method``: how (``Method``).
    """

    src: LinearLayout
    dst: LinearLayout
    element_bits: int
    target: Target
    scope: Scope
    method: Method
    output: RegisterRename
    shuffle: WarpShufflePlan | None = None
    shared: SharedMemoryPlan | None = None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Unsupported:
    """No plan: the convert is left to Triton.  ``reason`` says why, in words."""

    reason: str
    scope: Scope | None = None   # None: the conversion is not even valid (no scope to speak of)

    def __bool__(self) -> bool:  # `if plan:` reads naturally
        return False
