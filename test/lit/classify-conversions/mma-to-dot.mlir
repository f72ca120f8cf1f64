// RUN: ll-opt %s --split-input-file -p ll-classify-conversions | FileCheck %s

// Flash-attention's P = softmax(S) feeds the second dot: the mma accumulator layout and the
// dot operand layout (kWidth 2) hold the same elements in the same places when the element
// type matches, so Triton's convert is a no-op; with more warps along N it is not.

#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @acc_to_a
  tt.func public @acc_to_a(%x: tensor<64x64xf16, #mma>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "none"}
    %0 = ttg.convert_layout %x : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    tt.return
  }
}

// -----

#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @acc_to_a_split_n
  tt.func public @acc_to_a_split_n(%x: tensor<64x64xf16, #mma>) {
    // CHECK: ttg.convert_layout %arg0 {ll.scope = "warp"}
    %0 = ttg.convert_layout %x : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    tt.return
  }
}
