"""What the backend requires of a ``cp.async``'s layout is a constraint of
``ll-resolve-auto-layouts`` and of the advice, never a cost: each thread copies at least 4 bytes
(``passes/assign/backend_requirements.py``), as Triton's lowering computes it from the pointers'
alignment, the mask and the buffer; where no layout can, the kernel is left to Triton with the
reason, never handed on invalid.

The compiles run in a subprocess (``cp_async_kernels.py``): Triton may abort on an invalid
kernel."""

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("triton.experimental.gluon")
from linear_layouts.passes.assign.backend_requirements import AsyncCopyFacts, async_copy_elements  # noqa: E402
from linear_layouts.passes.assign.pointer_contiguity import Contiguity  # noqa: E402
from linear_layouts.passes.gluon.resolve_auto_layouts import resolve_module  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402
from support.async_copy_modules import advice_on_copy_widths, automatic_copy  # noqa: E402

KERNELS = pathlib.Path(__file__).with_name("cp_async_kernels.py")
INVALID = "cp.async does not support transfers smaller than 4 bytes"


def _compile(tmp_path, name, dtype, arch, divisibility):
    """(the verdict of cp_async_kernels.py, or None where the process died; its stderr)."""
    env = {**__import__("os").environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, str(KERNELS), name, dtype, str(arch), str(divisibility)],
                         capture_output=True, text=True, timeout=600, env=env)
    lines = run.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if run.returncode == 0 and lines else None), run.stderr


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", ["tile_sum", "masked_copy"])
def test_fp16_cp_async_made_automatic_copies_16_bytes(tmp_path, name, arch):
    """16-byte aligned f16 pointers: 8 elements a thread along the rows, one cp.async.cg of 16
    bytes each (the rows a thread holds, 1 or a 2-D tile of 4 that its local load reads as
    well, are the cost model's).  The loop-carried pointers of tile_sum (as attention kernels
    advance K and V) were unread: the copy got one f16 a thread and Triton rejected the kernel
    (2 bytes)."""
    verdict, stderr = _compile(tmp_path, name, "fp16", arch, 16)
    assert INVALID not in stderr
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["copies"] == [["cg", 16]] and verdict["size_per_thread"][1] == 8
    assert verdict["fallbacks"] == []


@pytest.mark.parametrize("arch", [80, 90])
def test_fp16_rows_clamped_with_minimum_copy_16_bytes(tmp_path, arch):
    """Rows clamped to the last valid one (``gl.minimum(t, n - 1)``, as flash-linear-attention's
    attention-residual kernels read tokens): the row offset is no affine function of the index,
    but constant along the contiguous dim, whose 8 f16 stay 16-byte aligned.  The analysis did
    not read ``arith.minsi`` and the automatic form was left to Triton, whose resolution fails."""
    verdict, stderr = _compile(tmp_path, "clamped_rows", "fp16", arch, 16)
    assert INVALID not in stderr
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["copies"] == [["cg", 16]] and verdict["size_per_thread"] == [1, 8]
    assert verdict["fallbacks"] == []


def test_fp16_pointers_known_4_byte_aligned_copy_4_bytes(tmp_path):
    """tt.divisibility = 4: two f16 a thread (cp.async.ca of 4 bytes), no more."""
    verdict, stderr = _compile(tmp_path, "tile_sum", "fp16", 80, 4)
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["copies"] == [["ca", 4]] and verdict["size_per_thread"] == [1, 2]


def test_fp16_pointers_of_unknown_alignment_are_never_an_invalid_kernel(tmp_path):
    """No tt.divisibility: Triton's axis analysis knows the f16 pointers 2-byte aligned only, so
    its lowering computes 2-byte copies whatever the layout.  Ours hands no such kernel on: it
    leaves the layouts to Triton's own resolution (which rejects this kernel too), so the error
    is Triton's resolution's, not the invalid cp.async."""
    verdict, stderr = _compile(tmp_path, "tile_sum", "fp16", 90, 0)
    assert verdict is None or not verdict["compiled"]
    assert INVALID not in stderr


def test_fp32_pointers_of_unknown_alignment_copy_4_bytes(tmp_path):
    """An f32 is 4 bytes: one element a thread is valid with any alignment (cp.async.ca, 4)."""
    verdict, stderr = _compile(tmp_path, "tile_sum", "fp32", 80, 0)
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["copies"] == [["ca", 4]]


# --------------------------------------------------------------------------- the pass on TTGIR

_SHARED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


def _copy_module(divisibility):
    return parse_module(automatic_copy("cuda:80", 32, _SHARED, divisibility), "copy.mlir", safe=False)


def test_resolution_gives_the_copy_16_bytes_a_thread():
    module = _copy_module(16)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    (copy,) = module.ops_named("ttg.async_copy_global_to_local")
    assert "sizePerThread = [1, 8]" in copy.operands[0].tensor_type.encoding


def test_resolution_says_why_no_layout_is_valid():
    """Unknown alignment: not resolved (left to Triton), and the reason names the alignment."""
    resolution = resolve_module(_copy_module(0), compare=False)
    assert not resolution.resolved
    assert "cp.async would copy 2 bytes per instruction" in resolution.reason
    assert "known 2-byte aligned only" in resolution.reason and "left to Triton's resolution" in resolution.reason


def _last_check_events(monkeypatch, lines_up: bool) -> tuple[list, str]:
    """The resolution of the unaligned copy with the solver's own check of the backend off, so
    that the last check (before the module is handed on) is what rejects it: (the order in
    which it checked and canonicalized, the reason); ``lines_up=False``: as where the chosen
    text does not line up with the module parsed from it."""
    from linear_layouts.passes.gluon import backend_check, resolve_auto_layouts
    from linear_layouts.passes.ir.snapshot import Module

    events = []
    monkeypatch.setattr(resolve_auto_layouts, "enforce_requirements", lambda graph, pinned: [])
    check = backend_check.check_backend_requirements
    monkeypatch.setattr(backend_check, "check_backend_requirements",
                        lambda module, lines: events.append("checked") or check(module, lines))
    canonicalize = Module.canonicalize_and_cse
    monkeypatch.setattr(Module, "canonicalize_and_cse",
                        lambda module: events.append("canonicalized") or canonicalize(module))
    if not lines_up:
        monkeypatch.setattr(backend_check, "check_on_parsed_text", lambda module, text: False)
    resolution = resolve_module(_copy_module(0), compare=False)
    assert not resolution.resolved
    return events, resolution.reason


def test_the_last_check_reads_the_parsed_module_before_canonicalization_or_else_its_print(monkeypatch):
    """The check reads the module as parsed, with the text it was parsed from (no print: the
    canonicalizer changes neither the copy's pointer layout nor the function's arguments);
    where that text does not line up, the canonicalized module's print, with the same verdict."""
    parsed, reason = _last_check_events(monkeypatch, lines_up=True)
    assert parsed == ["checked"]              # rejected before the canonicalizer ran
    assert "cp.async would copy 2 bytes per instruction" in reason
    monkeypatch.undo()
    printed, printed_reason = _last_check_events(monkeypatch, lines_up=False)
    assert printed == ["canonicalized", "checked"] and printed_reason == reason


def test_the_last_check_takes_only_the_text_its_module_was_parsed_from():
    from linear_layouts.passes.gluon.backend_check import check_on_parsed_text

    module = _copy_module(16)
    assert resolve_module(module, compare=False).resolved
    text = module.print(debuginfo=True)
    assert check_on_parsed_text(module, text)
    assert not check_on_parsed_text(module, None)
    assert not check_on_parsed_text(module, text.replace("tt.store", "tt.load"))


# --------------------------------------------------------------------------- the backend's vector

_ROW_MAJOR = ("!ttg.memdesc<64x64xf16, #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>, "
              "#ttg.shared_memory, mutable>")
_COLUMN_MAJOR = _ROW_MAJOR.replace("order = [1, 0]", "order = [0, 1]")


def _blocked(per_thread, lanes, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {per_thread}, threadsPerWarp = {lanes}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


@pytest.mark.parametrize("key, buffer, mask, elements", [
    (_blocked([1, 8], [4, 8], [4, 1], [1, 0]), _ROW_MAJOR, None, 8),        # 16 bytes
    (_blocked([1, 1], [1, 32], [4, 1], [1, 0]), _ROW_MAJOR, None, 1),       # 2 bytes: rejected
    (_blocked([8, 1], [8, 4], [1, 4], [0, 1]), _ROW_MAJOR, None, 1),        # registers run down a column
    (_blocked([1, 8], [4, 8], [4, 1], [1, 0]), _COLUMN_MAJOR, None, 1),     # the buffer's run another way
    (_blocked([1, 8], [4, 8], [4, 1], [1, 0]), _ROW_MAJOR, (64, 2), 2),     # a mask bit every 2 elements
])
def test_async_copy_elements_as_the_backend_computes_them(key, buffer, mask, elements):
    facts = AsyncCopyFacts((64, 64), 2, Contiguity(1, 8), mask, buffer)
    assert async_copy_elements(key, facts) == elements


# --------------------------------------------------------------------------- the advice

def test_advice_keeps_a_layout_whose_replacement_breaks_a_cp_async():
    """ll-apply-advice replaces a layout variable everywhere: not where a cp.async laid out in
    it would then copy one f16 (2 bytes) a thread; four (8 bytes) is fine."""
    laid_out, kept = advice_on_copy_widths("cuda:80", lanes=32, per_thread=8, widths=(1, 4))
    assert kept == {1: [laid_out], 4: []}
