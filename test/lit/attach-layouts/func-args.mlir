// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// Tensor arguments of a (non-kernel) function: ll.arg_layouts on the tt.func.

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 2 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK: tt.func private @helper(%arg0: tensor<64xf32, #blocked>, %arg1: i32) -> tensor<64xf32, #blocked> attributes {ll.arg_layouts = [#[[L:linear[0-9]*]], unit]
  tt.func private @helper(%x: tensor<64xf32, #blocked>, %k: i32) -> tensor<64xf32, #blocked> attributes {noinline = true} {
    tt.return %x : tensor<64xf32, #blocked>
  }
}
