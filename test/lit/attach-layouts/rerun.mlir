// RUN: ll-opt %s -p ll-attach-layouts -o %t.once
// RUN: ll-opt %s -p ll-attach-layouts,ll-attach-layouts -o %t.twice
// RUN: ll-opt %t.once -p ll-attach-layouts -o %t.again
// RUN: diff %t.once %t.twice
// RUN: diff %t.once %t.again
// RUN: FileCheck %s < %t.again

// Passes are re-run (Triton runs its own pipelines over and over): ll-attach-layouts run twice in
// one pipeline, or again on its own output, replaces the attributes it set the first time (MLIR
// refuses a dictionary with a key twice: "duplicate key 'll.arg_layouts'").  Here: a function's
// ll.arg_layouts beside another attribute of its own, a loop's ll.arg_layouts and ll.layout after
// its body, an op whose ll.layout shares its dictionary with attributes whose values hold
// commas, braces, brackets, quotes and an arrow.

#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func private @helper
  // CHECK-SAME: attributes {ll.arg_layouts = [#[[L:linear[0-9]*]], unit], noinline = true}
  tt.func private @helper(%x: tensor<128xf32, #blocked>, %k: i32) -> tensor<128xf32, #blocked> attributes {noinline = true} {
    tt.return %x : tensor<128xf32, #blocked>
  }
  // CHECK-LABEL: tt.func public @loop
  tt.func public @loop(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0.000000e+00> : tensor<128xf32, #blocked>
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128xf32, #blocked>) : i32 {
      // CHECK: arith.addf %{{.*}} {ll.layout = #[[L]], ll.note = "a string, with {braces}, [brackets] and \22quotes\22", zz.after = array<i32: 1, 2>, zz.type = (i32) -> i32}
      %next = arith.addf %acc, %acc {ll.note = "a string, with {braces}, [brackets] and \"quotes\"", zz.after = array<i32: 1, 2>, zz.type = (i32) -> i32} : tensor<128xf32, #blocked>
      scf.yield %next : tensor<128xf32, #blocked>
    // CHECK: } {ll.arg_layouts = [unit, #[[L]]], ll.layout = #[[L]]}
    }
    tt.return
  }
}
