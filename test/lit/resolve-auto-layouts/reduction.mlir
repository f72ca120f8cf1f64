// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// A row sum written with no layout (gluon: x = gl.load(src + r[:, None] * 128 + c[None, :]);
// gl.store(dst + r, gl.sum(x, axis=1))): a 32x128 f32 tile, 4 warps.  Stock Triton rejects
// it ("Failed to infer return type").  Ours loads it coalesced (4 f32 per access along the
// rows) with every warp on its own rows (warpsPerCTA = [4, 1]), so the sum ends inside each
// warp (shuffles, no cross-warp stage through shared memory), and the row indices and the
// sums are slices of that layout: no conversion anywhere.

// CHECK: #[[L:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-NOT: gluon
// CHECK: tt.load %{{.*}} : tensor<32x128x!tt.ptr<f32>, #[[L]]>
// CHECK: "tt.reduce"
// CHECK: }) : (tensor<32x128xf32, #[[L]]>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #[[L]]}>>
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<32x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #[[L]]}>>
// CHECK-NOT: ttg.convert_layout

// REMARK: group 1 (16 ops, tt.load at {{.*}}): #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>: coalesced for its pointers (dim 1 contiguous, 4 elements per access)
// REMARK: conversions added: 0; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: 'tt.make_range' op Failed to infer return type

// PTX: shfl.sync.bfly
// PTX-NOT: bar.sync

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @rowsum(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #gluon.auto_encoding>
    %c = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #gluon.auto_encoding>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<32xi32, #gluon.auto_encoding> -> tensor<32x1xi32, #gluon.auto_encoding>
    %w = arith.constant dense<128> : tensor<32x1xi32, #gluon.auto_encoding>
    %rw = arith.muli %r2, %w : tensor<32x1xi32, #gluon.auto_encoding>
    %ps = tt.splat %src : !tt.ptr<f32> -> tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding>
    %pr = tt.addptr %ps, %rw : tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32x1xi32, #gluon.auto_encoding>
    %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<128xi32, #gluon.auto_encoding> -> tensor<1x128xi32, #gluon.auto_encoding>
    %pb = tt.broadcast %pr : tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding> -> tensor<32x128x!tt.ptr<f32>, #gluon.auto_encoding>
    %cb = tt.broadcast %c2 : tensor<1x128xi32, #gluon.auto_encoding> -> tensor<32x128xi32, #gluon.auto_encoding>
    %p = tt.addptr %pb, %cb : tensor<32x128x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32x128xi32, #gluon.auto_encoding>
    %x = tt.load %p : tensor<32x128x!tt.ptr<f32>, #gluon.auto_encoding>
    %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<32x128xf32, #gluon.auto_encoding>) -> tensor<32xf32, #gluon.auto_encoding>
    %qs = tt.splat %dst : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>, #gluon.auto_encoding>
    %q = tt.addptr %qs, %r : tensor<32x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32xi32, #gluon.auto_encoding>
    tt.store %q, %s : tensor<32x!tt.ptr<f32>, #gluon.auto_encoding>
    tt.return
  }
}
