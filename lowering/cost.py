"""Cost model: instruction counts, exact bank conflicts, scratch bytes and barriers of a plan.

Everything is counted *per warp* (the instructions one warp issues), which is also per thread.

Bank conflicts are exact, not estimated: for every shared-memory instruction we evaluate the
address of every lane (warp 0, block 0: other warps add an XOR constant to the offset, which
permutes banks and keeps the conflict count), split the warp into the target's phases
(``Target.phase_lane_bits``), and in each phase count, per bank, the *distinct* 4-byte words the
lanes touch.  The phase takes ``max`` over banks of that count wavefronts (at least 1); lanes
reading the same word share one broadcast and cost nothing extra.

Example (paper Appendix C, 16x32 fp32, loads of a row-major buffer): the 32 lanes of a load
read column pairs: lanes 0-15 hit words 32m + 2r for m = 0..15, all in bank 2r: 16 wavefronts
where 1 would do, ``conflicts`` = 15 for that instruction.  With the swizzle n ^ 2m the 16 lanes
hit 16 different banks and the phase takes 1 wavefront.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from .cost_weights import weights_for
from .element_type import storage_bits_of
from .instructions import AccessKind, AccessShape, AluOp, BarrierScope, ShuffleMode
from .plan import Barrier, ConversionPlan, SharedAccess, SharedMemoryPlan
from .shuffle import exact_select_count
from .target import Target


@dataclass(frozen=True)
class PlanCost:
    """Per-warp counts.  ``*_wavefronts``: shared-memory wavefronts issued; ``*_conflicts``:
    wavefronts beyond one per phase (0 = conflict-free)."""

    shuffles: int = 0
    selects: int = 0
    packs: int = 0
    shared_stores: int = 0
    shared_loads: int = 0
    barriers: int = 0
    scratch_bytes: int = 0
    store_wavefronts: int = 0
    load_wavefronts: int = 0
    store_conflicts: int = 0
    load_conflicts: int = 0
    max_store_bits: int = 0
    max_load_bits: int = 0
    # How many of each instruction, by ``instructions.InstructionKey`` (vendor-neutral; the
    # emitters name them: ``describe.instruction_counts``).
    counts: dict = field(default_factory=dict, compare=False)
    target: Optional[Target] = field(default=None, compare=False)   # whose constants weigh it (None: the hand-set ones)

    @property
    def bank_conflicts(self) -> int:
        return self.store_conflicts + self.load_conflicts

    @property
    def weight(self) -> float:
        """An estimate used to choose between shuffles and shared memory, in units where one
        conflict-free 32-bit shared access costs 1.5, with the constants of the plan's target
        (``lowering.cost_weights.weights_for``: measured on sm_90, estimated elsewhere).
        A shared access costs its issue plus its wavefronts (a 128-bit access of 32 lanes moves
        512 bytes: 4 wavefronts); a shuffle, a select or byte permute, and each barrier
        have a constant of their own.

        Example (hand-set constants): blocked[4] -> blocked[1] of 128 i8 in one warp: 4 shuffles
        + 16 selects = 10, 4 byte stores + 1 word load + warp barrier = 8 -> shared memory
        (stock Triton agrees; the module ``cost_weights`` works it with sm_90's constants too).
        """
        weights = self.target.weights if self.target is not None else weights_for("")
        barrier_units = 0.0
        for key, count in self.counts.items():
            if key is BarrierScope.WARP:
                barrier_units += weights.warp_barrier * count
            elif key in (BarrierScope.CTA, BarrierScope.CLUSTER):  # a cluster waits at least as long
                barrier_units += weights.cta_barrier * count
        return (weights.shuffle * self.shuffles + weights.alu_op * (self.selects + self.packs)
                + weights.shared_access * (self.shared_stores + self.shared_loads)
                + weights.shared_wavefront * (self.store_wavefronts + self.load_wavefronts)
                + barrier_units)


def _lane_ids(target: Target) -> np.ndarray:
    return np.arange(target.warp_size, dtype=np.int64)


def access_words(access: SharedAccess, element_bits: int, target: Target, lanes: np.ndarray) -> list[np.ndarray]:
    """For each lane, the 4-byte word addresses it touches, as a list of arrays (one per word
    slot of the access), plus the access width in bits via len()."""
    ebytes = storage_bits_of(element_bits) // 8
    base = np.asarray(access.address.evaluate(lanes, 0, 0), dtype=np.int64) * ebytes
    nbytes = len(access.registers) * ebytes
    if access.form.is_matrix:
        nbytes = 16  # one 16-byte row per address-supplying lane
    words = [(base + off) // 4 for off in range(0, max(nbytes, 4), 4)]
    return words


@dataclass(frozen=True)
class BankUse:
    """How one warp-wide access uses the banks (``bank_use``).  ``conflicted[i, j]``: word j of
    address lane i shares its bank with another word in its phase."""

    wavefronts: int
    phases: int
    conflicted: np.ndarray

    @property
    def conflicts(self) -> int:
        """Wavefronts beyond one per phase."""
        return self.wavefronts - self.phases


def bank_use(lanes: np.ndarray, words: np.ndarray, phase_bits: tuple[int, ...], num_banks: int) -> BankUse:
    """The bank model, the one every count of conflicts uses (the planner's costs, ``ll-viz``).

    ``words[i, j]``: the j-th 4-byte word that lane ``lanes[i]`` touches.  The lanes that differ
    only in ``phase_bits`` are served together (one phase); in a phase each bank serves one
    distinct word per wavefront (lanes touching the same word share it: a broadcast), so the
    phase takes the most distinct words any bank has, at least 1.  Example: 32 lanes reading
    words 32 l (one column of a row-major 32x32 f32 buffer) in one phase: bank 0 serves 32
    words, 32 wavefronts, 31 conflicts.
    """
    in_phase_mask = sum(1 << b for b in phase_bits)
    phase_id = np.broadcast_to((lanes & ~in_phase_mask)[:, None], words.shape).ravel()
    flat = words.ravel()
    # distinct (phase, word) pairs; per (phase, bank) how many distinct words; max per phase
    pairs, pair_of = np.unique((phase_id << 40) | flat, return_inverse=True)
    phase_bank = ((pairs >> 40) << 8) | ((pairs & ((1 << 40) - 1)) % num_banks)
    keys, key_of, counts = np.unique(phase_bank, return_inverse=True, return_counts=True)
    phases, index = np.unique(keys >> 8, return_inverse=True)
    per_phase = np.zeros(len(phases), dtype=np.int64)
    np.maximum.at(per_phase, index, counts)
    conflicted = (counts[key_of.ravel()][pair_of.ravel()] > 1).reshape(words.shape)
    return BankUse(int(per_phase.sum()), len(phases), conflicted)


def access_lanes_and_phases(access: SharedAccess, element_bits: int,
                            target: Target) -> tuple[np.ndarray, tuple[int, ...]]:
    """The lanes that supply addresses to ``access`` and the lane bits of one phase: matrix forms
    serve one 8-row matrix at a time (lanes 8 j .. 8 j + 7 give matrix j's rows); vector
    accesses split the warp by ``Target.phase_lane_bits``."""
    lanes = _lane_ids(target)
    ebytes = storage_bits_of(element_bits) // 8
    if access.form.is_matrix:
        matrices = len(access.registers) * ebytes // 4  # one 32-bit word per matrix per lane
        return lanes[: 8 * matrices], (0, 1, 2)
    width_bits = len(access.registers) * ebytes * 8
    return lanes, target.phase_lane_bits(width_bits, not access.is_store)


def access_bank_use(access: SharedAccess, element_bits: int, target: Target) -> tuple[np.ndarray, np.ndarray, BankUse]:
    """(address lanes, their words (lanes, words per lane), ``bank_use``) of one access of warp 0."""
    lanes, phase_bits = access_lanes_and_phases(access, element_bits, target)
    words = np.stack(access_words(access, element_bits, target, lanes), axis=1)
    return lanes, words, bank_use(lanes, words, phase_bits, target.num_banks)


def access_wavefronts(access: SharedAccess, element_bits: int, target: Target) -> tuple[int, int]:
    """(wavefronts, phases) of one warp-wide access."""
    lanes, phase_bits = access_lanes_and_phases(access, element_bits, target)
    words = np.stack(access_words(access, element_bits, target, lanes), axis=1)
    return wavefronts_and_phases(lanes, words, phase_bits, target.num_banks)


def wavefronts_and_phases(lanes: np.ndarray, words: np.ndarray, phase_bits: tuple[int, ...],
                          num_banks: int) -> tuple[int, int]:
    """``bank_use(...)``'s (wavefronts, phases), without its per-word ``conflicted`` table: the
    planner costs every candidate's accesses, a warp of at most a few hundred words each, which
    plain Python counts faster than ``bank_use``'s sorting."""
    flat = words.ravel()
    if not len(flat) or int(flat.min()) < 0 or int(flat.max()) >= 1 << 40:
        use = bank_use(lanes, words, phase_bits, num_banks)   # outside bank_use's packed keys
        return use.wavefronts, use.phases
    in_phase_mask = sum(1 << b for b in phase_bits)
    per_phase: dict[int, set] = {}
    for lane, row in zip(lanes.tolist(), words.tolist()):
        per_phase.setdefault(lane & ~in_phase_mask, set()).update(row)
    wavefronts = 0
    for distinct in per_phase.values():
        per_bank: dict[int, int] = {}
        for word in distinct:
            bank = word % num_banks
            per_bank[bank] = per_bank.get(bank, 0) + 1
        wavefronts += max(per_bank.values())
    return wavefronts, len(per_phase)


def shared_cost(plan: SharedMemoryPlan, target: Target) -> dict:
    # Keys below name enum members by id() (they are singletons): hashing a member runs
    # Python code, and a plan has a few hundred accesses per candidate.
    counts: dict = {}   # id key -> [instruction key, count], in order of first use
    st_w = ld_w = st_c = ld_c = 0
    max_st = max_ld = 0
    barriers = stores = loads = 0
    seen: dict = {}
    element_bits = storage_bits_of(plan.element_bits)
    for op in plan.ops:
        if isinstance(op, Barrier):
            barriers += 1
            entry = counts.get(id(op.scope))
            if entry is None:
                counts[id(op.scope)] = [op.scope, 1]
            else:
                entry[1] += 1
            continue
        bits = len(op.registers) * element_bits
        shape = (id(op.kind), id(op.form), id(op.space), bits)
        entry = counts.get(shape)
        if entry is None:
            counts[shape] = [AccessShape(op.kind, op.form, op.space, bits), 1]
        else:
            entry[1] += 1
        # XOR-ing a constant into every lane's offset permutes the banks and keeps the count,
        # so accesses that differ only in their constant (the per-register part) share one count.
        # Row-padded addresses (legacy) are not XOR-affine: there the constant matters.
        padded = op.address.pad_elements != 0
        key = shape[:3] + (op.address.lane, len(op.registers), op.address.const if padded else None)
        if key not in seen:
            address = op.address if padded else op.address.with_const(0)
            seen[key] = access_wavefronts(replace(op, address=address), plan.element_bits, target)
        wavefronts, phases = seen[key]
        if op.kind is AccessKind.STORE:
            stores += 1
            st_w += wavefronts
            st_c += wavefronts - phases
            max_st = max(max_st, bits)
        else:
            loads += 1
            ld_w += wavefronts
            ld_c += wavefronts - phases
            max_ld = max(max_ld, bits)
    return dict(shared_stores=stores, shared_loads=loads, barriers=barriers, scratch_bytes=plan.scratch_bytes,
                store_wavefronts=st_w, load_wavefronts=ld_w, store_conflicts=st_c, load_conflicts=ld_c,
                max_store_bits=max_st, max_load_bits=max_ld, counts={k: n for k, n in counts.values()},
                target=target)


def plan_cost(plan: ConversionPlan) -> PlanCost:
    """The cost of any plan (see ``PlanCost``).  Kept on the plan once computed (plans and
    costs are immutable): the planner orders the candidates by it, then the choice and the
    remarks ask for the pick's again."""
    memo = getattr(plan, "__dict__", None)
    if memo is not None:
        cost = memo.get(_COST_MEMO)
        if cost is None:
            # beside the dataclass fields: not compared, hashed or printed; a plan made by
            # dataclasses.replace starts without it
            cost = memo[_COST_MEMO] = _plan_cost(plan)
        return cost
    return _plan_cost(plan)


_COST_MEMO = "_plan_cost_memo"


def _plan_cost(plan: ConversionPlan) -> PlanCost:
    if plan.shuffle is not None:
        s = plan.shuffle
        counts: Counter = Counter()
        shuffles = 0
        for r in s.rounds:
            if r.mode is not ShuffleMode.LOCAL:
                shuffles += s.words_per_element
                counts[r.mode] += s.words_per_element
        num_warps = plan.src.in_dim_size_or_one("warp")
        selects = exact_select_count(s, plan.target.warp_size, num_warps) * s.words_per_element
        packs = (len(s.src_words) + len(s.dst_words)) * (s.elements_per_word - 1)
        if selects:
            counts[AluOp.SELECT] = selects
        if packs:
            counts[AluOp.PACK] = packs
        return PlanCost(shuffles=shuffles, selects=selects, packs=packs, counts=dict(counts),
                        target=plan.target)
    if plan.shared is not None:
        return PlanCost(**shared_cost(plan.shared, plan.target))
    return PlanCost()
