// RUN: ll-opt %s -p ll-classify-conversions | FileCheck %s

// The result of a row reduction (a slice of the 2-D layout, replicated over the lanes that
// shared a row) moves to a plain 1-D blocked layout to be stored: the typical epilogue
// conversion of softmax and layer norm.

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @epilogue
  tt.func public @epilogue(%x: tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "warp"}
    %0 = ttg.convert_layout %x : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64xf32, #blocked1>
    tt.return
  }
}
