// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" | FileCheck %s
// RUN: ll-opt %s -p ll-lower-conversions --remarks 2>&1 | FileCheck %s --check-prefix=DEFAULT

// A no-op conversion (the two attributes are one linear layout) becomes the two casts and
// nothing in between: Triton's conversion to LLVM cancels them (with the gate off).  Stock
// Triton replaces such a conversion by its source, so by default it is left to Triton (DEFAULT).

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#linear = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: @same
  // DEFAULT: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: the two layouts are one map, and stock forwards the values without an instruction as our island would
  // DEFAULT: ttg.convert_layout %{{.*}} : tensor<32xf16, #blocked> -> tensor<32xf16, #linear>
  tt.func public @same(%x: tensor<32xf16, #blocked>) -> tensor<32xf16, #linear> {
    // CHECK: %[[S:.*]] = builtin.unrealized_conversion_cast %arg0 : tensor<32xf16, #blocked> to !llvm.struct<(f16)>
    // CHECK-NEXT: %[[C:.*]] = builtin.unrealized_conversion_cast %[[S]] : !llvm.struct<(f16)> to tensor<32xf16, #linear>
    // CHECK-NEXT: tt.return %[[C]]
    %0 = ttg.convert_layout %x : tensor<32xf16, #blocked> -> tensor<32xf16, #linear>
    tt.return %0 : tensor<32xf16, #linear>
  }
}
