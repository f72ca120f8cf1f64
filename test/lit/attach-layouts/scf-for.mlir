// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// Loop-carried tensors are block arguments: their layouts go on the scf.for as
// ll.arg_layouts, one entry per argument (unit for the induction variable).

#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @loop
  tt.func public @loop(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0.000000e+00> : tensor<128xf32, #blocked>
    // CHECK: %[[SUM:.*]] = scf.for
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128xf32, #blocked>) : i32 {
      // CHECK: arith.addf {{.*}} {ll.layout = #[[L:linear[0-9]*]]}
      %next = arith.addf %acc, %acc : tensor<128xf32, #blocked>
      scf.yield %next : tensor<128xf32, #blocked>
    // CHECK: } {ll.arg_layouts = [unit, #[[L]]], ll.layout = #[[L]]}
    }
    tt.return
  }
}
