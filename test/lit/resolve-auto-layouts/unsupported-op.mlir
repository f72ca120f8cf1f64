// RUN: not ll-opt %s -p 'll-resolve-auto-layouts' 2>&1 | FileCheck %s

// An automatic layout through an op the resolution has no rule for (tt.histogram here): a clear
// message naming the op and its line, exit status 1, no traceback.  Under enable() the kernel
// is compiled with Triton's own resolution instead (test_resolve_auto_layouts.py).

// CHECK: ll-opt: error: {{.*}}unsupported-op.mlir: [ll-resolve-auto-layouts] {{.*}}unsupported-op.mlir:14:10: tt.histogram: no layout rule for this op with automatic layouts (left to Triton's resolution)
// CHECK-NOT: Traceback

#L = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @histogram(%src: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<i32> {tt.divisibility = 16 : i32}) {
    %x = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #L>
    %h = tt.histogram %x : tensor<1024xi32, #L> -> tensor<64xi32, #gluon.auto_encoding>
    %b = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #L>
    %j = gluon.set_auto_layout %h : tensor<64xi32, #gluon.auto_encoding> -> tensor<64xi32, #L>
    %d = tt.splat %dst : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>, #L>
    %q = tt.addptr %d, %b : tensor<64x!tt.ptr<i32>, #L>, tensor<64xi32, #L>
    tt.store %q, %j : tensor<64x!tt.ptr<i32>, #L>
    tt.return
  }
}
