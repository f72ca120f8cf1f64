// RUN: ll-opt %s --split-input-file -p "ll-lower-conversions{stock_gate=false}" --remarks 2>&1 >/dev/null | FileCheck %s
// RUN: ll-opt %s --split-input-file -p "ll-lower-conversions{stock_gate=false}" --emit ptx | FileCheck %s --check-prefix=PTX

// Guard barriers and calls (two calls racing on shared memory).  A noinline helper whose island goes
// through shared memory, called twice in a row: the second call's stores may overwrite bytes
// the first call's loads still read, and Triton's barrier analysis cannot see either.  The
// helper may be called, so its island gets both guards, whichever function comes first in the
// text (the guard after the island must not depend on that order).  In the LLVM IR the pruning
// (passes/barriers/guard_barriers.py) follows the calls: the entry guard goes (nothing before the first
// call, and the first call ends with the exit guard), the exit guard stays - the one barrier
// between the two calls, where stock Triton has one in the kernel.

// CHECK: guard-barriers-calls.mlir:[[#@LINE+26]]:10: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, guard bar.sync=2, ld.shared.b32=32, st.shared.b32=32

// PTX: .entry kernel_first(
// PTX-COUNT-2: call.uni transpose_store,
// PTX-NOT: bar.sync
// PTX: .func transpose_store(
// PTX-NOT: bar.sync
// PTX: st.shared
// PTX: bar.sync 0;
// PTX: ld.shared
// PTX: {{^[[:space:]]*}}// guard
// PTX: bar.sync 0;
// PTX-NOT: bar.sync
// PTX: ret;

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [2, 2], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @kernel_first(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    tt.call @transpose_store(%X, %Y) : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.call @transpose_store(%Y, %X) : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.return
  }
  tt.func private @transpose_store(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) attributes {noinline = true} {
    %p = tt.splat %X : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>, #blocked>
    %c = ttg.convert_layout %v : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %q = tt.splat %Y : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.store %q, %c : tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.return
  }
}

// -----

// The same module, the helper first: the same guards, and the same one kept.

// CHECK: guard-barriers-calls.mlir:[[#@LINE+22]]:10: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, guard bar.sync=2, ld.shared.b32=32, st.shared.b32=32

// PTX: // -----
// PTX: .func transpose_store(
// PTX-NOT: bar.sync
// PTX: st.shared
// PTX: bar.sync 0;
// PTX: ld.shared
// PTX: {{^[[:space:]]*}}// guard
// PTX: bar.sync 0;
// PTX-NOT: bar.sync
// PTX: .entry helper_first(
// PTX-COUNT-2: call.uni transpose_store,
// PTX-NOT: bar.sync
// PTX: ret;

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [2, 2], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func private @transpose_store(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) attributes {noinline = true} {
    %p = tt.splat %X : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>, #blocked>
    %c = ttg.convert_layout %v : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %q = tt.splat %Y : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.store %q, %c : tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.return
  }
  tt.func public @helper_first(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    tt.call @transpose_store(%X, %Y) : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.call @transpose_store(%Y, %X) : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.return
  }
}

// -----

// An island in the kernel before a call of a function that may touch shared memory: the call
// is a shared-memory user after the island (guard after), wherever the callee is in the text;
// nothing runs before the kernel's island (no guard before).  The callee's island may run after
// the caller's shared-memory work: both guards.  A call of a function that touches none is no
// user: the kernel's island, alone, needs no guard.

// CHECK: guard-barriers-calls.mlir:[[#@LINE+9]]:10: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, guard bar.sync=1, ld.shared.b32=32, st.shared.b32=32
// CHECK: guard-barriers-calls.mlir:[[#@LINE+17]]:10: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, guard bar.sync=2, ld.shared.b32=32, st.shared.b32=32

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [2, 2], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @island_then_call(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    %p = tt.splat %X : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>, #blocked>
    %c = ttg.convert_layout %v : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %q = tt.splat %Y : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.store %q, %c : tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.call @transpose_store(%Y, %X) : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.return
  }
  tt.func private @transpose_store(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) attributes {noinline = true} {
    %p = tt.splat %X : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>, #blocked>
    %c = ttg.convert_layout %v : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %q = tt.splat %Y : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.store %q, %c : tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.return
  }
}

// -----

// CHECK: guard-barriers-calls.mlir:[[#@LINE+15]]:10: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, ld.shared.b32=32, st.shared.b32=32

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [2, 2], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func private @copy(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) attributes {noinline = true} {
    %p = tt.splat %X : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>, #blocked>
    %q = tt.splat %Y : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.store %q, %v : tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.return
  }
  tt.func public @island_then_pure_call(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    %p = tt.splat %X : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>, #blocked>
    %c = ttg.convert_layout %v : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %q = tt.splat %Y : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.store %q, %c : tensor<64x64x!tt.ptr<f32>, #blocked1>
    tt.call @copy(%Y, %X) : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.return
  }
}
