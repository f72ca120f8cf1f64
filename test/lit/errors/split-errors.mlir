// RUN: not ll-opt %s --split-input-file -p ll-classify-conversions -o %t 2>&1 | FileCheck %s

// With --split-input-file every chunk is tried; errors name lines of this file (not of the
// chunk), and nothing is written when any chunk fails.

// CHECK-NOT: first
// CHECK: ll-opt: error: {{.*}}split-errors.mlir:[[# @LINE + 12]]:{{[0-9]+}}: use of undeclared SSA value name
// CHECK: ll-opt: error: {{.*}}split-errors.mlir:[[# @LINE + 20]]:{{[0-9]+}}: custom op 'tt.frobnicate' is unknown
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @first(%x: f32) {
    tt.return
  }
}

// -----

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @second(%x: f32) {
    %0 = arith.addf %x, %nope : f32
    tt.return
  }
}

// -----

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @third(%x: f32) {
    %0 = tt.frobnicate %x : f32
    tt.return
  }
}
