"""The HTML form of ``python -m linear_layouts report``: static pages, readable offline.

``DIR/index.html``      the summary, the kernels worth a look first, one row per kernel
``DIR/kernels/K.html``  per kernel: its conversions, each with its source line, both layouts
                        (as text and as element grids), the plan (text and picture), the remark
``DIR/img/*.svg``       the pictures (``ll-viz`` element grids, ``ll-viz --plan`` plans)

No JavaScript; one small style sheet inline in each page; the index's chart is inline SVG.
Pictures (matplotlib, the ``[viz]`` extra) are drawn for the ``max_pictures`` costliest
conversions of each kernel that move data (none for no-ops); a tensor of more than
``MAX_PICTURE_ELEMENTS`` elements is drawn as its top-left ``PICTURE_WINDOW`` x
``PICTURE_WINDOW`` tile with a note (the whole would be a wall of colour).
"""

from __future__ import annotations

import html
import os
from typing import Optional

from linear_layouts.tools.report.model import (ConversionEntry, KernelEntry, ReportOptions, costliest_conversions,
                                               count_text, worth_a_look, write_atomically)
from linear_layouts.tools.report.text import (CONVERSION_HEADER, KERNEL_HEADER, STOCK_VS_OURS_HEADER,
                                              STOCK_VS_OURS_NOTE, conversion_table_rows, kernel_chart_rows,
                                              kernel_table_rows, run_lines, source_listing, stock_vs_ours_rows,
                                              summary_lines, weights_line, MEASURE_HEADER, measure_lines,
                                              measure_rows, measured_verdict, noise_threshold, NOISE_FLOOR,
                                              ADVICE_MEASURE_HEADER, ADVICE_MEASURE_NOTE, advice_measure_rows,
                                              CHOICE_HEADER, CHOICE_NOTE, candidate_text, choice_rows,
                                              pair_verdict, SAME_BINARY,
                                              advice_rows, ADVICE_HEADER, ADVICE_NOTE,
                                              AUTO_LAYOUTS_HEADER, AUTO_LAYOUTS_NOTE, auto_layout_kernels,
                                              auto_layout_line, auto_layout_rows, auto_layout_summary)

MAX_PICTURE_ELEMENTS = 256      # 16 x 16 (or 8 rows of 32 for 1-D): larger tensors are drawn as a tile
PICTURE_WINDOW = 16             # rows and columns of that tile (1-D: 8 rows of 32)
MAX_TEXT_GRID_ELEMENTS = 1024   # 32 x 32: the text grid of both layouts, cell by cell
NO_MATPLOTLIB = ("No pictures: matplotlib is not installed (pip install matplotlib, or the viz extra: "
                 "pip install 'linear-layouts[viz]'); the tables and text layouts are all here.")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1.5em; max-width: 1400px;
       box-sizing: border-box; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
tr.left td { background: #fff6e6; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
code { background: #f3f3f3; }
section.conversion { border-top: 2px solid #ddd; margin-top: 1.5em; }
img { max-width: 100%; border: 1px solid #eee; }
.note { color: #666; font-size: 0.85em; }
pre.listing { line-height: 1.35; }
pre.listing span.line { display: block; }
pre.listing a { font-weight: bold; }
.hint { background: #eef6ff; border-left: 4px solid #4a90d9; padding: 0.3em 0.6em; }
"""


def _e(text) -> str:
    return html.escape(str(text))


def _page(title: str, body: list[str]) -> str:
    return "\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                      f"<title>{_e(title)}</title>", f"<style>{STYLE}</style></head><body>"] + body +
                     ["</body></html>", ""])


def _table(header: list[str], rows: list[list[str]], links: Optional[dict] = None,
           left_rows: Optional[set] = None) -> list[str]:
    """An HTML table; ``links`` maps a row number to the href of its first cell; rows in
    ``left_rows`` are highlighted (conversions left to Triton)."""
    out = ["<table>", "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"]
    for i, row in enumerate(rows):
        cells = [f"<td>{_e(c)}</td>" for c in row]
        if links and i in links:
            cells[0] = f'<td><a href="{_e(links[i])}">{_e(row[0])}</a></td>'
        css = ' class="left"' if left_rows and i in left_rows else ""
        out.append(f"<tr{css}>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return out


# ----------------------------------------------------------------------------- pictures

def picture_choice(kernel: KernelEntry, max_pictures: int) -> dict:
    """conversion number -> why it gets no pictures ("" when it gets them): the ``max_pictures``
    costliest conversions that move data (by loop-weighted cost, then text order) get them;
    no-ops and conversions whose layouts could not be read do not."""
    movers = [c for c in kernel.conversions if not c.row.is_noop and c.src_layout is not None
              and c.dst_layout is not None]
    chosen = {c.number for c in sorted(movers, key=lambda c: (-c.weighted_cost, c.number))[:max_pictures]}
    reasons = {}
    for c in kernel.conversions:
        if c.row.is_noop:
            reasons[c.number] = "no pictures: a no-op (no element changes register, thread or warp)"
        elif c.src_layout is None or c.dst_layout is None:
            reasons[c.number] = "no pictures: the layouts could not be read"
        elif c.number not in chosen:
            reasons[c.number] = (f"no pictures: only the {count_text(max_pictures, 'costliest conversion')} of a "
                                 f"kernel get pictures (--pictures N)")
        else:
            reasons[c.number] = ""
    return reasons


def draw_pictures(kernel: KernelEntry, directory: str, max_pictures: int) -> None:
    """Element grids and plan pictures for the ``max_pictures`` costliest conversions of
    ``kernel`` (SVG under ``directory/img``); a conversion without a picture gets a note saying
    why.  A tensor of more than ``MAX_PICTURE_ELEMENTS`` elements is drawn as its top-left
    ``PICTURE_WINDOW`` x ``PICTURE_WINDOW`` tile, with a note."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"   # text stays text: small files, crisp labels
    # one font family named in each <text>'s style, not matplotlib's list of ten fallbacks
    matplotlib.rcParams["font.family"] = "sans-serif"
    matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans"]
    matplotlib.rcParams["svg.hashsalt"] = "linear-layouts"   # the same picture, the same file

    from linear_layouts.tools.viewers.plan_view import draw_plan
    from linear_layouts.tools.viewers.viz import draw, moved_elements

    os.makedirs(os.path.join(directory, "img"), exist_ok=True)
    reasons = picture_choice(kernel, max_pictures)
    for c in kernel.conversions:
        if reasons[c.number]:
            c.picture_notes.append(reasons[c.number])
            continue
        elements = 1
        for size in c.src_layout.out_dims.values():
            elements *= size
        window = None
        if elements > MAX_PICTURE_ELEMENTS:
            window = (MAX_PICTURE_ELEMENTS // 32, 32) if len(c.src_layout.out_dims) == 1 else \
                (PICTURE_WINDOW, PICTURE_WINDOW)
            c.picture_notes.append(f"element grids: the top-left {window[0]} x {window[1]} tile of {elements} elements "
                                   f"(the whole tensor would be a wall of colour); the bases above describe all of it")
        name = f"img/{kernel.slug}-c{c.number}-layouts.svg"
        draw(os.path.join(directory, name),
             [(f"source {c.src_attribute}", c.src_layout), (f"destination {c.dst_attribute}", c.dst_layout)],
             c.bits, moved_elements(c.src_layout, c.dst_layout), "elements that change thread", window=window)
        c.pictures["layouts"] = name
        plan = c.row.plan
        if plan is not None and (plan.shuffle is not None or plan.shared is not None):
            name = f"img/{kernel.slug}-c{c.number}-plan.svg"
            draw_plan(plan, os.path.join(directory, name), c.row.what)
            c.pictures["plan"] = name


# ----------------------------------------------------------------------------- pages

def matplotlib_missing() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return True
    return False


def index_page(kernels: list[KernelEntry], options: ReportOptions, note: str = "") -> str:
    body = ["<h1>linear-layouts report</h1>", "<h2>Summary</h2>", "<ul>"]
    body += [f"<li>{_e(line)}</li>" for line in summary_lines(kernels) + run_lines(kernels, options)
             + measure_lines(options) + [weights_line(kernels)]]
    body.append("</ul>")
    if note:
        body.append(f'<p class="note">{_e(note)}</p>')
    look = worth_a_look(kernels)
    if look:
        body.append("<h2>Worth a look first</h2><p class=\"note\">by the cost model's weight of the kernel's "
                    "conversions per warp (the instructions a warp issues to shared memory and the shuffle unit), "
                    "times how often each runs (its loops)</p><ol>")
        for k in look:
            left = sum(1 for c in k.conversions if not c.owned)
            body.append(f'<li><a href="kernels/{_e(k.slug)}.html">{_e(k.name)}</a> on {_e(k.target)}: '
                        f"weighted cost {k.weighted_cost:.1f} (once: {k.cost:.1f}), "
                        f"{count_text(len(k.conversions), 'conversion')}"
                        + (f", {left} left to Triton" if left else "") + "</li>")
        body.append("</ol>")
    body += auto_layouts_html(kernels)
    advice = advice_rows(kernels)
    if advice:
        body.append("<h2>Advice: layouts worth changing</h2>")
        body.append(f'<p class="note">{_e(ADVICE_NOTE)}</p>')
        body += _table(ADVICE_HEADER, advice)
    costliest = costliest_conversions(kernels)
    if costliest:
        body.append("<h2>Costliest conversions</h2><ol>")
        for k, c in costliest:
            body.append(f'<li><a href="kernels/{_e(k.slug)}.html#c{c.number}">{_e(k.name)} #{c.number}</a> '
                        f"<code>{_e(c.row.location)}</code>: weighted cost {c.weighted_cost:.1f} = "
                        f"{c.cost:.1f} x {c.weight.runs}"
                        + (" (assumed trip count)" if c.weight.assumed else "") + "</li>")
        body.append("</ol>")
    chart = kernel_chart_rows(kernels)
    if chart:
        body.append("<h2>Stock vs ours per kernel</h2>")
        body.append(chart_svg(chart, "data-movement instructions of the final code, priced by the cost model "
                                     "(per warp, once)"))
    measured = measure_rows(options)
    if measured:
        body.append("<h2>Measured: stock vs ours, the program's own launches</h2>")
        timed = [(m.name, m.stock_ms, m.ours_ms) for m in options.measured.measurements if m.ratio is not None]
        if timed:
            body.append(chart_svg(timed, "milliseconds per launch (median of triton.testing.do_bench)"))
        body += _table(MEASURE_HEADER, measured)
    advised = advice_measure_rows(options)
    if advised:
        body.append("<h2>Measured: the advice applied (ours as written vs ours advised)</h2>")
        body.append(f'<p class="note">{_e(ADVICE_MEASURE_NOTE)}</p>')
        body += _table(ADVICE_MEASURE_HEADER, advised)
    chosen = choice_rows(options)
    if chosen:
        body.append("<h2>Measured: which to write (the kernel as written or its advice)</h2>")
        body.append(f'<p class="note">{_e(CHOICE_NOTE)}</p>')
        body += _table(CHOICE_HEADER, chosen)
    body.append("<h2>Kernels</h2>")
    links = {i: f"kernels/{k.slug}.html" for i, k in enumerate(kernels)}
    body += _table(KERNEL_HEADER, kernel_table_rows(kernels), links)
    compare = "final code: data-movement instructions of the whole kernel, stock Triton vs " \
              "linear_layouts.enable()" if options.compare else "final code not compared (--no-compare)"
    body.append(f'<p class="note">{_e(compare)}; cost/warp: the cost model\'s weight summed over the '
                f"kernel's planned conversions, once each; weighted: each times how often it runs (its loops' trip counts, "
                f"? where a trip count is assumed); scratch: the largest conversion's shared memory.</p>")
    listing = listing_html(kernels)
    if listing:
        body.append("<h2>Source</h2><p class=\"note\">each conversion's line, shaded by its loop-weighted cost "
                    "(the darkest: the costliest line)</p>")
        body += listing
    return _page("linear-layouts report", body)


def auto_layouts_html(kernels: list[KernelEntry], link_prefix: str = "kernels/") -> list[str]:
    """The "Automatic layouts" section ([] when no kernel had automatic layouts resolved); on a
    kernel page (``kernels`` that one kernel, ``link_prefix`` None) without the kernel column's
    links, and with each group's layout as its TTGIR attribute too."""
    found = auto_layout_kernels(kernels)
    if not found:
        return []
    body = ["<h2>Automatic layouts</h2>", f'<p class="note">{_e(AUTO_LAYOUTS_NOTE)}</p>']
    if link_prefix is not None:
        body.append(f"<p>{_e(auto_layout_summary(kernels))}</p>")
    body.append("<ul>" + "".join(f"<li>{_e(auto_layout_line(k))}</li>" for k in found) + "</ul>")
    rows = auto_layout_rows(kernels)
    if rows:
        links = None
        if link_prefix is not None:
            slugs = {k.name: k.slug for k in found}
            links = {i: f"{link_prefix}{slugs[row[0]]}.html" for i, row in enumerate(rows)}
        body += _table(AUTO_LAYOUTS_HEADER, rows, links)
    if link_prefix is None:
        attributes = [f"group {n}, {op} at {location}: {layout}" for k in found if k.auto_layouts.resolved
                      for n, g in enumerate(k.auto_layouts.groups, start=1)
                      for op, location, layout, _ in [(g.op, g.location, g.layout, g.why)] + list(g.others)]
        if attributes:
            body.append("<details><summary>the layouts as TTGIR attributes</summary><pre>"
                        + _e("\n".join(attributes)) + "</pre></details>")
    return body


def chart_svg(rows: list[tuple[str, float, float]], unit: str) -> str:
    """A horizontal bar chart, two bars per row (stock grey, ours blue), values printed: plain
    SVG, no script, no matplotlib."""
    label_width, bar_width, row_height = 260, 420, 34
    top = max((max(stock, ours) for _, stock, ours in rows), default=0.0) or 1.0
    height = 24 + row_height * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_width + bar_width + 90}" height="{height}" '
           f'font-family="sans-serif" font-size="12" role="img" aria-label="stock vs ours per kernel">',
           '<rect x="0" y="2" width="12" height="10" fill="#999"/><text x="16" y="11">stock</text>',
           '<rect x="70" y="2" width="12" height="10" fill="#3b7dd8"/><text x="86" y="11">ours</text>',
           f'<text x="140" y="11" fill="#555">{_e(unit)}</text>']
    for i, (label, stock, ours) in enumerate(rows):
        y = 20 + i * row_height
        out.append(f'<text x="{label_width - 6}" y="{y + 17}" text-anchor="end">{_e(label[:40])}</text>')
        for j, (value, colour) in enumerate(((stock, "#999"), (ours, "#3b7dd8"))):
            width = max(1.0, bar_width * value / top)
            out.append(f'<rect x="{label_width}" y="{y + 2 + j * 14}" width="{width:.1f}" height="12" fill="{colour}"/>')
            text = f"{value:.1f}" if value >= 10 else f"{value:.4g}"
            out.append(f'<text x="{label_width + width + 4:.1f}" y="{y + 12 + j * 14}">{text}</text>')
    out.append("</svg>")
    return "".join(out)


def listing_html(kernels: list[KernelEntry]) -> list[str]:
    """The source lines of every conversion, each marked (a link to its section) and shaded by
    its loop-weighted cost."""
    out = []
    for path, rows in source_listing(kernels):
        lines = []
        for number, text, marks, share in rows:
            if number == 0:
                lines.append('<span class="line">   ...</span>')
                continue
            style = f' style="background: rgba(230, 80, 30, {0.12 + 0.6 * share:.2f})"' if marks else ""
            links = " ".join(f'<a href="kernels/{_e(k.slug)}.html#c{c.number}">{_e(k.name)} #{c.number} '
                             f'({c.weighted_cost:.1f})</a>' for k, c in marks)
            lines.append(f'<span class="line"{style}>{number:5d}  {_e(text)}' + (f"   &larr; {links}" if links else "")
                         + "</span>")
        # one string: a newline between the block-level lines would show as an empty line in <pre>
        out.append(f"<h3><code>{_e(path)}</code></h3><pre class=\"listing\">" + "".join(lines) + "</pre>")
    return out


def _conversion_section(c: ConversionEntry) -> list[str]:
    from linear_layouts.tools.viewers.plan_view import plan_text
    from linear_layouts.tools.viewers.viz import grid_text

    out = [f'<section class="conversion" id="c{c.number}">',
           f"<h3>#{c.number} {_e(c.row.types)}</h3>",
           f"<p><b>where:</b> <code>{_e(c.location)}</code></p>"]
    if c.source_line:
        out.append(f"<pre>{_e(c.source_line)}</pre>")
    out.append(f"<p><b>scope:</b> {_e(c.row.scope)} &nbsp; <b>lowering:</b> {_e(c.row.lowering)} &nbsp; "
               f"<b>outcome:</b> {_e(c.outcome)}</p>")
    if c.why is not None:
        out.append(f"<p><b>why it exists:</b> {_e(c.why.reason)}<br><b>from:</b> <code>{_e(c.why.producer)}</code>"
                   f" &nbsp; <b>used by:</b> " + (", ".join(f"<code>{_e(u)}</code>" for u in c.why.consumers) or "nothing")
                   + "</p>")
        if c.why.sources:
            out.append("<pre>" + "\n".join(f"{_e(where)}:\n    {_e(code)}" for where, code in c.why.sources) + "</pre>")
        if c.why.hint:
            out.append(f'<p class="hint"><b>hint:</b> {_e(c.why.hint)}</p>')
    if c.code is not None:
        out.append(f"<p><b>final code, stock:</b> <code>{_e(c.code.stock.text())}</code> (modelled "
                   f"{c.code.stock_cost:.1f}) &nbsp; <b>ours:</b> <code>{_e(c.code.ours.text())}</code> (modelled "
                   f"{c.code.ours_cost:.1f}) &nbsp; <b>verdict:</b> {_e(c.verdict())}</p>")
    elif not c.owned:
        out.append(f"<p><b>verdict:</b> {_e(c.verdict())}</p>")
    out.append(f"<p><b>cost per warp:</b> {c.cost:.1f} &nbsp; <b>runs:</b> {_e(c.weight.text())} "
               f"(loops around it{', ? = assumed trip count' if c.weight.assumed else ''}) &nbsp; "
               f"<b>weighted cost:</b> {c.weighted_cost:.1f}</p>")
    out.append(f"<p><b>remark:</b> <code>{_e(c.remark)}</code></p>")
    out.append("<h4>Layouts</h4>")
    out.append(f"<p>source <code>{_e(c.src_attribute)}</code><br>destination <code>{_e(c.dst_attribute)}</code></p>")
    if c.src_layout is not None:
        out.append(f"<details><summary>as linear layouts (bases over F2)</summary><pre>source:\n{_e(c.src_layout)}"
                   f"\n\ndestination:\n{_e(c.dst_layout)}</pre></details>")
        elements = 1
        for size in c.src_layout.out_dims.values():
            elements *= size
        if elements <= MAX_TEXT_GRID_ELEMENTS:
            grid = grid_text(c.src_layout, c.bits, 1, other=c.dst_layout)
            out.append(f"<details><summary>element grid as text (source holder -&gt; destination holder)</summary>"
                       f"<pre>{_e(grid)}</pre></details>")
    if "layouts" in c.pictures:
        out.append(f'<p><img src="../{_e(c.pictures["layouts"])}" alt="element grids of both layouts"></p>')
    out.append("<h4>Plan</h4>")
    if c.row.plan is not None:
        out.append(f"<pre>{_e(plan_text(c.row.plan, c.row.what))}</pre>")
    else:
        out.append(f"<p>no plan: {_e(c.row.verified)}</p>")
    if "plan" in c.pictures:
        out.append(f'<p><img src="../{_e(c.pictures["plan"])}" alt="the plan: shuffle rounds or scratch banks"></p>')
    out += [f'<p class="note">{_e(note)}</p>' for note in c.picture_notes]
    out.append("</section>")
    return out


def kernel_page(kernel: KernelEntry, note: str = "", noise: float = NOISE_FLOOR) -> str:
    body = ['<p><a href="../index.html">&larr; all kernels</a></p>',
            f"<h1>{_e(kernel.name)} on {_e(kernel.target)}</h1>",
            f"<p>specialization: <code>{_e(kernel.specialization or '-')}</code>; num_warps={_e(kernel.num_warps)}; "
            f"compiled {kernel.compiles} time(s)</p>"]
    if kernel.problem:
        body.append(f"<p>{_e(kernel.problem)}</p>")
    if note and kernel.conversions:
        body.append(f'<p class="note">{_e(note)}</p>')
    body.append(f"<p>final code, stock Triton: <code>{_e(kernel.final_code_text('stock'))}</code>; "
                f"with linear_layouts.enable(): <code>{_e(kernel.final_code_text('ours'))}</code>"
                + (f" &nbsp; <b>verdict:</b> {_e(kernel.verdict())} data-movement instructions than stock"
                   if kernel.verdict().startswith("ours") else
                   " &nbsp; <b>verdict:</b> the same data-movement instruction count as stock"
                   if kernel.verdict() == "same" else "") + "</p>")
    for m in kernel.measurements:
        body.append(f"<p><b>measured</b> ({_e(m.signature)}): stock "
                    + (f"{m.stock_ms:.4f} ms" if m.stock_ms else "-") + ", ours "
                    + (f"{m.ours_ms:.4f} ms" if m.ours_ms else "-")
                    + (f" (stock spread {100 * m.noise:.1f}%)" if m.noise is not None else "")
                    + (f", stock and ours: {SAME_BINARY}" if m.same_binary("stock", "ours") else
                       f", stock / ours {m.ratio:.3f} ({measured_verdict(m.ratio, noise)})"
                       if m.ratio is not None else "")
                    + (f" ({_e(m.problem)})" if m.problem else "") + _advised_text(m, noise) + "</p>")
        if m.candidates:
            winner = m.winner(noise)
            body.append("<p><b>which to write</b>: "
                        + (f"{_e(winner.change)}, measured {m.ours_ms / winner.ms:.3f}x the kernel as written"
                           + (f" (modelled {winner.modelled_gain:.2f}x)" if winner.modelled_gain is not None else "")
                           if winner is not None else "the kernel as written (no candidate faster beyond the noise)")
                        + "; candidates: " + _e("; ".join(candidate_text(m, c, noise) for c in m.candidates))
                        + "</p>")
    automatic = auto_layouts_html([kernel], link_prefix=None)
    body += automatic
    if automatic and kernel.conversions:
        body.append("<h2>Conversions</h2>")
    if not kernel.conversions:
        body.append("<p>No <code>ttg.convert_layout</code> in this kernel's TTGIR: nothing to convert.</p>")
    else:
        links = {i: f"#c{c.number}" for i, c in enumerate(kernel.conversions)}
        left = {i for i, c in enumerate(kernel.conversions) if not c.owned}
        body += _table(CONVERSION_HEADER, conversion_table_rows(kernel), links, left)
        versus = stock_vs_ours_rows(kernel)
        if versus:
            body.append("<h2>Stock vs ours per conversion</h2>")
            body += _table(STOCK_VS_OURS_HEADER, versus, {i: f"#c{row[0][1:]}" for i, row in enumerate(versus)})
            body.append(f'<p class="note">{_e(STOCK_VS_OURS_NOTE)}</p>')
        for c in kernel.conversions:
            body += _conversion_section(c)
    body.append(f"<details><summary>Triton's TTGIR</summary><pre>{_e(kernel.ttgir)}</pre></details>")
    return _page(f"{kernel.name} on {kernel.target}", body)


def _advised_text(m, noise: float) -> str:
    """A kernel page's words for one launch timed with the advice applied ("" when it was not)."""
    if m.advised_problem:
        return f"; with the advice applied: not timed ({_e(m.advised_problem)})"
    if m.same_binary("ours", "advised"):
        return f"; with the advice applied (all findings at once): {SAME_BINARY} as written"
    if not m.advised_ms:
        return ""
    text = f"; with the advice applied (all findings at once): {m.advised_ms:.4f} ms"
    if m.advice_ratio is not None:
        text += (f", measured gain {m.advice_ratio:.3f} "
                 f"({pair_verdict(m, 'ours', 'advised', m.advice_ratio, noise)})")
    if m.modelled_gain is not None:
        text += f", modelled {m.modelled_gain:.2f}x"
    return text


def write_html(kernels: list[KernelEntry], options: ReportOptions) -> str:
    """Write every page and picture (without matplotlib: no pictures, a note saying how to get
    them); pages and pictures of earlier reports in the directory are removed; returns the path
    of ``index.html``."""
    os.makedirs(os.path.join(options.directory, "kernels"), exist_ok=True)
    pictures = options.max_pictures > 0 and any(k.conversions for k in kernels)
    note = NO_MATPLOTLIB if pictures and matplotlib_missing() else ""
    noise = noise_threshold(options.measured) if options.measured else NOISE_FLOOR
    written = set()
    for kernel in kernels:
        if pictures and not note:
            draw_pictures(kernel, options.directory, options.max_pictures)
        name = os.path.join("kernels", f"{kernel.slug}.html")
        write_atomically(os.path.join(options.directory, name), kernel_page(kernel, note, noise))
        written.add(name)
        written.update(os.path.join(*picture.split("/")) for c in kernel.conversions for picture in c.pictures.values())
    for folder in ("kernels", "img"):
        path = os.path.join(options.directory, folder)
        for name in os.listdir(path) if os.path.isdir(path) else []:
            if os.path.join(folder, name) not in written and name.endswith((".html", ".svg")):
                os.remove(os.path.join(path, name))
    index = os.path.join(options.directory, "index.html")
    write_atomically(index, index_page(kernels, options, note))
    return index
