"""What AMD's direct-to-LDS load (``ttg.async_copy_global_to_local`` on ``hip:``) requires of
its layout is a constraint of ``ll-resolve-auto-layouts`` and of the advice
(``passes/assign/backend_requirements.py``): one lane loads a vector of a width the target has
(gfx942: 4 bytes; gfx950: 4 or 16), the whole run its registers have consecutive in the
buffer, and a warp's lanes write one consecutive run.  The 16-byte layout a coalesced load
would take, right for a ``cp.async``, is rejected on gfx942.

The expected widths are the lowering's own verdicts: compiling ``[1, s]`` blocked layouts
(s = 1, 2, 4, 8) of a 64 x 64 f16 and f32 copy on the CPU for gfx942 and gfx950, under triton
3.6 and 3.9 alike, compiles exactly the cases marked valid below."""

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("triton.experimental.gluon")
from linear_layouts.passes.assign.backend_requirements import (AsyncCopyFacts, async_copy_problem,  # noqa: E402
                                                               best_async_copy_vector, direct_to_lds)
from linear_layouts.passes.assign.pointer_contiguity import Contiguity  # noqa: E402
from linear_layouts.passes.gluon.resolve_auto_layouts import resolve_module  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402
from support.async_copy_modules import advice_on_copy_widths, automatic_copy, laid_out_copy  # noqa: E402

KERNELS = pathlib.Path(__file__).with_name("amd_copy_kernels.py")


def _buffer(element, order="[1, 0]"):
    return (f"!ttg.memdesc<64x64x{element}, #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, "
            f"order = {order}}}>, #ttg.shared_memory, mutable>")


def _row(per_thread):
    """[1, per_thread] a thread, a warp's 64 lanes along the row first (as the coalesced layout)."""
    return (f"#ttg.blocked<{{sizePerThread = [1, {per_thread}], threadsPerWarp = [{per_thread}, {64 // per_thread}], "
            f"warpsPerCTA = [4, 1], order = [1, 0]}}>")


def _facts(element_bytes, arch, order="[1, 0]", mask=None, aligned=16):
    element = {2: "f16", 4: "f32"}[element_bytes]
    return AsyncCopyFacts((64, 64), element_bytes, Contiguity(1, aligned // element_bytes), mask,
                          _buffer(element, order), f"hip:{arch}")


# --------------------------------------------------------------------------- the requirement

@pytest.mark.parametrize("element_bytes, arch, valid", [
    (2, "gfx942", [2]),          # 4 bytes only
    (2, "gfx950", [2, 8]),       # 4 or 16 bytes
    (4, "gfx942", [1]),
    (4, "gfx950", [1, 4]),       # [1, 8] f32: 32 bytes consecutive, loaded 16 at a time (strided)
])
def test_valid_runs_are_the_lowerings(element_bytes, arch, valid):
    facts = _facts(element_bytes, arch)
    assert [s for s in (1, 2, 4, 8) if async_copy_problem(_row(s), facts) is None] == valid


def test_problems_name_the_op_and_the_width():
    assert async_copy_problem(_row(8), _facts(2, "gfx942")) == \
        "the direct-to-LDS load (ttg.async_copy_global_to_local on gfx942) would load 16 bytes a lane (gfx942 has 4)"
    assert async_copy_problem(_row(4), _facts(2, "gfx950")) == \
        "the direct-to-LDS load (ttg.async_copy_global_to_local on gfx950) would load 8 bytes a lane (gfx950 has 4 or 16)"
    assert async_copy_problem(_row(8), _facts(4, "gfx950")).endswith(
        "would load 16 bytes a lane into 32 consecutive bytes of shared memory (a strided write): "
        "more than 16 bytes consecutive in one lane")


def test_alignment_below_the_run_is_a_strided_write():
    """f16 pointers known 4-byte aligned: [1, 8] would load 2 f16 at a time into 8 consecutive
    (the lowering: "the global load vectorization (2) is smaller than the shared memory
    contiguity (8)"); [1, 2] is valid."""
    copy = direct_to_lds(_row(8), _facts(2, "gfx950", aligned=4))
    assert (copy.shared_run, copy.vector, copy.lanes_consecutive) == (8, 2, True)
    assert async_copy_problem(_row(8), _facts(2, "gfx950", aligned=4)) == (
        "the direct-to-LDS load (ttg.async_copy_global_to_local on gfx950) would load 4 bytes a lane into 16 "
        "consecutive bytes of shared memory (a strided write): its pointers are known 4-byte aligned only "
        "(tt.divisibility of the base and strides)")
    assert async_copy_problem(_row(2), _facts(2, "gfx950", aligned=4)) is None


def test_lanes_down_a_column_of_a_row_major_buffer_are_rejected():
    """Lanes along dim 0 of a row-major buffer: lane 1 moves 64 elements, not 2."""
    key = ("#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [64, 1], warpsPerCTA = [1, 4], "
           "order = [1, 0]}>")
    copy = direct_to_lds(key, _facts(2, "gfx942"))
    assert (copy.shared_run, copy.vector, copy.lanes_consecutive) == (2, 2, False)
    assert "a warp's lanes would not write consecutive shared memory" in async_copy_problem(key, _facts(2, "gfx942"))


@pytest.mark.parametrize("element_bytes, arch, vector", [(2, "gfx942", 2), (2, "gfx950", 8), (4, "gfx942", 1),
                                                          (4, "gfx950", 4)])
def test_the_coalesced_seed_takes_the_widest_width_the_target_has(element_bytes, arch, vector):
    assert best_async_copy_vector(_facts(element_bytes, arch)) == vector


def test_cuda_copies_keep_the_cp_async_rule():
    facts = AsyncCopyFacts((64, 64), 2, Contiguity(1, 8), None, _buffer("f16"), "cuda:90")
    assert async_copy_problem(_row(8), facts) is None and best_async_copy_vector(facts) == 8


# --------------------------------------------------------------------------- the pass on TTGIR

_SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


@pytest.mark.parametrize("arch, per_thread", [("gfx942", "[1, 2]"), ("gfx950", "[1, 8]")])
def test_resolution_gives_the_copy_a_width_the_target_has(arch, per_thread):
    module = parse_module(automatic_copy(f"hip:{arch}", 64, _SHARED), "copy.mlir", safe=False)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    (copy,) = module.ops_named("ttg.async_copy_global_to_local")
    assert f"sizePerThread = {per_thread}" in copy.operands[0].tensor_type.encoding


# --------------------------------------------------------------------------- the advice

def test_advice_keeps_a_layout_whose_replacement_breaks_a_direct_to_lds_load():
    """ll-apply-advice replaces a layout variable everywhere: on gfx942 not where the direct-to-LDS
    load laid out in it would then load 16 bytes (eight f16) a lane; two (4 bytes) is what it has."""
    laid_out, kept = advice_on_copy_widths("hip:gfx942", lanes=64, per_thread=2, widths=(8, 4))
    assert kept == {8: [laid_out], 4: [laid_out]}


# --------------------------------------------------------------------------- Gluon, compiled

def _compile(tmp_path, dtype, arch):
    env = {**__import__("os").environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, str(KERNELS), "global_to_shared", dtype, arch], capture_output=True, text=True, timeout=600,
                         env=env)
    lines = run.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if run.returncode == 0 and lines else None), run.stderr


def _front_end_takes_automatic_copies():
    from triton.experimental.gluon.language.amd.cdna4 import async_copy
    import inspect
    return "DistributedLayout" in inspect.getsource(async_copy.global_load_to_shared)


@pytest.mark.skipif(not _front_end_takes_automatic_copies(),
                    reason="this triton's Gluon asks for a blocked or slice layout in global_load_to_shared")
@pytest.mark.parametrize("dtype, arch, per_thread, load", [
    ("fp16", "gfx942", [1, 2], "global_load_lds_dword"),      # was [1, 8]: 16 bytes, rejected
    ("fp32", "gfx942", [1, 1], "global_load_lds_dword"),      # was [1, 4]: 16 bytes, rejected
    ("fp16", "gfx950", [1, 8], "global_load_lds_dwordx4"),
    ("fp32", "gfx950", [1, 4], "global_load_lds_dwordx4"),
])
def test_automatic_direct_to_lds_copy_compiles(tmp_path, dtype, arch, per_thread, load):
    """The copy made automatic: ours resolves it to a width the target's direct-to-LDS loads
    have and the kernel compiles; the coalesced 16-byte layout (what ours chose before) made
    Triton's AMD lowering fail on gfx942 ("the coalesced 128-bit direct-to-LDS transaction width
    is not supported on this target"), and Triton's own resolution fails on every one."""
    verdict, stderr = _compile(tmp_path, dtype, arch)
    assert "direct-to-LDS transaction width is not supported" not in stderr
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["size_per_thread"] == per_thread and verdict["loads"] == [load]
    assert verdict["fallbacks"] == []


def test_advice_for_a_load_sharing_the_layout_says_why_the_copy_keeps_it():
    """A load's suggestion that would break the direct-to-LDS load laid out alike is said to be
    for the load alone, with the AMD reason (not the cp.async one, "under 4 bytes")."""
    from linear_layouts.passes.advice.findings import Finding
    from linear_layouts.passes.advice.layout_advice import _kept_for_requirements
    from linear_layouts.passes.assign.pointer_contiguity import PointerAnalysis
    from linear_layouts.passes.ir.module_lines import ModuleLines
    module = parse_module(laid_out_copy("hip:gfx942", lanes=64, per_thread=2), "laid_out.mlir", safe=False)
    lines = ModuleLines(module, module.print(debuginfo=True))
    (function,) = module.ops_named("tt.func")
    pointers = PointerAnalysis.of_function(lines, function)
    (copy,) = module.ops_named("ttg.async_copy_global_to_local")
    laid_out = copy.operands[0].tensor_type.encoding
    eight = laid_out.replace("sizePerThread = [2]", "sizePerThread = [8]")
    finding = Finding("k.py:1", "tt.load", "global access", "", "write L8", 1.5, layout=eight)
    kept = _kept_for_requirements(finding, copy, [(copy, AsyncCopyFacts.of(copy, pointers))])
    assert kept.suggestion.endswith(
        "in the suggestion it would be rejected (the direct-to-LDS load (ttg.async_copy_global_to_local on gfx942) "
        "would load 16 bytes a lane (gfx942 has 4)))")
    assert "under 4 bytes" not in kept.suggestion
