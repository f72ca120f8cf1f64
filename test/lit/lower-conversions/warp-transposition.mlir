// RUN: ll-opt %s -p "ll-lower-conversions{measured=false stock_gate=false}" --remarks 2>&1 | FileCheck %s --check-prefix=IR
// RUN: ll-opt %s -p "ll-lower-conversions{measured=false stock_gate=false}" --emit ptx | FileCheck %s --check-prefix=PTX
// (measured=false: the cost model's own plan.  With triton 3.6 a recorded H100 measurement sends
// this conversion to stock Triton, whose 2 shuffles ran 10% faster; test/unit/lowering/test_plan_candidates.py.)

// An intra-warp transposition: 64 elements, 2 per lane -> 1 per lane in two halves (register
// bit 0 and lane bits trade places).  The plan: 2 rounds of shfl.sync.idx and selects, no
// shared memory; exactly the planned 2 shuffles reach the PTX (stock Triton also uses 2).
// Shuffles use the NVVM op (LLVM treats it as convergent), not inline PTX.
// (AMD: amd-bpermute.mlir.)

#A = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // IR: remark: [ll-lower-conversions] lowered: shuffle, shfl.sync.idx=2, select=4
  tt.func public @transpose(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #A>
    %xs = tt.splat %X : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #A>
    %xp = tt.addptr %xs, %r : tensor<64x!tt.ptr<f32>, #A>, tensor<64xi32, #A>
    %v = tt.load %xp : tensor<64x!tt.ptr<f32>, #A>
    // IR-NOT: ttg.convert_layout
    // IR-COUNT-2: nvvm.shfl.sync idx
    // IR-NOT: nvvm.shfl.sync
    // IR-NOT: ttg.local_alloc
    %c = ttg.convert_layout %v : tensor<64xf32, #A> -> tensor<64xf32, #B>
    %r2 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #B>
    %ys = tt.splat %Y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #B>
    %yp = tt.addptr %ys, %r2 : tensor<64x!tt.ptr<f32>, #B>, tensor<64xi32, #B>
    tt.store %yp, %c : tensor<64x!tt.ptr<f32>, #B>
    tt.return
  }
}

// PTX-LABEL: .entry transpose
// PTX-NOT: st.shared
// PTX-COUNT-2: shfl.sync.idx.b32
// PTX-NOT: shfl.sync
// PTX-NOT: st.shared
// PTX-NOT: ld.shared
// PTX: ret;
