// RUN: ll-opt %s -p 'll-assign-layouts{memory_ops=true dram_floor=false}' | FileCheck %s
// RUN: ll-opt %s -p 'll-assign-layouts{memory_ops=true dram_floor=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// dram_floor=false: this small kernel is bound by its memory traffic, and the subject here is
// the rule itself (the floor's own test: dram-floor.mlir).

// With memory_ops=true (stores outside loops may change layout).  A matmul epilogue: the fp32 accumulator (mma layout) is truncated to f16 and converted to a
// blocked layout whose 16-byte vectors make the store coalesced.  The pointers are computed
// from make_range, so the store could take the accumulator's layout instead (no conversion):
// then each warp store writes 4-byte pieces of 8 rows (twice the sectors, four times the
// instructions), which the model does not price 10% (the margin) below the conversion through
// shared memory.  The epilogue keeps Triton's layouts; the remark gives the modelled cost.

// CHECK-LABEL: tt.func public @epilogue
// CHECK: ttg.convert_layout %{{.*}} : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
// CHECK: tt.store %{{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked>
// (Triton 3.6 keeps duplicate registers for the 64x1 pointer columns, which makes moving the
// pointer arithmetic worth a small conversion there; the store's conversion stays on both.)
// REMARK: @epilogue: {{.*}}left: 1 arith.truncf -> ttg.convert_layout{{(,|;|$)}}

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @epilogue(%acc: tensor<64x64xf32, #mma>, %C: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
    %cst = arith.constant dense<64> : tensor<64x1xi32, #blocked>
    %h = arith.truncf %acc : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
    %rows = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %r1 = tt.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
    %r2 = arith.muli %r1, %cst : tensor<64x1xi32, #blocked>
    %base = tt.splat %C : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>, #blocked>
    %p1 = tt.addptr %base, %r2 : tensor<64x1x!tt.ptr<f16>, #blocked>, tensor<64x1xi32, #blocked>
    %cols = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %c1 = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x64xi32, #blocked>
    %p2 = tt.broadcast %p1 : tensor<64x1x!tt.ptr<f16>, #blocked> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %c2 = tt.broadcast %c1 : tensor<1x64xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %ptrs = tt.addptr %p2, %c2 : tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    %v = ttg.convert_layout %h : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    tt.store %ptrs, %v : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}
