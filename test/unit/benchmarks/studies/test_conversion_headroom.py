"""benchmarks/studies/conversion_headroom_gpu.py without a GPU: the free conversion reads every source
register (or the code computing them would be dead and the bound too low) and compiles."""

import os
import re
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks", "studies"))
import conversion_headroom_gpu as headroom  # noqa: E402

from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402

# gemv's two conversions: x (one register per thread) to the slice a 2-D tile broadcasts (8), and
# the row sums (8 registers: rows) back to one register per thread for the store.
MODULE = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: tensor<128x{T}, #blocked1>, %rows: tensor<64x{T}, #ttg.slice<{dim = 1, parent = #blocked}>>) {
    %a = ttg.convert_layout %x : tensor<128x{T}, #blocked1> -> tensor<128x{T}, #ttg.slice<{dim = 0, parent = #blocked}>>
    %b = ttg.convert_layout %rows : tensor<64x{T}, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x{T}, #blocked1>
    tt.return
  }
}
"""


def _islands(element: str):
    module = parse_module(MODULE.replace("{T}", element), "<test>")
    converts = [op for op in module.walk() if op.name == "ttg.convert_layout"]
    return [headroom.reinterpretation_island(op).text for op in converts]


def _read_registers(text: str) -> set[int]:
    """Source registers some op of the island reads (not only extracts)."""
    uses = re.findall(r"%free_r(\d+)\b", "\n".join(line.split("=", 1)[1] for line in text.splitlines() if "=" in line))
    return {int(u) for u in uses}


@pytest.mark.parametrize("element", ["f32", "f16", "bf16", "i1", "i32", "i64", "!tt.ptr<f32>"])
def test_every_source_register_is_read(element):
    broadcast, gather = _islands(element)
    # 1 source register -> 8: each result register is register 0
    assert _read_registers(broadcast) == {0}
    assert broadcast.count("llvm.insertvalue %free_r0,") == 8
    # 8 source registers -> 1: the result is the xor of all 8 (7 xors), none left dead
    assert _read_registers(gather) == set(range(8))
    assert gather.count("llvm.xor") == 7
    assert "llvm.insertvalue %free_x0," in gather


STORED = MODULE.replace(
    "%rows: tensor<64x{T}, #ttg.slice<{dim = 1, parent = #blocked}>>)",
    "%rows: tensor<64x{T}, #ttg.slice<{dim = 1, parent = #blocked}>>, "
    "%pa: tensor<128x!tt.ptr<{T}>, #ttg.slice<{dim = 0, parent = #blocked}>>, %pb: tensor<64x!tt.ptr<{T}>, #blocked1>)"
).replace("    tt.return", "    tt.store %pa, %a : tensor<128x!tt.ptr<{T}>, #ttg.slice<{dim = 0, parent = #blocked}>>\n"
          "    tt.store %pb, %b : tensor<64x!tt.ptr<{T}>, #blocked1>\n    tt.return")


def test_free_mode_compiles_and_counts(tmp_path):
    import triton
    from triton.backends.compiler import GPUTarget

    import linear_layouts

    headroom.FreeConversions.freed = 0
    path = tmp_path / "k.ttgir"
    path.write_text(STORED.replace("{T}", "f16"))
    # An empty Triton cache: the free mode is not in the plugin's cache key, so a kernel cached
    # by an earlier run would be reused without compiling (nothing freed, nothing checked).
    saved = triton.knobs.cache.dir
    triton.knobs.cache.dir = str(tmp_path / "cache")
    linear_layouts.enable()
    try:
        with headroom.FreeConversions():
            compiled = triton.compile(str(path), target=GPUTarget("cuda", 90, 32))
    finally:
        linear_layouts.disable()
        triton.knobs.cache.dir = saved
    assert headroom.FreeConversions.freed == 2
    assert "bar.sync" not in compiled.asm["ptx"] and "shfl" not in compiled.asm["ptx"]
