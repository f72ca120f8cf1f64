"""`make demo`: a short tour of linear layouts, printed to the terminal.

1. The paper's Figure 1 layout (a 16x16 tensor, 2x2 registers, 4x8 lanes, 2 warps), built
   from its bases and printed, with a few evaluations.
2. Its matrix over F2 (one row per tensor-coordinate bit, one column per hardware bit).
3. One conversion: from Figure 1's layout to its transpose-friendly cousin, computed with
   ``invert_and_compose``, and what the result says about the data movement it needs.

Run it with ``ll-demo`` or ``python -m linear_layouts.tools.demo``.
"""

from __future__ import annotations

import sys

from linear_layouts.dialect import LinearLayout

OUT_DIMS = ["dim0", "dim1"]  # dim0 = row, dim1 = column


def figure1_layout() -> LinearLayout:
    """Figure 1 of the paper: each thread holds a 2x2 block (registers), lanes tile 4 columns
    of blocks by 8 rows of blocks, and the two warps sit side by side along the columns."""
    return LinearLayout.from_bases(
        {
            "register": [[0, 1], [8, 0]],
            "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
            "warp": [[0, 8]],
        },
        OUT_DIMS,
    )


def row_per_lane_layout() -> LinearLayout:
    """A destination layout for the conversion: each lane owns one row-segment of 4 columns
    in a row, lanes walk down the rows, and the two warps split the columns."""
    return LinearLayout.from_bases(
        {
            "register": [[0, 1], [0, 2]],
            "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4]],
            "warp": [[0, 8]],
        },
        OUT_DIMS,
    )


def ownership_grid(layout: LinearLayout, rows: int, cols: int) -> list[list[str]]:
    """For each element, 'w<warp>:t<lane>:r<reg>' of the first hardware coordinate holding it."""
    grid = [["" for _ in range(cols)] for _ in range(rows)]
    sizes = layout.in_dims
    for warp in range(sizes["warp"]):
        for lane in range(sizes["lane"]):
            for reg in range(sizes["register"]):
                out = layout.apply({"register": reg, "lane": lane, "warp": warp})
                cell = grid[out["dim0"]][out["dim1"]]
                if not cell:
                    grid[out["dim0"]][out["dim1"]] = f"t{lane}:r{reg}" + ("'" if warp else "")
    return grid


def print_grid(grid: list[list[str]], out) -> None:
    width = max(len(c) for row in grid for c in row)
    for row in grid:
        print("  " + " ".join(c.rjust(width) for c in row), file=out)


def describe_conversion(conversion: LinearLayout) -> list[str]:
    """Say in words which hardware levels a conversion layout (dst -> src coordinates) mixes.

    A hardware dim over which the conversion is *trivial* (identity on it, and kept apart from
    the others) needs no data movement across it; ``quotient`` removes such dims.  What is
    left is the minimal conversion: the levels the data really has to cross.
    """
    lines = []
    for dim in conversion.in_dim_names:
        touched = [o for o in conversion.out_dim_names if not conversion.sublayout_is_zero([dim], [o])]
        trivial = conversion.is_trivial_over([dim])
        lines.append(f"  destination {dim} bits come from source {' and '.join(touched) or 'nothing'} bits"
                     + ("  (trivial: no movement across " + dim + "s)" if trivial else ""))
    minimal = conversion
    for dim in ["warp", "lane", "register"]:
        reduced = minimal.quotient([dim])
        if reduced is None:
            break
        minimal = reduced
    lines.append(f"  minimal conversion moves data across: {', '.join(minimal.in_dim_names) or 'nothing (no-op)'}")
    return lines


def main(argv: list[str] | None = None) -> int:
    out = sys.stdout
    src = figure1_layout()
    print("== 1. The paper's Figure 1 layout: 16x16 tensor, 2x2 registers, 4x8 lanes, 2 warps ==", file=out)
    print(src, file=out)
    print("\nEvaluating it (L(x) = XOR of the bases of the set bits of x):", file=out)
    for reg, lane, warp in [(0, 0, 0), (1, 0, 0), (3, 5, 0), (2, 31, 1)]:
        where = src.apply({"register": reg, "lane": lane, "warp": warp})
        print(f"  register={reg} lane={lane:>2} warp={warp} -> (row {where['dim0']:>2}, col {where['dim1']:>2})",
              file=out)
    print("\nWho holds each element (t<lane>:r<register>, ' marks warp 1):", file=out)
    print_grid(ownership_grid(src, 16, 16), out)

    print("\n== 2. Its matrix over F2 ==", file=out)
    print("rows: tensor bits (dim0 bits 0-3, then dim1 bits 0-3); columns: hardware bits", file=out)
    columns = ["r0", "r1", "l0", "l1", "l2", "l3", "l4", "w0"]
    print("          " + " ".join(f"{c:>2}" for c in columns), file=out)
    row_names = [f"dim0.b{i}" for i in range(4)] + [f"dim1.b{i}" for i in range(4)]
    for name, row in zip(row_names, src.matrix()):
        print(f"  {name}  " + " ".join(f"{b:>2}" for b in row), file=out)
    print(f"surjective={src.is_surjective()} injective={src.is_injective()} "
          f"invertible={src.is_invertible()}", file=out)

    dst = row_per_lane_layout()
    print("\n== 3. A conversion, with invert_and_compose ==", file=out)
    print("Destination layout (4 consecutive columns per lane, lanes down the rows):", file=out)
    print(dst, file=out)
    conversion = dst.invert_and_compose(src)
    print("\nconversion = dst.invert_and_compose(src): for each destination (register, lane, warp),", file=out)
    print("the source (register, lane, warp) that holds the same element:", file=out)
    print(conversion, file=out)
    for line in describe_conversion(conversion):
        print(line, file=out)
    example = conversion.apply({"register": 3, "lane": 9, "warp": 1})
    print(f"\nFor example destination register 3 of lane 9 in warp 1 reads source register "
          f"{example['register']} of lane {example['lane']} in warp {example['warp']}.", file=out)
    print("Warps map to themselves, so this conversion stays inside each warp: registers and lanes", file=out)
    print("mix, which a warp shuffle (or warp-local shared memory) can do without a CTA barrier.", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
