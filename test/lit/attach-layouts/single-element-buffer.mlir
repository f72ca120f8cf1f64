// RUN: ll-opt %s -p ll-attach-layouts --remarks 2>&1 | FileCheck %s

// A one-element shared buffer has a layout with no basis vectors; Triton's linear attributes
// cannot express an empty layout ("Empty Layout not supported" from Triton's own parser), so the
// value gets a remark instead of an attribute, and the rest of the file is still annotated.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @f(%x: tensor<128xf32, #blocked>) -> tensor<128xf32, #blocked> {
    // CHECK: remark: [ll-attach-layouts] no layout for result 0: !ttg.memdesc<1x1xf32, {{.*}} holds a single element: its layout has no basis vectors
    // CHECK: #linear = #ttg.linear<{register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]], block = []}>
    %b = ttg.local_alloc : () -> !ttg.memdesc<1x1xf32, #shared, #smem, mutable>
    // CHECK: arith.addf {{.*}}{ll.layout = #linear}
    %y = arith.addf %x, %x : tensor<128xf32, #blocked>
    tt.return %y : tensor<128xf32, #blocked>
  }
}
