// RUN: ll-opt %s -p ll-merge-equivalent-layouts | FileCheck %s

// #linear is exactly the mma.sync accumulator layout of a 16x8 tile.  tt.dot needs #mma, so
// #mma is the one kept: #linear is rewritten into it, never the other way round.

#linear = #ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-NOT: #linear
  // CHECK-LABEL: tt.func public @acc
  // CHECK-SAME: (%arg0: tensor<16x8xf32, #mma>) -> tensor<16x8xf32, #mma>
  tt.func public @acc(%x: tensor<16x8xf32, #mma>) -> tensor<16x8xf32, #linear> {
    // CHECK-NOT: ttg.convert_layout
    %0 = ttg.convert_layout %x : tensor<16x8xf32, #mma> -> tensor<16x8xf32, #linear>
    tt.return %0 : tensor<16x8xf32, #linear>
  }
}
