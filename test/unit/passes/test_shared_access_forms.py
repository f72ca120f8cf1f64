"""The final PTX holds exactly the shared-memory instructions the plan has, in both forms of
NVIDIA islands (``emit_nvidia.shared_access_form``): ``llvm`` (the default: ``llvm.load`` /
``llvm.store`` on ``!llvm.ptr<3>``, ``nvvm.ldmatrix`` / ``nvvm.stmatrix``) and ``asm`` (the
inline PTX of before, the study switch ``emit_nvidia.SHARED_ACCESS_FORM = "asm"``).

LLVM sees the LLVM form: it could split a vector access (``st.shared.v4.b32`` into two ``.v2``),
merge neighbours into a wider one, narrow a load whose words are not all used, forward a store
to a load, or move an access across a barrier.  Each case below is a single-convert kernel
whose plan has a given access (every width of ``st.shared`` / ``ld.shared``, 8 to 128 bits,
``ldmatrix`` / ``stmatrix`` .x1 / .x2 / .x4 / .trans, a warp barrier), found by
``random_linear_encoding`` searches on sm_80 and sm_90 (``ll-lower-conversions``'s own plan, the
stock gate off).  For each, compiled with the installed Triton (run under 3.6 and 3.9):

* the PTX's shared-memory instructions, by kind and width, and its barriers are the plan's
  (``support.instruction_mix``: ``st.shared.b128`` is one ``st.shared.v4.b32``, whatever the
  type suffix), in both forms, so no access was split, merged or dropped;
* in program order they run as the plan's: stores, barrier, loads (runs of one kind collapsed:
  LLVM may reorder accesses between two barriers, never across one).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402

from linear_layouts.lowering.plan import Barrier  # noqa: E402
from linear_layouts.passes.lower_conversions import lower_text  # noqa: E402
from linear_layouts.tools.fuzz.testcases import ptx_mix, single_convert_ttgir  # noqa: E402
from support.instruction_mix import expected_mix, measured_mix  # noqa: E402

# (target, shape, element, warps, source layout, destination layout): the plan's accesses in the comment
CASES = [
    # st.shared.b64, ld.shared.b64 (i8: 8 bytes a thread)
    ("sm_90", (64, 32), "i8", 4,
     "#ttg.linear<{register = [[8, 0], [0, 1], [0, 16], [0, 2]], lane = [[16, 0], [32, 0], [2, 0], [0, 4], [4, 0]], warp = [[1, 0], [0, 8]], block = []}>",
     "#ttg.linear<{register = [[0, 16], [0, 2], [8, 0], [0, 4]], lane = [[4, 0], [32, 0], [0, 1], [1, 0], [0, 8]], warp = [[2, 0], [16, 0]], block = []}>"),
    # stmatrix.x4, ld.shared.b64
    ("sm_90", (128, 16), "bf16", 4,
     "#ttg.linear<{register = [[1, 0], [64, 0], [0, 2], [0, 1], [0, 0]], lane = [[4, 0], [0, 8], [16, 0], [32, 0], [0, 4]], warp = [[2, 0], [8, 0]], block = []}>",
     "#ttg.linear<{register = [[2, 0], [1, 0], [8, 0], [0, 4], [4, 0], [64, 0]], lane = [[32, 0], [0, 8], [0, 1], [0, 2], [0, 0]], warp = [[16, 0], [0, 0]], block = []}>"),
    # st.shared.b128, ld.shared.b128
    ("sm_90", (16, 16), "f32", 8,
     "#ttg.linear<{register = [[0, 1], [1, 0]], lane = [[0, 4], [0, 0], [0, 2], [4, 0], [0, 0]], warp = [[2, 0], [0, 8], [8, 0]], block = []}>",
     "#ttg.blocked<{sizePerThread = [2, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 4], order = [1, 0]}>"),
    # st.shared.b128, bar.warp.sync, ld.shared.b128
    ("sm_80", (64, 32), "f32", 1,
     "#ttg.linear<{register = [[0, 4], [32, 0], [4, 0], [2, 0], [16, 0], [8, 0], [0, 1]], lane = [[0, 8], [1, 0], [0, 0], [0, 16], [0, 2]], warp = [], block = []}>",
     "#ttg.linear<{register = [[4, 0], [16, 0], [32, 0], [0, 16], [1, 0], [8, 0], [0, 2], [0, 4]], lane = [[0, 0], [0, 0], [2, 0], [0, 1], [0, 8]], warp = [], block = []}>"),
    # st.shared.b64, bar.warp.sync, ldmatrix.x4.trans
    ("sm_80", (16, 64), "bf16", 1,
     "#ttg.linear<{register = [[0, 2], [2, 0], [0, 8], [8, 0], [1, 0]], lane = [[4, 0], [0, 16], [0, 1], [0, 4], [0, 32]], warp = [], block = []}>",
     "#ttg.linear<{register = [[0, 32], [2, 0], [1, 0], [0, 1], [0, 4]], lane = [[0, 16], [0, 8], [8, 0], [0, 2], [4, 0]], warp = [], block = []}>"),
    # st.shared.b128, ldmatrix.x4
    ("sm_90", (64, 32), "f16", 2,
     "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [2, 16], warpsPerCTA = [1, 2], order = [1, 0]}>",
     "#ttg.linear<{register = [[0, 4], [2, 0], [4, 0], [0, 2], [0, 8]], lane = [[1, 0], [8, 0], [0, 16], [32, 0], [16, 0]], warp = [[0, 1]], block = []}>"),
    # st.shared.b8, ld.shared.b32
    ("sm_90", (32, 8), "i8", 4,
     "#ttg.linear<{register = [[16, 0]], lane = [[2, 0], [0, 1], [0, 2], [1, 0], [0, 4]], warp = [[4, 0], [8, 0]], block = []}>",
     "#ttg.linear<{register = [[1, 0], [0, 1]], lane = [[0, 0], [16, 0], [0, 4], [0, 2], [8, 0]], warp = [[4, 0], [2, 0]], block = []}>"),
    # st.shared.b32, ld.shared.b64
    ("sm_80", (16, 16), "bf16", 2,
     "#ttg.linear<{register = [[0, 1], [0, 0], [1, 0]], lane = [[8, 0], [0, 2], [0, 8], [4, 0], [2, 0]], warp = [[0, 4]], block = []}>",
     "#ttg.linear<{register = [[1, 0], [2, 0], [0, 8]], lane = [[0, 4], [0, 2], [0, 0], [0, 1], [4, 0]], warp = [[8, 0]], block = []}>"),
    # st.shared.b32, ld.shared.b16
    ("sm_80", (8, 256), "i8", 8,
     "#ttg.linear<{register = [[0, 1], [0, 128], [0, 8]], lane = [[0, 16], [0, 32], [0, 64], [0, 2], [2, 0]], warp = [[4, 0], [0, 4], [1, 0]], block = []}>",
     "#ttg.linear<{register = [[1, 0], [0, 2], [0, 128]], lane = [[0, 16], [0, 8], [2, 0], [0, 1], [0, 4]], warp = [[4, 0], [0, 64], [0, 32]], block = []}>"),
    # st.shared.b32, ld.shared.b8
    ("sm_80", (128, 16), "f8E4M3FN", 8,
     "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 2], order = [0, 1]}>",
     "#ttg.linear<{register = [[4, 0], [0, 2], [0, 1]], lane = [[64, 0], [2, 0], [32, 0], [8, 0], [0, 8]], warp = [[1, 0], [16, 0], [0, 4]], block = []}>"),
    # stmatrix.x4.trans, ld.shared.b64
    ("sm_90", (32, 32), "bf16", 4,
     "#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [16, 2], warpsPerCTA = [2, 2], order = [1, 0]}>"),
    # st.shared.b8, ldmatrix.x1
    ("sm_90", (16, 64), "f8E4M3FN", 8,
     "#ttg.linear<{register = [[0, 8], [2, 0]], lane = [[4, 0], [0, 32], [0, 2], [0, 1], [0, 16]], warp = [[8, 0], [0, 4], [1, 0]], block = []}>",
     "#ttg.linear<{register = [[0, 32], [8, 0]], lane = [[0, 8], [0, 16], [0, 4], [1, 0], [0, 2]], warp = [[0, 1], [4, 0], [2, 0]], block = []}>"),
    # st.shared.b16, ldmatrix.x4
    ("sm_80", (64, 64), "f8E4M3FN", 4,
     "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [2, 16], warpsPerCTA = [2, 2], order = [0, 1]}>",
     "#ttg.linear<{register = [[1, 0], [0, 2], [4, 0], [0, 16], [2, 0]], lane = [[8, 0], [0, 32], [0, 8], [16, 0], [0, 1]], warp = [[0, 4], [32, 0]], block = []}>"),
    # st.shared.b8, ldmatrix.x2
    ("sm_80", (16, 64), "i8", 4,
     "#ttg.linear<{register = [[0, 32], [0, 4], [8, 0], [0, 16]], lane = [[0, 2], [1, 0], [4, 0], [2, 0], [0, 8]], warp = [[0, 1], [0, 0]], block = []}>",
     "#ttg.linear<{register = [[0, 2], [4, 0], [0, 8]], lane = [[0, 16], [0, 4], [0, 1], [2, 0], [8, 0]], warp = [[0, 32], [1, 0]], block = []}>"),
    # stmatrix.x2, ld.shared.b64
    ("sm_90", (32, 32), "bf16", 8,
     "#ttg.linear<{register = [[0, 16], [0, 1]], lane = [[4, 0], [2, 0], [16, 0], [0, 4], [8, 0]], warp = [[1, 0], [0, 8], [0, 2]], block = []}>",
     "#ttg.linear<{register = [[4, 0], [0, 16]], lane = [[2, 0], [0, 2], [0, 4], [0, 1], [0, 8]], warp = [[8, 0], [16, 0], [1, 0]], block = []}>"),
    # stmatrix.x1, ld.shared.b16
    ("sm_90", (32, 32), "f8E4M3FN", 8,
     "#ttg.linear<{register = [[0, 1], [16, 0]], lane = [[0, 4], [4, 0], [1, 0], [2, 0], [0, 8]], warp = [[8, 0], [0, 16], [0, 2]], block = []}>",
     "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]}>"),
    # 64-bit elements: st.shared.b128 / ld.shared.b128 of two i64 (halves through <2 x i32>)
    ("sm_90", (64, 64), "i64", 4,
     "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"),
]

# Every access the cases must cover between them (the test fails if a plan changes and one is lost).
COVERED = ({f"{kind}.shared.b{bits}" for kind in ("st", "ld") for bits in (8, 16, 32, 64, 128)}
           | {"ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4", "ldmatrix.x4.trans", "stmatrix.x1", "stmatrix.x2",
              "stmatrix.x4", "stmatrix.x4.trans", "bar.sync", "bar.warp.sync"})

_KIND = [(re.compile(r"^\s*(?:st\.shared|stmatrix)"), "store"), (re.compile(r"^\s*(?:ld\.shared|ldmatrix)"), "load"),
         (re.compile(r"^\s*(?:bar\.sync|barrier\.sync|bar\.warp\.sync)\b"), "barrier")]


def _runs(kinds):
    out = []
    for kind in kinds:
        if not out or out[-1] != kind:
            out.append(kind)
    return out


def _ptx_order(ptx: str) -> list[str]:
    kinds = []
    for line in ptx.splitlines():
        for pattern, kind in _KIND:
            if pattern.match(line):
                kinds.append(kind)
                break
    return _runs(kinds)


def _plan_order(plan) -> list[str]:
    return _runs("barrier" if isinstance(op, Barrier) else "store" if op.is_store else "load"
                 for op in plan.shared.ops)


def _compile(case, form, monkeypatch, cache):
    target, shape, element, warps, src, dst = case
    monkeypatch.setattr("linear_layouts.lowering.emit.emit_nvidia.SHARED_ACCESS_FORM", form)
    text = single_convert_ttgir(shape, element, src, dst, warps, target)
    lowered, outcomes = lower_text(text, filename="case")
    assert len(outcomes) == 1 and outcomes[0].lowered, outcomes
    path = os.path.join(cache, f"kernel-{form}.ttgir")
    with open(path, "w") as f:
        f.write(lowered)
    kernel = triton.compile(path, target=GPUTarget("cuda", int(target[3:]), 32))
    return outcomes[0].plan, lowered, kernel.asm["ptx"]


@pytest.fixture(scope="module")
def results():
    """Every case compiled in both forms: {(case index, form): (plan, lowered TTGIR, PTX)}."""
    mp = pytest.MonkeyPatch()
    out = {}
    with tempfile.TemporaryDirectory(prefix="ll_shared_forms_") as cache:
        mp.setenv("TRITON_CACHE_DIR", cache)
        mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")
        try:
            for i, case in enumerate(CASES):
                for form in ("llvm", "asm"):
                    out[i, form] = _compile(case, form, mp, cache)
        finally:
            mp.undo()
    return out


def test_the_cases_cover_every_access_width(results):
    planned = set()
    for (i, form), (plan, _, _) in results.items():
        planned |= set(expected_mix(plan))
    assert COVERED <= planned, f"no case plans {sorted(COVERED - planned)}"


@pytest.mark.parametrize("form", ["llvm", "asm"])
def test_the_ptx_holds_exactly_the_planned_accesses_in_both_forms(results, form):
    wrong = []
    for i, case in enumerate(CASES):
        plan, lowered, ptx = results[i, form]
        if form == "llvm":
            assert "llvm.inline_asm has_side_effects asm_dialect = att \"st.shared" not in lowered
            assert "asm_dialect = att \"ld.shared" not in lowered and "matrix.sync" not in lowered
        else:
            assert "llvm.store " not in lowered and "llvm.load " not in lowered and "nvvm.ldmatrix" not in lowered
        want = expected_mix(plan)
        got = measured_mix(ptx_mix(ptx), True, plan.src.in_dim_size("warp"))
        if +want != +got:
            wrong.append(f"case {i} {case[:4]}: plan {dict(+want)}, PTX {dict(+got)}")
        if _ptx_order(ptx) != _plan_order(plan):
            wrong.append(f"case {i} {case[:4]}: PTX order {_ptx_order(ptx)}, plan {_plan_order(plan)}")
    assert not wrong, "\n".join(wrong)


def test_both_forms_give_the_same_instruction_mix(results):
    for i in range(len(CASES)):
        llvm, asm = (Counter(ptx_mix(results[i, form][2])) for form in ("llvm", "asm"))
        keep = ("st.shared", "ld.shared", "ldmatrix", "stmatrix", "bar.")
        assert {k: v for k, v in llvm.items() if k.startswith(keep)} == \
               {k: v for k, v in asm.items() if k.startswith(keep)}, f"case {i}"
