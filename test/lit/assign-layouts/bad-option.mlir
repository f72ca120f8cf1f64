// RUN: not ll-opt %s -p 'll-assign-layouts{margin=1.5}' 2>&1 | FileCheck %s

// CHECK: margin=1.5: expected a fraction from 0 to 1

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @empty() {
    tt.return
  }
}
