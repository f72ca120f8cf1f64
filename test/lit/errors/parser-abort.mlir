// RUN: not ll-opt %s -p ll-attach-layouts 2>&1 | FileCheck %s

// This #ttg.linear does not reach every element of the 128-element tensor: Triton's parser
// aborts the whole process (LLVM ERROR).  ll-opt parses in a child process first, so it
// survives and reports what Triton printed.

// CHECK: ll-opt: error: {{.*}}parser-abort.mlir:1:1: Triton aborted while parsing the module (signal 6)
// CHECK: LLVM ERROR: Layout is expected to be surjective
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @f(%x: tensor<64xf32, #ttg.linear<{register = [[64]], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>>) {
    tt.return
  }
}
