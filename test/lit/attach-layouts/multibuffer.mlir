// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// A pipelined (multi-buffered) allocation: 2 buffers of 4x8 with a rank-2 encoding.  The
// buffer index takes the highest offset bit.

// CHECK-DAG: #[[S:shared[0-9]*]] = #ttg.shared_linear<{offset = {{\[\[}}0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [1, 0, 0]]}, alignment = 16>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @buffers
  tt.func public @buffers() {
    // CHECK: ttg.local_alloc {ll.layout = #[[S]]}
    %0 = ttg.local_alloc : () -> !ttg.memdesc<2x4x8xf32, #shared, #smem, mutable>
    tt.return
  }
}
