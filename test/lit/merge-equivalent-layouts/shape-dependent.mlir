// RUN: ll-opt %s -p ll-merge-equivalent-layouts | FileCheck %s

// The same two attributes as in basic.mlir, but #blocked1 is also used with an 8x64 tensor,
// where `order` decides which repetition comes first: not the same layout for every shape
// they are used with, so nothing is merged.

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @keep
  tt.func public @keep(%x: tensor<4x32xf32, #blocked>, %y: tensor<8x64xf32, #blocked1>) -> tensor<4x32xf32, #blocked1> {
    // CHECK: ttg.convert_layout %arg0 : tensor<4x32xf32, #blocked> -> tensor<4x32xf32, #blocked1>
    %0 = ttg.convert_layout %x : tensor<4x32xf32, #blocked> -> tensor<4x32xf32, #blocked1>
    tt.return %0 : tensor<4x32xf32, #blocked1>
  }
}
