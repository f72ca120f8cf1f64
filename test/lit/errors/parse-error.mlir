// RUN: not ll-opt %s 2>&1 | FileCheck %s

// Triton's parser diagnostics come back as one ll-opt error with the input's location.

// CHECK: ll-opt: error: {{.*}}parse-error.mlir:[[# @LINE + 5]]:{{[0-9]+}}: use of undeclared SSA value name
// CHECK-NOT: Traceback
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @f(%x: f32) {
    %0 = arith.addf %x, %x : f32
    %1 = arith.addf %0, %missing : f32
    tt.return
  }
}
