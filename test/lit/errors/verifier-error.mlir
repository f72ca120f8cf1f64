// RUN: not ll-opt %s 2>&1 | FileCheck %s

// The module parses but fails Triton's verifier: its message and location are reported.

// CHECK: ll-opt: error: {{.*}}verifier-error.mlir:[[# @LINE + 5]]:{{[0-9]+}}: 'tt.broadcast' op requires {{.*}}
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @f(%x: tensor<1x32xf32, #blocked>) {
    %0 = tt.broadcast %x : tensor<1x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return
  }
}
