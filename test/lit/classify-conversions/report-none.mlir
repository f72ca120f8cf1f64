// RUN: ll-opt %s -p 'll-classify-conversions{report=true}' -o %t 2>&1 | FileCheck %s

// report=true on a module without a ttg.convert_layout says so (a report that printed nothing
// would read as a failure).

// CHECK: ll-classify-conversions: 0 conversions (no ttg.convert_layout in this module)
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @none(%x: tensor<128xf32, #blocked>) {
    tt.return
  }
}
