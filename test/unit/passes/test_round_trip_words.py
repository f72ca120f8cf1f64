"""A conversion and its inverse pack the same 32-bit words (``lowering.swizzle.common_vector``).

A held-out 16-bit conversion (4096 elements, 2 warps; blocked, one element a thread, to a
``#ttg.linear`` whose registers hold offsets 2, 256, 2048, 8, 128, 1) converted there and back in
a loop ran 1.33x stock on an H100: the first conversion's loads paired each element with its
``x ^ 128`` and the return's stores with its ``x ^ 256``, so every word loaded was unpacked and
packed again (in the loop's PTX 128 ``mov.b32 {%rs, %rs}`` against stock's 64).  The vector's
order is now the same both ways, and LLVM folds the round trip's unpack and pack as it does
stock's.  The test compiles the loop both ways and counts."""

import re

import pytest

triton = pytest.importorskip("triton")

from support.sm90_compile import compiled_for_sm90  # noqa: E402

BLOCKED = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>"
LINEAR = ("#ttg.linear<{register = [[2], [256], [2048], [8], [128], [1]], lane = [[4], [1024], [64], [16], [512]], "
          "warp = [[32]], block = []}>")
ROUND_TRIP_LOOP = f"""
#a = {BLOCKED}
#b = {LINEAR}
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 2 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @round_trip(%X: !tt.ptr<i16>, %Y: !tt.ptr<i16>) {{
    %r = tt.make_range {{end = 4096 : i32, start = 0 : i32}} : tensor<4096xi32, #a>
    %xs = tt.splat %X : !tt.ptr<i16> -> tensor<4096x!tt.ptr<i16>, #a>
    %xp = tt.addptr %xs, %r : tensor<4096x!tt.ptr<i16>, #a>, tensor<4096xi32, #a>
    %x = tt.load %xp : tensor<4096x!tt.ptr<i16>, #a>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %cn = arith.constant 256 : i32
    %out = scf.for %i = %c0 to %cn step %c1 iter_args(%v = %x) -> (tensor<4096xi16, #a>) : i32 {{
      %ik = arith.trunci %i : i32 to i16
      %is = tt.splat %ik : i16 -> tensor<4096xi16, #a>
      %vi = arith.addi %v, %is : tensor<4096xi16, #a>
      %y = ttg.convert_layout %vi : tensor<4096xi16, #a> -> tensor<4096xi16, #b>
      %z = ttg.convert_layout %y : tensor<4096xi16, #b> -> tensor<4096xi16, #a>
      scf.yield %z : tensor<4096xi16, #a>
    }}
    %ys = tt.splat %Y : !tt.ptr<i16> -> tensor<4096x!tt.ptr<i16>, #a>
    %yp = tt.addptr %ys, %r : tensor<4096x!tt.ptr<i16>, #a>, tensor<4096xi32, #a>
    tt.store %yp, %out : tensor<4096x!tt.ptr<i16>, #a>
    tt.return
  }}
}}
"""


def _loop_ptx(tmp_path, ours: bool, monkeypatch) -> str:
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", "off")
    path = tmp_path / f"round_trip_{'ours' if ours else 'stock'}.ttgir"
    path.write_text(ROUND_TRIP_LOOP)
    kernel, islands = compiled_for_sm90(path, with_plugin=ours)
    assert islands == (2 if ours else 0)
    ptx = kernel.asm["ptx"]
    loop = ptx[ptx.index("Loop Header"):]
    return loop[:loop.index("bra")]


def test_the_round_trip_packs_no_more_words_than_stock(tmp_path, monkeypatch):
    stock, ours = _loop_ptx(tmp_path, False, monkeypatch), _loop_ptx(tmp_path, True, monkeypatch)
    packing = re.compile(r"mov\.b32\s+[^;]*\{")          # mov.b32 %r, {%rs, %rs} or its reverse
    assert ours.count("st.shared.v4.b32") == 16 and ours.count("ld.shared.v4.b32") == 16
    assert len(packing.findall(ours)) <= len(packing.findall(stock)) == 64
