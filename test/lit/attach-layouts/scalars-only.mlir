// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// No tensors, nothing to attach.

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @scalars
  // CHECK-NOT: ll.
  tt.func public @scalars(%p: !tt.ptr<f32>, %x: f32) {
    %0 = arith.addf %x, %x : f32
    tt.store %p, %0 : !tt.ptr<f32>
    tt.return
  }
}
