// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// An scf.if inside a loop yields its tensor in #A, and every iteration converts #B -> #A in
// both branches and #A -> #B after them.  The scf.if result is a node of its own (both
// yields tied to it): in #B, every conversion folds away, and Triton's canonicalizer turns the
// branch into a select.

// CHECK-LABEL: tt.func public @branches
// CHECK-NOT: ttg.convert_layout
// CHECK: arith.select %{{.*}} : tensor<512xi32, #blocked>
// CHECK-NOT: ttg.convert_layout
// REMARK: @branches: layouts assigned by cost: conversions 3 -> 0

#A = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @branches(%x: tensor<512xi32, #B>, %y: tensor<512xi32, #B>, %out: tensor<512x!tt.ptr<i32>, #B>, %c: i1, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<512xi32, #B>) : i32 {
      %v = scf.if %c -> (tensor<512xi32, #A>) {
        %a = ttg.convert_layout %acc : tensor<512xi32, #B> -> tensor<512xi32, #A>
        scf.yield %a : tensor<512xi32, #A>
      } else {
        %b = ttg.convert_layout %y : tensor<512xi32, #B> -> tensor<512xi32, #A>
        scf.yield %b : tensor<512xi32, #A>
      }
      %w = ttg.convert_layout %v : tensor<512xi32, #A> -> tensor<512xi32, #B>
      %s = arith.addi %w, %acc : tensor<512xi32, #B>
      scf.yield %s : tensor<512xi32, #B>
    }
    tt.store %out, %r : tensor<512x!tt.ptr<i32>, #B>
    tt.return
  }
}
