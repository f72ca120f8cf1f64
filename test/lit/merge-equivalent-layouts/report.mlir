// RUN: ll-opt %s -p 'll-merge-equivalent-layouts{report=true}' -o %t 2>&1 | FileCheck %s

// report=true says what was merged (with the alias names of the printed module, which MLIR
// numbers in order of first use) and how many conversions went away.

// CHECK: report.mlir: merged #blocked{{[0-9]+}} -> #blocked, #linear -> #blocked; removed 2 of 3 conversions
// CHECK-NOT: error
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#linear = #ttg.linear<{register = [], lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = [[1, 0], [2, 0]], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @three(%x: tensor<4x32xf32, #blocked>, %p: !tt.ptr<f32>) -> tensor<4x32xf32, #blocked2> {
    %0 = ttg.convert_layout %x : tensor<4x32xf32, #blocked> -> tensor<4x32xf32, #blocked1>
    %1 = ttg.convert_layout %0 : tensor<4x32xf32, #blocked1> -> tensor<4x32xf32, #linear>
    %2 = ttg.convert_layout %1 : tensor<4x32xf32, #linear> -> tensor<4x32xf32, #blocked2>
    tt.return %2 : tensor<4x32xf32, #blocked2>
  }
}
