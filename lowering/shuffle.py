"""Warp-shuffle plans for conversions that move data between lanes of one warp.

The conversion as a linear map.  Let C = dst.invert_and_compose(src) restricted to (register,
lane) (the minimal conversion: warps and blocks map to themselves).  C says, for every
destination slot (register r, lane l), which source slot holds that element:

    C(r, l) = (Crr r ^ Clr l,  Crl r ^ Cll l)        (source register, source lane)

(Crr: dst register bits -> src register, Crl: dst register bits -> src lane, Clr: dst lane bits ->
src register, Cll: dst lane bits -> src lane.)

Rounds.  A shuffle moves one 32-bit word per lane: each lane *sends* one word and *receives*
one.  We run one round per destination word index rho, and let the round fill, in lane l, the
destination word ``rho ^ N l`` for a linear map N (lane bits -> destination word bits) that we
choose.  Substituting r = rho ^ N l into C, in round rho lane l reads

    source lane  = Crl rho ^ A l,      A = Crl N ^ Cll
    source word  = Crr rho ^ B l,      B = Crr N ^ Clr

A shuffle lets every source lane send a single word, so the word must be a function of the
source lane: B = M A for some linear M (equivalently ker A is inside ker B).  The sender then
sends word ``Crr rho ^ M Crl rho ^ M s`` (s = its own lane id): a select chain over 2^rank(M)
words.  The receiver puts round rho into word rho ^ N l: a select over 2^rank(N) rounds.

Choosing N.  N = 0 is the textbook receiver-driven plan (R rounds, R = number of destination
words).  But if A is the identity (every lane reads lane ``l ^ Crl rho``, an xor shuffle), the
rounds with Crl rho = 0 need no shuffle at all: 2^(R - rank Crl) of the R rounds are local.
Worked example, the register<->lane transposition (r0 l0) on 2 registers: C sends dst (r0) to
src lane bit 0 and dst lane bit 0 to src r0.  With N = (l0 -> r0): A = I, B = (l0 -> r0); round 0
is local (lane l keeps its word l0), round 1 is an xor shuffle with lane ^ 1 sending word (l0 ^ 1): one
shuffle for two registers, the "Ship" trick of Triton PR #7558.  When a destination lane bit has
no source-lane component but a source-register one (Cll e_j = 0, Clr e_j != 0, a "missing lane
row" in Triton's words), N = 0 is infeasible (lanes l and l ^ e_j read the same source lane but
want different words): N must map e_j to a register bit r with Crl r != 0, which makes them read
different lanes.  We enumerate a small set of candidate N per lane bit (0, the solution that
makes A e_j = e_j, and the unit register bits for missing rows) and keep the cheapest feasible.

Packing.  Elements of 8 or 16 bits travel packed: a register bit b of the destination whose
C-image is exactly a source register bit a, with no other destination bit touching a, moves in
lockstep (element pairs (x, x ^ e_a) stay pairs); up to 32/bits elements share a word.  64-bit
elements move as two 32-bit halves through the same rounds.

Broadcast.  Source broadcast is resolved by C (minimal-norm preimages: every copy reads the
canonical source).  A destination lane broadcast is a zero column of C (A e_j = B e_j = 0: the
lanes read the same word from the same lane).  Register broadcast is removed before and
restored by the final rename.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dialect import f2
from .cost_weights import HAND_SET, CostWeights
from .hardware import deposit
from .instructions import ShuffleMode
from .plan import ShuffleRound, ThreadAffine, WarpShufflePlan


def _drop_bit(v: int, bit: int) -> int:
    """Remove bit ``bit`` from v, shifting the higher bits down."""
    return (v & ((1 << bit) - 1)) | ((v >> (bit + 1)) << bit)


@dataclass(frozen=True)
class LaneConversion:
    """C restricted to (register, lane), as integer columns (see the module docstring)."""

    src_registers: int           # number of source register bits (unique registers)
    dst_registers: int
    lane_bits: int
    reg_to_reg: tuple[int, ...]  # Crr, one per dst register bit
    reg_to_lane: tuple[int, ...]  # Crl
    lane_to_reg: tuple[int, ...]  # Clr, one per dst lane bit
    lane_to_lane: tuple[int, ...]  # Cll
    # Warp-dependent offsets (Cwr, Cwl), one per warp bit: nonzero only when a source that is
    # broadcast over warps lets every warp convert on its own although C moves warp bits into
    # registers or lanes (see ``planner._warp_local_columns``).
    warp_to_reg: tuple[int, ...] = ()
    warp_to_lane: tuple[int, ...] = ()


@dataclass(frozen=True)
class ShuffleCost:
    shuffles: int
    selects: int
    packs: int
    weights: CostWeights = field(default=HAND_SET, compare=False)   # the target's constants

    @property
    def weight(self) -> float:
        # the units of ``PlanCost.weight`` (``lowering.cost_weights``)
        return self.weights.shuffle * self.shuffles + self.weights.alu_op * (self.selects + self.packs)


def select_count(send_rank: int, rounds: int, src_words: int, receive_rank: int, dst_words: int) -> int:
    """Selects to pick the sent word in every round and the received round for every word.

    A lane-dependent choice among 2^k words can be made two ways: a select chain per use
    (2^k - 1 selects for each of the ``rounds``) or k butterfly stages that permute the whole
    word array in place (stage i swaps words w and w ^ m_i in lanes whose bit is set: one
    select per word per stage).  Example: k = 3 over 8 words: 7 * 8 = 56 chained, 3 * 8 = 24
    butterfly.  The emitter takes the cheaper; so does the cost.
    """
    send = min(((1 << send_rank) - 1) * rounds, send_rank * src_words)
    receive = min(((1 << receive_rank) - 1) * dst_words, receive_rank * rounds)
    return send + receive


def exact_select_count(plan: WarpShufflePlan, warp_size: int, num_warps: int = 1) -> int:
    """Selects of ``plan`` (per 32-bit word), the cheaper of two emissions (``select_count``):

    * chains, counted exactly by enumerating the lanes: each shuffled round needs (number of
      distinct words its lanes send - 1) selects; each destination word needs (number of
      distinct sources over the lanes - 1), where a source is a shuffled round's result or,
      for a local round, the source word the lane keeps.  Worked example, the transposition
      (r0 l0) on two registers: round 1 sends x1 or x0 (1 select); destination word d keeps
      x_d (local) or takes the shuffled word (1 select each): 3 selects, Triton's "Ship" count.
    * butterflies (``select_count``).
    """
    chain = chain_select_count(plan, warp_size, num_warps)
    send_rank = max((f2.rank(r.send_word.lane) for r in plan.rounds), default=0)
    butterfly = select_count(send_rank, len(plan.rounds), len(plan.src_words), f2.rank(plan.receive_round.lane),
                             len(plan.dst_words))
    return min(chain, butterfly)


def chain_select_count(plan: WarpShufflePlan, warp_size: int, num_warps: int = 1,
                       per_warp_picks: bool = False) -> int:
    """The chains' selects of ``exact_select_count`` (``per_warp_picks``: the receive round
    evaluated per warp too, not in warp 0 only)."""
    import numpy as np

    # every (warp, lane) pair, flattened: warp-dependent choices are selects too
    lanes = np.tile(np.arange(warp_size, dtype=np.int64), num_warps)
    warps = np.repeat(np.arange(num_warps, dtype=np.int64), warp_size)
    chain = 0
    sends = [np.broadcast_to(np.asarray(r.send_word.evaluate(lanes, warps)), lanes.shape) for r in plan.rounds]
    local = np.array([r.mode is ShuffleMode.LOCAL for r in plan.rounds])
    for rnd, send in zip(plan.rounds, sends):
        if rnd.mode is not ShuffleMode.LOCAL:
            chain += len(np.unique(send)) - 1
    picked = plan.receive_round.evaluate(lanes, warps) if per_warp_picks else plan.receive_round.evaluate(lanes)
    picks = np.broadcast_to(np.asarray(picked), lanes.shape)
    send_table = np.stack(sends) if sends else np.zeros((0, warp_size), dtype=np.int64)
    for d in range(len(plan.dst_words)):
        if not plan.dst_words[d]:
            continue  # a phantom word (see ``with_phantom_registers``): received, never used
        rho = d ^ picks
        # a source is (round, -1) for a shuffled round, or (-1, word) for a local round's kept word
        keys = np.where(local[rho], -1 - send_table[rho, np.arange(len(lanes))], rho)
        chain += len(np.unique(keys)) - 1
    return chain


def selects_with_warp_choices(plan: WarpShufflePlan, warp_size: int, num_warps: int = 1) -> int:
    """``exact_select_count``, except where a kept, sent or received word depends on the warp:
    the butterfly count is per lane and misses those, so the chains count.  Example (gfx942, i8,
    8 waves, a source broadcast over the waves): one local round, each wave keeps its own
    register of 4: ``exact_select_count`` says 0, the final code has 3 v_cndmask, and so does
    this count.  (The planner ranks by ``exact_select_count``; the choice against stock,
    ``lowering.choosing.stock_bounds``, counts with this one.)"""
    if any(plan.receive_round.warp) or any(any(r.send_word.warp) for r in plan.rounds):
        return max(exact_select_count(plan, warp_size, num_warps),
                   chain_select_count(plan, warp_size, num_warps, per_warp_picks=True))
    return exact_select_count(plan, warp_size, num_warps)


def _solve_linear(a_columns, b_columns, src_bits: int):
    """M (one image per source lane bit) with M a_j = b_j for every j, zero off span(a); None if
    inconsistent (some XOR of a's vanishes while the same XOR of b's does not).

    ``EchelonBasis`` numbers every insertion, dependent or not, so a combination mask indexes
    the list of images ``images`` directly.
    """
    basis = f2.EchelonBasis()
    images = []
    for a, b in zip(a_columns, b_columns):
        residue, combo = basis.reduce(a)
        if residue == 0 and f2.apply_columns(images, combo) != b:
            return None
        basis.insert(a)
        images.append(b)
    return _completed(basis, images, src_bits)


def _completed(basis: "f2.EchelonBasis", images: list, src_bits: int):
    """M from the consistent system so far (``basis`` of the a's, ``images`` the b's, in
    insertion order), completed to the whole lane space with the rest mapped to 0; ``basis``
    and ``images`` are changed."""
    for i in range(src_bits):  # complete to the whole lane space, mapping the rest to 0
        basis.insert(1 << i)
        images.append(0)
    return tuple(f2.apply_columns(images, basis.express(1 << i)) for i in range(src_bits))


def _consistent_choices(columns: list, src_bits: int):
    """``(choice, M)`` for each combination ``choice`` of one option per lane bit (an option:
    ``(n_j, a_j, b_j)``), in ``itertools.product``'s order, whose system M a_j = b_j is
    consistent, M as ``_solve_linear(a, b, src_bits)`` gives it.  The elimination of a prefix
    of columns is shared by every combination extending it, and an inconsistent prefix ends them
    all at once (``_solve_linear`` would reject each of them at that column)."""
    last = len(columns)
    chosen: list = []

    def extend(j: int, basis: "f2.EchelonBasis", images: list):
        if j == last:
            yield tuple(chosen), _completed(basis, images, src_bits)
            return
        for option in columns[j]:
            a, b = option[1], option[2]
            residue, combo = basis.reduce(a)
            if residue == 0 and f2.apply_columns(images, combo) != b:
                continue
            grown = basis.copy()
            grown.insert(a)
            chosen.append(option)
            yield from extend(j + 1, grown, images + [b])
            chosen.pop()

    yield from extend(0, f2.EchelonBasis(), [])


def plan_shuffles(conv: LaneConversion, src_words_regs, dst_words_regs, elements_per_word: int,
                  words_per_element: int, warp_size: int, src_broadcast_lanes: tuple[int, ...] = (),
                  max_candidates: int = 4096,
                  weights: CostWeights = HAND_SET) -> tuple[WarpShufflePlan, ShuffleCost] | None:
    """The cheapest receiver-driven shuffle plan for ``conv`` (word-level), or None.

    ``src_broadcast_lanes``: source lane bits with a zero basis (copies), usable as alternative
    sources (see the options below)."""
    nrd, nl = conv.dst_registers, conv.lane_bits
    crr, crl, clr, cll = conv.reg_to_reg, conv.reg_to_lane, conv.lane_to_reg, conv.lane_to_lane
    options = _lane_options(conv, src_broadcast_lanes, max_candidates)
    best = None
    rank_crl = f2.rank(crl)
    # Column j of N, A and B depends on the option taken for lane bit j alone: computed once per
    # option, not once per combination (there are up to ``max_candidates`` of them).
    columns = [[(option[0], f2.apply_columns(crl, option[0]) ^ cll[j] ^ option[1],
                 f2.apply_columns(crr, option[0]) ^ clr[j]) for option in opts]
               for j, opts in enumerate(options)]
    for choice, m in _consistent_choices(columns, nl):
        n = tuple(c[0] for c in choice)
        a = tuple(c[1] for c in choice)
        a_is_identity = all(a[j] == 1 << j for j in range(nl)) and not any(conv.warp_to_lane)
        rounds = 1 << nrd
        local = (1 << (nrd - rank_crl)) if a_is_identity else 0
        shuffles = (rounds - local) * words_per_element
        selects = select_count(f2.rank(m), rounds, len(src_words_regs), f2.rank(n), len(dst_words_regs))
        selects *= words_per_element
        packs = 0
        if elements_per_word > 1:
            packs = (len(src_words_regs) + len(dst_words_regs)) * (elements_per_word - 1)
        cost = ShuffleCost(shuffles, selects, packs, weights)
        key = (cost.weight, shuffles)
        if best is None or key < best[0]:
            best = (key, n, a, m, a_is_identity, cost)
    if best is None:
        return None
    _, n, a, m, a_is_identity, cost = best
    plan = WarpShufflePlan(elements_per_word, words_per_element, tuple(src_words_regs),
                           _shuffle_rounds(conv, a, m, a_is_identity), ThreadAffine(0, tuple(n)),
                           tuple(dst_words_regs))
    return plan, cost


def _lane_options(conv: LaneConversion, src_broadcast_lanes: tuple[int, ...], max_candidates: int) -> list:
    """The candidates per destination lane bit that :func:`plan_shuffles` tries every
    combination of, cut down to about ``max_candidates`` combinations."""
    nrd, nl = conv.dst_registers, conv.lane_bits
    crr, crl, clr, cll = conv.reg_to_reg, conv.reg_to_lane, conv.lane_to_reg, conv.lane_to_lane
    crl_basis = f2.EchelonBasis(crl)
    crr_basis = f2.EchelonBasis(crr)

    # Options per destination lane bit j: (N e_j, K e_j).  K adds a *source broadcast* lane
    # direction (a source lane bit whose basis is zero: lanes l and l ^ e_k hold the same data),
    # so that destination lanes wanting different registers of one source lane can read
    # different copies of it instead.  C + K is still a correct conversion: src(K x) = 0.
    options = []
    for j in range(nl):
        opts = [(0, 0)]
        want = cll[j] ^ (1 << j)  # makes A e_j = e_j
        combo = crl_basis.express(want) if want else 0
        if combo is not None and want:
            opts.append((combo, 0))
        if cll[j] == 0 and clr[j] != 0:  # a "missing lane row"
            opts.extend((1 << k, 0) for k in range(nrd) if crl[k] != 0 and (1 << k, 0) not in opts)
            # or: fill, in lane l ^ e_j, the word whose source register cancels Clr e_j (lanes l
            # and l ^ e_j then read the same word of the same lane in every round, each keeping
            # a different destination word); needs destination words enough, see phantoms
            cancel = crr_basis.express(clr[j])
            if cancel and (cancel, 0) not in opts:
                opts.append((cancel, 0))
            opts.extend((0, 1 << k) for k in src_broadcast_lanes)
        options.append(opts)
    total = 1
    for o in options:
        total *= len(o)
    if total > max_candidates:
        options = [o[:3] if len(o) > 3 else o for o in options]
        total = 1
        for o in options:
            total *= len(o)
        if total > max_candidates:
            options = [o[:2] for o in options]
    return options


def _shuffle_rounds(conv: LaneConversion, a, m, a_is_identity: bool) -> tuple[ShuffleRound, ...]:
    """One round per destination register index rho: who sends which word, who reads it."""
    crr, crl = conv.reg_to_reg, conv.reg_to_lane
    rounds = []
    for rho in range(1 << conv.dst_registers):
        lane_const = f2.apply_columns(crl, rho)
        word_const = f2.apply_columns(crr, rho) ^ f2.apply_columns(m, lane_const)
        # warp w shifts the source lane by Cwl w and the source word by Cwr w; the sender (same
        # warp) sends word base ^ M s ^ (Cwr ^ M Cwl) w
        send_warp = tuple(cwr ^ f2.apply_columns(m, cwl) for cwr, cwl in zip(conv.warp_to_reg, conv.warp_to_lane))
        send = ThreadAffine(word_const, m, send_warp if any(send_warp) else ())
        source = ThreadAffine(lane_const, a, conv.warp_to_lane if any(conv.warp_to_lane) else ())
        if a_is_identity:
            mode = ShuffleMode.LOCAL if lane_const == 0 else ShuffleMode.XOR
        else:
            mode = ShuffleMode.INDEX
        rounds.append(ShuffleRound(send, source, mode))
    return tuple(rounds)


def with_phantom_registers(conv: LaneConversion, count: int) -> LaneConversion | None:
    """``conv`` with ``count`` extra destination register bits whose words are thrown away.

    Rounds are indexed by destination words, so a destination with fewer registers than the
    source gets fewer rounds than some conversions need.  Example: 64 elements, source 2 per
    lane (registers = element bit 0), destination 1 per lane in 2 warps... within a warp, lanes 0
    and 1 both want a register of source lane 0: two rounds are needed but the destination has
    one word.  A phantom register bit p, with C(p) = the source register bit those lanes
    disagree on, doubles the rounds: N sends lane bit 0 to p, so lane 1 fills its real word in
    round p (reading register 1) while lane 0 fills the phantom word.  Triton pads the register
    dims of both layouts to the same size for the same reason.
    """
    used = f2.EchelonBasis(conv.reg_to_reg)
    wanted = [c for c in conv.lane_to_reg if c and not used.contains(c)]
    units = [1 << a for a in range(conv.src_registers)]
    images = []
    for c in wanted + [u for u in units if u not in wanted]:
        if len(images) == count:
            break
        if used.insert(c):
            images.append(c)
    if len(images) < count:
        return None
    return LaneConversion(conv.src_registers, conv.dst_registers + count, conv.lane_bits,
                          conv.reg_to_reg + tuple(images), conv.reg_to_lane + (0,) * count,
                          conv.lane_to_reg, conv.lane_to_lane, conv.warp_to_reg, conv.warp_to_lane)


def packing_pairs(conv: LaneConversion, max_pairs: int) -> list[tuple[int, int]]:
    """(dst register bit b, src register bit a) pairs that can travel packed in one word.

    b qualifies when C(e_b) is exactly (e_a, no lane) and no other column of C has bit a in its
    source-register part (so the element at sub-position 1 of every word is the e_a-neighbour of
    the element at sub-position 0, on both sides).
    """
    pairs = []
    used_a = set()
    for b in range(conv.dst_registers):
        if len(pairs) >= max_pairs:
            break
        img = conv.reg_to_reg[b]
        if conv.reg_to_lane[b] or img == 0 or img & (img - 1):
            continue
        a = img.bit_length() - 1
        if a in used_a:
            continue
        others = [c for k, c in enumerate(conv.reg_to_reg) if k != b] + list(conv.lane_to_reg) + list(conv.warp_to_reg)
        if any(c >> a & 1 for c in others):
            continue
        pairs.append((b, a))
        used_a.add(a)
    return pairs


def word_level(conv: LaneConversion, pairs: list[tuple[int, int]]) -> LaneConversion:
    """Remove the packed bits: dst register bits b and src register bits a of ``pairs``."""
    drop_a = sorted((a for _, a in pairs), reverse=True)

    def squeeze_src(v):
        for a in drop_a:
            v = _drop_bit(v, a)
        return v

    keep = [k for k in range(conv.dst_registers) if k not in {b for b, _ in pairs}]
    return LaneConversion(
        conv.src_registers - len(pairs), conv.dst_registers - len(pairs), conv.lane_bits,
        tuple(squeeze_src(conv.reg_to_reg[k]) for k in keep), tuple(conv.reg_to_lane[k] for k in keep),
        tuple(squeeze_src(c) for c in conv.lane_to_reg), conv.lane_to_lane,
        tuple(squeeze_src(c) for c in conv.warp_to_reg), conv.warp_to_lane)


def word_registers(num_register_bits: int, packed_positions: list[int]) -> list[tuple[int, ...]]:
    """Word w -> the unique registers it packs, sub-element i at the packed bits of i."""
    rest = tuple(p for p in range(num_register_bits) if p not in packed_positions)
    words = []
    for w in range(1 << len(rest)):
        base = deposit(w, rest)
        words.append(tuple(base | deposit(i, tuple(packed_positions)) for i in range(1 << len(packed_positions))))
    return words
