// RUN: ll-opt %s --split-input-file -p 'll-lower-conversions{stock_gate=false remarks=true}' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s --split-input-file -p 'll-lower-conversions{stock_gate=false}' | FileCheck %s --check-prefix=TTGIR
// RUN: ll-opt %s --split-input-file -p 'll-lower-conversions{stock_gate=false}' --emit ptx | FileCheck %s --check-prefix=PTX

// Guards against Triton's ops that can never touch the island's bytes are left out.  A
// software-pipelined loop: the buffers %buf are allocated before the loop and freed after it,
// so they are live across the island, and Triton's allocator puts the island's scratch buffer
// (live at the island only) in other bytes; the async copies into %buf, the wait and the local
// load of %buf cannot race with the island (passes/barriers/buffer_spans.py).  What is left to
// order the island against is itself, in the previous iteration: one guard before it, marked
// "alone", and no guard after (TTGIR).  In the LLVM IR (passes/barriers/guard_barriers.py)
// every path back from that guard to the island meets Triton's own barrier after its async
// wait, so it goes: the PTX has stock's one barrier in the loop plus the plan's, no guard.

// REMARK: remark: [ll-lower-conversions] lowered: shared, bar.sync={{[0-9]+}}, guard bar.sync=1,
// TTGIR: "// guard alone"
// TTGIR-NOT: "// guard"
// TTGIR: scf.yield

// PTX-LABEL: .entry pipelined
// PTX-NOT: {{^[[:space:]]*}}// guard
// PTX: cp.async.wait_group
// PTX-NEXT: bar.sync
// PTX-NOT: {{^[[:space:]]*}}// guard

// A buffer Triton allocates in the loop after the island (a local_alloc with a source, read
// back by a local_load) is live after the island only, and may take the island's bytes: regular
// guards, before and after the island.

// REMARK: remark: [ll-lower-conversions] lowered: shared, bar.sync={{[0-9]+}}, guard bar.sync=2,
// TTGIR-COUNT-2: "// guard"
// TTGIR-NOT: guard
// PTX-LABEL: .entry staged_after
// PTX: {{^[[:space:]]*}}// guard

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @pipelined(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf16, #blocked>
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
    %w64 = arith.constant dense<64> : tensor<64x1xi32, #blocked>
    %rs = arith.muli %r2, %w64 : tensor<64x1xi32, #blocked>
    %rb = tt.broadcast %rs : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %k = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %k2 = tt.expand_dims %k {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x64xi32, #blocked>
    %kb = tt.broadcast %k2 : tensor<1x64xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %off = arith.addi %rb, %kb : tensor<64x64xi32, #blocked>
    %xs = tt.splat %X : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %xp = tt.addptr %xs, %off : tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked1>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %slot0 = ttg.memdesc_index %buf[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %t0 = ttg.async_copy_global_to_local %xp, %slot0 {contiguity = 8 : i32} : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
    %g0 = ttg.async_commit_group tokens %t0
    %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %tok = %g0) -> (tensor<64x64xf16, #blocked>, !ttg.async.token)  : i32 {
      %c = ttg.convert_layout %acc : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
      tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
      %w = ttg.async_wait %tok {num = 0 : i32}
      %slot = ttg.memdesc_index %buf[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %v = ttg.local_load %slot token %w : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      %acc2 = arith.addf %acc, %v : tensor<64x64xf16, #blocked>
      %t = ttg.async_copy_global_to_local %xp, %slot {contiguity = 8 : i32} : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
      %g = ttg.async_commit_group tokens %t
      scf.yield %acc2, %g : tensor<64x64xf16, #blocked>, !ttg.async.token
    }
    %done = ttg.async_wait {num = 0 : i32}
    ttg.local_dealloc %buf : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @staged_after(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf16, #blocked>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked1>
    %xs = tt.splat %X : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf16, #blocked>)  : i32 {
      %c = ttg.convert_layout %acc : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
      tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
      %v = tt.load %xs : tensor<64x64x!tt.ptr<f16>, #blocked>
      %m = ttg.local_alloc %v : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
      %d = ttg.local_load %m : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
      %acc2 = arith.addf %acc, %d : tensor<64x64xf16, #blocked>
      scf.yield %acc2 : tensor<64x64xf16, #blocked>
    }
    tt.return
  }
}
