// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-assign-layouts{reorder_reductions=true}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REORDER

// Row reductions whose result is converted for the store.  Converting the 128x128 input to a
// layout in which the reduction lands in the store's layout costs more than the 128-element
// conversion after it, so both keep Triton's layouts.  The float sum is not even a candidate
// without reorder_reductions=true (another layout adds in another order); the max is
// order-free, so it is priced both ways.

// CHECK-LABEL: tt.func public @row_max
// CHECK: ttg.convert_layout
// CHECK-LABEL: tt.func public @row_sum
// CHECK: ttg.convert_layout
// REMARK: @row_max: kept Triton's layouts: conversions 1 -> 1, modelled cost 2610.2 -> 2610.2 (loop-weighted); no assignment beats Triton's by more than 10%; left: 1 tt.reduce -> ttg.convert_layout -> tt.store (fixed: a global store)
// REMARK-NEXT: @row_sum: kept Triton's layouts: conversions 1 -> 1, modelled cost 154.5 -> 154.5 (loop-weighted); no assignment beats Triton's by more than 10%; left: 1 tt.reduce -> ttg.convert_layout -> tt.store (fixed: a float reduction; a global store)
// REORDER: @row_max: kept Triton's layouts
// REORDER-NEXT: @row_sum: kept Triton's layouts: conversions 1 -> 1, modelled cost 2610.2 -> 2610.2 (loop-weighted); no assignment beats Triton's by more than 10%; left: 1 tt.reduce -> ttg.convert_layout -> tt.store (fixed: a global store){{$}}

#A = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @row_max(%x: tensor<128x128xi32, #A>, %out: tensor<128x!tt.ptr<i32>, #B>) {
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: i32, %b: i32):
      %mx = arith.maxsi %a, %b : i32
      tt.reduce.return %mx : i32
    }) : (tensor<128x128xi32, #A>) -> tensor<128xi32, #ttg.slice<{dim = 1, parent = #A}>>
    %c = ttg.convert_layout %m : tensor<128xi32, #ttg.slice<{dim = 1, parent = #A}>> -> tensor<128xi32, #B>
    tt.store %out, %c : tensor<128x!tt.ptr<i32>, #B>
    tt.return
  }
  tt.func public @row_sum(%x: tensor<128x128xf32, #A>, %out: tensor<128x!tt.ptr<f32>, #B>) {
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<128x128xf32, #A>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #A}>>
    %c = ttg.convert_layout %m : tensor<128xf32, #ttg.slice<{dim = 1, parent = #A}>> -> tensor<128xf32, #B>
    tt.store %out, %c : tensor<128x!tt.ptr<f32>, #B>
    tt.return
  }
}
