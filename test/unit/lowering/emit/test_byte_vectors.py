"""The study switch ``emit_nvidia.BYTES_AS_VECTORS`` (``bytes_as_vectors``): the four bytes of a full
shared-memory word go through ``<4 x i8>`` instead of shifts.  Off by default (timed: on / off
1.013 over 57 i8 conversions, ``benchmarks/results/byte_vectors_gpu/byte_vectors_gpu.md``); these
tests show that the switch changes the emitted form, and that the island it emits passes the
simulator (the suite's strict check turns a failing island into an error)."""

from __future__ import annotations

from linear_layouts.passes.lower_conversions import lower_text
from linear_layouts.tools.fuzz.testcases import single_convert_ttgir

# an i8 conversion through shared memory whose words hold four bytes a thread
SRC = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [2, 2], order = [0, 1]}>"
DST = ("#ttg.linear<{register = [[2, 0], [0, 16], [16, 0], [4, 0], [8, 0], [1, 0]], lane = [[0, 4], [0, 8], "
       "[0, 32], [0, 1], [0, 64]], warp = [[0, 2], [0, 128]], block = []}>")


def _island(monkeypatch, switch: str) -> str:
    monkeypatch.setattr("linear_layouts.lowering.emit.emit_nvidia.BYTES_AS_VECTORS", switch not in ("", "0"))
    text, outcomes = lower_text(single_convert_ttgir((32, 256), "i8", SRC, DST, 4, "sm_90"), stock_gate=False)
    assert outcomes[0].lowered and str(outcomes[0].plan.method) == "shared"
    return text


def test_off_by_default_packs_with_shifts(monkeypatch):
    text = _island(monkeypatch, "")
    assert "vector<4xi8>" not in text and "llvm.shl" in text


def test_zero_is_off(monkeypatch):
    assert "vector<4xi8>" not in _island(monkeypatch, "0")


def test_on_packs_through_a_byte_vector(monkeypatch):
    text = _island(monkeypatch, "1")
    assert "vector<4xi8>" in text and "llvm.insertelement" in text and "llvm.extractelement" in text
