// RUN: ll-opt %s --split-input-file -p ll-classify-conversions -o %t.once
// RUN: ll-opt %s --split-input-file -p ll-classify-conversions,ll-classify-conversions -o %t.twice
// RUN: ll-opt %t.once --split-input-file -p ll-classify-conversions -o %t.again
// RUN: ll-opt %s --split-input-file -p ll-attach-layouts,ll-classify-conversions,ll-attach-layouts,ll-classify-conversions -o %t.both-twice
// RUN: ll-opt %s --split-input-file -p ll-attach-layouts,ll-classify-conversions -o %t.both-once
// RUN: diff %t.once %t.twice
// RUN: diff %t.once %t.again
// RUN: diff %t.both-once %t.both-twice
// RUN: FileCheck %s < %t.again

// ll-classify-conversions run again (in one pipeline, or on its own output) replaces the ll.scope
// it set (it once failed: "duplicate key 'll.scope'"), and so does a first run over an ll.scope
// that is wrong.

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @transpose
  tt.func public @transpose(%x: tensor<32x32xf32, #blocked>) -> tensor<32x32xf32, #blocked1> {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "warp"} :
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return %0 : tensor<32x32xf32, #blocked1>
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @stale_scope
  tt.func public @stale_scope(%x: tensor<32x32xf32, #blocked>) -> tensor<32x32xf32, #blocked1> {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "warp"} :
    %0 = ttg.convert_layout %x {ll.scope = "none"} : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return %0 : tensor<32x32xf32, #blocked1>
  }
}
