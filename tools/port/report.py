"""The report of a port (``ll-port ... --report DIR``): text and an HTML page with pictures.

What it says, per kernel:

* the three kernels of the launch side by side (``passes.port.comparison``): Triton's own
  compile of the original, Triton's translation, the port; each with its modelled cost, its
  layout conversions and its global accesses (how many, how wide);
* every layout the port names: its Gluon expression, why it is there (Triton's choice at that
  line, or where a conversion needs it), and its picture (which warp, lane and register holds
  each element; the HTML page only, with matplotlib);
* what the port changed from Triton's choice: each conversion it writes, with its line and why
  (Triton's compile recomputes index arithmetic in each layout it is needed in; Gluon's source
  holds one layout per expression, so a second layout is a conversion).
"""

from __future__ import annotations

import html
import os

from ...passes.port.comparison import compare


def report_text(made, jit_fn, rows=None) -> str:
    """The text report of ``made`` (a ``passes.port.port.Port``) of ``jit_fn``."""
    rows = rows if rows is not None else compare(made, jit_fn)
    lines = [f"Port of {made.kernel_name} for {made.launch.describe()}", "",
             "The three kernels of this launch, compiled for the target:"]
    lines += [f"  {row.describe()}" for row in rows]
    lines += ["", f"Layouts the port names ({len(made.layouts)}):"]
    for layout in made.layouts:
        lines.append(f"  {layout.name} = {layout.expression}")
        lines.append(f"      {layout.why}")
    lines += ["", "Conversions the port writes where Triton's compile has none (one layout per expression in Gluon):"]
    lines += [f"  line {line}: {why}" for line, why in made.conversions] or ["  none"]
    lines += ["", "Loops over tl.dot, pipelined as Triton's compile pipelines them:"]
    lines += _pipelined_loops(made) or ["  none"]
    lines += ["", "Changed from Triton's choice: nothing (every layout above is Triton's). The advice on the port, "
                  "where the cost model prices another layout lower:"]
    lines += _advice(rows) or ["  none: no change of the port's layouts prices the whole kernel lower"]
    return "\n".join(lines) + "\n"


def _advice(rows) -> list:
    """The advice's findings on the port (its row of ``rows``), with the port's line of each."""
    port_rows = [row for row in rows if row.title == "the port" and row.compiled]
    if not port_rows:
        return []
    if port_rows[0].advice_problem:
        return [f"  the advice could not read the port: {port_rows[0].advice_problem}"]
    found = []
    for finding in port_rows[0].findings:
        line = finding.location.rsplit(":", 2)[-2] if finding.location.count(":") >= 2 else "?"
        gain = f" (the kernel's modelled cost {finding.gain:.2f}x lower)" if finding.gain > 1.0 else ""
        found.append(f"  port line {line}: {finding.kind}: {finding.finding}; instead: {finding.suggestion}{gain}")
    return found


def _pipelined_loops(made) -> list:
    """One line per tl.dot loop: pipelined (its ring depth and tiles) or written as it stands, and why."""
    pipelines = getattr(made, "pipelines", None)
    if pipelines is None:
        return []
    lines = [f"  line {line}: {pipelines.described[line]}" for line, _, _ in pipelines.loops]
    lines += [f"  line {line}: written as it stands: {why}" for line, why in sorted(pipelines.skipped.items())]
    return lines


def write_report(made, jit_fn, directory: str) -> list:
    """``report.txt`` and ``index.html`` (with one picture per layout where matplotlib is
    installed) in ``directory``; returns the paths written."""
    os.makedirs(directory, exist_ok=True)
    rows = compare(made, jit_fn)
    text = report_text(made, jit_fn, rows)
    written = [os.path.join(directory, "report.txt")]
    with open(written[0], "w") as out:
        out.write(text)
    pictures = _pictures(made, directory)
    page = os.path.join(directory, "index.html")
    with open(page, "w") as out:
        out.write(_page(made, rows, pictures))
    return written + [page] + list(pictures.values())


def _pictures(made, directory: str) -> dict:
    """name -> picture path of every distributed layout with a shape (none without matplotlib)."""
    import importlib.util
    if importlib.util.find_spec("matplotlib") is None:
        return {}
    from ...passes.ir.layouts import tensor_layout_of
    from ..viewers.viz import VizError, draw
    drawn = {}
    for layout in made.layouts:
        if not layout.shape or "shared" in layout.encoding or "tensor_memory" in layout.encoding:
            continue
        path = os.path.join(directory, f"{layout.name.lower()}.png")
        try:
            draw(path, [(f"{layout.name} {list(layout.shape)}", tensor_layout_of(layout.encoding, layout.shape))], 32)
        except (VizError, ValueError, KeyError):
            continue
        drawn[layout.name] = path
    return drawn


def _page(made, rows, pictures: dict) -> str:
    escape = html.escape
    table = "".join(
        f"<tr><td>{escape(row.title)}</td><td>{'yes' if row.compiled else 'no: ' + escape(row.why)}</td>"
        f"<td>{'' if row.cost is None else f'{row.cost:,.0f}'}</td><td>{row.conversions if row.compiled else ''}</td>"
        f"<td>{escape(row.accesses.describe()) if row.accesses else ''}</td></tr>" for row in rows)
    layouts = "".join(
        f"<h3><code>{escape(layout.name)}</code></h3><p><code>{escape(layout.expression)}</code><br>{escape(layout.why)}</p>"
        + (f'<img src="{escape(os.path.basename(pictures[layout.name]))}" alt="{escape(layout.name)}">'
           if layout.name in pictures else "") for layout in made.layouts)
    conversions = "".join(f"<li>line {line}: {escape(why)}</li>" for line, why in made.conversions) or "<li>none</li>"
    loops = "".join(f"<li>{escape(line.strip())}</li>" for line in _pipelined_loops(made)) or "<li>none</li>"
    advice = "".join(f"<li>{escape(line.strip())}</li>" for line in _advice(rows)) or \
        "<li>none: no change of the port's layouts prices the whole kernel lower</li>"
    source = escape(made.source)
    title = escape(f"Port of {made.kernel_name} for {made.launch.describe()}")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}} td,th{{border:1px solid #ccc;padding:.3em .6em}}
table{{border-collapse:collapse}} pre{{background:#f6f6f6;padding:1em;overflow-x:auto}} img{{max-width:100%}}</style>
</head><body><h1>{title}</h1>
<h2>The three kernels of this launch</h2>
<table><tr><th>kernel</th><th>compiles</th><th>modelled cost</th><th>conversions</th><th>global accesses</th></tr>{table}</table>
<h2>Layouts the port names</h2>{layouts}
<h2>Conversions the port writes where Triton's compile has none</h2><ul>{conversions}</ul>
<h2>Loops over tl.dot, pipelined as Triton's compile pipelines them</h2><ul>{loops}</ul>
<h2>Changed from Triton's choice</h2><p>Nothing: every layout above is Triton's. The advice on the port,
where the cost model prices another layout lower:</p><ul>{advice}</ul>
<h2>The port</h2><pre>{source}</pre>
</body></html>
"""
