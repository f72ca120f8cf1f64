// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false}' | FileCheck %s --check-prefix=INT

// A 64x64 f16 tile loaded with no layout (its pointers reached by no fixed layout), then
// handed to a layout the author fixed for the store: #COL, one row element per lane
// (threadsPerWarp = [32, 1]), which reads rows of 2 bytes per lane: uncoalesced.  Triton
// would spread #COL back onto the load (and load through it); ours prices both: the load
// takes the coalesced layout its row-contiguous, 16-byte aligned pointers allow (8 f16 per
// access), and one conversion to #COL follows the load.  The offsets the store needs in #COL
// are computed again in #COL rather than converted (passes/rematerialize.py): converted, our
// island would hide their alignment from Triton's axis analysis and the loads would not
// vectorize.

// CHECK-DAG: #[[COL:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-DAG: #[[ROW:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-NOT: gluon
// CHECK: %[[X:.*]] = tt.load %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[ROW]]>
// CHECK: ttg.convert_layout %[[X]] : tensor<64x64xf16, #[[ROW]]> -> tensor<64x64xf16, #[[COL]]>
// CHECK: tt.store {{.*}} : tensor<64x64x!tt.ptr<f16>, #[[COL]]>

// REMARK: group 1 ({{[0-9]+}} ops, tt.load at {{.*}}): #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>: coalesced for its pointers (dim 1 contiguous, 8 elements per access), the cheapest of 2 candidates by the cost model
// REMARK: modelled cost (loop-weighted) ours [[OURS:[0-9.]+]], Triton's resolution {{[0-9.]+}}

// PTX: ld.global.v4.b32

// No integer tensor is converted: the offsets are recomputed in each layout.
// INT: tt.func
// INT-NOT: ttg.convert_layout {{.*}}xi32
// INT: tt.return

#COL = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @load_unreached(%src: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #gluon.auto_encoding>
    %c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #gluon.auto_encoding>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32, #gluon.auto_encoding> -> tensor<64x1xi32, #gluon.auto_encoding>
    %w = arith.constant dense<64> : tensor<64x1xi32, #gluon.auto_encoding>
    %rw = arith.muli %r2, %w : tensor<64x1xi32, #gluon.auto_encoding>
    %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<64xi32, #gluon.auto_encoding> -> tensor<1x64xi32, #gluon.auto_encoding>
    %rb = tt.broadcast %rw : tensor<64x1xi32, #gluon.auto_encoding> -> tensor<64x64xi32, #gluon.auto_encoding>
    %cb = tt.broadcast %c2 : tensor<1x64xi32, #gluon.auto_encoding> -> tensor<64x64xi32, #gluon.auto_encoding>
    %off = arith.addi %rb, %cb : tensor<64x64xi32, #gluon.auto_encoding>
    %ps = tt.splat %src : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>
    %p = tt.addptr %ps, %off : tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>, tensor<64x64xi32, #gluon.auto_encoding>
    %x = tt.load %p : tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>
    %xc = gluon.set_auto_layout %x : tensor<64x64xf16, #gluon.auto_encoding> -> tensor<64x64xf16, #COL>
    %offc = gluon.set_auto_layout %off : tensor<64x64xi32, #gluon.auto_encoding> -> tensor<64x64xi32, #COL>
    %qs = tt.splat %dst : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #COL>
    %q = tt.addptr %qs, %offc : tensor<64x64x!tt.ptr<f16>, #COL>, tensor<64x64xi32, #COL>
    tt.store %q, %xc : tensor<64x64x!tt.ptr<f16>, #COL>
    tt.return
  }
}
