// RUN: ll-opt %s -p ll-merge-equivalent-layouts | FileCheck %s

// Uses inside a #ttg.slice count as uses of the parent: here the slices of #blocked and
// #blocked1 are the same too, so the merge rewrites them as well.

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-NOT: #blocked1
  // CHECK-LABEL: tt.func public @row_ids
  tt.func public @row_ids() -> tensor<4x1xi32, #blocked> {
    // CHECK: tt.make_range {{.*}} : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %0 = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
    %1 = tt.expand_dims %0 {axis = 1 : i32} : tensor<4xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<4x1xi32, #blocked1>
    // CHECK-NOT: ttg.convert_layout
    %2 = ttg.convert_layout %1 : tensor<4x1xi32, #blocked1> -> tensor<4x1xi32, #blocked>
    tt.return %2 : tensor<4x1xi32, #blocked>
  }
}
