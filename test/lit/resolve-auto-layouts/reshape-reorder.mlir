// RUN: not ll-opt %s -p 'll-resolve-auto-layouts' 2>&1 | FileCheck %s

// A reshape that may reorder elements (allow_reorder) with automatic layouts: its result's
// element order follows the layouts it gets, so it has no layout rule; a clear message naming
// the op and its line, exit status 1, no traceback.

// CHECK: ll-opt: error: {{.*}}reshape-reorder.mlir: [ll-resolve-auto-layouts] {{.*}}reshape-reorder.mlir:14:10: tt.reshape: no layout rule for a reshape that may reorder elements with automatic layouts (left to Triton's resolution)
// CHECK-NOT: Traceback

#L = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @reshape(%dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %i = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #gluon.auto_encoding>
    %r = tt.reshape %i allow_reorder : tensor<1024xi32, #gluon.auto_encoding> -> tensor<32x32xi32, #gluon.auto_encoding>
    %j = gluon.set_auto_layout %r : tensor<32x32xi32, #gluon.auto_encoding> -> tensor<32x32xi32, #L>
    %p = tt.splat %dst : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>, #L>
    %q = tt.addptr %p, %j : tensor<32x32x!tt.ptr<f32>, #L>, tensor<32x32xi32, #L>
    %v = arith.sitofp %j : tensor<32x32xi32, #L> to tensor<32x32xf32, #L>
    tt.store %q, %v : tensor<32x32x!tt.ptr<f32>, #L>
    tt.return
  }
}
