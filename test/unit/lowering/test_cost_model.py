"""The cost model's exact bank-conflict count, per phase, with broadcast reads counted once."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.lowering.cost import access_wavefronts, bank_use, plan_cost, wavefronts_and_phases
from linear_layouts.lowering.describe import cost_text
from linear_layouts.lowering.instructions import AccessForm, AccessKind
from linear_layouts.lowering.plan import SharedAccess, ThreadAffine
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import GFX942, SM80, SM90

from support.known_layouts import COLUMN_PAIRS, ROWS

LANES = tuple(1 << i for i in range(5))


def load(lane_map, n=1, form=AccessForm.VECTOR, const=0):
    return SharedAccess(AccessKind.LOAD, tuple(range(n)), ThreadAffine(const, tuple(lane_map)), form=form)


def test_consecutive_words_are_one_wavefront():
    assert access_wavefronts(load(LANES), 32, SM90) == (1, 1)


def test_row_major_column_read_is_16_way():
    # Appendix C loads from an unswizzled 16x32 buffer: lanes 0-15 read rows m (stride 32 words),
    # lane bit 4 the neighbouring column: 16 distinct words in bank 0 and 16 in bank 1
    assert access_wavefronts(load((32, 64, 128, 256, 1)), 32, SM90) == (16, 1)


def test_broadcast_reads_are_free():
    # every lane reads the same word: one wavefront
    assert access_wavefronts(load((0, 0, 0, 0, 0)), 32, SM90) == (1, 1)
    # pairs of lanes share words, 16 distinct words in 16 banks
    assert access_wavefronts(load((0, 1, 2, 4, 8)), 32, SM90) == (1, 1)


def test_128_bit_accesses_have_four_phases():
    # lane l reads 4 words at 4 l: quarter-warps of 8 lanes each fill the 32 banks once
    assert access_wavefronts(load((4, 8, 16, 32, 64), n=4), 32, SM90) == (4, 4)
    # stride of 8 words: lanes 0-7 hit 64 words over 32 banks: 2 wavefronts per phase
    assert access_wavefronts(load((8, 16, 32, 64, 128), n=4), 32, SM90) == (8, 4)


def test_sub_word_elements_share_words():
    # 16-bit elements, consecutive lanes: 2 lanes per word, 16 words, 1 wavefront
    assert access_wavefronts(load(LANES), 16, SM80) == (1, 1)


def test_amd_wave64_half_wave_phases():
    lanes = tuple(1 << i for i in range(6))
    assert access_wavefronts(load(lanes), 32, GFX942) == (2, 2)
    # 32-word stride inside a half wave: 32-way conflict in each phase
    assert access_wavefronts(load(tuple(32 << i for i in range(6))), 32, GFX942) == (64, 2)


def test_ldmatrix_phase_is_one_matrix():
    # ldmatrix.x4 with 8 rows of 16 bytes at row stride 16 bytes: conflict-free, 4 phases
    access = load((4, 8, 16, 32, 64), n=4, form=AccessForm.MATRIX)
    assert access_wavefronts(access, 32, SM90) == (4, 4)
    # rows 128 bytes apart: all 8 rows in the same 4 banks -> 8 wavefronts per matrix
    access = load((32, 64, 128, 256, 512), n=4, form=AccessForm.MATRIX)
    assert access_wavefronts(access, 32, SM90) == (32, 4)


def test_plan_cost_fields():
    plan = plan_conversion(ROWS, COLUMN_PAIRS, 32, "sm_90")
    cost = plan_cost(plan)
    assert cost.scratch_bytes == 2048 and cost.barriers == 1
    assert cost.shared_stores == 4 and cost.shared_loads == 4
    assert cost.bank_conflicts == 0 and cost.store_wavefronts == 16 and cost.load_wavefronts == 16
    assert "scratch=2048B" in cost_text(cost, plan.target)


@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([(), (4,), (3, 4), (2, 3, 4)]), st.integers(1, 4),
       st.sampled_from([16, 32, 64]))
@settings(max_examples=300, deadline=None)
def test_the_planners_wavefront_count_is_the_bank_models(seed, phase_bits, words_per_lane, num_banks):
    """``wavefronts_and_phases`` (the planner's fast count) and ``bank_use`` (the one bank model,
    ``ll-viz``'s too) agree on random warps: broadcasts, conflicts, every phase split."""
    rng = np.random.default_rng(seed)
    lanes = np.arange(32)
    span = int(rng.choice([8, 64, 1024]))
    words = rng.integers(0, span, size=(32, words_per_lane))
    use = bank_use(lanes, words, phase_bits, num_banks)
    assert wavefronts_and_phases(lanes, words, phase_bits, num_banks) == (use.wavefronts, use.phases)
