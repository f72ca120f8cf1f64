"""Agreement of ``ll-classify-conversions`` with what stock Triton's lowering does.

Every ``ttg.convert_layout`` of the corpus (test/lit/corpus), plus a few hand-written pairs for
scopes the corpus lacks, becomes a module of its own that
loads a tensor in the source layout, converts it, and stores it in the destination layout.
We classify it with our pass (``ll.scope``) and compile it with stock Triton (CPU only, to PTX
or AMDGCN), then check that the two agree:

* none / register: no shuffles and no shared memory;
* lane: data stays inside a warp: shuffles, or shared memory without a CTA-wide barrier;
* warp: shared memory and a CTA-wide barrier.

Triton runs in two worker subprocesses (this file, run as a script): an invalid input aborts
Triton's whole process, and two workers use both cores of CI.  Nothing is cached across runs
(a fresh TRITON_CACHE_DIR per run).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = str(next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists()))
# (also run as a script, in the oracle's subprocesses: no test helpers on the path there)
CORPUS = os.path.join(REPO, "test", "lit", "corpus")
WORKERS = 2

TARGETS = {"cuda:80": ("cuda", 80, 32), "cuda:90": ("cuda", 90, 32),
           "hip:gfx942": ("hip", "gfx942", 64), "hip:gfx90a": ("hip", "gfx90a", 64)}

# What the lowering of a convert can emit, per back end (counted in instructions only).
PATTERNS = {
    "cuda": {
        "shuffles": r"\bshfl\.sync\b",
        "shared_ops": r"\b(st\.shared|ld\.shared|stmatrix|ldmatrix)\b",
        "cta_barriers": r"\b(bar\.sync|barrier\.sync|barrier\.cta\.sync|bar\.cta\.sync)\b",
        "warp_barriers": r"\bbar\.warp\.sync\b",
    },
    "hip": {
        "shuffles": r"\b(ds_bpermute\w*|ds_permute\w*|ds_swizzle\w*|v_permlane\w*|v_readlane\w*|\w+_dpp)\b",
        "shared_ops": r"\b(ds_write\w*|ds_read\w*|ds_store\w*|ds_load\w*)\b",
        "cta_barriers": r"\bs_barrier\b",
        "warp_barriers": r"(?!)",
    },
}


# --------------------------------------------------------------------------- the cases

def _expand_aliases(text: str) -> dict[str, str]:
    aliases = {}
    for name, value in re.findall(r"^(#(?!loc)[\w$.-]+) = (.*)$", text, flags=re.M):
        for other in sorted(aliases, key=len, reverse=True):
            value = re.sub(re.escape(other) + r"(?![\w$.-])", lambda _m, o=other: aliases[o], value)
        aliases[name] = value
    return aliases


def _expand(type_text: str, aliases: dict[str, str]) -> str:
    for name in sorted(aliases, key=len, reverse=True):
        type_text = re.sub(re.escape(name) + r"(?![\w$.-])", lambda _m, n=name: aliases[n], type_text)
    return type_text


def corpus_conversions() -> list[dict]:
    """One case per convert of the corpus, read from the text (so that a Triton that cannot
    parse a whole corpus file, such as 3.6 on 3.9's TTGIR, still gets the conversions)."""
    cases = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.ttgir"))):
        text = open(path).read()
        aliases = _expand_aliases(text)
        header = re.search(r"^module attributes \{(.*)\} \{$", text, flags=re.M).group(1)
        target = re.search(r'ttg\.target = "([^"]*)"', header).group(1)
        warps = int(re.search(r'"ttg\.num-warps" = (\d+)', header).group(1))
        threads = int(re.search(r'"ttg\.threads-per-warp" = (\d+)', header).group(1))
        for number, line in enumerate(text.splitlines(), start=1):
            m = re.search(r"ttg\.convert_layout %\S+ : (.*?) -> (.*?)(?: loc\(.*\))?$", line)
            if m:
                rel = os.path.relpath(path, CORPUS)
                cases.append({"id": f"{rel}:{number}", "target": target, "warps": warps, "threads": threads,
                              "src": _expand(m.group(1), aliases), "dst": _expand(m.group(2), aliases)})
    return cases


def _parse_type(type_text: str):
    m = re.fullmatch(r"tensor<((?:\d+x)+)([^,]+), (.*)>", type_text)
    shape = [int(s) for s in m.group(1).rstrip("x").split("x")]
    return shape, m.group(2), m.group(3)


def _pointers(prefix: str, arg: str, shape: list[int], element: str, encoding: str) -> tuple[list[str], str]:
    """Lines computing a tensor of pointers arg + row-major offsets, in ``encoding``:
    per dim, a make_range in the encoding sliced along every other dim, expanded back."""
    rank = len(shape)
    lines = []
    full = "x".join(map(str, shape))
    if rank == 1:
        lines.append(f"%{prefix}off = tt.make_range {{end = {shape[0]} : i32, start = 0 : i32}} : tensor<{shape[0]}xi32, {encoding}>")
        total = f"%{prefix}off"
    else:
        total = None
        for d in range(rank):
            removed = sorted((k for k in range(rank) if k != d), reverse=True)
            chain = [encoding]
            for k in removed:
                chain.append(f"#ttg.slice<{{dim = {k}, parent = {chain[-1]}}}>")
            name = f"%{prefix}r{d}"
            lines.append(f"{name} = tt.make_range {{end = {shape[d]} : i32, start = 0 : i32}} : tensor<{shape[d]}xi32, {chain[-1]}>")
            cur_shape, cur = [shape[d]], name
            for step, k in enumerate(sorted(removed)):
                new_shape = cur_shape[:k] + [1] + cur_shape[k:]
                src_ty = f"tensor<{'x'.join(map(str, cur_shape))}xi32, {chain[len(chain) - 1 - step]}>"
                dst_ty = f"tensor<{'x'.join(map(str, new_shape))}xi32, {chain[len(chain) - 2 - step]}>"
                nxt = f"{name}e{step}"
                lines.append(f"{nxt} = tt.expand_dims {cur} {{axis = {k} : i32}} : {src_ty} -> {dst_ty}")
                cur, cur_shape = nxt, new_shape
            stride = 1
            for s in shape[d + 1:]:
                stride *= s
            small = f"tensor<{'x'.join(map(str, cur_shape))}xi32, {encoding}>"
            lines.append(f"{name}s = arith.constant dense<{stride}> : {small}")
            lines.append(f"{name}m = arith.muli {cur}, {name}s : {small}")
            lines.append(f"{name}b = tt.broadcast {name}m : {small} -> tensor<{full}xi32, {encoding}>")
            if total is None:
                total = f"{name}b"
            else:
                lines.append(f"{name}a = arith.addi {total}, {name}b : tensor<{full}xi32, {encoding}>")
                total = f"{name}a"
    ptr = f"tensor<{full}x!tt.ptr<{element}>, {encoding}>"
    lines.append(f"%{prefix}splat = tt.splat {arg} : !tt.ptr<{element}> -> {ptr}")
    lines.append(f"%{prefix}ptr = tt.addptr %{prefix}splat, {total} : {ptr}, tensor<{full}xi32, {encoding}>")
    return lines, f"%{prefix}ptr"


def single_convert_module(case: dict) -> str:
    shape, element, src_enc = _parse_type(case["src"])
    _, _, dst_enc = _parse_type(case["dst"])
    # Booleans (masks: the Liger-Kernel corpus converts many) live in memory as i8, as Triton's
    # front end keeps them: load i8 and truncate, extend back before the store.
    memory = "i8" if element == "i1" else element
    load_lines, src_ptr = _pointers("s", "%in", shape, memory, src_enc)
    store_lines, dst_ptr = _pointers("d", "%out", shape, memory, dst_enc)
    full = "x".join(map(str, shape))
    loaded = [f"%v = tt.load {src_ptr} : tensor<{full}x!tt.ptr<{memory}>, {src_enc}>"]
    stored = "%c"
    if element == "i1":
        loaded = [f"%v8 = tt.load {src_ptr} : tensor<{full}x!tt.ptr<i8>, {src_enc}>",
                  f"%v = arith.trunci %v8 : tensor<{full}xi8, {src_enc}> to {case['src']}"]
        stored = "%c8"
    body = load_lines + loaded + [
        f"%c = ttg.convert_layout %v : {case['src']} -> {case['dst']}",
    ] + ([f"%c8 = arith.extui %c : {case['dst']} to tensor<{full}xi8, {dst_enc}>"] if element == "i1" else []) \
        + store_lines + [
        f"tt.store {dst_ptr}, {stored} : tensor<{full}x!tt.ptr<{memory}>, {dst_enc}>",
        "tt.return",
    ]
    header = (f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {case["warps"]} : i32, '
              f'ttg.target = "{case["target"]}", "ttg.threads-per-warp" = {case["threads"]} : i32}} {{')
    return "\n".join([header, f"  tt.func public @cvt(%in: !tt.ptr<{memory}>, %out: !tt.ptr<{memory}>) {{"]
                     + ["    " + line for line in body] + ["  }", "}", ""])


# --------------------------------------------------------------------------- the worker

def measure(path: str, target: str) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    backend, arch, warp_size = TARGETS[target]
    kernel = triton.compile(path, target=GPUTarget(backend, arch, warp_size))
    assembly = kernel.asm["ptx" if backend == "cuda" else "amdgcn"]
    lines = [line.split("//")[0].split(";;")[0] for line in assembly.splitlines()]
    body = "\n".join(line for line in lines if line.strip() and not line.strip().startswith("."))
    result = {name: len(re.findall(pattern, body)) for name, pattern in PATTERNS[backend].items()}
    result["shared_bytes"] = int(getattr(kernel.metadata, "shared", 0) or 0)
    return result


def worker_main(cases_path: str) -> None:
    """Compile each case and print one JSON line per case as soon as it is known."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    for case in json.load(open(cases_path)):
        try:
            out = {"id": case["id"], **measure(case["path"], case["target"])}
        except Exception as error:
            out = {"id": case["id"], "error": f"{type(error).__name__}: {str(error)[:300]}"}
        print(json.dumps(out), flush=True)


def run_oracle(cases: list[dict], directory: str) -> dict[str, dict]:
    batches = [cases[i::WORKERS] for i in range(WORKERS)]
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(directory, "cache"), TRITON_DEFAULT_FP_FUSION="1")
    procs = []
    for i, batch in enumerate(batches):
        path = os.path.join(directory, f"batch{i}.json")
        json.dump(batch, open(path, "w"))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), path], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = {}
    for proc, batch in zip(procs, batches):
        out, err = proc.communicate(timeout=600)
        for line in out.splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                results[record["id"]] = record
        for case in batch:  # a case after which the worker died
            results.setdefault(case["id"], {"id": case["id"], "error": f"worker exited {proc.returncode}: {err[-300:]}"})
    return results


# --------------------------------------------------------------------------- the test

def our_scope(module_text: str) -> str:
    from linear_layouts.passes.framework import run_pipeline
    from linear_layouts.passes.pipeline import parse_pipeline
    from linear_layouts.passes.ir.snapshot import parse_module
    module = parse_module(module_text, "single_convert.mlir")
    run_pipeline(module, parse_pipeline("ll-classify-conversions"))
    return re.search(r'll\.scope = "(\w+)"', module.print()).group(1)


def agrees(scope: str, oracle: dict) -> bool:
    shared = oracle["shared_ops"] > 0
    if scope in ("none", "register"):
        return oracle["shuffles"] == 0 and not shared
    if scope == "lane":
        return (oracle["shuffles"] > 0 or shared) and oracle["cta_barriers"] == 0
    if scope == "warp":
        return shared and oracle["cta_barriers"] > 0
    return False


def _linear(register, lane, warp):
    return f"#ttg.linear<{{register = {register}, lane = {lane}, warp = {warp}, block = []}}>"


LANES = "[[1], [2], [4], [8], [16]]"
# Hand-written pairs for scopes the corpus lacks (Triton's pipeline removes most cheap
# conversions before they reach TTGIR): (name, target, warps, src type, dst type).
EXTRA_PAIRS = [
    ("register-permutation", "cuda:90", 1,
     f"tensor<128xf32, {_linear('[[1], [2]]', '[[4], [8], [16], [32], [64]]', '[]')}>",
     f"tensor<128xf32, {_linear('[[2], [1]]', '[[4], [8], [16], [32], [64]]', '[]')}>"),
    ("lane-shuffle", "cuda:90", 1,
     "tensor<64xf32, #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>",
     f"tensor<64xf32, {_linear('[[32]]', LANES, '[]')}>"),
    ("register-broadcast-dropped", "cuda:80", 1,
     f"tensor<32xf32, {_linear('[[0]]', LANES, '[]')}>", f"tensor<32xf32, {_linear('[]', LANES, '[]')}>"),
    ("lane-shuffle-amd", "hip:gfx942", 1,
     "tensor<128xf32, #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [64], warpsPerCTA = [1], order = [0]}>>",
     f"tensor<128xf32, {_linear('[[64]]', '[[1], [2], [4], [8], [16], [32]]', '[]')}>"),
]


def extra_conversions() -> list[dict]:
    return [{"id": f"extra:{name}", "target": target, "warps": warps, "threads": 64 if target.startswith("hip") else 32,
             "src": src, "dst": dst} for name, target, warps, src, dst in EXTRA_PAIRS]


# Conversions of the corpus where neither side is right: the source (a row statistic, slice of
# a [1, 32] x [1, 4] blocked parent) is held whole by every thread (its lane and warp bases are
# all zero), so any destination is a register selection.  Our classifier says "lane" (too high:
# "register" is the scope), and Triton lowers it through shared memory and a CTA barrier (Liger's:
# 5 shared ops, 64 bytes).  Kept here, strictly, until one side changes.
_REPLICATED_ROW_STATISTIC = "source replicated in every thread: a register-only conversion; ours=lane, Triton=shared"
# Conversions whose every warp holds the whole tensor, in the source and in the destination (all
# warp bases zero): the data never leaves a warp, which is our "lane"; Triton still goes through
# shared memory with a CTA-wide barrier (flash-linear-attention's gla backward: 1x16 f32 from a
# wgmma accumulator, 2 shared ops and 1 barrier, under 3.6 and 3.9).
_EVERY_WARP_HOLDS_IT_ALL = "every warp holds the whole tensor on both sides: warp-local; ours=lane, Triton=shared + CTA barrier"
KNOWN_DISAGREEMENTS = {
    "liger_kernel/block_rms_norm_fwd_bf16_256.cuda90.ttgir:68": _REPLICATED_ROW_STATISTIC,
    "liger_kernel/block_rms_norm_fwd_bf16_512.cuda80.ttgir:68": _REPLICATED_ROW_STATISTIC,
    "liger_kernel/block_rms_norm_fwd_f32_1024.cuda90.ttgir:67": _REPLICATED_ROW_STATISTIC,
    "liger_kernel/mhc_mm_norm_fwd_bf16_32.cuda90.ttgir:218": _REPLICATED_ROW_STATISTIC,
    "fla/l2norm_fwd_bf16.cuda90.ttgir:64": _REPLICATED_ROW_STATISTIC,
    "fla/gla_bwd_inter_bf16.cuda90.ttgir:290": _EVERY_WARP_HOLDS_IT_ALL,
}


def _zero_bases(type_text: str, dims: tuple) -> bool:
    """Whether every base of ``dims`` (e.g. ("warp",)) of the tensor type's layout is zero."""
    from linear_layouts.dialect import to_linear_layout

    shape, _, encoding = _parse_type(type_text)
    text = str(to_linear_layout(encoding, shape))
    images = re.findall(r"(?:" + "|".join(dims) + r")=\d+ -> \(([^)]*)\)", text)
    return bool(images) and all(set(v.replace(",", " ").split()) <= {"0"} for v in images)


def test_known_disagreements_are_what_they_say():
    """Each known disagreement really is of its kind: a source every thread holds whole, or a
    tensor every warp holds whole on both sides."""
    cases = {c["id"]: c for c in corpus_conversions()}
    for case_id, kind in KNOWN_DISAGREEMENTS.items():
        case = cases[case_id]
        if kind == _REPLICATED_ROW_STATISTIC:
            assert _zero_bases(case["src"], ("lane", "warp")), case
        else:
            assert _zero_bases(case["src"], ("warp",)) and _zero_bases(case["dst"], ("warp",)), case
            assert not _zero_bases(case["src"], ("lane", "warp")), case     # else it is the other kind


def test_scope_agrees_with_triton_on_every_corpus_conversion():
    cases = corpus_conversions()
    assert len(cases) >= 40, "the corpus should have many conversions"
    cases += extra_conversions()
    known = []
    # The corpus repeats conversions (the same pair of layouts in many kernels, or in the same
    # kernel for several targets' files): each distinct module is classified and compiled once,
    # and its answers are every repeat's.
    first_of: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ll_scope_") as directory:
        ours, problems = {}, []
        for case in cases:
            text = single_convert_module(case)
            if text in first_of:
                case["same_as"] = first_of[text]["id"]
                continue
            first_of[text] = case
            case["path"] = os.path.join(directory, f"case{len(first_of)}.ttgir")
            open(case["path"], "w").write(text)
            try:
                ours[case["id"]] = our_scope(text)
            except Exception as error:
                problems.append(f"{case['id']}: ours failed: {error}")
        oracle = run_oracle([c for c in cases if c["id"] in ours], directory)
    for case in cases:
        if "same_as" in case and case["same_as"] in ours:
            ours[case["id"]], oracle[case["id"]] = ours[case["same_as"]], oracle[case["same_as"]]
    agreed, by_scope = 0, {}
    for case in cases:
        if case["id"] not in ours:
            continue
        record = oracle[case["id"]]
        if "error" in record:
            problems.append(f"{case['id']}: Triton failed: {record['error']}")
            continue
        scope = ours[case["id"]]
        by_scope[scope] = by_scope.get(scope, 0) + 1
        if agrees(scope, record):
            agreed += 1
        elif case["id"] in KNOWN_DISAGREEMENTS and scope == "lane" and record["shared_ops"] > 0:
            known.append(case["id"])
        else:
            problems.append(f"{case['id']}: ours={scope} triton={record} ({case['src']} -> {case['dst']})")
    print(f"scope agreement: {agreed}/{len(cases)} conversions ({len(extra_conversions())} hand-written); "
          f"by scope: {by_scope}; known disagreements: {len(known)}")
    assert not problems, "\n".join(problems)
    # strict: a known disagreement that goes away (either side changed) must leave the list
    assert sorted(known) == sorted(KNOWN_DISAGREEMENTS), sorted(set(KNOWN_DISAGREEMENTS) - set(known))


if __name__ == "__main__":
    worker_main(sys.argv[1])
