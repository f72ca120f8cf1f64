"""ll-demo: the algebra tour (--tour) and the main job (a table of the bundled kernels' conversions)."""

import io
import contextlib

from linear_layouts.tools import demo


def test_tour_runs_and_shows_the_three_parts():
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert demo.main(["--tour"]) == 0
    text = buffer.getvalue()
    assert "== 1. The paper's Figure 1 layout" in text
    assert "register=3 lane= 5 warp=0 -> (row  9, col  3)" in text
    assert "minimal conversion moves data across: register, lane" in text


def test_demo_conversion_is_a_correct_inverse():
    src, dst = demo.figure1_layout(), demo.row_per_lane_layout()
    conversion = dst.invert_and_compose(src)
    for flat in range(dst.total_in_dim_size):
        hw = {"register": flat & 3, "lane": (flat >> 2) & 31, "warp": flat >> 7}
        assert src.apply(conversion.apply(hw)) == dst.apply(hw)
