// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// An MFMA 32x32 accumulator on a 64-lane wavefront (gfx942).

// CHECK-DAG: #[[L:linear[0-9]*]] = #ttg.linear<{register = {{\[\[}}0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = [], block = []}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], instrShape = [32, 32, 8], isTransposed = true}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // CHECK-LABEL: tt.func public @mfma
  tt.func public @mfma() {
    // CHECK: arith.constant {ll.layout = #[[L]]}
    %acc = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #mma>
    tt.return
  }
}
