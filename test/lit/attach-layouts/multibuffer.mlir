// RUN: ll-opt %s -p ll-attach-layouts --remarks 2>&1 | FileCheck %s --implicit-check-not=remark

// Pipelined (multi-buffered) allocations: a rank-2 encoding under a rank-3 type, the leading
// dim counting buffers.  Triton stacks the buffers (memdesc_index %a[%i] starts i * 4096
// elements further for 64x64), so the allocation gets the layout of ONE buffer (exactly what
// memdesc_index yields) and ll.buffers = the count.  3 is not a power of two: no linear layout
// covers the whole allocation, which is why the count stands apart, for every count alike.

// One 64x64 bf16 buffer, 128-byte swizzle: 8 rows of 64 columns, row r's 16-byte chunks XORed by r.
// CHECK-DAG: #[[NV:shared[0-9]*]] = #ttg.shared_linear<{offset = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32], [8, 0], [16, 0], [32, 0]]}, alignment = 16>
// One 4x8 buffer, row-major.
// CHECK-DAG: #[[SW:shared[0-9]*]] = #ttg.shared_linear<{offset = {{\[\[}}0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]}, alignment = 16>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @three_stages
  tt.func public @three_stages(%n: i32) -> tensor<64x64xbf16, #blocked> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xbf16, #blocked>
    // CHECK: ttg.local_alloc {ll.buffers = 3 : i64, ll.layout = #[[NV]]} : () -> !ttg.memdesc<3x64x64xbf16
    %bufs = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable>
    // CHECK: scf.for
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %all = %bufs) -> (tensor<64x64xbf16, #blocked>, !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable>) : i32 {
      %slot = arith.remsi %i, %c3 : i32
      // CHECK: ttg.memdesc_index {{.*}} {ll.layout = #[[NV]]} : !ttg.memdesc<3x64x64xbf16, {{.*}}> -> !ttg.memdesc<64x64xbf16
      %buf = ttg.memdesc_index %all[%slot] : !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable> -> !ttg.memdesc<64x64xbf16, #nvmma, #smem, mutable>
      %x = ttg.local_load %buf : !ttg.memdesc<64x64xbf16, #nvmma, #smem, mutable> -> tensor<64x64xbf16, #blocked>
      %sum = arith.addf %acc, %x : tensor<64x64xbf16, #blocked>
      scf.yield %sum, %all : tensor<64x64xbf16, #blocked>, !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable>
    // The loop carries the whole allocation: its buffer count sits beside its layout.
    // CHECK: } {ll.arg_buffers = [unit, unit, 3], ll.arg_layouts = [unit, #{{linear[0-9]*}}, #[[NV]]], ll.buffers = [unit, 3], ll.layout = [#{{linear[0-9]*}}, #[[NV]]]}
    }
    ttg.local_dealloc %bufs : !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable>
    tt.return %r#0 : tensor<64x64xbf16, #blocked>
  }

  // A power-of-two count is written the same way.
  // CHECK-LABEL: tt.func public @two_buffers
  tt.func public @two_buffers() {
    // CHECK: ttg.local_alloc {ll.buffers = 2 : i64, ll.layout = #[[SW]]}
    %0 = ttg.local_alloc : () -> !ttg.memdesc<2x4x8xf32, #shared, #smem, mutable>
    tt.return
  }
}
