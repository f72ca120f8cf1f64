// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// Interleaved pairs loaded through a join of offsets, split and summed, every layout automatic
// (gluon: a, b = gl.split(gl.load(src + gl.join(2 * i, 2 * i + 1))); gl.store(dst + i, a + b)).
// Stock Triton rejects it ("'tt.make_range' op Failed to infer return type").  A join's result
// is its operands' layout with a new last dimension in register basis 0; a split takes only
// such an operand.  The load's coalesced layout puts a pair's halves in two lanes, which the
// split cannot take: the split gets the layout that gives its results one element a thread
// (#R), its operand #P (each pair in consecutive registers), and the loaded value is converted.

// CHECK-DAG: #[[P:linear[0-9]*]] = #ttg.linear<{register = {{\[\[0, 1\], \[1, 0\], \[2, 0\]\]}}, lane = {{\[\[4, 0\], \[8, 0\], \[16, 0\], \[32, 0\], \[64, 0\]\]}}, warp = {{\[\[128, 0\], \[256, 0\]\]}}, block = []}>
// CHECK-DAG: #[[R:linear[0-9]*]] = #ttg.linear<{register = {{\[\[1\], \[2\]\]}}, lane = {{\[\[4\], \[8\], \[16\], \[32\], \[64\]\]}}, warp = {{\[\[128\], \[256\]\]}}, block = []}>
// CHECK-NOT: gluon
// CHECK: tt.join %{{.*}}, %{{.*}} : tensor<512xi32, #{{.*}}> -> tensor<512x2xi32, #[[P]]>
// CHECK: tt.split %{{.*}} : tensor<512x2xf32, #[[P]]> -> tensor<512xf32, #[[R]]>

// PTX: .entry split(

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @split(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %i = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #gluon.auto_encoding>
    %c2 = arith.constant dense<2> : tensor<512xi32, #gluon.auto_encoding>
    %c1 = arith.constant dense<1> : tensor<512xi32, #gluon.auto_encoding>
    %e = arith.muli %i, %c2 : tensor<512xi32, #gluon.auto_encoding>
    %o = arith.addi %e, %c1 : tensor<512xi32, #gluon.auto_encoding>
    %j = tt.join %e, %o : tensor<512xi32, #gluon.auto_encoding> -> tensor<512x2xi32, #gluon.auto_encoding>
    %p = tt.splat %src : !tt.ptr<f32> -> tensor<512x2x!tt.ptr<f32>, #gluon.auto_encoding>
    %q = tt.addptr %p, %j : tensor<512x2x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<512x2xi32, #gluon.auto_encoding>
    %x = tt.load %q : tensor<512x2x!tt.ptr<f32>, #gluon.auto_encoding>
    %a, %b = tt.split %x : tensor<512x2xf32, #gluon.auto_encoding> -> tensor<512xf32, #gluon.auto_encoding>
    %s = arith.addf %a, %b : tensor<512xf32, #gluon.auto_encoding>
    %d = tt.splat %dst : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    %r = tt.addptr %d, %i : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<512xi32, #gluon.auto_encoding>
    tt.store %r, %s : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    tt.return
  }
}
