"""`ll-viz`: see a layout.

    ll-viz ATTRIBUTE --shape 16,16                  element grid: which warp/lane/register holds each element
    ll-viz ATTRIBUTE --shape 64,64 -o layout.png    the same as a picture (cells coloured by warp)
    ll-viz SHARED_ATTR --shape 32,32 --bits 16      shared layouts: offset and bank of each element
                                                    (nvmma_shared: its elementBitWidth unless --bits)
    ll-viz SHARED_ATTR --shape 32,32 --access DIST  ... with the bank conflicts of DIST's accesses marked
                                                    (vector accesses where the code would use them)
    ll-viz --compare A B --shape 32,32              two layouts side by side, moved elements marked
    ll-viz --file k.ttgir --value %5                the layout of a value in a module
    ll-viz --plan SRC DST --shape 64,64 --bits 16 --target sm_90 [-o plan.png]
                                                    how a conversion SRC -> DST is lowered: shuffle
                                                    rounds or shared-memory accesses, and its cost

ATTRIBUTE is a layout attribute as Triton prints it (``#ttg.blocked<{...}>``, ``#ttg.nvidia_mma<...>``,
``#ttg.linear<...>``, ``#ttg.swizzled_shared<...>``, ...; quote it for the shell).  Errors print
``ll-viz: error: ...`` and exit 1.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from linear_layouts.dialect import LayoutError, LinearLayout
from linear_layouts.lowering.element_type import storage_bits_of
from linear_layouts.lowering.shared_conflicts import access_conflicts, access_vector  # noqa: F401
from linear_layouts.tools.viewers import layout_view as view
from linear_layouts.tools.cli import ArgumentParser, UsageError, decode_utf8, print_output


class VizError(Exception):
    """A user error: printed as ``ll-viz: error: ...``, exit code 1."""


# Sizes ll-viz accepts, checked before any work, so that every run ends in seconds:
# MAX_ELEMENTS is Triton's own largest tensor (TRITON_MAX_TENSOR_NUMEL); a view lists every
# hardware position of a layout (register x lane x warp x block, or offset x block), at most
# MAX_POSITIONS of them (its time: docs/reliability.md, 'Bad input'); a grid or picture shows at
# most MAX_GRID_CELLS elements (a 256 x 256 tile).
MAX_ELEMENTS = 1 << 20
MAX_POSITIONS = 1 << 18
MAX_GRID_CELLS = 1 << 16


# ---------------------------------------------------------------------------- reading input

def target_option(name: str):
    """``--target``'s Target (a VizError naming the known ones otherwise)."""
    from linear_layouts.lowering.target import UnknownTarget, target_named

    try:
        return target_named(name)
    except UnknownTarget as e:
        raise VizError(f"--target: {e}") from None


def parse_shape(text: str) -> list[int]:
    try:
        shape = [int(s) for s in text.replace("x", ",").split(",")]
    except ValueError:   # "32,3x": not a number (it used to read as 32,3, "not a power of two")
        raise VizError(f"--shape {text!r}: not a list of numbers; expected sizes separated by commas "
                       f"(or x), e.g. 64,64 or 64x64") from None
    if not shape or any(s <= 0 or s & (s - 1) for s in shape):
        raise VizError(f"--shape {text!r}: every size must be a power of two")
    total = 1
    for s in shape:
        total *= s
    if total > MAX_ELEMENTS:
        raise VizError(f"--shape {text!r}: {total} elements; a tensor has at most {MAX_ELEMENTS} (Triton's limit)")
    return shape


def check_viewable(layout: LinearLayout, what: str, grid: bool = True) -> LinearLayout:
    """Refuse a layout too large to view (``grid``: also to draw as a grid), naming the sizes."""
    positions = layout.total_in_dim_size
    if positions > MAX_POSITIONS:
        dims = " x ".join(f"{name} {size}" for name, size in layout.in_dims.items())
        raise VizError(f"{what}: {positions} hardware positions ({dims}); ll-viz shows layouts with at most "
                       f"{MAX_POSITIONS}")
    cells = layout.total_out_dim_size
    if grid and cells > MAX_GRID_CELLS:
        shape = "x".join(str(s) for s in layout.out_dims.values())
        raise VizError(f"{what}: a {shape} grid has {cells} cells; ll-viz draws at most {MAX_GRID_CELLS} "
                       f"(e.g. 256x256): give a smaller --shape")
    return layout


def layout_from_attribute(text: str, shape: list[int] | None, aliases: dict | None = None) -> LinearLayout:
    from linear_layouts.dialect import to_linear_layout  # the encodings module

    if shape is None:
        raise VizError("a layout attribute needs --shape (e.g. --shape 64,64)")
    total = 1
    for size in shape:
        total *= size
    if total > MAX_ELEMENTS:
        raise VizError(f"a {'x'.join(map(str, shape))} tensor has {total} elements; a tensor has at most "
                       f"{MAX_ELEMENTS} (Triton's limit)")
    try:
        if aliases is not None:
            from linear_layouts.dialect import parse_attribute

            return to_linear_layout(parse_attribute(text, aliases), shape)
        return to_linear_layout(text, shape)
    except LayoutError as e:
        raise VizError(str(e))


def layout_from_module(path: str, value: str) -> tuple[LinearLayout, str]:
    """Find ``value``'s type in a TTGIR module and return its layout and type text."""
    from linear_layouts.dialect import parse_aliases

    try:
        with open(path, "rb") as f:
            text = decode_utf8(f.read())
    except OSError as e:
        raise VizError(f"cannot read {path}: {e.strerror}")
    found = find_value_type(text, value, path)
    if found is None:
        raise VizError(f"{path}: no value {value} with a tensor or memdesc type")
    shape, encoding = found
    aliases = parse_aliases(text)
    return layout_from_attribute(encoding, shape, aliases), encoding


_TYPE_START = re.compile(r"(tensor<|!ttg\.memdesc<)")


def _balanced(text: str, start: int) -> str:
    """The text from ``start`` up to the '>' closing the '<' that starts there."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "<[{(":
            depth += 1
        elif text[i] in ">]})":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return text[start:]


_ALIAS_NAME = re.compile(r"#[\w.$-]+")
# The results an op line defines: `%x = `, `%x:2 = ` (a pack of 2), `%a, %b = `.
_RESULTS = re.compile(r"^(?P<results>%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s")


def find_value_type(module_text: str, value: str, filename: str = "<module>"):
    """(shape, encoding text) of ``value`` in a TTGIR module, read from its definition: the
    result type of the op defining it, or its type in a function/block argument list, or the
    loop result type matching a loop-carried ``iter_args`` value.  ``%r#1`` names result 1 of a
    pack.  None if not found or not a tensor/memdesc with a layout; a :class:`VizError` naming
    ``filename`` and the line if the encoding is malformed."""
    name, index = _value_name(value)
    lines = module_text.splitlines()
    candidates = []   # (line number, the text from the value's type on)
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        results = _RESULTS.match(stripped)
        position = _result_position(results.group("results"), name, index) if results else None
        if position is not None:
            # An op with regions (tt.reduce, scf.for, scf.if) may print its types after the
            # brace that closes its last region, lines further down: read them from there too.
            signature = stripped + " " + _after_regions(lines, number - 1)
            candidates.append((number, _nth_type(_result_types(signature), position)))
            continue
        m = re.search(re.escape(name) + r": ", stripped)
        if m:   # a function or block argument: `%x: tensor<...>`
            candidates.append((number, stripped[m.end():]))
            continue
        carried = _iter_args_position(stripped, name)
        if carried is not None:   # a loop-carried value has the type of the loop's result there
            candidates.append((number, _nth_type(_result_types(stripped), carried)))
    for number, types in candidates:
        found = _shape_and_encoding(types, name, number, filename)
        if found is not None:
            return found
    return None


def _value_name(value: str) -> tuple[str, "int | None"]:
    """``%r#1`` -> (``%r``, 1); ``%r`` or ``r`` -> (``%r``, None)."""
    name = value if value.startswith("%") else "%" + value
    base, hash_sign, number = name.partition("#")
    return (base, int(number)) if hash_sign and number.isdigit() else (name, None)


def _result_position(results: str, name: str, index: "int | None") -> "int | None":
    """Which result of an op defining ``results`` (``%a, %b:2``) ``name`` (``#index``) is, or None."""
    position = 0
    for result in results.split(","):
        result_name, _, count = result.strip().partition(":")
        size = int(count) if count else 1
        if result_name == name and (index or 0) < size:
            return position + (index or 0)
        position += size
    return None


def _after_regions(lines: list[str], start: int) -> str:
    """For an op on ``lines[start]`` that opens regions (more '{' than '}' on the line), the
    text after the '}' closing its last region (``}) : (tensor<...>) -> tensor<...>``); else ""."""
    depth = 0
    for number in range(start, len(lines)):
        for i, char in enumerate(_without_strings(lines[number])):
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0 and number > start:
                    return lines[number][i + 1:]
        if depth <= 0:
            return ""   # no region opened on the op's line (attribute dictionaries close on it)
    return ""


def _without_strings(line: str) -> str:
    """``line`` with the inside of its "..." strings blanked (braces in them are no regions)."""
    return re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: '"' + " " * (len(m.group()) - 2) + '"', line)


def _result_types(signature: str) -> list[str]:
    """The result types of an op's text: after its last '->' (a parenthesized list or one
    type), or else after its last ' : ' (the op's one type list)."""
    types = signature.rsplit("->", 1)[1] if "->" in signature else signature.rsplit(" : ", 1)[-1]
    types = types.strip()
    if types.startswith("("):
        types = _balanced(types, 0)[1:-1]
    return _split_top_level(types)


def _split_top_level(text: str) -> list[str]:
    """``tensor<4xf32, #a>, tensor<4xi32, #b>`` -> the two types (commas inside brackets kept)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<[{(":
            depth += 1
        elif char in ">]})":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _nth_type(types: list[str], position: int) -> str:
    """Result ``position``'s type; one type for all results (``%a:2 = tt.split %x : A -> B``): that one."""
    return types[position] if position < len(types) else types[0] if len(types) == 1 else ""


def _iter_args_position(line: str, name: str) -> "int | None":
    """Which loop-carried value ``name`` is in a loop's ``iter_args(%a = %x, %b = %y)``, or None."""
    m = re.search(r"iter_args\(", line)
    if m is None:
        return None
    carried = _split_top_level(_balanced(line, m.end() - 1)[1:-1])
    for position, binding in enumerate(carried):
        if binding.split("=")[0].strip() == name:
            return position
    return None


def _shape_and_encoding(types: str, name: str, number: int, filename: str):
    """(shape, encoding text) of the first tensor or memdesc type in ``types``, or None."""
    m = _TYPE_START.search(types)
    if not m:
        return None
    inner = _balanced(types, m.start() + len(m.group(1)) - 1)[1:-1]
    dims, _, rest = inner.partition(",")
    parts = dims.strip().split("x")[:-1]
    try:
        shape = [int(p) for p in parts]
    except ValueError:
        return None
    encoding = rest.strip()
    if not encoding.startswith("#"):
        return None
    if encoding.startswith("#ttg.") and "<" in encoding:
        return shape, encoding[:encoding.index("<")] + _balanced(encoding, encoding.index("<"))
    alias = _ALIAS_NAME.match(encoding)
    if alias is None:   # '#' and then no name: '#', '# A', '#"x"'
        raise VizError(f"{filename}:{number}: the type of {name} has a malformed layout encoding "
                       f"'{encoding.split('>')[0]}': expected an alias such as #blocked or an "
                       f"attribute such as #ttg.blocked<{{...}}>")
    return shape, alias.group(0)


# ---------------------------------------------------------------------------- text output

def grid_text(layout: LinearLayout, bits: int, max_copies: int, marked: set | None = None,
              other: LinearLayout | None = None, target=None) -> str:
    """The element grid as text; ``marked`` elements get a leading '*'; with ``other``, each
    cell shows both layouts' holders (A -> B).  Shared layouts show banks of ``target`` (a
    ``lowering.Target``, needed for them)."""
    shared = view.is_shared(layout)
    holders = view.holders_by_element(layout)
    other_holders = view.holders_by_element(other) if other is not None else None
    rank = len(layout.out_dims)

    def cell(table, element, is_shared):
        hs = table.get(element, [])
        if not hs:
            return "-"
        labels = [h.label(is_shared, bits, target) for h in hs[:max_copies]]
        extra = f"+{len(hs) - max_copies}" if len(hs) > max_copies else ""
        return "/".join(labels) + extra

    lines = []
    for prefix, rows, cols in view.tensor_slices(layout):
        cells = []
        for r in range(rows):
            row = []
            for c in range(cols):
                element = view.element_at(prefix, r, c, rank)
                text = cell(holders, element, shared)
                if other_holders is not None:
                    text += " -> " + cell(other_holders, element, view.is_shared(other))
                if marked and element in marked:
                    text = "*" + text
                row.append(text)
            cells.append(row)
        width = max(len(t) for row in cells for t in row)
        if prefix:
            lines.append(f"[{', '.join(str(i) for i in prefix)}, :, :]")
        header = " " * 6 + " ".join(f"{c:>{width}}" for c in range(cols))
        lines.append(header)
        for r, row in enumerate(cells):
            lines.append(f"{r:>4}: " + " ".join(f"{t:>{width}}" for t in row))
    return "\n".join(lines)


def moved_elements(a: LinearLayout, b: LinearLayout) -> set:
    """Elements whose set of holding threads (block, warp, lane) differs between a and b; for
    two shared layouts, elements whose set of (block, offset) places differs."""
    def threads(layout):
        if view.is_shared(layout):
            return {e: {(h.get("block"), h.get("offset")) for h in hs}
                    for e, hs in view.holders_by_element(layout).items()}
        return {e: {(h.get("block"), h.get("warp"), h.get("lane")) for h in hs}
                for e, hs in view.holders_by_element(layout).items()}
    ta, tb = threads(a), threads(b)
    return {e for e in ta if ta[e] != tb.get(e)}


# ---------------------------------------------------------------------------- pictures

ROW_LENGTH_1D = 32      # a 1-D layout is drawn as rows of this many elements


def picture_grid(layout: LinearLayout, window: "tuple[int, int] | None" = None) -> tuple[int, int, int, int, callable]:
    """(rows drawn, columns drawn, rows of the tensor, columns of the tensor, cell -> element)
    for a picture of ``layout``'s first 2-D slice: a 1-D layout as rows of ``ROW_LENGTH_1D``
    elements; ``window`` (rows, columns), if given, keeps the top-left cells."""
    prefix, rows, cols = view.tensor_slices(layout)[0]
    rank = len(layout.out_dims)
    if rank == 1 and cols > ROW_LENGTH_1D:
        rows, cols = cols // ROW_LENGTH_1D, ROW_LENGTH_1D

        def element(r, c):
            return (r * ROW_LENGTH_1D + c,)
    else:
        def element(r, c):
            return view.element_at(prefix, r, c, rank)
    shown_rows, shown_cols = (min(rows, window[0]), min(cols, window[1])) if window else (rows, cols)
    return shown_rows, shown_cols, rows, cols, element


# Picture sizes.  A picture is at most view.MAX_PICTURE_PIXELS on its long side: cells shrink to
# fit, and once a cell is too small for a label of MIN_LABEL_POINTS (about 9 pixels) the cells go
# unlabelled; the legend still says what each colour is.
LARGEST_CELL_INCHES = 0.55
LABEL_POINTS = 6.0
MIN_LABEL_POINTS = 4.5
PANEL_MARGIN_INCHES = 0.9     # a panel's tick labels and axis label
TITLE_INCHES = 1.6            # titles and notes above the panels, axis labels below
LEGEND_ROW_INCHES = 0.22
LEGEND_COLUMNS = 16


@dataclass(frozen=True)
class PictureSize:
    """How large a picture of ``panels`` grids of ``rows`` x ``cols`` cells is drawn."""

    cell_inches: float
    width_inches: float
    height_inches: float
    label_points: float   # the cells' label font size; 0: no labels (cells too small to read them)


def picture_size(rows: int, cols: int, panels: int, label_lines: int, legend_rows: int) -> PictureSize:
    """The size that fits view.MAX_PICTURE_PIXELS: the largest cells that fit (at most
    LARGEST_CELL_INCHES), and labels of ``label_lines`` lines (``t5`` / ``r2`` / ``×4``) as large
    as a cell holds them (at most LABEL_POINTS), or none below MIN_LABEL_POINTS."""
    longest = view.MAX_PICTURE_PIXELS / view.PICTURE_DPI
    legend_inches = legend_rows * LEGEND_ROW_INCHES
    cell = min(LARGEST_CELL_INCHES,
               (longest - 0.5 - panels * PANEL_MARGIN_INCHES) / (panels * cols),
               (longest - TITLE_INCHES - legend_inches) / rows)
    width = min(longest, panels * (max(3.5, cols * cell) + PANEL_MARGIN_INCHES) + 0.5)
    height = min(longest, max(2.5, rows * cell) + TITLE_INCHES + legend_inches)
    cell_points = cell * 72
    # A label of n lines needs about 1.25 n line heights; its widest line ("1023", "t31") about
    # 2.5 font sizes of width.
    points = min(LABEL_POINTS, cell_points / (1.25 * label_lines), cell_points / 2.5)
    return PictureSize(cell, width, height, points if points >= MIN_LABEL_POINTS else 0.0)


def draw(path: str, panels: list[tuple[str, LinearLayout]], bits: int,
         marked: set | None = None, mark_label: str = "", target=None,
         window: "tuple[int, int] | None" = None) -> None:
    """Write a PNG/SVG: one panel per layout, cells coloured by warp (distributed) or bank of
    ``target`` (shared, 32 distinct colours), labelled with lane/register or offset where cells
    are large enough, a legend of the colours below; ``marked`` cells get the mark (a
    ``layout_view.MARK_COLOUR`` border, no warp's or bank's colour; hatched in unlabelled cells).
    A 1-D layout is drawn as rows of ``ROW_LENGTH_1D``; ``window`` (rows, columns) draws only the
    top-left cells (a note says which)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise VizError("pictures need matplotlib: pip install matplotlib")
    if not path.endswith((".png", ".svg", ".pdf")):
        raise VizError(f"-o {path}: the picture must be .png, .svg or .pdf")
    import textwrap

    first = panels[0][1]
    grid = picture_grid(first, window)
    rows, cols, all_rows, all_cols, element_of = grid
    drawn = [_panel_cells(layout, rows, cols, element_of, bits, target) for _, layout in panels]
    copies_seen = any(cells.copies_seen for cells in drawn)
    legend = _legend_entries(drawn, marked, mark_label)
    legend_rows = -(-len(legend) // LEGEND_COLUMNS)
    size = picture_size(rows, cols, len(panels), 3 if copies_seen else 2, legend_rows)
    if marked and not size.label_points:
        legend[-1].set_hatch(view.MARK_HATCH)   # as the marks of unlabelled cells are
    fig, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(size.width_inches, size.height_inches))
    for ax, (title, layout), cells in zip(axes[0], panels, drawn):
        _draw_panel(ax, title, cells, grid, len(first.out_dims), marked, size)
    notes = []
    if rows < all_rows or cols < all_cols:
        notes.append(f"showing rows 0-{rows - 1} and columns 0-{cols - 1} of {all_rows} x {all_cols}")
    if copies_seen and size.label_points:
        notes.append("×N: the element is held by N threads (copies: a broadcast layout)")
    if marked:
        notes.append(f"{'black' if size.label_points else 'hatched black'} border: {mark_label}")
    if not size.label_points:
        notes.append("cells too small to label: colours as the legend says (ll-viz without -o prints every cell)")
    if notes:
        fig.suptitle("\n".join(textwrap.wrap("; ".join(notes), max(40, int(size.width_inches * 11)))), fontsize=7)
    legend_inches = legend_rows * LEGEND_ROW_INCHES
    if legend:
        fig.legend(handles=legend, loc="lower center", ncol=min(LEGEND_COLUMNS, len(legend)), fontsize=6,
                   frameon=False, handlelength=1.2, columnspacing=0.8)
    fig.tight_layout(rect=(0, min(0.5, legend_inches / size.height_inches), 1, 1))
    fig.savefig(path, dpi=view.PICTURE_DPI)
    plt.close(fig)


@dataclass
class PanelCells:
    """What one panel shows in each cell: its colour, its label, and the legend's colours."""

    shared: bool
    image: "object"                    # rows x cols x RGBA
    labels: dict                       # (row, col) -> label text
    colours: dict                      # legend label ("warp 3", "bank 5") -> RGBA, in order of first use
    copies_seen: bool = False


def _panel_cells(layout: LinearLayout, rows: int, cols: int, element_of, bits: int, target) -> PanelCells:
    """Colours and labels of one panel's cells: by warp (distributed) or bank (shared)."""
    import numpy as np

    shared = view.is_shared(layout)
    holders = view.holders_by_element(layout)
    warps, banks = view.warp_colours(), view.bank_colours(64)
    cells = PanelCells(shared, np.ones((rows, cols, 4)), {}, {})
    for r in range(rows):
        for c in range(cols):
            hs = holders.get(element_of(r, c), [])
            if not hs:
                continue
            h = hs[0]
            if shared:
                bank = view.bank_of(h.get("offset"), bits, target)
                colour, name = banks[bank % len(banks)], f"bank {bank}"
                cells.labels[r, c] = f"{h.get('offset')}\nb{bank}"
            else:
                colour = warps[(h.get("warp") * 2 + (h.get("block") % 2)) % len(warps)]
                name = f"warp {h.get('warp')}" + (" (odd CTA)" if h.get("block") % 2 else "")
                cells.labels[r, c] = f"t{h.get('lane')}\nr{h.get('register')}"
                if len(hs) > 1:
                    cells.labels[r, c] += f"\n×{len(hs)}"
                    cells.copies_seen = True
            cells.image[r, c] = colour
            cells.colours.setdefault(name, colour)
    return cells


def _legend_entries(drawn: list[PanelCells], marked, mark_label: str) -> list:
    """The legend: each colour of the panels once (warps or banks, in order), and the mark."""
    from matplotlib.patches import Patch

    colours: dict = {}
    for cells in drawn:
        for name, colour in cells.colours.items():
            colours.setdefault(name, colour)
    key = (lambda name: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)])
    entries = [Patch(facecolor=colours[name], label=name) for name in sorted(colours, key=key)]
    if marked:
        entries.append(Patch(facecolor="white", edgecolor=view.MARK_COLOUR, linewidth=1.2,
                             label=f"marked: {mark_label}"))
    return entries


def _draw_panel(ax, title: str, cells: PanelCells, grid, rank: int, marked, size: PictureSize) -> None:
    """One panel: the cells' colours as one image, white borders and the marks as one path each
    (an SVG of a few elements, not one per cell: a 256 x 256 picture takes seconds), labels
    where they fit."""
    import textwrap

    import numpy as np
    from matplotlib.patches import PathPatch, Rectangle
    from matplotlib.path import Path

    rows, cols, all_rows, _, element_of = grid
    if size.label_points:
        for (r, c), label in cells.labels.items():
            ax.text(c + 0.5, r + 0.5, label, ha="center", va="center", fontsize=size.label_points)
    # "none": vector backends embed the image unresampled (one pixel per cell: a small SVG)
    ax.imshow(cells.image, extent=(0, cols, rows, 0), interpolation="none")
    if size.cell_inches * view.PICTURE_DPI >= 6:   # white cell borders, where cells are large enough to see them
        xs = [v for c in range(cols + 1) for v in (c, c, np.nan)] + [v for _ in range(rows + 1) for v in (0, cols, np.nan)]
        ys = [v for _ in range(cols + 1) for v in (0, rows, np.nan)] + [v for r in range(rows + 1) for v in (r, r, np.nan)]
        ax.plot(xs, ys, color="white", linewidth=0.5)
    marks = [Rectangle((c + 0.08, r + 0.08), 0.84, 0.84) for r in range(rows) for c in range(cols)
             if marked and element_of(r, c) in marked]
    if marks:
        compound = Path.make_compound_path(*(m.get_patch_transform().transform_path(m.get_path()) for m in marks))
        # Hatched only where no label would be crossed out by it.
        ax.add_patch(PathPatch(compound, facecolor="none", edgecolor=view.MARK_COLOUR, linewidth=1.2,
                               hatch=None if size.label_points else view.MARK_HATCH))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    if rank == 1 and all_rows > 1:
        ax.set_xlabel(f"dim0 mod {cols}")
        ax.set_ylabel(f"dim0 // {cols}")
    else:
        ax.set_xlabel("dim1 (column)" if rank > 1 else "dim0")
        ax.set_ylabel("dim0 (row)" if rank > 1 else "")
    step = max(1, cols // 16)
    ax.set_xticks([c + 0.5 for c in range(0, cols, step)], [str(c) for c in range(0, cols, step)], fontsize=6)
    rstep = max(1, rows // 16)
    ax.set_yticks([r + 0.5 for r in range(0, rows, rstep)], [str(r) for r in range(0, rows, rstep)], fontsize=6)
    colour = "colour = bank" if cells.shared else "colour = warp"
    label = ("label = offset / bank" if cells.shared else "label = lane t / register r") if size.label_points \
        else "no labels"
    width = max(30, int(size.width_inches * 11 / max(1, len(ax.figure.axes))))
    ax.set_title("\n".join(textwrap.wrap(title, width) + [f"({colour}, {label})"]), fontsize=7)


# ---------------------------------------------------------------------------- command line

def build_parser() -> ArgumentParser:
    from linear_layouts.lowering.target import known_target_names

    p = ArgumentParser(prog="ll-viz", description="Show which hardware coordinates hold each element of a layout.")
    p.add_argument("attribute", nargs="?", help="a layout attribute as Triton prints it")
    p.add_argument("--shape", help="tensor shape, e.g. 64,64")
    p.add_argument("--file", help="a TTGIR module to read a value's layout from (with --value)")
    p.add_argument("--value", help="the SSA value, e.g. %%5 (with --file)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="show layouts A and B side by side")
    p.add_argument("--plan", nargs=2, metavar=("SRC", "DST"),
                   help="show the verified plan converting distributed layout SRC to DST, and its cost")
    p.add_argument("--target", default="sm_90",
                   help="--plan's target, and the bank model of shared layouts and --access (default sm_90): "
                        + known_target_names())
    p.add_argument("--access", metavar="DIST", help="shared layouts: mark the bank conflicts of this distributed layout's accesses")
    p.add_argument("--bits", type=int, default=None,
                   help="element bit width, for banks (default: an nvmma_shared layout's elementBitWidth, else 32)")
    p.add_argument("--max-copies", type=int, default=4, help="broadcast copies listed per cell (default 4)")
    p.add_argument("-o", "--output", help="write a picture (.png, .svg or .pdf) instead of text")
    return p


def element_bits(*attributes: str) -> int:
    """The element width a layout attribute states (``nvmma_shared``'s ``elementBitWidth``), else 32."""
    from linear_layouts.dialect import parse_attribute
    from linear_layouts.dialect.attributes import NvmmaSharedEncoding

    for text in attributes:
        try:
            attribute = parse_attribute(text) if text else None
        except LayoutError:
            continue   # the layout's own error comes where it is read
        if isinstance(attribute, NvmmaSharedEncoding):
            return attribute.element_bit_width
    return 32


def run(args) -> str:
    if args.bits is None:
        args.bits = element_bits(args.attribute, *(args.compare or ()))
    if args.bits not in (1, 8, 16, 32, 64):
        raise VizError(f"--bits {args.bits}: expected 1, 8, 16, 32 or 64")
    if args.max_copies < 1:
        raise VizError(f"--max-copies {args.max_copies}: expected a count of at least 1")
    target = target_option(args.target)
    shape = parse_shape(args.shape) if args.shape else None
    out: list[str] = []
    if args.plan:
        if args.attribute or args.file or args.compare:
            raise VizError("--plan takes its two layouts itself; give no other layout")
        return run_plan(args.plan[0], args.plan[1], shape, args.bits, target, args.output)
    if args.compare:
        if args.attribute or args.file:
            raise VizError("--compare takes its two layouts itself; give no other layout")
        a = check_viewable(layout_from_attribute(args.compare[0], shape), "--compare A")
        b = check_viewable(layout_from_attribute(args.compare[1], shape), "--compare B")
        if list(a.out_dims.values()) != list(b.out_dims.values()):
            raise VizError("--compare: the two layouts cover different shapes")
        if view.is_shared(a) != view.is_shared(b):
            kinds = ["shared-memory" if view.is_shared(x) else "distributed" for x in (a, b)]
            raise VizError(f"--compare: A is a {kinds[0]} layout and B a {kinds[1]} one; compare two layouts of "
                           f"one kind (--access shows how a distributed layout reads a shared one)")
        changed = moved_elements(a, b)
        change = "change offset" if view.is_shared(a) else "change thread"
        out.append(f"A: {args.compare[0]}\nB: {args.compare[1]}")
        out.append(f"{len(changed)} of {a.total_out_dim_size} elements {change} (marked *); cells show A -> B")
        if args.output:
            draw(args.output, [("A", a), ("B", b)], args.bits, changed,
                 f"element {change.replace('change', 'changes')}", target=target)
            out.append(f"wrote {args.output}")
        else:
            out.append(grid_text(a, args.bits, args.max_copies, changed, b, target=target))
        return "\n".join(out)

    if args.file:
        if not args.value:
            raise VizError("--file needs --value (e.g. --value %5)")
        layout, encoding = layout_from_module(args.file, args.value)
        layout = check_viewable(layout, args.value)
        title = f"{args.value}: {encoding}"
    elif args.attribute:
        layout = check_viewable(layout_from_attribute(args.attribute, shape), "the layout")
        title = args.attribute
    else:
        raise VizError("give a layout attribute, --file with --value, or --compare A B")

    marked, note = None, ""
    if args.access:
        if not view.is_shared(layout):
            raise VizError("--access applies to shared layouts only")
        access = check_viewable(layout_from_attribute(args.access, list(layout.out_dims.values())), "--access",
                                grid=False)
        if view.is_shared(access):
            raise VizError("--access: give the distributed layout that reads or writes the shared one")
        marked, extra, accesses = access_conflicts(layout, access, args.bits, target)
        vector = access_vector(layout, access, args.bits)
        kind = "scalar accesses" if vector == 1 else \
            f"{vector * storage_bits_of(args.bits)}-bit vector accesses ({vector} elements each)"
        note = (f"access pattern {args.access}: {accesses} {kind}, {extra} extra wavefronts "
                f"from bank conflicts; {len(marked)} elements involved" + (" (marked *)" if marked else ""))
    out.append(title)
    summary = view.broadcast_summary(layout)
    if summary:
        out.append(summary)
    if note:
        out.append(note)
    if args.output:
        draw(args.output, [(title if len(title) < 80 else title[:77] + "...", layout)], args.bits, marked,
             "bank conflict", target=target)
        out.append(f"wrote {args.output}")
    else:
        out.append(grid_text(layout, args.bits, args.max_copies, marked, target=target))
    return "\n".join(out)


def run_plan(src_text: str, dst_text: str, shape: list[int] | None, bits: int, target,
             output: str | None) -> str:
    """``--plan``: the planner's answer for SRC -> DST, in words (and as a picture with -o).
    No plan is an answer too (the reason is printed, exit 0): Triton keeps that conversion."""
    from linear_layouts.lowering import plan_conversion
    from linear_layouts.lowering.plan import Method
    from linear_layouts.tools.viewers import plan_view

    src = check_viewable(layout_from_attribute(src_text, shape), "SRC", grid=False)
    dst = check_viewable(layout_from_attribute(dst_text, shape), "DST", grid=False)
    for name, layout in (("SRC", src), ("DST", dst)):
        if view.is_shared(layout):
            raise VizError(f"--plan: {name} is a shared-memory layout; a conversion is between distributed layouts")
    if list(src.out_dims.values()) != list(dst.out_dims.values()):
        raise VizError("--plan: the two layouts cover different shapes")
    for dim, unit in (("warp", "warps"), ("block", "CTAs")):
        if src.in_dims.get(dim, 1) != dst.in_dims.get(dim, 1):
            raise VizError(f"--plan: SRC spreads over {src.in_dims.get(dim, 1)} {unit}, DST over "
                           f"{dst.in_dims.get(dim, 1)}: a conversion stays within one kernel's {unit} "
                           f"(give both layouts the same {'warpsPerCTA product' if dim == 'warp' else 'CTAsPerCGA product'})")
    if output and not output.endswith((".png", ".svg", ".pdf")):
        raise VizError(f"-o {output}: the picture must be .png, .svg or .pdf")
    if output:
        try:   # before planning: a plan's picture is drawn by plan_view, another by draw()
            import matplotlib  # noqa: F401
        except ImportError:
            raise VizError("pictures need matplotlib: pip install matplotlib") from None
    shape_text = "x".join(str(s) for s in src.out_dims.values())
    what = f"{shape_text} x {bits}-bit elements on {target.name}\nSRC: {src_text}\nDST: {dst_text}"
    plan = plan_conversion(src, dst, bits, target)
    lines = [plan_view.plan_text(plan, what)]
    if output:
        if plan and plan.method in (Method.SHUFFLE, Method.SHARED):
            plan_view.draw_plan(plan, output, f"{shape_text} x {bits}-bit: SRC -> DST")
        else:
            # Nothing moves between threads: the useful picture is the two layouts side by side.
            draw(output, [("SRC", src), ("DST", dst)], bits, moved_elements(src, dst), "element changes thread")
        lines.append(f"wrote {output}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        text = run(args)
    except UsageError as e:
        print(f"ll-viz: error: {e}", file=sys.stderr)
        return 1
    except VizError as e:
        print(f"ll-viz: error: {e}", file=sys.stderr)
        return 1
    except LayoutError as e:
        print(f"ll-viz: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # an output directory that does not exist, an unreadable --file, ...
        where = f" '{e.filename}'" if getattr(e, "filename", None) else ""
        print(f"ll-viz: error: cannot use{where}: {e.strerror or e}", file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print("ll-viz: error: --file is not a text file (it does not decode as UTF-8)", file=sys.stderr)
        return 1
    return print_output(text)


if __name__ == "__main__":
    sys.exit(main())
