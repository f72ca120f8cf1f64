"""The conversions the choice harnesses time, and the kernel that times one.

A ``Case`` is one ``ttg.convert_layout`` (source and destination layout, shape, element width,
warps) seen in a real kernel: every convert of the sm_90 and sm_80 TTGIR corpus
(``corpus_cases``, each at 8, 16, 32 and 64 bits, plus a few synthetic ones), or of
a third-party library's sm_90 files (``held_out_kernel_cases``: Liger-Kernel's or
flash-linear-attention's, never used to fit anything).
``kernel_ttgir`` writes the kernel ``conversions.py`` times (the convert run ``ITERATIONS`` times
in a loop, data staged through shared memory in a plain blocked layout; that script's docstring
draws it); ``plan_choice.py`` (``kernels`` too) and ``plan_contexts`` build on the same cases,
and ``_wrap`` is the exact result every one of them checks (integers of the element's width).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "test", "lit", "corpus")
ITERATIONS = 1024
WIDTHS = (8, 16, 32, 64)
INT_TYPE = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}
ELEMENT_WIDTH = {"i1": 8, "i8": 8, "f8E4M3FN": 8, "f8E5M2": 8, "i16": 16, "f16": 16, "bf16": 16,
                 "i32": 32, "f32": 32, "i64": 64, "f64": 64}


@dataclass(frozen=True)
class Case:
    name: str
    aliases: str          # the `#name = ...` lines the layouts need
    src: str              # source encoding (an alias or inline attribute)
    dst: str
    shape: tuple
    bits: int
    num_warps: int
    origin: str           # corpus file it came from

    @property
    def key(self):
        return (self.src_resolved, self.dst_resolved, self.shape, self.bits, self.num_warps)

    @property
    def src_resolved(self):
        return _resolve(self.src, self.aliases)

    @property
    def dst_resolved(self):
        return _resolve(self.dst, self.aliases)


def _resolve(encoding: str, aliases: str) -> str:
    """Inline every alias in ``encoding`` (for de-duplication across files)."""
    table = dict(re.findall(r"^(#[\w.$-]+) = (.*)$", aliases, re.M))
    previous = None
    while previous != encoding:
        previous = encoding
        encoding = re.sub(r"#[\w$-]+\b(?![.<])", lambda m: table.get(m.group(0), m.group(0)), encoding)
    return encoding


_CONVERT = re.compile(r"ttg\.convert_layout %\S+ : tensor<([^,]+), (.+)> -> tensor<[^,]+, (.+)>( loc\(.*\))?$")


def _split_type(dims_and_type: str):
    parts = dims_and_type.split("x")
    return tuple(int(p) for p in parts[:-1]), parts[-1]


def converts_in(text: str, origin: str) -> list[tuple[int, Case]]:
    """Every ``ttg.convert_layout`` of a TTGIR module as (line number, Case at the element's
    own width), named ``origin#line``."""
    aliases = "\n".join(line for line in text.splitlines() if re.match(r"^#[\w$-]+ = #ttg\.", line))
    warps = int(re.search(r'"ttg.num-warps" = (\d+)', text).group(1))
    out = []
    for line_number, line in enumerate(text.splitlines(), 1):
        m = _CONVERT.search(line.strip())
        if not m:
            continue
        shape, element = _split_type(m.group(1))
        src, dst = m.group(2), m.group(3).rstrip(">") if m.group(3).count("<") < m.group(3).count(">") else m.group(3)
        bits = ELEMENT_WIDTH.get(element, 32)
        name = f"{origin}#{line_number}:{'x'.join(map(str, shape))}:i{bits}"
        out.append((line_number, Case(name, aliases, src, dst, shape, bits, warps, origin)))
    return out


def corpus_cases() -> list[Case]:
    cases: dict = {}
    for target in ("cuda90", "cuda80"):
        folder = os.path.join(CORPUS, target)
        if not os.path.isdir(folder):
            continue
        for file in sorted(os.listdir(folder)):
            text = open(os.path.join(folder, file)).read()
            for line_number, found in converts_in(text, f"{target}/{file}"):
                base_bits = found.bits
                for bits in WIDTHS:
                    if bits == base_bits or (bits in (16, 8) and base_bits == 32):
                        name = (f"{target}/{file.removesuffix('.ttgir')}#{line_number}:"
                                f"{'x'.join(map(str, found.shape))}:i{bits}")
                        case = Case(name, found.aliases, found.src, found.dst, found.shape, bits, found.num_warps,
                                    f"{target}/{file}")
                        cases.setdefault(case.key, case)
    return list(cases.values()) + synthetic_cases()


# The third-party TTGIR folders of ``test/lit/corpus`` whose conversions no choice was fitted on,
# and the short name a case of each carries.
HELD_OUT_LIBRARIES = {"liger_kernel": "liger", "fla": "fla"}


def held_out_kernel_cases(library: str = "liger_kernel") -> list[Case]:
    """Every distinct conversion of a third-party library's sm_90 kernels
    (``test/lit/corpus/<library>/*.cuda90.ttgir``: Liger-Kernel's, or flash-linear-attention's
    with ``library="fla"``), at its own element width: real-kernel conversions that no
    measurement the choice model, its rules or the measured table was fitted on came from (those
    used ``corpus_cases`` and fresh draws).  A case is named
    ``<short>/<file>#<line>:<shape>:i<bits>``, e.g. ``fla/chunk_gla_fwd_o_bf16#95:64x64:i16``."""
    short = HELD_OUT_LIBRARIES[library]
    cases: dict = {}
    folder = os.path.join(CORPUS, library)
    for file in sorted(f for f in os.listdir(folder) if f.endswith(".cuda90.ttgir")):
        text = open(os.path.join(folder, file)).read()
        for line_number, found in converts_in(text, f"{library}/{file}"):
            name = f"{short}/{file.removesuffix('.cuda90.ttgir')}#{line_number}:{'x'.join(map(str, found.shape))}:i{found.bits}"
            case = Case(name, found.aliases, found.src, found.dst, found.shape, found.bits, found.num_warps,
                        f"{library}/{file}")
            cases.setdefault(case.key, case)
    return list(cases.values())


# Conversions that stay inside a warp (the corpus's sm_90 kernels have few): the 1-D
# register<->lane exchanges Triton lowers with shuffles (docs/verified-facts.md, "Stock Triton's
# lowering": blocked[2] -> blocked[1] of 64 elements takes 2 shfl.sync), and a 2-D one of an
# 8-warp softmax-like tile.
SYNTHETIC = [
    ("blocked2_to_blocked1", "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>",
     "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>", (64,), 1),
    ("blocked4_to_blocked1_4w", "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
     "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", (512,), 4),
    ("rows_to_cols_in_warp", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [8, 1], order = [0, 1]}>", (64, 32), 8),
    # The epilogue of benchmarks/kernels.py's matmul_fp16 as triton 3.6 compiles it for sm_90
    # (wgmma accumulator -> one element per thread, 8 warps), where the whole kernel runs ~8%
    # slower with our lowering (the epilogue study, docs/studies.md).
    # Two conversions of the 13-kernel suite where stock's shuffles once ran 1.9x faster than
    # our shared-memory plan (both directions).
    ("spt4_to_spt2_tpw2x16", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>", (128, 64), 4),
    ("spt2_to_spt4_tpw2x16", "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>", (128, 64), 4),
    ("spt8_to_spt4_tpw4x8", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 128), 4),
    ("spt4_to_spt8_tpw4x8", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 128), 4),
    # The accumulator of benchmarks/kernels.py's column_sum (triton 3.6, 4 warps): a row sum
    # (4 consecutive elements per lane, the same in every warp) to one element per thread,
    # once per loop iteration; stock's shared memory ran 5% faster than our shuffles there.
    ("column_sum_acc", "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], "
     "warpsPerCTA = [4, 1], order = [1, 0]}>}>",
     "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", (128,), 4),
    ("matmul_epilogue_128x128", "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>",
     "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 4], order = [1, 0]}>", (128, 128), 8),
]


def synthetic_cases() -> list[Case]:
    cases = []
    for name, src, dst, shape, warps in SYNTHETIC:
        for bits in WIDTHS:
            cases.append(Case(f"synthetic/{name}:{'x'.join(map(str, shape))}:i{bits}", "", src, dst, shape, bits,
                              warps, "synthetic"))
    return cases


# --------------------------------------------------------------------------- the kernel

def plain_blocked(shape, num_warps) -> str:
    rank = len(shape)
    threads = [1] * rank
    threads[-1] = 32
    warps = [1] * rank
    warps[0] = num_warps
    order = list(range(rank - 1, -1, -1))
    return (f"#ttg.blocked<{{sizePerThread = {[1] * rank}, threadsPerWarp = {threads}, "
            f"warpsPerCTA = {warps}, order = {order}}}>")


def loop_index_line(ty: str, bits: int) -> str:
    """``%ik``: the loop's i32 counter ``%i`` as an integer of the element's type ``ty``."""
    if ty == "i32":
        return "      %ik = arith.addi %i, %c0 : i32"
    if bits < 32:
        return f"      %ik = arith.trunci %i : i32 to {ty}"
    return f"      %ik = arith.extsi %i : i32 to {ty}"


def pow2_split(total: int, parts: int, rng) -> list[int]:
    """``parts`` powers of two whose product is ``total`` (a power of two), at random (``rng``:
    a ``random.Random``)."""
    out = [1] * parts
    while total > 1:
        out[rng.randrange(parts)] *= 2
        total //= 2
    return out


def kernel_ttgir(case: Case) -> str:
    """A self-contained TTGIR module timing ``case``'s conversion in a loop."""
    shape, rank = case.shape, len(case.shape)
    ty = INT_TYPE[case.bits]
    dims = "x".join(map(str, shape))
    size = 1
    for s in shape:
        size *= s
    L = "#ll_plain"
    # Data enters the source layout, and leaves the destination layout, through shared memory
    # (ttg.local_alloc + ttg.local_load): lowerings the plugin leaves to Triton unless told to
    # own local loads, so the code around the timed conversion is the same in every mode.
    staging = f"!ttg.memdesc<{dims}x{ty}, #ll_staging, #ll_smem>"
    order = ", ".join(str(d) for d in range(rank - 1, -1, -1))
    lines = [case.aliases, f"{L} = {plain_blocked(shape, case.num_warps)}",
             f"#ll_staging = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [{order}]}}>",
             "#ll_smem = #ttg.shared_memory",
             f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {case.num_warps} : i32, '
             f'ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{',
             f"  tt.func public @convert_loop(%X: !tt.ptr<{ty}>, %Y: !tt.ptr<{ty}>) {{"]
    body = []

    def slice_layout(keep: int) -> str:
        """L with every dim but ``keep`` removed (innermost slices first)."""
        layout = L
        for d in range(rank - 1, -1, -1):
            if d != keep:
                layout = f"#ttg.slice<{{dim = {d}, parent = {layout}}}>"
        return layout

    # offsets = sum_d index_d * stride_d, built per dim: make_range, expand back to rank, scale, broadcast.
    strides = [1] * rank
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    total = None
    for d in range(rank):
        value, layout, cur_shape = f"%range{d}", slice_layout(d), [shape[d]]
        body.append(f"    {value} = tt.make_range {{end = {shape[d]} : i32, start = 0 : i32}} : tensor<{shape[d]}xi32, {layout}>")
        kept = [d]
        for e in range(rank):
            if e == d:
                continue
            # insert dim e at its position among the kept dims
            pos = sorted(kept + [e]).index(e)
            new_shape = cur_shape[:pos] + [1] + cur_shape[pos:]
            kept = sorted(kept + [e])
            new_layout = L if len(kept) == rank else _partial_slice(L, rank, kept)
            new_value = f"%range{d}_{e}"
            body.append(f"    {new_value} = tt.expand_dims {value} {{axis = {pos} : i32}} : "
                        f"tensor<{'x'.join(map(str, cur_shape))}xi32, {layout}> -> "
                        f"tensor<{'x'.join(map(str, new_shape))}xi32, {new_layout}>")
            value, layout, cur_shape = new_value, new_layout, new_shape
        one_shape = "x".join(map(str, cur_shape))
        if strides[d] != 1:
            body.append(f"    %stride{d} = arith.constant dense<{strides[d]}> : tensor<{one_shape}xi32, {L}>")
            body.append(f"    %scaled{d} = arith.muli {value}, %stride{d} : tensor<{one_shape}xi32, {L}>")
            value = f"%scaled{d}"
        if rank > 1:
            body.append(f"    %full{d} = tt.broadcast {value} : tensor<{one_shape}xi32, {L}> -> tensor<{dims}xi32, {L}>")
            value = f"%full{d}"
        if total is None:
            total = value
        else:
            body.append(f"    %sum{d} = arith.addi {total}, {value} : tensor<{dims}xi32, {L}>")
            total = f"%sum{d}"
    body += [
        f"    %xptrs = tt.splat %X : !tt.ptr<{ty}> -> tensor<{dims}x!tt.ptr<{ty}>, {L}>",
        f"    %xp = tt.addptr %xptrs, {total} : tensor<{dims}x!tt.ptr<{ty}>, {L}>, tensor<{dims}xi32, {L}>",
        f"    %xl = tt.load %xp : tensor<{dims}x!tt.ptr<{ty}>, {L}>",
        f"    %xs = ttg.local_alloc %xl : (tensor<{dims}x{ty}, {L}>) -> {staging}",
        f"    %x = ttg.local_load %xs : {staging} -> tensor<{dims}x{ty}, {case.src}>",
        "    %c0 = arith.constant 0 : i32",
        "    %c1 = arith.constant 1 : i32",
        f"    %cn = arith.constant {ITERATIONS} : i32",
        f"    %zero = arith.constant dense<0> : tensor<{dims}x{ty}, {case.dst}>",
        f"    %acc = scf.for %i = %c0 to %cn step %c1 iter_args(%a = %zero) -> (tensor<{dims}x{ty}, {case.dst}>)  : i32 {{",
        loop_index_line(ty, case.bits),
    ]
    body += [
        f"      %is = tt.splat %ik : {ty} -> tensor<{dims}x{ty}, {case.src}>",
        f"      %xi = arith.addi %x, %is : tensor<{dims}x{ty}, {case.src}>",
        f"      %y = ttg.convert_layout %xi : tensor<{dims}x{ty}, {case.src}> -> tensor<{dims}x{ty}, {case.dst}>",
        f"      %a2 = arith.addi %a, %y : tensor<{dims}x{ty}, {case.dst}>",
        f"      scf.yield %a2 : tensor<{dims}x{ty}, {case.dst}>",
        "    }",
        f"    %accs = ttg.local_alloc %acc : (tensor<{dims}x{ty}, {case.dst}>) -> {staging}",
        f"    %out = ttg.local_load %accs : {staging} -> tensor<{dims}x{ty}, {L}>",
        "    %pid = tt.get_program_id x : i32",
        f"    %csize = arith.constant {size} : i32",
        "    %base = arith.muli %pid, %csize : i32",
        f"    %ybase = tt.addptr %Y, %base : !tt.ptr<{ty}>, i32",
        f"    %yptrs = tt.splat %ybase : !tt.ptr<{ty}> -> tensor<{dims}x!tt.ptr<{ty}>, {L}>",
        f"    %yp = tt.addptr %yptrs, {total} : tensor<{dims}x!tt.ptr<{ty}>, {L}>, tensor<{dims}xi32, {L}>",
        f"    tt.store %yp, %out : tensor<{dims}x!tt.ptr<{ty}>, {L}>",
        "    tt.return",
        "  }",
        "}",
    ]
    return "\n".join(lines + body) + "\n"


def _partial_slice(L: str, rank: int, kept: list) -> str:
    layout = L
    for d in range(rank - 1, -1, -1):
        if d not in kept:
            layout = f"#ttg.slice<{{dim = {d}, parent = {layout}}}>"
    return layout


# --------------------------------------------------------------------------- compiling


def release(version_text: str):
    """The layout conventions of a Triton release, from its version string (a case's layouts
    read under the release it was measured with)."""
    from linear_layouts.dialect.conventions import TritonConventions
    return TritonConventions(tuple(int(x) for x in version_text.split(".")[:2]))


def _wrap(values, bits):
    import torch
    mask = (1 << bits) - 1
    v = values & mask if bits < 64 else values
    if bits < 64:
        v = torch.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
    return v
