"""The Markdown form of the report (``--format md``): tables as fixed-width code blocks,
readable raw in a terminal or a CI log."""

from __future__ import annotations

import re
from typing import Optional

from linear_layouts.tools.report.conversion_report import format_table
from linear_layouts.tools.report.model import KernelEntry, ReportOptions, costliest_conversions, worth_a_look
from linear_layouts.tools.report.text import (CONVERSION_HEADER, KERNEL_HEADER, STOCK_VS_OURS_HEADER,
                                              STOCK_VS_OURS_NOTE, conversion_table_rows, kernel_chart_rows,
                                              kernel_table_rows, run_lines, source_listing, stock_vs_ours_rows,
                                              summary_lines, weights_line, MEASURE_HEADER, measure_lines,
                                              measure_rows, advice_rows, ADVICE_HEADER, ADVICE_NOTE,
                                              ADVICE_MEASURE_HEADER, ADVICE_MEASURE_NOTE, advice_measure_rows,
                                              CHOICE_HEADER, CHOICE_NOTE, choice_rows,
                                              AUTO_LAYOUTS_HEADER, AUTO_LAYOUTS_NOTE, auto_layout_kernels,
                                              auto_layout_line, auto_layout_rows, auto_layout_summary)


def md_code(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it holds (CommonMark: the fence is
    one backtick longer than the longest run inside, padded with a space where ``text`` starts or
    ends with a backtick)."""
    text = str(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown(kernels: list[KernelEntry], options: Optional["ReportOptions"] = None) -> str:
    """The whole report as Markdown (tables as fixed-width code blocks: readable raw, too)."""
    lines = ["# linear-layouts report", ""]
    lines += summary_lines(kernels)
    options = options or ReportOptions()
    lines += run_lines(kernels, options)
    lines += measure_lines(options)
    lines.append(weights_line(kernels))
    look = worth_a_look(kernels)
    if look:
        lines += ["", "Worth a look first (by loop-weighted conversion cost per warp): " +
                  ", ".join(f"{k.name} on {k.target} ({k.weighted_cost:.1f})" for k in look)]
    costliest = costliest_conversions(kernels)
    if costliest:
        lines += ["", "Costliest conversions (weighted cost = cost per warp x runs):", ""]
        lines += [f"{n}. {k.name} #{c.number} {md_code(c.row.location)}: {c.weighted_cost:.1f} = "
                  f"{c.cost:.1f} x {c.weight.runs}" + (" (assumed trip count)" if c.weight.assumed else "")
                  for n, (k, c) in enumerate(costliest, start=1)]
    chart = kernel_chart_rows(kernels)
    if chart:
        lines += ["", "Stock vs ours per kernel (data-movement instructions of the final code, priced by the cost "
                      "model, per warp, once):", "", "```"]
        lines += chart_text(chart) + ["```"]
    measured = measure_rows(options)
    if measured:
        lines += ["", "## Measured (stock vs ours, the program's own launches)", "", "```"]
        lines += format_table(MEASURE_HEADER, measured) + ["```"]
    advised = advice_measure_rows(options)
    if advised:
        lines += ["", "## Measured: the advice applied (ours as written vs ours advised)", "", ADVICE_MEASURE_NOTE,
                  "", "```"]
        lines += format_table(ADVICE_MEASURE_HEADER, advised) + ["```"]
    chosen = choice_rows(options)
    if chosen:
        lines += ["", "## Measured: which to write (the kernel as written or its advice)", "", CHOICE_NOTE, "", "```"]
        lines += format_table(CHOICE_HEADER, chosen) + ["```"]
    lines += ["", "## Kernels", "", "```"] + format_table(KERNEL_HEADER, kernel_table_rows(kernels)) + ["```"]
    lines += auto_layout_lines(kernels)
    lines += advice_lines(kernels)
    if any(stock_vs_ours_rows(k) for k in kernels):
        lines += ["", "Stock vs ours per conversion (in each kernel's section): " + STOCK_VS_OURS_NOTE]
    for k in kernels:
        if not k.conversions:
            continue
        lines += ["", f"## {k.name} on {k.target}", "", f"specialization: {k.specialization or '-'}; "
                  f"num_warps={k.num_warps}", "", "```"]
        lines += format_table(CONVERSION_HEADER, conversion_table_rows(k))
        lines += ["```", ""]
        versus = stock_vs_ours_rows(k)
        if versus:
            lines += ["Stock vs ours per conversion (final code per warp):", "", "```"]
            lines += format_table(STOCK_VS_OURS_HEADER, versus) + ["```", ""]
        for c in k.conversions:
            lines.append(f"- #{c.number} {md_code(c.location)}" + (f": {md_code(c.source_line)}" if c.source_line else ""))
            if c.why is not None:
                lines.append(f"  - why: {c.why.reason}; from {md_code(c.why.producer)}, used by "
                             + (", ".join(md_code(u) for u in c.why.consumers) or "nothing"))
                lines += [f"  - {md_code(where)}: {md_code(code)}" for where, code in c.why.sources]
                if c.why.hint:
                    lines.append(f"  - hint: {c.why.hint}")
            lines.append(f"  - {md_code(c.remark)}")
    listing = source_listing(kernels, whole_file_lines=0)
    if listing:
        lines += ["", "## Source", "", "Each conversion's line (>>), with its loop-weighted cost:"]
        for path, rows in listing:
            lines += ["", md_code(path), "", "```"]
            for number, text, marks, _ in rows:
                if number == 0:
                    lines.append("   ...")
                    continue
                note = "   <- " + ", ".join(f"{k.name} #{c.number} ({c.weighted_cost:.1f})" for k, c in marks) \
                    if marks else ""
                lines.append(f"{'>>' if marks else '  '}{number:5d}  {text}{note}")
            lines.append("```")
    return "\n".join(lines) + "\n"


def auto_layout_lines(kernels: list[KernelEntry]) -> list[str]:
    """The "Automatic layouts" section ([] when no kernel had automatic layouts resolved)."""
    found = auto_layout_kernels(kernels)
    if not found:
        return []
    lines = ["", "## Automatic layouts", "", AUTO_LAYOUTS_NOTE, "", auto_layout_summary(kernels), ""]
    lines += [f"- {auto_layout_line(k)}" for k in found]
    rows = auto_layout_rows(kernels)
    if rows:
        lines += ["", "```"] + format_table(AUTO_LAYOUTS_HEADER, rows) + ["```"]
    return lines


def advice_lines(kernels: list[KernelEntry]) -> list[str]:
    """The "Advice" section: every layout worth changing, best modelled gain first."""
    rows = advice_rows(kernels)
    if not rows:
        return []
    return ["", "## Advice: layouts worth changing", "", ADVICE_NOTE, "", "```"] + format_table(ADVICE_HEADER, rows) + ["```"]


def chart_text(rows: list[tuple[str, float, float]], width: int = 40) -> list[str]:
    """Bars of ``#`` (stock) and ``=`` (ours), scaled to the largest value."""
    top = max((max(stock, ours) for _, stock, ours in rows), default=0.0) or 1.0
    label = max(len(name) for name, _, _ in rows)
    out = []
    for name, stock, ours in rows:
        out.append(f"{name.ljust(label)}  stock {'#' * max(1, round(width * stock / top))} {stock:.1f}")
        out.append(f"{''.ljust(label)}  ours  {'=' * max(1, round(width * ours / top))} {ours:.1f}")
    return out

