// RUN: ll-opt %s -p ll-classify-conversions | FileCheck %s

// Lane broadcasting is not removed: going from 16 distinct lanes (the upper half of the warp
// repeats the lower half) to 32 distinct lanes makes lanes exchange data.

#linear = #ttg.linear<{register = [[16]], lane = [[1], [2], [4], [8], [0]], warp = [], block = []}>
#linear1 = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @spread
  tt.func public @spread(%x: tensor<32xf32, #linear>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "lane"}
    %0 = ttg.convert_layout %x : tensor<32xf32, #linear> -> tensor<32xf32, #linear1>
    tt.return
  }
}
