// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// A slice keeps the parent's bases along the other dims; lanes and warps that moved along the
// sliced dim become broadcasts (zero bases).

// CHECK-DAG: #[[ROW:linear[0-9]*]] = #ttg.linear<{register = [], lane = {{\[\[}}0], [0], [1], [2], [4]], warp = {{\[\[}}8], [16]], block = []}>
// CHECK-DAG: #[[COL:linear[0-9]*]] = #ttg.linear<{register = {{\[\[}}1], [8], [16], [32]], lane = {{\[\[}}2], [4], [0], [0], [0]], warp = {{\[\[}}0], [0]], block = []}>
#blocked = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @slices
  tt.func public @slices() {
    // CHECK: tt.make_range {end = 32 : i32, ll.layout = #[[ROW]], start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %0 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    // CHECK: tt.make_range {end = 64 : i32, ll.layout = #[[COL]], start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %1 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    tt.return
  }
}
