// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false}' | FileCheck %s --check-prefix=NOFLOOR

// The DRAM floor (passes/assign/dram_floor.py): a gain in conversions counts only where it shows above
// the time the kernel's memory traffic takes.  Both kernels store 128x64 f32 (32 KiB, 8 KiB per
// warp): on sm_90 a floor of 8192 x 0.092 = 753.7 units per warp (a DRAM byte at the rate an
// H100 reaches, benchmarks/results/dram_rate.md).
// @memory_bound converts once (modelled 227.9, 84.4 if the conversion moved before the
// broadcast): both under the floor, so Triton's layouts stay.  @compute_bound does the same work
// 64 times in a loop (16871.7 -> 6807.6), far above the floor: the conversion leaves the loop.
// Without the floor both change (the rule itself: before-broadcast.mlir).

// CHECK-LABEL: tt.func public @memory_bound
// CHECK: ttg.convert_layout %{{.*}} : tensor<128x64xf32, #blocked> -> tensor<128x64xf32, #blocked1>
// CHECK-LABEL: tt.func public @compute_bound
// CHECK: ttg.convert_layout %arg0 : tensor<128x1xf32, #blocked> -> tensor<128x1xf32, #blocked1>
// CHECK-NEXT: scf.for
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.store

// REMARK: @memory_bound: kept Triton's layouts: conversions 1 -> 1, modelled cost 227.9 -> 227.9 (loop-weighted); memory-bound: even with every conversion a choice could change made free, the modelled time 301.4 hides under the DRAM floor 753.7, so no gain could show; {{.*}}; modelled time 753.7 -> 753.7 (bound: dram -> dram); DRAM floor 753.7
// REMARK: @compute_bound: layouts assigned by cost: conversions 1 -> 1, modelled cost 16871.7 -> 6807.6 (loop-weighted); {{.*}}; DRAM floor 753.7

// NOFLOOR-LABEL: tt.func public @memory_bound
// NOFLOOR: ttg.convert_layout %arg0 : tensor<128x1xf32, #blocked> -> tensor<128x1xf32, #blocked1>
// NOFLOOR-LABEL: tt.func public @compute_bound
// NOFLOOR: ttg.convert_layout %arg0 : tensor<128x1xf32, #blocked> -> tensor<128x1xf32, #blocked1>

#A = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#B = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @memory_bound(%x: tensor<128x1xf32, #A>, %out: tensor<128x64x!tt.ptr<f32>, #B>) {
    %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
    %e = math.exp %b : tensor<128x64xf32, #A>
    %c = ttg.convert_layout %e : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
    tt.store %out, %c : tensor<128x64x!tt.ptr<f32>, #B>
    tt.return
  }
  tt.func public @compute_bound(%x: tensor<128x1xf32, #A>, %out: tensor<128x64x!tt.ptr<f32>, #B>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #B>
    %acc = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (tensor<128x64xf32, #B>) : i32 {
      %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
      %e = math.exp %b : tensor<128x64xf32, #A>
      %c = ttg.convert_layout %e : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
      %s = arith.addf %a, %c : tensor<128x64xf32, #B>
      scf.yield %s : tensor<128x64xf32, #B>
    }
    tt.store %out, %acc : tensor<128x64x!tt.ptr<f32>, #B>
    tt.return
  }
}
