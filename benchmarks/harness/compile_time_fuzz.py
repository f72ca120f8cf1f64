"""Compile-time fuzz: random large-register conversions, stock Triton vs the plugin, cold compiles.

    python benchmarks/compile_time.py fuzz --seed 1                    # 8 cases per target, minutes
    python benchmarks/compile_time.py fuzz --issue-case --repeats 3    # issue 43's 25x case only

(``compile_time.py``'s ``fuzz`` suite; this module also runs as its own child process.)

Each case is the kernel ``load X in A; convert to B; store Y in B`` (``tools.testcases.
single_convert_ttgir``) whose source layout holds 256 to 4,096 registers per thread (a slice of
a blocked layout whose lanes all hold the same data, a blocked layout repeated over a tensor
larger than its tile, a random ``#ttg.linear`` with many register bits) and whose destination
is a random ``#ttg.linear`` (a permutation of the tensor's bits, or a dense invertible map) or a
random blocked layout; bf16, f16, f32 or i8; 4 or 8 warps; sm_90 and gfx942.

Every kernel is compiled three ways, each in a fresh process (nothing remembered: Triton's
cache off with ``TRITON_ALWAYS_COMPILE=1``, the plugin's disk cache off with
``LINEAR_LAYOUTS_CACHE=off``), under a wall-clock limit:

* ``stock``: Triton alone;
* ``off``: ``linear_layouts.enable()`` with ``LINEAR_LAYOUTS_STOCK_GATE=off`` (every conversion
  the planner can do is ours);
* ``default``: ``linear_layouts.enable()`` as a user gets it.

The time is the child's ``triton.compile`` call alone (not the interpreter's start or the
imports).  A case is *flagged* when a plugin mode takes more than 2x stock's time, or fails or
times out where stock finishes; a flagged time is measured again (``--retries``) and the
fastest kept, since the host's noise only ever adds time.  Writes
``compile_time_fuzz_<triton version>.md`` (command, seed, one row per case) and exits 1 if a
case stays flagged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if BENCHMARKS not in sys.path:   # run as its own child process: harness/ is not a top-level script's folder
    sys.path.insert(0, BENCHMARKS)

from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()

TARGETS = ("sm_90", "gfx942")
ELEMENT_TYPES = ("bf16", "f16", "f32", "i8")
MODES = ("stock", "off", "default")
LIMIT = 2.0          # the issue's bound: no kernel compiles more than 2x stock's time

# Issue 43's case: bf16, 8,192 elements, 1,024 registers per thread, every lane the same data.
ISSUE_SOURCE = ("#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [8, 8], threadsPerWarp = [1, 32], "
                "warpsPerCTA = [8, 1], order = [1, 0]}>}>")


# ------------------------------------------------------------------------------ the cases


def _blocked(spt, tpw, wpc, order) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {list(spt)}, threadsPerWarp = {list(tpw)}, "
            f"warpsPerCTA = {list(wpc)}, order = {list(order)}}}>")


def _invertible(rng: random.Random, n: int) -> list[int]:
    """n random linearly independent n-bit vectors (a dense invertible matrix over F2)."""
    while True:
        vectors = [rng.randrange(1, 1 << n) for _ in range(n)]
        reduced: list[int] = []
        for v in vectors:
            for r in reduced:
                v = min(v, v ^ r)
            if not v:
                break
            reduced.append(v)
        else:
            return vectors


def _dense_linear(rng: random.Random, shape: tuple, warp_size: int, num_warps: int) -> str:
    """A ``#ttg.linear`` whose bases are dense combinations of one dim's bits each (a basis of
    ``#ttg.linear`` moves in one dim only), shuffled over registers, lanes and warps."""
    bases = []
    for d, size in enumerate(shape):
        for v in _invertible(rng, size.bit_length() - 1):
            basis = [0] * len(shape)
            basis[d] = v
            bases.append(basis)
    rng.shuffle(bases)
    lanes, warps = warp_size.bit_length() - 1, num_warps.bit_length() - 1
    regs = len(bases) - lanes - warps
    return (f"#ttg.linear<{{register = {bases[:regs]}, lane = {bases[regs:regs + lanes]}, "
            f"warp = {bases[regs + lanes:]}, block = []}}>")


def _dense_layouts_parse() -> bool:
    """Whether the installed Triton parses a ``#ttg.linear`` whose bases are not unit vectors:
    3.6 does; 3.9 rejects it ("LinearEncodingAttr requires a permutation matrix layout after
    removing broadcast bases"), so under 3.9 the permutations take the dense layouts' share."""
    from linear_layouts.passes.ir.bindings import installed_conventions
    return installed_conventions().release < (3, 7)


def random_case(rng: random.Random, target: str) -> dict:
    """One conversion whose source has 256 to 4,096 registers per thread (module docstring)."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.tools.testcases import random_linear_encoding
    warp_size = target_named(target).warp_size
    num_warps = rng.choice((4, 8))
    element = rng.choice(ELEMENT_TYPES)
    kind = rng.choice(("slice-broadcast", "blocked-repeated", "linear"))
    # 256 to 4,096 registers a thread; where every thread holds its own data (not the slice),
    # at most 1,024 (a tensor of up to 2^18 elements, as large as stock compiles in seconds).
    registers = 1 << rng.randint(8, 12 if kind == "slice-broadcast" else 10)
    if kind == "slice-broadcast":        # every lane holds the same data: numel = registers * warps
        spt = 1 << rng.randint(0, 3)
        shape = (registers * num_warps,)
        parent = _blocked([spt, rng.choice((1, 8))], [1, warp_size], [num_warps, 1], [1, 0])
        src = f"#ttg.slice<{{dim = 1, parent = {parent}}}>"
    elif kind == "blocked-repeated":     # a small tile repeated over a larger tensor
        numel = registers * warp_size * num_warps
        cols = 1 << rng.randint(4, min(12, numel.bit_length() - 5))
        shape = (numel // cols, cols)
        spt = [1 << rng.randint(0, 2), 1 << rng.randint(0, 3)]
        tpw0 = 1 << rng.randint(0, warp_size.bit_length() - 1)
        src = _blocked(spt, [tpw0, warp_size // tpw0], [num_warps, 1], rng.choice(([1, 0], [0, 1])))
    else:
        numel = registers * warp_size * num_warps
        cols = 1 << rng.randint(3, numel.bit_length() - 4)
        shape = (numel // cols, cols)
        src = random_linear_encoding(rng, shape, num_warps, warp_size, broadcast=False)
    other = rng.random()
    if other < 0.45 or (other < 0.8 and not _dense_layouts_parse()):
        dst = random_linear_encoding(rng, shape, num_warps, warp_size, broadcast=True)
    elif other < 0.8:
        dst = _dense_linear(rng, shape, warp_size, num_warps)
    elif len(shape) == 2:
        tpw0 = 1 << rng.randint(0, warp_size.bit_length() - 1)
        dst = _blocked([1, 1 << rng.randint(0, 3)], [tpw0, warp_size // tpw0], [1, num_warps], [1, 0])
    else:
        dst = _blocked([1 << rng.randint(0, 3)], [warp_size], [num_warps], [0])
    return {"kind": kind, "target": target, "shape": list(shape), "element": element, "num_warps": num_warps,
            "src": src, "dst": dst}


def issue_case() -> dict:
    """Issue 43's case: the source above to a random 32-register permutation (seed 43)."""
    rng = random.Random(43)
    bits = [[1 << i] for i in range(13)]
    rng.shuffle(bits)
    dst = f"#ttg.linear<{{register = {bits[:5]}, lane = {bits[5:10]}, warp = {bits[10:]}, block = []}}>"
    return {"kind": "issue-43", "target": "sm_90", "shape": [8192], "element": "bf16", "num_warps": 8,
            "src": ISSUE_SOURCE, "dst": dst}


def case_text(case: dict) -> str:
    from linear_layouts.tools.testcases import single_convert_ttgir
    return single_convert_ttgir(tuple(case["shape"]), case["element"], case["src"], case["dst"],
                                case["num_warps"], case["target"], name="k")


def registers_per_thread(encoding: str, shape) -> int:
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    layout = tensor_layout_of(encoding, tuple(shape))
    return layout.in_dim_size("register")


# ------------------------------------------------------------------------------ compiling


def child(mode: str, path: str, target: str) -> int:
    """In a fresh process: compile ``path`` for ``target`` in ``mode``; print one JSON line."""
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    if mode == "off":
        os.environ["LINEAR_LAYOUTS_STOCK_GATE"] = "off"
    else:
        os.environ.pop("LINEAR_LAYOUTS_STOCK_GATE", None)
    import triton

    import linear_layouts
    from linear_layouts.lowering.target import target_named
    if mode != "stock":
        linear_layouts.enable()
    start = time.perf_counter()
    triton.compile(path, target=target_named(target).gpu_target())
    seconds = time.perf_counter() - start
    stats = linear_layouts.stats()
    print(json.dumps({"seconds": seconds, "islands": stats.islands, "fallbacks": len(stats.fallbacks or [])}))
    return 0


def compile_in_child(mode: str, path: str, target: str, timeout: float) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", mode, path, target]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        # Triton's own diagnostic ("loc(...): error: ...") or assertion, else the last line
        errors = ([line for line in lines if "error:" in line or "Assertion" in line]
                  or [line for line in lines if "error" in line.lower()] or lines or [f"exit {done.returncode}"])
        return {"status": "failed", "error": errors[0][-200:]}
    return {"status": "ok", **json.loads(done.stdout.strip().splitlines()[-1])}


def flagged(result: dict, mode: str) -> bool:
    stock, ours = result["stock"], result[mode]
    if stock["status"] != "ok":
        return False      # not ours to judge
    if ours["status"] != "ok":
        return True
    return ours["seconds"] > LIMIT * stock["seconds"]


def _faster(a: dict, b: dict) -> dict:
    """The better of two measurements of one mode: a finished compile, then the faster one."""
    if a["status"] != "ok" or (b["status"] == "ok" and b["seconds"] < a["seconds"]):
        return b
    return a


def measure(case: dict, directory: str, index: int, timeout: float, retries: int, repeats: int = 1) -> dict:
    path = os.path.join(directory, f"case{index}.ttgir")
    with open(path, "w") as f:
        f.write(case_text(case))
    result = {}
    for _ in range(repeats):           # modes interleaved, the fastest of the repeats kept
        for mode in MODES:
            now = compile_in_child(mode, path, case["target"], timeout)
            result[mode] = _faster(result[mode], now) if mode in result else now
    for _ in range(retries):
        again = [m for m in MODES[1:] if flagged(result, m) and result[m]["status"] == "ok"]
        if not again:
            break
        for mode in ("stock", *again):      # stock too: its time is the other half of the ratio
            result[mode] = _faster(result[mode], compile_in_child(mode, path, case["target"], timeout))
    return result


# ------------------------------------------------------------------------------ the report


def _cell(result: dict, mode: str) -> str:
    r = result[mode]
    if r["status"] != "ok":
        return r["status"]
    text = f"{r['seconds']:.2f} s"
    if mode != "stock":
        text += f" ({r['islands']} island{'s' if r['islands'] != 1 else ''})"
    return text


def _ratio(result: dict, mode: str) -> str:
    if result["stock"]["status"] != "ok" or result[mode]["status"] != "ok":
        return "-"
    ratio = result[mode]["seconds"] / result["stock"]["seconds"]
    return f"**{ratio:.2f}**" if ratio > LIMIT else f"{ratio:.2f}"


def report(rows: list, command: str, seed: int, timeout: float) -> tuple[list[str], int]:
    import triton
    bad = sum(1 for _, _, result in rows if any(flagged(result, m) for m in MODES[1:]))
    lines = ["# Compile-time fuzz: large-register conversions, stock vs the plugin", "",
             f"- triton {triton.__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs",
             f"- command: `{command}` (seed {seed}); each compile in a fresh process, Triton's cache off, "
             f"the plugin's cache off; limit {timeout:.0f} s a compile; the fastest of `--repeats` compiles per mode "
             "(and of the re-measurements of a flagged time)",
             "- modes: `stock` (Triton alone), `off` (`enable()`, `LINEAR_LAYOUTS_STOCK_GATE=off`), "
             "`default` (`enable()` as shipped); ratio = plugin / stock",
             f"- flagged (ratio > {LIMIT:g}, or the plugin fails or times out where stock finishes): **{bad}** "
             f"of {len(rows)}", "",
             "| # | target | kind | type | shape | warps | regs src -> dst | stock | off | default "
             "| off / stock | default / stock |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for index, case, result in rows:
        lines.append(f"| {index} | {case['target']} | {case['kind']} | {case['element']} | "
                     f"{'x'.join(map(str, case['shape']))} | {case['num_warps']} | "
                     f"{case['registers'][0]} -> {case['registers'][1]} | {_cell(result, 'stock')} | "
                     f"{_cell(result, 'off')} | {_cell(result, 'default')} | {_ratio(result, 'off')} | "
                     f"{_ratio(result, 'default')} |")
    lines += ["", "Layouts of each case (and the first error of a failed compile):", ""]
    for index, case, result in rows:
        errors = "; ".join(f"{m}: {result[m]['error']}" for m in MODES if result[m]["status"] == "failed")
        lines.append(f"- {index}: `{case['src']}` -> `{case['dst']}`" + (f" ({errors})" if errors else ""))
    return lines, bad


def drawn_case(seed: int, cases: int, index: int) -> dict:
    """Case ``index`` of a run with ``--seed seed --cases cases`` (every target's cases in turn):
    the same kernel the studies of one flagged case probe."""
    drawn = []
    for target in TARGETS:
        rng = random.Random(f"{seed}:{target}")
        drawn += [random_case(rng, target) for _ in range(cases)]
    return drawn[index]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="compile_time.py fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=8, help="cases per target")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds a compile may take")
    parser.add_argument("--retries", type=int, default=2, help="re-measurements of a flagged time")
    parser.add_argument("--repeats", type=int, default=1, help="compiles per mode, the fastest kept")
    parser.add_argument("--issue-case", action="store_true", help="issue 43's case only")
    parser.add_argument("--out", default=os.path.join(BENCHMARKS, "results"))
    parser.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "TARGET"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)

    import triton
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    if args.issue_case:
        cases = [issue_case()]
    else:
        cases = []
        for t in targets:
            rng = random.Random(f"{args.seed}:{t}")
            cases += [random_case(rng, t) for _ in range(args.cases)]
    directory = tempfile.mkdtemp(prefix="ll_compile_time_fuzz_")
    rows = []
    for index, case in enumerate(cases):
        case["registers"] = (registers_per_thread(case["src"], case["shape"]),
                             registers_per_thread(case["dst"], case["shape"]))
        result = measure(case, directory, index, args.timeout, args.retries, args.repeats)
        rows.append((index, case, result))
        print(f"{index} {case['target']} {case['kind']} {case['element']} {case['shape']} regs {case['registers']}: "
              + ", ".join(f"{m} {_cell(result, m)}" for m in MODES), flush=True)
    command = "python benchmarks/compile_time.py fuzz " + " ".join(argv if argv is not None else sys.argv[1:])
    lines, bad = report(rows, command.strip(), args.seed, args.timeout)
    os.makedirs(args.out, exist_ok=True)
    name = "compile_time_fuzz_issue_case" if args.issue_case else "compile_time_fuzz"
    path = os.path.join(args.out, f"{name}_{triton.__version__}.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{bad} of {len(rows)} flagged; wrote {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
