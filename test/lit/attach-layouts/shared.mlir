// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// Shared-memory descriptors get #ttg.shared_linear: offset bits -> tensor coordinates.
// An unswizzled row-major 8x8 buffer: offsets 1, 2, 4 walk dim1, 8, 16, 32 walk dim0.

// CHECK-DAG: #[[S:shared[0-9]*]] = #ttg.shared_linear<{offset = {{\[\[}}0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}, alignment = 16>
#blocked = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @alloc
  tt.func public @alloc(%x: tensor<8x8xf16, #blocked>) {
    // CHECK: ttg.local_alloc %arg0 {ll.layout = #[[S]]}
    %0 = ttg.local_alloc %x : (tensor<8x8xf16, #blocked>) -> !ttg.memdesc<8x8xf16, #shared, #smem>
    tt.return
  }
}
