// RUN: ll-opt %s -p ll-attach-layouts,ll-classify-conversions | FileCheck %s

// Conversions nested in regions (a loop body) are found too, and both passes compose.

#blocked = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#linear = #ttg.linear<{register = [[32]], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @loop
  tt.func public @loop(%x: tensor<64xf32, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      // CHECK: ttg.convert_layout %arg0 {ll.layout = #{{linear[0-9]*}}, ll.scope = "lane"}
      %0 = ttg.convert_layout %x : tensor<64xf32, #blocked> -> tensor<64xf32, #linear>
    }
    tt.return
  }
}
