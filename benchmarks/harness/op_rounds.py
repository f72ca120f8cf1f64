"""Whole third-party ops (forward + backward) timed stock against ``linear_layouts.enable()``, each
(op, mode, round) in a process of its own: what ``fla_ops_gpu.py`` and ``liger_ops_gpu.py`` share.

A script gives its ops, its modes (``stock`` first, then ``ours``, then any others) and a way to
start one child; :func:`run_rounds` runs every op's rounds, the modes interleaved and reversed on
odd rounds, each child with its own empty Triton cache (:func:`run_child`), and collects the
rows the children wrote.  In the child, :func:`enable_route` turns the plugin on for the mode and
:func:`time_forward_backward` times the op (``triton.testing.do_bench``, median) and saves its
outputs and gradients, which :func:`compare` checks against stock's bit for bit.  :func:`op_table`
and :func:`closing` write the report's table (ours over stock per round and its median, stock
over stock between rounds, the plugin's islands, bit-exactness) and its end (the geometric mean
of the per-op medians and every failure).  Nothing here imports torch or triton at module level.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import tempfile

IN_PLACE = "in_place"   # the mode of --in-place
TEXT = "text"           # the mode of --text
ROUTES = {IN_PLACE: "1", TEXT: "0"}     # LINEAR_LAYOUTS_IN_PLACE in those modes


def one_config_each(warps: int = 0) -> None:
    """Make every autotuner keep the first of its configurations (``warps``: the first with that
    many warps, where a kernel has one): a library may autotune a kernel over many configurations,
    a compile each, and a process's pick can differ between runs; with one, both modes time the
    same kernels."""
    from triton.runtime import autotuner

    real = autotuner.Autotuner.__init__

    def first_config(self, fn, arg_names, configs, *args, **kwargs):
        configs = list(configs)
        chosen = [c for c in configs if getattr(c, "num_warps", None) == warps][:1] if warps else []
        real(self, fn, arg_names, chosen or configs[:1], *args, **kwargs)
    autotuner.Autotuner.__init__ = first_config


def enable_route(mode: str) -> bool:
    """``stock``: nothing; ``ours``: ``enable()`` with its defaults; ``in_place`` / ``text``: the
    same with the shared-memory islands built in Triton's module / every island spliced as text
    (``LINEAR_LAYOUTS_IN_PLACE``, ``passes.drop_in.in_place``).  False for any other mode (the script's own)."""
    if mode == "stock":
        return True
    if mode != "ours" and mode not in ROUTES:
        return False
    import linear_layouts
    if mode in ROUTES:
        from linear_layouts.passes.drop_in.in_place import IN_PLACE_VARIABLE
        os.environ[IN_PLACE_VARIABLE] = ROUTES[mode]
    linear_layouts.enable()
    return True


def time_forward_backward(op: str, mode: str, run, leaves: list, out_file: str, grad_like=None,
                          extra=None) -> None:
    """In the child: call ``run`` (its output, or a tuple of outputs), back-propagate ``do`` (of
    each output, ``grad_like(out)``; default ``torch.randn_like``) once to compile, save the outputs
    and every leaf's gradient as ``out_file.<op>.<mode>.pt``, time forward + backward
    (``do_bench``, median, gradients reset between calls) and append the JSON row to ``out_file``:
    ``op``, ``mode``, ``ms``, what ``extra(forward_backward)`` adds, and, in any mode but stock,
    the plugin's ``islands``, ``kernels_with_islands`` and ``conversions``.  The outputs are
    saved before the backward runs (some libraries' backward writes into storage an output shares)."""
    import torch
    import triton

    grad_like = grad_like or torch.randn_like
    outs = run()
    outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
    dos = tuple(grad_like(o) for o in outs)

    def forward_backward():
        again = run()
        torch.autograd.backward(tuple(again) if isinstance(again, (tuple, list)) else (again,), dos)

    results = [o.detach().float().cpu() for o in outs]
    torch.autograd.backward(outs, dos)                 # compile and autotune, forward and backward
    torch.cuda.synchronize()
    results += [x.grad.detach().float().cpu() for x in leaves]
    ms = triton.testing.do_bench(forward_backward, warmup=25, rep=200, grad_to_none=leaves, return_mode="median")
    row = {"op": op, "mode": mode, "ms": ms}
    if extra:
        row.update(extra(forward_backward))
    if mode != "stock":
        import linear_layouts
        stats = linear_layouts.stats()
        row.update(islands=getattr(stats, "islands", None), kernels_with_islands=getattr(stats, "kernels_with_islands", None),
                   conversions=getattr(stats, "conversions", None))
    torch.save(results, out_file + f".{op}.{mode}.pt")
    with open(out_file, "a") as f:
        f.write(json.dumps(row) + "\n")


def run_child(command: list, timeout: int, cache_prefix: str, env_extra: dict | None = None, keep=None) -> str:
    """Run ``command`` with an empty Triton cache of its own (``LINEAR_LAYOUTS_STOCK_GATE`` left
    unset, ``env_extra`` added); ``keep(cache)`` afterwards where given (not after a time-out).
    ``""`` where it succeeded, else why not in one line."""
    cache = tempfile.mkdtemp(prefix=cache_prefix)
    env = dict(os.environ, TRITON_CACHE_DIR=cache, **(env_extra or {}))
    env.pop("LINEAR_LAYOUTS_STOCK_GATE", None)
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        shutil.rmtree(cache, ignore_errors=True)
        return f"timed out after {timeout} s"
    if keep:
        keep(cache)
    # Each child's cache and saved tensors go once used: a run of many ops filled an H200
    # machine's 64 GB disk with them (an op's gradients are up to a few GB a child).
    shutil.rmtree(cache, ignore_errors=True)
    if done.returncode:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return " | ".join(lines[-3:])[:400]
    return ""


def compare(out_file: str, op: str, mode: str = "ours", stock_file: str = "") -> str:
    """``bit-exact`` where every saved tensor of ``mode`` equals stock's (``stock_file``'s where
    given, else ``out_file``'s), else the largest difference."""
    import torch
    stock = torch.load((stock_file or out_file) + f".{op}.stock.pt")
    ours = torch.load(out_file + f".{op}.{mode}.pt")
    if all(torch.equal(a, b) for a, b in zip(stock, ours)):
        return "bit-exact"
    worst = max(float((a - b).abs().max()) for a, b in zip(stock, ours))
    return f"differs (largest difference {worst:.3g})"


def run_rounds(ops: list, modes: list, rounds: int, start, work: str, after_op=None,
               stock_twice: bool = False) -> tuple[list, dict, dict]:
    """Every op's ``rounds`` rounds, the modes in order on even rounds and reversed on odd ones;
    ``start(op, mode, round_, out_file)`` runs one child and returns ``""`` or why it failed.
    Returns the rows (each with its ``round``), the failures ``{(op, mode, round): why}`` and the
    first round's exactness ``{(op, mode): compare(...)}`` of every mode but stock; with
    ``stock_twice`` also ``(op, "stock")``: the second round's stock against the first's.
    ``after_op(rows)`` runs after each op (to write the rows so far)."""
    rows, failures, exact = [], {}, {}
    for op in ops:
        first = ""
        for round_ in range(rounds):
            out_file = os.path.join(work, f"{op}.r{round_}.jsonl")
            for mode in (modes if round_ % 2 == 0 else modes[::-1]):
                why = start(op, mode, round_, out_file)
                if why:
                    failures[(op, mode, round_)] = why
                print(f"{op} {mode} round {round_}: {why or 'ok'}", flush=True)
            if os.path.exists(out_file):
                rows += [dict(json.loads(line), round=round_) for line in open(out_file) if line.strip()]
            if round_ == 0:
                first = out_file
                for mode in modes[1:]:
                    if not any(k[0] == op and k[2] == 0 and k[1] in ("stock", mode) for k in failures):
                        exact[(op, mode)] = compare(out_file, op, mode)
            if stock_twice and round_ == 1 and not any(k[0] == op and k[1] == "stock" for k in failures):
                exact[(op, "stock")] = compare(out_file, op, "stock", stock_file=first)
        for saved in glob.glob(os.path.join(work, f"{op}.r*.jsonl.{op}.*.pt")):
            os.remove(saved)
        if after_op:
            after_op(rows)
    return rows, failures, exact


def op_table(ops: list, rows: list, failures: dict, exact: dict, modes: list, rounds: int) -> tuple[list, list]:
    """The report's table (header included) and the per-op medians of ours over stock: one line
    per op, and one per further mode (``modes[2:]``) that ran."""
    lines = ["| op | stock ms (median of rounds) | ours ms | ours / stock, per round | median | stock / stock (noise) | "
             "islands (kernels with one) | ours against stock |", "|---|---:|---:|---|---:|---:|---|---|"]
    ratios = []
    for op in ops:
        mine = {(r["mode"], r["round"]): r for r in rows if r["op"] == op}
        done_rounds = [k for k in range(rounds) if ("stock", k) in mine and ("ours", k) in mine]
        if not done_rounds:
            lines.append(f"| {op} | - | - | - | - | - | - | failed: {next((w for k, w in failures.items() if k[0] == op), '?')} |")
            continue
        per_round = [mine[("ours", k)]["ms"] / mine[("stock", k)]["ms"] for k in done_rounds]
        stock_times = [mine[("stock", k)]["ms"] for k in done_rounds]
        noise = max(stock_times) / min(stock_times) if len(stock_times) > 1 else float("nan")
        ours_row = mine[("ours", done_rounds[0])]
        ratios.append(statistics.median(per_round))
        same = exact.get((op, "ours"), "-")
        if (op, "stock") in exact:
            same += f"; stock against itself: {exact[(op, 'stock')]}"
        lines.append(f"| {op} | {statistics.median(stock_times):.3f} | "
                     f"{statistics.median(mine[('ours', k)]['ms'] for k in done_rounds):.3f} | "
                     f"{', '.join(f'{x:.3f}' for x in per_round)} | {statistics.median(per_round):.3f} | {noise:.3f} | "
                     f"{ours_row.get('islands')} ({ours_row.get('kernels_with_islands')}) | {same} |")
        for variant in modes[2:]:
            done = [k for k in done_rounds if (variant, k) in mine]
            if done:
                per_round = [mine[(variant, k)]["ms"] / mine[("stock", k)]["ms"] for k in done]
                row = mine[(variant, done[0])]
                lines.append(f"| {op}, {variant} | | {statistics.median(mine[(variant, k)]['ms'] for k in done):.3f} | "
                             f"{', '.join(f'{x:.3f}' for x in per_round)} | {statistics.median(per_round):.3f} | | "
                             f"{row.get('islands')} ({row.get('kernels_with_islands')}) | {exact.get((op, variant), '-')} |")
    return lines, ratios


def closing(ratios: list, failures: dict) -> list[str]:
    """The report's end: the geometric mean of the per-op medians, then every failure."""
    lines = []
    if ratios:
        geomean = statistics.geometric_mean(ratios)
        lines += ["", f"Geometric mean of the per-op medians, ours / stock: **{geomean:.3f}** over {len(ratios)} ops."]
    lines += [f"* {op} {mode} round {round_}: {why}" for (op, mode, round_), why in failures.items()]
    return lines


def publish(text: str, out: str, name: str) -> None:
    """Print the report and, where ``out`` is given, write it as ``out/<name>.md``."""
    print(text)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{name}.md"), "w") as f:
            f.write(text)


def mode_options(parser, name: str) -> None:
    """The options both op scripts share: the results' file stem, the routes' extra modes, and the
    child's own (hidden) arguments."""
    parser.add_argument("--name", default=name, help="the results' file stem")
    parser.add_argument("--in-place", action="store_true",
                        help="also a mode in_place: enable() with LINEAR_LAYOUTS_IN_PLACE=1 (passes/drop_in/in_place.py)")
    parser.add_argument("--text", action="store_true",
                        help="also a mode text: enable() with LINEAR_LAYOUTS_IN_PLACE=0 (every island spliced as text)")
    parser.add_argument("--child", nargs=2, metavar=("OP", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--json", default="", help=argparse.SUPPRESS)


def modes_of(args) -> list[str]:
    """stock, ours, and the modes ``--in-place`` and ``--text`` add."""
    return ["stock", "ours", *([IN_PLACE] if args.in_place else []), *([TEXT] if args.text else [])]


def rows_writer(out: str, name: str):
    """``write_rows(rows)`` for ``run_rounds``: the rows so far as ``out/<name>.jsonl`` (in case a
    time limit stops the run); nothing without ``out``."""
    def write_rows(rows):
        if out:
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, f"{name}.jsonl"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
    return write_rows
