// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// A blocked layout becomes the linear layout it stands for: 2 registers along dim1, lanes
// 4 along dim1 then 8 along dim0, warps along dim0.

// CHECK-DAG: #[[L:linear[0-9]*]] = #ttg.linear<{register = {{\[\[}}0, 1]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}8, 0], [16, 0]], block = []}>
#blocked = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @blocked_2d
  tt.func public @blocked_2d() {
    // CHECK: arith.constant {ll.layout = #[[L]]} dense<1.000000e+00> : tensor<32x8xf32, #blocked>
    %cst = arith.constant dense<1.000000e+00> : tensor<32x8xf32, #blocked>
    tt.return
  }
}
