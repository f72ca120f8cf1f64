// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// The accumulator of an mma.sync (v2) tile and its A operand: the layouts Triton derives
// from #ttg.nvidia_mma and #ttg.dot_op, written as linear layouts.

// CHECK-DAG: #[[ACC:linear[0-9]*]] = #ttg.linear<{register = {{\[\[}}0, 1], [8, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>
// CHECK-DAG: #[[A:linear[0-9]*]] = #ttg.linear<{register = {{\[\[}}0, 1], [8, 0], [0, 8]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @mma_v2
  tt.func public @mma_v2() {
    // CHECK: arith.constant {ll.layout = #[[ACC]]} {{.*}} : tensor<16x8xf32, #mma>
    %acc = arith.constant dense<0.000000e+00> : tensor<16x8xf32, #mma>
    // CHECK: arith.constant {ll.layout = #[[A]]} {{.*}} : tensor<16x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %a = arith.constant dense<1.000000e+00> : tensor<16x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    tt.return
  }
}
