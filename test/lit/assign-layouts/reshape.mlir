// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// The tt.reshape rule: the operand in the key K, the result K's linear layout with its
// coordinates renamed row-major (element (i, j) of 32x16 is element 16 i + j of 512).  Triton
// converted the argument to #B, reshaped, added, reshaped back and converted back to #A.  With
// the key #A for the first reshape its result is #A flattened (a #ttg.linear: register bases
// [1], [2] are the four consecutive elements of a row); the second reshape turns that back
// into exactly #A, printed as #A, so both conversions go.

// CHECK: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[F:linear]] = #ttg.linear<{register = {{\[}}[1], [2]], lane = {{\[}}[4], [8], [16], [32], [64]], warp = {{\[}}[128], [256]], block = []}>
// CHECK-LABEL: tt.func public @flat_add
// CHECK-NEXT: %[[R:.*]] = tt.reshape %arg0 : tensor<32x16xi32, #[[A]]> -> tensor<512xi32, #[[F]]>
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[R]], %[[R]] : tensor<512xi32, #[[F]]>
// CHECK-NEXT: %[[T:.*]] = tt.reshape %[[S]] : tensor<512xi32, #[[F]]> -> tensor<32x16xi32, #[[A]]>
// CHECK-NEXT: tt.return %[[T]] : tensor<32x16xi32, #[[A]]>
// CHECK-NOT: ttg.convert_layout
// REMARK: @flat_add: layouts assigned by cost: conversions 2 -> 0, modelled cost 44.9 -> 2.2 (loop-weighted)

// A reshape that may reorder elements (allow_reorder) keeps its layouts: which element lands
// where follows them, so another layout would compute something else.
// CHECK-LABEL: tt.func public @reordering
// CHECK: ttg.convert_layout
// CHECK: tt.reshape {{.*}} allow_reorder
// CHECK: ttg.convert_layout
// REMARK: @reordering: kept Triton's layouts: conversions 2 -> 2

#A = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#RB = #ttg.linear<{register = [[16], [32], [256]], lane = [[64], [128], [1], [2], [4]], warp = [[8], [0]], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @flat_add(%x: tensor<32x16xi32, #A>) -> tensor<32x16xi32, #A> {
    %c = ttg.convert_layout %x : tensor<32x16xi32, #A> -> tensor<32x16xi32, #B>
    %r = tt.reshape %c : tensor<32x16xi32, #B> -> tensor<512xi32, #RB>
    %s = arith.addi %r, %r : tensor<512xi32, #RB>
    %t = tt.reshape %s : tensor<512xi32, #RB> -> tensor<32x16xi32, #B>
    %u = ttg.convert_layout %t : tensor<32x16xi32, #B> -> tensor<32x16xi32, #A>
    tt.return %u : tensor<32x16xi32, #A>
  }
  tt.func public @reordering(%x: tensor<32x16xi32, #A>) -> tensor<32x16xi32, #A> {
    %c = ttg.convert_layout %x : tensor<32x16xi32, #A> -> tensor<32x16xi32, #B>
    %r = tt.reshape %c allow_reorder : tensor<32x16xi32, #B> -> tensor<512xi32, #RB>
    %s = arith.addi %r, %r : tensor<512xi32, #RB>
    %t = tt.reshape %s : tensor<512xi32, #RB> -> tensor<32x16xi32, #B>
    %u = ttg.convert_layout %t : tensor<32x16xi32, #B> -> tensor<32x16xi32, #A>
    tt.return %u : tensor<32x16xi32, #A>
  }
}
