// RUN: ll-opt %s -p ll-attach-layouts | FileCheck %s

// A tensor already in a #ttg.linear layout gets that same layout back.

#linear = #ttg.linear<{register = [[1], [16]], lane = [[2], [4], [8], [32], [64]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK: #linear = #ttg.linear<{register = {{\[\[}}1], [16]], lane = {{\[\[}}2], [4], [8], [32], [64]], warp = [], block = []}>
  // CHECK-NOT: #linear1 =
  // CHECK-LABEL: tt.func public @same
  tt.func public @same() {
    // CHECK: tt.make_range {end = 128 : i32, ll.layout = #linear, start = 0 : i32} : tensor<128xi32, #linear>
    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #linear>
    tt.return
  }
}
