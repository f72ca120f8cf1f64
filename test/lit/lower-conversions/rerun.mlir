// RUN: ll-opt %s -p ll-attach-layouts,ll-classify-conversions,ll-lower-conversions{stock_gate=false} -o %t.once
// RUN: ll-opt %s -p ll-attach-layouts,ll-classify-conversions,ll-lower-conversions{stock_gate=false},ll-lower-conversions{stock_gate=false} -o %t.twice
// RUN: ll-opt %t.once -p "ll-lower-conversions{stock_gate=false}" -o %t.again
// RUN: diff %t.once %t.twice
// RUN: diff %t.once %t.again
// RUN: FileCheck %s < %t.again

// ll-lower-conversions run again, in one pipeline or on its own output, changes nothing: the
// island of the first run stays, with the attributes the passes before it set (no convert is
// left to lower).  (ll-attach-layouts run again after it would annotate the island's own ops.)

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @transpose
  // CHECK-SAME: attributes {ll.arg_layouts = [#linear]}
  tt.func public @transpose(%x: tensor<32x32xf32, #blocked>) -> tensor<32x32xf32, #blocked1> {
    // CHECK-NOT: ttg.convert_layout
    // CHECK: ttg.local_alloc : () -> !ttg.memdesc<4096xi8
    // CHECK-NOT: ttg.convert_layout
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return %0 : tensor<32x32xf32, #blocked1>
  }
}
