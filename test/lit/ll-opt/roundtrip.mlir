// RUN: ll-opt %s | FileCheck %s

// No pipeline: the module is parsed and printed back by Triton (SSA names renumbered).

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK: tt.func public @f(%arg0: tensor<128xf32, #blocked>) -> tensor<128xf32, #blocked> {
  // CHECK-NEXT: %0 = arith.addf %arg0, %arg0 : tensor<128xf32, #blocked>
  // CHECK-NEXT: tt.return %0 : tensor<128xf32, #blocked>
  tt.func public @f(%x: tensor<128xf32, #blocked>) -> tensor<128xf32, #blocked> {
    %y = arith.addf %x, %x : tensor<128xf32, #blocked>
    tt.return %y : tensor<128xf32, #blocked>
  }
}
