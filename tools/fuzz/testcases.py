"""Single-convert test kernels as TTGIR text, random layouts to convert, and instruction
counting in PTX / AMDGCN.

Used by ``ll-fuzz`` (``tools/fuzz/conversion_fuzz.py``), the compile tests
(``test/unit/passes/test_lower_conversions*.py``) and the GPU checks (``benchmarks/gpu_conversions.py``,
``benchmarks/fuzz_gpu.py``); pure text, no Triton import.

``single_convert_ttgir`` writes the smallest kernel that exercises one conversion::

    kernel(X, Y):  v = load X[i] in layout #src;  c = convert_layout v to #dst;  store Y[i] = c

where i is the row-major index of each element, so Y must equal X bit for bit whatever the
layouts are.  Offsets are built with ``tt.make_range`` in slices of the layout (rank 2:
``row * N + col``), the way Triton's own frontend builds them.
"""

from __future__ import annotations

import re
from collections import Counter

from ...lowering.emit import emit_amd, emit_nvidia
from ...lowering.target import target_named


def _offsets(lines: list[str], shape: tuple[int, ...], enc: str, tag: str) -> str:
    """Append ops computing the row-major index tensor of ``shape`` in layout ``enc``."""
    if len(shape) == 1:
        lines.append(f"    %{tag}_off = tt.make_range {{end = {shape[0]} : i32, start = 0 : i32}} : tensor<{shape[0]}xi32, {enc}>")
        return f"%{tag}_off"
    m, n = shape
    row_enc = f"#ttg.slice<{{dim = 1, parent = {enc}}}>"
    col_enc = f"#ttg.slice<{{dim = 0, parent = {enc}}}>"
    full = f"tensor<{m}x{n}xi32, {enc}>"
    lines += [
        f"    %{tag}_r = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, {row_enc}>",
        f"    %{tag}_r2 = tt.expand_dims %{tag}_r {{axis = 1 : i32}} : tensor<{m}xi32, {row_enc}> -> tensor<{m}x1xi32, {enc}>",
        f"    %{tag}_n = arith.constant dense<{n}> : tensor<{m}x1xi32, {enc}>",
        f"    %{tag}_rs = arith.muli %{tag}_r2, %{tag}_n : tensor<{m}x1xi32, {enc}>",
        f"    %{tag}_rb = tt.broadcast %{tag}_rs : tensor<{m}x1xi32, {enc}> -> {full}",
        f"    %{tag}_c = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {col_enc}>",
        f"    %{tag}_c2 = tt.expand_dims %{tag}_c {{axis = 0 : i32}} : tensor<{n}xi32, {col_enc}> -> tensor<1x{n}xi32, {enc}>",
        f"    %{tag}_cb = tt.broadcast %{tag}_c2 : tensor<1x{n}xi32, {enc}> -> {full}",
        f"    %{tag}_off = arith.addi %{tag}_rb, %{tag}_cb : {full}",
    ]
    return f"%{tag}_off"


def _memory_type(element_type: str) -> str:
    """What X and Y hold in memory for a converted element type: booleans live in bytes (as in
    Triton's frontend), pointers as their 64-bit integer values."""
    if element_type == "i1":
        return "i8"
    if element_type.startswith("!tt.ptr"):
        return "i64"
    return element_type


def single_convert_ttgir(shape, element_type: str, src_encoding: str, dst_encoding: str, num_warps: int,
                         target: str = "sm_90", name: str = "convert_kernel", shared_encoding: str | None = None,
                         buffers: int = 0) -> str:
    """A kernel ``name(X, Y)``: load X in ``src_encoding``, convert, store Y in ``dst_encoding``.

    With ``shared_encoding`` (a shared layout attribute) the convert goes through shared memory
    the way Triton's own passes stage operands: ``ttg.local_alloc`` of the loaded tensor into a
    buffer of that layout, then ``ttg.local_load`` into ``dst_encoding``.  With ``buffers`` > 1
    as a software-pipelined loop does it: one allocation of ``buffers`` buffers, the last one
    picked by ``ttg.memdesc_index``, ``ttg.local_store``, ``ttg.local_load`` from that view.

    ``src_encoding`` / ``dst_encoding`` are attribute texts (``#ttg.blocked<{...}>``,
    ``#ttg.linear<{...}>``); ``element_type`` a TTGIR type (``f32``, ``f8E4M3FN``, ``i1``,
    ``!tt.ptr<f32>``, ...).  An ``i1`` tensor is loaded as bytes and compared with 0 (Y holds
    1 where X was nonzero); a pointer tensor is loaded as i64 and cast with ``tt.int_to_ptr`` /
    ``tt.ptr_to_int`` around the convert (Y holds X's bits).
    """
    shape = tuple(shape)
    target_attr, threads = target_named(target).triton_name, target_named(target).warp_size
    dims = "x".join(str(s) for s in shape)
    memory = _memory_type(element_type)
    lines = [f"#src = {src_encoding}", f"#dst = {dst_encoding}"]
    if shared_encoding is not None:
        lines += [f"#shared = {shared_encoding}", "#smem = #ttg.shared_memory"]
    lines += [
             f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, '
             f'ttg.target = "{target_attr}", "ttg.threads-per-warp" = {threads} : i32}} {{',
             f"  tt.func public @{name}(%X: !tt.ptr<{memory}>, %Y: !tt.ptr<{memory}>) {{"]
    ptr = f"!tt.ptr<{memory}>"
    for tag, enc, base in (("s", "#src", "%X"), ("d", "#dst", "%Y")):
        off = _offsets(lines, shape, enc, tag)
        lines.append(f"    %{tag}_p0 = tt.splat {base} : {ptr} -> tensor<{dims}x{ptr}, {enc}>")
        lines.append(f"    %{tag}_p = tt.addptr %{tag}_p0, {off} : tensor<{dims}x{ptr}, {enc}>, tensor<{dims}xi32, {enc}>")
        if tag == "s":
            value = "%v"
            lines.append(f"    %v = tt.load %s_p : tensor<{dims}x{ptr}, #src>")
            if element_type == "i1":
                lines.append(f"    %zero = arith.constant dense<0> : tensor<{dims}xi8, #src>")
                lines.append(f"    %vb = arith.cmpi ne, %v, %zero : tensor<{dims}xi8, #src>")
                value = "%vb"
            elif element_type != memory:
                lines.append(f"    %vp = tt.int_to_ptr %v : tensor<{dims}xi64, #src> -> tensor<{dims}x{element_type}, #src>")
                value = "%vp"
            if shared_encoding is None:
                lines.append(f"    %c = ttg.convert_layout {value} : tensor<{dims}x{element_type}, #src> -> "
                             f"tensor<{dims}x{element_type}, #dst>")
            else:
                if buffers > 1:
                    memdesc = f"!ttg.memdesc<{dims}x{element_type}, #shared, #smem, mutable>"
                    whole = f"!ttg.memdesc<{buffers}x{dims}x{element_type}, #shared, #smem, mutable>"
                    lines.append(f"    %buffers = ttg.local_alloc : () -> {whole}")
                    lines.append(f"    %last = arith.constant {buffers - 1} : i32")
                    lines.append(f"    %a = ttg.memdesc_index %buffers[%last] : {whole} -> {memdesc}")
                    lines.append(f"    ttg.local_store {value}, %a : tensor<{dims}x{element_type}, #src> -> {memdesc}")
                else:
                    memdesc = f"!ttg.memdesc<{dims}x{element_type}, #shared, #smem>"
                    lines.append(f"    %a = ttg.local_alloc {value} : (tensor<{dims}x{element_type}, #src>) -> {memdesc}")
                lines.append(f"    %c = ttg.local_load %a : {memdesc} -> tensor<{dims}x{element_type}, #dst>")
    stored = "%c"
    if element_type == "i1":
        lines.append(f"    %cb = arith.extui %c : tensor<{dims}xi1, #dst> to tensor<{dims}xi8, #dst>")
        stored = "%cb"
    elif element_type != memory:
        lines.append(f"    %ci = tt.ptr_to_int %c : tensor<{dims}x{element_type}, #dst> -> tensor<{dims}xi64, #dst>")
        stored = "%ci"
    lines.append(f"    tt.store %d_p, {stored} : tensor<{dims}x{ptr}, #dst>")
    lines += ["    tt.return", "  }", "}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------- instruction counting

# The emitters' tables of final-code instructions (the one table), compiled once.
_PTX_KINDS = tuple((row, re.compile(row.pattern)) for row in emit_nvidia.FINAL_CODE_INSTRUCTIONS)
_AMD_KINDS = tuple((row, re.compile(row.pattern)) for row in emit_amd.FINAL_CODE_INSTRUCTIONS)

_TYPE_BITS = {"b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "b32": 32, "u32": 32,
              "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64}


def ptx_mix(ptx: str) -> Counter:
    """Counts of the instructions a conversion is made of, in a PTX listing.

    Keys: ``shfl.sync.idx``/``shfl.sync.bfly``, ``ldmatrix.x4(.trans)``, ``st.shared.b128`` (by total
    access width), ``ld.shared.b64``, ``bar.sync``, ``bar.warp.sync``, ``selp``, ``prmt``.
    """
    out: Counter = Counter()
    for line in ptx.splitlines():
        for row, pattern in _PTX_KINDS:
            m = pattern.match(line)
            if not m:
                continue
            kind = row.name
            if row.detail and m.group(row.detail) is None:
                break   # a form this listing does not name (ld.shared::cluster): not counted
            if kind == "shfl":
                out[f"shfl.sync.{m.group(1)}"] += 1
            elif kind in ("ldmatrix", "stmatrix"):
                out[f"{kind}.{m.group(1)}{m.group(2) or ''}"] += 1
            elif kind in ("st.shared", "ld.shared"):
                vec = int(m.group(1)[2:]) if m.group(1) else 1
                out[f"{kind}.b{vec * _TYPE_BITS.get(m.group(2), 32)}"] += 1
            else:
                out[kind] += 1
            break
    return out


def instruction_classes(ptx: str) -> dict:
    """The benchmarks' per-kernel summary of ``ptx_mix``: shuffles, shared loads and stores (any
    width), ldmatrix, stmatrix and CTA barriers."""
    mix = ptx_mix(ptx)

    def total(prefix: str) -> int:
        return sum(n for key, n in mix.items() if key.startswith(prefix))

    return {"shfl": total("shfl.sync"), "ld_shared": total("ld.shared"), "st_shared": total("st.shared"),
            "ldmatrix": total("ldmatrix"), "stmatrix": total("stmatrix"), "bar": mix["bar.sync"]}


def amdgcn_mix(asm: str) -> Counter:
    """Counts in an AMDGCN listing: ``ds_bpermute``, ``ds_write.b32``... (``ds_write2.b32`` for
    the paired forms), ``s_barrier``, ``v_cndmask`` (selects), ``v_perm``."""
    out: Counter = Counter()
    for line in asm.splitlines():
        for row, pattern in _AMD_KINDS:
            m = pattern.match(line)
            if not m:
                continue
            kind = row.name
            if row.detail and m.group(row.detail) is None:
                break   # a form this listing does not name: not counted
            if kind in ("ds_write", "ds_read"):
                out[f"{kind}{m.group(1)}.b{m.group(2)}"] += 1
            else:
                out[kind] += 1
            break
    return out


# ------------------------------------------------------------------------------- random layouts


def _basis_text(vectors) -> str:
    return "[" + ", ".join("[" + ", ".join(str(x) for x in v) + "]" for v in vectors) + "]"


def random_linear_bases(rng, shape, num_warps: int, warp_size: int, broadcast: bool = True) -> dict:
    """Random bases {"register": [...], "lane": [...], "warp": [...]} (vectors of len(shape)):
    a permutation of the element bits over register, lane and warp bits, plus, with
    ``broadcast``, occasional zero bases (copies).

    Example (shape 4x8, 1 warp of 4 lanes): bits dim1:1,2,4 and dim0:1,2 shuffled, say
    (d0:2, d1:1 | d1:4, d0:1 | -) gives register [[2, 0], [0, 1]], lane [[0, 4], [1, 0]].
    """
    bits = [(d, 1 << b) for d, size in enumerate(shape) for b in range(size.bit_length() - 1)]
    rng.shuffle(bits)
    lane_bits, warp_bits = warp_size.bit_length() - 1, num_warps.bit_length() - 1

    def vec(bit):
        v = [0] * len(shape)
        if bit is not None:
            v[bit[0]] = bit[1]
        return v
    slots = {"register": [], "lane": [], "warp": []}
    # hardware dims take element bits first; a dim short of bits broadcasts (zero basis)
    order = ["lane", "warp"]
    rng.shuffle(order)
    pool = list(bits)
    for dim in order:
        count = lane_bits if dim == "lane" else warp_bits
        for _ in range(count):
            take = pool and not (broadcast and rng.random() < 0.08)
            slots[dim].append(vec(pool.pop(0)) if take else vec(None))
        rng.shuffle(slots[dim])
    slots["register"] = [vec(b) for b in pool]
    if broadcast and rng.random() < 0.2 and len(slots["register"]) < 5:
        slots["register"].insert(rng.randrange(len(slots["register"]) + 1), vec(None))
    return slots


def linear_encoding_text(bases: dict) -> str:
    return ("#ttg.linear<{register = " + _basis_text(bases["register"]) + ", lane = " + _basis_text(bases["lane"])
            + ", warp = " + _basis_text(bases["warp"]) + ", block = []}>")


def random_linear_encoding(rng, shape, num_warps: int, warp_size: int, broadcast: bool = True) -> str:
    """A random ``#ttg.linear`` layout of ``shape`` (see ``random_linear_bases``)."""
    return linear_encoding_text(random_linear_bases(rng, shape, num_warps, warp_size, broadcast))


def related_linear_pairs(rng, shape, num_warps: int, warp_size: int) -> list[tuple[str, str, str]]:
    """(kind, src, dst) pairs that stay inside a thread or a warp, which random pairs rarely do:

    * ``register-permutation``: the register bases reordered (a rename, no instruction);
    * ``lane-permutation``: the lane bases reordered (a shuffle with a permuted source lane);
    * ``register-lane-swap``: one or two register bases trade places with lane bases (the
      transpositions of Triton's warp-shuffle decomposition).
    """
    out = []
    for kind in ("register-permutation", "lane-permutation", "register-lane-swap", "register-lane-swap"):
        base = random_linear_bases(rng, shape, num_warps, warp_size, broadcast=False)
        other = {k: [list(v) for v in vs] for k, vs in base.items()}
        if kind == "register-permutation":
            rng.shuffle(other["register"])
        elif kind == "lane-permutation":
            rng.shuffle(other["lane"])
        else:
            for _ in range(rng.choice((1, 2))):
                if other["register"]:
                    i, j = rng.randrange(len(other["register"])), rng.randrange(len(other["lane"]))
                    other["register"][i], other["lane"][j] = other["lane"][j], other["register"][i]
        out.append((kind, linear_encoding_text(base), linear_encoding_text(other)))
    return out


def random_blocked_encoding(rng, shape, num_warps: int, warp_size: int) -> str:
    """A random ``#ttg.blocked`` layout for a 2-D ``shape``."""
    def split(total_log2, caps):
        parts = [0] * len(caps)
        for _ in range(total_log2):
            i = rng.randrange(len(caps))
            parts[i] += 1
        return [1 << p for p in parts]
    lanes = split(warp_size.bit_length() - 1, shape)
    warps = split(num_warps.bit_length() - 1, shape)
    spt = [1 << rng.randrange(0, 3) for _ in shape]
    order = list(range(len(shape)))[::-1] if rng.random() < 0.6 else list(range(len(shape)))
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {lanes}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")
