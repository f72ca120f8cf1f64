// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p ll-assign-layouts,ll-lower-conversions --emit ptx | FileCheck %s --check-prefix=PTX

// A noinline function and its caller.  A call is an anchor: the callee's signature is the
// contract between the two, so every argument, result and `tt.return` keeps its layout, and
// each function is assigned on its own.  Inside @carried the loop-carried accumulator's two
// conversions per iteration become one conversion of the argument %x before the loop (as in
// loop-carried.mlir); the caller's conversions feed and read the calls, so they stay.  The
// whole module still compiles to PTX with both functions.

// CHECK: tt.func private @carried(%arg0: tensor<512xi32, #[[A:blocked]]>, %arg1: tensor<512xi32, #[[B:blocked1]]>, %arg2: i32) -> tensor<512xi32, #[[A]]> attributes {noinline = true}
// CHECK: ttg.convert_layout %arg1 : tensor<512xi32, #[[B]]> -> tensor<512xi32, #[[A]]>
// CHECK: scf.for
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.return %{{.*}} : tensor<512xi32, #[[A]]>
// CHECK-LABEL: tt.func public @caller
// CHECK: tt.call @carried(%{{.*}}) : (tensor<512xi32, #[[A]]>, tensor<512xi32, #[[B]]>, i32) -> tensor<512xi32, #[[A]]>
// CHECK: tt.call @carried(%{{.*}}) : (tensor<512xi32, #[[A]]>, tensor<512xi32, #[[B]]>, i32) -> tensor<512xi32, #[[A]]>
// CHECK: ttg.convert_layout %{{.*}} : tensor<512xi32, #[[A]]> -> tensor<512xi32, #[[B]]>

// REMARK: @carried: layouts assigned by cost: conversions 2 -> 1, modelled cost 408.6 -> 46.9 (loop-weighted); left: 1 argument -> arith.addi (fixed: a function argument)
// REMARK: @caller: kept Triton's layouts: conversions 2 -> 2, {{.*}}left: 1 tt.call -> ttg.convert_layout (fixed: a call), 1 tt.make_range -> ttg.convert_layout -> tt.call (fixed: a call)

// PTX: .func {{.*}}carried
// PTX: .entry caller
// PTX: call{{.*}}carried

#A = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func private @carried(%init: tensor<512xi32, #A>, %x: tensor<512xi32, #B>, %n: i32) -> tensor<512xi32, #A> attributes {noinline = true} {
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
  tt.func public @caller(%p: !tt.ptr<i32>, %n: i32) {
    %o = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #B>
    %ob = ttg.convert_layout %o : tensor<512xi32, #B> -> tensor<512xi32, #A>
    %r = tt.call @carried(%ob, %o, %n) : (tensor<512xi32, #A>, tensor<512xi32, #B>, i32) -> tensor<512xi32, #A>
    %r2 = tt.call @carried(%r, %o, %n) : (tensor<512xi32, #A>, tensor<512xi32, #B>, i32) -> tensor<512xi32, #A>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<512x!tt.ptr<i32>, #B>
    %pa = tt.addptr %ps, %o : tensor<512x!tt.ptr<i32>, #B>, tensor<512xi32, #B>
    %rb = ttg.convert_layout %r2 : tensor<512xi32, #A> -> tensor<512xi32, #B>
    %sum = arith.addi %rb, %o : tensor<512xi32, #B>
    tt.store %pa, %sum : tensor<512x!tt.ptr<i32>, #B>
    tt.return
  }
}
