// RUN: ll-opt %s -p ll-merge-equivalent-layouts,ll-classify-conversions | FileCheck %s

// After merging, the remaining conversion is the real one and gets classified.

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @chain
  tt.func public @chain(%x: tensor<32x32xf32, #blocked>) -> tensor<32x32xf32, #blocked2> {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "warp"} : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    // CHECK-NOT: ttg.convert_layout
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    %1 = ttg.convert_layout %0 : tensor<32x32xf32, #blocked1> -> tensor<32x32xf32, #blocked2>
    tt.return %1 : tensor<32x32xf32, #blocked2>
  }
}
