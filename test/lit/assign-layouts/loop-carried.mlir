// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A loop-carried accumulator in #A that every iteration converts to #B, adds to a #B value and
// converts back: two conversions per iteration (the trip count %n is not known: 16 assumed).
// The cheapest assignment converts the loop-invariant %x to #A once, before the loop.

// CHECK: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1]
// CHECK-LABEL: tt.func public @carried
// CHECK: %[[X:.*]] = ttg.convert_layout %arg1 : tensor<512xi32, #blocked1> -> tensor<512xi32, #[[A]]>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %arg0) -> (tensor<512xi32, #[[A]]>)
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[ACC]], %[[X]] : tensor<512xi32, #[[A]]>
// CHECK-NEXT: scf.yield %[[S]] : tensor<512xi32, #[[A]]>
// CHECK-NOT: ttg.convert_layout
// REMARK: @carried: layouts assigned by cost: conversions 2 -> 1, modelled cost 408.6 -> 46.9 (loop-weighted); left: 1 argument -> arith.addi (fixed: a function argument)

#A = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @carried(%init: tensor<512xi32, #A>, %x: tensor<512xi32, #B>, %n: i32) -> tensor<512xi32, #A> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<512xi32, #A>) : i32 {
      %c = ttg.convert_layout %acc : tensor<512xi32, #A> -> tensor<512xi32, #B>
      %s = arith.addi %c, %x : tensor<512xi32, #B>
      %back = ttg.convert_layout %s : tensor<512xi32, #B> -> tensor<512xi32, #A>
      scf.yield %back : tensor<512xi32, #A>
    }
    tt.return %r : tensor<512xi32, #A>
  }
}
