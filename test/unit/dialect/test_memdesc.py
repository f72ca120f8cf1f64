"""dialect/memdesc.py: pipelined buffers and views as linear layouts (exact values, errors,
the stacking law).  Triton's own answers for the same types are in test_memdesc_oracle.py."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.dialect.attributes import (AmdRotatingSharedEncoding, BlockedEncoding, CGALayout,
                                               NvmmaSharedEncoding, PaddedSharedEncoding, SwizzledSharedEncoding)
from linear_layouts.dialect.linear_layout import LayoutError
from linear_layouts.dialect.memdesc import memdesc_layout

NVMMA_128 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def test_the_docstrings_worked_example_three_buffers_of_64x64():
    m = memdesc_layout(NVMMA_128, [3, 64, 64])
    assert (m.buffers, m.buffer_shape, m.view_shape, m.buffer_elements) == (3, (64, 64), (64, 64), 4096)
    assert m.buffer.bases["offset"] == ((0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (0, 32), (1, 8), (2, 16), (4, 32),
                                        (8, 0), (16, 0), (32, 0))
    within = m.buffer.invert().apply({"dim0": 5, "dim1": 9})["offset"]
    assert within == 353 and m.buffer_start(2) + within == 8545
    with pytest.raises(LayoutError, match="3 buffers of 64x64: no linear layout covers a number of buffers that is "
                                          "not a power of two"):
        m.whole()


def test_the_allocation_has_the_layout_memdesc_index_yields():
    assert memdesc_layout(NVMMA_128, [5, 64, 64]).buffer == memdesc_layout(NVMMA_128, [64, 64]).buffer


def test_a_power_of_two_count_stacks_the_buffers_above_one_buffers_bits():
    m = memdesc_layout("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>", [2, 4, 8])
    assert m.buffers == 2 and m.buffer.bases["offset"] == ((0, 1), (0, 2), (0, 4), (1, 0), (2, 0))
    assert m.whole().bases["offset"] == ((0, 0, 1), (0, 0, 2), (0, 0, 4), (0, 1, 0), (0, 2, 0), (1, 0, 0))
    assert m.whole().out_dims == {"dim0": 2, "dim1": 4, "dim2": 8}


def test_without_a_buffer_dim_whole_is_the_buffer():
    m = memdesc_layout(NVMMA_128, [64, 64])
    assert m.buffers is None and m.buffer_count == 1 and m.whole() == m.buffer


def test_a_view_has_its_allocations_layout():
    swizzled = "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>"
    view = memdesc_layout(swizzled, [32, 8], alloc_shape=[32, 16])
    assert view.view_shape == (32, 8) and view.buffer_shape == (32, 16)
    assert view.buffer == memdesc_layout(swizzled, [32, 16]).buffer
    # The layout of the 32x8 shape alone differs (the swizzle wraps at 8 columns, not 16):
    assert view.buffer.bases["offset"][4:6] == ((1, 4), (2, 8))
    assert memdesc_layout(swizzled, [32, 8]).buffer.bases["offset"][3:5] == ((1, 4), (2, 0))
    # An allocation shape that still has the buffer dim (older releases) gives the same.
    assert memdesc_layout(swizzled, [32, 8], alloc_shape=[3, 32, 16]).buffer == view.buffer


def test_per_cta_buffers_with_a_cga_split_and_fp4_padding():
    split = SwizzledSharedEncoding(4, 1, 4, (1, 0), CGALayout(bases=((1, 0),)))  # dim0 over 2 CTAs
    m = memdesc_layout(split, [3, 64, 64])
    assert m.buffer_elements == 32 * 64 == m.buffer.in_dim_size("offset")
    assert m.buffer.bases["block"] == ((32, 0),)
    fp4 = NvmmaSharedEncoding(128, False, 8, fp4_padded=True)
    m = memdesc_layout(fp4, [2, 32, 64])
    # A row stores 64 real fp4 pairs in 128 bytes: twice the contiguous dim.
    assert m.buffer_elements == 32 * 128 == m.buffer.in_dim_size("offset")


def test_padded_buffers_start_at_padded_offsets():
    padded = PaddedSharedEncoding((32,), (4,), order=(1, 0), shape=(8, 8))
    m = memdesc_layout(padded, [3, 8, 8])
    assert m.buffer_elements == 64 and [m.buffer_start(i) for i in range(3)] == [0, 72, 144]
    with pytest.raises(LayoutError, match="buffer 3 of a memdesc with 3 buffer"):
        m.buffer_start(3)


def test_amd_rotating_buffers():
    rotating = AmdRotatingSharedEncoding(4, 1, 4, (1, 0))
    m = memdesc_layout(rotating, [3, 16, 16])
    assert m.buffers == 3 and m.buffer == memdesc_layout(rotating, [16, 16]).buffer and m.buffer_elements == 256


@pytest.mark.parametrize("encoding, shape, alloc, message", [
    (NVMMA_128, [2, 2, 64, 64], None, "Triton allows rank 2 \\(one buffer\\) or 3 \\(a leading buffer dim\\)"),
    (NVMMA_128, [64, 128], [64, 64], "the view \\[64, 128\\] is larger than its buffer \\[64, 64\\]"),
    (NVMMA_128, [3, 64, 64], [64, 64], "the allocation shape has fewer dims than the shape"),
    (NVMMA_128, [0, 64, 64], None, "the buffer dim must be at least 1"),
    (NVMMA_128, [3, 48, 64], None, "48, which is not a power of two"),
])
def test_types_that_do_not_fit_say_why(encoding, shape, alloc, message):
    with pytest.raises(LayoutError, match=message):
        memdesc_layout(encoding, shape, alloc)


def test_a_distributed_encoding_is_not_a_memdesc_encoding():
    blocked = BlockedEncoding((1, 1), (4, 8), (1, 1), (1, 0))
    with pytest.raises(LayoutError, match="a shared-memory descriptor needs a shared encoding"):
        memdesc_layout(blocked, [4, 8])


@settings(max_examples=60, deadline=None)
@given(vec=st.sampled_from([1, 2, 4, 8]), per_phase=st.sampled_from([1, 2, 4]), max_phase=st.sampled_from([1, 2, 4, 8]),
       order=st.sampled_from([(1, 0), (0, 1)]), rows=st.sampled_from([1, 4, 16, 64]),
       cols=st.sampled_from([1, 8, 32]), buffers=st.sampled_from([1, 2, 4, 8]), data=st.data())
def test_stacking_law_buffer_b_element_o_is_at_b_times_e_plus_o(vec, per_phase, max_phase, order, rows, cols,
                                                                  buffers, data):
    m = memdesc_layout(SwizzledSharedEncoding(vec, per_phase, max_phase, order), [buffers, rows, cols])
    whole = m.whole()
    b = data.draw(st.integers(0, buffers - 1))
    o = data.draw(st.integers(0, m.buffer_elements - 1))
    inside = m.buffer.apply({"offset": o, "block": 0})
    assert whole.apply({"offset": m.buffer_start(b) + o, "block": 0}) == {
        "dim0": b, "dim1": inside["dim0"], "dim2": inside["dim1"]}
