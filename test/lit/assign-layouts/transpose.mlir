// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' | FileCheck %s
// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// dram_floor=false: this small kernel is bound by its memory traffic, and the subject here is
// the rule itself (the floor's own test: dram-floor.mlir).

// The tt.trans rule: the operand in the key K, the result in K transposed (a blocked layout's
// per-dimension lists permuted, its order renamed).  Triton converted the argument to #B,
// transposed, and converted the result to the store's #S.  #S is exactly the transpose of the
// argument's #A, so with the key #A for the exp and the transpose both conversions go.

// CHECK: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[S:blocked1]] = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-LABEL: tt.func public @convert_around_transpose
// CHECK-NEXT: %[[E:.*]] = math.exp %arg0 : tensor<64x32xf32, #[[A]]>
// CHECK-NEXT: %[[T:.*]] = tt.trans %[[E]] {order = array<i32: 1, 0>} : tensor<64x32xf32, #[[A]]> -> tensor<32x64xf32, #[[S]]>
// CHECK-NEXT: tt.store %arg1, %[[T]] : tensor<32x64x!tt.ptr<f32>, #[[S]]>
// CHECK-NOT: ttg.convert_layout
// REMARK: @convert_around_transpose: layouts assigned by cost: conversions 2 -> 0, modelled cost 95.5 -> 8.8 (loop-weighted)

#A = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#TB = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#S = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @convert_around_transpose(%x: tensor<64x32xf32, #A>, %out: tensor<32x64x!tt.ptr<f32>, #S>) {
    %c = ttg.convert_layout %x : tensor<64x32xf32, #A> -> tensor<64x32xf32, #B>
    %e = math.exp %c : tensor<64x32xf32, #B>
    %t = tt.trans %e {order = array<i32: 1, 0>} : tensor<64x32xf32, #B> -> tensor<32x64xf32, #TB>
    %d = ttg.convert_layout %t : tensor<32x64xf32, #TB> -> tensor<32x64xf32, #S>
    tt.store %out, %d : tensor<32x64x!tt.ptr<f32>, #S>
    tt.return
  }
}
