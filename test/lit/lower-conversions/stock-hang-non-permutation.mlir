// REQUIRES: triton-3.6
// RUN: ll-opt %s -p ll-lower-conversions --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: timeout 120 ll-opt %s -p ll-lower-conversions --emit ptx | FileCheck %s --check-prefix=PTX

// A layout whose basis has two bits set ([0, 5]: bits 0 and 2 of dim 1) is no permutation.
// Triton 3.6 accepts it (triton 3.9 rejects it when it parses it: stock-hang-non-permutation-3.9.mlir),
// and its own lowering of a conversion inside a warp never finishes: the cycle walk of
// getWarpLayoutConvertDecomposition (asked for by the shared-memory allocation analysis)
// follows one bit per column of a map that is no permutation and never comes back to its
// start.  Stock did not finish compiling this module in 120 s; ours takes both conversions,
// with the stock gate on (the default), and the module compiles in well under a second.
// (Before the fix the gate left both to Triton, family lane/shared/1warp and lane/shuffle/1warp,
// and the compile hung.)

// REMARK: remark: [ll-lower-conversions] lowered: shared, {{.*}}; never left to Triton: stock Triton's lowering assumes permutation layouts
// REMARK: remark: [ll-lower-conversions] lowered: shuffle, {{.*}}; never left to Triton: stock Triton's lowering assumes permutation layouts
// PTX: .visible .entry k(
// PTX-NOT: ttg.convert_layout

#A = #ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>
#B = #ttg.linear<{register = [[0, 2], [1, 0], [0, 5], [0, 8]], lane = [[0, 0], [0, 0], [0, 0], [0, 1], [0, 0]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: !tt.ptr<i8> {tt.divisibility = 16 : i32}, %q: !tt.ptr<i8> {tt.divisibility = 16 : i32}) {
    %r0 = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32, #ttg.slice<{dim = 1, parent = #A}>>
    %r1 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #A}>>
    %e0 = tt.expand_dims %r0 {axis = 1 : i32} : tensor<2xi32, #ttg.slice<{dim = 1, parent = #A}>> -> tensor<2x1xi32, #A>
    %e1 = tt.expand_dims %r1 {axis = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #A}>> -> tensor<1x16xi32, #A>
    %c16 = arith.constant dense<16> : tensor<2x1xi32, #A>
    %m = arith.muli %e0, %c16 : tensor<2x1xi32, #A>
    %b0 = tt.broadcast %m : tensor<2x1xi32, #A> -> tensor<2x16xi32, #A>
    %b1 = tt.broadcast %e1 : tensor<1x16xi32, #A> -> tensor<2x16xi32, #A>
    %off = arith.addi %b0, %b1 : tensor<2x16xi32, #A>
    %ps = tt.splat %p : !tt.ptr<i8> -> tensor<2x16x!tt.ptr<i8>, #A>
    %pp = tt.addptr %ps, %off : tensor<2x16x!tt.ptr<i8>, #A>, tensor<2x16xi32, #A>
    %x = tt.load %pp : tensor<2x16x!tt.ptr<i8>, #A>
    %y = ttg.convert_layout %x : tensor<2x16xi8, #A> -> tensor<2x16xi8, #B>
    %o = ttg.convert_layout %off : tensor<2x16xi32, #A> -> tensor<2x16xi32, #B>
    %qs = tt.splat %q : !tt.ptr<i8> -> tensor<2x16x!tt.ptr<i8>, #B>
    %qq = tt.addptr %qs, %o : tensor<2x16x!tt.ptr<i8>, #B>, tensor<2x16xi32, #B>
    tt.store %qq, %y : tensor<2x16x!tt.ptr<i8>, #B>
    tt.return
  }
}
