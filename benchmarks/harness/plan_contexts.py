"""Conversions timed the way a kernel sees them, and fresh conversions no table has seen.

    python benchmarks/plan_choice.py --fresh 101 --count 220      # stock vs ours, a fresh seed
    python benchmarks/plan_choice.py --train --fresh 1 --count 150  # every candidate, for the fit

Why the same pair measured 2x apart.  ``benchmarks/conversions.py``'s timing kernel converts
``x + i`` from A to B in a loop and adds the result to an accumulator: iteration i+1's
conversion does not depend on iteration i's, so a warp keeps several conversions in flight
(shared-memory plans overlap their stores, barriers and loads across iterations), and only the
direction A -> B is timed.  A kernel sees conversions on its critical path: the round trip
A -> B -> A of an epilogue or a reduction, where each conversion waits for the one before.  A
shared-memory plan pays its whole latency (stores, barrier, loads: ~0.5 us) once per conversion
there; a shuffle plan pays a few shuffle latencies.  So a plan that wins in the independent
harness can lose 2x on the dependent chain (a pair of ``first_pairs()``: 0.57 vs 0.71 ms independent,
528 vs 285 ns per round trip in a chain).

The contexts timed here, each on the same compiled kernels:

* ``chain``: A -> B -> A, each conversion depending on the one before (``CHAIN_ITERATIONS``
  round trips), grid full (4 programs per SM): throughput and latency together;
* ``latency``: the same kernel with one program per SM: the round trip's latency alone;
* ``independent``: ``conversions.py``'s harness (one direction, independent iterations), only where asked
  (``--independent``), to show the disagreement.

A choice is judged by its worst context: a win in one and a loss of more than 3% in another is
not a win.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

from harness.common import geomean, require_package  # noqa: E402
from harness.conversion_cases import INT_TYPE, Case, _wrap, kernel_ttgir, loop_index_line, pow2_split  # noqa: E402

CHAIN_ITERATIONS = 256
ABOVE = 1.05


# --------------------------------------------------------------------------- kernels

def chain_ttgir(case: Case, iterations: int = CHAIN_ITERATIONS) -> str:
    """``kernel_ttgir``'s module with its loop replaced by a dependent round trip:
    ``a = convert(convert(a + i, A -> B), B -> A)``; the result is ``x + sum(range(iterations))``."""
    text = kernel_ttgir(case)
    dims = "x".join(map(str, case.shape))
    ty = INT_TYPE[case.bits]
    src_t, dst_t = f"tensor<{dims}x{ty}, {case.src}>", f"tensor<{dims}x{ty}, {case.dst}>"
    start = text.index("    %cn = arith.constant")
    end = text.index("    %accs = ttg.local_alloc")
    loop = [f"    %cn = arith.constant {iterations} : i32",
            f"    %acc = scf.for %i = %c0 to %cn step %c1 iter_args(%a = %x) -> ({src_t})  : i32 {{",
            loop_index_line(ty, case.bits)]
    loop += [f"      %is = tt.splat %ik : {ty} -> {src_t}",
             f"      %xi = arith.addi %a, %is : {src_t}",
             f"      %y = ttg.convert_layout %xi : {src_t} -> {dst_t}",
             f"      %z = ttg.convert_layout %y : {dst_t} -> {src_t}",
             f"      scf.yield %z : {src_t}",
             "    }"]
    body = text[:start] + "\n".join(loop) + "\n" + text[end:]
    body = body.replace(f"%accs = ttg.local_alloc %acc : ({dst_t})", f"%accs = ttg.local_alloc %acc : ({src_t})")
    return body


# --------------------------------------------------------------------------- fresh conversions

def _blocked(size, threads, warps, order) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {list(size)}, threadsPerWarp = {list(threads)}, "
            f"warpsPerCTA = {list(warps)}, order = {list(order)}}}>")


def _random_blocked(rank, num_warps, rng) -> str:
    threads, warps = pow2_split(32, rank, rng), pow2_split(num_warps, rank, rng)
    size = [rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    return _blocked(size, threads, warps, order)


def _spt_change(rank, num_warps, rng) -> tuple[str, str]:
    """A blocked layout and the same with its fastest dim's sizePerThread doubled or halved (as a
    reduction's or an epilogue's vector width changes)."""
    threads, warps = pow2_split(32, rank, rng), pow2_split(num_warps, rank, rng)
    order = list(range(rank))[::-1] if rng.random() < 0.8 else list(range(rank))
    size = [1] * rank
    fast = order[0]
    a = rng.choice([1, 2, 4, 8])
    b = a * 2 if a == 1 or (a < 8 and rng.random() < 0.5) else a // 2
    size[fast] = a
    other = list(size)
    other[fast] = b
    return _blocked(size, threads, warps, order), _blocked(other, threads, warps, order)


def _random_linear(shape, num_warps, rng) -> str:
    """A random distributed linear layout: the tensor's bits dealt to registers, lanes and warps
    (zero bases where the tensor is too small: broadcast)."""
    bits = [(d, 1 << k) for d in range(len(shape)) for k in range(int(math.log2(shape[d])))]
    rng.shuffle(bits)
    lanes, warps = 5, int(math.log2(num_warps))
    zero = [0] * len(shape)

    def basis(item):
        if item is None:
            return list(zero)
        v = list(zero)
        v[item[0]] = item[1]
        return v
    # lanes and warps first take bits; the rest are registers, in a random order
    pool = list(bits)
    lane = [pool.pop() if pool else None for _ in range(lanes)]
    warp = [pool.pop() if pool else None for _ in range(warps)]
    reg = pool
    fmt = lambda items: "[" + ", ".join(str(basis(i)) for i in items) + "]"  # noqa: E731
    return f"#ttg.linear<{{register = {fmt(reg)}, lane = {fmt(lane)}, warp = {fmt(warp)}, block = []}}>"


def _random_mma(shape, num_warps, rng):
    if num_warps >= 4 and rng.random() < 0.5:
        n = rng.choice([n for n in (8, 16, 32, 64, 128) if n <= shape[1]] or [8])
        warps = [num_warps, 1] if rng.random() < 0.6 or num_warps == 4 else [4, num_warps // 4]
        return (f"#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = {warps}, "
                f"instrShape = [16, {n}, 16]}}>")
    warps = pow2_split(num_warps, 2, rng)
    return f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {warps}, instrShape = [16, 8]}}>"


FAMILIES = ("blocked", "spt", "slice", "mma", "linear")
# What a draw's larger layout holds, in 32-bit registers a thread: more than the first, at most
# the second (the default: every size people write kernels with; plan_choice.py --registers).
DRAWN_REGISTERS = (0, 64)


def fresh_cases(seed: int, count: int, registers: tuple = DRAWN_REGISTERS) -> list[Case]:
    """``count`` conversions drawn from ``seed``: blocked <-> blocked, sizePerThread changes,
    slices of 2-D blocked layouts (1-D tensors), MMA accumulators <-> blocked, and random linear
    layouts; 1 to 8 warps, 1-D and 2-D, 8- to 64-bit elements.  Each case's ``origin`` names its
    family (``fresh:<family>``).  A case the planner cannot take is skipped (``usable``).
    ``registers`` (low, high): the larger layout holds more than ``low`` and at most ``high``
    32-bit registers a thread (``DRAWN_REGISTERS`` unless said)."""
    rng = random.Random(seed)
    cases, seen = [], set()
    attempts = 0
    while len(cases) < count and attempts < 50 * count:
        attempts += 1
        family = rng.choice(FAMILIES)
        num_warps = rng.choice([1, 2, 4, 4, 8])
        bits = rng.choice([8, 16, 16, 32, 32, 64])
        if family in ("slice",) or (family in ("blocked", "spt", "linear") and rng.random() < 0.3):
            shape = (1 << rng.randint(6, 12),)
        else:
            shape = (1 << rng.randint(3, 7), 1 << rng.randint(3, 8))
        size = 1
        for s in shape:
            size *= s
        if not 64 <= size <= 16384:
            continue
        rank = len(shape)
        if family == "blocked":
            src, dst = _random_blocked(rank, num_warps, rng), _random_blocked(rank, num_warps, rng)
            if rng.random() < 0.5:
                dst = re.sub(r"warpsPerCTA = \[[^\]]*\]", re.search(r"warpsPerCTA = \[[^\]]*\]", src).group(0), dst)
        elif family == "spt":
            src, dst = _spt_change(rank, num_warps, rng)
        elif family == "slice":
            parent = _random_blocked(2, num_warps, rng)
            src = f"#ttg.slice<{{dim = {rng.randrange(2)}, parent = {parent}}}>"
            dst = _random_blocked(1, num_warps, rng) if rng.random() < 0.6 else \
                f"#ttg.slice<{{dim = {rng.randrange(2)}, parent = {_random_blocked(2, num_warps, rng)}}}>"
        elif family == "mma":
            if rank != 2 or shape[0] < 16 or shape[1] < 8:
                continue
            src, dst = _random_mma(shape, num_warps, rng), _random_blocked(2, num_warps, rng)
            bits = rng.choice([16, 32, 32])
        else:
            src = _random_linear(shape, num_warps, rng)
            dst = _random_linear(shape, num_warps, rng) if rng.random() < 0.5 else _random_blocked(rank, num_warps, rng)
        if rng.random() < 0.5:
            src, dst = dst, src
        key = (src, dst, shape, bits, num_warps)
        if src == dst or key in seen or not usable(src, dst, shape, bits, registers[1]):
            continue
        if registers[0] and max_registers_of(src, dst, shape, bits) <= registers[0]:
            continue
        seen.add(key)
        dims = "x".join(map(str, shape))
        cases.append(Case(f"fresh{seed}/{len(cases)}:{family}:{dims}:i{bits}:w{num_warps}", "", src, dst, shape,
                          bits, num_warps, f"fresh:{family}"))
    return cases


def max_registers_of(src: str, dst: str, shape, bits) -> int:
    """The 32-bit registers a thread holds on the larger of the two layouts (copies counted)."""
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.register_file import registers_held
    return max(registers_held(to_linear_layout(x, shape), bits) for x in (src, dst))


def usable(src: str, dst: str, shape, bits, max_registers: int = DRAWN_REGISTERS[1]) -> bool:
    """Both layouts parse for this shape, hold at most ``max_registers`` 32-bit registers per
    thread (64 unless said), and the conversion has at least one verified plan in each direction
    (not a no-op or a rename: those cost nothing either way)."""
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.register_file import registers_held
    from linear_layouts.lowering.planner import plan_conversion
    try:
        a, b = to_linear_layout(src, shape), to_linear_layout(dst, shape)
        # At most 64 32-bit registers per thread in either layout (replication included): more
        # is a kernel nobody writes, and ptxas takes a minute over each (an H100 run spent 5
        # minutes compiling a few such draws).
        if max(registers_held(x, bits) for x in (a, b)) > max_registers:
            return False
        forward, back = plan_conversion(a, b, bits, "sm_90"), plan_conversion(b, a, bits, "sm_90")
    except Exception:  # noqa: BLE001 - any layout our parser or planner rejects is not drawn
        return False
    return bool(forward) and bool(back) and forward.method not in ("noop", "rename")


# --------------------------------------------------------------------------- modes

def keys_of(case: Case):
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.choosing.measured_choices import conversion_key
    a, b = to_linear_layout(case.src_resolved, case.shape), to_linear_layout(case.dst_resolved, case.shape)
    return conversion_key(a, b, case.bits, "sm_90"), conversion_key(b, a, case.bits, "sm_90")


def candidate_count(case: Case, back: bool = False) -> int:
    """How many verified candidates the forward conversion has (``back``: the return trip)."""
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.planner import plan_candidates
    from linear_layouts.lowering.verify import verify_plan
    a, b = to_linear_layout(case.src_resolved, case.shape), to_linear_layout(case.dst_resolved, case.shape)
    if back:
        a, b = b, a
    plans, _ = plan_candidates(a, b, case.bits, "sm_90")
    return sum(1 for p in plans if verify_plan(p).ok)


def modes_of(case: Case, train: bool, table: bool, pick: bool = True, shared_asm: bool = False,
             in_place: bool = False, text: bool = False, rounds: bool = False, every_pair: bool = False,
             own_direction: bool = False) -> dict:
    """mode name -> pipeline (None: stock).  ``ours``: the plugin's default with the measured
    table off (the model and its stock gate alone); ``ours_table``: table on; ``pick``: the
    cost model's rank 0 in both directions, ungated (the plugin's rule before the chain contexts);
    ``cand<K>``: the forward conversion's candidate K, the return trip left to stock.  ``pick``
    False leaves the ungated pick out (a shorter run when only ours vs stock is asked).
    ``shared_asm``: also ``ours_asm``, ``ours`` with NVIDIA shared-memory accesses as the inline
    PTX of before (the study switch ``emit_nvidia.SHARED_ACCESS_FORM = "asm"`` while it compiles:
    ``_mode_environment``),
    the A/B of the LLVM form against it in one run.  ``in_place``: also ``ours_in_place``,
    ``ours`` with its one-round shared-memory plans built in Triton's module and the others
    spliced as text (``LINEAR_LAYOUTS_IN_PLACE=1``, ``passes/drop_in/in_place.py``: the default since it
    was measured so).  ``text``: also ``ours_text``, every island spliced as text
    (``LINEAR_LAYOUTS_IN_PLACE=0``).  ``rounds``: also ``ours_stock_rounds``, shared plans in
    Triton's rounds only (``LINEAR_LAYOUTS_ROUND_SCRATCH=0``), and ``ours_wide_rounds``, fewer
    rounds through buffers of up to 64 KB (the default allows ``DEFAULT_ROUND_SCRATCH``).
    ``every_pair``: also ``pair<F>_<B>``, the forward conversion's candidate F with the return
    trip's candidate B (``s``: stock's lowering of that direction), every pair but stock's own:
    what any choice among today's plans can reach (``best_of_every_pair``).  ``own_direction``: also
    ``ours_forward``, the default's choice for the case's own direction (the one its kernel
    converts) with stock's lowering of the return trip, which no kernel of a corpus case runs:
    the round trip's ``ours`` credits both."""
    forward, back = keys_of(case)
    modes = {"stock": None, "stock_again": None}
    if not train:
        modes["ours"] = "ll-lower-conversions{measured=false}"
    if own_direction:
        modes["ours_forward"] = f"ll-lower-conversions{{candidate_for={back}:stock measured=false}}"
    if shared_asm and not train:
        modes["ours_asm"] = modes["ours"]
    if in_place and not train:
        modes["ours_in_place"] = modes["ours"]
    if text and not train:
        modes["ours_text"] = modes["ours"]
    if rounds and not train:
        modes["ours_stock_rounds"] = modes["ours"]
        modes["ours_wide_rounds"] = modes["ours"]
    if pick:
        modes["pick"] = f"ll-lower-conversions{{candidate_for={forward}:0,{back}:0 measured=false}}"
    if table and not case.origin.startswith("fresh:"):   # no table holds a fresh conversion
        modes["ours_table"] = "ll-lower-conversions"
    if train:
        for k in range(candidate_count(case)):
            modes[f"cand{k}"] = f"ll-lower-conversions{{candidate_for={forward}:{k},{back}:stock measured=false}}"
    if every_pair:
        forward_plans = ["s"] + [str(k) for k in range(candidate_count(case))]
        back_plans = ["s"] + [str(k) for k in range(candidate_count(case, back=True))]
        for f in forward_plans:
            for b in back_plans:
                if (f, b) != ("s", "s"):
                    chosen = ",".join(f"{key}:{'stock' if k == 's' else k}" for key, k in ((forward, f), (back, b)))
                    modes[f"pair{f}_{b}"] = f"ll-lower-conversions{{candidate_for={chosen} measured=false}}"
    return modes


def _kernel_path(directory, index, mode, kind):
    return os.path.join(directory, f"c{index}_{mode}_{kind}.ttgir")


# What a mode's name asks of the environment while it compiles (read when an island is emitted
# or built; both are in Triton's cache key, so modes never share a cached kernel).
# The buffer ``ours_wide_rounds`` may take for fewer rounds (the default's is
# ``lowering.planner.DEFAULT_ROUND_SCRATCH``).
WIDE_ROUND_SCRATCH = 65536
MODE_ENVIRONMENT = {"_in_place": ("LINEAR_LAYOUTS_IN_PLACE", "1"),
                    "_text": ("LINEAR_LAYOUTS_IN_PLACE", "0"), "_stock_rounds": ("LINEAR_LAYOUTS_ROUND_SCRATCH", "0"),
                    "_wide_rounds": ("LINEAR_LAYOUTS_ROUND_SCRATCH", str(WIDE_ROUND_SCRATCH))}
# What a mode's name sets in this process that is no setting of the plugin but a study's switch
# (module, name, value; also in the cache key).
MODE_STUDY_SWITCHES = {"_asm": ("linear_layouts.lowering.emit.emit_nvidia", "SHARED_ACCESS_FORM", "asm")}


@contextlib.contextmanager
def _mode_environment(mode: str):
    """The environment a mode compiles in: ``*_asm`` modes with the study switch
    ``emit_nvidia.SHARED_ACCESS_FORM = "asm"``, ``*_in_place`` / ``*_text`` modes with
    ``LINEAR_LAYOUTS_IN_PLACE=1`` / ``0``, ``*_stock_rounds`` / ``*_wide_rounds`` with
    ``LINEAR_LAYOUTS_ROUND_SCRATCH=0`` / ``65536`` (the settings ``in_place`` and ``round_scratch``),
    the others as the process has it."""
    study = next((value for suffix, value in MODE_STUDY_SWITCHES.items() if mode.endswith(suffix)), None)
    if study is not None:
        import importlib

        module, name, value = study
        module = importlib.import_module(module)
        saved = getattr(module, name)
        setattr(module, name, value)
        try:
            yield
        finally:
            setattr(module, name, saved)
        return
    switch = next((value for suffix, value in MODE_ENVIRONMENT.items() if mode.endswith(suffix)), None)
    if switch is None:
        yield
        return
    variable, value = switch
    saved = os.environ.get(variable)
    os.environ[variable] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = saved


def ptxas_usage(ptx: str, directory: str) -> dict:
    """What ptxas says a kernel uses a thread (``ptxas -v`` on sm_90a, the ptxas Triton ships):
    registers and bytes of spill stores and loads; {} where ptxas cannot be run or says nothing."""
    import subprocess
    from triton.backends.nvidia.compiler import get_ptxas
    tool = get_ptxas(90)
    binary = getattr(tool, "path", None) or tool[0]
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", dir=directory, delete=False) as f:
        f.write(ptx)
    try:
        said = subprocess.run([binary, "-v", "--gpu-name", "sm_90a", f.name, "-o", f.name + ".o"],
                              capture_output=True, text=True, timeout=600).stderr
    except (OSError, subprocess.SubprocessError):
        return {}
    finally:
        for path in (f.name, f.name + ".o"):
            if os.path.exists(path):
                os.remove(path)
    registers = re.search(r"Used (\d+) registers", said)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", said)
    if not registers or not spills:
        return {}
    return {"registers": int(registers.group(1)), "spill_stores": int(spills.group(1)),
            "spill_loads": int(spills.group(2))}


def compile_one(job):
    index, case, mode, pipeline, kind, directory, usage = job
    require_package()
    import triton
    from triton.backends.compiler import GPUTarget
    import linear_layouts
    from linear_layouts.passes.drop_in import hook
    from linear_layouts.tools.fuzz.testcases import instruction_classes

    path = _kernel_path(directory, index, mode, kind)
    with open(path, "w") as f:
        f.write(chain_ttgir(case) if kind == "chain" else kernel_ttgir(case))
    start = time.perf_counter()
    try:
        with _mode_environment(mode):   # before enable(): on 3.6 it picks its cache directory by the key
            if pipeline:
                linear_layouts.enable(pipeline=pipeline)
            try:
                kernel = triton.compile(path, target=GPUTarget("cuda", 90, 32))
            finally:
                hook.disable()
        seconds = round(time.perf_counter() - start, 3)
        return index, mode, kind, {"ok": True, "compile_s": seconds, **instruction_classes(kernel.asm["ptx"]),
                                   **({"ptxas": ptxas_usage(kernel.asm["ptx"], directory)} if usage else {})}
    except Exception as e:  # the Triton boundary: reported per mode, never fatal
        return index, mode, kind, {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}


def _load(directory, index, mode, pipeline, kind):
    import linear_layouts
    import triton
    from linear_layouts.passes.drop_in import hook
    from triton.backends.compiler import GPUTarget
    with _mode_environment(mode):   # before enable(): on 3.6 it picks its cache directory by the key
        if pipeline:
            linear_layouts.enable(pipeline=pipeline)
        try:
            return triton.compile(_kernel_path(directory, index, mode, kind), target=GPUTarget("cuda", 90, 32))
        finally:
            hook.disable()


def measure(cases, train=False, table=False, independent=False, jobs=15, rep=20, checkpoint=None,
            pick=True, deadline=None, shared_asm=False, in_place=False, text=False, rounds=False, usage=False,
            every_pair=False, own_direction=False):
    """Compile every case in every mode, time each in every context; rows with times in us per
    kernel (medians of ``do_bench``).  ``deadline``: seconds from the start after which no further
    conversion is timed (the environment's ``partial`` then says how many were); a call with a
    time limit ends with a report of what it timed instead of none.  ``usage``: each compile also
    records what ``ptxas -v`` says of it (registers, spill bytes: ``ptxas_usage``)."""
    began = time.perf_counter()
    directory = tempfile.mkdtemp(prefix="ll_ctx_")
    modes = [modes_of(c, train, table, pick, shared_asm, in_place, text, rounds, every_pair, own_direction) for c in cases]
    kinds = ["chain", "independent"]

    def kinds_of(case):   # the independent harness only where asked, and always for ``first_pairs()``
        return kinds if independent or case.origin == "first_pairs" else ["chain"]
    work = [(i, c, m, p, k, directory, usage) for i, c in enumerate(cases) for m, p in modes[i].items()
            if m != "stock_again" for k in kinds_of(c)]
    compiled = {}
    start = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        for index, mode, kind, result in pool.map(compile_one, work, chunksize=2):
            compiled[(index, mode, kind)] = result
    print(f"compiled {len(work)} kernels in {time.perf_counter() - start:.0f}s; "
          f"{sum(1 for r in compiled.values() if not r['ok'])} failed", flush=True)
    for (i, m, k), r in list(compiled.items()):
        if m == "stock":
            compiled[(i, "stock_again", k)] = r
    try:
        import torch
    except ImportError:
        return [dict(case=c.name, modes={m: {k: compiled.get((i, m, k)) for k in kinds} for m in modes[i]})
                for i, c in enumerate(cases)], {}
    from triton.testing import do_bench
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grids = {"chain": sms * 4, "latency": sms, "independent": sms * 4}
    torch_type = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
    from harness.conversion_cases import ITERATIONS
    rows = []
    partial = None
    for i, case in enumerate(cases):
        if deadline is not None and time.perf_counter() - began > deadline:
            partial = f"{len(rows)} of {len(cases)} conversions timed before the {deadline:.0f} s deadline"
            print(f"deadline: {partial}", flush=True)
            break
        row_began = time.perf_counter()
        size = math.prod(case.shape)
        dtype = torch_type[case.bits]
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2 ** 30)), min(info.max, 2 ** 30), (size,), dtype=dtype, device="cuda")
        expect = {"chain": _wrap(x.to(torch.int64) + sum(range(CHAIN_ITERATIONS)), case.bits).to(dtype),
                  "independent": _wrap(x.to(torch.int64) * ITERATIONS + sum(range(ITERATIONS)), case.bits).to(dtype)}
        row = {"case": case.name, "family": case.origin, "src": case.src_resolved, "dst": case.dst_resolved,
               "shape": list(case.shape), "bits": case.bits, "num_warps": case.num_warps, "modes": {}}
        timers = {}          # (mode, context) -> a function timing that kernel once more (us)
        for mode, pipeline in modes[i].items():
            out = {}
            for kind in kinds_of(case):
                result = compiled.get((i, mode, kind), {"ok": False})
                if not result.get("ok"):
                    out[kind] = {"error": result.get("error", "not compiled")}
                    continue
                try:
                    kernel = _load(directory, i, "stock" if mode == "stock_again" else mode, pipeline, kind)
                    contexts = ("chain", "latency") if kind == "chain" else ("independent",)
                    for context in contexts:
                        grid = grids[context]
                        y = torch.full((grid * size,), -7, dtype=dtype, device="cuda")
                        kernel[(grid, 1, 1)](x, y)
                        torch.cuda.synchronize()
                        exact = bool(torch.equal(y.view(grid, size), expect[kind].expand(grid, size)))

                        def time_once(kernel=kernel, grid=grid, y=y):
                            return 1000 * do_bench(lambda: kernel[(grid, 1, 1)](x, y), warmup=5, rep=rep,
                                                   return_mode="median")
                        timers[(mode, context)] = time_once
                        out[context] = {"us": round(time_once(), 3), "exact": exact}
                    out[kind + "_mix"] = {k: v for k, v in result.items() if k in
                                          ("shfl", "ld_shared", "st_shared", "ldmatrix", "stmatrix", "bar")}
                except Exception as e:  # the GPU boundary: per mode
                    out[kind] = {"error": f"{type(e).__name__}: {e}"[:200]}
            row["modes"][mode] = out
        retime_outliers(row, timers)
        row["timing_s"] = round(time.perf_counter() - row_began, 2)
        rows.append(row)
        if checkpoint and len(rows) % 25 == 0:
            checkpoint(rows, {"gpu": torch.cuda.get_device_name(), "sms": sms, "grids": grids, "partial": True})
        s = row["modes"].get("stock", {}).get("chain", {}).get("us")
        o = row["modes"].get("ours", {}).get("chain", {}).get("us")
        print(f"[{i + 1}/{len(cases)}] {case.name}: stock {s} us, ours {o} us ({row['timing_s']} s)", flush=True)
    environment = {"gpu": torch.cuda.get_device_name(), "sms": sms, "grids": grids}
    if partial:
        environment["partial"] = partial
    return rows, environment


RETIMES = 2          # an outlier context is timed this many times more, every mode, and the median kept


def outlier_contexts(row) -> list[str]:
    """Contexts of a row where some mode is more than ``ABOVE`` away from stock either way (or
    stock from itself): one ``do_bench`` sample can be off by 2-4x on a kernel of tens of
    microseconds (a 3.9x ratio was measured on stock's own binary), so such a ratio is re-timed
    before it counts."""
    contexts = []
    for context in ("chain", "latency", "independent"):
        base = row["modes"].get("stock", {}).get(context, {}).get("us")
        if not base:
            continue
        ratios = [m[context]["us"] / base for name, m in row["modes"].items()
                  if name != "stock" and m.get(context, {}).get("us")]
        if any(r > ABOVE or r < 1 / ABOVE for r in ratios):
            contexts.append(context)
    return contexts


def retime_outliers(row, timers: dict) -> None:
    """Time every mode of each outlier context ``RETIMES`` more times, modes interleaved, and keep
    the median of all its samples (``samples`` keeps them, ``retimed`` says it happened)."""
    for context in outlier_contexts(row):
        samples = {mode: [out[context]["us"]] for mode, out in row["modes"].items()
                   if out.get(context, {}).get("us") and (mode, context) in timers}
        for _ in range(RETIMES):
            for mode in samples:
                samples[mode].append(round(timers[(mode, context)](), 3))
        for mode, values in samples.items():
            entry = row["modes"][mode][context]
            entry.update(us=sorted(values)[len(values) // 2], samples=values, retimed=True)


# --------------------------------------------------------------------------- judging

def worst_ratio(row, mode, base="stock"):
    """The mode's time over ``base``'s in its worst context (chain, latency), or None."""
    ratios = []
    for context in ("chain", "latency"):
        a = row["modes"].get(mode, {}).get(context, {}).get("us")
        b = row["modes"].get(base, {}).get(context, {}).get("us")
        if not a or not b:
            return None
        ratios.append(a / b)
    return max(ratios)


def summary(rows, mode="ours") -> dict:
    ratios = [(r["case"], worst_ratio(r, mode)) for r in rows]
    ratios = [(c, x) for c, x in ratios if x]
    noise = [x for x in (worst_ratio(r, "stock_again") for r in rows) if x]
    # the run's own noise: the same kernel timed twice, both directions of the ratio
    spread = sorted(max(x, 1 / x) for x in noise) if noise else [1.0]
    noise_p95 = spread[min(len(spread) - 1, int(0.95 * len(spread)))]
    above = [(c, x) for c, x in ratios if x > ABOVE]
    beyond = [(c, x) for c, x in above if x > ABOVE * noise_p95]
    exact = all(v.get("exact", True) for r in rows for m in r["modes"].values() for v in m.values()
                if isinstance(v, dict) and "exact" in v)
    # what a perfect gate over this mode's plans would give: each conversion at the better of
    # stock and the mode (the bound on any choice among the plans the mode timed)
    return {"mode": mode, "n": len(ratios), "geomean": geomean([x for _, x in ratios]),
            "perfect_gate": geomean([min(x, 1.0) for _, x in ratios]),
            "worst": max(ratios, key=lambda t: t[1]) if ratios else None,
            "above_1.05": len(above), "above_1.05_beyond_noise": len(beyond),
            "noise_p95": noise_p95, "bit_exact": exact, "above_cases": sorted(above, key=lambda t: -t[1])[:10]}


def best_of_every_pair(rows) -> dict:
    """What the best choice among today's plans reaches on rows timed with ``every_pair``: per
    conversion the one code (a pair of plans, ours, or stock's at 1.0) whose worse context is
    best, so a choice that must pick one code for both contexts; its geomean is the bound on any
    gate or model choosing among the plans the planner builds.  ``best`` names each row's pair.

    ``forward`` is the same over the pairs whose return trip is stock's (``pair<F>_s``, and
    ``ours_forward``): the bound for the direction the case's kernel converts.  The two differ
    where a pair gains only together: on Liger's neighborhood attention (64x64 i8) our plans of
    both directions, each slower than stock alone (1.08x, 1.10x), ran 0.79x as a pair, the bytes
    one plan loads going straight into the other's stores, which a kernel converting once never
    has."""
    def best_of(row, wanted):
        choices = [(1.0, "stock")] + [(x, mode) for mode in row["modes"] if wanted(mode)
                                      for x in [worst_ratio(row, mode)] if x]
        return (row["case"], *min(choices))
    best = [best_of(r, lambda m: m == "ours" or m.startswith("pair")) for r in rows]
    forward = [best_of(r, lambda m: m == "ours_forward" or (m.startswith("pair") and m.endswith("_s"))) for r in rows]

    def mean(items):
        return geomean([x for _, x, _ in items]) if items else None
    return {"n": len(best), "geomean": mean(best), "below_1": sum(x < 1.0 for _, x, _ in best), "best": best,
            "forward_geomean": mean(forward), "forward": forward,
            "pairs": sum(1 for r in rows for m in r["modes"] if m.startswith("pair"))}


def every_pair_lines(rows) -> list[str]:
    """The report's section on ``best_of_every_pair``; [] where no pair was timed."""
    b = best_of_every_pair(rows)
    if not b["pairs"]:
        return []
    forward = dict((case, (x, mode)) for case, x, mode in b["forward"])
    lines = ["", f"Every pair of today's plans ({b['pairs']} pairs of the forward and return trip's verified "
             f"candidates, stock's lowering of either direction among them): the best one code per conversion "
             f"(worse context) gives geomean **{b['geomean']:.3f}** x stock over {b['n']} conversions, "
             f"{b['below_1']} of them below 1.0. Over the pairs whose return trip is stock's (the direction "
             f"the kernel converts, alone): **{b['forward_geomean']:.3f}**. No choice among these plans does "
             "better; each best is the least of many timings, so it leans low by the run's noise.", "",
             "| conversion | best pair | pair | best, return trip stock's | pair |", "|---|---:|---|---:|---|"]
    lines += [f"| {case} | {x:.3f} | {mode} | {forward[case][0]:.3f} | {forward[case][1]} |"
              for case, x, mode in sorted(b["best"], key=lambda t: t[1])]
    return lines


def report_lines(rows, title, command, environment, modes=("ours", "ours_forward", "ours_asm", "ours_in_place", "ours_text",
                                                          "ours_stock_rounds", "ours_wide_rounds", "pick",
                                                          "ours_table")) -> list[str]:
    if environment.get("partial"):
        title += f" (PARTIAL: {environment['partial']})"
    lines = [f"# {title}", "", f"GPU: {environment.get('gpu')}; triton {environment.get('triton')}; "
             f"round trips A -> B -> A in a dependent chain ({CHAIN_ITERATIONS} per program), grid "
             f"{environment.get('grids', {}).get('chain')} programs (chain) and {environment.get('grids', {}).get('latency')} "
             "(latency); a ratio is the worse of the two contexts.", "", f"Produced by `{command}`.", "",
             "| mode | conversions | geomean ours/stock | with a perfect gate | worst | above 1.05 | "
             "above 1.05 beyond noise | bit-exact |",
             "|---|---:|---:|---:|---|---:|---:|---|"]
    for mode in modes:
        if not any(mode in r["modes"] for r in rows):
            continue
        s = summary(rows, mode)
        worst = f"{s['worst'][1]:.3f} ({s['worst'][0]})" if s["worst"] else "-"
        lines.append(f"| {mode} | {s['n']} | {s['geomean']:.3f} | {s['perfect_gate']:.3f} | {worst} | {s['above_1.05']} | "
                     f"{s['above_1.05_beyond_noise']} | {s['bit_exact']} |")
    s = summary(rows, "ours")
    direct = [x for x in (worst_ratio(r, "ours", "ours_asm") for r in rows) if x]
    if direct:   # --shared-asm: the LLVM form of shared accesses against the inline PTX, directly
        lines += ["", f"ours / ours_asm (LLVM-form shared accesses over inline PTX, worse context): "
                  f"{len(direct)} conversions, geomean {geomean(direct):.3f}, best {min(direct):.3f}, "
                  f"worst {max(direct):.3f}, above 1.05: {sum(x > 1.05 for x in direct)}."]
    built = [r for r in rows if (r["modes"].get("ours_in_place", {}).get("chain_mix") or {})
             != (r["modes"].get("ours", {}).get("chain_mix") or {})]
    placed = [x for x in (worst_ratio(r, "ours_in_place", "ours") for r in rows) if x]
    if placed:   # --in-place: the islands built in Triton's module against the text splice, directly
        lines += ["", f"ours_in_place / ours (one-round shared plans built in place over the spliced islands, "
                  f"worse context): {len(placed)} conversions, geomean {geomean(placed):.3f}, best {min(placed):.3f}, "
                  f"worst {max(placed):.3f}, above 1.05: {sum(x > 1.05 for x in placed)}; "
                  f"{len(built)} with another instruction mix than ours."]
    spliced = [x for x in (worst_ratio(r, "ours", "ours_text") for r in rows) if x]
    if spliced:  # --text: the default (shared plans built in place) against every island spliced as text
        lines += ["", f"ours / ours_text (the default's islands, one-round shared plans built in place, over every "
                  f"island spliced as text, worse context): {len(spliced)} conversions, geomean {geomean(spliced):.3f}, "
                  f"best {min(spliced):.3f}, worst {max(spliced):.3f}, above 1.05: {sum(x > 1.05 for x in spliced)}."]
    from linear_layouts.lowering.planner import DEFAULT_ROUND_SCRATCH
    default_kb, wide_kb = DEFAULT_ROUND_SCRATCH // 1024, WIDE_ROUND_SCRATCH // 1024
    for other, what in (("ours_stock_rounds", f"the default's fewer rounds (buffers up to {default_kb} KB) over Triton's rounds"),
                        ("ours_wide_rounds", f"buffers up to {wide_kb} KB over the default's {default_kb} KB")):
        lines += mix_comparison(rows, "ours" if other == "ours_stock_rounds" else other,
                                other if other == "ours_stock_rounds" else "ours", what)
    lines += every_pair_lines(rows)
    lines += ["", f"Noise (stock timed twice, worse context): 95th percentile {s['noise_p95']:.3f}.", "",
              "Per family (mode ours):", "", "| family | n | geomean | worst |", "|---|---:|---:|---:|"]
    families = sorted({r["family"] for r in rows})
    for fam in families:
        xs = [worst_ratio(r, "ours") for r in rows if r["family"] == fam]
        xs = [x for x in xs if x]
        if xs:
            lines.append(f"| {fam} | {len(xs)} | {geomean(xs):.3f} | {max(xs):.3f} |")
    if s["above_cases"]:
        lines += ["", "Above 1.05 (ours/stock, worse context):", ""]
        lines += [f"* {c}: {x:.3f}" for c, x in s["above_cases"]]
    return lines


def mix_comparison(rows, mode: str, base: str, what: str) -> list[str]:
    """A report's lines comparing ``mode`` with ``base`` directly (worse context), on the
    conversions whose chain's instruction mix differs between the two (elsewhere both run the
    same code); [] where neither differs or ``mode`` was not timed."""
    differ = [r for r in rows if mode in r["modes"] and base in r["modes"]
              and (r["modes"][mode].get("chain_mix") or {}) != (r["modes"][base].get("chain_mix") or {})]
    ratios = [x for x in (worst_ratio(r, mode, base) for r in differ) if x]
    if not ratios:
        return []
    over_stock = [x for x in (worst_ratio(r, mode) for r in differ) if x]
    base_over_stock = [x for x in (worst_ratio(r, base) for r in differ) if x]
    return ["", f"{mode} / {base} ({what}; worse context) on the {len(ratios)} conversions whose instruction mix "
                f"differs: geomean {geomean(ratios):.3f}, best {min(ratios):.3f}, worst {max(ratios):.3f}, above 1.05: "
                f"{sum(x > 1.05 for x in ratios)}; over stock there {geomean(over_stock):.3f} ({mode}) against "
                f"{geomean(base_over_stock):.3f} ({base})."]


def held_out_cases(liger: bool, fla: bool) -> list:
    """The timeable conversions (``usable``) of the held-out libraries asked for: Liger-Kernel's
    (``--held-out-kernels``) and flash-linear-attention's (``--fla-kernels``); a conversion both
    hold (two of fla's are also Liger's) is timed once, under Liger's name."""
    from harness.conversion_cases import held_out_kernel_cases
    cases, seen = [], set()
    for library, wanted in (("liger_kernel", liger), ("fla", fla)):
        for case in held_out_kernel_cases(library) if wanted else ():
            if case.key not in seen and usable(case.src_resolved, case.dst_resolved, case.shape, case.bits):
                seen.add(case.key)
                cases.append(case)
    return cases


def main_fresh(args, argv) -> int:
    require_package()
    from harness.conversion_cases import corpus_cases
    cases = []
    for seed in args.fresh:
        cases += fresh_cases(seed, args.count, tuple(getattr(args, "registers", None) or DRAWN_REGISTERS))
    if args.corpus:
        cases += [c for c in corpus_cases() if usable(c.src_resolved, c.dst_resolved, c.shape, c.bits)]
    cases += held_out_cases(liger=getattr(args, "held_out_kernels", False), fla=getattr(args, "fla_kernels", False))
    if args.first_pairs:
        cases = first_pairs() + cases
    if getattr(args, "replicated_round_trips", False):
        cases = [replicated_round_trips_pair()] + cases
    for seed in getattr(args, "structured", None) or ():
        cases += structured_cases(seed, args.structured_count)
    if args.match:
        cases = [c for c in cases if any(text in c.name for text in args.match)]
    if args.limit:
        cases = cases[:args.limit]
    print(f"{len(cases)} conversions", flush=True)
    import triton
    os.makedirs(args.out, exist_ok=True)
    stem = args.stem or ("plan_train" if args.train else "plan_fresh_" + "_".join(map(str, args.fresh)))

    def save(rows, environment):
        environment = {**environment, "triton": triton.__version__, "seeds": args.fresh}
        with open(os.path.join(args.out, stem + ".json"), "w") as f:
            json.dump({"environment": environment, "rows": rows}, f, separators=(",", ":"))
        return environment
    rows, environment = measure(cases, train=args.train, table=args.table, independent=args.independent,
                                jobs=args.jobs, rep=args.rep, checkpoint=save, pick=not args.no_pick,
                                deadline=args.deadline, shared_asm=getattr(args, "shared_asm", False),
                                in_place=getattr(args, "in_place", False), text=getattr(args, "text", False),
                                rounds=getattr(args, "round_modes", False), usage=getattr(args, "ptxas_usage", False),
                                every_pair=getattr(args, "every_pair", False), own_direction=getattr(args, "forward", False))
    environment = save(rows, environment)
    if environment.get("gpu"):
        lines = report_lines(rows, "Fresh conversions: stock and ours side by side", "python benchmarks/plan_choice.py "
                             + " ".join(argv), environment)
        with open(os.path.join(args.out, stem + ".md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines[:20]))
    return 0


# The largest layouts ``structured_cases`` draws: the islands' limit (``island_limits``), above
# which every conversion is stock's whatever the choice.
STRUCTURED_MAX_REGISTERS = 1024
# The timed kernel stages the whole tensor through shared memory; above this many bytes it does
# not fit an H100's 227 KB with the conversion's own buffer (stock fails with OutOfResources).
STRUCTURED_MAX_TENSOR_BYTES = 128 * 1024


def structured_cases(seed: int, count: int) -> list[Case]:
    """``count`` large-register conversions drawn from ``seed`` as the compile-time fuzz draws
    them (``harness.compile_time_fuzz.structured_case``, sm_90): a source holding 256 to 1,024
    registers a thread (a slice whose lanes, or lanes and warps, hold the same data, or a blocked
    layout repeated over a larger tensor) to a destination built from its own bases.  Kernels
    of this size spill; they are timed to see what the choice does where they do."""
    from harness.compile_time_fuzz import structured_case
    from harness.conversion_cases import ELEMENT_WIDTH
    from linear_layouts.dialect.encodings import to_linear_layout
    rng = random.Random(seed)
    cases, seen, attempts = [], set(), 0
    while len(cases) < count and attempts < 50 * count:
        attempts += 1
        case = structured_case(rng, "sm_90")
        shape, bits = tuple(case["shape"]), ELEMENT_WIDTH[case["element"]]
        key = (case["src"], case["dst"], shape, bits, case["num_warps"])
        if math.prod(shape) * bits // 8 > STRUCTURED_MAX_TENSOR_BYTES or key in seen:
            continue
        if not usable(case["src"], case["dst"], shape, bits, STRUCTURED_MAX_REGISTERS):
            continue
        seen.add(key)
        registers = to_linear_layout(case["src"], shape).in_dim_size("register")
        kind = case["kind"].replace("/", "-")
        cases.append(Case(f"structured{seed}/{len(cases)}:{kind}:{registers}r:i{bits}:w{case['num_warps']}", "",
                          case["src"], case["dst"], shape, bits, case["num_warps"], f"structured:{kind}"))
    return cases


def replicated_round_trips_pair() -> Case:
    """The round-trip case (bf16, 8,192 elements, 8 warps: a slice of a blocked parent to a linear
    layout whose lanes pick different subsets of the replicated registers), the layouts of
    ``harness.compile_time_fuzz.replicated_round_trips_case``."""
    from harness.compile_time_fuzz import replicated_round_trips_case
    case = replicated_round_trips_case()
    return Case("replicated_round_trips/8192:i16:w8", "", case["src"], case["dst"], tuple(case["shape"]), 16,
                case["num_warps"], "replicated_round_trips")


# The first pairs the contexts were built on: three that win independent and lose in a dependent
# chain (64x128 f16 spt 8 <-> 4; 64 f32 one warp spt 2 -> 1; 1024 f16 spt 8 -> 4).
def first_pairs() -> list[Case]:
    b = _blocked
    return [Case("first_pairs/64x128:i16:spt8-spt4", "", b([1, 8], [4, 8], [4, 1], [1, 0]),
                 b([1, 4], [4, 8], [4, 1], [1, 0]), (64, 128), 16, 4, "first_pairs"),
            Case("first_pairs/64:i32:w1:spt2-spt1", "", b([2], [32], [1], [0]), b([1], [32], [1], [0]), (64,), 32, 1,
                 "first_pairs"),
            Case("first_pairs/1024:i16:spt8-spt4", "", b([8], [32], [4], [0]), b([4], [32], [4], [0]), (1024,), 16, 4,
                 "first_pairs")]


if __name__ == "__main__":
    sys.exit(0)
