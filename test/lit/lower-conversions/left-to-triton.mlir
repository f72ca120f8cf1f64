// RUN: ll-opt %s -p 'll-lower-conversions{only=shuffle stock_gate=false}' --remarks 2>&1 | FileCheck %s

// With only=shuffle we own warp shuffles only (and stock_gate=false, so that the choice does not
// hand the conversion to stock first): a conversion whose verified plan goes through
// shared memory stays a ttg.convert_layout for Triton, and the remark says why.

#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK: remark: [ll-lower-conversions] left to Triton: a shared plan, and this run owns only shuffle
  // CHECK-LABEL: @transpose
  tt.func public @transpose(%x: tensor<64x64xf32, #a>) -> tensor<64x64xf32, #b> {
    // CHECK: ttg.convert_layout %arg0 : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    // CHECK-NOT: llvm.inline_asm
    %0 = ttg.convert_layout %x : tensor<64x64xf32, #a> -> tensor<64x64xf32, #b>
    tt.return %0 : tensor<64x64xf32, #b>
  }
}
