// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false pipes=false}' | FileCheck %s
// RUN: ll-opt %s -p 'll-assign-layouts{dram_floor=false pipes=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-assign-layouts{memory_ops=true dram_floor=false pipes=false}' | FileCheck %s --check-prefix=MEM
// RUN: ll-opt %s -p 'll-assign-layouts{memory_ops=true dram_floor=false pipes=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=MEMREMARK
// dram_floor=false pipes=false: this small kernel is bound by its memory traffic (and its
// shared pipe is busy with the fixed loads' L1 wavefronts), and the subject here is the rule
// itself (the floor's own test: dram-floor.mlir; the pipes': pipe-time.mlir).

// A tile loaded in a loop in #A and converted to the accumulator's #B on every iteration (both
// layouts load 16-byte vectors along the rows).  By default the load keeps Triton's layout,
// so the accumulator takes #A and one conversion after the loop feeds the store.  With
// memory_ops the load in the loop may change too (this pass runs after Triton's pipeliner: a
// tt.load still in a loop is an ordinary load): it loads in #B, and no conversion is left.
// The loop counter steps by 64, so the analysis knows the columns start at multiples of 64
// and keeps the 8-element vectors (pointer_contiguity).

// The modelled costs differ between Triton releases (3.6 keeps repeated registers in the
// 64x1 row offsets' layouts, so it converts those once before the loop where 3.9 recomputes
// them): the checks below hold for both.

// CHECK: %[[L:.*]] = scf.for {{.*}} -> (tensor<64x64xf16, #[[A:blocked[0-9]*]]>)
// CHECK: tt.load %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[A]]>
// CHECK-NOT: ttg.convert_layout
// CHECK: scf.yield %{{.*}} : tensor<64x64xf16, #[[A]]>
// CHECK: %[[C:.*]] = ttg.convert_layout %[[L]] : tensor<64x64xf16, #[[A]]> -> tensor<64x64xf16, #[[B:blocked[0-9]*]]>
// CHECK: tt.store %{{.*}}, %[[C]] : tensor<64x64x!tt.ptr<f16>, #[[B]]>
// REMARK: @load_in_loop: layouts assigned by cost: conversions 1 -> 1, modelled cost {{[0-9.]+}} -> {{[0-9.]+}} (loop-weighted); left: 1 scf.for -> tt.store (fixed: a global store)

// MEM: #[[B:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8]
// MEM: %[[L:.*]] = scf.for {{.*}} -> (tensor<64x64xf16, #[[B]]>)
// MEM-NOT: ttg.convert_layout {{.*}} : tensor<64x64
// MEM: tt.load %{{.*}} : tensor<64x64x!tt.ptr<f16>, #[[B]]>
// MEM-NOT: ttg.convert_layout {{.*}} : tensor<64x64
// MEM: scf.yield %{{.*}} : tensor<64x64xf16, #[[B]]>
// MEM-NOT: ttg.convert_layout {{.*}} : tensor<64x64
// MEM: tt.store %{{.*}}, %[[L]] : tensor<64x64x!tt.ptr<f16>, #[[B]]>
// MEMREMARK: @load_in_loop: layouts assigned by cost: conversions 1 -> {{[0-2]}}, modelled cost {{[0-9.]+}} -> {{[0-9.]+}} (loop-weighted)

#A = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @load_in_loop(%X: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %Y: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf16, #B>
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #A}>>
    %r = tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #A}>> -> tensor<64x1xi32, #A>
    %w = arith.constant dense<4096> : tensor<64x1xi32, #A>
    %rw = arith.muli %r, %w : tensor<64x1xi32, #A>
    %rb = tt.broadcast %rw : tensor<64x1xi32, #A> -> tensor<64x64xi32, #A>
    %cols = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #A}>>
    %px = tt.splat %X : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #A>
    %rowptr = tt.addptr %px, %rb : tensor<64x64x!tt.ptr<f16>, #A>, tensor<64x64xi32, #A>
    %acc = scf.for %off = %c0 to %n step %c64 iter_args(%sum = %zero) -> (tensor<64x64xf16, #B>) : i32 {
      %o = tt.splat %off : i32 -> tensor<64xi32, #ttg.slice<{dim = 0, parent = #A}>>
      %oc = arith.addi %o, %cols : tensor<64xi32, #ttg.slice<{dim = 0, parent = #A}>>
      %e = tt.expand_dims %oc {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #A}>> -> tensor<1x64xi32, #A>
      %eb = tt.broadcast %e : tensor<1x64xi32, #A> -> tensor<64x64xi32, #A>
      %p = tt.addptr %rowptr, %eb : tensor<64x64x!tt.ptr<f16>, #A>, tensor<64x64xi32, #A>
      %v = tt.load %p : tensor<64x64x!tt.ptr<f16>, #A>
      %c = ttg.convert_layout %v : tensor<64x64xf16, #A> -> tensor<64x64xf16, #B>
      %s = arith.addf %sum, %c : tensor<64x64xf16, #B>
      scf.yield %s : tensor<64x64xf16, #B>
    }
    %yrows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #B}>>
    %yr = tt.expand_dims %yrows {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #B}>> -> tensor<64x1xi32, #B>
    %w64 = arith.constant dense<64> : tensor<64x1xi32, #B>
    %yrw = arith.muli %yr, %w64 : tensor<64x1xi32, #B>
    %yrb = tt.broadcast %yrw : tensor<64x1xi32, #B> -> tensor<64x64xi32, #B>
    %ycols = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #B}>>
    %yc = tt.expand_dims %ycols {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #B}>> -> tensor<1x64xi32, #B>
    %ycb = tt.broadcast %yc : tensor<1x64xi32, #B> -> tensor<64x64xi32, #B>
    %yo = arith.addi %yrb, %ycb : tensor<64x64xi32, #B>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #B>
    %yp = tt.addptr %ys, %yo : tensor<64x64x!tt.ptr<f16>, #B>, tensor<64x64xi32, #B>
    tt.store %yp, %acc : tensor<64x64x!tt.ptr<f16>, #B>
    tt.return
  }
}
