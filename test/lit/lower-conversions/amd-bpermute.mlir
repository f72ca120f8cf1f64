// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" --remarks 2>&1 | FileCheck %s --check-prefix=IR
// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" --emit amdgcn | FileCheck %s --check-prefix=AMD

// (stock_gate=false: the subject is our island.  By default the choice leaves this one to
// Triton: our 4 selects are more than stock's floor counts, which has none for stock's shuffle
// lowering: docs/lowering-choice.md.)
// The intra-warp transposition of warp-transposition.mlir on a wave64 (gfx942): 128
// elements, 2 per lane -> 1 per lane.  The plan's 2 rounds become ds_bpermute_b32 (lane l
// reads the word of lane index/4), no LDS store or load, as in stock Triton.

#A = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [64], warpsPerCTA = [1], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  // IR: remark: [ll-lower-conversions] lowered: shuffle, ds_bpermute=2, select=4
  tt.func public @transpose64(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #A>
    %xs = tt.splat %X : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #A>
    %xp = tt.addptr %xs, %r : tensor<128x!tt.ptr<f32>, #A>, tensor<128xi32, #A>
    %v = tt.load %xp : tensor<128x!tt.ptr<f32>, #A>
    // IR-COUNT-2: rocdl.ds_bpermute
    // IR-NOT: rocdl.ds_bpermute
    %c = ttg.convert_layout %v : tensor<128xf32, #A> -> tensor<128xf32, #B>
    %r2 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #B>
    %ys = tt.splat %Y : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #B>
    %yp = tt.addptr %ys, %r2 : tensor<128x!tt.ptr<f32>, #B>, tensor<128xi32, #B>
    tt.store %yp, %c : tensor<128x!tt.ptr<f32>, #B>
    tt.return
  }
}

// AMD-LABEL: transpose64:
// AMD-NOT: ds_write
// AMD-COUNT-2: ds_bpermute_b32
// AMD-NOT: ds_bpermute_b32
// AMD-NOT: ds_write
// AMD-NOT: ds_read
// AMD: s_endpgm
