// RUN: ll-opt %s -p 'll-classify-conversions{report=true}' -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t

// report=true: one line per conversion on stderr (location, types with their aliases, scope,
// element bits); the IR goes to the output file untouched by the report.

// CHECK: report.mlir:[[# @LINE + 7]]:{{[0-9]+}}: tensor<32x32xf16, #blocked> -> tensor<32x32xf16, #blocked1>: scope=warp bits=16
// CHECK: report.mlir:[[# @LINE + 7]]:{{[0-9]+}}: tensor<32x32xf16, #blocked1> -> tensor<32x32xf16, #blocked1>: scope=none bits=16
// IR-COUNT-2: ll.scope
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @two(%x: tensor<32x32xf16, #blocked>) {
    %0 = ttg.convert_layout %x : tensor<32x32xf16, #blocked> -> tensor<32x32xf16, #blocked1>
    %1 = ttg.convert_layout %0 : tensor<32x32xf16, #blocked1> -> tensor<32x32xf16, #blocked1>
    tt.return
  }
}
