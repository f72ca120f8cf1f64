// RUN: ll-opt %s --split-input-file -p ll-classify-conversions | FileCheck %s

// Each chunk is a module of its own; the outputs are separated by '// -----' again.

// CHECK-LABEL: @first
// CHECK: ll.scope = "warp"
// CHECK: // -----
// CHECK-LABEL: @second
// CHECK: ll.scope = "none"
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @first(%x: tensor<32x32xf32, #blocked>) {
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#linear = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @second(%x: tensor<128xf32, #blocked>) {
    %0 = ttg.convert_layout %x : tensor<128xf32, #blocked> -> tensor<128xf32, #linear>
    tt.return
  }
}
