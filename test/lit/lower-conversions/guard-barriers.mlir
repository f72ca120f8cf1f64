// RUN: ll-opt %s --split-input-file -p "ll-lower-conversions{stock_gate=false}" --remarks 2>&1 | FileCheck %s

// Guard barriers around a shared-memory island.  Triton's barrier analysis cannot see our
// island's accesses, so when Triton's own shared-memory users run in the same kernel we add a
// CTA barrier before the island's first store if one of them can run before it (earlier
// readers must be done), and one after its last load if one can run *after* it.

#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // A Triton shared-memory user (local_alloc / local_load) after the island, none before it: one
  // guard, after the island.
  // CHECK: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, guard bar.sync=1,
  tt.func public @triton_user_after(%acc: tensor<64x64xf16, #mma>, %Y: !tt.ptr<f16>) {
    %c = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %m = ttg.local_alloc %c : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %d = ttg.local_load %m : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %ys, %d : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // Triton's user comes first and the island is the kernel's last shared-memory user (a matmul
  // epilogue): one guard, before the island, as stock Triton's membar would place it.
  // CHECK: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, guard bar.sync=1,
  tt.func public @triton_user_before(%acc: tensor<64x64xf16, #mma>, %x: tensor<64x64xf16, #blocked>, %Y: !tt.ptr<f16>) {
    %m = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %d = ttg.local_load %m : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
    %c = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %s = arith.addf %c, %d : tensor<64x64xf16, #blocked>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %ys, %s : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}
