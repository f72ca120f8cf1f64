"""Compile-time fuzz: random large-register conversions, stock Triton vs the plugin, cold compiles.

    python benchmarks/compile_time.py fuzz --seed 1                    # 8 cases per target, minutes
    python benchmarks/compile_time.py fuzz --replicated-to-permutation --repeats 3   # one case: replicated lanes to a permutation
    python benchmarks/compile_time.py fuzz --replicated-round-trips --repeats 2       # one case: replicated lanes there and back
    python benchmarks/compile_time.py fuzz --structured --seed 1       # destinations built from the source

(``compile_time.py``'s ``fuzz`` suite; this module also runs as its own child process.)

Each case is the kernel ``load X in A; convert to B; store Y in B`` (``tools.fuzz.testcases.
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

from harness.common import BENCHMARKS, module_command, require_package

require_package()

TARGETS = ("sm_90", "gfx942")
ELEMENT_TYPES = ("bf16", "f16", "f32", "i8")
MODES = ("stock", "off", "default")
LIMIT = 2.0          # the bound: no kernel compiles more than 2x stock's time

# The source of the two fixed cases: bf16, 8,192 elements, 1,024 registers per thread, every lane the same data.
REPLICATED_SOURCE = ("#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [8, 8], threadsPerWarp = [1, 32], "
                "warpsPerCTA = [8, 1], order = [1, 0]}>}>")


# ------------------------------------------------------------------------------ the cases


def _blocked(spt, tpw, wpc, order) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {list(spt)}, threadsPerWarp = {list(tpw)}, "
            f"warpsPerCTA = {list(wpc)}, order = {list(order)}}}>")


def _repeated_blocked_source(rng, registers: int, warp_size: int, num_warps: int) -> tuple[tuple, str]:
    """(shape, layout): a small blocked tile repeated over a tensor of ``registers`` a thread."""
    numel = registers * warp_size * num_warps
    cols = 1 << rng.randint(4, min(12, numel.bit_length() - 5))
    spt = [1 << rng.randint(0, 2), 1 << rng.randint(0, 3)]
    tpw0 = 1 << rng.randint(0, warp_size.bit_length() - 1)
    return (numel // cols, cols), _blocked(spt, [tpw0, warp_size // tpw0], [num_warps, 1], rng.choice(([1, 0], [0, 1])))


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
    from linear_layouts.tools.fuzz.testcases import random_linear_encoding
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
        shape, src = _repeated_blocked_source(rng, registers, warp_size, num_warps)
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


STRUCTURED_PATTERNS = ("lane-picks", "mixed", "broadcast", "swap")


def _bits_of(bases) -> list:
    """The element bits of a layout's bases (nonzero vectors), as tuples."""
    return [tuple(v) for v in bases if any(v)]


def structured_case(rng: random.Random, target: str) -> dict:
    """``_structured_case`` drawn until the source holds 256 to 4,096 registers a thread and the
    destination's bases fit (a draw short of register bits for the lanes is drawn again)."""
    while True:
        try:
            case = _structured_case(rng, target)
        except (IndexError, ValueError):
            continue
        if 256 <= registers_per_thread(case["src"], case["shape"]) <= 4096:
            return case


def _structured_case(rng: random.Random, target: str) -> dict:
    """A large-register conversion whose destination is built from the source's own bases (module
    docstring of this file): random permutations rarely make the lanes of a replicated
    source pick different subsets of its registers, which is what these do.

    Sources (256 to 4,096 registers a thread): a slice whose lanes hold the same data (the two fixed
    cases' kind), a slice whose lanes *and* warps all hold the same data (every thread holds
    the whole tensor), or a blocked layout repeated over a larger tensor.  Destinations:

    * ``lane-picks``: the source's warp bases kept, the lanes take random register bits of the
      source (each lane picks its own subset of the replicated registers), the rest registers;
    * ``mixed``: the round-trip case's shape, lanes from register and warp bits, warps from register bits;
    * ``broadcast``: ``lane-picks`` with one or two lanes broadcasting (zero bases);
    * ``swap``: the source's bases with a few register bits traded for lane or warp bits.

    Half the kernels convert to the destination and back twice and store in the source layout
    (the round-trip case's kernel), the others convert once.
    """
    from linear_layouts.lowering.target import target_named
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    from linear_layouts.tools.fuzz.testcases import linear_encoding_text
    warp_size = target_named(target).warp_size
    num_warps = rng.choice((4, 8))
    element = rng.choice(ELEMENT_TYPES)
    kind = rng.choice(("slice-broadcast", "slice-all-threads", "blocked-repeated"))
    registers = 1 << rng.randint(8, 12 if kind.startswith("slice") else 10)
    if kind == "slice-broadcast":
        shape = (registers * num_warps,)
        parent = _blocked([1 << rng.randint(0, 3), rng.choice((1, 8))], [1, warp_size], [num_warps, 1], [1, 0])
        src = f"#ttg.slice<{{dim = 1, parent = {parent}}}>"
    elif kind == "slice-all-threads":   # lanes and warps along the sliced dim: every thread holds all
        shape = (registers,)
        parent = _blocked([1 << rng.randint(0, 3), rng.choice((1, 8))], [1, warp_size], [1, num_warps], [1, 0])
        src = f"#ttg.slice<{{dim = 1, parent = {parent}}}>"
    else:
        shape, src = _repeated_blocked_source(rng, registers, warp_size, num_warps)
    bases = tensor_layout_of(src, shape).bases
    reg, lane, warp = (_bits_of(bases[d]) for d in ("register", "lane", "warp"))
    lanes_n, warps_n = warp_size.bit_length() - 1, num_warps.bit_length() - 1
    zero = tuple(0 for _ in shape)
    pattern = rng.choice(STRUCTURED_PATTERNS if len(lane) < lanes_n else ("swap", "mixed"))
    pool = list(reg)
    rng.shuffle(pool)
    if pattern in ("lane-picks", "broadcast"):
        d_warp = list(warp) if len(warp) == warps_n else [pool.pop() for _ in range(warps_n)]
        d_lane = [pool.pop() for _ in range(lanes_n - len(lane))] + list(lane)
        if pattern == "broadcast":
            for i in rng.sample(range(lanes_n), rng.randint(1, 2)):
                pool.append(d_lane[i])
                d_lane[i] = zero
        d_reg = pool
    elif pattern == "mixed":
        moved = list(warp) + list(lane)
        rng.shuffle(moved)
        keep = rng.randint(1, max(1, min(len(moved), lanes_n - 1)))
        d_lane = moved[:keep] + [pool.pop() for _ in range(lanes_n - keep)]
        rng.shuffle(d_lane)
        d_warp = [pool.pop() for _ in range(warps_n)]
        d_reg = pool + moved[keep:]
    else:   # swap: a few register bits traded with lane / warp bits, the rest in place
        d_lane, d_warp, d_reg = list(lane), list(warp), list(reg)
        d_lane += [d_reg.pop(rng.randrange(len(d_reg))) for _ in range(lanes_n - len(d_lane))]
        d_warp += [d_reg.pop(rng.randrange(len(d_reg))) for _ in range(warps_n - len(d_warp))]
        for _ in range(rng.randint(1, 3)):
            i, j = rng.randrange(len(d_reg)), rng.randrange(lanes_n + warps_n)
            side, k = (d_lane, j) if j < lanes_n else (d_warp, j - lanes_n)
            d_reg[i], side[k] = side[k], d_reg[i]
    rng.shuffle(d_reg)
    dst = linear_encoding_text({"register": [list(v) for v in d_reg], "lane": [list(v) for v in d_lane],
                                "warp": [list(v) for v in d_warp]})
    return {"kind": f"{kind}/{pattern}", "target": target, "shape": list(shape), "element": element,
            "num_warps": num_warps, "src": src, "dst": dst, "round_trips": rng.choice((0, 2))}


def replicated_round_trips_case() -> dict:
    """The round-trip case: the replicated source to a destination whose lanes pick different
    subsets of the replicated registers, converted there and back twice."""
    dst = ("#ttg.linear<{register = [[512], [256], [64], [4096], [1024]], lane = [[16], [2048], [8], [32], [4]], "
           "warp = [[128], [2], [1]], block = []}>")
    return {"kind": "replicated-round-trips", "target": "sm_90", "shape": [8192], "element": "bf16", "num_warps": 8,
            "src": REPLICATED_SOURCE, "dst": dst, "round_trips": 2}


def replicated_to_permutation_case() -> dict:
    """The replicated source to a random 32-register permutation (seed 43)."""
    rng = random.Random(43)
    bits = [[1 << i] for i in range(13)]
    rng.shuffle(bits)
    dst = f"#ttg.linear<{{register = {bits[:5]}, lane = {bits[5:10]}, warp = {bits[10:]}, block = []}}>"
    return {"kind": "replicated-to-permutation", "target": "sm_90", "shape": [8192], "element": "bf16", "num_warps": 8,
            "src": REPLICATED_SOURCE, "dst": dst}


def round_trip_ttgir(shape, element: str, src: str, dst: str, num_warps: int, target: str, trips: int,
                     name: str = "k") -> str:
    """``load X in src; (convert to dst; convert to src) x trips; store Y in src`` (the round-trip case's kernel)."""
    from linear_layouts.lowering.target import target_named
    from linear_layouts.tools.fuzz.testcases import _offsets
    t = target_named(target)
    dims = "x".join(map(str, shape))
    ptr = f"!tt.ptr<{element}>"
    lines = [f"#src = {src}", f"#dst = {dst}",
             f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, '
             f'ttg.target = "{t.triton_name}", "ttg.threads-per-warp" = {t.warp_size} : i32}} {{',
             f"  tt.func public @{name}(%X: {ptr}, %Y: {ptr}) {{"]
    off = _offsets(lines, tuple(shape), "#src", "s")
    lines += [f"    %xp0 = tt.splat %X : {ptr} -> tensor<{dims}x{ptr}, #src>",
              f"    %xp = tt.addptr %xp0, {off} : tensor<{dims}x{ptr}, #src>, tensor<{dims}xi32, #src>",
              f"    %v0 = tt.load %xp : tensor<{dims}x{ptr}, #src>"]
    for i in range(trips):
        lines += [f"    %w{i} = ttg.convert_layout %v{i} : tensor<{dims}x{element}, #src> -> tensor<{dims}x{element}, #dst>",
                  f"    %v{i + 1} = ttg.convert_layout %w{i} : tensor<{dims}x{element}, #dst> -> tensor<{dims}x{element}, #src>"]
    lines += [f"    %yp0 = tt.splat %Y : {ptr} -> tensor<{dims}x{ptr}, #src>",
              f"    %yp = tt.addptr %yp0, {off} : tensor<{dims}x{ptr}, #src>, tensor<{dims}xi32, #src>",
              f"    tt.store %yp, %v{trips} : tensor<{dims}x{ptr}, #src>", "    tt.return", "  }", "}", ""]
    return "\n".join(lines)


def case_text(case: dict) -> str:
    from linear_layouts.tools.fuzz.testcases import single_convert_ttgir
    if case.get("round_trips"):
        return round_trip_ttgir(tuple(case["shape"]), case["element"], case["src"], case["dst"], case["num_warps"],
                                case["target"], case["round_trips"])
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
    python, cwd = module_command(__file__)      # python -m harness.compile_time_fuzz, from benchmarks/
    command = [*python, "--child", mode, os.path.abspath(path), target]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd)
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
        kind = case["kind"] + (f", there and back x{case['round_trips']}" if case.get("round_trips") else "")
        lines.append(f"| {index} | {case['target']} | {kind} | {case['element']} | "
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
    parser.add_argument("--replicated-to-permutation", action="store_true",
                        help="one case only: replicated lanes to a random 32-register permutation")
    parser.add_argument("--replicated-round-trips", action="store_true",
                        help="one case only: replicated lanes to lanes picking subsets of them, there and back twice")
    parser.add_argument("--structured", action="store_true",
                        help="destinations built from the source's bases (structured_case), not random ones")
    parser.add_argument("--indices", default="", help="measure only these cases (comma-separated), e.g. to "
                        "measure again ones a busy host or a tree in flux failed")
    parser.add_argument("--out", default=os.path.join(BENCHMARKS, "results"))
    parser.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "TARGET"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)

    import triton
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    if args.replicated_to_permutation:
        cases = [replicated_to_permutation_case()]
    elif args.replicated_round_trips:
        cases = [replicated_round_trips_case()]
    else:
        draw = structured_case if args.structured else random_case
        cases = []
        for t in targets:
            rng = random.Random(f"{args.seed}:{t}")
            cases += [draw(rng, t) for _ in range(args.cases)]
    directory = tempfile.mkdtemp(prefix="ll_compile_time_fuzz_")
    rows = []
    wanted = {int(i) for i in args.indices.split(",") if i.strip()}
    for index, case in enumerate(cases):
        if wanted and index not in wanted:
            continue
        case["registers"] = (registers_per_thread(case["src"], case["shape"]),
                             registers_per_thread(case["dst"], case["shape"]))
        result = measure(case, directory, index, args.timeout, args.retries, args.repeats)
        rows.append((index, case, result))
        print(f"{index} {case['target']} {case['kind']} {case['element']} {case['shape']} regs {case['registers']}: "
              + ", ".join(f"{m} {_cell(result, m)}" for m in MODES), flush=True)
    command = "python benchmarks/compile_time.py fuzz " + " ".join(argv if argv is not None else sys.argv[1:])
    lines, bad = report(rows, command.strip(), args.seed, args.timeout)
    os.makedirs(args.out, exist_ok=True)
    name = ("compile_time_fuzz_replicated_to_permutation" if args.replicated_to_permutation
            else "compile_time_fuzz_replicated_round_trips" if args.replicated_round_trips
            else f"compile_time_fuzz_structured_seed{args.seed}" if args.structured else "compile_time_fuzz")
    if args.structured and len(targets) == 1:
        name += f"_{targets[0]}"
    if wanted:
        name += "_cases_" + "_".join(map(str, sorted(wanted)))
    path = os.path.join(args.out, f"{name}_{triton.__version__}.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{bad} of {len(rows)} flagged; wrote {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
