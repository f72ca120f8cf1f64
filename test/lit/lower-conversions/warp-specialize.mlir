// RUN: ll-opt %s --split-input-file -p "ll-lower-conversions{stock_gate=false}" --remarks 2>&1 >%t | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t

// Islands inside a warp-specialized kernel.  The default region (and the code around the
// ttg.warp_specialize) runs in the kernel's 4 warps, partition 0 in 4 warps of its own (warps
// 4..7), partition 1 in 2 warps (8..9), partition 2 in 1 warp (10).  Each island synchronises
// only its own warp group, with Triton's own barrier for that group: `bar.sync 0, 128` in the
// default group, `bar.sync 2 + i, threads` in partition i, `bar.warp.sync -1` for one warp.
// A plain `bar.sync 0` would wait for every thread of the CTA, which never arrive: a hang.
// In a partition that starts past warp 0, the warp id is masked to the partition's size.

#b4 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [1, 0]}>
#t4 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
#b2 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 2], order = [1, 0]}>
#t2 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 1], order = [0, 1]}>
#b1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>
#t1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @partitions(%x4: tensor<64x64xf32, #b4>, %p: !tt.ptr<f32>) {
    // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} lowered: shared
    %before = ttg.convert_layout %x4 : tensor<64x64xf32, #b4> -> tensor<64x64xf32, #t4>
    ttg.warp_specialize(%p) attributes {requestedRegisters = array<i32: 24, 24, 24>}
    default {
      // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} lowered: shared
      %d = ttg.convert_layout %x4 : tensor<64x64xf32, #b4> -> tensor<64x64xf32, #t4>
      ttg.warp_yield
    }
    partition0(%q0: !tt.ptr<f32>) num_warps(4) {
      %c0 = arith.constant dense<1.0> : tensor<64x64xf32, #b4>
      // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} lowered: shared
      %e0 = ttg.convert_layout %c0 : tensor<64x64xf32, #b4> -> tensor<64x64xf32, #t4>
      ttg.warp_return
    }
    partition1(%q1: !tt.ptr<f32>) num_warps(2) {
      %c1 = arith.constant dense<1.0> : tensor<32x64xf32, #b2>
      // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} lowered: shared
      %e1 = ttg.convert_layout %c1 : tensor<32x64xf32, #b2> -> tensor<32x64xf32, #t2>
      ttg.warp_return
    }
    partition2(%q2: !tt.ptr<f32>) num_warps(1) {
      %c2 = arith.constant dense<1.0> : tensor<32x32xf32, #b1>
      // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} lowered: shared
      %e2 = ttg.convert_layout %c2 : tensor<32x32xf32, #b1> -> tensor<32x32xf32, #t1>
      ttg.warp_return
    } : (!tt.ptr<f32>) -> ()
    tt.return
  }
}
// Outside the warp_specialize and in its default region: the default group's barrier.
// CHECK-LABEL: tt.func public @partitions
// CHECK-NOT: "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.count"(%{{[0-9]+}}, %{{[0-9]+}})
// CHECK: ttg.warp_specialize
// CHECK: default
// CHECK-NOT: "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.count"(%{{[0-9]+}}, %{{[0-9]+}})
// CHECK: partition0
// CHECK: llvm.and
// CHECK-NOT: "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.count"(%{{[0-9]+}}, %{{[0-9]+}})
// CHECK: partition1
// CHECK-NOT: "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.count"(%{{[0-9]+}}, %{{[0-9]+}})
// CHECK: partition2
// CHECK-NOT: "llvm.nvvm.barrier.cta
// CHECK: ttg.warp_return

// -----

// A partition larger than the default warp group would not start at a multiple of its size
// (warps 4..11 for 8 warps after 4), so its warp ids cannot be masked: left to Triton.
#b8 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 8], order = [1, 0]}>
#t8 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @unaligned(%p: !tt.ptr<f32>) {
    ttg.warp_specialize(%p) attributes {requestedRegisters = array<i32: 24>}
    default {
      ttg.warp_yield
    }
    partition0(%q0: !tt.ptr<f32>) num_warps(8) {
      %c0 = arith.constant dense<1.0> : tensor<64x64xf32, #b8>
      // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} left to Triton: partition 0 of a warp-specialized kernel: its 8 warps start at warp 4, not a multiple of its warp count
      %e0 = ttg.convert_layout %c0 : tensor<64x64xf32, #b8> -> tensor<64x64xf32, #t8>
      ttg.warp_return
    } : (!tt.ptr<f32>) -> ()
    tt.return
  }
}

// -----

// A function called from a warp-specialized kernel keeps Triton's whole-CTA barriers (Triton
// rewrites only the kernel's own): an island there is left to Triton.
#b4 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [1, 0]}>
#t4 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func private @helper(%x: tensor<64x64xf32, #b4>) -> tensor<64x64xf32, #t4> attributes {noinline = true} {
    // REMARK: warp-specialize.mlir:[[@LINE+1]]:{{.*}} left to Triton: in function @helper, called from the warp-specialized kernel @caller
    %y = ttg.convert_layout %x : tensor<64x64xf32, #b4> -> tensor<64x64xf32, #t4>
    tt.return %y : tensor<64x64xf32, #t4>
  }
  tt.func public @caller(%x: tensor<64x64xf32, #b4>, %p: !tt.ptr<f32>) {
    ttg.warp_specialize(%p) attributes {requestedRegisters = array<i32: 24>}
    default {
      %y = tt.call @helper(%x) : (tensor<64x64xf32, #b4>) -> tensor<64x64xf32, #t4>
      ttg.warp_yield
    }
    partition0(%q0: !tt.ptr<f32>) num_warps(4) {
      ttg.warp_return
    } : (!tt.ptr<f32>) -> ()
    tt.return
  }
}
