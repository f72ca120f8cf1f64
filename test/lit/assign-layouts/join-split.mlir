// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// The tt.join and tt.split rules: a join of two tensors in K has K with a new last dimension of
// size 2 as its first register basis (the two halves of a pair in consecutive registers of one
// thread); a split exists only where the last dimension is that register basis, and gives K
// back.  Triton joined into #pairs, converted to #across (the pair split over two lanes) for the
// multiply and back to #pairs for the split; the multiply can run in #pairs: both conversions
// go.

// CHECK: #[[ONE:blocked]] = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
// CHECK: #[[PAIRS:blocked1]] = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [32, 1], warpsPerCTA = [2, 1], order = [1, 0]}>
// CHECK-LABEL: tt.func public @swap_halves
// CHECK-NEXT: %[[J:.*]] = tt.join %arg0, %arg1 : tensor<128xf32, #[[ONE]]> -> tensor<128x2xf32, #[[PAIRS]]>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[J]], %[[J]] : tensor<128x2xf32, #[[PAIRS]]>
// CHECK-NEXT: %[[L:.*]], %[[R:.*]] = tt.split %[[M]] : tensor<128x2xf32, #[[PAIRS]]> -> tensor<128xf32, #[[ONE]]>
// CHECK-NOT: ttg.convert_layout
// REMARK: @swap_halves: layouts assigned by cost: conversions 2 -> 0, modelled cost 27.5 -> 3.3 (loop-weighted)

#one = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
#pairs = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [32, 1], warpsPerCTA = [2, 1], order = [1, 0]}>
#across = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [2, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 2 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @swap_halves(%a: tensor<128xf32, #one>, %b: tensor<128xf32, #one>) -> tensor<128xf32, #one> {
    %j = tt.join %a, %b : tensor<128xf32, #one> -> tensor<128x2xf32, #pairs>
    %c = ttg.convert_layout %j : tensor<128x2xf32, #pairs> -> tensor<128x2xf32, #across>
    %s = arith.mulf %c, %c : tensor<128x2xf32, #across>
    %d = ttg.convert_layout %s : tensor<128x2xf32, #across> -> tensor<128x2xf32, #pairs>
    %l, %r = tt.split %d : tensor<128x2xf32, #pairs> -> tensor<128xf32, #one>
    %t = arith.addf %l, %r : tensor<128xf32, #one>
    tt.return %t : tensor<128xf32, #one>
  }
}
