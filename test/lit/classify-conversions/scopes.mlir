// RUN: ll-opt %s --split-input-file -p ll-classify-conversions | FileCheck %s

// One conversion per hardware scope, from the minimal conversion dst^-1 . src.

// The same linear map under two names: a no-op.
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#linear = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @none
  tt.func public @none(%x: tensor<128xf32, #blocked>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "none"}
    %0 = ttg.convert_layout %x : tensor<128xf32, #blocked> -> tensor<128xf32, #linear>
    tt.return
  }
}

// -----

// Registers swap places inside each thread: no data leaves the thread.
#linear = #ttg.linear<{register = [[1], [2]], lane = [[4], [8], [16], [32], [64]], warp = [], block = []}>
#linear1 = #ttg.linear<{register = [[2], [1]], lane = [[4], [8], [16], [32], [64]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @register
  tt.func public @register(%x: tensor<128xf32, #linear>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "register"}
    %0 = ttg.convert_layout %x : tensor<128xf32, #linear> -> tensor<128xf32, #linear1>
    tt.return
  }
}

// -----

// Pairs of neighbours per thread become elements 32 apart: lanes exchange data.
#blocked = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#linear = #ttg.linear<{register = [[32]], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @lane
  tt.func public @lane(%x: tensor<64xf32, #blocked>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "lane"}
    %0 = ttg.convert_layout %x : tensor<64xf32, #blocked> -> tensor<64xf32, #linear>
    tt.return
  }
}

// -----

// A transpose with 4 warps: rows owned by one warp are spread over all of them.
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @warp
  tt.func public @warp(%x: tensor<32x32xf32, #blocked>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "warp"}
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return
  }
}

// -----

// Two CTAs of a cluster swap halves: data crosses blocks.
#linear = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [], block = [[32]]}>
#linear1 = #ttg.linear<{register = [], lane = [[2], [4], [8], [16], [32]], warp = [], block = [[1]]}>
module attributes {"ttg.num-ctas" = 2 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @block
  tt.func public @block(%x: tensor<64xf32, #linear>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "block"}
    %0 = ttg.convert_layout %x : tensor<64xf32, #linear> -> tensor<64xf32, #linear1>
    tt.return
  }
}
