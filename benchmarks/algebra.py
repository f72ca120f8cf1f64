"""Per-call time of the layout algebra: ours against Triton's C++ binding, in one process run.

    python benchmarks/algebra.py [--repeat N] [--no-write]

Times ``compose``, ``*`` (product), ``invert_and_compose`` and ``pseudoinvert`` on typical
layouts of 16 to 24 in/out bits (blocked-like and mma-like register/lane/warp/block layouts of
a 256x256 and a 4096x4096 tensor, and a swizzled shared-memory layout), with our
``LinearLayout`` and with ``triton._C.libtriton.linear_layout.LinearLayout`` on the same inputs.
Each number is the median over ``--repeat`` samples of the time of one call
(``time.perf_counter_ns``; a sample times a few calls in a row and divides, so the timer's own
cost stays small).  Before timing, every result is checked to be the same for both.

Prints a markdown table and writes ``benchmarks/results/algebra.md`` and ``algebra.json``.
(No GPU involved: the algebra runs on the CPU, for both.)
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from linear_layouts.dialect.linear_layout import LinearLayout

RESULTS = Path(__file__).resolve().parent / "results"


# ---------------------------------------------------------------------------- layouts

def _units(bits: list[tuple[int, int]]) -> list[list[int]]:
    """Bases that each set one bit of one out dim: (dim index, bit) -> [0, .., 1 << bit, .., 0]."""
    out = []
    for d, b in bits:
        v = [0, 0]
        v[d] = 1 << b
        out.append(v)
    return out


def blocked(log_rows: int, log_cols: int, broadcast_block: bool) -> dict:
    """A blocked layout of a 2^log_rows x 2^log_cols tensor: sizePerThread [1, 4],
    threadsPerWarp [8, 4], warpsPerCTA [4, 2], order [1, 0], repeated over registers; 2 CTAs
    that split dim0, or that hold copies (broadcast) when ``broadcast_block``."""
    reg = [(1, 0), (1, 1)]
    lane = [(1, 2), (1, 3), (0, 0), (0, 1), (0, 2)]
    warp = [(0, 3), (0, 4), (1, 4)]
    block = [] if broadcast_block else [(0, log_rows - 1)]
    cols_used = 5
    reg += [(1, b) for b in range(cols_used, log_cols)]
    reg += [(0, b) for b in range(5, log_rows - len(block))]
    bases = {"register": _units(reg), "lane": _units(lane), "warp": _units(warp),
             "block": [[0, 0]] if broadcast_block else _units(block)}
    return {"bases": bases, "out": {"dim0": 1 << log_rows, "dim1": 1 << log_cols}}


def mma(log_rows: int, log_cols: int, broadcast_block: bool) -> dict:
    """An mma-v2-like layout (16x8 tiles per warp, 4 warps along dim0), repeated over registers."""
    reg = [(1, 0), (0, 3)]
    lane = [(1, 1), (1, 2), (0, 0), (0, 1), (0, 2)]
    warp = [(0, 4), (0, 5)]
    block = [] if broadcast_block else [(1, log_cols - 1)]
    reg += [(1, b) for b in range(3, log_cols - len(block))]
    reg += [(0, b) for b in range(6, log_rows)]
    bases = {"register": _units(reg), "lane": _units(lane), "warp": _units(warp),
             "block": [[0, 0]] if broadcast_block else _units(block)}
    return {"bases": bases, "out": {"dim0": 1 << log_rows, "dim1": 1 << log_cols}}


def swizzled_shared_inverse(log_rows: int, log_cols: int) -> dict:
    """(dim0, dim1) -> offset of a row-major shared buffer with a 128-byte-style XOR swizzle
    (vec 4, perPhase 1, maxPhase 8): column bits 2..4 are XORed with row bits 0..2."""
    dim0 = [[(1 << (log_cols + i)) ^ ((4 << i) if i < 3 else 0)] for i in range(log_rows)]
    dim1 = [[1 << i] for i in range(log_cols)]
    return {"bases": {"dim0": dim0, "dim1": dim1}, "out": {"offset": 1 << (log_rows + log_cols)}}


def cta_tile() -> tuple[dict, dict]:
    """The two factors a blocked encoding is built from: one CTA tile (register, lane, warp;
    10 bits) and its repetition over registers and blocks (register 8 bits, block 2 bits)."""
    tile = {"bases": {"register": _units([(1, 0), (1, 1)]), "lane": _units([(1, 2), (1, 3), (0, 0), (0, 1), (0, 2)]),
                      "warp": _units([(0, 3), (0, 4), (1, 4)])},
            "out": {"dim0": 32, "dim1": 32}}
    reps = {"bases": {"register": _units([(1, 0), (1, 1), (1, 2), (1, 3), (0, 0), (0, 1), (0, 2), (0, 3)]),
                      "block": _units([(0, 4), (1, 4)])},
            "out": {"dim0": 32, "dim1": 32}}
    return tile, reps


def cases() -> list[tuple[str, str, list[dict]]]:
    """(operation, description, layouts) to time."""
    tile, reps = cta_tile()
    out = []
    for log_r, log_c in ((8, 8), (12, 12)):
        n = log_r + log_c
        b, m = blocked(log_r, log_c, False), mma(log_r, log_c, False)
        bb, mb = blocked(log_r, log_c, True), mma(log_r, log_c, True)
        shared = swizzled_shared_inverse(log_r, log_c)
        out += [
            ("compose", f"blocked -> swizzled offset, {n} bits", [b, shared]),
            ("invert_and_compose", f"mma.invert_and_compose(blocked), {n} bits", [m, b]),
            ("invert_and_compose", f"same, block broadcast (identity dim), {n} bits", [mb, bb]),
            ("pseudoinvert", f"blocked, {n} bits", [b]),
            ("pseudoinvert", f"mma, block broadcast (non-injective), {n} bits", [mb]),
        ]
    out.insert(0, ("mul", "CTA tile (10 bits) * repetitions (10 bits) = 20 bits", [tile, reps]))
    big_tile = {"bases": {**tile["bases"], "block": [[0, 0], [0, 0]]}, "out": tile["out"]}
    out.insert(1, ("mul", "blocked 16 bits * CTA tile + block broadcast (12 bits) = 28 bits",
                   [blocked(8, 8, False), big_tile]))
    return out


# ---------------------------------------------------------------------------- both sides

def ours(layout: dict) -> LinearLayout:
    return LinearLayout.from_bases(layout["bases"], layout["out"], require_surjective=False)


def theirs(layout: dict):
    from triton._C.libtriton.linear_layout import LinearLayout as TritonLL
    return TritonLL.from_bases([(k, v) for k, v in layout["bases"].items()], list(layout["out"]),
                               list(layout["out"].values()), False)


def call(op: str, args):
    if op == "compose":
        return lambda: args[0].compose(args[1])
    if op == "mul":
        return lambda: args[0] * args[1]
    if op == "invert_and_compose":
        return lambda: args[0].invert_and_compose(args[1])
    if op == "pseudoinvert":
        return lambda: args[0].pseudoinvert()
    raise ValueError(op)


def as_plain(result) -> tuple:
    bases = result.bases
    bases = bases.items() if isinstance(bases, dict) else bases
    outs = result.out_dims
    outs = outs.items() if isinstance(outs, dict) else outs
    return tuple((n, tuple(tuple(b) for b in bs)) for n, bs in bases), tuple(tuple(o) for o in outs)


def median_ns(fn, repeat: int, inner: int = 5) -> float:
    for _ in range(20):  # warm up
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter_ns() - t0) / inner)
    return statistics.median(samples)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300, help="samples per measurement (default 300)")
    parser.add_argument("--no-write", action="store_true", help="print only; do not write benchmarks/results")
    args = parser.parse_args(argv)

    import triton

    rows = []
    for op, what, layouts in cases():
        mine_args = [ours(x) for x in layouts]
        their_args = [theirs(x) for x in layouts]
        mine_fn, their_fn = call(op, mine_args), call(op, their_args)
        if as_plain(mine_fn()) != as_plain(their_fn()):
            print(f"error: {op} ({what}): ours and Triton's results differ", file=sys.stderr)
            return 1
        t_ours = median_ns(mine_fn, args.repeat)
        t_theirs = median_ns(their_fn, args.repeat)
        bits_in = sum(len(v) for x in layouts for v in x["bases"].values())
        rows.append({"op": op, "layouts": what, "in_bits_total": bits_in, "ours_us": t_ours / 1e3,
                     "triton_us": t_theirs / 1e3, "ratio": t_ours / t_theirs})

    env = {"triton": triton.__version__, "python": platform.python_version(),
           "cpu": _cpu_name(), "machine": platform.machine(), "repeat": args.repeat,
           "method": "median over samples of per-call time (perf_counter_ns, 5 calls per sample)"}
    table = ["| operation | layouts | ours (µs) | Triton binding (µs) | ours / Triton |",
             "|---|---|---:|---:|---:|"]
    for r in rows:
        table.append(f"| {r['op']} | {r['layouts']} | {r['ours_us']:.1f} | {r['triton_us']:.1f} | {r['ratio']:.2f} |")
    header = (f"triton {env['triton']}, Python {env['python']}, CPU {env['cpu']} ({env['machine']}); "
              f"median of {args.repeat} samples per cell.")
    text = "\n".join(table)
    print(header)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "algebra.md").write_text(
            "# Layout algebra: time per call, ours vs Triton's C++ binding\n\n"
            "Produced by `python benchmarks/algebra.py` (both sides in the same process run, same inputs, "
            "results checked equal first).\n\n" + header + "\n\n" + text + "\n")
        (RESULTS / "algebra.json").write_text(json.dumps({"environment": env, "rows": rows}, indent=2) + "\n")
    return 0


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
