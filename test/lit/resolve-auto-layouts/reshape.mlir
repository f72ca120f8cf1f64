// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// An automatic value through tt.reshape (gluon: gl.set_auto_layout(gl.reshape(gl.arange(0, 1024),
// [32, 32]), L)).  A reshape moves no data: its result's layout is its operand's with the
// coordinates renamed row-major (passes/assign/shape_layouts.py), as Triton infers it.  The
// author's L flows back through the reshape: the index vector takes L reshaped to 1-D (element
// 32 i + j of the range is element (i, j) of the tile), the reshape's result is L itself, and
// the set_auto_layout folds away.

// CHECK-DAG: #[[L:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[R:linear[0-9]*]] = #ttg.linear<{register = {{\[\[1\], \[2\], \[16\]\]}}, lane = {{\[\[4\], \[8\], \[32\], \[64\], \[128\]\]}}, warp = {{\[\[256\], \[512\]\]}}, block = []}>
// CHECK-NOT: gluon
// CHECK: tt.make_range {{.*}} : tensor<1024xi32, #[[R]]>
// CHECK: tt.reshape %{{.*}} : tensor<1024xi32, #[[R]]> -> tensor<32x32xi32, #[[L]]>
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f32>, #[[L]]>

// PTX: .entry reshape(
// PTX: st.global

#L = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @reshape(%dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %i = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #gluon.auto_encoding>
    %r = tt.reshape %i : tensor<1024xi32, #gluon.auto_encoding> -> tensor<32x32xi32, #gluon.auto_encoding>
    %j = gluon.set_auto_layout %r : tensor<32x32xi32, #gluon.auto_encoding> -> tensor<32x32xi32, #L>
    %p = tt.splat %dst : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>, #L>
    %q = tt.addptr %p, %j : tensor<32x32x!tt.ptr<f32>, #L>, tensor<32x32xi32, #L>
    %v = arith.sitofp %j : tensor<32x32xi32, #L> to tensor<32x32xf32, #L>
    tt.store %q, %v : tensor<32x32x!tt.ptr<f32>, #L>
    tt.return
  }
}
