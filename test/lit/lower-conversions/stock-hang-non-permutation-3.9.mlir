// REQUIRES: triton-3.9
// RUN: not ll-opt %s -p ll-lower-conversions 2>&1 | FileCheck %s

// The module of stock-hang-non-permutation.mlir (triton 3.6): triton 3.9 rejects the
// layout when it parses it, with its own message, and so does ll-opt (exit 1), as stock does.

// CHECK: ll-opt: error: {{.*}}stock-hang-non-permutation-3.9.mlir:{{[0-9]+}}:{{[0-9]+}}: LinearEncodingAttr requires a permutation matrix layout after removing broadcast bases

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
