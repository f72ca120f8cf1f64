// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// The tt.gather rule: the indices and the result share the key (Triton's verifier requires
// it); the source keeps its layout.  Triton converted the indices to #G and the result back to
// #I; with the key #I both conversions go and the source (#S) is untouched.

// CHECK: #[[S:blocked]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[I:blocked1]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-LABEL: tt.func public @rows
// CHECK-NEXT: %[[G:.*]] = tt.gather %arg0[%arg1] {axis = 0 : i32} : (tensor<32x16xf32, #[[S]]>, tensor<64x16xi32, #[[I]]>) -> tensor<64x16xf32, #[[I]]>
// CHECK-NEXT: tt.return %[[G]]
// REMARK: @rows: layouts assigned by cost: conversions 2 -> 0, modelled cost 69.8 -> 4.4 (loop-weighted)

// A gather Triton marked efficient_layout (its layouts chosen for the warp-local lowering)
// keeps them.
// CHECK-LABEL: tt.func public @warp_local
// CHECK: ttg.convert_layout
// CHECK: tt.gather {{.*}} efficient_layout
// REMARK: @warp_local: kept Triton's layouts

#S = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#I = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#G = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @rows(%src: tensor<32x16xf32, #S>, %idx: tensor<64x16xi32, #I>) -> tensor<64x16xf32, #I> {
    %i = ttg.convert_layout %idx : tensor<64x16xi32, #I> -> tensor<64x16xi32, #G>
    %g = tt.gather %src[%i] {axis = 0 : i32} : (tensor<32x16xf32, #S>, tensor<64x16xi32, #G>) -> tensor<64x16xf32, #G>
    %r = ttg.convert_layout %g : tensor<64x16xf32, #G> -> tensor<64x16xf32, #I>
    tt.return %r : tensor<64x16xf32, #I>
  }
  tt.func public @warp_local(%src: tensor<32x16xf32, #S>, %idx: tensor<64x16xi32, #I>) -> tensor<64x16xf32, #I> {
    %i = ttg.convert_layout %idx : tensor<64x16xi32, #I> -> tensor<64x16xi32, #G>
    %g = tt.gather %src[%i] {axis = 0 : i32, efficient_layout} : (tensor<32x16xf32, #S>, tensor<64x16xi32, #G>) -> tensor<64x16xf32, #G>
    %r = ttg.convert_layout %g : tensor<64x16xf32, #G> -> tensor<64x16xf32, #I>
    tt.return %r : tensor<64x16xf32, #I>
  }
}
