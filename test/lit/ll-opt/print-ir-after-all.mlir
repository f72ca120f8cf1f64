// RUN: ll-opt %s -p ll-attach-layouts,ll-classify-conversions --print-ir-after-all -o %t 2>&1 | FileCheck %s

// The IR after every pass goes to stderr, like mlir-opt's --mlir-print-ir-after-all.

// CHECK: // -----// IR Dump After ll-attach-layouts //----- //
// CHECK: ttg.convert_layout %arg0 {ll.layout = #{{linear[0-9]*}}}
// CHECK: // -----// IR Dump After ll-classify-conversions //----- //
// CHECK: ttg.convert_layout %arg0 {ll.layout = #{{linear[0-9]*}}, ll.scope = "warp"}
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @t(%x: tensor<32x32xf32, #blocked>) {
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return
  }
}
