// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A loop-invariant value converted on every iteration (Triton's RemoveLayoutConversions would
// hoist this one too): the model charges the conversion 8 times (static trip count), and the
// cheapest assignment makes the value in the loop's layout from the start: no conversion left.

// CHECK: #[[B:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4]
// CHECK-NOT: ttg.convert_layout
// CHECK: %[[W:.*]] = arith.muli %{{.*}} : tensor<512xi32, #[[B]]>
// CHECK: scf.for
// CHECK-NEXT: arith.addi %[[W]], %{{.*}} : tensor<512xi32, #[[B]]>
// CHECK-NOT: ttg.convert_layout
// REMARK: remark: [ll-assign-layouts] @loop_invariant: layouts assigned by cost: conversions 1 -> 0, modelled cost 124.2 -> 30.8 (loop-weighted)

#A = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @loop_invariant(%out: !tt.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %zero = arith.constant dense<0> : tensor<512xi32, #B>
    %v = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #A>
    %w = arith.muli %v, %v : tensor<512xi32, #A>
    %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (tensor<512xi32, #B>) : i32 {
      %c = ttg.convert_layout %w : tensor<512xi32, #A> -> tensor<512xi32, #B>
      %s = arith.addi %c, %acc : tensor<512xi32, #B>
      scf.yield %s : tensor<512xi32, #B>
    }
    %p = tt.splat %out : !tt.ptr<i32> -> tensor<512x!tt.ptr<i32>, #B>
    %o = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #B>
    %q = tt.addptr %p, %o : tensor<512x!tt.ptr<i32>, #B>, tensor<512xi32, #B>
    tt.store %q, %r : tensor<512x!tt.ptr<i32>, #B>
    tt.return
  }
}
