// RUN: ll-opt %s -p "ll-lower-conversions{mode=legacy}" --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p "ll-lower-conversions{mode=legacy}" | FileCheck %s --check-prefix=IR
// RUN: ll-opt %s -p "ll-lower-conversions{mode=legacy}" --emit ptx | FileCheck %s --check-prefix=PTX

// mode=legacy: Triton before linear layouts.  The intra-warp transposition of
// warp-transposition.mlir (2 shuffles in linear mode) goes through shared memory: 64 f32 in a
// rank-1 (unpadded) buffer, 64-bit stores (2 per thread), scalar loads, a CTA barrier (plus
// guard barriers: the kernel has another convert).  A no-op between two
// identical attributes stays a no-op.

#A = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // REMARK: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, {{.*}}ld.shared.b32=2, st.shared.b64=1, scratch=256B
  // REMARK: remark: [ll-lower-conversions] lowered: noop
  tt.func public @transpose(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #A>
    %xs = tt.splat %X : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #A>
    %xp = tt.addptr %xs, %r : tensor<64x!tt.ptr<f32>, #A>, tensor<64xi32, #A>
    %v = tt.load %xp : tensor<64x!tt.ptr<f32>, #A>
    // IR-NOT: ttg.convert_layout
    // IR-NOT: nvvm.shfl.sync
    // IR: ttg.local_alloc
    %c = ttg.convert_layout %v : tensor<64xf32, #A> -> tensor<64xf32, #B>
    %d = ttg.convert_layout %c : tensor<64xf32, #B> -> tensor<64xf32, #B>
    %r2 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #B>
    %ys = tt.splat %Y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #B>
    %yp = tt.addptr %ys, %r2 : tensor<64x!tt.ptr<f32>, #B>, tensor<64xi32, #B>
    tt.store %yp, %d : tensor<64x!tt.ptr<f32>, #B>
    tt.return
  }
}

// PTX-NOT: shfl.sync
// PTX-NOT: ldmatrix
// PTX: st.shared
// PTX: bar.sync
// PTX: ld.shared
// PTX-NOT: shfl.sync
