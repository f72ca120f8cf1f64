// RUN: ll-opt %s -p ll-assign-layouts | FileCheck %s
// RUN: ll-opt %s -p ll-assign-layouts --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// The DRAM floor's L2 term (passes/assign/dram_floor.py, grid_shared_bytes).  Both functions load a
// 128x32 f32 tile (16 KiB) in each of 64 iterations beside the work of dram-floor.mlir's
// @compute_bound (a broadcast row converted in the loop; the assignment converts before the
// broadcast, out of the loop).  @grid_shared loads through its argument alone: every program
// reads the same bytes, which L2 serves after the first, so they count at L2's rate (0.0408
// units a byte on sm_90, benchmarks/results/dram_rate.md): 64 x 16384 x 0.0408 / 4 warps = 10695,
// plus the two stores at DRAM's rate (49152 x 0.092 / 4 = 1131): a floor of 11826, below the
// gain, so the conversion leaves the loop.  @per_program offsets the tile by the program id:
// DRAM bytes, a floor of (64 x 16384 + 49152) x 0.092 / 4 = 25247.7, above both modelled
// times: memory-bound, Triton's layouts stay.

// CHECK: #[[A:blocked]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1]
// CHECK: #[[B:blocked[0-9]]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8]
// CHECK-LABEL: tt.func public @grid_shared
// CHECK: ttg.convert_layout %arg0 : tensor<128x1xf32, #[[A]]> -> tensor<128x1xf32, #[[B]]>
// CHECK: scf.for
// CHECK-NOT: ttg.convert_layout
// CHECK-LABEL: tt.func public @per_program
// CHECK: scf.for
// CHECK: ttg.convert_layout %{{.*}} : tensor<128x64xf32, #[[A]]> -> tensor<128x64xf32, #[[B]]>

// REMARK: @grid_shared: layouts assigned by cost: conversions 1 -> 1, modelled cost 21447.7 -> 11383.6 (loop-weighted); left: 1 argument -> tt.broadcast (fixed: a function argument); modelled time 22859.5 -> 12795.5 (bound: shared -> shared); DRAM floor 11826.0
// REMARK: @per_program: kept Triton's layouts: conversions 1 -> 1, modelled cost 21588.5 -> 21588.5 (loop-weighted); memory-bound: even with every conversion a choice could change made free, the modelled time 12781.4 hides under the DRAM floor 25247.7, so no gain could show; left: 1 math.exp -> ttg.convert_layout; modelled time 25247.7 -> 25247.7 (bound: dram -> dram); DRAM floor 25247.7

#A = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#B = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#C = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @grid_shared(%x: tensor<128x1xf32, #A>, %tile: tensor<128x32x!tt.ptr<f32>, #C>, %out: tensor<128x64x!tt.ptr<f32>, #B>, %out2: tensor<128x32x!tt.ptr<f32>, #C>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #B>
    %zero2 = arith.constant dense<0.000000e+00> : tensor<128x32xf32, #C>
    %acc:2 = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero, %t = %zero2) -> (tensor<128x64xf32, #B>, tensor<128x32xf32, #C>) : i32 {
      %l = tt.load %tile : tensor<128x32x!tt.ptr<f32>, #C>
      %t2 = arith.addf %t, %l : tensor<128x32xf32, #C>
      %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
      %e = math.exp %b : tensor<128x64xf32, #A>
      %c = ttg.convert_layout %e : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
      %s = arith.addf %a, %c : tensor<128x64xf32, #B>
      scf.yield %s, %t2 : tensor<128x64xf32, #B>, tensor<128x32xf32, #C>
    }
    tt.store %out, %acc#0 : tensor<128x64x!tt.ptr<f32>, #B>
    tt.store %out2, %acc#1 : tensor<128x32x!tt.ptr<f32>, #C>
    tt.return
  }
  tt.func public @per_program(%x: tensor<128x1xf32, #A>, %tile: tensor<128x32x!tt.ptr<f32>, #C>, %out: tensor<128x64x!tt.ptr<f32>, #B>, %out2: tensor<128x32x!tt.ptr<f32>, #C>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c4096 = arith.constant 4096 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c4096 : i32
    %starts = tt.splat %start : i32 -> tensor<128x32xi32, #C>
    %mine = tt.addptr %tile, %starts : tensor<128x32x!tt.ptr<f32>, #C>, tensor<128x32xi32, #C>
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #B>
    %zero2 = arith.constant dense<0.000000e+00> : tensor<128x32xf32, #C>
    %acc:2 = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero, %t = %zero2) -> (tensor<128x64xf32, #B>, tensor<128x32xf32, #C>) : i32 {
      %l = tt.load %mine : tensor<128x32x!tt.ptr<f32>, #C>
      %t2 = arith.addf %t, %l : tensor<128x32xf32, #C>
      %b = tt.broadcast %x : tensor<128x1xf32, #A> -> tensor<128x64xf32, #A>
      %e = math.exp %b : tensor<128x64xf32, #A>
      %c = ttg.convert_layout %e : tensor<128x64xf32, #A> -> tensor<128x64xf32, #B>
      %s = arith.addf %a, %c : tensor<128x64xf32, #B>
      scf.yield %s, %t2 : tensor<128x64xf32, #B>, tensor<128x32xf32, #C>
    }
    tt.store %out, %acc#0 : tensor<128x64x!tt.ptr<f32>, #B>
    tt.store %out2, %acc#1 : tensor<128x32x!tt.ptr<f32>, #C>
    tt.return
  }
}
