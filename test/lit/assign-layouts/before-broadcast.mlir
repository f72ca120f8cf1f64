// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' | FileCheck %s
// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// dram_floor=false: this small kernel is bound by its memory traffic, and the subject here is
// the rule itself (the floor's own test: dram-floor.mlir).

// Converting after a broadcast moves 128x64 elements; converting before it moves the 128x1
// column (fb #1561's case).  The broadcast and the exp take the store's layout and the
// conversion moves to the function argument.

// CHECK: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1]
// CHECK: #[[B:blocked1]] = #ttg.blocked<{sizePerThread = [1, 4]
// CHECK-LABEL: tt.func public @convert_after_broadcast
// CHECK-NEXT: %[[C:.*]] = ttg.convert_layout %arg0 : tensor<128x1xf32, #[[A]]> -> tensor<128x1xf32, #[[B]]>
// CHECK-NEXT: %[[BC:.*]] = tt.broadcast %[[C]] : tensor<128x1xf32, #[[B]]> -> tensor<128x64xf32, #[[B]]>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[BC]] : tensor<128x64xf32, #[[B]]>
// CHECK-NEXT: tt.store %arg1, %[[E]] : tensor<128x64x!tt.ptr<f32>, #[[B]]>
// REMARK: @convert_after_broadcast: layouts assigned by cost: conversions 1 -> 1, modelled cost 227.9 -> 84.4 (loop-weighted); left: 1 argument -> tt.broadcast (fixed: a function argument)

#A = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#B = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @convert_after_broadcast(%x: tensor<128x1xf32, #A>, %out: tensor<128x64x!tt.ptr<f32>, #B>) {
    %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
    %e = math.exp %b : tensor<128x64xf32, #A>
    %c = ttg.convert_layout %e : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
    tt.store %out, %c : tensor<128x64x!tt.ptr<f32>, #B>
    tt.return
  }
}
