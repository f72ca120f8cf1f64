// RUN: ll-opt %s -p ll-merge-equivalent-layouts | FileCheck %s

// #blocked and #blocked1 differ only in `order`, which does not matter for a 4x32 tensor (one
// lane per column, one warp per row, no repetition): they are the same linear layout.  The
// module keeps #blocked, and the conversion between them folds away.

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-NOT: #blocked1
  // CHECK-LABEL: tt.func public @merge
  // CHECK-SAME: (%arg0: tensor<4x32xf32, #blocked>) -> tensor<4x32xf32, #blocked>
  tt.func public @merge(%x: tensor<4x32xf32, #blocked>) -> tensor<4x32xf32, #blocked1> {
    // CHECK-NOT: ttg.convert_layout
    // CHECK: tt.return %arg0 : tensor<4x32xf32, #blocked>
    %0 = ttg.convert_layout %x : tensor<4x32xf32, #blocked> -> tensor<4x32xf32, #blocked1>
    tt.return %0 : tensor<4x32xf32, #blocked1>
  }
}
