// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-assign-layouts{reorder_reductions=true}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REORDER

// Convert before a reduction.  Row reductions of a 128x128 tensor whose four warps split the
// rows (#A: warpsPerCTA = [1, 4], Triton's layout for rows it cannot read vectorised): each row
// ends in a cross-warp stage through shared memory.  The reduce-friendly key (warps moved off
// the reduced axis, layout_seeds.py) ends every row inside one warp; converting the input to it
// first is modelled cheaper than the cross-warp stage.  The max is order-free, so it changes;
// the float sum keeps Triton's layouts unless reorder_reductions=true (another layout adds in
// another order).

// CHECK: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
// CHECK: #[[R:blocked2]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-LABEL: tt.func public @row_max
// CHECK-NEXT: %[[X:.*]] = ttg.convert_layout %arg0 : tensor<128x128xi32, #[[A]]> -> tensor<128x128xi32, #[[R]]>
// CHECK-NEXT: "tt.reduce"(%[[X]])
// CHECK: (tensor<128x128xi32, #[[R]]>) -> tensor<128xi32, #ttg.slice<{dim = 1, parent = #[[R]]}>>
// CHECK-LABEL: tt.func public @row_sum
// CHECK-NOT: ttg.convert_layout {{.*}}128x128
// CHECK: "tt.reduce"(%arg0)
// The max is an i32 max over all 32 lanes: Triton reduces each row in a warp with one
// redux.sync, and the model prices it so (layout_costs.uses_redux); the float sum takes 5
// shuffle rounds and adds per row, so it gains more when reordering is allowed.  Both pay the
// shared pipe (pipe_time.py): 128 rows' partials through shared memory per warp.
// REMARK: @row_max: layouts assigned by cost: conversions 1 -> 2, modelled cost 756.6 -> 475.8 (loop-weighted); left: 1 argument -> tt.reduce (fixed: a function argument), 1 tt.reduce -> ttg.convert_layout -> tt.store (fixed: a global store); modelled time 753.7 -> 424.5 (bound: shared -> shared)
// REMARK-NEXT: @row_sum: kept Triton's layouts: conversions 1 -> 1, modelled cost 154.5 -> 154.5 (loop-weighted); no assignment's modelled time beats Triton's by more than 10% (1496.1 -> 1496.1, bound by the shared pipe); left: 1 tt.reduce -> ttg.convert_layout -> tt.store (fixed: a float reduction; a global store)
// REORDER: @row_max: layouts assigned by cost
// REORDER-NEXT: @row_sum: layouts assigned by cost: conversions 1 -> 2, modelled cost 1851.0 -> 749.4 (loop-weighted)

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
