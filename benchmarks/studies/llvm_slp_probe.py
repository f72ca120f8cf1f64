"""Which part of a module makes LLVM's SLP vectorizer slow: O3 timed on edited copies of it.

    python benchmarks/studies/llvm_slp_probe.py --seed 1 --index 4      # triton 3.9: compile_time_fuzz's case 4
    python benchmarks/studies/llvm_slp_probe.py --seed 1 --index 4 --repeats 3 --keep /tmp/probe

The case (same seed and index as ``benchmarks/compile_time.py fuzz` (`benchmarks/harness/compile_time_fuzz.py`)`, so the same kernel) is
compiled once by stock Triton and once with ``linear_layouts.enable()`` (stock gate off), and
each time the LLVM-dialect module that Triton's ``make_llir`` hands to ``llvm.to_module`` is
kept (the plugin with its shared-access limit lifted: this case is one it hands back).  Then ``llvm.optimize_module`` (O3, Triton's flags) is timed on each kept module and on
probes, edits of the module with the plugin's islands, each answering one question:

* ``loads-one-address``: every global load (Triton's, before the island) reads ``%arg0``: the
  load side's address arithmetic becomes dead;
* ``stores-one-address``: the same for the global stores after the island;
* ``shared-stores-constant``: the island stores the constant 0, not the loaded values (the
  data flow from the global loads into the island is cut);
* ``global-stores-constant``: the global stores store 0 (the flow out of the island is cut);
* ``island-loads-pure``: the island's ``ld.shared`` asm without ``has_side_effects`` (no longer
  a memory access for LLVM);
* ``barrier-after-global-loads``, ``barrier-after-shared-stores``: a ``bar.sync`` after each;
* ``island-tid-intrinsic``: the island's ``%tid.x`` asm read as Triton's own intrinsic;
* ``loads-one-address-first-half``, ``-second-half``, ``-three-quarters``: the first probe on
  part of the loads only;
* ``island-native-shared``: the island's ``st.shared.v4``/``ld.shared.v4`` asm as ``llvm.store`` /
  ``llvm.load`` of a ``vector<4xi32>`` through a ``getelementptr`` from the island's scratch
  base, the form stock's module reads its shared memory in (hypothesis: opaque asm accesses
  make SLP's dependency graph costly);
* ``island-memory-removed``: the island without its shared stores, loads (their results
  ``undef``) and barriers: what is left is Triton's own loads and stores;

and edits of stock's module:

* ``stock-conversion-removed``: stock's ``nvvm.stmatrix``, shared loads (results ``undef``) and
  barriers removed, the counterpart of ``island-memory-removed``;
* ``stock-no-stmatrix``, ``stock-shared-loads-undef``: one half of stock's conversion removed;
* ``stock-stmatrix-only``: stock's ``stmatrix`` stores alone (shared loads ``undef``, no barriers),
  and the same stores ``-at-base`` (every one at the scratch base: stock's address arithmetic
  dead) or at a ``-fresh-tid-address`` (computed from a thread id read apart from Triton's).

Modules are optimized interleaved (stock, ours, each probe, again), ``--repeats`` rounds; the
median and fastest of each are printed, with the edit count (0: the probe did not apply).
Probes change what the kernel computes: they are for timing only, never run.  sm_* targets.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
import types

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
from harness.checkout import make_package_importable  # noqa: E402

make_package_importable()

_GLOBAL_LOAD = re.compile(r'("mov\.u32 \$0, 0x0;\\0A\\09ld\.global\.b32 \{ \$0 \}, \[ \$1 \+ 0 \];", "=r,l") %\w+')
_GLOBAL_STORE = re.compile(r'("st\.global\.b32 \[ \$1 \+ 0 \], \{ \$0 \};", "r,l" %\w+), %\w+')
_GLOBAL_STORE_VALUE = re.compile(r'("st\.global\.b32 \[ \$1 \+ 0 \], \{ \$0 \};", "r,l") %\w+,')
_SHARED_STORE = re.compile(r'("st\.shared\.v4\.b32 \[\$0\], \{\$1, \$2, \$3, \$4\};", "r,r,r,r,r" %\w+)(?:, %\w+){4}')
_CONSTANT_ZERO = re.compile(r"^\s+(%\w+) = llvm\.mlir\.constant\(0 : (?:i32|index)\) : i32", re.M)


# The island's 128-bit shared accesses (``emit_nvidia.NvidiaInstructions.store`` / ``load``).
_SHARED_STORE_V4 = re.compile(
    r'^(\s*)llvm\.inline_asm has_side_effects asm_dialect = att "st\.shared\.v4\.b32 \[\$0\], \{\$1, \$2, \$3, \$4\};", '
    r'"r,r,r,r,r" (%\w+), (%\w+), (%\w+), (%\w+), (%\w+) : \([^)]*\) -> \(\)', re.M)
_SHARED_LOAD_V4 = re.compile(
    r'^(\s*)(%\w+) = llvm\.inline_asm has_side_effects asm_dialect = att "ld\.shared\.v4\.b32 \{\$0, \$1, \$2, \$3\}, '
    r'\[\$4\];", "=r,=r,=r,=r,r" (%\w+) : \(i32\) -> !llvm\.struct<\(i32, i32, i32, i32\)>', re.M)
_ISLAND_SHARED_BASE = re.compile(r"^\s*(%\w+) = llvm\.ptrtoint (%\w+) : !llvm\.ptr<3> to i32", re.M)
_ANY_SHARED_STORE = re.compile(r'^\s*llvm\.inline_asm has_side_effects asm_dialect = att "st\.shared[^\n]*\n', re.M)
_ANY_SHARED_LOAD = re.compile(
    r'^(\s*%\w+ = )llvm\.inline_asm has_side_effects asm_dialect = att "ld\.shared[^"]*", "[^"]*" %\w+ : '
    r'\(i32\) -> (!llvm\.struct<[^>]*>)', re.M)
_ISLAND_BARRIER = re.compile(r'^\s*llvm\.inline_asm has_side_effects asm_dialect = att "bar\.sync 0;"[^\n]*\n', re.M)
# Stock's shared-memory round trip (triton 3.9, this case): stmatrix stores, vector loads, barriers.
_STOCK_STMATRIX = re.compile(r"^\s*nvvm\.stmatrix [^\n]*\n", re.M)
_STOCK_SHARED_LOAD = re.compile(
    r"^(\s*%\w+ = )llvm\.load %\w+ \{alignment = 16 : i64\} : !llvm\.ptr<3> -> (vector<4xi32>)", re.M)
_STOCK_BARRIER = re.compile(r"^\s*nvvm\.barrier0?\b[^\n]*\n", re.M)


_BARRIER = '    llvm.inline_asm has_side_effects asm_dialect = att "bar.sync 0;", ""  : () -> ()'
_TID_ASM = 'llvm.inline_asm asm_dialect = att "mov.u32 $0, %tid.x;", "=r"  : () -> i32'


def _loads_one_address(ours: str, collapsed) -> tuple[str, int]:
    """The global loads whose number ``collapsed(k, total)`` accepts read ``%arg0``."""
    total, seen = len(_GLOBAL_LOAD.findall(ours)), [0]

    def edit(m: re.Match) -> str:
        k, seen[0] = seen[0], seen[0] + 1
        return m.group(1) + " %arg0" if collapsed(k, total) else m.group(0)
    text = _GLOBAL_LOAD.sub(edit, ours)
    return text, sum(collapsed(k, total) for k in range(total))


def _barrier_after(ours: str, marker: str) -> tuple[str, int]:
    lines, edits = [], 0
    for line in ours.split("\n"):
        lines.append(line)
        if marker in line:
            lines.append(_BARRIER)
            edits += 1
    return "\n".join(lines), edits


def _native_shared_accesses(ours: str) -> tuple[str, int]:
    """The island's 128-bit ``st.shared``/``ld.shared`` asm as LLVM's own ``llvm.store`` /
    ``llvm.load`` of ``vector<4xi32>``, at the same addresses: ``getelementptr`` from the
    scratch base by the island's byte offset (its 32-bit address minus the base's, which LLVM
    folds back into the offset), as stock's module addresses its scratch."""
    base = _ISLAND_SHARED_BASE.search(ours)
    if not base:
        return ours, 0
    base_address, base_pointer = base.group(1), base.group(2)
    names = iter(range(1 << 30))
    vector, struct = "vector<4xi32>", "!llvm.struct<(i32, i32, i32, i32)>"

    def pointer(indent: str, address: str, lines: list[str]) -> str:
        k = next(names)
        lines.append(f"{indent}%probe_off{k} = llvm.sub {address}, {base_address} : i32")
        lines.append(f"{indent}%probe_ptr{k} = llvm.getelementptr inbounds {base_pointer}[%probe_off{k}] : "
                     f"(!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8")
        return f"%probe_ptr{k}"

    def constant(indent: str, i: int, lines: list[str]) -> str:
        name = f"%probe_c{next(names)}"
        lines.append(f"{indent}{name} = llvm.mlir.constant({i} : i32) : i32")
        return name

    def store(m: re.Match) -> str:
        indent, address, words, lines = m.group(1), m.group(2), m.group(3, 4, 5, 6), []
        value = f"%probe_v{next(names)}"
        lines.append(f"{indent}{value} = llvm.mlir.undef : {vector}")
        for i, word in enumerate(words):
            index, value_before = constant(indent, i, lines), value
            value = f"%probe_v{next(names)}"
            lines.append(f"{indent}{value} = llvm.insertelement {word}, {value_before}[{index} : i32] : {vector}")
        lines.append(f"{indent}llvm.store {value}, {pointer(indent, address, lines)} {{alignment = 16 : i64}} : "
                     f"{vector}, !llvm.ptr<3>")
        return "\n".join(lines)

    def load(m: re.Match) -> str:
        indent, result, address, lines = m.group(1), m.group(2), m.group(3), []
        loaded = f"%probe_v{next(names)}"
        lines.append(f"{indent}{loaded} = llvm.load {pointer(indent, address, lines)} {{alignment = 16 : i64}} : "
                     f"!llvm.ptr<3> -> {vector}")
        packed = f"%probe_s{next(names)}"
        lines.append(f"{indent}{packed} = llvm.mlir.undef : {struct}")
        for i in range(4):    # the asm's struct result, rebuilt under its own name for its users
            element = f"%probe_e{next(names)}"
            lines.append(f"{indent}{element} = llvm.extractelement {loaded}[{constant(indent, i, lines)} : i32] : "
                         f"{vector}")
            packed_before, packed = packed, result if i == 3 else f"%probe_s{next(names)}"
            lines.append(f"{indent}{packed} = llvm.insertvalue {element}, {packed_before}[{i}] : {struct}")
        return "\n".join(lines)

    text, stores = _SHARED_STORE_V4.subn(store, ours)
    text, loads = _SHARED_LOAD_V4.subn(load, text)
    return text, stores + loads


def _island_memory_removed(ours: str) -> tuple[str, int]:
    text, stores = _ANY_SHARED_STORE.subn("", ours)
    text, loads = _ANY_SHARED_LOAD.subn(r"\1llvm.mlir.undef : \2", text)
    text, barriers = _ISLAND_BARRIER.subn("", text)
    return text, stores + loads + barriers


def stock_probes(stock: str) -> dict[str, tuple[str, int]]:
    """Edited copies of stock's module: name -> (text, edits made)."""
    no_stmatrix, stmatrix = _STOCK_STMATRIX.subn("", stock)
    loads_undef, loads = _STOCK_SHARED_LOAD.subn(r"\1llvm.mlir.undef : \2", stock)
    removed, _ = _STOCK_SHARED_LOAD.subn(r"\1llvm.mlir.undef : \2", no_stmatrix)
    removed, barriers = _STOCK_BARRIER.subn("", removed)
    # Stock's stmatrix stores alone (its shared loads undef, its barriers gone), then the same
    # stores at other addresses: all at the scratch base (stock's address arithmetic dead), or at
    # one computed from a thread id read apart from Triton's (its arithmetic shares nothing with
    # the global accesses' address graphs).
    stmatrix_only, _ = _STOCK_BARRIER.subn("", loads_undef)
    smem = re.search(r"(%\w+) = llvm\.mlir\.addressof @global_smem", stock)
    at_base, moved = re.subn(r"nvvm\.stmatrix %\w+,", f"nvvm.stmatrix {smem.group(1)},", stmatrix_only) if smem \
        else (stmatrix_only, 0)
    names = iter(range(1 << 30))

    def fresh_address(m: re.Match) -> str:
        k = next(names)
        return (f"%fresh_tid{k} = {_TID_ASM}\n"
                f"    %fresh_seven{k} = llvm.mlir.constant(7 : i32) : i32\n"
                f"    %fresh_four{k} = llvm.mlir.constant(4 : i32) : i32\n"
                f"    %fresh_row{k} = llvm.and %fresh_tid{k}, %fresh_seven{k} : i32\n"
                f"    %fresh_offset{k} = llvm.shl %fresh_row{k}, %fresh_four{k} : i32\n"
                f"    %fresh_ptr{k} = llvm.getelementptr inbounds {smem.group(1)}[%fresh_offset{k}] : "
                f"(!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8\n"
                f"    nvvm.stmatrix %fresh_ptr{k},")
    fresh, refreshed = re.subn(r"nvvm\.stmatrix %\w+,", fresh_address, stmatrix_only) if smem \
        else (stmatrix_only, 0)
    return {"stock-conversion-removed": (removed, stmatrix + loads + barriers),
            "stock-no-stmatrix": (no_stmatrix, stmatrix),
            "stock-shared-loads-undef": (loads_undef, loads),
            "stock-stmatrix-only": (stmatrix_only, loads + barriers),
            "stock-stmatrix-only-at-base": (at_base, moved),
            "stock-stmatrix-only-fresh-tid-address": (fresh, refreshed)}


def probes(ours: str) -> dict[str, tuple[str, int]]:
    """The edited copies of the module with islands: name -> (text, edits made)."""
    zero = _CONSTANT_ZERO.search(ours)
    zero = zero.group(1) if zero else None
    edits = {
        "loads-one-address": _GLOBAL_LOAD.subn(r"\1 %arg0", ours),
        "stores-one-address": _GLOBAL_STORE.subn(r"\1, %arg1", ours),
        "island-loads-pure": re.subn(r'has_side_effects (asm_dialect = att "ld\.shared)', r"\1", ours),
        "barrier-after-global-loads": _barrier_after(ours, '"mov.u32 $0, 0x0;\\0A\\09ld.global'),
        "barrier-after-shared-stores": _barrier_after(ours, '"st.shared'),
        "island-tid-intrinsic": (ours.replace(_TID_ASM, "nvvm.read.ptx.sreg.tid.x : i32"), ours.count(_TID_ASM)),
        "loads-one-address-first-half": _loads_one_address(ours, lambda k, n: k < n // 2),
        "loads-one-address-second-half": _loads_one_address(ours, lambda k, n: k >= n // 2),
        "loads-one-address-three-quarters": _loads_one_address(ours, lambda k, n: k >= n // 4),
        "island-native-shared": _native_shared_accesses(ours),
        "island-memory-removed": _island_memory_removed(ours),
    }
    if zero:
        edits["shared-stores-constant"] = _SHARED_STORE.subn(rf"\1, {zero}, {zero}, {zero}, {zero}", ours)
        edits["global-stores-constant"] = _GLOBAL_STORE_VALUE.subn(rf"\1 {zero},", ours)
    return edits


def capture(path: str, target: str) -> dict[str, str]:
    """The LLVM-dialect module of ``path`` as Triton hands it to LLVM, stock and ours."""
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["LINEAR_LAYOUTS_CACHE"] = "off"
    os.environ["LINEAR_LAYOUTS_STOCK_GATE"] = "off"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    import triton.backends.nvidia.compiler as nvidia

    import linear_layouts
    from linear_layouts.lowering.target import target_named
    real, kept = nvidia.llvm, {}

    def to_module(module, context, *args):
        kept["text"] = module.str()
        return real.to_module(module, context, *args)

    shim = types.SimpleNamespace(**{n: getattr(real, n) for n in dir(real) if not n.startswith("__")})
    shim.to_module = to_module
    nvidia.llvm = shim
    modules = {}
    try:
        for mode in ("stock", "ours"):
            with (linear_layouts.enabled() if mode == "ours" else _nothing()), shared_access_limit_lifted():
                triton.compile(path, target=target_named(target).gpu_target())
            modules[mode] = kept.pop("text")
    finally:
        nvidia.llvm = real
    return modules


@contextlib.contextmanager
def shared_access_limit_lifted():
    """The plugin without ``MAX_SHARED_ACCESSES_PER_THREAD``: the islands these probes study are
    the ones that limit now hands back to Triton (passes/lower_conversions.py)."""
    from linear_layouts.passes import lower_conversions
    since = lower_conversions.SHARED_ACCESS_LIMIT_SINCE
    lower_conversions.SHARED_ACCESS_LIMIT_SINCE = (99, 0)
    try:
        yield
    finally:
        lower_conversions.SHARED_ACCESS_LIMIT_SINCE = since


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def optimize_seconds(text: str, directory: str, arch: str) -> float:
    """Seconds of Triton's O3 (``llvm.optimize_module``) on LLVM-dialect module text."""
    from triton._C.libtriton import ir, llvm, nvidia

    path = os.path.join(directory, "probe.mlir")
    with open(path, "w") as f:
        f.write(text)
    context = ir.context()
    ir.load_dialects(context)
    nvidia.load_dialects(context)
    llvm.init_targets()
    module = ir.parse_mlir_module(path, context)
    module.context = context
    llvm_module = llvm.to_module(module, llvm.context())
    # As each release's make_llir calls them: 3.9 passes its LLVM flags to both, 3.6 to neither.
    if "expand_masked_div_rem" in (llvm.optimize_module.__doc__ or ""):
        flags = ["nvptx-mad-wide-opt", "nvptx-short-ptr"]
        llvm.attach_datalayout(llvm_module, "nvptx64-nvidia-cuda", arch, "+ptx86", flags)
        start = time.perf_counter()
        llvm.optimize_module(llvm_module, llvm.OPTIMIZE_O3, flags=flags, expand_masked_div_rem=True)
    else:
        llvm.attach_datalayout(llvm_module, "nvptx64-nvidia-cuda", arch, "+ptx86")
        start = time.perf_counter()
        llvm.optimize_module(llvm_module, llvm.OPTIMIZE_O3)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--index", type=int, default=4, help="the case's number in compile_time_fuzz's run")
    parser.add_argument("--cases", type=int, default=8, help="compile_time_fuzz's --cases of that run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", help="a folder to write the stock, ours and probe modules to")
    parser.add_argument("--only", nargs="+", help="time these probes only (and stock and ours)")
    args = parser.parse_args(argv)
    from harness import compile_time_fuzz as fuzz
    case = fuzz.drawn_case(args.seed, args.cases, args.index)
    if not case["target"].startswith("sm_"):
        print(f"case {args.index} is for {case['target']}: this probe times the NVIDIA backend only")
        return 1
    directory = args.keep or tempfile.mkdtemp(prefix="ll_slp_probe_")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "case.ttgir")
    with open(path, "w") as f:
        f.write(fuzz.case_text(case))
    print(f"{case['target']} {case['kind']} {case['element']} {case['shape']}: {case['src']} -> {case['dst']}")
    captured = capture(path, case["target"])
    modules = {"stock": (captured["stock"], 0), "ours": (captured["ours"], 0), **probes(captured["ours"]),
               **stock_probes(captured["stock"])}
    if args.only:
        modules = {name: module for name, module in modules.items() if name in ("stock", "ours", *args.only)}
    if args.keep:
        for name, (text, _) in modules.items():
            with open(os.path.join(directory, f"{name}.mlir"), "w") as f:
                f.write(text)
    arch = "sm_" + case["target"].split("_")[1] + ("a" if case["target"] == "sm_90" else "")
    seconds = {name: [] for name in modules}
    for _ in range(args.repeats):
        for name, (text, _) in modules.items():
            seconds[name].append(optimize_seconds(text, directory, arch))
    for name, (text, edits) in modules.items():
        runs = seconds[name]
        made = "" if name in ("stock", "ours") else f" ({edits} edits)"
        print(f"{name:24s} optimize_module median {statistics.median(runs):.3f} s, fastest {min(runs):.3f} s{made}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
