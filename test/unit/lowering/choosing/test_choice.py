"""The choice model (lowering/choosing/fitted_model.py): stock Triton's lowering as a candidate, the per-family
gate, the fitted ranking, and where the model answers (its target and Triton release only)."""

import json

import pytest

from linear_layouts.lowering.cost import plan_cost
from linear_layouts.lowering.plan import STOCK, Scope
from linear_layouts.lowering.choosing.stock_bounds import dominance
from linear_layouts.lowering.choosing.stock_lowering import stock_warp_shuffles
from linear_layouts.lowering.choosing.stock_shared import is_stock_twin
from hypothesis import given, settings, strategies as st

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout as _to_linear_layout
from linear_layouts.lowering.choosing import fitted_model as choice
from linear_layouts.lowering.planner import plan_candidates, plan_conversion
from linear_layouts.lowering.verify import verify_plan


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the gate off (test/unit/conftest.py); these tests are about the gate."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


# The model answers for triton 3.6: its layouts as 3.6 reads them, whichever Triton is installed.
RELEASE = TritonConventions((3, 6))


def to_linear_layout(text, shape):
    return _to_linear_layout(text, shape, conventions=RELEASE)


def _blocked(size, threads, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


# The f16 pair: 64x128 f16, sizePerThread [1, 8] -> [1, 4], 4 warps; stock shuffles, the planner
# picks shared memory.
SPT8 = _blocked([1, 8], [4, 8], [4, 1], [1, 0])
SPT4 = _blocked([1, 4], [4, 8], [4, 1], [1, 0])
# column_sum's accumulator: a row sum broadcast over the 4 warps -> one element per thread.
ROW_SUM = "#ttg.slice<{dim = 0, parent = " + _blocked([1, 4], [1, 32], [4, 1], [1, 0]) + "}>"
ONE_PER_THREAD = _blocked([1], [32], [4], [0])


def _pick(src, dst, shape, bits):
    return plan_conversion(to_linear_layout(src, shape), to_linear_layout(dst, shape), bits, "sm_90")


def _model(tmp_path, gates, weights=None, triton="3.6.0", target="sm_90"):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"target": target, "triton": triton, "measured_on": "test GPU",
                                "features": list(choice.FEATURES), "weights": weights, "gates": gates}))
    choice.load_model.cache_clear()
    return str(path)


def test_families_of_known_conversions():
    assert choice.family_of(_pick(SPT8, SPT4, (64, 128), 16), "lane") == "lane/shared/warps"
    assert choice.family_of(_pick(ROW_SUM, ONE_PER_THREAD, (128,), 32), "warp") == "warp/shuffle/warps"
    one_warp = _pick(_blocked([2], [32], [1], [0]), _blocked([1], [32], [1], [0]), (64,), 32)
    assert choice.family_of(one_warp, "lane") == "lane/shuffle/1warp"


def test_plan_features_count_the_plan():
    plan = _pick(_blocked([2], [32], [1], [0]), _blocked([1], [32], [1], [0]), (64,), 32)
    features = dict(zip(choice.FEATURES, choice.plan_features(plan)))
    assert features["shuffles"] == 2 and features["shared_accesses"] == 0 and features["scratch_kb"] == 0


def test_the_shipped_model_leaves_the_f16_pair_to_stock_under_its_release():
    plan = _pick(SPT8, SPT4, (64, 128), 16)
    choice.load_model.cache_clear()
    decision = choice.decide(plan, "sm_90", "3.6.0")
    assert decision is not None and decision.plan is None and decision.rank is STOCK
    assert decision.family == "lane/shared/warps"
    assert decision.reason.startswith("stock Triton's lowering: it moves this lane-scope conversion with 32 warp "
                                      "shuffle(s) a thread, our pick needs a shared plan (a rule chosen on")


def test_the_shipped_model_keeps_warp_local_shuffles():
    plan = _pick(ROW_SUM, ONE_PER_THREAD, (128,), 32)
    choice.load_model.cache_clear()
    decision = choice.decide(plan, "sm_90", "3.6.1")
    assert decision.plan is plan and decision.rank == 0 and decision.reason == ""


# 32x16 i32, 4 warps, sizePerThread [1, 8] -> [1, 4] over threadsPerWarp [2, 16]: stock shuffles
# all 64 registers (lowering/choosing/stock_lowering.py), our pick 32 (seed 303's conversion 10: 0.70x).
HALVED = (_blocked([1, 8], [2, 16], [2, 2], [1, 0]), _blocked([1, 4], [2, 16], [2, 2], [1, 0]), (32, 16), 32)
# The same on 64x8 over [4, 8]: stock's swap is in place (32 shuffles), as many as ours.
AS_MANY = (_blocked([1, 8], [4, 8], [2, 2], [1, 0]), _blocked([1, 4], [4, 8], [2, 2], [1, 0]), (64, 8), 32)
# 16x16 f16, 8 warps: our pick packs two elements a word (2 shuffles against stock's 4).
PACKED = (_blocked([1, 8], [2, 16], [8, 1], [1, 0]), _blocked([1, 4], [2, 16], [8, 1], [1, 0]), (16, 16), 16)


def test_a_pick_with_half_of_stocks_shuffles_has_its_own_family():
    halved, as_many, packed = (_pick(*pair) for pair in (HALVED, AS_MANY, PACKED))
    assert choice.plan_features(halved)[0] == 32 and choice.halves_stock_shuffles(halved)
    assert choice.gated_family_of(halved, "lane") == "lane/shuffle/warps/half-stock-shuffles"
    assert not choice.halves_stock_shuffles(as_many)
    assert choice.gated_family_of(as_many, "lane") == "lane/shuffle/warps"
    assert packed.shuffle.elements_per_word == 2 and not choice.halves_stock_shuffles(packed)


# A row of 512 spread over 2 warps' lanes (slice of a 2-D blocked) -> one element per thread:
# a warp-scope shuffle plan (fresh seed 828's conversion 107, the return trip).
SLICED = "#ttg.slice<{dim = 1, parent = " + _blocked([1, 4], [8, 4], [1, 2], [1, 0]) + "}>"
FLAT = _blocked([1], [32], [2], [0])


def test_sub_word_shuffles_have_their_own_family(tmp_path):
    """The same warp-scope shuffle plan on i32 and on i16: the i16 one packs two elements a
    word, family ``warp/shuffle/warps/sub-word``, which a family gate can send to stock alone;
    the shipped per-conversion rule keeps both (a warp-scope conversion: stock goes through
    shared memory there)."""
    words, halves = _pick(SLICED, FLAT, (512,), 32), _pick(SLICED, FLAT, (512,), 16)
    assert not choice.shuffles_sub_word(words) and choice.shuffles_sub_word(halves)
    assert choice.gated_family_of(words, "warp") == "warp/shuffle/warps"
    assert choice.gated_family_of(halves, "warp") == "warp/shuffle/warps/sub-word"
    choice.load_model.cache_clear()
    assert choice.decide(words, "sm_90", "3.6.0").plan is words
    assert choice.decide(halves, "sm_90", "3.6.0").plan is halves
    gate = {"decision": "stock", "n": 9, "geomean_pick_over_stock": 0.90, "spread": 1.19, "worst": 1.09}
    path = _model(tmp_path, {"warp/shuffle/warps": {**gate, "decision": "ours", "geomean_pick_over_stock": 0.86},
                             "warp/shuffle/warps/sub-word": gate})
    assert choice.decide(words, "sm_90", "3.6.0", path=path).plan is words
    decision = choice.decide(halves, "sm_90", "3.6.0", path=path)
    assert decision.plan is None and "family warp/shuffle/warps/sub-word:" in decision.reason


def test_the_shipped_rule_keeps_a_shuffle_pick_with_at_most_stocks_shuffles():
    """Lane scope where stock shuffles: a shuffle pick with half (HALVED: 32 against 64) or as many
    (AS_MANY: 32 against 32) is ours; a shared-memory pick (the f16 pair's) is stock's."""
    choice.load_model.cache_clear()
    halved, as_many = _pick(*HALVED), _pick(*AS_MANY)
    decision = choice.decide(halved, "sm_90", "3.6.0")
    assert decision.plan is halved and decision.family == "lane/shuffle/warps/half-stock-shuffles"
    assert choice.decide(as_many, "sm_90", "3.6.0").plan is as_many
    assert choice.decide(_pick(SPT8, SPT4, (64, 128), 16), "sm_90", "3.6.0").plan is None


def test_the_shipped_rule_sends_a_shuffle_pick_with_more_shuffles_than_stock_to_stock(monkeypatch):
    """The count decides: with stock's count predicted below the pick's, the same pick is stock's."""
    choice.load_model.cache_clear()
    halved = _pick(*HALVED)
    monkeypatch.setattr(choice, "stock_warp_shuffles", lambda *args: 31)
    decision = choice.decide(halved, "sm_90", "3.6.0")
    assert decision.plan is None
    assert "with 31 warp shuffle(s) a thread, our pick needs 32 warp shuffles" in decision.reason


def test_a_model_of_an_unknown_rule_is_not_used(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"target": "sm_90", "triton": "3.6.0", "features": list(choice.FEATURES),
                                "weights": None, "gates": {}, "rule": "coin-toss"}))
    choice.load_model.cache_clear()
    assert choice.load_model(str(path)) is None


def test_the_gate_takes_stock_when_the_family_showed_no_gain(tmp_path):
    """The family decides, not the shuffle count alone: fitted to times where its gain stayed
    within its error, the family goes to stock."""
    path = _model(tmp_path, {"lane/shuffle/warps/half-stock-shuffles": {
        "decision": "stock", "n": 7, "geomean_pick_over_stock": 0.99, "spread": 1.2, "worst": 1.1}})
    decision = choice.decide(_pick(*HALVED), "sm_90", "3.6.0", path=path)
    assert decision.plan is None and "lane/shuffle/warps/half-stock-shuffles" in decision.reason


@pytest.mark.parametrize("target, release", [("sm_90", "3.9.0"), ("sm_90", "3.7.1"), ("sm_80", "3.6.0"),
                                             ("gfx942", "3.6.0")])
def test_another_release_or_target_is_decided_by_dominance(target, release):
    """The model was fitted on sm_90 against triton 3.6's stock lowering: elsewhere our pick is
    kept only where it needs no more of any costly instruction than stock's lowering
    (lowering/choosing/stock_bounds.py).  The f16 pair goes through shared memory where stock
    shuffles: stock, the remark says why."""
    plan = _pick(SPT8, SPT4, (64, 128), 16)
    choice.load_model.cache_clear()
    decision = choice.decide(plan, target, release)
    assert decision.plan is None and "needs more store_wavefronts" in decision.reason


def test_a_family_with_too_few_conversions_cannot_show_a_gain(tmp_path):
    path = _model(tmp_path, {"lane/shuffle/1warp": {"decision": "stock", "n": 3, "geomean_pick_over_stock": 0.5,
                                                    "spread": 1.1, "worst": 0.6}})
    plan = _pick(_blocked([2], [32], [1], [0]), _blocked([1], [32], [1], [0]), (64,), 32)
    decision = choice.decide(plan, "sm_90", "3.6.0", path=path)
    assert decision.plan is None
    assert "family lane/shuffle/1warp: 3 measured conversion(s), too few to show a gain" in decision.reason


def test_an_unmeasured_family_goes_to_stock(tmp_path):
    path = _model(tmp_path, {})
    decision = choice.decide(_pick(SPT8, SPT4, (64, 128), 16), "sm_90", "3.6.0", path=path)
    assert decision.plan is None and "no measured conversion of family lane/shared/warps" in decision.reason


def test_fitted_weights_rank_the_candidates(tmp_path):
    """With weights, the cheapest candidate by them is taken: weigh shared accesses heavily and a
    shuffle candidate wins, weigh shuffles heavily and a shared-memory one does."""
    src, dst = to_linear_layout(_blocked([2], [32], [1], [0]), (64,)), to_linear_layout(_blocked([1], [32], [1], [0]), (64,))
    plans = [p for p in plan_candidates(src, dst, 32, "sm_90")[0] if verify_plan(p).ok]
    gates = {f: {"decision": "ours", "n": 9, "geomean_pick_over_stock": 0.8, "spread": 1.01, "worst": 0.9}
             for f in ("lane/shuffle/1warp", "lane/shared/1warp", "lane/shared/matrix/1warp")}
    shuffles_cheap = [0.1, 0.1, 5, 5, 5, 5, 5, 5]
    shared_cheap = [50, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01]
    for weights, method in ((shuffles_cheap, "shuffle"), (shared_cheap, "shared")):
        path = _model(tmp_path, gates, weights)
        decision = choice.decide(plans[0], "sm_90", "3.6.0", candidates=lambda: plans, path=path)
        assert str(decision.plan.method) == method
        assert decision.plan is plans[decision.rank]


def test_a_model_of_other_features_is_not_used(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"target": "sm_90", "triton": "3.6.0", "features": ["shuffles"], "weights": None,
                                "gates": {}}))
    choice.load_model.cache_clear()
    decision = choice.decide(_pick(SPT8, SPT4, (64, 128), 16), "sm_90", "3.6.0", path=str(path))
    assert decision.plan is None and "lowering/choosing/stock_bounds.py" in decision.reason   # as where nothing was measured


_POW2 = st.sampled_from([1, 2, 4, 8])


@st.composite
def _blocked_pairs(draw):
    warps = draw(st.sampled_from([1, 2, 4]))
    lanes0 = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    src = _blocked([draw(_POW2), draw(_POW2)], [lanes0, 32 // lanes0], [warps, 1], [1, 0])
    lanes1 = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    dst = _blocked([draw(_POW2), draw(_POW2)], [lanes1, 32 // lanes1], draw(st.sampled_from([[warps, 1], [1, warps]])),
                   draw(st.sampled_from([[1, 0], [0, 1]])))
    return src, dst, draw(st.sampled_from([8, 16, 32, 64]))


@settings(max_examples=60, deadline=None)
@given(_blocked_pairs())
def test_every_choice_is_a_verified_candidate_or_stock(pair):
    src_text, dst_text, bits = pair
    shape = (32, 32)
    src, dst = to_linear_layout(src_text, shape), to_linear_layout(dst_text, shape)
    pick = plan_conversion(src, dst, bits, "sm_90")
    if not pick:
        return
    choice.load_model.cache_clear()
    decision = choice.decide(pick, "sm_90", "3.6.0")
    assert decision is not None
    if decision.plan is None:
        assert decision.rank is STOCK and "stock Triton's lowering" in decision.reason
        assert pick.method not in ("noop", "rename")   # free conversions are always ours
    else:
        assert verify_plan(decision.plan).ok
    # The shipped rule: over one warp, stock for a shared-memory pick and for a shuffle pick that
    # does not gain on stock's floor; elsewhere stock for bytes through matrices where stock
    # uses plain vectors, for a twin of stock's own shared-memory code, and where stock shuffles
    # a lane-scope conversion and the pick is not a shuffle plan with at most as many.
    stock = stock_warp_shuffles(pick.src, pick.dst, bits, "sm_90") if pick.scope is Scope.LANE else None
    if pick.method in ("noop", "rename"):
        to_stock = False
    elif "warpsPerCTA = [1, 1]" in src_text and pick.scope is Scope.LANE:
        to_stock = pick.method == "shared" or not dominance(pick).gains
    else:
        to_stock = choice.bytes_through_matrices(pick) or choice.sixteen_bits_where_matrices_are_in_play(pick) or \
            choice.shuffles_only_broadcast(pick) or is_stock_twin(pick) or (stock is not None and
                                    not (pick.method == "shuffle" and plan_cost(pick).shuffles <= stock)) or \
            (pick.method == "shared" and not pick.shared.rounds_merged)
    assert (decision.plan is None) == to_stock
    if decision.plan is not None and pick.method == "shared":
        assert pick.shared.rounds_merged            # ours through shared memory only in fewer rounds
    if is_stock_twin(pick) and "warpsPerCTA = [1, 1]" not in src_text and not choice.bytes_through_matrices(pick) \
            and not choice.sixteen_bits_where_matrices_are_in_play(pick) and not choice.shuffles_only_broadcast(pick):
        assert "stock_shared.py" in decision.reason
    if "warpsPerCTA = [1, 1]" in src_text and pick.scope is Scope.LANE and decision.plan is None:
        assert "'One-warp CTAs on sm_90 with triton 3.6'" in decision.reason


@pytest.mark.parametrize("value", ["off", "0", "false"])
def test_the_environment_turns_the_gate_off(monkeypatch, value):
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", value)
    choice.load_model.cache_clear()
    assert choice.decide(_pick(SPT8, SPT4, (64, 128), 16), "sm_90", "3.6.0") is None


# Held-out fresh7109/44: an i8 conversion over 2 warps whose pick stores with stmatrix where stock
# stores and loads plain vectors.
BYTES_SRC = _blocked([4, 2], [8, 4], [1, 2], [1, 0])
BYTES_DST = _blocked([1, 1], [8, 4], [2, 1], [0, 1])


def test_bytes_through_matrices_go_to_stock():
    from linear_layouts.lowering.choosing.stock_shared import stock_matrix_pairs
    plan = _pick(BYTES_SRC, BYTES_DST, [64, 16], 8)
    assert plan.method == "shared" and _matrix_accesses(plan) == 1     # one stmatrix
    assert stock_matrix_pairs(plan.src, plan.dst, 8, plan.target) == []
    assert choice.bytes_through_matrices(plan)
    decided = choice.decide(plan, "sm_90", "3.6.0")
    assert decided.plan is None and "moves bytes with ldmatrix/stmatrix" in decided.reason
    # the same conversion on 16-bit elements: not bytes, the rule does not apply
    wide = _pick(BYTES_SRC, BYTES_DST, [64, 16], 16)
    assert not choice.bytes_through_matrices(wide)
    assert "moves bytes" not in (choice.decide(wide, "sm_90", "3.6.0").reason or "")
    # an 8-bit pick without matrix accesses: not this rule either
    verified = [p for p in plan_candidates(plan.src, plan.dst, 8, "sm_90")[0] if verify_plan(p).ok]
    plain = next(p for p in verified if _matrix_accesses(p) == 0)
    assert not choice.bytes_through_matrices(plain)


# flash-linear-attention's abc_bwd_intra_K (test/lit/corpus/fla, line 247): 16 i32 over 4 warps,
# a row of per-warp halves every lane holds whole <-> one element a lane.
WHOLE_IN_EVERY_LANE = "#ttg.slice<{dim = 1, parent = " + _blocked([1, 1], [1, 32], [2, 2], [1, 0]) + "}>"
ONE_A_LANE_16 = _blocked([1], [32], [4], [0])


def test_shuffles_that_are_all_broadcasts_go_to_stock():
    to_every_lane = _pick(ONE_A_LANE_16, WHOLE_IN_EVERY_LANE, [16], 32)
    assert to_every_lane.method == "shuffle" and plan_cost(to_every_lane).shuffles == 8
    rounds = to_every_lane.shuffle.rounds
    assert all(not any(r.source_lane.lane) for r in rounds)          # each read from one lane
    assert choice.shuffles_only_broadcast(to_every_lane)
    decided = choice.decide(to_every_lane, "sm_90", "3.6.0")
    assert decided.plan is None and not decided.twin and "is a broadcast" in decided.reason
    assert "'Broadcast shuffles'" in decided.reason
    # the way back goes through shared memory in Triton's rounds: not this rule's, and stock by
    # the rule of one direction at a time
    back = _pick(WHOLE_IN_EVERY_LANE, ONE_A_LANE_16, [16], 32)
    assert back.method == "shared" and not choice.shuffles_only_broadcast(back)
    assert "in Triton's rounds" in choice.decide(back, "sm_90", "3.6.0").reason
    # shuffles reading a lane that depends on the reader's own lane are not broadcasts
    neighbour = _pick(_blocked([2], [32], [1], [0]), _blocked([1], [32], [1], [0]), [64], 32)
    assert neighbour.method == "shuffle" and any(any(r.source_lane.lane) for r in neighbour.shuffle.rounds)
    assert not choice.shuffles_only_broadcast(neighbour)
    # sm_90 + triton 3.6's rule (where it was measured): under 3.9 stock's floor decides
    assert "broadcast" not in (choice.decide(to_every_lane, "sm_90", "3.9.0").reason or "")


# Held-out fresh11117/47 (H200, triton 3.6): 512 i16 over 2 warps, sizePerThread [1] -> [2]; the
# pick stores with stmatrix and loads plain vectors where stock's search finds no matrix pair.
SPT1_512 = _blocked([1], [32], [2], [0])
SPT2_512 = _blocked([2], [32], [2], [0])
# Held-out fresh9703/29: 32x16 i16 mma v3 -> blocked over 4 warps; the pick stores with stmatrix,
# a pair stock's search finds too.
MMA3_32x16 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16, 16]}>"
BLOCKED_1x8 = _blocked([1, 8], [4, 8], [2, 2], [1, 0])


def test_sixteen_bits_where_matrices_are_in_play_go_to_stock():
    from linear_layouts.lowering.choosing.stock_shared import stock_matrix_pairs
    plan = _pick(SPT1_512, SPT2_512, [512], 16)
    assert plan.method == "shared" and _matrix_accesses(plan) > 0
    assert stock_matrix_pairs(plan.src, plan.dst, 16, plan.target) == []
    assert choice.sixteen_bits_where_matrices_are_in_play(plan)
    decided = choice.decide(plan, "sm_90", "3.6.0")
    assert decided.plan is None and "16-bit elements where ldmatrix/stmatrix is in play" in decided.reason
    assert not decided.twin          # stock's search has no matrix pair: not stock's code
    # the same conversion on 32-bit elements: not this rule
    wide = _pick(SPT1_512, SPT2_512, [512], 32)
    assert not choice.sixteen_bits_where_matrices_are_in_play(wide)
    assert "16-bit" not in (choice.decide(wide, "sm_90", "3.6.0").reason or "")
    # the rule is sm_90 + triton 3.6's (where it was measured): under 3.9 stock's floor decides
    assert "16-bit" not in (choice.decide(plan, "sm_90", "3.9.0").reason or "")


def test_a_sixteen_bit_pick_with_a_stock_pair_goes_to_stock_as_a_twin():
    from linear_layouts.lowering.choosing.stock_shared import stock_matrix_pairs
    plan = _pick(MMA3_32x16, BLOCKED_1x8, [32, 16], 16)
    assert plan.method == "shared" and plan.shared.rounds_merged == 0
    assert ("matrix", "vector") in stock_matrix_pairs(plan.src, plan.dst, 16, plan.target)
    decided = choice.decide(plan, "sm_90", "3.6.0")
    assert decided.plan is None and decided.twin     # kept as an island among other islands


def test_a_sixteen_bit_pick_in_fewer_rounds_than_triton_is_not_the_rules():
    """A pick in fewer rounds waits at fewer barriers than stock: not this rule (the Gluon matmul's
    A tile, benchmarks/gluon_forms_gpu.py matmul, gains that way).  Held-out fresh9811/44: 1024 i16
    slices over 4 warps (stock's search finds a matrix pair, the pick stores and loads plain
    vectors), Triton's 4 rounds merged into one."""
    from linear_layouts.lowering.planner import with_fewer_rounds
    src = "#ttg.slice<{dim = 0, parent = " + _blocked([1, 1], [4, 8], [2, 2], [0, 1]) + "}>"
    dst = "#ttg.slice<{dim = 0, parent = " + _blocked([2, 2], [2, 16], [4, 1], [1, 0]) + "}>"
    plan = _pick(src, dst, [1024], 16)
    from linear_layouts.lowering.choosing.stock_shared import stock_matrix_pairs
    assert stock_matrix_pairs(plan.src, plan.dst, 16, plan.target)      # stock stores or loads with a matrix
    assert choice.sixteen_bits_where_matrices_are_in_play(plan)       # in Triton's rounds
    fewer = with_fewer_rounds(plan)
    assert fewer.shared.rounds_merged == 2                             # 4 rounds to 1
    assert not choice.sixteen_bits_where_matrices_are_in_play(fewer)


def _matrix_accesses(plan):
    from linear_layouts.lowering.plan import SharedAccess
    return sum(op.form.is_matrix for op in plan.shared.ops if isinstance(op, SharedAccess))


def test_shared_picks_in_tritons_rounds_go_to_stock_unless_kept(monkeypatch):
    """Under 3.6 a shared-memory pick in Triton's rounds goes to stock (the one-direction rule),
    kept as an island beside islands of ours (``twin``);
    the study switch ``fitted_model.SHARED_PICKS_KEPT`` keeps it ours and marks the cache key; under
    3.9 stock's floor decides, as before."""
    from linear_layouts.passes.drop_in.plugin_config import environment_switches
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
    back = _pick(WHOLE_IN_EVERY_LANE, ONE_A_LANE_16, [16], 32)
    assert back.method == "shared" and not back.shared.rounds_merged
    choice.load_model.cache_clear()
    taken = choice.decide(back, "sm_90", "3.6.0")
    assert taken.plan is None and taken.twin and "'One direction at a time'" in taken.reason
    assert "shared-picks" not in environment_switches()
    monkeypatch.setattr(choice, "SHARED_PICKS_KEPT", True)
    assert choice.decide(back, "sm_90", "3.6.0").plan is back
    assert environment_switches().endswith("-shared-picks")
    monkeypatch.setattr(choice, "SHARED_PICKS_KEPT", False)
    assert "in Triton's rounds" not in (choice.decide(back, "sm_90", "3.9.0").reason or "")
