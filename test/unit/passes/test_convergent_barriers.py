"""Our islands' barriers are calls of NVVM intrinsics, which LLVM knows are convergent
(``lowering.emit.emit_nvidia``, "barriers").

Why: as inline PTX, LLVM was free to copy a barrier under a branch.  On the held-out conversion
fresh9703/45 (i8, 64 elements, 4 warps: blocked -> slice through shared memory, and back by
selecting among a thread's own registers by its lane), in a loop converting there and back,
LLVM unswitched the loop on the lane's conditions: one copy of the loop per combination, each
with its own ``bar.sync``, threads of one warp in different copies.  The kernel hung on an
H100.  Compiled as text islands (the route under triton 3.7 to 3.9, and for every plan not
built in place under 3.6), the loop must stay one loop, its barriers those of the plan."""

import re

import pytest

triton = pytest.importorskip("triton")

import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in.in_place import IN_PLACE_VARIABLE  # noqa: E402
from support.sm90_compile import compiled_for_sm90  # noqa: E402

# x = load (blocked: one element a thread, the 64 elements twice over the 4 warps); 256 times
# x = convert(convert(x + i) to the slice) back; store.
LANE_SELECT_LOOP = """
#src = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#dst = #ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [4, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [1, 0]}>}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @lane_select(%X: !tt.ptr<i8>, %Y: !tt.ptr<i8>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #src>
    %xs = tt.splat %X : !tt.ptr<i8> -> tensor<64x!tt.ptr<i8>, #src>
    %xp = tt.addptr %xs, %r : tensor<64x!tt.ptr<i8>, #src>, tensor<64xi32, #src>
    %x = tt.load %xp : tensor<64x!tt.ptr<i8>, #src>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %cn = arith.constant 256 : i32
    %out = scf.for %i = %c0 to %cn step %c1 iter_args(%a = %x) -> (tensor<64xi8, #src>) : i32 {
      %ik = arith.trunci %i : i32 to i8
      %is = tt.splat %ik : i8 -> tensor<64xi8, #src>
      %ai = arith.addi %a, %is : tensor<64xi8, #src>
      %y = ttg.convert_layout %ai : tensor<64xi8, #src> -> tensor<64xi8, #dst>
      %b = ttg.convert_layout %y : tensor<64xi8, #dst> -> tensor<64xi8, #src>
      scf.yield %b : tensor<64xi8, #src>
    }
    %ys = tt.splat %Y : !tt.ptr<i8> -> tensor<64x!tt.ptr<i8>, #src>
    %yp = tt.addptr %ys, %r : tensor<64x!tt.ptr<i8>, #src>, tensor<64xi32, #src>
    tt.store %yp, %out : tensor<64x!tt.ptr<i8>, #src>
    tt.return
  }
}
"""


@pytest.fixture
def text_islands(monkeypatch):
    monkeypatch.setenv(IN_PLACE_VARIABLE, "0")
    monkeypatch.setenv("LINEAR_LAYOUTS_STOCK_GATE", "off")
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", "off")
    yield
    linear_layouts.disable()


def _compiled(tmp_path):
    path = tmp_path / "lane_select.ttgir"
    path.write_text(LANE_SELECT_LOOP)
    kernel, islands = compiled_for_sm90(path, with_plugin=True)
    assert islands == 2, "both conversions are islands"
    return kernel.asm["llir"], kernel.asm["ptx"]


def test_the_loop_is_not_unswitched_on_the_lane(text_islands, tmp_path):
    llir, ptx = _compiled(tmp_path)
    assert ptx.count("Inner Loop Header") == 1, "one copy of the loop"
    assert ".split" not in llir
    # the loop's barriers: the guard before the stores (the island is alone in its loop, the
    # only one after its loads is itself: "guard alone") and the plan's own
    loop = ptx[ptx.index("Inner Loop Header"):]
    loop = loop[:loop.index("bra")]
    assert loop.count("bar.sync") == 2
    # no barrier is inline PTX any more: each is an NVVM call, after its marker
    assert not re.search(r'asm sideeffect "[^"]*bar\.sync', llir)
    markers = re.findall(r'asm sideeffect "(// [a-z ]+)"', llir)
    assert sorted(set(markers)) == ["// guard alone", "// island barrier"]


def test_inline_barriers_were_unswitched(text_islands, tmp_path, monkeypatch):
    """The same kernel with the island barriers spelled as inline PTX again: LLVM copies the
    loop (what hung on the GPU).  Shows what the test above guards against."""
    from linear_layouts.lowering.emit import emit_nvidia

    def inline_barrier(self, w, scope, guard=False, alone=False):
        w.counts["guard bar.sync" if guard else "bar.sync"] += 1
        w.inline_asm("bar.sync 0;", "", [], [], None)
    monkeypatch.setattr(emit_nvidia.NvidiaInstructions, "barrier", inline_barrier)
    _, ptx = _compiled(tmp_path)
    assert ptx.count("Inner Loop Header") > 1
