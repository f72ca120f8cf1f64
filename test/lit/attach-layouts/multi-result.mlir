// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// An op with several tensor results gets an array, one layout per result, in result order.

#blocked = #ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @split
  tt.func public @split(%arg0: tensor<256x2xf32, #blocked>) {
    // CHECK: %{{.*}}, %{{.*}} = tt.split %arg0 {ll.layout = [#[[H:linear[0-9]*]], #[[H]]]} : tensor<256x2xf32, #blocked> -> tensor<256xf32, #blocked1>
    %lo, %hi = tt.split %arg0 : tensor<256x2xf32, #blocked> -> tensor<256xf32, #blocked1>
    tt.return
  }
}
