// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' | FileCheck %s
// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// dram_floor=false: this small kernel is bound by its memory traffic, and the subject here is
// the rule itself (the floor's own test: dram-floor.mlir).

// An scf.while carrying an accumulator in #A (and a counter %k) whose after region converts it
// to #B, adds a value loaded in #B (a load is fixed) and converts the sum back: two conversions
// per iteration (16 iterations assumed).  The cheapest assignment carries the accumulator in #B:
// one conversion before the loop, one after it, none inside.

// CHECK-DAG: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1]
// CHECK-DAG: #[[B:blocked1]] = #ttg.blocked<{sizePerThread = [4]
// CHECK-LABEL: tt.func public @carried
// CHECK: %[[INIT:.*]] = ttg.convert_layout %arg0 : tensor<512xi32, #[[A]]> -> tensor<512xi32, #[[B]]>
// CHECK: %[[R:.*]]:2 = scf.while (%[[ACC:.*]] = %[[INIT]], %[[K:.*]] = %{{.*}}) : (tensor<512xi32, #[[B]]>, i32) -> (tensor<512xi32, #[[B]]>, i32) {
// CHECK-NEXT: %[[MORE:.*]] = arith.cmpi slt, %[[K]], %arg2 : i32
// CHECK-NEXT: scf.condition(%[[MORE]]) %[[ACC]], %[[K]] : tensor<512xi32, #[[B]]>, i32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[A2:.*]]: tensor<512xi32, #[[B]]>, %[[K2:.*]]: i32):
// CHECK-NOT: ttg.convert_layout
// CHECK: %[[V:.*]] = tt.load %arg1 : tensor<512x!tt.ptr<i32>, #[[B]]>
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[A2]], %[[V]] : tensor<512xi32, #[[B]]>
// CHECK-NOT: ttg.convert_layout
// CHECK: scf.yield %[[S]], %{{.*}} : tensor<512xi32, #[[B]]>, i32
// CHECK-NEXT: }
// CHECK-NEXT: %[[OUT:.*]] = ttg.convert_layout %[[R]]#0 : tensor<512xi32, #[[B]]> -> tensor<512xi32, #[[A]]>
// CHECK-NEXT: tt.return %[[OUT]] : tensor<512xi32, #[[A]]>
// REMARK: @carried: layouts assigned by cost: conversions 2 -> 2, modelled cost 408.6 -> 58.5 (loop-weighted); left: 1 argument -> scf.while (fixed: a function argument), 1 scf.while -> tt.return (fixed: a return)

#A = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @carried(%init: tensor<512xi32, #A>, %ptrs: tensor<512x!tt.ptr<i32>, #B>, %n: i32) -> tensor<512xi32, #A> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:2 = scf.while (%acc = %init, %k = %c0) : (tensor<512xi32, #A>, i32) -> (tensor<512xi32, #A>, i32) {
      %more = arith.cmpi slt, %k, %n : i32
      scf.condition(%more) %acc, %k : tensor<512xi32, #A>, i32
    } do {
    ^bb0(%a: tensor<512xi32, #A>, %kk: i32):
      %c = ttg.convert_layout %a : tensor<512xi32, #A> -> tensor<512xi32, #B>
      %v = tt.load %ptrs : tensor<512x!tt.ptr<i32>, #B>
      %s = arith.addi %c, %v : tensor<512xi32, #B>
      %back = ttg.convert_layout %s : tensor<512xi32, #B> -> tensor<512xi32, #A>
      %k1 = arith.addi %kk, %c1 : i32
      scf.yield %back, %k1 : tensor<512xi32, #A>, i32
    }
    tt.return %r#0 : tensor<512xi32, #A>
  }
}
