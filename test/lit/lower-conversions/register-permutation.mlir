// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" --remarks 2>&1 | FileCheck %s --check-prefix=IR
// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" --emit ptx | FileCheck %s --check-prefix=PTX
// RUN: ll-opt %s -p ll-lower-conversions --remarks 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: ll-opt %s -p ll-lower-conversions --emit ptx | FileCheck %s --check-prefix=PTX

// A register-only permutation: each thread holds the same 4 elements before and after, in a
// different register order (register bases swapped).  The island is extracts and inserts,
// no instruction moves data: no shuffle, no shared memory, no barrier (IR, with the gate off).
// Stock Triton's lowering only reorders the values as well, so by default the conversion is
// left to it (DEFAULT): both PTX runs hold no instruction that moves data.

#a = #ttg.linear<{register = [[1], [2]], lane = [[4], [8], [16], [32], [64]], warp = [], block = []}>
#b = #ttg.linear<{register = [[2], [1]], lane = [[4], [8], [16], [32], [64]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // IR: remark: [ll-lower-conversions] lowered: rename
  // DEFAULT: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: it only renames registers, and stock forwards the values without an instruction as our island would
  // DEFAULT: ttg.convert_layout %{{.*}} : tensor<128xf32, #{{.*}}> -> tensor<128xf32, #{{.*}}>
  // IR-LABEL: @permute
  tt.func public @permute(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>) {
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #a>
    %xs = tt.splat %X : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #a>
    %xp = tt.addptr %xs, %r : tensor<128x!tt.ptr<f32>, #a>, tensor<128xi32, #a>
    %v = tt.load %xp : tensor<128x!tt.ptr<f32>, #a>
    // IR-NOT: ttg.convert_layout
    // IR: builtin.unrealized_conversion_cast %{{.*}} : tensor<128xf32, #{{.*}}> to !llvm.struct<(f32, f32, f32, f32)>
    // IR-COUNT-4: llvm.extractvalue
    // IR-NOT: llvm.inline_asm
    // IR: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(f32, f32, f32, f32)> to tensor<128xf32
    %c = ttg.convert_layout %v : tensor<128xf32, #a> -> tensor<128xf32, #b>
    %r2 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #b>
    %ys = tt.splat %Y : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #b>
    %yp = tt.addptr %ys, %r2 : tensor<128x!tt.ptr<f32>, #b>, tensor<128xi32, #b>
    tt.store %yp, %c : tensor<128x!tt.ptr<f32>, #b>
    tt.return
  }
}

// PTX-LABEL: .entry permute
// PTX-NOT: shfl.sync
// PTX-NOT: st.shared
// PTX-NOT: ld.shared
// PTX-NOT: bar.
// PTX: ret;
