"""Shared pieces of the ``ttg.memdesc_subslice`` load and store tests: the buffers' encodings and
the hypothesis strategies of a random view (a buffer shape, how many times each dim is halved
to make the view, the destination's or source's warps and target)."""

from hypothesis import strategies as st

FP64_SHARED = "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>"
ROW_MAJOR = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
SHARED = [ROW_MAJOR, "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>",
          "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
          "#ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>",
          "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>", FP64_SHARED]
ELEMENTS = {"i8": 8, "f16": 16, "f32": 32, "f64": 64}

# @given(**RANDOM_VIEW): the view is buffer_shape with dim d halved shrink[d] times.
RANDOM_VIEW = dict(seed=st.integers(0, 2**31), shared=st.sampled_from(SHARED), element=st.sampled_from(sorted(ELEMENTS)),
                   warps=st.sampled_from([1, 2, 4]), target=st.sampled_from(["sm_80", "sm_90", "gfx942"]),
                   buffer_shape=st.sampled_from([(16, 16), (32, 16), (16, 64), (32, 32), (64, 32)]),
                   shrink=st.sampled_from([(1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1)]))


def random_view_registers(seed: int, buffer_shape, shrink, warps: int, lanes: int):
    """(the view's shape, a random linear register layout of it as ``#ttg.linear`` text, broadcast
    included) for one draw of ``RANDOM_VIEW``; None when the view has fewer elements than
    threads (no layout without a thread holding nothing)."""
    import random

    from linear_layouts.tools.fuzz.testcases import linear_encoding_text, random_linear_bases

    view_shape = tuple(a >> k for a, k in zip(buffer_shape, shrink))
    if view_shape[0] * view_shape[1] < lanes * warps:
        return None
    return view_shape, linear_encoding_text(random_linear_bases(random.Random(seed), view_shape, warps, lanes,
                                                                broadcast=True))
