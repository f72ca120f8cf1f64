// RUN: ll-opt %s -p ll-classify-conversions | FileCheck %s

// A layout whose threads hold a broadcast copy in a second register (a zero register basis)
// holds the same data as one without it: the copy is not data to move, so the conversion is
// a no-op once register broadcasting is removed.

#linear = #ttg.linear<{register = [[0]], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>
#linear1 = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @drop_copy
  tt.func public @drop_copy(%x: tensor<32xf32, #linear>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "none"}
    %0 = ttg.convert_layout %x : tensor<32xf32, #linear> -> tensor<32xf32, #linear1>
    tt.return
  }
}
