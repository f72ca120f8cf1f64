"""Which lowering a conversion gets: one of our verified candidates, or stock Triton's own.

Stock Triton's lowering is a candidate everywhere.  A kernel converts on its critical path, in
a dependent chain (a round trip A -> B -> A, each conversion waiting for the one before): a
shared-memory plan that overlaps across independent conversions pays its whole latency there,
so a pick that beats stock in an independent harness can lose to it in a kernel (measured:
docs/lowering-choice.md, 'What the rules rest on').  So the choice has two parts, both fitted
to chain times (``benchmarks/plan_choice.py fit``, model in ``choice_model.json`` beside this
module, accuracy on held-out folds in ``benchmarks/results/choice_fit.md``):

1. ``rank``: a linear cost per candidate (``FEATURES``, per warp) in microseconds per round
   trip; the cheapest candidate is our pick;
2. ``gate``: per plan family (``family_of``: scope, method, matrix accesses, one warp or more,
   and whether the pick beats stock's own lowering where that is predictable: ``STOCK_HALVED``),
   the pick is kept only where, over the family's training conversions, the geometric mean gain
   over stock exceeds the family's own error (mean log ratio + 2 standard errors < 0).  Where the
   model cannot show that, the convert is left to Triton, and the remark says so.

Stock's lowering enters the family where it can be predicted exactly (``lowering.choosing.stock_lowering``:
stock's warp shuffles): an unpacked shuffle pick that moves at most half as many words as stock's
shuffles is family ``.../half-stock-shuffles``.  Example:
``blocked<[1, 8], [2, 16]> -> blocked<[1, 4], [2, 16]>`` of 32x16 i32, 4 warps: stock shuffles
64 words per thread, our pick 32: ``lane/shuffle/warps/half-stock-shuffles`` (a family whose
training conversions all ran faster than stock: docs/lowering-choice.md, 'What the rules rest on').

Worked example (the model fitted on an H100, triton 3.6): ``blocked<[1, 8]> -> blocked<[1, 4]>``
of 64x128 f16, 4 warps is a lane-scope conversion whose pick goes through shared memory, family
``lane/shared/warps``; that family's picks ran slower than stock in a chain: left to Triton,
whose 64 shuffles beat the shared-memory pick (same page).

Which of the two parts decides is the model file's ``rule``.  The shipped model for sm_90 +
triton 3.6 now decides **per conversion** (``STOCK_SHUFFLES``, ``choose_by_stock_shuffles``): the
family gate above was fitted on timings of older emitters, and on fresh conversions timed with
today's (``benchmarks/plan_choice.py --fresh``) it sent to stock most of the conversions where our
pick ran faster, where the per-conversion rule came closer to the per-conversion best of stock
and the pick (measured: docs/lowering-choice.md, 'Per conversion on sm_90 with triton 3.6').
Its first step is for CTAs of one warp (``one_warp_choice``: a shared-memory pick goes to stock,
a shuffle pick stays only where it provably gains; docs/lowering-choice.md, 'One-warp CTAs on
sm_90 with triton 3.6'); its second for picks whose code is known to gain nothing on stock's
(``stock_shared_choice``: bytes through matrices, 16-bit elements where matrices are in play,
shuffles that are all broadcasts, and stock's own shared-memory code, the last marked ``twin`` so
that the pass keeps it in a kernel with other islands).  A model that ``plan_choice.py fit``
writes is a family gate (``FAMILY_GATE``), kept for comparison.

The model answers for the target and Triton release it was fitted on (``applies_to``).  Elsewhere
(another release, such as 3.9, or another target) nothing was measured, and the cost model's
rank 0 is kept only where it provably gains: it needs no more of any costly instruction than
stock's lowering of the pair issues at least, and fewer of some kind (``choose_dominant``,
``lowering.choosing.stock_bounds``; checked against both final codes by
``benchmarks/studies/stock_dominance.py``); a tie costs an island's compile time for no gain.  On the measured rows that rule is no better
than the family gate (``benchmarks/results/choice_dominance_eval.md``), so the gate stays where
it answers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..cost import plan_cost
from ..instructions import AccessShape, BarrierScope, ShuffleMode
from ..plan import STOCK, Method, Scope, SharedAccess, Stock
from ..remark_words import detail
from .measured_choices import same_release
from .stock_bounds import dominance
from .stock_lowering import stock_warp_shuffles
from ..element_type import storage_bits_of
from .stock_shared import is_stock_twin, stock_matrix_pairs

MODEL_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "choice_model.json")
FEATURES = ("shuffles", "alu", "shared_accesses", "wavefronts", "warp_barriers", "cta_barriers",
            "matrix_accesses", "scratch_kb")
MIN_FAMILY = 5   # a family with fewer training conversions cannot show a gain: stock
# The plugin's setting ``stock_gate`` (``enable(stock_gate=False)``, ``LINEAR_LAYOUTS_OPTIONS``
# or this older variable set to "off"): never leave a conversion to stock on the model's word, as
# ``ll-lower-conversions{stock_gate=false}`` does for one pipeline.  The unit tests set it (their
# subject is our islands' structure and correctness), except those of the gate itself.
GATE_VARIABLE = "LINEAR_LAYOUTS_STOCK_GATE"
# The model file's "rule": how its choice is made (absent: the family gate).
FAMILY_GATE = "family-gate"
STOCK_SHUFFLES = "stock-shuffles"


def plan_features(plan) -> tuple[float, ...]:
    """The plan's per-warp counts in ``FEATURES`` order."""
    cost = plan_cost(plan)
    matrix = sum(n for key, n in cost.counts.items() if isinstance(key, AccessShape) and key.form.is_matrix)
    warp_barriers = cost.counts.get(BarrierScope.WARP, 0)
    cta_barriers = cost.counts.get(BarrierScope.CTA, 0) + cost.counts.get(BarrierScope.CLUSTER, 0)
    return (float(cost.shuffles), float(cost.selects + cost.packs), float(cost.shared_stores + cost.shared_loads),
            float(cost.store_wavefronts + cost.load_wavefronts), float(warp_barriers), float(cta_barriers),
            float(matrix), cost.scratch_bytes / 1024)


def uses_matrix_accesses(plan) -> bool:
    """Whether ``plan`` stores or loads shared memory with ``stmatrix``/``ldmatrix``."""
    return any(isinstance(key, AccessShape) and key.form.is_matrix for key in plan_cost(plan).counts)


def family_of(plan, scope: str) -> str:
    """``scope/method[/matrix]/1warp|warps``: what the gate decides by.  Example: a shared-memory
    plan with ldmatrix of a 4-warp lane-scope conversion is ``lane/shared/matrix/warps``."""
    return "/".join([str(scope), str(plan.method)] + (["matrix"] if uses_matrix_accesses(plan) else [])
                    + ["1warp" if _warps(plan) == 1 else "warps"])


def _warps(plan) -> int:
    """The warps the conversion's layouts span (1 where they have no warp dimension)."""
    return plan.src.in_dim_size_or_one("warp")


STOCK_HALVED = "half-stock-shuffles"


def halves_stock_shuffles(plan) -> bool:
    """Whether ``plan`` is a warp-shuffle plan moving one element per word (unpacked) that needs
    at most half the shuffles stock Triton's lowering of the same pair does.  Packed plans are
    left out: with the same shuffle count as stock, our packed shuffles run slower than stock's
    (their packing selects; docs/lowering-choice.md, 'What the rules rest on'), so their count
    says little.  Example: stock 64, ours 32: True."""
    if plan.method is not Method.SHUFFLE or plan.scope is not Scope.LANE or plan.shuffle.elements_per_word != 1:
        return False
    stock = stock_warp_shuffles(plan.src, plan.dst, plan.element_bits, plan.target)
    return stock is not None and 2 * plan_cost(plan).shuffles <= stock


SUB_WORD = "sub-word"


def shuffles_sub_word(plan) -> bool:
    """Whether ``plan`` moves elements narrower than a 32-bit word through warp shuffles: each
    shuffle moves a whole word, so 8- and 16-bit elements are packed into words before and
    unpacked after (byte permutes and selects), work the shuffle count does not show.  Example:
    an i16 tensor converted by a shuffle plan: True; the same plan on i32: False."""
    return plan.method is Method.SHUFFLE and plan.element_bits < 32


def gated_family_of(plan, scope: str) -> str:
    """``family_of``, with ``/half-stock-shuffles`` where ``halves_stock_shuffles`` and
    ``/sub-word`` where ``shuffles_sub_word``: the family the gate decides by
    (``benchmarks/plan_choice.py fit`` fits the gates by it)."""
    family = family_of(plan, scope)
    if halves_stock_shuffles(plan):
        family = f"{family}/{STOCK_HALVED}"
    return f"{family}/{SUB_WORD}" if shuffles_sub_word(plan) else family


@dataclass(frozen=True)
class Model:
    target: str
    triton: str
    measured_on: str
    weights: Optional[tuple]   # None: the planner's order (the cost model's rank 0) ranks
    gates: dict
    rule: str = FAMILY_GATE    # FAMILY_GATE (``gates`` decide) or STOCK_SHUFFLES (per conversion)

    def applies_to(self, target_name: str, triton_version: str) -> bool:
        """Fitted on this target with this release (major.minor)."""
        return target_name == self.target and same_release(self.triton, triton_version)

    def cost(self, plan) -> float:
        return sum(w * f for w, f in zip(self.weights, plan_features(plan)))

    def rank(self, plans: list) -> int:
        if self.weights is None:
            return 0
        costs = [self.cost(p) for p in plans]
        return min(range(len(plans)), key=lambda k: (costs[k], k))


@lru_cache(maxsize=4)
def load_model(path: str = MODEL_FILE) -> Optional[Model]:
    if not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)
    if tuple(data["features"]) != FEATURES:
        return None   # fitted to other features: refit (benchmarks/plan_choice.py fit)
    weights = None if data["weights"] is None else tuple(data["weights"])
    rule = data.get("rule", FAMILY_GATE)
    if rule not in (FAMILY_GATE, STOCK_SHUFFLES):
        return None   # a rule this version does not know: the dominance rule answers instead
    return Model(data["target"], data["triton"], data.get("measured_on", ""), weights, data.get("gates", {}), rule)


@dataclass(frozen=True)
class Choice:
    plan: object            # the plan to emit, or None: stock Triton's lowering
    rank: "int | Stock"     # its rank in the planner's order, or STOCK
    family: str
    reason: str             # for the remark
    twin: bool = False      # stock, because the pick is stock's own code (kept where the kernel has islands)
    answered_by: str = ""   # the function of this module whose question decided (choice_order names its rule)


def gate_turned_off() -> bool:
    """Whether the setting ``stock_gate`` turns the choice off for this process (every pick is
    ours); ``lowering.settings`` has it from the plugin's configuration."""
    from ..settings import current

    return not current().stock_gate


def stock_shuffles_reason(stock: int, why_not_ours: str, model: Model) -> str:
    """The remark of rule ``STOCK_SHUFFLES`` leaving a conversion to stock, which moves it with
    ``stock`` warp shuffles a thread; ``why_not_ours`` says what our side needs."""
    return (f"stock Triton's lowering: it moves this lane-scope conversion with {stock} warp shuffle(s) a thread, "
            f"{why_not_ours} (a rule chosen on timings on {model.measured_on}, triton {model.triton})"
            + detail(f"rule {STOCK_SHUFFLES} of lowering/choosing/choice_model.json"))


ONE_WARP_MEASURED = ("in a CTA of one warp our shared-memory picks ran 1.17x stock (76 conversions) and 1.06x "
                     "with ldmatrix/stmatrix (33), and FLA's one-warp kernels lost 4-16% with them; our shuffle "
                     "picks there gain only where they need less than stock's floor "
                     "(docs/lowering-choice.md, 'One-warp CTAs on sm_90 with triton 3.6')")


def one_warp(plan) -> bool:
    """A lane-scope conversion whose layouts span one warp: a kernel of ``num_warps=1`` (what was
    measured: a conversion across the CTAs of a cluster is left to the rest of the rule)."""
    return plan.scope is Scope.LANE and _warps(plan) == 1


def one_warp_choice(plan, rank: int, family: str) -> Optional[Choice]:
    """In a CTA of one warp: stock for a shared-memory pick; a shuffle pick only where it
    provably gains on stock's floor (``choose_dominant``).  None for a conversion over more
    warps (the rest of ``choose_by_stock_shuffles`` decides).

    Why: with one warp, stock's shared-memory round trip synchronises with ``bar.warp.sync``
    alone, so the barriers and wavefronts our plans save elsewhere are not there to save.
    Measured (H100, triton 3.6): over the committed timings of ``plan_choice.py``, our one-warp
    shared-memory picks ran 1.17x stock (lane/shared/1warp, 76 conversions) and 1.06x
    (lane/shared/matrix/1warp, 33), our one-warp shuffle picks 1.04x (14); in FLA's
    ``chunk_gla``, the one-warp kernels with our islands ran 4-16% slower than stock
    (``benchmarks/results/one_warp_choice.md``, ``fla_gla_kernels_guards.md``).  Example: FLA's
    ``chunk_fwd_kernel_h``, 32x32 f32 mma -> blocked over one warp, our pick through shared memory:
    stock."""
    if not one_warp(plan):
        return None
    if plan.method is Method.SHARED:
        return Choice(None, STOCK, family, f"stock Triton's lowering: {ONE_WARP_MEASURED}",
                      answered_by="one_warp_choice")
    verdict = dominance(plan)
    if verdict.gains:
        return Choice(plan, rank, family, "", answered_by="one_warp_choice")
    return Choice(None, STOCK, family, f"stock Triton's lowering: {verdict.reason()}; {ONE_WARP_MEASURED}",
                  answered_by="one_warp_choice")


TWIN_MEASURED = ("alone, with stock's exact instructions, our islands ran 1.043x stock (251 measured conversions, "
                 "docs/lowering-choice.md, 'Twins of stock's code on sm_90 with triton 3.6') and cost an island's compile time; it stays ours only in a "
                 "kernel with other islands" + detail("lowering_choice.kept_among_islands"))


BYTE_MATRIX_MEASURED = ("on the six committed held-out draws (H100 and H200, triton 3.6), our 8-bit picks with ldmatrix/stmatrix "
                        "where stock stores and loads plain vectors ran 1.01x stock in geomean, 12 of 30 above 1.05x "
                        "(a matrix access moves whole 32-bit words, and our islands pack bytes into them with more "
                        "instructions than Triton's byte vectors: docs/lowering-choice.md, 'Bytes through matrices')")


def bytes_through_matrices(plan) -> bool:
    """Whether ``plan`` moves 8-bit elements (``i8``, fp8; ``i1`` as bytes) through shared memory
    with ``ldmatrix``/``stmatrix`` where stock Triton's tile search finds no matrix pair
    (``stock_shared.stock_matrix_pairs`` empty: stock stores and loads plain vectors).
    Example: ``blocked<[4, 2], [8, 4], [1, 2]> -> blocked<[1, 1], [8, 4], [2, 1]>`` of 64x16 i8
    over 2 warps, our pick storing with ``stmatrix``: True; the same pick on i16: False."""
    if plan.method is not Method.SHARED or plan.shared is None or storage_bits_of(plan.element_bits) != 8:
        return False
    if not uses_matrix_accesses(plan):
        return False
    return stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target) == []


SIXTEEN_BIT_MATRIX_MEASURED = ("on the five held-out draws it was written on (H100 and H200, triton 3.6), the 94 conversions "
                               "it sends to stock had run 1.002x stock in geomean, 22 above 1.05x and 18 below 0.95x; on "
                               "a draw timed afterwards with and without it, the 17 it changes ran 1.024x stock before "
                               "(5 above 1.05x) and 1.003x with it (none above): "
                               "docs/lowering-choice.md, 'Sixteen bits where matrices are in play'")


def sixteen_bits_where_matrices_are_in_play(plan) -> bool:
    """Whether ``plan`` converts 16-bit elements where ``ldmatrix``/``stmatrix`` is in play: the
    pick stores or loads with them, or stock Triton's tile search finds a matrix pair for the
    conversion (``stock_shared.stock_matrix_pairs``: then stock stores or loads with one), in
    Triton's rounds (a pick that moved rounds into a larger buffer, ``rounds_merged``, waits at
    fewer barriers than stock: not this rule's).  Whatever the pick's method: a shuffle pick of
    such a conversion too.

    Why: there our islands and stock's code differ in how 16-bit halves meet in 32-bit words
    and in which accesses run at all, and the timings do not separate a gain from a loss by the
    counts: as many ran faster as slower, and most of the held-out conversions above 1.05x stock
    were of this kind (``SIXTEEN_BIT_MATRIX_MEASURED``).  Example:
    ``blocked<[1], [32], [2]> -> blocked<[2], [32], [2]>`` of 512 i16, our pick storing with
    ``stmatrix`` and loading plain vectors where stock stores and loads plain vectors: True; the
    same conversion of i32: False; 1024 i16 slices over 4 warps whose pick does in one round what
    Triton does in four (``rounds_merged`` 2): False."""
    if storage_bits_of(plan.element_bits) != 16 or plan.method not in (Method.SHARED, Method.SHUFFLE):
        return False
    if plan.shared is not None and plan.shared.rounds_merged:
        return False
    return uses_matrix_accesses(plan) or bool(stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target))


BROADCAST_SHUFFLES_MEASURED = ("the two such picks in the committed timings (H200, triton 3.6) ran 1.29x stock "
                               "(flash-linear-attention's abc_bwd_intra_K, 16 x i32 over 4 warps, 8 broadcasts, in a "
                               "full grid) and 1.50x (a fresh 64 x i32 slice over 2 warps, 64 broadcasts, one CTA an "
                               "SM): docs/lowering-choice.md, "
                               "'Broadcast shuffles'")


def shuffles_only_broadcast(plan) -> bool:
    """Whether ``plan`` is a warp-shuffle plan whose every shuffle is a broadcast: all lanes of a
    warp read the same lane (``source_lane`` has no lane term), as where the destination holds
    every element in every lane.

    Why: a broadcast shuffle delivers one 32-bit word a lane, where a shared-memory load of one
    address (stock's lowering of such a pair) delivers up to 16 bytes to every lane of the warp;
    the pick trades a barrier for four times the instructions, and the two measured picks of this
    kind lost to stock by more than a quarter, one in a full grid and one with one CTA an SM
    (``BROADCAST_SHUFFLES_MEASURED``).  Example: ``blocked<[1], [32], [4]> -> slice<{dim = 1,
    parent = blocked<[1, 1], [1, 32], [2, 2]>}>`` of 16 i32: every lane of the destination holds
    the 8 elements of its warp's half, our pick reads each from the one lane holding it (8
    ``shfl.idx`` with a constant source lane): True; ``blocked<[2], [32], [1]> ->
    blocked<[1], [32], [1]>`` of 64 elements, each lane reading its neighbour: False."""
    if plan.method is not Method.SHUFFLE or plan.shuffle is None:
        return False
    exchanges = [r for r in plan.shuffle.rounds if r.mode is not ShuffleMode.LOCAL]
    return bool(exchanges) and all(not any(r.source_lane.lane) for r in exchanges)


SHARED_IN_ONE_DIRECTION_MEASURED = (
    "timed in the direction a kernel converts (the return trip left to stock" + detail("plan_choice.py --forward")
    + ", H200, triton 3.6), such picks ran 1.085x stock on 120 fresh conversions (17 picks, 10 above 1.05x, best "
    "0.917x) and "
    "1.071x on the 33 conversions of flash-linear-attention's and Liger-Kernel's kernels (5 picks, 2 above 1.05x); "
    "docs/lowering-choice.md, 'One direction at a time'")


def shared_memory_in_tritons_rounds(plan) -> bool:
    """Whether ``plan`` goes through shared memory in Triton's rounds (``rounds_merged`` 0): one
    store, one barrier and one load a round, as stock's own lowering, with other instructions.

    Why: stock's shared-memory lowering is already the swizzled, vectorized one of the paper, and
    a pick of ours that stores and loads differently (other vector widths, ``stmatrix`` or
    ``ldmatrix`` where stock has plain vectors or the other way round) waits at the same barriers
    and moves the same bytes.  Timed in the direction a kernel converts, with the return trip
    stock's, those picks lost (``SHARED_IN_ONE_DIRECTION_MEASURED``): a round trip of two of our
    islands had hidden it, the bytes one loads going straight into the other's stores.  Shuffle
    picks keep their gains there (every one ran at or below stock), and a pick in fewer rounds than
    Triton's waits at fewer barriers (the expert Gluon matmul's A tile: the whole kernel 0.95x):
    neither is this rule's.  Example: ``nvidia_mma`` v3 -> ``blocked<[1, 1], [2, 16], [4, 1]>`` of
    64x16 i32 over 4 warps (flash-linear-attention's gla backward), our pick storing with
    ``stmatrix`` and loading ``ld.shared.v2`` in one round as Triton does: True (it ran 1.19x
    stock); a pick of 8 ``shfl.idx``: False.  Alone in a kernel such a pick goes to stock; beside
    islands of ours it stays one (``STOCK_RULES_AFTER_SHUFFLES``)."""
    if shared_picks_kept():
        return False
    return plan.method is Method.SHARED and plan.shared is not None and not plan.shared.rounds_merged


# A study's switch, no setting of the plugin: True keeps shared-memory picks in Triton's rounds
# ours (the choice before ``shared_memory_in_tritons_rounds``), to time them again or to build
# islands the in-place route can be tested on.  A study or a test sets it in its own process
# (``monkeypatch.setattr(fitted_model, "SHARED_PICKS_KEPT", True)``); the cache key marks it
# (``passes.drop_in.plugin_config.environment_switches``).
SHARED_PICKS_KEPT = False


def shared_picks_kept() -> bool:
    """Whether ``SHARED_PICKS_KEPT`` keeps shared-memory picks in Triton's rounds ours."""
    return SHARED_PICKS_KEPT


def _stores_and_loads_a_stock_pair(plan) -> bool:
    """The pick's (store, load) forms are a pair stock's tile search finds for the conversion."""
    if plan.method is not Method.SHARED or plan.shared is None:
        return False
    accesses = [op for op in plan.shared.ops if isinstance(op, SharedAccess)]
    store = next(op.form.value for op in accesses if op.is_store)
    load = next(op.form.value for op in accesses if not op.is_store)
    return (store, load) in (stock_matrix_pairs(plan.src, plan.dst, plan.element_bits, plan.target) or [])


def _never_a_twin(plan) -> bool:
    return False


def _always_a_twin(plan) -> bool:
    return True


# The picks known to gain nothing on stock's code, in the order they are asked: (the name of the
# function saying whether the rule takes the pick, the remark, whether the pick is a twin of
# stock's code).  By name, looked up when asked: the studies take a rule out by replacing its
# function in this module (``benchmarks/studies/timed_rows.rules_taken_out``).
STOCK_RULES = (
    ("bytes_through_matrices",
     "stock Triton's lowering: our pick moves bytes with ldmatrix/stmatrix where stock stores and loads plain "
     f"vectors; {BYTE_MATRIX_MEASURED}", _never_a_twin),
    ("sixteen_bits_where_matrices_are_in_play",
     "stock Triton's lowering: 16-bit elements where ldmatrix/stmatrix is in play (ours or stock's) in Triton's "
     f"rounds; {SIXTEEN_BIT_MATRIX_MEASURED}", _stores_and_loads_a_stock_pair),
    ("shuffles_only_broadcast",
     "stock Triton's lowering: every warp shuffle of our pick is a broadcast (all lanes read one lane: one word a "
     "lane an instruction, where a shared-memory load of one address gives every lane up to 16 bytes); "
     f"{BROADCAST_SHUFFLES_MEASURED}", _never_a_twin),
    ("is_stock_twin",
     "stock Triton's lowering: our pick stores and loads shared memory as stock does (plain vectors of its width, "
     "no matrix instruction fits)" + detail("lowering/choosing/stock_shared.py") + f"; {TWIN_MEASURED}",
     _always_a_twin),
)

# Asked after the lane-scope rule of ``choose_by_stock_shuffles`` (where stock shuffles, that
# rule's remark says more): the other shared-memory picks in Triton's rounds.  Marked as twins:
# alone they go to stock, in a kernel with islands of ours they stay islands
# (``lowering_choice.kept_among_islands``), since stock's conversions among our islands cost:
# Liger's mHC op ran 1.005x stock with its 11 such picks left to stock beside its 17 other
# islands, 1.000x with all 28 as islands (benchmarks/results/liger_ops_gpu_one_direction.md,
# liger_ops_gpu_mhc.md).
STOCK_RULES_AFTER_SHUFFLES = (
    ("shared_memory_in_tritons_rounds",
     "stock Triton's lowering: our pick goes through shared memory in Triton's rounds, other stores and loads around "
     f"the same barriers; {SHARED_IN_ONE_DIRECTION_MEASURED}", _always_a_twin),
)


def stock_shared_choice(plan, family: str, rules=STOCK_RULES) -> Optional[Choice]:
    """Stock, where the pick's code is known to gain nothing on stock's (``STOCK_RULES``, the
    first that takes it): bytes through matrices where stock uses plain vectors
    (``bytes_through_matrices``), 16-bit elements where matrix instructions are in play
    (``sixteen_bits_where_matrices_are_in_play``; marked ``twin`` where the pick stores and loads
    with a pair stock's search finds), shuffles that are all broadcasts
    (``shuffles_only_broadcast``), or stock's own shared-memory code (``stock_shared.is_stock_twin``,
    marked ``twin``); None elsewhere.  ``rules``: another table of the same form
    (``STOCK_RULES_AFTER_SHUFFLES``)."""
    for takes, reason, twin in rules:
        if globals()[takes](plan):
            return Choice(None, STOCK, family, reason, twin=twin(plan), answered_by=takes)
    return None


def choose_by_stock_shuffles(plan, rank: int, model: Model) -> Choice:
    """Per conversion: our pick, except in a CTA of one warp (``one_warp_choice``), where the
    pick is stock's own code (``stock_shared.is_stock_twin``: alone it can only tie, and with the
    same instructions our islands ran slower; ``twin`` set, the pass keeps it in a kernel that has
    islands anyway), and a lane-scope conversion that stock Triton lowers
    with warp shuffles (``stock_warp_shuffles`` predicts how many) where our pick is not a shuffle
    plan needing at most as many: there, stock; then any other shared-memory pick in Triton's
    rounds (``shared_memory_in_tritons_rounds``): stock.

    Why this line: where stock shuffles, its lowering is already the few-instruction one, and
    a shared-memory pick pays a store, a barrier and a load in the conversion's latency; everywhere
    else stock goes through shared memory, and there our shuffle picks and our picks in fewer
    rounds ran at or below stock, our other shared-memory picks above it once timed in the one
    direction a kernel converts (docs/lowering-choice.md, 'Per conversion on sm_90 with triton
    3.6' and 'One direction at a time').  Example: 64x128 f16, sizePerThread [1, 8] -> [1, 4],
    4 warps: stock shuffles 32 words a thread, our pick goes through shared memory: stock.  A pick with
    32 shuffles where stock needs 64: ours.  FLA's ``chunk_h`` kernel, 16x16 f32 ``nvidia_mma`` v2 ->
    blocked over 4 warps, our pick storing and loading 64-bit vectors as stock does: stock.  An
    8-bit pick with ``ldmatrix``/``stmatrix`` where stock uses plain vectors
    (``bytes_through_matrices``): stock."""
    family = gated_family_of(plan, str(plan.scope))
    answer = (one_warp_choice(plan, rank, family) or stock_shared_choice(plan, family)
              or stock_shuffles_choice(plan, family, model)
              or stock_shared_choice(plan, family, STOCK_RULES_AFTER_SHUFFLES))
    if answer is not None:
        return answer
    return Choice(plan, rank, family, "" if rank == 0 else f"candidate {rank} by the fitted model"
                                                           + detail("lowering/choosing/choice_model.json"),
                  answered_by="choose_by_stock_shuffles")


def stock_shuffles_choice(plan, family: str, model: Model) -> Optional[Choice]:
    """Stock for a lane-scope conversion that stock Triton lowers with warp shuffles
    (``stock_warp_shuffles``) where the pick is not a shuffle plan needing at most as many (the
    lane-scope step of ``choose_by_stock_shuffles``); None elsewhere."""
    if plan.scope is not Scope.LANE:
        return None
    stock = stock_warp_shuffles(plan.src, plan.dst, plan.element_bits, plan.target)
    if stock is None or (plan.method is Method.SHUFFLE and plan_cost(plan).shuffles <= stock):
        return None
    ours = f"{plan_cost(plan).shuffles} warp shuffles" if plan.method is Method.SHUFFLE else f"a {plan.method} plan"
    return Choice(None, STOCK, family, stock_shuffles_reason(stock, f"our pick needs {ours}", model),
                  answered_by="stock_shuffles_choice")


def choose(plans: list, scope: str, model: Model) -> Choice:
    """``plans``: the verified candidates in the planner's order (rank 0 first).  The model's
    cheapest candidate, unless its rule (the family's gate, or ``choose_by_stock_shuffles``)
    says stock."""
    rank = model.rank(plans)
    plan = plans[rank]
    if model.rule == STOCK_SHUFFLES:
        return choose_by_stock_shuffles(plan, rank, model)
    family = gated_family_of(plan, scope)
    gate = model.gates.get(family)
    if gate is None or gate["decision"] != "ours":
        if gate is None:
            why, words = f"no measured conversion of family {family}", "no conversion like it was timed"
        elif gate["n"] < MIN_FAMILY:
            why = f"family {family}: {gate['n']} measured conversion(s), too few to show a gain"
            words = f"{gate['n']} conversion(s) like it were timed, too few to show a gain"
        else:
            why = (f"family {family}: the model's picks ran {gate['geomean_pick_over_stock']:.2f}x stock "
                   f"(spread x{gate['spread']}) over {gate['n']} measured conversions")
            words = (f"on the {gate['n']} conversions like it that were timed, its picks ran "
                     f"{gate['geomean_pick_over_stock']:.2f}x stock's time (spread x{gate['spread']})")
        return Choice(None, STOCK, family, "stock Triton's lowering: the cost model cannot show a gain larger than "
                                        f"its own error here ({words}; timed on {model.measured_on}, triton "
                                        f"{model.triton})" + detail(f"{why}; lowering/choosing/choice_model.json"),
                      answered_by="choose")
    return Choice(plan, rank, family, "" if rank == 0 else f"candidate {rank} by the fitted model"
                                                           + detail("lowering/choosing/choice_model.json"),
                  answered_by="choose")


def choose_dominant(plan) -> Choice:
    """Where nothing was measured: our plan only where it provably gains, needing no more of any
    costly instruction than stock's lowering issues at least and fewer of some kind
    (``lowering.choosing.stock_bounds``); else stock, the remark naming what ours needs more of,
    or that it needs just what stock does.

    Why a tie goes to stock: a plan that needs exactly stock's floor in every kind can at best
    match stock's run time, while its island costs compile time (planning, emission, the
    simulator's proof, the module's re-parse; docs/compile-time.md).  Example: 1024 x i32,
    sizePerThread 4 -> 1 over 4 warps, sm_90 under triton 3.9: our shared-memory plan stores 8
    and loads 8 wavefronts a warp around one barrier, what stock needs at least: stock.  A
    lane-scope plan with 32 warp shuffles where stock's lowering needs 64, and nothing else more:
    ours."""
    verdict = dominance(plan)
    family = family_of(plan, str(plan.scope))
    if verdict.gains:
        return Choice(plan, 0, family, "", answered_by="choose_dominant")
    return Choice(None, STOCK, family, f"stock Triton's lowering: {verdict.reason()}", answered_by="choose_dominant")


def decide(plan, target_name: str, triton_version: str, candidates=None, path: str = MODEL_FILE) -> Optional[Choice]:
    """The model's choice for a conversion whose planner pick is ``plan`` (verified, rank 0);
    where no model answers for this target and release, ``choose_dominant``; None where the
    gate is off (the pick stands).  ``candidates``:
    a callable giving all verified candidates in the planner's order, asked for only when the
    model ranks by its own weights (the verifier runs on each)."""
    if gate_turned_off():
        return None
    if plan.method in (Method.NOOP, Method.RENAME):
        return Choice(plan, 0, family_of(plan, str(plan.scope)), "", answered_by="decide")   # free either way
    model = load_model(path)
    if model is None or not model.applies_to(target_name, triton_version):
        return choose_dominant(plan)
    plans = candidates() if (model.weights is not None and candidates is not None) else [plan]
    return choose(plans or [plan], str(plan.scope), model)


def could_be_ours(model: Model, scope: str, methods, warps: int, stock_shuffles: Optional[int] = None) -> bool:
    """Whether ``choose`` could keep a plan of a ``scope``-scope conversion over ``warps`` warps
    whose candidates all have one of ``methods``.  False: the conversion goes to stock Triton
    whatever the planner builds, so the hook need not build it (``passes.lower_conversions``).

    * rule ``STOCK_SHUFFLES``: False for a conversion over one warp without a shuffle
      candidate (``one_warp_choice``), and for a lane-scope conversion stock moves with warp
      shuffles (``stock_shuffles``: ``stock_warp_shuffles`` of the pair, None where stock does
      not shuffle) that has no shuffle candidate.  Example: 64x128 f16, sizePerThread [1, 8] ->
      [1, 4], 4 warps, where the planner could only go through shared memory: False;
    * a family gate: whether some family such a plan can fall in (every family
      ``gated_family_of`` can name for these, matrix accesses or not, halving stock's shuffles
      or not, sub-word or not) has the gate's decision "ours".  Example: a warp-scope conversion
      with shared-memory candidates only, under a gate that keeps no ``warp/shared/...`` family:
      False."""
    if model.rule == STOCK_SHUFFLES:
        if scope == str(Scope.LANE) and warps == 1 and Method.SHUFFLE not in methods:
            return False                  # one warp: a shared-memory pick goes to stock (one_warp_choice)
        return not (scope == str(Scope.LANE) and stock_shuffles is not None and Method.SHUFFLE not in methods)
    for method in methods:
        for matrix in ((), ("matrix",)):
            family = "/".join([str(scope), str(method), *matrix, "1warp" if warps == 1 else "warps"])
            for suffix in ("", f"/{STOCK_HALVED}", f"/{SUB_WORD}", f"/{STOCK_HALVED}/{SUB_WORD}"):
                gate = model.gates.get(family + suffix)
                if gate is not None and gate["decision"] == "ours":
                    return True
    return False
