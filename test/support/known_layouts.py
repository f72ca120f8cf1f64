"""Small hand-written layouts with known answers (paper Appendix C), for several tests."""

from linear_layouts.dialect.linear_layout import LinearLayout


def layout(register, lane, warp=(), block=(), out=None):
    return LinearLayout.from_bases({"register": [list(b) for b in register], "lane": [list(b) for b in lane],
                                    "warp": [list(b) for b in warp], "block": [list(b) for b in block]}, out)


# Paper Appendix C: 16x32 fp32 in one warp; stores are rows (thread t <-> column t), loads are
# column pairs (threads 0-15 column 2r, 16-31 column 2r+1).
ROWS = layout([[1, 0], [2, 0], [4, 0], [8, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], out={"dim0": 16, "dim1": 32})
COLUMN_PAIRS = layout([[0, 2], [0, 4], [0, 8], [0, 16]], [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]],
                      out={"dim0": 16, "dim1": 32})
